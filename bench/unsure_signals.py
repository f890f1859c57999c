"""How well the unsure flags (graders/confidence.py) pick out the verdicts a person should check.

Grades labelled case files with today's graders (raw verdicts, no override) and prints: the cases, the share
flagged unsure, today's disagreements with the labels and how many of them are flagged, and the same for
the *earlier errors* (tests/unit/data/earlier_errors.standard.json, built by bench/earlier_errors.py: held-out
cases older grader versions got wrong, the realistic places where reading is fragile): how many of those
cases today's confidence flags, whatever today's verdict. Then per signal: the cases it flags, the
disagreements it catches, the earlier errors it catches, and how many of those no other signal flags
("only this": what is lost if the signal is dropped; a case can carry several signals).

The bar (issue 21): the flags catch at least 70 % of the disagreements while flagging at most 10 % of all
cases.

The earlier errors are split by the batch their case belongs to: signals are designed and tuned on the
errors of the tuning batches (``--tune-batches``, default 9-13) and measured on the held-out batches
(``--held-out-batches``, default 14-17), whose errors no signal was written from: that catch is the
out-of-sample figure. Both are printed, overall and per signal (the flag budget is read on all cases).

    python bench/unsure_signals.py                        # every held-out standard file (incl. batch 18)
    python bench/unsure_signals.py --tune-batches 9-13 --held-out-batches 14-17
    python bench/unsure_signals.py tests/unit/data/heldout_standard.batch18.cases.yaml
    python bench/unsure_signals.py --mode strict --list   # also list each disagreement and its flags

Run from a worktree with PYTHONPATH=<worktree>/src so today's graders are the worktree's.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "unit" / "data"
EARLIER = DATA / "earlier_errors.standard.json"


def default_files() -> list[Path]:
    return sorted(DATA.glob("heldout_standard*.cases.yaml"))


def pack_of(path: Path) -> str:
    """heldout_<pack>[.<part>].cases.yaml -> pack name (else standard)."""
    name = path.name
    return name.removeprefix("heldout_").split(".")[0] if name.startswith("heldout_") else "standard"


def signal_of(reason: str) -> str:
    """A reason starts with its signal's id ('negated-phrase: ...')."""
    return reason.split(":", 1)[0].split(" (", 1)[0].strip()


def rel(path: Path) -> str:
    p = path.resolve()
    return str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p)


def grade_files(files: list[Path], mode: str) -> list[dict[str, Any]]:
    from bench_tui.graders.cases import grade_cases, load_cases
    from bench_tui.graders.pack import load_pack

    rows = []
    packs: dict[str, Any] = {}
    for f in files:
        name = pack_of(f)
        pack = packs.setdefault(name, load_pack(name))
        for r in grade_cases(load_cases(f, pack), pack, mode):
            rows.append(
                {
                    "file": rel(f),
                    "line": r.case.line,
                    "scenario": r.case.scenario,
                    "label": r.case.label,
                    "verdict": r.verdict,
                    "agrees": r.agrees,
                    "unsure": list(r.result.unsure),
                    "signals": sorted({signal_of(x) for x in r.result.unsure}),
                }
            )
    return rows


def pct(a: int, b: int) -> str:
    return f"{a}/{b} ({100 * a / b:.1f} %)" if b else f"{a}/0"


def batches(spec: str) -> set[int]:
    """'9-13' or '9,10,14-17' -> the batch numbers."""
    out: set[int] = set()
    for part in filter(None, (p.strip() for p in spec.split(","))):
        lo, _, hi = part.partition("-")
        out |= set(range(int(lo), int(hi or lo) + 1))
    return out


def span(b: set[int]) -> str:
    return f"{min(b)}-{max(b)}" if b and len(b) == max(b) - min(b) + 1 else ",".join(map(str, sorted(b)))


def report(
    rows: list[dict[str, Any]],
    earlier: list[dict[str, Any]],
    *,
    listing: bool,
    tune: set[int] | None = None,
    held: set[int] | None = None,
    later: set[int] | None = None,
) -> str:
    tune = batches("9-13") if tune is None else tune
    held = batches("14-17") if held is None else held
    by_key = {(r["file"], r["line"]): r for r in rows}
    flagged = [r for r in rows if r["unsure"]]
    wrong = [r for r in rows if not r["agrees"]]
    old = [by_key[k] for e in earlier if (k := (e["file"], e["line"])) in by_key]
    first_keys = {(e["file"], e["line"]) for e in earlier if e.get("first")}
    old_first = [r for r in old if (r["file"], r["line"]) in first_keys]
    batch_of = {(e["file"], e["line"]): e.get("batch") for e in earlier}

    def part(rs: list[dict[str, Any]], bs: set[int]) -> list[dict[str, Any]]:
        return [r for r in rs if batch_of.get((r["file"], r["line"])) in bs]

    def caught(rs: list[dict[str, Any]]) -> str:
        return pct(sum(1 for r in rs if r["unsure"]), len(rs))

    later = batches("20-44") if later is None else later
    t_first, h_first, l_first = part(old_first, tune), part(old_first, held), part(old_first, later)
    out = [
        f"cases: {len(rows)} in {len({r['file'] for r in rows})} files",
        f"flagged unsure: {pct(len(flagged), len(rows))}",
        f"disagreements today: {len(wrong)}, flagged: {pct(sum(1 for r in wrong if r['unsure']), len(wrong))}",
        f"earlier errors (any older version wrong): flagged today {pct(sum(1 for r in old if r['unsure']), len(old))}",
        f"earlier errors at their batch's first grading: flagged today "
        f"{pct(sum(1 for r in old_first if r['unsure']), len(old_first))}",
        f"  tuning batches {span(tune)}: {caught(t_first)}; held-out batches {span(held)} (out of sample): "
        f"{caught(h_first)}",
        f"  later batches {span(later)} (files of their own, first graded at the commit their header names; "
        f"each batch graded before the signals written from it): {caught(l_first)}",
        f"earlier errors (any older version wrong), tuning batches {span(tune)}: {caught(part(old, tune))}; "
        f"held-out batches {span(held)}: {caught(part(old, held))}",
    ]
    per_file = Counter(r["file"] for r in rows)
    if len(per_file) > 1:
        out.append("per file:")
        for f, n in sorted(per_file.items()):
            fr = [r for r in rows if r["file"] == f]
            fw = [r for r in fr if not r["agrees"]]
            out.append(
                f"  {f}: {n} cases, flagged {pct(sum(1 for r in fr if r['unsure']), n)}, "
                f"disagreements flagged {pct(sum(1 for r in fw if r['unsure']), len(fw))}"
            )
    sig = sorted({s for r in rows for s in r["signals"]})
    out.append(
        f"{'signal':<24}{'flags':>7}{'disagreements':>15}{'earlier errors':>16}{'only this':>11}"
        f"{'first: tune':>13}{'held-out':>10}"
    )
    for s in sig:
        n = sum(1 for r in rows if s in r["signals"])
        w = sum(1 for r in wrong if s in r["signals"])
        o = sum(1 for r in old if s in r["signals"])
        alone = sum(1 for r in [*wrong, *old] if r["signals"] == [s])
        ft = sum(1 for r in t_first if s in r["signals"])
        fh = sum(1 for r in h_first if s in r["signals"])
        out.append(f"{s:<24}{n:>7}{w:>15}{o:>16}{alone:>11}{ft:>13}{fh:>10}")
    if listing:
        out.append("disagreements:")
        for r in wrong:
            out.append(
                f"  {r['file']}:{r['line']} {r['scenario']} label {r['label']}, graded {r['verdict']}"
                f" -> {'UNSURE ' + '; '.join(r['unsure']) if r['unsure'] else 'sure'}"
            )
        out.append(f"earlier errors of the tuning batches {span(tune)} not flagged today:")
        for r in part(old, tune):
            if not r["unsure"]:
                out.append(
                    f"  {r['file']}:{r['line']} {r['scenario']} label {r['label']}, today {r['verdict']}"
                    f"{' (first grading wrong)' if (r['file'], r['line']) in first_keys else ''}"
                )
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*", type=Path, help="labelled cases files (default: held-out standard)")
    ap.add_argument("--mode", choices=["lenient", "strict"], default="lenient")
    ap.add_argument("--earlier", type=Path, default=EARLIER, help="earlier errors (bench/earlier_errors.py)")
    ap.add_argument("--list", action="store_true", help="list the disagreements and unflagged earlier errors")
    ap.add_argument("--json", type=Path, help="also write every graded row here")
    ap.add_argument(
        "--tune-batches", default="9-13", help="batches whose earlier errors signals are tuned on"
    )
    ap.add_argument(
        "--held-out-batches", default="14-17", help="batches whose earlier errors are the out-of-sample test"
    )
    ap.add_argument(
        "--later-batches", default="20-44", help="later batches with files of their own, reported apart"
    )
    args = ap.parse_args()
    files = args.files or default_files()
    rows = grade_files(files, args.mode)
    earlier = json.loads(args.earlier.read_text(encoding="utf-8"))["errors"] if args.earlier.is_file() else []
    if not earlier:
        print(f"(no earlier errors at {args.earlier}: run bench/earlier_errors.py)", file=sys.stderr)
    tune, held, later = (
        batches(args.tune_batches),
        batches(args.held_out_batches),
        batches(args.later_batches),
    )
    if tune & (held | later):
        ap.error(f"tuning and held-out batches overlap: {sorted(tune & (held | later))}")
    print(report(rows, earlier, listing=args.list, tune=tune, held=held, later=later))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
