"""`pack ablate --lexicon` with and without its pre-filter: the same rows, and how long each takes.

The pre-filter (graders/cases.py ``_may_decide``) grades a case again for a lexicon entry only when one of
the entry's fragments matches somewhere in what the case holds. This script runs both on the given case
files and fails (exit 1) if any row differs.

    PYTHONPATH=src python bench/ablate_lexicon.py tests/unit/data/lexicon.cases.yaml
    PYTHONPATH=src python bench/ablate_lexicon.py --pack standard tests/unit/data/heldout_standard.batch28.cases.yaml
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from bench_tui.graders.cases import ablate_lexicon, load_cases
from bench_tui.graders.pack import load_pack


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--pack", default="standard")
    ap.add_argument("--mode", default="lenient", choices=["lenient", "strict"])
    args = ap.parse_args()
    pack = load_pack(args.pack)
    cases = [c for f in args.files for c in load_cases(f, pack)]
    t0 = time.perf_counter()
    fast = ablate_lexicon(pack, cases, args.mode)
    t1 = time.perf_counter()
    full = ablate_lexicon(pack, cases, args.mode, prefilter=False)
    t2 = time.perf_counter()
    diff = [(a, b) for a, b in zip(fast, full, strict=True) if a != b]
    deciding = sum(1 for r in full if r[1])
    print(f"{len(cases)} cases, {len(full)} lexicon entries, {deciding} change a verdict")
    print(f"pre-filtered: {t1 - t0:.1f} s; every case: {t2 - t1:.1f} s; rows differing: {len(diff)}")
    for a, b in diff:
        print(f"  pre-filtered {a}  every case {b}")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
