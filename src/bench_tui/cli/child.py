"""``python -m bench_tui.cli.child RUN_DIR``: the TUI's measuring child process (see ``bench_tui.runner.child``)."""

from __future__ import annotations

import os
import sys

from bench_tui.reports.render import write_reports
from bench_tui.runner.child import main

if __name__ == "__main__":
    code = main(finalize=write_reports)
    sys.stdout.flush()
    sys.stderr.flush()
    # the stdin reader is a daemon thread blocked in read(): a normal interpreter shutdown would abort on
    # its buffer lock, so leave at once (events.jsonl and the reports are already closed and written)
    os._exit(code)
