"""Sharing a run: ``bundle_run`` packs a run directory (spec, plan, events, logs, reports, env) into one
archive with a manifest of hashes, rendering a missing or stale report first and scrubbing secrets.

Reading, verifying and unpacking bundles is :mod:`bench_tui.reports.bundle` (a lower layer that render and
compare use); this module sits above the renderer it calls.
"""

from __future__ import annotations

import io
import json
import os
import re
import tarfile
from pathlib import Path, PurePosixPath
from typing import Any

from bench_tui.reports.bundle import (
    FORMAT,
    MANIFEST,
    SKIP_NAMES,
    BundleError,
    _is_text,
    _sha256,
)
from bench_tui.reports.model import load_run
from bench_tui.reports.render import render
from bench_tui.reports.scrub import collect_secrets, find_secrets, scrub


def _local_packs(run_dir: Path, spec_text: str) -> dict[str, Path]:
    """Relative pack paths of scenario workloads -> the file they resolve to (spec source dir)."""
    out: dict[str, Path] = {}
    dirs = [run_dir]
    try:
        from bench_tui.events import RunStarted, read_events

        for ev in read_events(str(run_dir / "events.jsonl")):
            if isinstance(ev, RunStarted) and ev.spec_path:
                dirs.append(Path(ev.spec_path).parent)
                break
    except OSError:
        pass
    for m in re.finditer(r"""pack\s*:\s*["']?([^"'\s,}#]+)""", spec_text):
        rel = m.group(1)
        pp = PurePosixPath(rel)
        if pp.is_absolute() or ".." in pp.parts or not rel.endswith((".yaml", ".yml")):
            continue
        for d in dirs:
            f = d / rel
            if f.is_file() and not f.is_symlink():
                out[str(pp)] = f
                break
    return out


def bundle_run(
    run_dir: Path | str,
    output: Path | str | None = None,
    *,
    refuse: bool = False,
    environ: dict[str, str] | None = None,
) -> tuple[Path, dict[str, Any]]:
    """Pack ``run_dir``; returns (archive path, manifest). Raises BundleError."""
    run_dir = Path(run_dir)
    if not (run_dir / "events.jsonl").is_file():
        raise BundleError(f"{run_dir}: not a run directory (no events.jsonl)")
    spec_text = (
        (run_dir / "spec.yaml").read_text(encoding="utf-8", errors="replace")
        if (run_dir / "spec.yaml").is_file()
        else ""
    )
    secrets = collect_secrets([spec_text], environ)
    top = run_dir.name
    members: dict[str, bytes] = {}
    for f in sorted(run_dir.rglob("*")):
        rel = f.relative_to(run_dir).as_posix()
        if f.is_symlink() or not f.is_file() or f.name in SKIP_NAMES or f.name == MANIFEST:
            continue
        members[rel] = f.read_bytes()
    regraded = (run_dir / "regrade.json").is_file() and any(
        not (run_dir / f"report.{f}").is_file()
        or (run_dir / "regrade.json").stat().st_mtime > (run_dir / f"report.{f}").stat().st_mtime
        for f in ("md", "html")
    )  # reports older than the latest regrade: rendered again with its overrides
    if "report.md" not in members or "report.html" not in members or regraded:
        model = load_run(run_dir)
        for fmt in ("md", "html"):
            if regraded:
                members.pop(f"report.{fmt}", None)
            members.setdefault(f"report.{fmt}", render(model, fmt, secrets=secrets).encode("utf-8"))
    for rel, src in _local_packs(run_dir, spec_text).items():
        members.setdefault(rel, src.read_bytes())
    files: list[dict[str, Any]] = []
    problems: list[str] = []
    for rel in sorted(members):
        data = members[rel]
        n = 0
        if _is_text(data):
            text = data.decode("utf-8")
            if refuse:
                hits = find_secrets(text, secrets)
                if hits:
                    problems.append(f"{rel}: {len(hits)} secret value(s)")
            else:
                text, n = scrub(text, secrets)
                data = text.encode("utf-8")
        elif any(sec.encode() in data for sec in secrets if sec):
            problems.append(f"{rel}: binary file contains a secret value")
        members[rel] = data
        files.append({"path": rel, "size": len(data), "sha256": _sha256(data), "scrubbed": n})
    if problems:
        raise BundleError("refusing to bundle: secrets found\n  " + "\n  ".join(problems))
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "run": top,
        "files": files,
        "scrubbed_total": sum(f["scrubbed"] for f in files),
    }
    out = Path(output) if output is not None else run_dir.parent / f"{top}.tar.gz"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".part")
    with tarfile.open(tmp, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for rel in [MANIFEST, *sorted(members)]:
            data = (json.dumps(manifest, indent=1) + "\n").encode() if rel == MANIFEST else members[rel]
            info = tarfile.TarInfo(f"{top}/{rel}")
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    os.replace(tmp, out)
    return out, manifest
