"""The `standard` pack's short subset end to end against the real CPU engine (llama.cpp via xllamacpp).

The engine is started by tests/cpu_engine.py (as in test_client_cpu.py), not by a spec, and the scenario
loop is driven through ``runner.scenarios.run_scenario_point``. The test asserts the pipeline: every scenario ran
within its turn budget, tool results are the pack's mocks, transcripts and their hashes are stored, grading is
reproducible from the stored transcript, and the scoring arithmetic adds up. It never asserts a score.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator

import pytest

from bench_tui.events import PlanPoint, RequestFinished, ScenarioGraded, ScenarioParams, ScenarioTurn
from bench_tui.graders.grade import canonical_sha256, grade_transcript
from bench_tui.graders.pack import load_pack
from bench_tui.graders.scoring import score
from bench_tui.graders.simulator import MockState, calls_to_answer, initial_messages
from bench_tui.runner.transport.client import StreamClient
from bench_tui.runner.workloads.scenarios import run_scenario_point
from bench_tui.spec.schema import Sampling
from cpu_engine import cpu_engine

# one slot with the whole context: TC-55 offers the full tool library (a ~4k-token prompt)
pytestmark = pytest.mark.engine


@pytest.fixture(scope="module")
def engine_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with cpu_engine(tmp_path_factory.mktemp("engine"), parallel=1, ctx=8192) as url:
        yield url


def test_short_subset_end_to_end(engine_url: str) -> None:
    pack = load_pack("standard")
    short = pack.select(subset="short")
    point = PlanPoint(
        point_id="cpu.lenient/scenarios/standard-short",
        engine="llamacpp",
        variant="cpu",
        workload="scenarios",
        kind="scenarios",
        params=ScenarioParams(
            pack="standard", subset="short", mode="lenient", max_tokens=96, request_timeout=240.0, parallel=1
        ),
    )
    events: list = []

    async def go():  # type: ignore[no-untyped-def]
        async with StreamClient(engine_url, timeout=300) as client:
            return await run_scenario_point(
                point,
                client=client,
                model_id="qwen2.5-coder-0.5b",
                sampling=Sampling(temperature=0.0, seed=42),
                emit=events.append,
                spec_dir=None,
            )

    # a guard against a hung loop, not a speed bound (each request has its own 240 s timeout): the subset
    # runs beside a busy xdist worker on the CI box, where a stop-34 CI run crossed the former 1,500 s
    summary = asyncio.run(asyncio.wait_for(go(), 3000))

    graded = [e for e in events if isinstance(e, ScenarioGraded)]
    turns = [e for e in events if isinstance(e, ScenarioTurn)]
    finished = [e for e in events if isinstance(e, RequestFinished)]

    # every scenario of the subset graded exactly once, with its category
    assert sorted(g.scenario_id for g in graded) == sorted(sc.id for sc in short)
    assert len(short) == 15
    for g in graded:
        assert g.category == pack.scenario(g.scenario_id).category
        assert g.point_id == point.point_id and g.trial == 0
        assert g.outcome != "grader_error", g.reasons

    # request bookkeeping: one RequestFinished per assistant request, matching the summary
    assert summary.requests == len(finished) == sum(1 for t in turns if t.role == "assistant")
    assert summary.ok + summary.failed == summary.requests and summary.ok > 0
    assert any((r.record.output_tokens or 0) > 0 for r in finished)

    for g in graded:
        sc = pack.scenario(g.scenario_id)
        t = g.transcript
        # stored transcript: starts with the scenario's messages, hash matches, within the turn budget
        assert t[: len(initial_messages(sc))] == initial_messages(sc)
        assert g.transcript_sha256 == canonical_sha256(t)
        assistant = [m for m in t if m["role"] == "assistant"]
        assert 1 <= len(assistant) <= sc.max_turns
        assert [x.role for x in turns if x.scenario_id == sc.id] == [
            m["role"] for m in t[len(initial_messages(sc)) :]
        ]
        # tool results are exactly what the pack's mocks answer to the calls made (replayed in order)
        state = MockState(sc, pack)
        replay: list[str] = []
        for m in t:
            if m["role"] == "assistant":
                if m.get("finish_reason") == "length" or m.get("error_kind"):
                    break  # the loop ends the conversation there: nothing is answered
                replay += [
                    state.respond(name, args) for _, name, args in calls_to_answer(m, state, "lenient")
                ]
        assert [m["content"] for m in t if m["role"] == "tool"] == replay
        # follow-ups are only sent after an answer without a tool call
        for i, m in enumerate(t[len(initial_messages(sc)) :], len(initial_messages(sc))):
            if m["role"] == "user":
                assert t[i - 1]["role"] == "assistant" and m["content"] in sc.followups
        # grading is a pure function of the stored transcript
        again = grade_transcript(sc, pack, t, "lenient")
        assert (again.verdict, again.points, again.outcome) == (g.verdict, g.points, g.outcome)
        assert g.outcome == "harness_error" or again.reasons == g.reasons

    # scoring arithmetic: the point summary, score() and the verdict counts agree
    counts = Counter(g.verdict for g in graded if g.outcome not in ("harness_error", "grader_error"))
    scored = sum(counts.values())
    extra = summary.extra
    assert extra["scenarios"] == 15 and extra["graded"] == 15 and extra["grader_errors"] == 0
    assert (extra["pass"], extra["partial"], extra["fail"]) == (
        counts["pass"],
        counts["partial"],
        counts["fail"],
    )
    assert extra["harness_errors"] == sum(1 for g in graded if g.outcome == "harness_error")
    rep = score(graded, [], engine="llamacpp", variant="cpu", pack=pack, mode="lenient")
    assert rep.scored == scored and rep.scenarios_total == 15
    assert rep.raw.overall.points == 2 * counts["pass"] + counts["partial"]
    if scored:
        expected = round(100.0 * rep.raw.overall.points / (2 * scored), 2)
        assert rep.raw.score == expected == extra["score_raw"]
        assert sum(b.n for b in rep.raw.categories.values()) == scored
        assert sum(b.points for b in rep.raw.tiers.values()) == rep.raw.overall.points
    assert rep.adjusted.score == rep.raw.score  # no overrides
    assert rep.recovered_from_text == sum(
        1 for g in graded if any("recovered from text" in r for r in g.reasons)
    )
