"""Running a plan: the planner, the executor (engines x points), the session (a run directory's life), the
event log and run store, the TUI's child process and the headless printer."""
