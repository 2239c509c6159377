"""The builders of the committed corpora in harness/data/corpora/ (Debian 12 only)."""
