"""Correction overrides: a human's verdict on one scenario, replacing the grader's (``grading.overrides``).

    grading:
      overrides:
        - scenario: TC-12
          engine: vllm            # optional scope; variant too
          verdict: pass
          reason: "answer is right; the grader missed the unit spelled 'degrees K'"
          author: mk
          date: 2026-12-01
          raw_verdict: fail                 # optional binding: only while the grader still says this
          transcript_sha256: 3f2a...        # optional binding: only for this exact transcript

Rules:
- an override whose ``scenario`` is not in the pack is an ERROR (``OverrideError``), never silently ignored;
- an override bound to a ``raw_verdict`` or ``transcript_sha256`` that no longer matches is STALE: reported,
  not applied;
- when several apply, the most specific scope wins (engine+variant > engine > everyone); among equals the
  later one in the spec wins.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

import msgspec

from bench_tui.spec.schema import Override


class OverrideError(Exception):
    """Overrides that cannot be used (e.g. naming a scenario the pack does not have)."""


class OverrideRef(msgspec.Struct, kw_only=True, omit_defaults=True):
    """An override as it appears in reports (a copy of the spec entry plus its position)."""

    index: int  # position in grading.overrides (0-based)
    scenario: str
    verdict: str
    reason: str
    engine: str | None = None
    variant: str | None = None
    author: str = ""
    date: str = ""
    raw_verdict: str | None = None
    transcript_sha256: str | None = None

    @classmethod
    def of(cls, ov: Override, index: int) -> OverrideRef:
        return cls(
            index=index,
            scenario=ov.scenario,
            verdict=ov.verdict,
            reason=ov.reason,
            engine=ov.engine,
            variant=ov.variant,
            author=ov.author,
            date=str(ov.date or ""),
            raw_verdict=ov.raw_verdict,
            transcript_sha256=ov.transcript_sha256,
        )


class StaleOverride(msgspec.Struct, kw_only=True):
    """An override that matched a scenario's scope but was not applied, and why."""

    override: OverrideRef
    why: str
    trial: int = 0


def as_overrides(items: Iterable[Override | dict[str, Any]] | None) -> list[Override]:
    out = []
    for it in items or []:
        out.append(it if isinstance(it, Override) else msgspec.convert(it, Override))
    return out


def check_overrides(
    overrides: Iterable[Override], pack_ids: Iterable[str], *, source: str = "grading.overrides"
) -> None:
    """Raise OverrideError (one line per problem) if an override names a scenario the pack does not have."""
    ids = set(pack_ids)
    problems = []
    for i, ov in enumerate(overrides):
        if ov.scenario not in ids:
            close = difflib.get_close_matches(ov.scenario, sorted(ids), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            problems.append(
                f"{source}[{i}]: override for scenario {ov.scenario!r} matches no scenario in the pack{hint}"
            )
    if problems:
        raise OverrideError("\n".join(problems))


def _specificity(ov: Override) -> int:
    return (2 if ov.engine is not None else 0) + (1 if ov.variant is not None else 0)


def in_scope(ov: Override, scenario_id: str, engine: str, variant: str) -> bool:
    return (
        ov.scenario == scenario_id
        and (ov.engine is None or ov.engine == engine)
        and (ov.variant is None or ov.variant == variant)
    )


def resolve(
    overrides: list[Override],
    *,
    scenario_id: str,
    engine: str,
    variant: str,
    raw_verdict: str | None,
    transcript_sha256: str,
    trial: int = 0,
    siblings: frozenset[str] = frozenset(),
) -> tuple[OverrideRef | None, list[StaleOverride]]:
    """The override to apply to one graded scenario (or None) and the stale ones in its scope.

    ``siblings``: the transcripts of the other trials scored with this one; an override bound to one of
    them is that trial's (a review queue decision), neither applied here nor stale."""
    cands = [
        (i, ov)
        for i, ov in enumerate(overrides)
        if in_scope(ov, scenario_id, engine, variant)
        and not (
            ov.transcript_sha256
            and ov.transcript_sha256 != transcript_sha256
            and ov.transcript_sha256 in siblings
        )
    ]
    cands.sort(key=lambda t: (_specificity(t[1]), t[0]), reverse=True)
    stale: list[StaleOverride] = []
    applied: OverrideRef | None = None
    for i, ov in cands:
        why = ""
        if ov.transcript_sha256 and ov.transcript_sha256 != transcript_sha256:
            why = (
                f"bound to transcript {ov.transcript_sha256[:12]}, the stored transcript is now "
                f"{(transcript_sha256 or '<none>')[:12]}"
            )
        elif ov.raw_verdict is not None and ov.raw_verdict != raw_verdict:
            why = f"corrects raw verdict {ov.raw_verdict!r}, the grader now says {raw_verdict!r}"
        if why:
            stale.append(StaleOverride(override=OverrideRef.of(ov, i), why=why, trial=trial))
        elif applied is None:
            applied = OverrideRef.of(ov, i)
    return applied, stale
