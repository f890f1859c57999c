"""What a ``sessions`` workload sends: its sources read and checked (trace and conversation files).

- **trace** (Mooncake-style JSONL, one request a line): ``timestamp`` (ms, orders the lines),
  ``input_length`` and ``output_length`` (tokens), ``hash_ids`` (one id per ``TRACE_BLOCK_TOKENS`` block of the
  prompt: equal ids are equal blocks, so equal prefixes), optional ``session_id`` (lines sharing it are one
  session, in file order) and ``delay`` (ms after the previous turn's answer; wins over ``think_time_s``). The
  file is read line by line, never whole: a run keeps only the sessions it sends.
- **conversations** (ShareGPT-style): a JSON list (or JSONL) of ``{"conversations": [{"from": "human" | "gpt" |
  "system", "value": TEXT}, ...]}``; each is one session whose user turns are sent in order, each with the
  model's own earlier answers in the history.

Bad lines are found by :func:`check_session_sources` (the planner's checks) and reported at the spec's
``file:line:col`` with the data file's line number.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from bench_tui.events import SessionsParams
from bench_tui.graders.pack import load_pack
from bench_tui.runner.workloads.prompts import VOCAB
from bench_tui.spec.loader import LoadedSpec, Problems
from bench_tui.spec.schema import SessionsWorkload

TRACE_BLOCK_TOKENS = 512  # Mooncake's block size: one hash id per 512 prompt tokens
MAX_PROBLEMS = 3  # bad lines reported per file


class TraceLine(msgspec.Struct, kw_only=True):
    timestamp: float = 0.0
    input_length: int
    output_length: int
    hash_ids: list[int] = []
    session_id: str | int | None = None
    delay: float | None = None  # ms


class ShareGptTurn(msgspec.Struct, kw_only=True, rename={"sender": "from"}):
    sender: str
    value: str


class ShareGptConversation(msgspec.Struct, kw_only=True):
    conversations: list[ShareGptTurn]
    id: str | int | None = None


_LINE = msgspec.json.Decoder(TraceLine)
_CONV = msgspec.json.Decoder(ShareGptConversation)
_CONVS = msgspec.json.Decoder(list[ShareGptConversation])


class SourceError(ValueError):
    """A data file line that cannot be used: ``line`` is 1-based in the data file."""

    def __init__(self, line: int, message: str) -> None:
        self.line = line
        self.message = message
        super().__init__(f"line {line}: {message}")


def resolve(ref: str, spec_dir: Path | str | None) -> Path:
    p = Path(ref).expanduser()
    return p if p.is_absolute() or spec_dir is None else Path(spec_dir) / p


def _trace_line(raw: bytes, lineno: int) -> TraceLine:
    try:
        line = _LINE.decode(raw)
    except msgspec.DecodeError as exc:
        raise SourceError(
            lineno,
            f"{exc}; a trace line is {{'timestamp', 'input_length', 'output_length', "
            "'hash_ids'[, 'session_id', 'delay']}",
        ) from None
    if line.input_length < 1 or line.output_length < 1:
        raise SourceError(lineno, "input_length and output_length must be at least 1")
    if line.delay is not None and line.delay < 0:
        raise SourceError(lineno, f"delay must not be negative (got {line.delay:g})")
    return line


def iter_trace(path: Path) -> Iterator[tuple[int, TraceLine]]:
    """(line number, line) for every non-blank line, streamed; raises SourceError on a bad one."""
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            raw = raw.strip()
            if raw:
                yield lineno, _trace_line(raw, lineno)


@dataclass
class TraceSession:
    turns: list[TraceLine] = field(default_factory=list)


def trace_sessions(path: Path, limit: int) -> list[TraceSession]:
    """The first ``limit`` sessions of a trace (lines without a session id are sessions of one turn);
    only their lines are kept."""
    out: dict[Any, TraceSession] = {}
    for lineno, line in iter_trace(path):
        key = line.session_id if line.session_id is not None else ("line", lineno)
        sess = out.get(key)
        if sess is None:
            if len(out) >= limit:
                continue
            sess = out[key] = TraceSession()
        sess.turns.append(line)
    return list(out.values())


def block_words(hash_id: int) -> list[str]:
    """The prompt block of one hash id: ``TRACE_BLOCK_TOKENS`` common words (about one token each), the same
    words for the same id on every run."""
    rng = random.Random(f"trace-block-{hash_id}")
    return [rng.choice(VOCAB) for _ in range(TRACE_BLOCK_TOKENS)]


def trace_prompt(line: TraceLine, salt: str) -> str:
    """``input_length`` words: the blocks of ``hash_ids`` in order, then words unique to ``salt`` (a request
    whose ids do not cover its length must not share the rest with another)."""
    words: list[str] = []
    for h in line.hash_ids:
        if len(words) >= line.input_length:
            break
        words.extend(block_words(h))
    if len(words) < line.input_length:
        rng = random.Random(f"trace-tail-{salt}")
        words.extend(rng.choice(VOCAB) for _ in range(line.input_length - len(words)))
    return " ".join(words[: line.input_length])


def read_conversations(path: Path, limit: int) -> list[ShareGptConversation]:
    """The first ``limit`` conversations with at least one human turn; JSONL is streamed, a JSON list is
    decoded whole (that is the format: it cannot be read in pieces)."""
    out: list[ShareGptConversation] = []
    with open(path, "rb") as fh:
        head = fh.read(1)
        while head in (b" ", b"\n", b"\r", b"\t"):
            head = fh.read(1)
    if head == b"[":
        try:
            convs = _CONVS.decode(path.read_bytes())
        except msgspec.DecodeError as exc:
            raise SourceError(1, f"not a ShareGPT conversation list: {exc}") from None
        out = [c for c in convs if any(t.sender == "human" for t in c.conversations)]
        return out[:limit]
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            raw = raw.strip()
            if not raw:
                continue
            try:
                conv = _CONV.decode(raw)
            except msgspec.DecodeError as exc:
                raise SourceError(lineno, f"not a ShareGPT conversation: {exc}") from None
            if any(t.sender == "human" for t in conv.conversations):
                out.append(conv)
                if len(out) >= limit:
                    break
    return out


def check_session_sources(ld: LoadedSpec, out: Problems) -> None:
    """Every trace / conversations file of a sessions workload exists and reads (each trace line checked,
    streamed); problems at the spec's ``file:line:col`` with the data file's line number."""
    for wname, wl in ld.spec.workloads.items():
        if not isinstance(wl, SessionsWorkload):
            continue
        for key in ("trace", "conversations"):
            ref = getattr(wl.source, key)
            if ref is None:
                continue
            kp = ("workloads", wname, "source", key)
            path = resolve(ref, ld.dir)
            if not path.is_file():
                out.add(
                    kp,
                    f"workloads.{wname}.source.{key}: file not found: {path} (a relative path is "
                    f"relative to the spec's folder {ld.dir})",
                )
                continue
            try:
                if key == "trace":
                    n = 0
                    for _ in iter_trace(path):
                        n += 1
                    if n == 0:
                        out.add(kp, f"workloads.{wname}.source.trace: {path} has no request lines")
                elif not read_conversations(path, 1):
                    out.add(
                        kp,
                        f"workloads.{wname}.source.conversations: {path} has no conversation "
                        "with a human turn",
                    )
            except SourceError as exc:
                out.add(kp, f"workloads.{wname}.source.{key}: {path}:{exc.line}: {exc.message}")
            except OSError as exc:
                out.add(kp, f"workloads.{wname}.source.{key}: cannot read {path}: {exc.strerror or exc}")
        if wl.source.pack is not None:
            _check_pack(ld, wname, wl, out)


def _check_pack(ld: LoadedSpec, wname: str, wl: SessionsWorkload, out: Problems) -> None:
    kp = ("workloads", wname, "source", "pack")
    try:
        pack = load_pack(str(wl.source.pack), ld.dir)
        pack.select(wl.source.subset, None)
    except Exception as exc:  # noqa: BLE001 - PackError or a broken file: one line, never a traceback
        problems = getattr(exc, "problems", None)
        first = problems[0] if problems else f"{type(exc).__name__}: {exc}"
        out.add(kp, f"workloads.{wname}.source.pack: cannot use pack {wl.source.pack!r}: {first}")


def session_turns(params: SessionsParams, spec_dir: Path | None) -> int:
    """Requests per session, for the plan's estimate (synthetic: exact; others: a rough guess)."""
    if params.source == "synthetic":
        return params.turns
    return 3
