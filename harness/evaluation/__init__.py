"""Evaluation data and scoring for trained models (lm-evaluation-harness tasks generated locally)."""
