"""Hostile bundles: a tar bomb is refused from its headers before anything is written, a bad manifest is a
clear error (never a traceback), and no staging folder is ever left behind."""

from __future__ import annotations

import io
import json
import resource
import tarfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bench_tui.cli.reports import report
from bench_tui.reports.bundle import BundleError, open_bundle
from bench_tui.reports.sharing import bundle_run
from fixtures_runs import make_run_dir


class _Zeros(io.RawIOBase):
    def __init__(self, n: int) -> None:
        self.left = n

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        n = self.left if n is None or n < 0 else min(n, self.left)
        self.left -= n
        return b"\0" * n


def _files_under(p: Path) -> list[Path]:
    return [f for f in p.rglob("*") if f.is_file()] if p.exists() else []


def _bomb(path: Path, size: int) -> Path:
    with tarfile.open(path, "w:gz", compresslevel=9) as tar:
        ev = b'{"type":"run_started","run_id":"x","spec_name":"s","spec_path":"","run_dir":""}\n'
        info = tarfile.TarInfo("run/events.jsonl")
        info.size = len(ev)
        tar.addfile(info, io.BytesIO(ev))
        info = tarfile.TarInfo("run/engines/huge.log")
        info.size = size
        tar.addfile(info, _Zeros(size))
    return path


def test_tar_bomb_refused_from_the_headers_before_anything_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    bomb = _bomb(tmp_path / "bomb.tar.gz", 300 * 1024 * 1024)
    assert bomb.stat().st_size < 400 * 1024  # ~300 KB of archive holding 300 MB
    t0 = time.monotonic()
    with pytest.raises(BundleError, match="decompression bomb, refused before unpacking"):
        open_bundle(bomb)
    took = time.monotonic() - t0
    assert _files_under(cache) == []  # not a byte written, no staging folder left
    assert not list((cache / "bench-tui" / "bundles").glob(".unpack-*")) if cache.exists() else True
    r = CliRunner().invoke(report, [str(bomb)])
    assert r.exit_code == 2 and "decompression bomb" in r.output and "Traceback" not in r.output
    print(f"tar bomb ({bomb.stat().st_size} B -> 300 MB): refused in {took * 1000:.0f} ms")


def test_total_size_limit_from_the_headers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import bench_tui.reports.bundle as b

    monkeypatch.setattr(b, "MAX_TOTAL_BYTES", 1000)
    p = tmp_path / "t.tar"  # uncompressed: no ratio to catch it, the total does
    with tarfile.open(p, "w") as tar:
        for i in range(3):
            info = tarfile.TarInfo(f"run/f{i}")
            info.size = 600
            tar.addfile(info, io.BytesIO(b"a" * 600))
    with pytest.raises(BundleError, match="refused before unpacking"):
        open_bundle(p, tmp_path / "out")
    assert _files_under(tmp_path / "out") == []


# --------------------------------------------------------------------------------------------- manifests


@pytest.fixture
def good_bundle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    run = make_run_dir(tmp_path / "runs")
    out, _ = bundle_run(run, tmp_path / "good.tar.gz")
    return out


def _rewrite(
    src: Path, dst: Path, edit: Callable[[dict[str, Any]], None], extra: dict[str, bytes] | None = None
) -> Path:
    with tarfile.open(src) as tin, tarfile.open(dst, "w:gz") as tout:
        top = ""
        for m in tin:
            data = tin.extractfile(m).read() if m.isfile() else b""  # type: ignore[union-attr]
            top = m.name.split("/")[0]
            if m.name.endswith("/MANIFEST.json"):
                doc = json.loads(data)
                edit(doc)
                data = json.dumps(doc).encode()
                m.size = len(data)
            tout.addfile(m, io.BytesIO(data))
        for name, data in (extra or {}).items():
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size = len(data)
            tout.addfile(info, io.BytesIO(data))
    return dst


def _first(doc: dict[str, Any]) -> dict[str, Any]:
    f: dict[str, Any] = doc["files"][0]
    return f


@pytest.mark.parametrize(
    ("name", "edit", "extra", "msg"),
    [
        ("no-sha", lambda d: _first(d).pop("sha256"), None, r"files\[0\] \(.*\) has no valid sha256"),
        (
            "int-path",
            lambda d: _first(d).update(path=7),
            None,
            r"files\[0\]\.path must be a file name, got 7",
        ),
        (
            "abs-path",
            lambda d: d["files"].append({"path": "/etc/hostname", "sha256": "0" * 64}),
            None,
            r"'/etc/hostname' is not a relative path inside the bundle",
        ),
        (
            "dotdot",
            lambda d: d["files"].append({"path": "../x", "sha256": "0" * 64}),
            None,
            r"'\.\./x' is not a relative path inside the bundle",
        ),
        ("files-not-list", lambda d: d.update(files={"a": 1}), None, "has no 'files' list"),
        (
            "entry-not-object",
            lambda d: d["files"].append("spec.yaml"),
            None,
            r"files\[\d+\] is not an object",
        ),
        ("bad-size", lambda d: _first(d).update(size="big"), None, r"\.size must be a byte count"),
        (
            "unlisted",
            lambda d: None,
            {"hooks.py": b"import os\n"},
            "hooks.py is in the archive but not in MANIFEST",
        ),
        ("wrong-sha", lambda d: _first(d).update(sha256="ab" * 32), None, "sha256 mismatch"),
    ],
)
def test_bad_manifests_are_clear_errors(
    good_bundle: Path,
    tmp_path: Path,
    name: str,
    edit: Callable[[dict[str, Any]], None],
    extra: dict[str, bytes] | None,
    msg: str,
) -> None:
    bad = _rewrite(good_bundle, tmp_path / f"{name}.tar.gz", edit, extra)
    with pytest.raises(BundleError, match=msg):
        open_bundle(bad)
    cache = tmp_path / "cache" / "bench-tui" / "bundles"
    assert not list(cache.glob(".unpack-*"))  # staging always removed
    r = CliRunner().invoke(report, [str(bad)])
    assert r.exit_code == 2 and "Traceback" not in r.output and r.output.startswith("report: ")


def test_staging_removed_even_on_an_unexpected_interrupt(
    good_bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bench_tui.reports.bundle as b

    def boom(run: Path) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(b, "_verify", boom)
    with pytest.raises(KeyboardInterrupt):
        open_bundle(good_bundle, tmp_path / "o")
    assert not list(tmp_path.glob(".unpack-*")) and not list((tmp_path / "o").glob("*"))


def test_peak_memory_of_refusing_a_bomb_stays_small(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the header scan streams: refusing a 300 MB bomb must not hold it in memory
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    bomb = _bomb(tmp_path / "bomb.tar.gz", 300 * 1024 * 1024)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(BundleError):
        open_bundle(bomb)
    grew_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grew_mb < 100
