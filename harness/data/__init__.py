"""Training data (training.py: the data settings and every kind of training sequence), the long-document workload
(workload/) and the committed corpora (corpora/). Above core only."""
