"""Published claims about fine-tuning memory and speed, each beside the cell or ceiling search that measures it here
under the same setting, with a verdict word and the difference (`vramlab claims`, reports/claims/). Not the seed's
quality claims, which are harness/report/comparisons.py's.

- published.yaml: the claims as data (source, quote, setting, number, unit, and what measures each reading);
- model.py: their typed form, checked as they are read;
- measured.py: what the committed results say, read only (a ceiling's answer from its kept probes);
- verdict.py: the verdict word and the difference, per kind of claim;
- build.py: reports/claims/claims.md and claims.csv.
"""
