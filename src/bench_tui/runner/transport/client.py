"""The measuring client: OpenAI-compatible streaming requests with every timing anchor recorded.

Stack choice, by measurement (``bench/client_ceiling.py``; scripted server in its own process, 2 shared cores,
CPython 3.11, no uvloop; full table in that script's docstring). Paced streams, 50 ms ITL, medians of 3:

    streams  stack     chunks per CPU-s   timestamp error median / p99 (ms)
    1024     raw              33-34k      0.03-0.04 / 1.1 (with lag.gc_quiet) .. 21 (without)
    1024     aiohttp          24-26k      0.09-0.56 / 22-37
    1024     httpx             1.3k       800 / 1700 (falls behind)
     256     raw               24-27k     0.04 / 1.6-2.1
     256     aiohttp           19-20k     0.4-0.5 / 5.6-6.1
     256     httpx              2.9k      5 / 441

The lean reader here (one
``asyncio.Protocol`` per keep-alive connection, HTTP/1.1 chunked decoding and SSE splitting done inside
``data_received`` by :class:`bench_tui.runner.transport.sse.ResponseParser`, JSON by msgspec) was the fastest and the
most accurate: it timestamps each socket read the moment the loop hands it over, with no stream-reader or
task wake-up in between, which is where aiohttp's and httpx's line iterators spend their time. Wrap a
point in ``bench_tui.runner.transport.lag.gc_quiet()`` to keep collector pauses out of the timestamps. The control
plane (health checks, /metrics, /tokenize) can keep using httpx; only the measuring path needs this.

Kernel receive timestamps (Linux, plain http): each connection is then a non-blocking socket read with
``recvmsg`` from a loop reader callback (:class:`_KConn`), with ``SO_TIMESTAMPNS`` on, and every read is
stamped with the time the kernel received its bytes (converted to the monotonic clock by
:class:`KernelClock`, whose docstring bounds the conversion error), not the time the event loop got round
to them. A blocked or busy loop then no longer moves the stamps (``bench/client_ceiling.py --vs-floor``,
tests/unit/test_client_kernel_clock.py); the record's ``clock`` says "kernel". Elsewhere (https, other
platforms, ``kernel_timestamps=False``) the asyncio.Protocol path and ``time.monotonic_ns()`` are used and
``clock`` is "monotonic". The receive delay of each kernel-stamped read (user-space time minus kernel time)
is the client's own lag, measured exactly: it feeds ``RequestRecord.loop_lag_ms`` / ``recv_delay_ms``.

Anchors (``time.monotonic_ns()``): ``t_send`` (request bytes handed to the socket; connection set-up and
waiting for a free connection are excluded), ``t_headers``, ``t_first_byte`` (first SSE event: the
role-only chunk, which some servers send before prefill and others with the first token: llama.cpp via
xllamacpp writes it in the same read as the first token, measured), ``t_first_token`` (first delta carrying
content, reasoning or tool-call text), ``t_first_content``, one :class:`~bench_tui.events.Chunk` per text-bearing event and channel,
``t_last_token``, ``t_done`` (``[DONE]`` or the end of the body).

Failures never raise: the record comes back with ``ok=False``, ``error_kind`` (connect | http | timeout |
stream | cancelled | stalled), ``http_status`` and an error text. ``cancelled`` is what :meth:`StreamClient.abort`
produces; cancelling the *calling task* still raises ``CancelledError`` (so task groups and timeouts keep
working), after the connection has been dropped.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import socket
import ssl
import struct
import sys
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import msgspec

from bench_tui.events import (
    Chunk,
    Event,
    RequestFirstToken,
    RequestProgress,
    RequestRecord,
    RequestStarted,
    ToolCall,
)
from bench_tui.runner.transport.lag import LoopLagMonitor
from bench_tui.runner.transport.sse import ProtocolError, ResponseParser

Emit = Callable[[Event], None]

PROGRESS_INTERVAL_NS = 250_000_000  # RequestProgress at most 4/s per request
FLUSH_NS = 250_000_000  # deferred parsing: at least this often per request
DISAGREEMENT = 0.10

_decode = msgspec.json.Decoder().decode
_encode = msgspec.json.Encoder().encode


# Typed views of a streamed chunk: decoding into Structs skips the fields we do not read (id, model, ...)
# and is markedly cheaper than building dicts. Leaf types stay Any so odd servers cannot fail validation.
class _TC(msgspec.Struct):
    index: Any = None
    id: Any = None
    function: Any = None


class _Delta(msgspec.Struct):
    content: Any = None
    reasoning_content: Any = None
    reasoning: Any = None
    tool_calls: list[_TC] | None = None


class _Choice(msgspec.Struct):
    delta: _Delta | None = None
    message: _Delta | None = None
    text: Any = None
    finish_reason: Any = None


class _Chunk(msgspec.Struct):
    choices: list[_Choice] | None = None
    usage: Any = None
    timings: Any = None
    error: Any = None


_decode_chunk = msgspec.json.Decoder(_Chunk).decode


# ------------------------------------------------------------------------------------------ kernel clock

# Python's socket module has no SO_TIMESTAMPNS; on Linux (asm-generic and x86) it is 35, and the control
# message it produces (SCM_TIMESTAMPNS, same number) carries a struct timespec of two native longs.
_SO_TIMESTAMPNS = 35
_TIMESPEC = struct.Struct("@ll")
_CMSG_SPACE = socket.CMSG_SPACE(_TIMESPEC.size)
_KERNEL_OK = sys.platform.startswith("linux") and os.uname().machine in (
    "x86_64",
    "i686",
    "i386",
    "aarch64",
    "armv7l",
    "armv6l",
    "riscv64",
    "s390x",
    "ppc64le",
    "ppc64",
)
READ_SIZE = 256 * 1024


class KernelClock:
    """Converts the kernel's receive timestamps (CLOCK_REALTIME) to ``time.monotonic_ns``.

    offset = realtime - monotonic, measured from the narrowest of 7 (monotonic, realtime, monotonic)
    brackets: the true offset lies within the bracket, so the conversion error is at most half its width
    (``error_ns``, typically well under 1 us here). Both clocks get the same NTP frequency corrections, so
    the offset moves only when the wall clock is *stepped*. It is re-measured every second on the read path
    (``REFRESH_NS``), and checked (one realtime/monotonic pair, ~0.1 us) on any read whose converted stamp
    lands after the moment user space saw the bytes or more than ``CHECK_NS`` before it: the signature of a
    step (forward: stamps late; backward: stamps early by the step, which corrupted inter-token latencies
    for up to a second before). When the check finds the offset moved by more than ``STEP_MIN_NS``, the
    conversion is re-anchored at once and the step is kept in ``steps`` (monotonic time seen, size ns), so a
    stamp is never early by more than ``CHECK_NS`` and the records streaming then are marked
    (``RequestRecord.clock_step_ms``). A converted time is never later than the user-space receive time
    (clamped). ``realtime_ns`` / ``monotonic_ns`` are the clock sources (tests inject a stepping one).
    """

    REFRESH_NS = 1_000_000_000
    CHECK_NS = 1_000_000
    STEP_MIN_NS = 100_000
    KEEP_STEPS = 64

    __slots__ = ("offset_ns", "error_ns", "steps", "_next", "_real", "_mono")

    def __init__(
        self,
        realtime_ns: Callable[[], int] = time.time_ns,
        monotonic_ns: Callable[[], int] = time.monotonic_ns,
    ) -> None:
        self._real = realtime_ns
        self._mono = monotonic_ns
        self.offset_ns = 0
        self.error_ns = 0
        self.steps: list[tuple[int, int]] = []
        self._next = 0
        self.refresh(first=True)

    def refresh(self, *, first: bool = False) -> None:
        best = None
        mono, real = self._mono, self._real
        for _ in range(7):
            m0 = mono()
            r = real()
            m1 = mono()
            if best is None or m1 - m0 < best[0]:
                best = (m1 - m0, r - (m0 + m1) // 2)
        assert best is not None
        error = (best[0] + 1) // 2
        moved = best[1] - self.offset_ns
        if not first and abs(moved) > self.STEP_MIN_NS + error + self.error_ns:
            self.steps.append((mono(), moved))
            del self.steps[: -self.KEEP_STEPS]
        self.error_ns = error
        self.offset_ns = best[1]
        self._next = mono() + self.REFRESH_NS

    def to_mono(self, real_ns: int, seen_ns: int) -> int:
        """The monotonic time of a kernel stamp, given when user space saw the bytes (``seen_ns``)."""
        if seen_ns >= self._next:
            self.refresh()
        t = real_ns - self.offset_ns
        if t > seen_ns or seen_ns - t > self.CHECK_NS:
            m = self._mono()
            if abs(self._real() - m - self.offset_ns) > self.STEP_MIN_NS:  # moved (or preempted): measure
                self.refresh()
                t = real_ns - self.offset_ns
        return min(t, seen_ns)

    def step_between(self, t0_ns: int, t1_ns: int | None) -> int:
        """The largest wall-clock step (ns, signed) detected between two monotonic times (0: none)."""
        hit = [size for at, size in self.steps if at >= t0_ns and (t1_ns is None or at <= t1_ns)]
        return max(hit, key=abs, default=0)


async def kernel_stamps_on() -> socket.socket | None:
    """Switch the kernel's receive timestamping on and keep it on while the returned socket is open.

    Linux stamps packets on arrival only while some socket asks for it, and the first request turns the
    switch on through a deferred work item: TCP segments that arrive before it runs carry no stamp at all.
    So a client opens this loopback UDP socket with SO_TIMESTAMPNS first and waits until a datagram to
    itself was stamped *on arrival*. A UDP read alone proves nothing: when a datagram arrived unstamped the
    kernel stamps it at ``recvmsg`` time instead. So each probe sits in the queue for a few ms first, and
    only a stamp at least that much older than the read counts (a read-time stamp is microseconds old).
    Usually the first probe passes; the wait is capped at 2 s on a loaded machine, after which the socket is
    kept anyway (the switch is still coming) and reads that arrive unstamped are timed in user space, the
    record then saying "mixed". None where the platform has no kernel stamps. The waits are loop sleeps and
    the socket is non-blocking: other tasks (a running point's streams) go on meanwhile.
    """
    if not _KERNEL_OK:
        return None
    try:
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    except OSError:
        return None
    try:
        u.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
        u.bind(("127.0.0.1", 0))
        u.setblocking(False)
        addr = u.getsockname()
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            u.sendto(b".", addr)
            await asyncio.sleep(_PROBE_WAIT_S)
            try:
                _data, anc, _f, _a = u.recvmsg(16, _CMSG_SPACE)
            except (BlockingIOError, InterruptedError):
                continue  # not there yet (loopback delivers at once; a busy box may not)
            now = time.time_ns()
            for level, kind, cdata in anc:
                if level == socket.SOL_SOCKET and kind == _SO_TIMESTAMPNS and len(cdata) >= _TIMESPEC.size:
                    sec, nsec = _TIMESPEC.unpack_from(cdata)
                    if now - (sec * 1_000_000_000 + nsec) >= _PROBE_WAIT_S * 1e9 / 2:
                        return u  # stamped when it arrived: the switch is on
        return u
    except OSError:
        pass
    u.close()
    return None


_PROBE_WAIT_S = 0.003  # how long a probe datagram waits before it is read (see kernel_stamps_on)


PREPARE_NS = 20_000_000  # a scheduled request takes its connection this long before its send time


def _resolve(fut: asyncio.Future[Any], value: Any) -> None:
    if not fut.done():
        fut.set_result(value)


def _text_of(v: Any) -> str:
    """Content given as a list of parts (some servers) or another JSON value."""
    if isinstance(v, list):
        return "".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in v)
    return str(v)


class _Conn(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection; hands every read (with its receive time) to the exchange."""

    __slots__ = ("transport", "exchange", "closed", "uses")

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.exchange: _Exchange | None = None
        self.closed = False
        self.uses = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        t = time.monotonic_ns()
        ex = self.exchange
        if ex is None:  # nothing asked: the peer is confused; drop the connection
            self.close()
            return
        ex.data(data, t)

    def eof_received(self) -> bool | None:
        return None  # close the transport; connection_lost follows

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        ex = self.exchange
        if ex is not None:
            ex.lost(exc, time.monotonic_ns())

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.abort()

    def write(self, data: bytes) -> None:
        assert self.transport is not None
        self.transport.write(data)


class _KConn:
    """One keep-alive plain-TCP connection read with ``recvmsg`` from a loop reader callback, so every read
    comes with the kernel's receive timestamp (``SO_TIMESTAMPNS``): when the bytes reached the socket, not
    when the event loop got round to them. asyncio's transports read with ``recv`` and drop ancillary data,
    which is why this is written by hand; the HTTP/SSE parsing is the same :class:`ResponseParser`.

    For TCP the kernel reports the stamp of the last segment a read consumed. When the loop falls behind
    and several events wait in the socket, one read takes them all and they share that (latest) stamp; the
    kernel also merges queued segments and keeps the newest stamp. So a stall never makes a stamp later
    than the last byte's arrival, and an event alone in its read (the normal case) is exact.
    """

    __slots__ = ("sock", "fd", "loop", "clock", "exchange", "closed", "uses", "_out")

    def __init__(self, sock: socket.socket, loop: asyncio.AbstractEventLoop, clock: KernelClock) -> None:
        self.sock = sock
        self.fd = sock.fileno()
        self.loop = loop
        self.clock = clock
        self.exchange: _Exchange | None = None
        self.closed = False
        self.uses = 0
        self._out = b""
        loop.add_reader(self.fd, self._readable)

    def _readable(self) -> None:
        try:
            data, anc, _flags, _addr = self.sock.recvmsg(READ_SIZE, _CMSG_SPACE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._lost(exc, time.monotonic_ns())
            return
        seen = time.monotonic_ns()
        if not data:
            self._lost(None, seen)
            return
        ex = self.exchange
        if ex is None:  # nothing asked: the peer is confused; drop the connection
            self.close()
            return
        for level, kind, cdata in anc:
            if level == socket.SOL_SOCKET and kind == _SO_TIMESTAMPNS and len(cdata) >= _TIMESPEC.size:
                sec, nsec = _TIMESPEC.unpack_from(cdata)
                t = self.clock.to_mono(sec * 1_000_000_000 + nsec, seen)
                delay = seen - t
                if delay > ex.delay_max:
                    ex.delay_max = delay
                ex.delay_sum += delay
                ex.reads += 1
                break
        else:
            t = seen
            ex.unstamped += 1
        if not ex.deferring:
            ex.data(data, t)
            p = ex.parser
            if (
                ex.rec.t_first_token_ns is not None
                and not ex.finished
                and p.sse
                and "chunked" in p.headers.get("transfer-encoding", "").lower()
            ):
                ex.deferring = True
                ex.flushed_at = seen
            return
        ex.pending.append((data, t))
        end = (ex.tail + data[-4:])[-4:] if len(data) < 4 else data[-4:]
        ex.tail = end
        if end == b"\r\n\r\n" or seen - ex.flushed_at >= FLUSH_NS:  # the chunked body's end, or time
            ex.flushed_at = seen
            ex.flush()

    def write(self, data: bytes) -> None:
        if self.closed:
            return
        if self._out:
            self._out += data
            return
        try:
            n = self.sock.send(data)
        except (BlockingIOError, InterruptedError):
            n = 0
        except OSError as exc:
            self.loop.call_soon(self._lost, exc, time.monotonic_ns())
            return
        if n < len(data):
            self._out = data[n:]
            self.loop.add_writer(self.fd, self._writable)

    def _writable(self) -> None:
        try:
            n = self.sock.send(self._out)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._lost(exc, time.monotonic_ns())
            return
        self._out = self._out[n:]
        if not self._out:
            self.loop.remove_writer(self.fd)

    def _lost(self, exc: Exception | None, t: int) -> None:
        if self.closed and self.exchange is None:
            return
        self.close()
        ex = self.exchange
        if ex is not None:
            ex.lost(exc, t)

    def close(self) -> None:
        if self.fd >= 0:
            self.loop.remove_reader(self.fd)
            if self._out:
                self.loop.remove_writer(self.fd)
            self.fd = -1
            self.sock.close()
        self.closed = True


class _Exchange:
    """One request/response on a connection: parses the stream and fills the RequestRecord."""

    def __init__(
        self,
        rec: RequestRecord,
        conn: _Conn | _KConn,
        *,
        chat: bool,
        emit: Emit | None,
        fut: asyncio.Future[None],
    ) -> None:
        self.rec = rec
        self.conn = conn
        self.chat = chat
        self.emit = emit
        self.fut = fut
        self.parser = ResponseParser(self._on_event, self._on_headers, self._on_complete)
        self.got_bytes = False
        self.finished = False
        self.done_seen = False
        self.retry = False  # a reused keep-alive connection died before answering: try a fresh one
        self._t = 0
        self._content: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[int, ToolCall] = {}
        self._n = {"content": 0, "reasoning": 0, "tool": 0, "text": 0}
        self._last_progress = 0
        self._usage_completion: int | None = None  # running completion_tokens from continuous usage
        self._ct: list[int] = []  # chunk receive times
        self._ck: list[int] = []  # tokens per chunk
        self._cc: list[str] = []  # channel per chunk
        self.reads = 0  # reads with a kernel stamp: their count, summed and worst receive delay (ns)
        self.delay_sum = 0
        self.delay_max = 0
        self.unstamped = 0  # reads without one (user-space clock)
        # deferred parsing (kernel stamps only): once the first token is in, reads of a chunked SSE body are
        # kept with their stamps and parsed in batches (at the body's end, every FLUSH_NS, or before the
        # exchange ends any other way); a stamp does not age, so this costs no accuracy, only the live
        # progress events come up to FLUSH_NS later
        self.deferring = False
        self.pending: list[tuple[bytes, int]] = []
        self.flushed_at = 0
        self.tail = b""

    # ------------------------------------------------------------------------------------------ events

    def _emit(self, ev: Event) -> None:
        if self.emit is None:
            return
        try:
            self.emit(ev)
        except Exception:  # noqa: BLE001 - a broken subscriber must not turn into a failed measurement
            self.emit = None

    def data(self, data: bytes, t: int) -> None:
        if self.finished:
            return
        self.got_bytes = True
        self._t = t
        try:
            self.parser.feed(data, t)
        except ProtocolError as exc:
            self.fail("stream", f"bad HTTP response: {exc}", t)
        except Exception as exc:  # noqa: BLE001 - whatever the peer sent, the caller gets a record
            self.fail("stream", f"could not parse the stream: {type(exc).__name__}: {exc}", t)

    def flush(self) -> None:
        pend = self.pending
        if pend:
            self.pending = []
            for data, t in pend:
                self.data(data, t)

    def lost(self, exc: Exception | None, t: int) -> None:
        if self.pending:
            self.flush()
        if self.finished:
            return
        if self.parser.eof(t) or self.finished:
            return
        if self.done_seen:  # everything arrived; only the chunked terminator is missing
            self._success(t)
            return
        if not self.got_bytes and self.conn.uses > 1:
            self.retry = True
            self.finished = True
            if not self.fut.done():
                self.fut.set_result(None)
            return
        where = (
            "before the response"
            if not self.got_bytes
            else ("mid-stream" if self.rec.t_first_byte_ns is not None else "during the response")
        )
        detail = f": {exc}" if exc else ""
        self.fail("stream", f"connection closed {where}{detail}", t)

    def _on_headers(self, status: int, headers: dict[str, str]) -> None:
        self.rec.t_headers_ns = self._t
        self.rec.http_status = status

    def _on_complete(self, t: int) -> None:
        if self.finished:
            return
        p = self.parser
        if p.status != 200:
            self.fail("http", f"HTTP {p.status}: {_error_excerpt(bytes(p.body)) or p.reason}", t)
        elif not p.sse:
            self._non_stream(bytes(p.body), t)
        elif self.done_seen or self.rec.finish_reason:
            self._success(t)
        else:
            self.fail("stream", "stream ended without [DONE] or a finish_reason", t)

    def _on_event(self, payload: bytes, t: int) -> None:
        if self.finished:
            return
        rec = self.rec
        if rec.t_first_byte_ns is None:
            rec.t_first_byte_ns = t
        if payload == b"[DONE]":
            self.done_seen = True
            rec.t_done_ns = t
            return
        obj: _Chunk
        try:
            obj = _decode_chunk(payload)
        except msgspec.ValidationError:
            # valid JSON of another shape; only an error object matters then
            try:
                generic = _decode(payload)
            except msgspec.DecodeError:
                generic = None
            if not (isinstance(generic, dict) and generic.get("error")):
                return
            obj = _Chunk(error=generic["error"])
        except msgspec.DecodeError:
            self.fail("stream", f"malformed SSE data: {payload[:200].decode('utf-8', 'replace')}", t)
            self.conn.close()
            return
        err = obj.error
        if err and not obj.choices:
            msg = err.get("message", err) if isinstance(err, dict) else err
            self.fail("stream", f"error event in stream: {str(msg)[:300]}", t)
            self.conn.close()
            return
        if obj.timings is not None and isinstance(obj.timings, dict):
            rec.timings = {
                k: float(v)
                for k, v in obj.timings.items()
                if isinstance(v, int | float) and not isinstance(v, bool)
            }
        choices = obj.choices
        multi: int | None = None
        usage = obj.usage
        if usage is not None and isinstance(usage, dict):
            self._usage(usage)
            ct = usage.get("completion_tokens")
            if choices and isinstance(ct, int):  # continuous usage stats: the delta is this chunk's count
                prev = self._usage_completion
                self._usage_completion = ct
                multi = ct - (prev or 0)
        if not choices:
            return
        got: list[str] = []
        for ch in choices:
            if ch.finish_reason:
                rec.finish_reason = str(ch.finish_reason)
            if self.chat:
                d = ch.delta or ch.message
                if d is None:
                    continue
                c = d.content
                if c:
                    self._content.append(c if isinstance(c, str) else _text_of(c))
                    got.append("content")
                r = d.reasoning_content or d.reasoning
                if r:
                    self._reasoning.append(r if isinstance(r, str) else _text_of(r))
                    got.append("reasoning")
                if d.tool_calls and self._tools(d.tool_calls):
                    got.append("tool")
            else:
                text = ch.text
                if text:
                    self._content.append(text if isinstance(text, str) else _text_of(text))
                    got.append("text")
        if not got:
            return
        if rec.t_first_token_ns is None:
            rec.t_first_token_ns = t
            self._emit(
                RequestFirstToken(
                    point_id=rec.point_id,
                    request_id=rec.request_id,
                    ttft_ms=(t - rec.t_send_ns) / 1e6,
                    ttfb_ms=(rec.t_first_byte_ns - rec.t_send_ns) / 1e6,
                    channel=got[0],
                )
            )
        if rec.t_first_content_ns is None and ("content" in got or "text" in got):
            rec.t_first_content_ns = t
        rec.t_last_token_ns = t
        if len(got) == 1:
            channel = got[0]
            k = multi if multi is not None and multi > 0 else 1
            self._ct.append(t)
            self._ck.append(k)
            self._cc.append(channel)
            self._n[channel] += k
        else:
            for i, channel in enumerate(dict.fromkeys(got)):
                # several channels in one event: the known multi-token count goes to the first
                k = multi if (multi is not None and multi > 0 and i == 0) else 1
                self._ct.append(t)
                self._ck.append(k)
                self._cc.append(channel)
                self._n[channel] += k
        if self.emit is not None and t - self._last_progress >= PROGRESS_INTERVAL_NS:
            self._last_progress = t
            n = self._n
            self._emit(
                RequestProgress(
                    point_id=rec.point_id,
                    request_id=rec.request_id,
                    tokens=n["content"] + n["reasoning"] + n["tool"] + n["text"],
                    reasoning_tokens=n["reasoning"],
                    content_tokens=n["content"] + n["text"],
                    tool_tokens=n["tool"],
                    elapsed_ms=(t - rec.t_send_ns) / 1e6,
                )
            )

    def _tools(self, tcs: Any) -> bool:
        text = False
        for tc in tcs if isinstance(tcs, list) else ():
            if isinstance(tc, dict):
                tc = _TC(index=tc.get("index"), id=tc.get("id"), function=tc.get("function"))
            if not isinstance(tc, _TC):
                continue
            idx = tc.index if isinstance(tc.index, int) else len(self._calls)
            call = self._calls.get(idx)
            if call is None:
                call = self._calls[idx] = ToolCall(index=idx)
            if tc.id:
                call.id = str(tc.id)
            fn = tc.function if isinstance(tc.function, dict) else {}
            name = fn.get("name")
            if name:
                text = True
                if not call.name:
                    call.name = str(name)
                elif name != call.name:
                    call.name += str(name)
            args = fn.get("arguments")
            if args:
                text = True
                call.arguments += args if isinstance(args, str) else _encode(args).decode()
        return text

    def _usage(self, usage: dict[str, Any]) -> None:
        rec = self.rec
        if isinstance(usage.get("prompt_tokens"), int):
            rec.prompt_tokens = usage["prompt_tokens"]
        if isinstance(usage.get("completion_tokens"), int):
            rec.output_tokens = usage["completion_tokens"]
            rec.token_source = "usage"
        det = usage.get("prompt_tokens_details")
        if isinstance(det, dict) and isinstance(det.get("cached_tokens"), int):
            rec.cached_tokens = det["cached_tokens"]

    def _non_stream(self, body: bytes, t: int) -> None:
        """A 200 with a plain JSON body (the server ignored ``stream``): one chunk at the end."""
        try:
            obj = _decode(body)
            ch = (obj.get("choices") or [{}])[0]
            text = (ch.get("message") or {}).get("content") if self.chat else ch.get("text")
        except (msgspec.DecodeError, AttributeError, IndexError, TypeError):
            self.fail("stream", f"expected SSE, got: {body[:200].decode('utf-8', 'replace')}", t)
            return
        rec = self.rec
        if isinstance(obj.get("usage"), dict):
            self._usage(obj["usage"])
        rec.finish_reason = ch.get("finish_reason")
        if self.chat:
            msg = ch.get("message") or {}
            r = msg.get("reasoning_content") or msg.get("reasoning")
            if r:
                self._reasoning.append(r)
            if msg.get("tool_calls"):
                self._tools(msg["tool_calls"])
        if text:
            self._content.append(text)
        rec.t_first_byte_ns = rec.t_first_token_ns = rec.t_last_token_ns = t
        if text:
            rec.t_first_content_ns = t
        self._ct.append(t)
        self._ck.append(rec.output_tokens or 1)
        self._cc.append("content" if self.chat else "text")
        self._success(t)

    # ------------------------------------------------------------------------------------------ endings

    def _close_out(self) -> None:
        rec = self.rec
        rec.content = "".join(self._content)
        rec.reasoning = "".join(self._reasoning)
        if self._calls:
            rec.tool_calls = [self._calls[i] for i in sorted(self._calls)]
        # chunks are kept as plain int/str lists while streaming (no GC-tracked object per chunk, which
        # keeps collector pauses out of the timestamps) and become Chunk structs once, here
        rec.chunks = [Chunk(t, k, c) for t, k, c in zip(self._ct, self._ck, self._cc, strict=True)]  # type: ignore[arg-type]
        rec.client_output_tokens = sum(self._ck)
        t = rec.timings
        if rec.token_source != "usage" and t.get("predicted_n") is not None:
            rec.output_tokens = int(t["predicted_n"])
            rec.token_source = "timings"
        if rec.prompt_tokens is None and t.get("prompt_n") is not None:
            rec.prompt_tokens = int(t["prompt_n"] + t.get("cache_n", 0))
        if rec.cached_tokens is None and t.get("cache_n") is not None:
            rec.cached_tokens = int(t["cache_n"])
        if rec.token_source == "none" and rec.client_output_tokens:
            rec.output_tokens = rec.client_output_tokens
            rec.token_source = "client"
        if rec.token_source in ("usage", "timings") and rec.output_tokens is not None:
            ref = max(rec.output_tokens, 1)
            rec.token_disagreement = abs(rec.output_tokens - rec.client_output_tokens) / ref > DISAGREEMENT

    def _success(self, t: int) -> None:
        if self.finished:
            return
        self.finished = True
        rec = self.rec
        rec.ok = True
        if rec.t_done_ns is None:
            rec.t_done_ns = t
        self._close_out()
        if not self.fut.done():
            self.fut.set_result(None)

    def fail(self, kind: str, message: str, t: int | None = None) -> None:
        if self.pending:  # what already arrived counts (its stamps say when), and may finish the exchange
            self.flush()
        if self.finished:
            return
        self.finished = True
        rec = self.rec
        rec.ok = False
        rec.error_kind = kind
        rec.error = message
        rec.t_done_ns = t if t is not None else time.monotonic_ns()
        self._close_out()
        if kind != "http" or not self.parser.complete or not self.parser.keep_alive:
            self.conn.close()
        if not self.fut.done():
            self.fut.set_result(None)


def _error_excerpt(body: bytes) -> str:
    text = body[:2000].decode("utf-8", "replace").strip()
    try:
        obj = _decode(body)
        err = obj.get("error", obj) if isinstance(obj, dict) else obj
        if isinstance(err, dict):
            return str(err.get("message") or err.get("detail") or err)[:300]
        if isinstance(obj, dict) and obj.get("detail"):
            return str(obj["detail"])[:300]
        return str(err)[:300]
    except (msgspec.DecodeError, AttributeError):
        return text[:300]


class StreamClient:
    """Async context manager; one instance per engine endpoint and event loop.

    ``max_connections`` bounds concurrent requests (extra callers wait for a connection, and that wait is
    not part of any latency); set it to at least the concurrency you measure. ``timeout`` is per request,
    from ``t_send`` to the end of the response. ``lag_monitor``: True starts a
    :class:`~bench_tui.runner.transport.lag.LoopLagMonitor` for the client's life (``client.lag``), or pass your own,
    or None; each record gets the worst lag seen while it streamed.

    ``kernel_timestamps``: None (default) reads plain-HTTP connections with the kernel's receive timestamps
    where the platform has them (Linux), False forces the user-space clock (``time.monotonic_ns`` when the
    loop hands over a read), True is the same as None. Each record says which clock stamped it
    (``RequestRecord.clock``: "kernel" or "monotonic"); https always uses the user-space clock.

    ``send_at_ns`` (``chat`` / ``completions``, a ``time.monotonic_ns()`` time): an open loop's planned send
    time. The request waits on a loop timer (never blocking), takes its connection ``PREPARE_NS`` before the
    time (RequestStarted is emitted then, not at the call), and writes at the time, or at once when it is
    already past; ``RequestRecord.t_scheduled_ns`` keeps the plan, so lateness is ``t_send - t_scheduled``.
    :meth:`abort` also ends requests still waiting for their time.
    """

    def __init__(
        self,
        base_url: str,
        headers: dict[str, str] | None = None,
        *,
        max_connections: int = 256,
        timeout: float = 600.0,
        connect_timeout: float = 30.0,
        lag_monitor: LoopLagMonitor | bool | None = True,
        kernel_timestamps: bool | None = None,
    ) -> None:
        u = urlsplit(base_url.rstrip("/"))
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"base_url must be http(s)://host[:port][/prefix], got {base_url!r}")
        self.base_url = base_url
        self._https = u.scheme == "https"
        self._host = u.hostname
        self._port = u.port or (443 if self._https else 80)
        prefix = u.path.rstrip("/")
        self._chat_path = prefix + ("/chat/completions" if prefix.endswith("/v1") else "/v1/chat/completions")
        self._cmpl_path = prefix + ("/completions" if prefix.endswith("/v1") else "/v1/completions")
        host_hdr = self._host if u.port is None else f"{self._host}:{u.port}"
        extra = "".join(
            f"{k}: {v}\r\n"
            for k, v in (headers or {}).items()
            if k.lower() not in ("host", "content-length", "content-type", "connection")
        )
        self._head_tmpl = (
            f"POST {{path}} HTTP/1.1\r\nhost: {host_hdr}\r\ncontent-type: application/json\r\n"
            f"accept: text/event-stream\r\nuser-agent: bench-tui\r\n{extra}"
        )
        self.max_connections = max_connections
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self._idle: list[_Conn | _KConn] = []
        self._kernel = kernel_timestamps is not False and _KERNEL_OK and not self._https
        self._clock: KernelClock | None = None
        self._stamp_keeper: socket.socket | None = None
        self._active: set[_Exchange] = set()
        self._waiting: set[asyncio.Future[tuple[str, str] | None]] = set()
        self._sem: asyncio.Semaphore | None = None
        self._ssl: ssl.SSLContext | None = ssl.create_default_context() if self._https else None
        self._own_lag = lag_monitor is True
        self.lag: LoopLagMonitor | None = LoopLagMonitor() if lag_monitor is True else (lag_monitor or None)
        self._closed = False
        self._refused = ""
        self.retries = 0  # requests re-sent once because a kept-alive connection had gone stale

    async def __aenter__(self) -> StreamClient:
        self._sem = asyncio.Semaphore(self.max_connections)
        if self._kernel and self._stamp_keeper is None:
            self._stamp_keeper = await kernel_stamps_on()
            self._kernel = self._stamp_keeper is not None
        if self._own_lag and self.lag is not None:
            self.lag.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        self._closed = True
        self.abort("client closed")
        for c in self._idle:
            c.close()
        self._idle.clear()
        if self._stamp_keeper is not None:
            self._stamp_keeper.close()
            self._stamp_keeper = None
        if self._own_lag and self.lag is not None:
            await self.lag.stop()

    def abort(self, reason: str = "aborted", kind: str = "cancelled") -> None:
        """Finish every in-flight request now with ``error_kind`` ``kind`` (they return, not raise)."""
        for ex in list(self._active):
            ex.fail(kind, reason)
        for fut in list(self._waiting):  # requests still waiting for their scheduled send time
            _resolve(fut, (kind, reason))

    def refuse_new(self, reason: str) -> None:
        """From now on, requests return at once as ``cancelled`` with ``reason`` (the point has ended)."""
        self._refused = reason

    async def chat(
        self,
        payload: dict[str, Any],
        *,
        request_id: str,
        point_id: str,
        emit: Emit | None = None,
        send_at_ns: int | None = None,
    ) -> RequestRecord:
        return await self._request(self._chat_path, True, payload, request_id, point_id, emit, send_at_ns)

    async def completions(
        self,
        payload: dict[str, Any],
        *,
        request_id: str,
        point_id: str,
        emit: Emit | None = None,
        send_at_ns: int | None = None,
    ) -> RequestRecord:
        return await self._request(self._cmpl_path, False, payload, request_id, point_id, emit, send_at_ns)

    async def _wait_until(self, t_ns: int) -> tuple[str, str] | None:
        """Sleep (a loop timer, never blocking) until monotonic ``t_ns``; (kind, reason) when aborted first."""
        loop = asyncio.get_running_loop()
        # the loop's float-seconds clock can fire a hair (< 1 us) before t_ns: then wait the rest too
        while (delay := t_ns - time.monotonic_ns()) > 0:
            fut: asyncio.Future[tuple[str, str] | None] = loop.create_future()
            handle = loop.call_at(loop.time() + delay / 1e9, _resolve, fut, None)
            self._waiting.add(fut)
            try:
                why = await fut
            finally:
                handle.cancel()
                self._waiting.discard(fut)
            if why is not None:
                return why
        return None

    # ------------------------------------------------------------------------------------------ plumbing

    async def _connect(self) -> _Conn | _KConn:
        loop = asyncio.get_running_loop()
        if self._kernel:
            return await asyncio.wait_for(
                self._connect_kernel(loop), timeout=min(self.connect_timeout, self.timeout)
            )
        _, proto = await asyncio.wait_for(
            loop.create_connection(
                _Conn,
                self._host,
                self._port,
                ssl=self._ssl,
                server_hostname=self._host if self._ssl else None,
            ),
            timeout=min(self.connect_timeout, self.timeout),
        )
        return proto

    async def _connect_kernel(self, loop: asyncio.AbstractEventLoop) -> _Conn | _KConn:
        """A non-blocking socket with SO_TIMESTAMPNS on; the first address that accepts wins."""
        try:  # an address literal needs no resolver thread (the asyncio transports skip it the same way)
            ip = ipaddress.ip_address(self._host)
            fam = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
            infos: list[tuple[Any, ...]] = [
                (fam, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (self._host, self._port))
            ]
        except ValueError:
            infos = list(await loop.getaddrinfo(self._host, self._port, type=socket.SOCK_STREAM))
        err: OSError | None = None
        for family, type_, proto, _canon, addr in infos:
            sock = socket.socket(family, type_, proto)
            try:
                sock.setblocking(False)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                try:
                    sock.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
                except OSError:  # the kernel refuses: this client falls back to the user-space clock
                    sock.close()
                    self._kernel = False
                    break
                await loop.sock_connect(sock, addr)
            except OSError as exc:
                sock.close()
                err = exc
                continue
            except BaseException:
                sock.close()
                raise
            if self._clock is None:
                self._clock = KernelClock()
                if self.lag is not None:
                    self.lag.fed()
            return _KConn(sock, loop, self._clock)
        if not self._kernel:
            return await self._connect()
        raise err or OSError(f"no address for {self._host}")

    async def _request(
        self,
        path: str,
        chat: bool,
        payload: dict[str, Any],
        request_id: str,
        point_id: str,
        emit: Emit | None,
        send_at_ns: int | None = None,
    ) -> RequestRecord:
        body = dict(payload)
        body["stream"] = True
        so = dict(body.get("stream_options") or {})
        so["include_usage"] = True
        body["stream_options"] = so
        raw = _encode(body)
        head = (
            self._head_tmpl.format(path=path) + f"x-request-id: {request_id}\r\n"
            f"content-length: {len(raw)}\r\n\r\n"
        ).encode("latin-1")
        rec = RequestRecord(
            request_id=request_id,
            point_id=point_id,
            endpoint="chat" if chat else "completions",
            t_scheduled_ns=send_at_ns,
        )
        if send_at_ns is not None and not (self._closed or self._refused):
            # an open loop's request: it starts (and the stall clock with it) shortly before its time
            why = await self._wait_until(send_at_ns - PREPARE_NS)
            if why is not None:
                rec.error_kind, rec.error = why
                return rec
        if emit is not None:
            mt = payload.get("max_tokens") or payload.get("max_completion_tokens")
            try:
                emit(
                    RequestStarted(
                        point_id=point_id,
                        request_id=request_id,
                        max_tokens=mt if isinstance(mt, int) else None,
                    )
                )
            except Exception:  # noqa: BLE001
                emit = None
        if self._closed or self._refused:
            rec.error_kind, rec.error = "cancelled", self._refused or "client closed"
            return rec
        if self._sem is None:
            self._sem = asyncio.Semaphore(self.max_connections)
        async with self._sem:
            for _attempt in range(2):
                conn: _Conn | _KConn | None = None
                while self._idle:
                    c = self._idle.pop()
                    if not c.closed:
                        conn = c
                        break
                if conn is None:
                    try:
                        conn = await self._connect()
                    except TimeoutError:
                        rec.t_send_ns = rec.t_send_ns or time.monotonic_ns()
                        rec.error_kind = "connect"
                        rec.error = f"connect to {self._host}:{self._port} timed out"
                        return rec
                    except (OSError, ssl.SSLError) as exc:
                        rec.t_send_ns = rec.t_send_ns or time.monotonic_ns()
                        rec.error_kind = "connect"
                        rec.error = f"cannot connect to {self._host}:{self._port}: {exc.strerror or exc}"
                        return rec
                if send_at_ns is not None and _attempt == 0:
                    why = await self._wait_until(send_at_ns)  # connected ahead: only the write is left
                    if why is not None:
                        self._idle.append(conn)
                        rec.error_kind, rec.error = why
                        return rec
                conn.uses += 1
                rec, retry = await self._exchange(conn, rec, chat, head + raw, emit)
                if not retry:
                    break
                self.retries += 1
            return rec

    async def _exchange(
        self, conn: _Conn | _KConn, rec: RequestRecord, chat: bool, data: bytes, emit: Emit | None
    ) -> tuple[RequestRecord, bool]:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        fresh = RequestRecord(
            request_id=rec.request_id,
            point_id=rec.point_id,
            endpoint=rec.endpoint,
            t_scheduled_ns=rec.t_scheduled_ns,
        )
        ex = _Exchange(fresh, conn, chat=chat, emit=emit, fut=fut)
        conn.exchange = ex
        self._active.add(ex)
        fresh.t_send_ns = time.monotonic_ns()
        conn.write(data)
        timer = loop.call_later(
            self.timeout, lambda: ex.fail("timeout", f"no complete response within {self.timeout:g}s")
        )
        try:
            await fut
        except asyncio.CancelledError:
            ex.fail("cancelled", "caller cancelled")
            raise
        finally:
            timer.cancel()
            self._active.discard(ex)
            conn.exchange = None
        if ex.retry:  # a stale keep-alive connection: the caller tries once more on a fresh one
            conn.close()
            return fresh, True
        p = ex.parser
        if not conn.closed and p.complete and p.keep_alive and not self._closed:
            self._idle.append(conn)
        else:
            conn.close()
        if ex.reads:
            # kernel stamps: the receive delay of each read is the client's own lag, measured exactly
            fresh.clock = "mixed" if ex.unstamped else "kernel"
            if self._clock is not None and self._clock.steps:
                fresh.clock_step_ms = self._clock.step_between(fresh.t_send_ns, fresh.t_done_ns) / 1e6
            fresh.loop_lag_ms = ex.delay_max / 1e6
            fresh.recv_delay_ms = ex.delay_sum / ex.reads / 1e6
        if self.lag is not None:
            fresh.loop_lag_ms = max(fresh.loop_lag_ms, self.lag.max_between(fresh.t_send_ns, fresh.t_done_ns))
            if not ex.reads:
                fresh.recv_delay_ms = self.lag.mean_between(fresh.t_send_ns, fresh.t_done_ns)
        return fresh, False
