"""`python -m bench_tui.cli` is `bench-tui`."""

from bench_tui.cli import main

main()
