"""Earlier errors: the held-out cases that older grader versions got wrong, to measure the unsure flags against.

Today's graders agree with almost every stored held-out case, so today's disagreements are too few to tell a
useful unsure signal from a lucky one. The cases older graders got wrong are the realistic places where
reading an answer is fragile: a verdict that is right today but sits where an earlier reading went wrong
should ideally be flagged. This script grades every held-out file with the grader of each version below
(the commit each held-out batch was first graded with, taken from git history), each in a subprocess with
``PYTHONPATH`` on that version's ``src`` (its own pack and simulator too), and records each case some version
got wrong: file, line, scenario, label, the batch it belongs to, and every old verdict that disagreed
(``first`` is the verdict at the case's own batch's first grading when that was wrong).

    python bench/earlier_errors.py                         # writes tests/unit/data/earlier_errors.standard.json
    python bench/earlier_errors.py --mode strict --out /tmp/e.json
    python bench/earlier_errors.py --repo /work/main --versions 46bec87^ ff1d123^

Old trees are exported once with ``git archive`` into ``--cache`` (default /tmp/bench-tui-old-graders).
The measurement of today's unsure flags on these cases is bench/unsure_signals.py.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "unit" / "data"
OUT = DATA / "earlier_errors.standard.json"

# (held-out batch, the grader version it was first graded with): the parent of the commit that fixed the
# batch's findings, i.e. the graders as they were when the batch was measured. Batch 17 needed no fix; it was
# graded after batch 16's fixes (930ff8e). Batches 1-8 were graded by trees whose pack format is older.
VERSIONS: list[tuple[int, str]] = [
    (9, "46bec87^"),
    (10, "f33d18c^"),
    (11, "8caa162^"),
    (12, "130e33d^"),
    (13, "8ede1eb^"),
    (14, "fff3194^"),
    (15, "e256504^"),
    (16, "ff1d123^"),
    (17, "930ff8e"),
    # batches with a file of their own, each graded once at the commit its file's header names
    (20, "4fa216d"),
    (21, "756d0fc"),
    (22, "019e46f"),
    (23, "557785a"),
    (24, "ae281ba"),
    (25, "7b94651"),
    (26, "4b7ab34"),
    (27, "5ff1f56"),
    (28, "1c5ead5"),
    (29, "a54b9f3"),
    (30, "a54b9f3"),  # batches 29 and 30 were graded with one version; it grades once (see main)
    (31, "09868f1"),
    (32, "a42fc40"),
    (33, "a42fc40"),
    (34, "d730662"),
    (35, "d730662"),
    (36, "7f11f0a"),
    (37, "7f11f0a"),
    (38, "7f11f0a"),
    (39, "7f11f0a"),
    (40, "9b79a66"),
    (41, "9b79a66"),
    (42, "ec619a8"),
    (43, "ec619a8"),
    (44, "ec619a8"),
]

# runs inside the old tree: grade the given files and print one JSON object per case. A case whose scenario
# the old pack does not know is left out (its line is commented out, so line numbers stay the same).
RUNNER = r"""
import json, re, sys, tempfile
from pathlib import Path
from bench_tui.graders.pack import load_pack
from bench_tui.graders.cases import CasesError, grade_cases, load_cases
files, modes = json.loads(sys.argv[1]), json.loads(sys.argv[2])
out = []
for path, pack_name in files:
    pack = load_pack(pack_name)
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    skipped = 0
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d) / "cases.yaml"
        for _ in range(5):
            tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
            try:
                cases = load_cases(tmp, pack)
                break
            except CasesError as exc:
                bad = {int(m.group(1)) for p in exc.problems if (m := re.match(re.escape(str(tmp)) + r":(\d+):", p))}
                if not bad:
                    raise
                for b in bad:
                    lines[b - 1] = "# left out: " + lines[b - 1][:40]
                skipped += len(bad)
        else:
            raise SystemExit(f"{path}: cannot load with this version")
    for mode in modes:
        for r in grade_cases(cases, pack, mode):
            out.append({"file": path, "line": r.case.line, "scenario": r.case.scenario, "label": r.case.label,
                        "mode": mode, "verdict": r.verdict})
    print(f"{path}: {len(cases)} graded, {skipped} left out", file=sys.stderr)
json.dump(out, sys.stdout)
"""


def heldout_files() -> list[Path]:
    return sorted(DATA.glob("heldout_standard*.cases.yaml"))


def pack_of(path: Path) -> str:
    """heldout_<pack>[.<part>].cases.yaml -> pack name."""
    return path.name.removeprefix("heldout_").split(".")[0]


def batches_of(path: Path) -> dict[int, int]:
    """line -> held-out batch number, from the '# ---- batch N' headers (batches from 18 on have a file of their
    own, heldout_standard.batchNN.cases.yaml)."""
    if m := re.search(r"\.batch(\d+)\.", path.name):
        return {i: int(m.group(1)) for i in range(1, len(path.read_text(encoding="utf-8").splitlines()) + 1)}
    batch, out = 1, {}
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if m := re.match(r"#\s*-+\s*batch (\d+)", line):
            batch = int(m.group(1))
        out[i] = batch
    return out


def export(repo: Path, rev: str, cache: Path) -> tuple[str, Path]:
    sha = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", rev], check=True, capture_output=True, text=True
    ).stdout.strip()
    dest = cache / sha[:12]
    if not (dest / "src" / "bench_tui").is_dir():
        blob = subprocess.run(
            ["git", "-C", str(repo), "archive", sha, "src"], check=True, capture_output=True
        )
        dest.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(blob.stdout)) as tar:
            tar.extractall(dest, filter="data")
    return sha, dest


def grade_with(tree: Path, files: list[Path], modes: list[str]) -> list[dict[str, Any]]:
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    arg = json.dumps([[str(f), pack_of(f)] for f in files])
    res = subprocess.run(
        [sys.executable, "-c", RUNNER, arg, json.dumps(modes)],
        env=env,
        capture_output=True,
        text=True,
        cwd=str(tree),
    )
    if res.returncode != 0:
        raise SystemExit(f"grading with {tree} failed:\n{res.stderr[-2000:]}")
    sys.stderr.write(res.stderr)
    out: list[dict[str, Any]] = json.loads(res.stdout)
    return out


def dumps(doc: dict[str, Any]) -> str:
    """JSON with one version and one error per line (readable diffs when the file is rebuilt)."""
    head = {k: v for k, v in doc.items() if k not in ("versions", "errors")}
    lines = [json.dumps(head, ensure_ascii=False)[:-1] + ","]
    for key in ("versions", "errors"):
        rows = [json.dumps(x, ensure_ascii=False) for x in doc[key]]
        lines.append(f' "{key}": [\n  ' + ",\n  ".join(rows) + "\n ]" + ("," if key == "versions" else ""))
    return "\n".join(lines) + "\n}\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", type=Path, default=ROOT, help="git repository holding the history")
    ap.add_argument(
        "--versions", nargs="*", help="revisions to grade with (default: each batch's first grading)"
    )
    ap.add_argument("--mode", choices=["lenient", "strict"], default="lenient")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/bench-tui-old-graders"))
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    versions = [(0, v) for v in args.versions] if args.versions else VERSIONS
    files = heldout_files()
    batch = {f: batches_of(f) for f in files}
    errors: dict[tuple[str, int], dict[str, Any]] = {}
    graded: list[dict[str, Any]] = []
    done: dict[str, list[dict[str, Any]]] = {}  # one version that first graded two batches grades once
    for b, rev in versions:
        sha, tree = export(args.repo, rev, args.cache)
        print(f"grading with {rev} ({sha[:9]}, batch {b or '?'} first grading)", file=sys.stderr)
        if sha not in done:
            done[sha] = grade_with(tree, files, [args.mode])
        rows = done[sha]
        wrong = 0
        for r in rows:
            f = Path(r["file"])
            if r["label"] is None or r["label"] == r["verdict"]:
                continue
            wrong += 1
            rel = str(f.relative_to(ROOT))
            e = errors.setdefault(
                (rel, r["line"]),
                {
                    "file": rel,
                    "line": r["line"],
                    "scenario": r["scenario"],
                    "label": r["label"],
                    "batch": batch[f].get(r["line"], 0),
                    "first": None,
                    "old": [],
                },
            )
            e["old"].append({"version": sha[:9], "batch_graded": b, "verdict": r["verdict"]})
            if b and b == e["batch"]:
                e["first"] = r["verdict"]
        graded.append({"version": sha[:9], "rev": rev, "batch": b, "cases": len(rows), "wrong": wrong})
        print(f"  {len(rows)} cases, {wrong} wrong", file=sys.stderr)
    doc = {
        "about": (
            "held-out cases an older grader version got wrong (bench/earlier_errors.py); "
            "'first' = the verdict at the case's own batch's first grading when wrong"
        ),
        "mode": args.mode,
        "versions": graded,
        "errors": sorted(errors.values(), key=lambda e: (e["file"], e["line"])),
    }
    args.out.write_text(dumps(doc), encoding="utf-8")
    firsts = sum(1 for e in doc["errors"] if e["first"])
    print(
        f"{len(errors)} cases wrong under some version ({firsts} at their batch's first grading) -> {args.out}"
    )


if __name__ == "__main__":
    main()
