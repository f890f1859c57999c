"""Screens of the bench-tui app: run (live), results, spec editor, and small modals."""
