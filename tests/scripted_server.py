"""A scripted OpenAI-compatible SSE server with a known schedule: the ground truth for client timing tests.

It speaks just enough HTTP/1.1 (keep-alive, chunked responses) over raw asyncio streams to be cheap: thousands
of chunks per second on one core. Endpoints:

- ``POST /v1/chat/completions`` and ``POST /v1/completions`` (streaming SSE, or one JSON body when
  ``stream`` is false)
- ``GET /health``, ``GET /v1/models``, ``GET /metrics`` (vllm:-style counters; spec-decode counters once a
  request ran with ``spec_accept``), ``POST /tokenize``
  (llama.cpp ``{"content"}`` -> ``{"tokens"}`` and vLLM ``{"prompt"|"messages"}`` -> ``{"count","tokens"}``;
  the "tokenizer" is one token per whitespace-separated word)
- ``GET /_log`` (what was sent and when, as JSON), ``POST /_schedule`` (replace the schedule; a subprocess
  server is reconfigured this way)

A streamed reply follows the :class:`Schedule`, like the real engines do:

1. response headers, then after ``first_event_delay_s`` a role-only chunk (BEFORE prefill),
2. ``prefill_s + prefill_per_token_s * prompt_tokens`` of silence,
3. ``reasoning_tokens`` reasoning deltas, then ``tokens`` content deltas or tool-call deltas (arguments split
   over ``tool_arg_chunks`` chunks, parallel calls with distinct indexes), each after its inter-token delay,
4. a finish chunk, a usage chunk with empty ``choices`` (when the request asked for it), ``data: [DONE]``.

Faults: ``status`` (500/503/429 ...) with a JSON error body, ``fault`` = ``drop`` (connection aborted mid
stream), ``stall`` (stops sending), ``malformed`` (a broken JSON line), ``error_event`` (an OpenAI error object as
an SSE event), ``giant`` (one content event of 2 MiB, then ``[DONE]``), ``crash`` (the whole server dies: the
subprocess exits, the in-process server aborts every connection and stops listening), ``close`` (connection
closed before any response). ``fault_after`` tokens are sent first; ``fault_requests`` limits the fault to the
first N requests.

A request body may carry ``"x_schedule": {...}`` to override schedule fields for that request only.

Every send time is ``time.monotonic_ns()`` taken just before the socket write (a system-wide clock on Linux, so a subprocess server and the test
share it) and is kept in :attr:`ScriptedServer.log` (in process) or ``GET /_log`` (subprocess).

In process::

    async with ScriptedServer(Schedule(prefill_s=0.3, itl_s=0.02, tokens=20), port=0) as srv:
        ... srv.base_url ...

As a subprocess (its own core, so the client's timing is not distorted by sharing a loop)::

    with ScriptedServerProcess(Schedule(...), port=0) as srv:   # or the CLI below; .port is the bound one
        ... srv.base_url, srv.fetch_log(), srv.set_schedule(Schedule(...)) ...

    python tests/scripted_server.py --port 0 --prefill-ms 300 --itl-ms 20 --tokens 64
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import math
import os
import random
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_WORDS = (
    "the quick brown fox jumps over a lazy dog while seven bright lanterns swing above "
    "narrow streets and tired engines hum under patient stars"
).split()


@dataclass
class Schedule:
    """What the server does with each request. All times in seconds."""

    first_event_delay_s: float = 0.0  # headers -> role-only chunk
    prefill_s: float = 0.0  # role chunk -> first token (plus the per-token part)
    prefill_per_token_s: float = 0.0
    itl_s: float | list[float] = 0.0  # before each token after the first (a list is indexed, last repeats)
    tokens: int | None = None  # content tokens; None -> the request's max_tokens (or 16)
    tokens_per_chunk: int = 1  # >1: several tokens' text in one delta (usage still counts tokens)
    burst: int = 1  # events written per socket write (1 = realistic; more = cheaper server)
    reasoning_tokens: int = 0
    reasoning_field: str = "reasoning_content"  # or "reasoning"
    tool_calls: list[dict[str, str]] = field(default_factory=list)  # [{"name": ..., "arguments": ...}]
    tool_arg_chunks: int = 3
    finish_reason: str | None = None  # default: "tool_calls" if tools, "length" if tokens hit max, "stop"
    send_usage: bool | None = None  # None -> when stream_options.include_usage asked for it
    usage_prompt_tokens: int | None = None  # lie about usage (None = the truth)
    usage_completion_tokens: int | None = None
    cached_tokens: int = 0
    timings: bool = False  # llama.cpp style `timings` in the last chunk
    role_chunk: bool = True
    status: int = 200
    fault: str | None = None  # drop | stall | malformed | error_event | crash | close
    fault_after: int = 0  # tokens sent before the fault
    fault_requests: int | None = None  # only the first N requests get status/fault
    spec_accept: list[float] = field(default_factory=list)  # per-position draft acceptance (speculation on)
    ignore_stream: bool = False  # answer with one JSON body even when streaming was asked for
    model: str = "scripted-model"
    # capacity with a known truth: at most ``slots`` requests are served at once, the rest wait in arrival
    # order (counted in vllm:num_requests_waiting); saturation is slots / (one request's service time)
    slots: int | None = None
    # a prefix cache: prompts are cut into blocks of ``prefix_block`` tokens (words), each keyed by the chain
    # of blocks before it; a request's cached tokens are its leading blocks already seen (prompt + answer of
    # finished requests, LRU over ``prefix_cache_blocks``); only the uncached tokens cost prefill time; the
    # count goes to usage.prompt_tokens_details.cached_tokens, timings.cache_n and the /metrics counters
    prefix_cache: bool = False
    prefix_block: int = 16
    prefix_cache_blocks: int = 1_000_000
    # timing noise with a known truth: every delay (prefill, per-token, itl) of request i is multiplied by
    # ``speed`` (run-to-run drift, or a slower server) times a per-request factor drawn from
    # N(1, jitter) seeded by (jitter_seed, i) and clipped to [0.5, 1.5]
    speed: float = 1.0
    jitter: float = 0.0
    jitter_seed: int = 0

    def timing_factor(self, index: int) -> float:
        if not self.jitter:
            return self.speed
        import random

        f = random.Random(self.jitter_seed * 1_000_003 + index).gauss(1.0, self.jitter)
        return self.speed * min(1.5, max(0.5, f))

    def scaled(self, factor: float) -> Schedule:
        """This schedule with every delay multiplied by ``factor``."""
        if factor == 1.0:
            return self
        itl = [x * factor for x in self.itl_s] if isinstance(self.itl_s, list) else self.itl_s * factor
        return dataclasses.replace(
            self,
            first_event_delay_s=self.first_event_delay_s * factor,
            prefill_s=self.prefill_s * factor,
            prefill_per_token_s=self.prefill_per_token_s * factor,
            itl_s=itl,
        )

    def merged(self, override: dict[str, Any] | None) -> Schedule:
        if not override:
            return self
        names = {f.name for f in dataclasses.fields(self)}
        bad = set(override) - names
        if bad:
            raise ValueError(f"unknown schedule fields: {sorted(bad)}")
        return dataclasses.replace(self, **override)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Schedule:
        return cls().merged(d)

    def itl_at(self, i: int) -> float:
        """Delay before token i (i >= 1)."""
        if isinstance(self.itl_s, list):
            if not self.itl_s:
                return 0.0
            return float(self.itl_s[min(i - 1, len(self.itl_s) - 1)])
        return float(self.itl_s)


@dataclass
class ServedRequest:
    """The truth about one request, as the server saw and sent it (monotonic ns)."""

    index: int
    path: str
    request_id: str = ""
    body: dict[str, Any] = field(default_factory=dict)
    status: int = 200
    t_recv_ns: int = 0  # request fully read
    t_headers_ns: int | None = None
    t_first_event_ns: int | None = None
    t_tokens_ns: list[int] = field(default_factory=list)  # every token-bearing event written
    t_events_ns: list[int] = field(
        default_factory=list
    )  # every SSE event written (role, tokens, finish, usage)
    t_done_ns: int | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    fault: str | None = None
    t_slot_ns: int | None = None  # when a slot took it (``slots``); t_slot - t_recv = its wait in the queue
    cached_tokens: int = 0  # prompt tokens served from the prefix cache (``prefix_cache``)


def free_port(*_legacy_range: int) -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now: the kernel picks it (bind port 0), we release it.

    Between the release and the caller's bind another process may take it (a tiny race; callers that start
    an engine retry once on "already in use"). Prefer ``port=0`` where the server reports its own port.
    The ``(lo, hi)`` range of the old signature is accepted and ignored.
    """
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def count_words(text: str) -> int:
    return len(text.split())


def prompt_token_count(body: dict[str, Any]) -> int:
    if "messages" in body:
        n = 0
        for m in body.get("messages") or []:
            c = m.get("content")
            if isinstance(c, list):
                c = " ".join(str(p.get("text", "")) for p in c if isinstance(p, dict))
            n += count_words(str(c or "")) + 1  # +1: the role marker, like a chat template would add
        return n
    p = body.get("prompt", "")
    if isinstance(p, list):
        return sum(count_words(str(x)) if isinstance(x, str) else 1 for x in p)
    return count_words(str(p))


def prompt_token_list(body: dict[str, Any]) -> list[str]:
    """The prompt as the server's "tokens" (words; a chat message starts with its role marker), as many as
    :func:`prompt_token_count` counts."""
    if "messages" in body:
        out: list[str] = []
        for m in body.get("messages") or []:
            c = m.get("content")
            if isinstance(c, list):
                c = " ".join(str(p.get("text", "")) for p in c if isinstance(p, dict))
            out.append(f"<{m.get('role', 'user')}>")
            out.extend(str(c or "").split())
        return out
    p = body.get("prompt", "")
    if isinstance(p, list):
        return [x if isinstance(x, str) else str(x) for x in p]
    return str(p).split()


class PrefixCache:
    """Block-hash prefix cache (the way vLLM's works): block i's key is the hash of (key of block i-1, its
    tokens), so a block hits only after the same prefix."""

    def __init__(self) -> None:
        from collections import OrderedDict

        self.blocks: OrderedDict[int, None] = OrderedDict()

    @staticmethod
    def keys(tokens: list[str], block: int) -> list[int]:
        out, h = [], 0
        for i in range(0, len(tokens) - block + 1, block):
            h = hash((h, tuple(tokens[i : i + block])))
            out.append(h)
        return out

    def lookup(self, tokens: list[str], block: int) -> int:
        n = 0
        for k in self.keys(tokens, block):
            if k not in self.blocks:
                break
            self.blocks.move_to_end(k)
            n += block
        return n

    def insert(self, tokens: list[str], block: int, capacity: int) -> None:
        for k in self.keys(tokens, block):
            self.blocks[k] = None
            self.blocks.move_to_end(k)
        while len(self.blocks) > capacity:
            self.blocks.popitem(last=False)


class _Metrics:
    def __init__(self) -> None:
        self.c: dict[str, float] = {
            "vllm:prompt_tokens_total": 0.0,
            "vllm:generation_tokens_total": 0.0,
            "vllm:request_success_total": 0.0,
            "vllm:prefix_cache_queries_total": 0.0,
            "vllm:prefix_cache_hits_total": 0.0,
            "vllm:num_requests_running": 0.0,
            "vllm:num_requests_waiting": 0.0,
        }

    def text(self) -> str:
        out = []
        typed: set[str] = set()
        for k, v in self.c.items():
            name, _, labels = k.partition("{")
            if name not in typed:
                typed.add(name)
                out.append(f"# TYPE {name} {'counter' if name.endswith('_total') else 'gauge'}\n")
            lab = 'model_name="scripted-model"' + ("," + labels.rstrip("}") if labels else "")
            out.append(f"{name}{{{lab}}} {v}\n")
        return "".join(out)

    def spec(self, sched: Schedule, tokens: int) -> tuple[int, float]:
        """Speculative-decoding counters, deterministic: with per-position acceptance p_i, each target
        step yields 1 + sum(p) tokens on average, so a reply of n tokens took ceil(n / (1 + sum p)) steps.
        Returns (draft tokens, accepted draft tokens) for llama.cpp-style timings."""
        k = len(sched.spec_accept)
        if not k or tokens <= 0:
            return 0, 0.0
        steps = math.ceil(tokens / (1.0 + sum(sched.spec_accept)))
        c = self.c
        for name in ("drafts", "draft_tokens", "accepted_tokens"):
            c.setdefault(f"vllm:spec_decode_num_{name}_total", 0.0)
        c["vllm:spec_decode_num_drafts_total"] += steps
        c["vllm:spec_decode_num_draft_tokens_total"] += steps * k
        c["vllm:spec_decode_num_accepted_tokens_total"] += steps * sum(sched.spec_accept)
        for i, p in enumerate(sched.spec_accept):
            key = f'vllm:spec_decode_num_accepted_tokens_per_pos_total{{position="{i}"}}'
            c[key] = c.get(key, 0.0) + steps * p
        return steps * k, steps * sum(sched.spec_accept)


_STREAM_FAULTS = ("drop", "stall", "malformed", "error_event", "crash", "giant")
GIANT_EVENT_BYTES = 2 << 20  # the `giant` fault: one SSE event this large


def _chunk(payload: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(payload), payload)


def _sse(obj: Any) -> bytes:
    return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"


class ScriptedServer:
    """In-process scripted server (async context manager). ``port=0`` picks a free port."""

    def __init__(
        self,
        schedule: Schedule | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        exit_on_crash: bool = False,
    ) -> None:
        self.schedule = schedule or Schedule()
        self.host = host
        self.port = port
        self.log: list[ServedRequest] = []
        self.metrics = _Metrics()
        self.crashed = False
        self._exit_on_crash = exit_on_crash
        self._server: asyncio.AbstractServer | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._n = 0
        self.cache = PrefixCache()
        self._slots: tuple[int, asyncio.Semaphore] | None = None
        self._sequences: dict[int, tuple[list[str], list[str]]] = {}  # request index -> its prompt tokens

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def by_id(self, request_id: str) -> ServedRequest:
        for r in self.log:
            if r.request_id == request_id:
                return r
        raise KeyError(request_id)

    async def start(self) -> None:
        self._server = await asyncio.start_server(
            self._handle, self.host, self.port, limit=1 << 22, backlog=4096
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for w in list(self._writers):
            w.transport.abort()
        for t in list(self._tasks):
            t.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=2.0)
        if self._server is not None:
            try:
                await asyncio.wait_for(self._server.wait_closed(), 2.0)
            except TimeoutError:
                pass
            self._server = None

    async def __aenter__(self) -> ScriptedServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # ------------------------------------------------------------------------------------------ http plumbing

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)  # type: ignore[arg-type]
        self._writers.add(writer)
        try:
            while not self.crashed:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
                    break
                lines = head.decode("latin-1").split("\r\n")
                try:
                    method, target, _ver = lines[0].split(" ", 2)
                except ValueError:
                    break
                headers: dict[str, str] = {}
                for ln in lines[1:]:
                    if ":" in ln:
                        k, v = ln.split(":", 1)
                        headers[k.strip().lower()] = v.strip()
                body = b""
                n = int(headers.get("content-length", "0") or 0)
                if n:
                    body = await reader.readexactly(n)
                keep = await self._route(method, target.split("?", 1)[0], headers, body, writer)
                if not keep or headers.get("connection", "").lower() == "close":
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            pass
        finally:
            self._writers.discard(writer)
            self._tasks.discard(task)  # type: ignore[arg-type]
            try:
                writer.close()
            except Exception:  # noqa: BLE001
                pass

    def _respond(
        self,
        writer: asyncio.StreamWriter,
        status: int,
        body: bytes,
        ctype: str = "application/json",
        extra: str = "",
    ) -> None:
        reason = {
            200: "OK",
            400: "Bad Request",
            404: "Not Found",
            429: "Too Many Requests",
            500: "Internal Server Error",
            503: "Service Unavailable",
        }.get(status, "Status")
        writer.write(
            f"HTTP/1.1 {status} {reason}\r\ncontent-type: {ctype}\r\ncontent-length: {len(body)}\r\n{extra}\r\n".encode()
            + body
        )

    async def _route(
        self, method: str, path: str, headers: dict[str, str], raw: bytes, writer: asyncio.StreamWriter
    ) -> bool:
        if method == "GET" and path == "/health":
            self._respond(writer, 200, b'{"status":"ok"}')
        elif method == "GET" and path == "/v1/models":
            body = {
                "object": "list",
                "data": [
                    {
                        "id": self.schedule.model,
                        "object": "model",
                        "owned_by": "scripted",
                        "max_model_len": 8192,
                    }
                ],
            }
            self._respond(writer, 200, json.dumps(body).encode())
        elif method == "GET" and path == "/metrics":
            self._respond(writer, 200, self.metrics.text().encode(), "text/plain; version=0.0.4")
        elif method == "GET" and path == "/_log":
            self._respond(writer, 200, json.dumps([dataclasses.asdict(r) for r in self.log]).encode())
        elif method == "POST" and path == "/_schedule":
            try:
                self.schedule = Schedule.from_dict(json.loads(raw or b"{}"))
            except (ValueError, TypeError) as exc:
                self._respond(writer, 400, json.dumps({"error": str(exc)}).encode())
            else:
                self._respond(writer, 200, b"{}")
        elif method == "POST" and path == "/tokenize":
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                self._respond(writer, 400, b'{"error":"bad json"}')
                return True
            if "content" in body:
                n = count_words(str(body["content"]))
                self._respond(writer, 200, json.dumps({"tokens": list(range(1000, 1000 + n))}).encode())
            else:
                n = prompt_token_count(body)
                self._respond(
                    writer,
                    200,
                    json.dumps(
                        {"count": n, "tokens": list(range(1000, 1000 + n)), "max_model_len": 8192}
                    ).encode(),
                )
        elif method == "POST" and path in ("/v1/chat/completions", "/v1/completions"):
            return await self._generate(path, headers, raw, writer)
        else:
            self._respond(writer, 404, b'{"error":"not found"}')
        await writer.drain()
        return True

    # ------------------------------------------------------------------------------------------ generation

    async def _generate(
        self, path: str, headers: dict[str, str], raw: bytes, writer: asyncio.StreamWriter
    ) -> bool:
        t_recv = time.monotonic_ns()
        idx = self._n
        self._n += 1
        try:
            body = json.loads(raw or b"{}")
            sched = self.schedule.merged(body.pop("x_schedule", None))
            sched = sched.scaled(sched.timing_factor(idx))
        except (ValueError, TypeError) as exc:
            self._respond(writer, 400, json.dumps({"error": {"message": str(exc)}}).encode())
            return True
        rec = ServedRequest(
            index=idx, path=path, request_id=headers.get("x-request-id", ""), body=body, t_recv_ns=t_recv
        )
        self.log.append(rec)
        faulty = sched.fault_requests is None or idx < sched.fault_requests
        fault = sched.fault if faulty else None
        status = sched.status if faulty else 200
        rec.fault = fault
        rec.status = status
        if fault == "close":
            writer.transport.abort()
            return False
        if fault == "crash" and sched.fault_after <= 0:
            self._crash()
            return False
        if status != 200:
            err = {"error": {"message": f"scripted failure {status}", "type": "scripted", "code": status}}
            extra = "retry-after: 1\r\n" if status == 429 else ""
            self._respond(writer, status, json.dumps(err).encode(), extra=extra)
            rec.t_headers_ns = rec.t_done_ns = time.monotonic_ns()
            await writer.drain()
            return True

        chat = path.endswith("chat/completions")
        prompt_tokens = prompt_token_count(body)
        max_tokens = body.get("max_tokens") or body.get("max_completion_tokens")
        n_content = sched.tokens if sched.tokens is not None else int(max_tokens or 16)
        rec.prompt_tokens = prompt_tokens
        m = self.metrics.c
        slot = self._slot(sched)
        if slot is not None:
            m["vllm:num_requests_waiting"] += 1
            try:
                await slot.acquire()
            finally:
                m["vllm:num_requests_waiting"] -= 1
        rec.t_slot_ns = time.monotonic_ns()
        tokens: list[str] = []
        if sched.prefix_cache:
            tokens = prompt_token_list(body)
            rec.cached_tokens = self.cache.lookup(tokens, sched.prefix_block)
            self._sequences[idx] = (["<assistant>"] if chat else [], tokens)
            sched = dataclasses.replace(sched, cached_tokens=rec.cached_tokens)
        m["vllm:num_requests_running"] += 1
        try:
            if not body.get("stream") or sched.ignore_stream:
                return await self._non_stream(rec, sched, chat, prompt_tokens, n_content, writer)
            return await self._stream(rec, sched, body, chat, prompt_tokens, n_content, fault, writer)
        finally:
            m["vllm:num_requests_running"] -= 1
            if slot is not None:
                slot.release()
            self._sequences.pop(idx, None)

    def _slot(self, sched: Schedule) -> asyncio.Semaphore | None:
        if sched.slots is None:
            return None
        if self._slots is None or self._slots[0] != sched.slots:
            self._slots = (sched.slots, asyncio.Semaphore(sched.slots))
        return self._slots[1]

    @staticmethod
    def _billed(sched: Schedule, prompt_tokens: int) -> int:
        """Prompt tokens that cost prefill time: the uncached ones when the prefix cache is on."""
        return prompt_tokens - sched.cached_tokens if sched.prefix_cache else prompt_tokens

    async def _non_stream(
        self,
        rec: ServedRequest,
        sched: Schedule,
        chat: bool,
        prompt_tokens: int,
        n_content: int,
        writer: asyncio.StreamWriter,
    ) -> bool:
        await asyncio.sleep(
            sched.prefill_s
            + sched.prefill_per_token_s * self._billed(sched, prompt_tokens)
            + sum(sched.itl_at(i) for i in range(1, max(n_content, 1)))
        )
        text = " ".join(_WORDS[i % len(_WORDS)] for i in range(n_content))
        choice: dict[str, Any] = {"index": 0, "finish_reason": sched.finish_reason or "length"}
        if chat:
            choice["message"] = {"role": "assistant", "content": text}
        else:
            choice["text"] = text
        usage = {
            "prompt_tokens": sched.usage_prompt_tokens or prompt_tokens,
            "completion_tokens": sched.usage_completion_tokens or n_content,
            "total_tokens": prompt_tokens + n_content,
        }
        self._account(rec, prompt_tokens, n_content, sched)
        body = {
            "id": f"cmpl-{rec.index}",
            "object": "chat.completion" if chat else "text_completion",
            "model": sched.model,
            "choices": [choice],
            "usage": usage,
        }
        rec.t_headers_ns = time.monotonic_ns()
        self._respond(writer, 200, json.dumps(body).encode())
        rec.t_done_ns = time.monotonic_ns()
        await writer.drain()
        return True

    def _account(self, rec: ServedRequest, prompt_tokens: int, completion: int, sched: Schedule) -> None:
        rec.completion_tokens = completion
        m = self.metrics.c
        m["vllm:prompt_tokens_total"] += prompt_tokens
        m["vllm:generation_tokens_total"] += completion
        m["vllm:request_success_total"] += 1
        m["vllm:prefix_cache_queries_total"] += prompt_tokens
        m["vllm:prefix_cache_hits_total"] += min(sched.cached_tokens, prompt_tokens)
        seq = self._sequences.pop(rec.index, None)
        if (
            sched.prefix_cache and seq is not None
        ):  # the finished sequence is cached before anyone can read it
            marker, tokens = seq
            answer = [_WORDS[i % len(_WORDS)] for i in range(completion)]
            self.cache.insert(tokens + marker + answer, sched.prefix_block, sched.prefix_cache_blocks)

    def _crash(self) -> None:
        self.crashed = True
        if self._exit_on_crash:
            os._exit(3)
        if self._server is not None:
            self._server.close()
        for w in list(self._writers):
            w.transport.abort()

    async def _stream(
        self,
        rec: ServedRequest,
        sched: Schedule,
        body: dict[str, Any],
        chat: bool,
        prompt_tokens: int,
        n_content: int,
        fault: str | None,
        writer: asyncio.StreamWriter,
    ) -> bool:
        loop = asyncio.get_running_loop()
        write = writer.transport.write
        cid = f"chatcmpl-{rec.index}" if chat else f"cmpl-{rec.index}"
        created = int(time.time())
        obj = "chat.completion.chunk" if chat else "text_completion"
        want_usage = sched.send_usage
        if want_usage is None:
            want_usage = bool((body.get("stream_options") or {}).get("include_usage"))

        def frame(choices: list[dict[str, Any]], **extra: Any) -> bytes:
            d = {"id": cid, "object": obj, "created": created, "model": sched.model, "choices": choices}
            d.update(extra)
            return _chunk(_sse(d))

        # vLLM's stream_options.continuous_usage_stats: every chunk carries the running usage
        continuous = bool((body.get("stream_options") or {}).get("continuous_usage_stats"))

        def delta(d: dict[str, Any], so_far: int = 0) -> bytes:
            extra: dict[str, Any] = {}
            if continuous:
                extra["usage"] = {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": so_far,
                    "total_tokens": prompt_tokens + so_far,
                }
            if chat:
                return frame([{"index": 0, "delta": d, "finish_reason": None}], **extra)
            return frame([{"index": 0, "text": d.get("content", ""), "finish_reason": None}], **extra)

        # plan the token events: (channel, delta dict, tokens in it)
        events: list[tuple[dict[str, Any], int]] = []
        for i in range(sched.reasoning_tokens):
            events.append(({sched.reasoning_field: _WORDS[i % len(_WORDS)] + " "}, 1))
        if sched.tool_calls and chat:
            for ci, call in enumerate(sched.tool_calls):
                args = call.get("arguments", "{}")
                k = max(1, sched.tool_arg_chunks)
                step = max(1, -(-len(args) // k))
                pieces = [args[j : j + step] for j in range(0, len(args), step)] or [""]
                first = {
                    "index": ci,
                    "id": f"call_{rec.index}_{ci}",
                    "type": "function",
                    "function": {"name": call.get("name", "f"), "arguments": ""},
                }
                events.append(({"tool_calls": [first]}, 1))
                for p in pieces:
                    events.append(({"tool_calls": [{"index": ci, "function": {"arguments": p}}]}, 1))
        else:
            tpc = max(1, sched.tokens_per_chunk)
            i = 0
            while i < n_content:
                k = min(tpc, n_content - i)
                text = "".join(_WORDS[(i + j) % len(_WORDS)] + " " for j in range(k))
                events.append(({"content": text}, k))
                i += k
        total_tokens = sum(k for _, k in events)

        write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
            b"transfer-encoding: chunked\r\n\r\n"
        )
        rec.t_headers_ns = time.monotonic_ns()
        t0 = loop.time()
        if sched.first_event_delay_s > 0:
            await asyncio.sleep(sched.first_event_delay_s)
        if sched.role_chunk:
            role = (
                delta({"role": "assistant", "content": ""})
                if chat
                else frame([{"index": 0, "text": "", "finish_reason": None}])
            )
            now = time.monotonic_ns()  # stamped just before the write: nobody can receive it earlier
            write(role)
            rec.t_first_event_ns = now
            rec.t_events_ns.append(now)
        prefill = sched.prefill_s + sched.prefill_per_token_s * self._billed(sched, prompt_tokens)
        due = t0 + sched.first_event_delay_s + prefill
        burst = max(1, sched.burst)
        pending: list[bytes] = []
        sent_tokens = 0
        for n, (d, k) in enumerate(events):
            if n:
                due += sched.itl_at(n)
            if fault and n == sched.fault_after and fault in _STREAM_FAULTS:
                if pending:
                    write(b"".join(pending))
                    pending.clear()
                await self._fault(fault, write, writer)
                return False
            delay = due - loop.time()
            if not pending:
                # even with no delay, yield so concurrent streams interleave like an engine's batch
                await asyncio.sleep(delay if delay > 0 else 0)
            sent_tokens += k
            pending.append(delta(d, sent_tokens))
            if len(pending) >= burst or n == len(events) - 1:
                now = time.monotonic_ns()
                write(b"".join(pending))
                rec.t_tokens_ns.extend([now] * len(pending))
                rec.t_events_ns.extend([now] * len(pending))
                if rec.t_first_event_ns is None:
                    rec.t_first_event_ns = now
                pending.clear()
                if writer.transport.get_write_buffer_size() > 1 << 20:
                    await writer.drain()
        if fault and sched.fault_after >= len(events) and fault in _STREAM_FAULTS:
            await self._fault(fault, write, writer)
            return False

        finish = sched.finish_reason or (
            "tool_calls"
            if sched.tool_calls and chat
            else ("length" if max_tokens_hit(body, n_content) else "stop")
        )
        usage = {
            "prompt_tokens": sched.usage_prompt_tokens
            if sched.usage_prompt_tokens is not None
            else prompt_tokens,
            "completion_tokens": (
                sched.usage_completion_tokens if sched.usage_completion_tokens is not None else total_tokens
            ),
            "total_tokens": prompt_tokens + total_tokens,
        }
        if sched.cached_tokens or sched.prefix_cache:
            usage["prompt_tokens_details"] = {"cached_tokens": sched.cached_tokens}
        extra: dict[str, Any] = {}
        draft_n, draft_acc = self.metrics.spec(sched, total_tokens)
        if sched.timings:
            pre_ms = prefill * 1000.0
            dec_ms = sum(sched.itl_at(i) for i in range(1, len(events))) * 1000.0
            extra["timings"] = {
                "cache_n": sched.cached_tokens,
                "prompt_n": prompt_tokens - sched.cached_tokens,
                "prompt_ms": pre_ms,
                "predicted_n": total_tokens,
                "predicted_ms": dec_ms,
            }
            if sched.spec_accept:
                extra["timings"].update(draft_n=draft_n, draft_n_accepted=round(draft_acc))
        fin_choice: dict[str, Any] = {"index": 0, "finish_reason": finish}
        if chat:
            fin_choice["delta"] = {}
        else:
            fin_choice["text"] = ""
        tail: list[bytes] = []
        if want_usage:
            tail.append(frame([fin_choice]))
            tail.append(frame([], usage=usage, **extra))
        else:
            tail.append(frame([fin_choice], **extra))
        tail.append(_chunk(b"data: [DONE]\n\n"))
        tail.append(b"0\r\n\r\n")
        now = time.monotonic_ns()
        write(b"".join(tail))
        rec.t_events_ns.extend([now] * (len(tail) - 1))
        rec.t_done_ns = now
        self._account(rec, prompt_tokens, total_tokens, sched)
        await writer.drain()
        return True

    async def _fault(self, fault: str, write: Any, writer: asyncio.StreamWriter) -> None:
        if fault == "drop":
            writer.transport.abort()
        elif fault == "error_event":  # what vLLM sends when generation fails mid-stream
            write(
                _chunk(
                    _sse(
                        {
                            "error": {
                                "message": "scripted engine error",
                                "type": "InternalServerError",
                                "code": 500,
                            }
                        }
                    )
                )
            )
            write(_chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n")
            await writer.drain()
        elif fault == "malformed":
            write(_chunk(b'data: {"id": "x", "choices": [{"delta": {"content": "oops"\n\n'))
            write(_chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n")
            await writer.drain()
        elif fault == "stall":
            await asyncio.sleep(3600)
        elif fault == "giant":
            write(
                _chunk(
                    _sse(
                        {
                            "id": "x",
                            "object": "chat.completion.chunk",
                            "choices": [
                                {"index": 0, "delta": {"content": "x" * GIANT_EVENT_BYTES}, "text": "x"}
                            ],
                        }
                    )
                )
            )
            write(_chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n")
            await writer.drain()
        elif fault == "crash":
            self._crash()


def max_tokens_hit(body: dict[str, Any], n: int) -> bool:
    mt = body.get("max_tokens") or body.get("max_completion_tokens")
    return mt is not None and n >= int(mt)


# ---------------------------------------------------------------------------------------------- subprocess


class ScriptedServerProcess:
    """Run the scripted server in its own Python process (sync context manager)."""

    def __init__(
        self,
        schedule: Schedule | None = None,
        *,
        port: int = 0,
        host: str = "127.0.0.1",
        start_timeout: float = 15.0,
    ) -> None:
        self.schedule = schedule or Schedule()
        self.host = host
        self.port = port
        self.start_timeout = start_timeout
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> None:
        cmd = [
            sys.executable,
            os.path.abspath(__file__),
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--schedule-json",
            self.schedule.to_json(),
        ]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert self.proc.stdout is not None
        deadline = time.monotonic() + self.start_timeout
        # the child prints "READY <port>" once it listens
        import selectors

        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        buf = b""
        while time.monotonic() < deadline:
            if sel.select(timeout=0.2):
                data = os.read(self.proc.stdout.fileno(), 4096)
                if not data:
                    break
                buf += data
                if b"\n" in buf:
                    line = buf.split(b"\n", 1)[0].decode()
                    if line.startswith("READY "):
                        self.port = int(line.split()[1])
                        sel.close()
                        return
            if self.proc.poll() is not None:
                break
        sel.close()
        self.stop()
        raise RuntimeError(f"scripted server did not start (output: {buf[:200]!r})")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        if self.proc is not None and self.proc.stdout is not None:
            self.proc.stdout.close()

    def _req(self, method: str, path: str, data: bytes | None = None) -> bytes:
        req = urllib.request.Request(
            self.base_url + path, data=data, method=method, headers={"content-type": "application/json"}
        )
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.read()  # type: ignore[no-any-return]

    def fetch_log(self) -> list[ServedRequest]:
        return [ServedRequest(**d) for d in json.loads(self._req("GET", "/_log"))]

    def set_schedule(self, schedule: Schedule) -> None:
        self.schedule = schedule
        self._req("POST", "/_schedule", schedule.to_json().encode())

    def __enter__(self) -> ScriptedServerProcess:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="scripted OpenAI-compatible SSE server")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--schedule-json", default="", help="a Schedule as JSON (other flags override it)")
    ap.add_argument("--first-event-ms", type=float)
    ap.add_argument("--prefill-ms", type=float)
    ap.add_argument("--prefill-per-token-ms", type=float)
    ap.add_argument("--itl-ms", type=float)
    ap.add_argument("--tokens", type=int)
    ap.add_argument("--reasoning-tokens", type=int)
    ap.add_argument("--burst", type=int)
    ap.add_argument("--status", type=int)
    ap.add_argument("--fault", choices=[*_STREAM_FAULTS, "close"])
    ap.add_argument("--fault-after", type=int)
    ap.add_argument(
        "--session-drift",
        type=float,
        default=0.0,
        help="an engine session's own speed: every delay x exp(N(0, SD)) drawn once at start (and a fresh "
        "jitter seed), as a real engine differs from one start to the next",
    )
    ap.add_argument(
        "--session-seed",
        default=None,
        help="draw the session's speed from this seed and the number of sessions started before it (counted "
        "in --session-counter): a reproducible sequence of engine sessions",
    )
    ap.add_argument("--session-counter", default=None, help="a file counting the sessions started")
    ap.add_argument("--speed", type=float, help="every delay x SPEED (1.3: 30 %% slower)")
    ap.add_argument("--jitter", type=float, help="per-request delay factor N(1, JITTER)")
    ap.add_argument(
        "--ignore-sigterm",
        action="store_true",
        help="keep serving on SIGTERM (an engine that does not stop when asked; SIGINT still stops it)",
    )
    a = ap.parse_args(argv)
    sched = Schedule.from_dict(json.loads(a.schedule_json)) if a.schedule_json else Schedule()
    over: dict[str, Any] = {}
    for flag, name, scale in (
        ("first_event_ms", "first_event_delay_s", 1e-3),
        ("prefill_ms", "prefill_s", 1e-3),
        ("prefill_per_token_ms", "prefill_per_token_s", 1e-3),
        ("itl_ms", "itl_s", 1e-3),
    ):
        v = getattr(a, flag)
        if v is not None:
            over[name] = v * scale
    for name in ("tokens", "reasoning_tokens", "burst", "status", "fault", "fault_after", "speed", "jitter"):
        v = getattr(a, name)
        if v is not None:
            over[name] = v
    if a.session_drift > 0:
        draw: random.Random = random.SystemRandom()
        if a.session_seed is not None and a.session_counter:
            counter = Path(a.session_counter)
            k = int(counter.read_text() or 0) if counter.exists() else 0
            counter.write_text(str(k + 1))
            draw = random.Random(f"{a.session_seed}:{k}")
        over["speed"] = over.get("speed", sched.speed) * math.exp(draw.gauss(0.0, a.session_drift))
        over["jitter_seed"] = draw.randrange(1 << 30)
    sched = sched.merged(over)

    async def run() -> None:
        srv = ScriptedServer(sched, host=a.host, port=a.port, exit_on_crash=True)
        await srv.start()
        print(f"READY {srv.port}", flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for s in (signal.SIGTERM, signal.SIGINT):
            if s == signal.SIGTERM and a.ignore_sigterm:
                loop.add_signal_handler(s, lambda: None)
            else:
                loop.add_signal_handler(s, stop.set)
        await stop.wait()
        await srv.stop()

    asyncio.run(run())
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
