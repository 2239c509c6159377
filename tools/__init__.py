"""Scripts that are not the runtime: run from the repository root (`python -m tools.<name>`)."""
