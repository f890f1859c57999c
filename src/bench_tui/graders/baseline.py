"""The do-nothing baseline: every scenario answered "I can't help with that." with no tool call.

A pack whose baseline scores high is not measuring anything; ``tests/unit/test_grader_baseline.py`` asserts it
stays low on every pack present.
"""

from __future__ import annotations

from bench_tui.events import ScenarioGraded
from bench_tui.graders.grade import canonical_sha256, grade_transcript
from bench_tui.graders.pack import Pack
from bench_tui.graders.scoring import ScoreReport, score
from bench_tui.graders.simulator import simulate

BASELINE_ANSWER = "I can't help with that."


def baseline_graded(pack: Pack, mode: str = "lenient") -> list[ScenarioGraded]:
    out = []
    for sc in pack.scenarios:
        turns = [{"role": "assistant", "content": BASELINE_ANSWER} for _ in range(1 + len(sc.followups))]
        transcript = simulate(sc, pack, turns, mode)
        r = grade_transcript(sc, pack, transcript, mode)
        out.append(
            ScenarioGraded(
                point_id="baseline/do-nothing",
                scenario_id=sc.id,
                trial=0,
                category=sc.category,
                verdict=r.verdict,
                points=r.points,
                outcome=r.outcome,
                reasons=r.reasons,
                loop=r.loop,
                rules=r.rules,
                confidence=r.confidence,
                unsure=r.unsure,
                transcript=transcript,
                transcript_sha256=canonical_sha256(transcript),
            )
        )
    return out


def baseline_score(pack: Pack, mode: str = "lenient") -> ScoreReport:
    return score(
        baseline_graded(pack, mode), [], engine="baseline", variant="do-nothing", pack=pack, mode=mode
    )
