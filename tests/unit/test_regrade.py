"""`bench-tui regrade` on a synthetic run directory: no engine, regrade.json written, events.jsonl untouched."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
from click.testing import CliRunner

from bench_tui.cli.grade import regrade
from bench_tui.events import PlanPoint, PlanReady, RunStarted, ScenarioGraded, ScenarioParams, encode
from bench_tui.graders.grade import canonical_sha256
from bench_tui.graders.pack import load_pack
from bench_tui.graders.regrade import score_run_dir
from bench_tui.graders.simulator import simulate

PACK_PATH = Path(__file__).parent / "data" / "grader_mini_pack.yaml"
PACK = load_pack(str(PACK_PATH))


def spec_text(overrides: list[dict] | None = None) -> str:
    spec = {
        "version": 1,
        "name": "regrade-test",
        "engines": {"llama": {"kind": "external", "base_url": "http://127.0.0.1:18301"}},
        "workloads": {"sc": {"kind": "scenarios", "pack": str(PACK_PATH), "mode": "lenient"}},
        "grading": {"overrides": overrides or []},
    }
    return json.dumps(spec)  # JSON is YAML


def make_run(tmp_path: Path, overrides=None) -> tuple[Path, dict[str, str]]:
    run = tmp_path / "run"
    run.mkdir()
    (run / "spec.yaml").write_text(spec_text(overrides))
    pid = "llama.default/sc"
    events = [
        RunStarted(run_id="r1", spec_name="regrade-test", spec_path=str(run / "spec.yaml"), run_dir=str(run)),
        PlanReady(
            points=[
                PlanPoint(
                    point_id=pid,
                    engine="llama",
                    variant="default",
                    workload="sc",
                    kind="scenarios",
                    params=ScenarioParams(pack="pack.yaml"),
                )
            ]
        ),
    ]
    shas = {}
    for sid in ("TC-01", "TC-02", "TC-03"):
        sc = PACK.scenario(sid)
        which = sc.reference if sid != "TC-02" else sc.wrong
        t = simulate(sc, PACK, which)
        shas[sid] = canonical_sha256(t)
        # TC-01 is stored with a wrong verdict (as an older grader would have said): regrade fixes it
        stored = "fail" if sid in ("TC-01", "TC-02") else "pass"
        events.append(
            ScenarioGraded(
                point_id=pid,
                scenario_id=sid,
                trial=0,
                category=sc.category,
                verdict=stored,
                points={"pass": 2, "fail": 0}[stored],
                transcript=t,
                transcript_sha256=shas[sid],
                median_turn_ms=500.0,
            )
        )
    (run / "events.jsonl").write_bytes(b"".join(encode(e) + b"\n" for e in events))
    return run, shas


def test_regrade_without_override(tmp_path):
    run, _ = make_run(tmp_path)
    before = (run / "events.jsonl").read_bytes()
    res = CliRunner().invoke(regrade, [str(run)])
    assert res.exit_code == 0, res.output
    assert (run / "events.jsonl").read_bytes() == before  # nothing appended
    assert "events.jsonl not modified" in res.output
    out = json.loads((run / "regrade.json").read_text())
    rep = out["reports"][0]
    assert (rep["engine"], rep["variant"], rep["workload"]) == ("llama", "default", "sc")
    assert rep["raw"]["score"] == rep["adjusted"]["score"] == round(100 * 4 / 6, 2)
    changed = {c["scenario"]: c for c in out["changes"]}
    assert changed["TC-01"]["changed"] and changed["TC-01"]["regraded_verdict"] == "pass"
    assert not changed["TC-02"]["changed"] and not changed["TC-03"]["changed"]
    assert "1 verdict(s) differ" in res.output


def test_regrade_with_override_and_stale(tmp_path):
    run, shas = make_run(tmp_path)
    other = tmp_path / "spec2.yaml"
    other.write_text(
        spec_text(
            [
                {
                    "scenario": "TC-02",
                    "verdict": "pass",
                    "reason": "human check",
                    "transcript_sha256": shas["TC-02"],
                },
                {"scenario": "TC-03", "verdict": "fail", "reason": "old", "transcript_sha256": "0" * 64},
            ]
        )
    )
    res = CliRunner().invoke(regrade, [str(run), "--spec", str(other)])
    assert res.exit_code == 0, res.output
    rep = json.loads((run / "regrade.json").read_text())["reports"][0]
    assert rep["raw"]["score"] == round(100 * 4 / 6, 2)
    assert rep["adjusted"]["score"] == 100.0
    row = next(s for s in rep["scenarios"] if s["scenario_id"] == "TC-02")
    assert (row["raw_verdict"], row["adjusted_verdict"]) == ("fail", "pass")
    assert row["override"]["reason"] == "human check"
    assert [s["override"]["scenario"] for s in rep["overrides_stale"]] == ["TC-03"]
    assert "STALE override [1] TC-03" in res.output
    # the API F uses: stored verdicts, no regrading
    reports, changes = score_run_dir(run, other)
    assert changes == [] and reports[0].raw.score == round(100 * 2 / 6, 2)


def test_regrade_unmatched_override_is_an_error(tmp_path):
    run, _ = make_run(tmp_path, overrides=[{"scenario": "TC-42", "verdict": "pass", "reason": "typo"}])
    res = CliRunner().invoke(regrade, [str(run)])
    assert res.exit_code == 2
    assert "TC-42" in res.output and "matches no scenario" in res.output and "Traceback" not in res.output


def test_regrade_not_a_run_dir(tmp_path):
    res = CliRunner().invoke(regrade, [str(tmp_path)])
    assert res.exit_code == 2 and "no events.jsonl" in res.output


def test_regrade_marks_vanished_scenarios(tmp_path):
    run, _ = make_run(tmp_path)
    lines = (run / "events.jsonl").read_bytes().splitlines()
    last = json.loads(lines[-1])
    last["scenario_id"] = "TC-GONE"
    lines[-1] = json.dumps(last).encode()
    (run / "events.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    reports, changes = score_run_dir(run, regrade=True)
    gone = next(c for c in changes if c["scenario"] == "TC-GONE")
    assert gone["regraded_outcome"] == "grader_error"
    assert reports[0].grader_errors == 1
    msgspec.json.encode(reports)  # serialisable


def _override_spec(tmp_path: Path, shas: dict[str, str], name: str = "spec2.yaml") -> Path:
    other = tmp_path / name
    other.write_text(
        spec_text(
            [
                {
                    "scenario": "TC-02",
                    "verdict": "pass",
                    "reason": "human check",
                    "author": "reviewer",
                    "transcript_sha256": shas["TC-02"],
                }
            ]
        )
    )
    return other


def test_regrade_spec_is_stored_and_used_by_report_and_compare(tmp_path):
    """`regrade --spec` after a run: its overrides reach the report (raw kept beside adjusted)."""
    from bench_tui.cli.reports import report
    from bench_tui.reports.compare import compare_models
    from bench_tui.reports.model import load_run

    run, shas = make_run(tmp_path)
    assert load_run(run).scores[0].adjusted.score == load_run(run).scores[0].raw.score  # no override yet
    other = _override_spec(tmp_path, shas)
    res = CliRunner().invoke(regrade, [str(run), "--spec", str(other)])
    assert res.exit_code == 0, res.output
    stored = json.loads((run / "regrade.json").read_text())
    assert stored["overrides_from"] == str(other)
    assert [o["scenario"] for o in stored["overrides"]] == ["TC-02"]
    other.unlink()  # stored in the run dir: the spec file is no longer needed
    m = load_run(run)
    rep = m.scores[0]
    assert rep.adjusted.score == 100.0 and rep.raw.score == round(100 * 4 / 6, 2)
    assert any(c.code == "overrides" and "latest regrade" in c.message for c in m.caveats)
    res = CliRunner().invoke(report, [str(run), "--format", "md"])
    assert res.exit_code == 0, res.output
    assert "human check" in res.output and "latest regrade" in res.output
    assert compare_models([m]).scores["categories"][0]["cells"] == ["100.0"]
    # a plain regrade keeps the stored overrides (the latest regrade stays the latest)
    res = CliRunner().invoke(regrade, [str(run)])
    assert res.exit_code == 0, res.output
    assert json.loads((run / "regrade.json").read_text())["overrides_from"] == str(other)
    assert load_run(run).scores[0].adjusted.score == 100.0


def test_report_spec_applies_that_specs_overrides(tmp_path):
    from bench_tui.cli.reports import report

    run, shas = make_run(tmp_path)
    other = _override_spec(tmp_path, shas)
    res = CliRunner().invoke(report, [str(run), "--format", "md", "--spec", str(other)])
    assert res.exit_code == 0, res.output
    assert "human check" in res.output and f"overrides from {other}" in res.output
    assert not (run / "regrade.json").exists()  # report --spec renders, it does not store
    res = CliRunner().invoke(report, [str(run), "--spec", str(tmp_path / "missing.yaml")])
    assert res.exit_code == 2 and "Traceback" not in res.output


def test_regrade_output_names_outcomes_and_prints_pass_at_1_once(tmp_path):
    run, _ = make_run(tmp_path)
    lines = (run / "events.jsonl").read_bytes().splitlines()
    last = json.loads(lines[-1])  # TC-03: a harness error (no verdict), then overridden to fail
    last.update(verdict=None, points=None, outcome="harness_error")
    lines[-1] = json.dumps(last).encode()
    (run / "events.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    other = tmp_path / "s.yaml"
    other.write_text(spec_text([{"scenario": "TC-03", "verdict": "fail", "reason": "timed out twice"}]))
    from bench_tui.graders.scoring import format_report

    reports, _ = score_run_dir(run, other)
    text = format_report(reports[0])
    assert "None ->" not in text and "TC-03#0: harness error -> fail" in text
    assert text.count("pass@1") == 1 and "pass^1" not in text


def test_bundle_after_regrade_carries_the_regraded_report(tmp_path):
    import os
    import tarfile

    from bench_tui.reports.render import write_reports
    from bench_tui.reports.sharing import bundle_run

    run, shas = make_run(tmp_path)
    write_reports(run)
    assert "human check" not in (run / "report.md").read_text()
    old = (run / "report.md").stat().st_mtime - 10
    for f in ("report.md", "report.html"):
        os.utime(run / f, (old, old))
    res = CliRunner().invoke(regrade, [str(run), "--spec", str(_override_spec(tmp_path, shas))])
    assert res.exit_code == 0, res.output
    out, _ = bundle_run(run, tmp_path / "b.tar.gz")
    with tarfile.open(out) as tf:
        names = {m.name.split("/", 1)[1]: m for m in tf.getmembers() if "/" in m.name}
        md = tf.extractfile(names["report.md"]).read().decode()  # type: ignore[union-attr]
        assert "regrade.json" in names
    assert "human check" in md and "latest regrade" in md
