"""Bundles: round trip (report from a bundle = report from the dir), secrets scrubbed from every member,
malicious archives rejected."""

from __future__ import annotations

import io
import json
import shutil
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench_tui.cli.reports import bundle, report
from bench_tui.reports.bundle import BundleError, open_bundle, resolve_run
from bench_tui.reports.model import load_run
from bench_tui.reports.render import render, write_reports
from bench_tui.reports.sharing import bundle_run
from fixtures_runs import API_KEY_ENV, FIXTURE_API_KEY, FIXTURE_LITERAL_KEY, make_run_dir


@pytest.fixture
def run(tmp_path, monkeypatch):
    monkeypatch.setenv(API_KEY_ENV, FIXTURE_API_KEY)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    r = make_run_dir(tmp_path / "runs")
    write_reports(r)
    return r


def _all_text(path: Path) -> str:
    parts = []
    with tarfile.open(path) as tar:
        for m in tar:
            if m.isfile():
                parts.append(tar.extractfile(m).read().decode("utf-8", "replace"))  # type: ignore[union-attr]
    return "\n".join(parts)


def test_round_trip_report_equals(run, tmp_path):
    out, manifest = bundle_run(run, tmp_path / "b.tar.gz")
    names = {f["path"] for f in manifest["files"]}
    for must in (
        "spec.yaml",
        "resolved.json",
        "events.jsonl",
        "env.json",
        "engines/vllm.base.log",
        "engines/vllm.mtp.log",
        "report.md",
        "report.html",
        "scores.json",
        "mini_pack.yaml",
    ):
        assert must in names, must
    opened = open_bundle(out)
    assert opened.name == run.name and (opened / "MANIFEST.json").is_file()
    for fmt in ("md", "html"):
        assert render(load_run(opened), fmt) == render(load_run(run), fmt)
    # the pack travels with the bundle: scores come from the events, not the fallback
    assert load_run(opened).score_source == "events"
    write_reports(opened)  # an unpacked bundle is not indexed into the cache
    assert not (opened.parent / "history.sqlite").exists()
    # opened again: the cached copy; an edited cached copy is unpacked afresh
    assert open_bundle(out) == opened
    (opened / "env.json").write_text("{}")
    assert open_bundle(out) == opened
    assert "bench-box" in (opened / "env.json").read_text()
    # the CLI prints the report from the bundle alone
    r = CliRunner().invoke(report, [str(out), "--format", "md"])
    assert r.exit_code == 0, r.output
    assert r.output == render(load_run(run), "md")


def test_report_from_bundle_without_pack_uses_stored_scores(run, tmp_path):
    out, _ = bundle_run(run, tmp_path / "b.tar.gz")
    # rebuild the archive without the pack: scores.json carries the scores
    stripped = tmp_path / "nopack.tar.gz"
    with tarfile.open(out) as src, tarfile.open(stripped, "w:gz") as dst:
        manifest = json.loads(src.extractfile(f"{run.name}/MANIFEST.json").read())  # type: ignore[union-attr]
        manifest["files"] = [f for f in manifest["files"] if f["path"] != "mini_pack.yaml"]
        for m in src:
            if m.name.endswith("mini_pack.yaml"):
                continue
            data = src.extractfile(m).read()  # type: ignore[union-attr]
            if m.name.endswith("MANIFEST.json"):
                data = json.dumps(manifest).encode()
                m.size = len(data)
            dst.addfile(m, io.BytesIO(data))
    shutil.rmtree(run.parent / f"src_{run.name}")  # the spec's source dir is not on "this machine" either
    opened = open_bundle(stripped, tmp_path / "x")
    m = load_run(opened)
    assert m.score_source == "scores.json"
    assert [r.adjusted.score for r in m.scores] == [66.67, 66.67]
    assert [r.raw.score for r in m.scores] == [66.67, 50.0]
    assert "scores from scores.json" in render(m, "md")


def test_secrets_absent_from_every_member(run, tmp_path, monkeypatch):
    # the planted key is in env.json, the engine logs, an EngineLog event and (literal) in the spec
    raw = "".join(p.read_text() for p in run.rglob("*") if p.is_file() and p.suffix != ".sqlite")
    assert FIXTURE_API_KEY in raw and FIXTURE_LITERAL_KEY in raw
    out, manifest = bundle_run(run, tmp_path / "b.tar.gz")
    text = _all_text(out)
    assert FIXTURE_API_KEY not in text and FIXTURE_LITERAL_KEY not in text
    assert manifest["scrubbed_total"] >= 4
    assert "${BENCH_FIXTURE_API_KEY}" in text  # spec.yaml as given: reference kept, not expanded
    # a key with no recognisable shape is caught through the environment variable's value alone
    monkeypatch.setenv("MY_SERVICE_TOKEN", "plainvalue123456")
    (run / "engines" / "vllm.base.log").write_text("token=plainvalue123456\n")
    out2, _ = bundle_run(run, tmp_path / "b2.tar.gz")
    assert "plainvalue123456" not in _all_text(out2)
    # the opened bundle's reports are clean too
    opened = open_bundle(out2, tmp_path / "open2")
    for p in write_reports(opened):
        assert FIXTURE_API_KEY not in p.read_text() and "plainvalue123456" not in p.read_text()


def test_refuse_mode(run, tmp_path):
    with pytest.raises(BundleError, match="refusing to bundle: secrets found"):
        bundle_run(run, tmp_path / "b.tar.gz", refuse=True)
    assert not (tmp_path / "b.tar.gz").exists()
    r = CliRunner().invoke(bundle, [str(run), "-o", str(tmp_path / "c.tar.gz"), "--refuse-secrets"])
    assert r.exit_code == 2 and "env.json" in r.output and "Traceback" not in r.output


def test_bundle_cli(run, tmp_path):
    r = CliRunner().invoke(bundle, [str(run)])
    assert r.exit_code == 0, r.output
    assert (run.parent / f"{run.name}.tar.gz").is_file()
    assert "secret value(s) scrubbed" in r.output


def _evil(tmp_path: Path, name: str, build) -> Path:
    p = tmp_path / name
    with tarfile.open(p, "w:gz") as tar:
        ok = b'{"type":"run_started","run_id":"x","spec_name":"s","spec_path":"","run_dir":""}\n'
        info = tarfile.TarInfo("run/events.jsonl")
        info.size = len(ok)
        tar.addfile(info, io.BytesIO(ok))
        build(tar)
    return p


def _file(tar: tarfile.TarFile, name: str, data: bytes = b"x") -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def _link(tar: tarfile.TarFile, name: str, target: str, kind: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    tar.addfile(info)


def _dev(tar: tarfile.TarFile, name: str) -> None:
    info = tarfile.TarInfo(name)
    info.type = tarfile.CHRTYPE
    tar.addfile(info)


@pytest.mark.parametrize(
    "name,build,msg",
    [
        ("dotdot.tar.gz", lambda t: _file(t, "run/../../escape.txt"), "path traversal"),
        ("abs.tar.gz", lambda t: _file(t, "/tmp/evil-abs.txt"), "absolute path"),
        ("sym.tar.gz", lambda t: _link(t, "run/link", "/etc/passwd", tarfile.SYMTYPE), "link member"),
        ("hard.tar.gz", lambda t: _link(t, "run/hard", "/etc/passwd", tarfile.LNKTYPE), "link member"),
        ("dev.tar.gz", lambda t: _dev(t, "run/dev"), "special member"),
        ("two.tar.gz", lambda t: _file(t, "other/x.txt"), "single top directory"),
    ],
)
def test_malicious_bundles_rejected(tmp_path, monkeypatch, name, build, msg):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    p = _evil(tmp_path, name, build)
    with pytest.raises(BundleError, match=msg):
        open_bundle(p)
    assert not (tmp_path / "escape.txt").exists() and not Path("/tmp/evil-abs.txt").exists()
    # nothing was left behind in the cache
    root = tmp_path / "cache" / "bench-tui" / "bundles"
    assert not any(root.rglob("*.txt"))
    r = CliRunner().invoke(report, [str(p)])
    assert r.exit_code == 2 and "unsafe bundle" in r.output and "Traceback" not in r.output


def test_oversized_member_rejected(tmp_path, monkeypatch):
    import bench_tui.reports.bundle as b

    monkeypatch.setattr(b, "MAX_MEMBER_BYTES", 10)
    p = _evil(tmp_path, "big.tar.gz", lambda t: _file(t, "run/big.bin", b"y" * 11))
    with pytest.raises(BundleError, match="limit 10"):
        open_bundle(p, tmp_path / "o")


def test_tampered_and_garbage_bundles(run, tmp_path):
    out, _ = bundle_run(run, tmp_path / "b.tar.gz")
    tampered = tmp_path / "t.tar.gz"
    with tarfile.open(out) as src, tarfile.open(tampered, "w:gz") as dst:
        for m in src:
            data = src.extractfile(m).read()  # type: ignore[union-attr]
            if m.name.endswith("env.json"):
                data = data.replace(b"bench-box", b"other-box")
            dst.addfile(m, io.BytesIO(data))
    with pytest.raises(BundleError, match="sha256 mismatch for env.json"):
        open_bundle(tampered, tmp_path / "t")
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"not a tarball")
    with pytest.raises(BundleError, match="not a bundle"):
        open_bundle(junk, tmp_path / "j")
    with pytest.raises(BundleError, match="no such run directory or bundle"):
        resolve_run(tmp_path / "absent.tar.gz")
