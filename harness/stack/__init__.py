"""The training stack: the one contract (contract.py: Plan, Technique, Backend), the techniques and their registry
(techniques/), the model paths (backends/), where models come from and what is known of them without weights
(models/), and a sliced vocabulary's token map. Above data and core."""
