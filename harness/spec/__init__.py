"""What is asked: the setting table (settings.py, a registry of what each owner declares), cells and their ids,
setting conflicts, matrix files and their sections (design: report:, ceiling: and, from tasks/, evaluation:)."""
