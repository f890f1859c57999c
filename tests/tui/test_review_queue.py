"""Pilot tests of the review queue: unsure verdicts one at a time, confirmed or overridden into the spec's
overrides (raw kept), and what the scores, the regrade and the queue itself make of them afterwards."""

from __future__ import annotations

import getpass
from pathlib import Path

import msgspec
import pytest
import yaml
from helpers import open_scored_results, until

from bench_tui.events import ScenarioGraded, read_events
from bench_tui.graders.grade import canonical_sha256, grade_transcript
from bench_tui.graders.pack import load_pack
from bench_tui.graders.regrade import regrade_run, score_run_dir
from bench_tui.graders.scoring import format_report
from bench_tui.graders.simulator import simulate
from bench_tui.tui.app import make_app
from bench_tui.tui.screens.review import ReviewScreen
from fixtures_runs import API_KEY_ENV, FIXTURE_API_KEY, PACK_SRC, write_events

SIZE = (150, 46)
# a right answer ("Ada") in a clause that also holds a negation: the grader passes it, unsure
UNSURE = {
    "base": "I won't forget that your name is Ada.",
    "mtp": "I can't say for sure that your name is Ada.",
}


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(API_KEY_ENV, FIXTURE_API_KEY)


@pytest.fixture
def unsure_run(recorded_run: Path) -> Path:
    """The recorded run with TC-06 answered, on both variants, in a way the grader passes but is unsure of."""
    pack = load_pack(str(PACK_SRC))
    sc = pack.scenario("TC-06")
    out = []
    for ev in read_events(str(recorded_run / "events.jsonl")):
        if isinstance(ev, ScenarioGraded) and ev.scenario_id == "TC-06":
            variant = ev.point_id.split("/")[0].split(".")[1]
            tr = simulate(sc, pack, [{"content": "Nice to meet you."}, {"content": UNSURE[variant]}])
            r = grade_transcript(sc, pack, tr, "lenient")
            assert (r.verdict, r.confidence) == ("pass", "unsure")
            ev = msgspec.structs.replace(
                ev,
                transcript=tr,
                transcript_sha256=canonical_sha256(tr),
                verdict=r.verdict,
                points=r.points,
                reasons=r.reasons,
                rules=r.rules,
                confidence=r.confidence,
                unsure=r.unsure,
            )
        out.append(ev)
    write_events(recorded_run / "events.jsonl", out)
    return recorded_run


def _overrides(spec: Path) -> list[dict[str, object]]:
    return list(yaml.safe_load(spec.read_text())["grading"]["overrides"])


async def test_confirm_and_override_are_stored_as_overrides(unsure_run: Path) -> None:
    app = make_app(watch=unsure_run)
    async with app.run_test(size=SIZE) as pilot:
        spec = app.spec_for_overrides()
        assert spec is not None
        before = _overrides(spec)
        results = await open_scored_results(pilot)
        await pilot.press("v")
        review = app.screen
        assert isinstance(review, ReviewScreen)
        await pilot.pause()
        header = str(review.query_one("#review-header").render())
        shown = str(review.query_one("#review").render())
        assert "2 unsure verdict(s) left" in header
        assert "TC-06 trial 0  vllm.base" in shown
        assert "grader says  pass" in shown and "decided by: answer.contains" in shown
        assert "negated-phrase: Ada stands only in clauses with a negation" in shown  # why it is unsure
        assert "user: My name is Ada." in shown and UNSURE["base"] in shown  # the transcript

        await pilot.press("c")  # confirm the grader's pass
        ovs = _overrides(spec)
        assert len(ovs) == len(before) + 1
        confirmed = ovs[-1]
        assert confirmed["scenario"] == "TC-06" and confirmed["engine"] == "vllm"
        assert confirmed["variant"] == "base" and confirmed["verdict"] == "pass"
        assert confirmed["raw_verdict"] == "pass" and "confirmed" in str(confirmed["reason"])
        assert confirmed["author"] == getpass.getuser()  # a person's decision says whose it is
        base_sha = next(
            g.transcript_sha256 for k, g in _graded(unsure_run).items() if k == ("TC-06", "vllm.base")
        )
        assert confirmed["transcript_sha256"] == base_sha
        shown = str(review.query_one("#review").render())
        assert "TC-06 trial 0  vllm.mtp" in shown and UNSURE["mtp"] in shown

        await pilot.press("f")  # override: fail, with a reason
        await pilot.press(*"refuses, then says it")
        await pilot.press("enter")
        ovs = _overrides(spec)
        assert ovs[-1]["variant"] == "mtp" and ovs[-1]["verdict"] == "fail"
        assert ovs[-1]["raw_verdict"] == "pass" and ovs[-1]["reason"] == "refuses, then says it"
        assert "review queue: empty" in str(review.query_one("#review-header").render())
        assert "No unsure verdict left to review" in str(review.query_one("#review").render())

        await until(pilot, lambda: results.scored_count >= 3, timeout=20)  # both decisions re-scored
        mtp = results.cells[("TC-06", 0, "vllm.mtp")]
        assert (mtp.raw, mtp.adjusted) == ("pass", "fail")
        await pilot.press("escape")
        assert app.screen is results
        await pilot.press("v")  # a fresh queue: the decisions are stored, nothing is left
        await pilot.pause()
        assert "review queue: empty" in str(app.screen.query_one("#review-header").render())

    reports, _ = score_run_dir(unsure_run, spec)
    rows = {(r.variant, s.scenario_id): s for r in reports for s in r.scenarios}
    assert (rows[("mtp", "TC-06")].raw_verdict, rows[("mtp", "TC-06")].adjusted_verdict) == ("pass", "fail")
    assert rows[("base", "TC-06")].override is not None
    assert rows[("base", "TC-06")].adjusted_verdict == "pass"
    _, regraded = regrade_run(unsure_run, spec)
    mtp_rep = next(r for r in regraded if r.variant == "mtp")
    row = next(s for s in mtp_rep.scenarios if s.scenario_id == "TC-06")
    assert (row.raw_verdict, row.raw_points, row.adjusted_verdict, row.adjusted_points) == (
        "pass",
        2,
        "fail",
        0,
    )
    # raw kept beside adjusted: TC-06's -2 and the spec's TC-02 override's +2 cancel in the adjusted total
    assert mtp_rep.raw.overall.passes == 4 and mtp_rep.adjusted.overall.passes == 4
    assert any(o.scenario == "TC-06" and o.verdict == "fail" for o in mtp_rep.overrides_applied)
    text = format_report(mtp_rep)
    assert "override TC-06#0: pass -> fail (refuses, then says it)" in text
    assert "unsure TC-06" not in text  # settled: no longer listed as unsure


def _graded(run: Path) -> dict[tuple[str, str], ScenarioGraded]:
    out = {}
    for ev in read_events(str(run / "events.jsonl")):
        if isinstance(ev, ScenarioGraded):
            out[(ev.scenario_id, "vllm." + ev.point_id.split("/")[0].split(".")[1])] = ev
    return out


async def test_escape_cancels_a_decision_and_skip_moves_on(unsure_run: Path) -> None:
    app = make_app(watch=unsure_run)
    async with app.run_test(size=SIZE) as pilot:
        spec = app.spec_for_overrides()
        assert spec is not None
        original = spec.read_text()
        await open_scored_results(pilot)
        await pilot.press("v")
        review = app.screen
        assert isinstance(review, ReviewScreen)
        await pilot.press("p", "escape")  # the reason box is cancelled: nothing written
        assert spec.read_text() == original and app.screen is review
        await pilot.press("s")  # skip: the other item shows, the skipped one comes back last
        assert review.current == ("TC-06", 0, "vllm.mtp")
        await pilot.press("s")
        assert review.current == ("TC-06", 0, "vllm.base")
        assert spec.read_text() == original


async def test_queue_is_empty_when_nothing_is_unsure(recorded_run: Path) -> None:
    app = make_app(watch=recorded_run)
    async with app.run_test(size=SIZE) as pilot:
        await open_scored_results(pilot)
        await pilot.press("v")
        await pilot.pause()
        assert "No unsure verdict left to review" in str(app.screen.query_one("#review").render())
        await pilot.press("c")  # nothing to confirm: a warning, no crash
        assert isinstance(app.screen, ReviewScreen)


async def test_the_judges_disagreements_are_in_the_queue(recorded_run: Path) -> None:
    """A verdict the judge disagrees with is unsure (from the run's judge cache): the queue shows the judge's
    reason; a verdict an override already settles (TC-02 on vllm.mtp) is not queued."""
    from bench_tui.engine_adapters.http import post_json
    from scripted_judge import ScriptedJudge

    replies = {
        "TC-02": '{"verdict": "pass", "reason": "226.85 K is what was asked"}',
        "TC-04": '{"verdict": "fail", "reason": "no second call"}',
        "TC-06": '{"verdict": "fail", "reason": "did not recall the name"}',
    }
    app = make_app(watch=recorded_run)
    async with app.run_test(size=SIZE) as pilot:
        spec = app.spec_for_overrides()  # the run's source spec (once the replay is loaded)
        assert spec is not None and spec.name == "fixture.yaml"
        with ScriptedJudge(replies) as judge:
            text = spec.read_text().replace(
                "grading:\n", f"grading:\n  judge: {{base_url: '{judge.base_url}', model: judge-1}}\n", 1
            )
            spec.write_text(text)
            score_run_dir(recorded_run, spec, regrade=True, judge_post=post_json)  # what a run's end does
            assert len(judge.requests) == 9
        # the judge is gone: the TUI reads its cache only
        await open_scored_results(pilot)
        await pilot.press("v")
        review = app.screen
        assert isinstance(review, ReviewScreen)
        await pilot.pause()
        # mtp TC-03: the grader's fail against the judge's default pass; TC-02 on mtp is overridden in the spec
        assert review.queue() == [
            ("TC-02", 0, "vllm.base"),
            ("TC-03", 0, "vllm.mtp"),
            ("TC-04", 0, "vllm.mtp"),
            ("TC-06", 0, "vllm.base"),
        ]
        assert "judge says pass: 226.85 K is what was asked" in str(review.query_one("#review").render())
        await pilot.press("a", *"the unit is right", "enter")
        ovs = _overrides(spec)
        assert (ovs[-1]["scenario"], ovs[-1]["variant"], ovs[-1]["verdict"], ovs[-1]["raw_verdict"]) == (
            "TC-02",
            "base",
            "partial",
            "fail",
        )
        assert review.current == ("TC-03", 0, "vllm.mtp")
