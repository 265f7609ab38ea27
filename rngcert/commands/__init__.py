"""Sub-command groups of the CLI that live outside cli.py (registered there)."""
