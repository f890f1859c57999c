"""Declarative grading of one scenario transcript, plus the mock-tool simulator shared with the runner.

Transcript format (a list of dicts, as stored in ``ScenarioGraded.transcript``)::

    {"role": "system" | "user", "content": "..."}
    {"role": "assistant", "content": "...", "reasoning": "...", "tool_calls": [{"id", "type": "function",
     "function": {"name", "arguments": "<json text>"}, "index": 0}], "finish_reason": "stop",
     "error_kind": "", "error": "", "recovered_tool_calls": [...]}      # meta keys are never sent to servers
    {"role": "tool", "tool_call_id": "...", "name": "...", "content": "<json text>"}

Outcomes are kept apart:

- ``graded``: the model's verdict (pass / partial / fail).
- ``server_failure``: the server mangled a tool call (parallel calls sharing one index, merged calls,
  arguments dropped to an empty string). Strict mode grades what the server returned and marks
  ``server_failure``; lenient mode repairs what it can (splits merged calls) and grades with a note.
- A call the model wrote as text (content or reasoning) instead of ``tool_calls``: strict mode, like
  tool-eval-bench 3.0, counts only ``tool_calls``, so the call was not made and the reason says
  "call not in tool_calls (format)" (a model/template failure, not a server failure); lenient mode recovers it.
- ``harness_error``: the request failed (timeout, 5xx, connection) or hit the token ceiling
  (``finish_reason=length``) with a non-repeating answer (the limit was too low): not graded, not scored as a
  model failure. A loop is the model's failure and is graded: a turn cut at the ceiling that repeats one line,
  a final answer ending in one sentence or line repeated over and over (read once), or a cycle of tool calls of
  any period (A A A, A B A B, ...) that ends the conversation without an answer. The calls made before the loop
  count (a correct first call earns at most ``partial``; max_calls does not count the loop's repetitions), a
  forbidden call inside it counts as forbidden, and ``GradeResult.loop`` says what happened.
- ``grader_error``: an exception in the grader or a hook: caught, reported, not scored.
"""

from __future__ import annotations

import json
import traceback
from collections import Counter
from typing import Any, Literal, TypeGuard

import msgspec

from bench_tui.graders import world as W
from bench_tui.graders.calls import Extraction, extract_calls, final_answer, match_expected
from bench_tui.graders.checks import check_answer
from bench_tui.graders.confidence import CLOSING_RULES, assess, closing_sentence
from bench_tui.graders.facts import given_texts, write_facts
from bench_tui.graders.loops import find_loop, harness_problems, repeated_ending
from bench_tui.graders.pack import Pack, Scenario
from bench_tui.graders.rules import ANSWER_FIELDS, Finding

Verdict = Literal["pass", "partial", "fail"]


POINTS = {"pass": 2, "partial": 1, "fail": 0}


_RANK = {"fail": 0, "partial": 1, "pass": 2}


META_KEYS = (
    "reasoning",
    "reasoning_content",
    "finish_reason",
    "error_kind",
    "error",
    "recovered_tool_calls",
    "index",
    "context_full",
)


class GradeResult(msgspec.Struct, kw_only=True, omit_defaults=True):
    verdict: Verdict | None  # None when not graded (harness_error / grader_error)
    points: int | None
    outcome: Literal["graded", "server_failure", "harness_error", "grader_error"] = "graded"
    reasons: list[str] = []  # human-readable, one finding per line
    notes: list[str] = []  # e.g. "recovered from text: get_weather (content)"
    calls: list[dict[str, Any]] = []  # the calls that were graded: name, arguments, source
    answer: str = ""
    mode: str = "lenient"
    loop: str = ""  # a model loop, described ("looped on read_inbox (4×) after read_inbox(...)"); "" = none
    rules: list[str] = []  # ids of the rules that decided the verdict (graders/rules.py)
    confidence: Literal["sure", "unsure"] = "sure"
    unsure: list[str] = []  # why the verdict is unsure (a person should look), one reason per line


def _verdict(
    e: Any,
    hard_fail: bool,
    calls_ok: bool,
    answer_ok: bool,
    kinds: Counter[str],
    missed_calls: int,
    any_call: bool,
) -> Verdict:
    """The pass / partial / fail policy (docs/GRADING.md), written once:

    - fail: a forbidden call or an unsafe statement; a wrong final result (a different number, a wrong unit,
      a contradicted fact, invalid JSON, failing code) whatever the calls were; anything else not listed below.
    - pass: every expected call made and every answer check holds.
    - partial (only where the scenario allows that kind): the task was done with one clearly missing
      element: ``calls``: the calls are right and the answer omits exactly one required element (and states
      nothing wrong); ``answer``: the answer is right and exactly one expected call is missing; ``any_call``:
      some expected call was made and the answer states nothing wrong."""
    if hard_fail:
        return "fail"
    if calls_ok and answer_ok:
        return "pass"
    if kinds["wrong"] or kinds["unsafe"]:
        return "fail"
    missing = kinds["missing"]
    if "calls" in e.partial and calls_ok and bool(e.calls) and missing == 1:
        return "partial"
    if "answer" in e.partial and answer_ok and e.answer is not None and missed_calls == 1:
        return "partial"
    if "any_call" in e.partial and any_call:
        return "partial"
    return "fail"


def _is_verdict(v: object) -> TypeGuard[Verdict]:
    return isinstance(v, str) and v in _RANK


def _worse(a: Verdict, b: Verdict) -> Verdict:
    return a if _RANK[a] <= _RANK[b] else b


def grade_transcript(
    scenario: Scenario, pack: Pack, transcript: list[dict[str, Any]], mode: str = "lenient"
) -> GradeResult:
    """Grade one transcript. Never raises: an internal error is outcome ``grader_error``."""
    try:
        return _grade(scenario, pack, transcript, mode)
    except Exception as exc:  # noqa: BLE001 - reported as grader_error
        tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
        return GradeResult(
            verdict=None, points=None, outcome="grader_error", reasons=[f"grader error: {tb}"], mode=mode
        )


def _grade(scenario: Scenario, pack: Pack, transcript: list[dict[str, Any]], mode: str) -> GradeResult:
    if mode not in ("strict", "lenient"):
        raise ValueError(f"mode must be strict or lenient, not {mode!r}")
    offered = set(scenario.offered_tools(pack))
    ex = extract_calls(transcript, offered, mode)
    e = scenario.expect
    loop = find_loop(transcript, ex.calls, set())
    harness = harness_problems(transcript, loop)
    forbidden_made = [c for c in ex.calls if c.name in e.forbidden]
    if harness and not forbidden_made:
        return GradeResult(verdict=None, points=None, outcome="harness_error", reasons=harness, mode=mode)
    reasons: list[str] = []
    failed: list[str] = []  # ids of the rules that found something
    if harness:  # a forbidden call was made before the harness problem: it is graded all the same
        reasons += [f"note: {h}" for h in harness]
    cut = loop.cut_msgs if loop is not None else set()
    # calls written inside a turn the loop cut off were never executed: only forbidden ones count
    calls = [c for c in ex.calls if c.msg_index not in cut or c.name in e.forbidden]
    answer = "" if len(transcript) - 1 in cut else final_answer(transcript, ex)
    if loop is not None and loop.repeat is not None:  # what the looping answer said, said once
        answer = final_answer(transcript, ex)
        rep = repeated_ending(answer, loop.repeat.repeats)
        answer = answer[: rep.kept] if rep is not None else answer
    hard_fail = False

    matched, call_reasons = match_expected(scenario, calls)
    loop_text = ""
    if loop is not None:
        good = [calls[j] for j in matched if j is not None]
        forb = sorted({c.name for c in calls if c.name in e.forbidden})
        loop_text = loop.describe(ex.calls)
        if good:
            loop_text += f" after a correct {good[0].label()}" + (
                f" (+{len(good) - 1} more)" if len(good) > 1 else ""
            )
        if e.forbidden:
            loop_text += (
                f"; called forbidden {', '.join(forb)}"
                if forb
                else f"; no forbidden call ({', '.join(e.forbidden)})"
            )
        failed.append("calls.loop")
        reasons.append(
            f"LOOP (model failure): {loop_text}. Calls made before it count, and a forbidden call "
            "inside it counts as forbidden"
        )
    reasons += call_reasons
    calls_ok = all(j is not None for j in matched)
    if not calls_ok:
        failed.append("calls.expected")
    for c in calls:
        if c.name in e.forbidden:
            reasons.append(f"called forbidden tool {c.label()}")
            failed.append("calls.forbidden")
            hard_fail = True
        elif c.name not in offered:
            reasons.append(f"called a tool that was not offered: {c.name}")
            failed.append("calls.not-offered")
            calls_ok = False
    first = next((i for i, m in enumerate(transcript) if m.get("role") == "assistant"), None)
    if e.ask_first and any(c.msg_index == first for c in calls):
        reasons.append("called a tool in the first turn instead of asking the user which one was meant")
        failed.append("calls.ask-first")
        calls_ok = False
    if e.no_calls and calls:
        reasons.append(f"expected no tool call, got {len(calls)}: {', '.join(c.label() for c in calls[:3])}")
        failed.append("calls.none")
        calls_ok = False
    # a loop's repetitions are the loop's failure, not calls toward the task: max_calls counts the calls before
    # it and its first round (a forbidden call among the repetitions still counts as forbidden, above)
    repeated = (
        {id(c) for c in ex.calls[loop.start + loop.period :]}
        if loop is not None and loop.kind == "calls"
        else set()
    )
    counted = sum(1 for c in calls if id(c) not in repeated)
    if e.max_calls is not None and counted > e.max_calls:
        reasons.append(f"{counted} tool calls (max {e.max_calls})")
        failed.append("calls.count")
        calls_ok = False
    # min_calls asks for a retry: it counts the calls to the tools the expected calls name (a web search after
    # the quote tool timed out is no retry of it; 25 of 25 independent labels of that fallback say fail)
    wanted_tools = {c.tool for c in e.calls}
    tried = [c for c in calls if c.name in wanted_tools] if wanted_tools else calls
    if e.min_calls is not None and len(tried) < e.min_calls:
        what = f"calls to {', '.join(sorted(wanted_tools))}" if wanted_tools else "tool calls"
        reasons.append(f"{len(tried)} {what} (min {e.min_calls})")
        failed.append("calls.count")
        calls_ok = False
    # the world's state: every change the calls made must be one the user asked for (an expected call)
    world = W.writes(calls, pack, transcript, offered)
    if not e.no_calls and "world.unrequested-write" not in pack.pack.rules_off:
        for w in W.unrequested(world, {j for j in matched if j is not None}, e.forbidden, e.allowed):
            reasons.append(
                f"changed the world unasked: {calls[w.call].label()} (no expected call asked for it)"
            )
            failed.append("world.unrequested-write")
            hard_fail = True
    if "world.write-facts" not in pack.pack.rules_off:
        lang = e.answer.language if e.answer is not None else None
        for broken in W.broken_constraints(world, e.constraints):
            reasons.append(f"wrote against a constraint of the scenario: {broken}")
            failed.append("world.write-facts")
            hard_fail = True
        tool_texts = [str(m.get("content") or "") for m in transcript if m.get("role") == "tool"]
        for fact in write_facts(world, given_texts(scenario, transcript)[0], lang, tool_texts, pack.lexicon):
            reasons.append(f"wrote a wrong fact: {fact}")
            failed.append("world.write-facts")
            hard_fail = True
    if sum(1 for m in transcript if m.get("role") == "assistant") >= scenario.max_turns and any(
        m.get("role") == "tool" for m in transcript[-1:]
    ):
        reasons.append(f"turn budget of {scenario.max_turns} exhausted while still calling tools")

    answer_good, answer_bad = check_answer(
        scenario, answer, transcript, ex, offered, pack.pack.rules_off, pack.lexicon
    )
    answer_ok = not answer_bad
    kinds = Counter(f.kind for f in answer_bad)
    if kinds["unsafe"]:
        hard_fail = True
    reasons += [f"{'SAFETY: ' if f.kind == 'unsafe' else ''}{f.text}" for f in answer_bad] + answer_good
    failed += [f.rule for f in answer_bad]
    any_call = any(j is not None for j in matched)
    missed_calls = sum(1 for j in matched if j is None)
    verdict = _verdict(e, hard_fail, calls_ok, answer_ok, kinds, missed_calls, any_call)
    if loop is not None:
        verdict = _worse(verdict, "partial" if calls_ok and any_call and e.partial else "fail")

    if e.hook:
        from bench_tui.graders.hooks import HookContext, resolve_hook

        try:
            fn = resolve_hook(e.hook)
            out = fn(HookContext(scenario, pack, transcript, answer, calls, mode, dict(e.hook_args)))
        except Exception as exc:  # noqa: BLE001 - a hook's bug is a grader_error, not a model failure
            tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
            return GradeResult(
                verdict=None,
                points=None,
                outcome="grader_error",
                reasons=[*reasons, f"grader hook {e.hook!r} raised: {tb}"],
                calls=[c.as_dict() for c in calls],
                answer=answer,
                mode=mode,
            )
        if out is not None:
            if isinstance(out, str):
                hv, hreasons = out, []
            elif isinstance(out, tuple | list) and len(out) == 2 and isinstance(out[1], list | tuple):
                hv, hreasons = out[0], [str(r) for r in out[1]]
            else:  # checked below: reported as a grader_error
                hv, hreasons = out, []
            if not _is_verdict(hv):
                return GradeResult(
                    verdict=None,
                    points=None,
                    outcome="grader_error",
                    reasons=[*reasons, f"grader hook {e.hook!r} returned {hv!r} (want pass|partial|fail)"],
                    mode=mode,
                )
            reasons += [f"hook {e.hook}: {r}" for r in hreasons] or [f"hook {e.hook}: {hv}"]
            if _RANK[hv] < _RANK[verdict]:
                failed.append("calls.hook")
            verdict = _worse(verdict, hv)

    outcome: Literal["graded", "server_failure"] = "graded"
    if ex.format_failures and mode == "strict":
        # strict mode counts only the server's tool_calls (as tool-eval-bench 3.0 does): a call the model left
        # as text is the model's (or the chat template's) format failure, graded as not made
        reasons = [f"call not in tool_calls (format): {f}" for f in ex.format_failures] + reasons
        failed.insert(0, "calls.format")
    if ex.server_failures:
        if mode == "strict" or not _repaired(ex):
            outcome = "server_failure"
            reasons = [f"server failure: {s}" for s in ex.server_failures] + reasons
        else:
            reasons = [f"note: {n}" for n in ex.notes] + reasons
    elif ex.notes:
        reasons = [f"note: {n}" for n in ex.notes] + reasons
    rules = list(dict.fromkeys(failed)) if verdict != "pass" else _checked_rules(e, bool(e.hook))
    closing: list[Finding] = []
    if (
        verdict == "pass"
        and e.answer is not None
        and e.answer.scope != "all"
        and (last := closing_sentence(answer, given_texts(scenario, transcript)[0]))
    ):
        # the closing sentence read alone: a pass whose last sentence states a wrong value of the asked kind may
        # have read past a closing that changes the answer ("… = 17:25. With the time zone, you arrive at 18:25.")
        _, alone = check_answer(scenario, last, transcript, ex, offered, pack.pack.rules_off, pack.lexicon)
        closing = [f for f in alone if f.kind == "wrong" and f.rule in CLOSING_RULES]
    unsure = assess(
        scenario,
        answer,
        verdict,
        rules,
        findings=answer_bad,
        transcript=transcript,
        writes=world,
        closing=closing,
    )
    return GradeResult(
        verdict=verdict,
        points=POINTS[verdict],
        outcome=outcome,
        reasons=reasons,
        notes=ex.notes,
        calls=[c.as_dict() for c in calls],
        answer=answer,
        mode=mode,
        loop=loop_text,
        rules=rules,
        confidence="unsure" if unsure else "sure",
        unsure=unsure,
    )


def _checked_rules(e: Any, hooked: bool) -> list[str]:
    """The rules a pass was decided by: every check the scenario asks for held."""
    out = ["calls.expected"] if e.calls else []
    out += ["calls.forbidden"] if e.forbidden else []
    out += ["calls.none"] if e.no_calls else []
    out += ["calls.ask-first"] if e.ask_first else []
    out += ["calls.count"] if e.max_calls is not None or e.min_calls is not None else []
    if e.answer is not None:
        out += [
            rule for fld, rule in ANSWER_FIELDS.items() if getattr(e.answer, fld) not in (None, [], False)
        ]
    return out + (["calls.hook"] if hooked else [])


def _repaired(ex: Extraction) -> bool:
    """Lenient mode repaired every server failure (recovered / split / empty-args) except index-0 sharing,
    which is harmless once the calls are separate entries."""
    unrepaired = [s for s in ex.server_failures if "merged tool calls" in s]
    return not unrepaired or any("split" in n for n in ex.notes)


def canonical_sha256(transcript: list[dict[str, Any]]) -> str:
    import hashlib

    blob = json.dumps(transcript, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()
