"""The judge's second opinion (graders/judge.py) against a scripted OpenAI-compatible judge: agreement leaves a
verdict sure, a disagreement marks it unsure with the judge's reason and never changes a score, the cache
spares a second request, a dead or slow judge is a note, and its API key lands in no output."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import msgspec
import pytest

from bench_tui.engine_adapters.http import post_json
from bench_tui.graders import judge as J
from bench_tui.graders.regrade import regrade_run, score_run_dir
from bench_tui.graders.scoring import format_report
from bench_tui.reports.render import write_reports
from bench_tui.reports.sharing import bundle_run
from fixtures_runs import API_KEY_ENV, FIXTURE_API_KEY, make_run_dir
from scripted_judge import ScriptedJudge

KEY_ENV = "JUDGE_TEST_KEY"
KEY = "sk-judge-5e3c1a9b7d2f4e6a8c0b"
GRADING_MD = Path(__file__).resolve().parents[2] / "docs" / "GRADING.md"


def _reply(verdict: str, reason: str) -> str:
    return json.dumps({"verdict": verdict, "reason": reason})


# the fixture run's grader verdicts: base TC-01..06 = pass fail pass fail pass pass; mtp = pass fail fail pass pass fail
REPLIES = {
    "TC-01": _reply("pass", "called get_weather for Paris and gave 18"),
    "TC-02": "```json\n" + _reply("pass", "226.85 K is what the user asked") + "\n```",  # fenced
    "TC-03": "It looks fine to me.",  # not the JSON asked for: unreadable
    "TC-04": "Verdict follows. " + _reply("fail", "no second call"),  # a sentence before the object
    "TC-05": _reply("pass", "valid JSON"),
    "TC-06": _reply("fail", "did not recall the name"),
}


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(API_KEY_ENV, FIXTURE_API_KEY)
    monkeypatch.setenv(KEY_ENV, KEY)


def _with_judge(run: Path, base_url: str, timeout_s: float = 10.0) -> None:
    spec = run / "spec.yaml"
    text = spec.read_text(encoding="utf-8")
    judge = (
        f"grading:\n  judge: {{base_url: '{base_url}', model: judge-1, api_key_env: {KEY_ENV}, "
        f"timeout_s: {timeout_s}}}\n"
    )
    spec.write_text(text.replace("grading:\n", judge, 1), encoding="utf-8")


def _rows(reports: list[J.Any]) -> dict[tuple[str, str], J.Any]:
    return {(r.variant, s.scenario_id): s for r in reports for s in r.scenarios}


def _scenario_of(request: dict[str, J.Any]) -> str:
    text = request["body"]["messages"][1]["content"]
    return str(json.loads(text.removeprefix("Scenario:\n").split("\n\nTranscript:")[0])["id"])


def test_policy_is_gradings_verdict_table() -> None:
    """The judge reads the policy people read: POLICY is docs/GRADING.md's verdict table, row by row."""
    section = GRADING_MD.read_text(encoding="utf-8").split("## Verdicts", 1)[1].split("\n## ", 1)[0]
    rows = [
        re.sub(r"\*\*", "", f"- {m.group(1)}: {m.group(2)}")
        for m in re.finditer(r"^\| \*\*(\w+)\*\* \| (.+?) \|$", section, re.M)
    ]
    assert len(rows) == 5
    assert J.POLICY.splitlines()[:5] == rows


@pytest.mark.parametrize(
    ("content", "verdict"),
    [
        (_reply("partial", "one missing"), "partial"),
        ("```json\n" + _reply("FAIL", "x") + "\n```", "fail"),
        ('I read it twice. {"verdict": "pass", "reason": "ok"} Done.', "pass"),
        ("{not json} and then " + _reply("pass", "ok"), "pass"),
        (_reply("maybe", "unsure"), None),
        ("pass", None),
        ("", None),
    ],
)
def test_parse_reply(content: str, verdict: str | None) -> None:
    op = J.parse_reply({"choices": [{"message": {"content": content}}]})
    assert op.verdict == verdict
    assert (op.unreadable == "") == (verdict is not None)


@pytest.mark.parametrize(
    "payload", [{}, {"choices": []}, [], "text", {"choices": [{"message": {"content": None}}]}]
)
def test_parse_reply_of_something_else_is_unreadable(payload: object) -> None:
    op = J.parse_reply(payload)
    assert op.verdict is None and op.unreadable


def test_chat_url() -> None:
    assert J.chat_url("http://h:1/v1/") == "http://h:1/v1/chat/completions"
    assert J.chat_url("http://h:1") == "http://h:1/v1/chat/completions"


def test_disagreement_marks_unsure_never_changes_a_score(tmp_path: Path) -> None:
    run = make_run_dir(tmp_path / "runs")
    before, _ = score_run_dir(run, regrade=True)  # what the regrade below scores, without a judge
    with ScriptedJudge(REPLIES) as judge:
        _with_judge(run, judge.base_url)
        out, reports = regrade_run(run, None, post_json)
        # 6 scenarios x 2 variants, one request per distinct transcript: TC-01, TC-02 and TC-05 have the
        # same transcript on both variants, so the second asks the cache
        assert len(judge.requests) == 9
        first = judge.requests[0]
        assert first["path"] == "/v1/chat/completions" and first["body"]["model"] == "judge-1"
        assert first["headers"]["Authorization"] == f"Bearer {KEY}"
        system, user = first["body"]["messages"]
        assert J.POLICY in system["content"] and '"verdict"' in system["content"]
        assert user["content"].startswith("Scenario:\n") and "\n\nTranscript:\n" in user["content"]
        assert "expected_calls" in user["content"] or '"expect"' in user["content"]

        rows = _rows(reports)
        # agreement: sure as the grader said
        assert rows[("base", "TC-01")].confidence == "sure" and rows[("base", "TC-01")].unsure == []
        assert rows[("base", "TC-04")].confidence == "sure"  # grader fail, judge fail
        assert rows[("mtp", "TC-06")].confidence == "sure"
        # disagreement: unsure with the judge's reason, verdicts and points as the grader said
        assert rows[("base", "TC-02")].confidence == "unsure"
        assert rows[("base", "TC-02")].unsure == ["judge says pass: 226.85 K is what the user asked"]
        assert rows[("base", "TC-06")].unsure == ["judge says fail: did not recall the name"]
        assert rows[("mtp", "TC-04")].unsure == ["judge says fail: no second call"]
        # unreadable: a note, the verdict left alone
        assert rows[("base", "TC-03")].confidence == "sure"
        base = next(r for r in reports if r.variant == "base")
        assert base.judge[0] == "judge judge-1: agrees with 3, disagrees with 2 (marked unsure)"
        assert any("TC-03#0: judge unreadable ('It looks fine to me.')" in n for n in base.judge)
        for b, a in zip(before, reports, strict=True):
            assert msgspec.to_builtins(b.raw) == msgspec.to_builtins(a.raw)
            assert msgspec.to_builtins(b.adjusted) == msgspec.to_builtins(a.adjusted)
            assert [(s.raw_verdict, s.adjusted_verdict, s.raw_points) for s in b.scenarios] == [
                (s.raw_verdict, s.adjusted_verdict, s.raw_points) for s in a.scenarios
            ]
        assert "unsure TC-02#0: fail: judge says pass: 226.85 K is what the user asked" in format_report(base)
        # regrade.json, report and compare see the marks (from the cache)
        assert any("judge says pass" in u for u in out["reports"][0]["scenarios"][1]["unsure"])

        # the cache: a regrade asks only for what it could not read before (TC-03 on each variant)
        regrade_run(run, None, post_json)
        assert len(judge.requests) == 11
        asked = [_scenario_of(r) for r in judge.requests[9:]]
        assert asked == ["TC-03", "TC-03"]
        # scoring without a post function (report, compare, the TUI) never asks
        again, _ = score_run_dir(run)
        assert len(judge.requests) == 11
        assert _rows(again)[("base", "TC-02")].unsure == ["judge says pass: 226.85 K is what the user asked"]
    cache = J.load_cache(run)
    assert len(cache.opinions) == 7 and cache.last_failure == ""  # 9 distinct transcripts, 2 unreadable


def test_the_grader_changing_its_mind_reuses_the_opinion(tmp_path: Path) -> None:
    """The cache key is the transcript, scenario, prompt and model, not the grader's verdict."""
    run = make_run_dir(tmp_path / "runs")
    with ScriptedJudge(REPLIES) as judge:
        _with_judge(run, judge.base_url)
        score_run_dir(run, judge_post=post_json)
        n = len(judge.requests)
        score_run_dir(run, regrade=True, judge_post=post_json)  # the verdicts graded again
        assert len(judge.requests) == n + 2  # only the two unreadable ones again
    # another model is another opinion
    spec = run / "spec.yaml"
    spec.write_text(spec.read_text().replace("model: judge-1", "model: judge-2"))
    reps, _ = score_run_dir(run)
    assert _rows(reps)[("base", "TC-02")].confidence == "sure"
    for r in reps:
        assert r.judge[-1].startswith("judge judge-2 at ") and r.judge[-1].endswith(
            "6 verdict(s) not judged (`bench-tui regrade RUN --judge` asks)"
        )


def test_dead_judge_is_a_note_and_changes_nothing(tmp_path: Path, free_tcp_port: int) -> None:
    run = make_run_dir(tmp_path / "runs")
    before, _ = score_run_dir(run)
    _with_judge(run, f"http://127.0.0.1:{free_tcp_port}/v1")
    reports, _ = score_run_dir(run, judge_post=post_json)  # refused: no exception
    for b, a in zip(before, reports, strict=True):
        assert [(s.raw_verdict, s.confidence, s.unsure) for s in b.scenarios] == [
            (s.raw_verdict, s.confidence, s.unsure) for s in a.scenarios
        ]
        assert msgspec.to_builtins(b.adjusted) == msgspec.to_builtins(a.adjusted)
    note = reports[0].judge[-1]
    assert "the judge failed: ConnectionRefusedError" in note and "6 verdict(s) not judged" in note
    # the failure is remembered for the passes that only read the cache (the report after a run)
    assert "ConnectionRefusedError" in J.load_cache(run).last_failure
    assert "the judge failed: ConnectionRefusedError" in score_run_dir(run)[0][0].judge[-1]


def test_slow_judge_times_out_once_and_is_a_note(tmp_path: Path) -> None:
    run = make_run_dir(tmp_path / "runs")
    with ScriptedJudge(REPLIES, delay_s=1.5) as judge:
        _with_judge(run, judge.base_url, timeout_s=0.3)
        reports, _ = score_run_dir(run, judge_post=post_json)
        assert len(judge.requests) == 1  # no further request after the first failure
    assert "timed out" in reports[0].judge[-1]
    assert all(s.confidence == "sure" for r in reports for s in r.scenarios)


def test_the_api_key_lands_in_no_output(tmp_path: Path) -> None:
    run = make_run_dir(tmp_path / "runs")
    with ScriptedJudge(REPLIES) as judge:
        _with_judge(run, judge.base_url)
        regrade_run(run, None, post_json)
        assert judge.requests[0]["headers"]["Authorization"] == f"Bearer {KEY}"  # it was used
    write_reports(run)
    archive, _ = bundle_run(
        run, tmp_path / "b.tar.gz", environ={}
    )  # no scrubbing by value: it must not be there
    assert (run / J.CACHE_FILE).is_file() and (run / "report.md").is_file()
    for f in run.rglob("*"):
        if f.is_file():
            assert KEY.encode() not in f.read_bytes(), f
    assert KEY.encode() not in gzip.decompress(archive.read_bytes())
    assert "judge judge-1: agrees with" in (run / "report.md").read_text()


def test_a_run_asks_the_judge_when_it_ends_and_its_report_shows_the_marks(tmp_path: Path) -> None:
    """The run's end (``RunHandle.ask_judge``, called before the report is written) fills the cache; the
    report, which never asks, shows the judge's marks from it."""
    from bench_tui.runner.orchestration.session import start_run
    from fixtures_runs import PACK_SRC

    run = make_run_dir(tmp_path / "runs")
    (run / "mini_pack.yaml").write_bytes(PACK_SRC.read_bytes())  # the resumed spec resolves its pack here
    with ScriptedJudge(REPLIES) as judge:
        _with_judge(run, judge.base_url)
        handle = start_run(None, resume=run)  # a handle on the finished run; not started
        try:
            handle.ask_judge()
        finally:
            handle.release()
        assert len(judge.requests) == 9
        write_reports(run)
        assert len(judge.requests) == 9
    report = (run / "report.md").read_text()
    assert "judge judge-1: agrees with 3, disagrees with 2 (marked unsure)" in report
    assert J.load_cache(run).opinions
