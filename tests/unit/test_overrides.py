"""Overrides: scope, specificity, binding (stale), unmatched scenarios."""

from __future__ import annotations

import pytest

from bench_tui.graders.overrides import OverrideError, as_overrides, check_overrides, resolve


def ov(**kw):
    base = {"scenario": "TC-01", "verdict": "pass", "reason": "r"}
    return as_overrides([{**base, **kw}])[0]


def res(ovs, **kw):
    args = {
        "scenario_id": "TC-01",
        "engine": "vllm",
        "variant": "mtp",
        "raw_verdict": "fail",
        "transcript_sha256": "abc",
    }
    return resolve(ovs, **{**args, **kw})


def test_apply_and_scope():
    applied, stale = res([ov()])
    assert applied is not None and applied.verdict == "pass" and stale == []
    assert res([ov(engine="sglang")])[0] is None
    assert res([ov(engine="vllm", variant="base")])[0] is None
    assert res([ov(engine="vllm", variant="mtp")])[0] is not None
    assert res([ov(scenario="TC-02")])[0] is None


def test_most_specific_wins_then_latest():
    ovs = [
        ov(verdict="partial", reason="global"),
        ov(verdict="pass", engine="vllm", reason="engine"),
        ov(verdict="fail", engine="vllm", variant="mtp", reason="variant"),
    ]
    assert res(ovs)[0].reason == "variant"
    assert res(ovs, variant="base")[0].reason == "engine"
    assert res(ovs, engine="llama")[0].reason == "global"
    later = [ov(reason="first"), ov(reason="second")]
    assert res(later)[0].reason == "second"


def test_stale_binding_not_applied():
    applied, stale = res([ov(transcript_sha256="abc")])
    assert applied is not None
    applied, stale = res([ov(transcript_sha256="def999")])
    assert applied is None and len(stale) == 1 and "transcript" in stale[0].why
    applied, stale = res([ov(raw_verdict="partial")])
    assert applied is None and "raw verdict 'partial'" in stale[0].why
    applied, stale = res([ov(raw_verdict="fail")])
    assert applied is not None and stale == []
    # a stale specific override falls back to a valid general one, and is still reported
    applied, stale = res([ov(reason="general"), ov(engine="vllm", raw_verdict="pass", reason="specific")])
    assert applied.reason == "general" and stale[0].override.reason == "specific"


def test_unmatched_scenario_is_an_error():
    check_overrides([ov()], ["TC-01", "TC-02"])
    with pytest.raises(OverrideError) as ei:
        check_overrides([ov(), ov(scenario="TC-1")], ["TC-01", "TC-02"])
    assert "grading.overrides[1]" in str(ei.value) and "did you mean 'TC-01'" in str(ei.value)


def test_an_override_bound_to_another_trials_transcript_is_that_trials():
    """A review decision binds one trial's transcript: the scenario's other trials neither apply it nor call
    it stale (before, every other trial reported it as a stale override)."""
    mine = ov(transcript_sha256="t1", reason="trial 1 reviewed")
    applied, stale = res([mine], transcript_sha256="t0", siblings=frozenset({"t0", "t1"}))
    assert applied is None and stale == []
    applied, stale = res([mine], transcript_sha256="t1", siblings=frozenset({"t0", "t1"}))
    assert applied is not None and applied.reason == "trial 1 reviewed"
    # a transcript that no trial has any more: stale as before
    applied, stale = res(
        [ov(transcript_sha256="gone")], transcript_sha256="t0", siblings=frozenset({"t0", "t1"})
    )
    assert applied is None and len(stale) == 1
