"""The bottom layer: the Setting type, budgets and GPU cards, the runtime and environment, the cache folder, console
and progress, errors a person can fix. It imports nothing else of harness."""
