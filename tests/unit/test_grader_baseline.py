"""The do-nothing baseline must score low on every pack (a pack it passes measures nothing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench_tui.graders.baseline import BASELINE_ANSWER, baseline_graded, baseline_score
from bench_tui.graders.pack import BUILTIN_PACK_DIR, builtin_packs, load_pack

PACKS = [BUILTIN_PACK_DIR / f"{n}.yaml" for n in builtin_packs()] + [
    Path(__file__).parent / "data" / "grader_mini_pack.yaml"
]


@pytest.mark.parametrize("path", PACKS, ids=lambda p: p.name)
@pytest.mark.parametrize("mode", ["lenient", "strict"])
def test_baseline_scores_low(path, mode):
    pack = load_pack(str(path))
    rep = baseline_score(pack, mode)
    assert rep.scored == len(pack.scenarios)  # every scenario graded, none errored
    assert rep.raw.score is not None and rep.raw.score < 20, [
        (s.scenario_id, s.raw_verdict) for s in rep.scenarios if s.raw_verdict != "fail"
    ]


def test_baseline_transcripts_make_no_calls():
    pack = load_pack(str(PACKS[-1]))
    for g in baseline_graded(pack):
        assistant = [m for m in g.transcript if m["role"] == "assistant"]
        assert assistant and all(
            m["content"] == BASELINE_ANSWER and not m.get("tool_calls") for m in assistant
        )
