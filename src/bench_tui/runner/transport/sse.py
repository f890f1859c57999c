"""Incremental HTTP/1.1 response parsing for the measuring client: status line, headers, body framing
(chunked, content-length, or until close) and Server-Sent-Events splitting, in one pass over each read.

Kept free of asyncio so it is easy to test by feeding bytes split anywhere. The caller passes each socket
read and its receive time; every SSE ``data`` payload comes back through ``on_event(payload, t_ns)`` with the
time of the read that completed it.
"""

from __future__ import annotations

from collections.abc import Callable

_HEAD, _SIZE, _DATA, _CRLF, _TRAILER, _LENGTH, _CLOSE, _DONE = range(8)
MAX_HEAD = 64 * 1024
MAX_ERROR_BODY = 64 * 1024
# One SSE event (one streamed delta) of an OpenAI-style stream is a few hundred bytes; an event this large
# is a broken or hostile server, and taking it as one token would be a lie (and its buffer unbounded).
MAX_EVENT = 1024 * 1024


class ProtocolError(Exception):
    """The peer sent something that is not HTTP/1.1 as we understand it."""


class ResponseParser:
    """Feed raw bytes; get ``on_headers(status, headers)``, ``on_event(data, t_ns)`` (SSE bodies) and
    ``on_complete(t_ns)``. Non-SSE bodies are collected in ``body`` (bounded)."""

    __slots__ = (
        "_buf",
        "_state",
        "_left",
        "_sse",
        "status",
        "headers",
        "body",
        "sse",
        "keep_alive",
        "on_headers",
        "on_event",
        "on_complete",
        "complete",
        "reason",
    )

    def __init__(
        self,
        on_event: Callable[[bytes, int], None],
        on_headers: Callable[[int, dict[str, str]], None] | None = None,
        on_complete: Callable[[int], None] | None = None,
    ) -> None:
        self._buf = bytearray()
        self._state = _HEAD
        self._left = 0
        self._sse = bytearray()
        self.status = 0
        self.reason = ""
        self.headers: dict[str, str] = {}
        self.body = bytearray()
        self.sse = False
        self.keep_alive = True
        self.complete = False
        self.on_event = on_event
        self.on_headers = on_headers
        self.on_complete = on_complete

    # ------------------------------------------------------------------------------------------ entry points

    def feed(self, data: bytes, t_ns: int) -> None:
        if self._state == _SIZE and self.sse and not self._buf and not self._sse:
            data = self._fast(data, t_ns)
            if not data:
                return
        self._buf += data
        self._run(t_ns)

    def _fast(self, data: bytes, t_ns: int) -> bytes:
        """The common case, one read = whole chunks each holding whole SSE events: no copies, no state
        machine. Returns the part it did not take (handed to the general path)."""
        pos = 0
        n = len(data)
        on_event = self.on_event
        while pos < n:
            i = data.find(b"\r\n", pos)
            if i < 0:
                break
            try:
                size = int(data[pos:i], 16)
            except ValueError:
                break
            start = i + 2
            end = start + size
            if size == 0 or end + 2 > n:
                break
            payload = data[start:end]
            if not payload.endswith(b"\n\n") or b"\r" in payload:
                break
            if size > MAX_EVENT:
                break  # the general path refuses it
            if payload.startswith(b"data: ") and payload.count(b"\n") == 2:
                on_event(payload[6:-2], t_ns)
            else:
                self._sse += payload
                self._flush_sse(t_ns)
            pos = end + 2
        return data[pos:] if pos else data

    def eof(self, t_ns: int) -> bool:
        """The peer closed. True when that ends a close-delimited body (a complete response)."""
        if self._state == _CLOSE:
            self._flush_sse(t_ns, final=True)
            self._finish(t_ns)
            return True
        return self.complete

    # ------------------------------------------------------------------------------------------ internals

    def _finish(self, t_ns: int) -> None:
        self._state = _DONE
        self.complete = True
        if self.on_complete is not None:
            self.on_complete(t_ns)

    def _body(self, piece: bytes | bytearray, t_ns: int) -> None:
        if self.sse:
            sse = self._sse
            start = len(sse) - 1
            sse += piece
            if sse.find(b"\n\n", start if start > 0 else 0) >= 0 or b"\r" in piece:
                self._flush_sse(t_ns)
            if len(self._sse) > MAX_EVENT:
                raise ProtocolError(
                    f"an SSE event larger than {MAX_EVENT // 1024} KiB (a broken or hostile server)"
                )
        elif len(self.body) < MAX_ERROR_BODY:
            self.body += piece[: MAX_ERROR_BODY - len(self.body)]

    def _flush_sse(self, t_ns: int, final: bool = False) -> None:
        buf = self._sse
        if b"\r" in buf:
            buf = bytearray(buf.replace(b"\r\n", b"\n").replace(b"\r", b"\n"))
        start = 0
        while True:
            end = buf.find(b"\n\n", start)
            if end < 0:
                break
            self._event(buf[start:end], t_ns)
            start = end + 2
        rest = buf[start:]
        if final and rest.strip():
            self._event(rest, t_ns)
            rest = bytearray()
        self._sse = bytearray(rest)

    def _event(self, block: bytes | bytearray, t_ns: int) -> None:
        if len(block) > MAX_EVENT:
            raise ProtocolError(
                f"an SSE event larger than {MAX_EVENT // 1024} KiB (a broken or hostile server)"
            )
        if block.startswith(b"data:") and b"\n" not in block:  # the usual single-line event
            d = block[5:]
            if d[:1] == b" ":
                d = d[1:]
            self.on_event(bytes(d), t_ns)
            return
        parts: list[bytes] = []
        for line in block.split(b"\n"):
            if line.startswith(b"data:"):
                d = line[5:]
                parts.append(bytes(d[1:] if d[:1] == b" " else d))
            # comments (":...") and event/id/retry fields carry nothing we measure
        if parts:
            self.on_event(b"\n".join(parts), t_ns)

    def _head(self, t_ns: int) -> bool:
        buf = self._buf
        end = buf.find(b"\r\n\r\n")
        if end < 0:
            if len(buf) > MAX_HEAD:
                raise ProtocolError("response headers too large")
            return False
        lines = bytes(buf[:end]).decode("latin-1").split("\r\n")
        del buf[: end + 4]
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/"):
            raise ProtocolError(f"not an HTTP response: {lines[0][:80]!r}")
        try:
            status = int(parts[1])
        except ValueError as exc:
            raise ProtocolError(f"bad status line: {lines[0][:80]!r}") from exc
        if 100 <= status < 200:  # 100 Continue and friends: another head follows
            return True
        self.status = status
        self.reason = parts[2] if len(parts) > 2 else ""
        h: dict[str, str] = {}
        for ln in lines[1:]:
            k, sep, v = ln.partition(":")
            if sep:
                h[k.strip().lower()] = v.strip()
        self.headers = h
        self.sse = status == 200 and h.get("content-type", "").startswith("text/event-stream")
        conn = h.get("connection", "").lower()
        self.keep_alive = parts[0] != "HTTP/1.0" and conn != "close"
        if "chunked" in h.get("transfer-encoding", "").lower():
            self._state = _SIZE
        elif "content-length" in h:
            try:
                self._left = int(h["content-length"])
            except ValueError as exc:
                raise ProtocolError("bad content-length") from exc
            self._state = _LENGTH
        else:
            self._state = _CLOSE
            self.keep_alive = False
        if self.on_headers is not None:
            self.on_headers(status, h)
        if self._state == _LENGTH and self._left == 0:
            self._finish(t_ns)
        return True

    def _run(self, t_ns: int) -> None:
        buf = self._buf
        pos = 0
        while True:
            st = self._state
            if st == _DATA:
                avail = len(buf) - pos
                if avail <= 0:
                    break
                if avail >= self._left:
                    take = self._left
                    self._body(buf[pos : pos + take], t_ns)
                    pos += take
                    self._left = 0
                    self._state = _CRLF
                else:
                    self._body(buf[pos:], t_ns)
                    self._left -= avail
                    pos = len(buf)
                    break
            elif st == _CRLF:
                if len(buf) - pos < 2:
                    break
                pos += 2
                self._state = _SIZE
            elif st == _SIZE:
                i = buf.find(b"\r\n", pos)
                if i < 0:
                    if len(buf) - pos > 1024:
                        raise ProtocolError("bad chunk size line")
                    break
                line = buf[pos:i]
                semi = line.find(b";")
                if semi >= 0:
                    line = line[:semi]
                try:
                    size = int(line, 16)
                except ValueError as exc:
                    raise ProtocolError(f"bad chunk size {bytes(line[:20])!r}") from exc
                pos = i + 2
                if size == 0:
                    self._state = _TRAILER
                else:
                    self._left = size
                    self._state = _DATA
            elif st == _TRAILER:
                i = buf.find(b"\r\n", pos)
                if i < 0:
                    break
                if i == pos:  # empty line: end of trailers, end of response
                    pos += 2
                    if self.sse:
                        self._flush_sse(t_ns, final=True)
                    self._finish(t_ns)
                else:
                    pos = i + 2  # skip a trailer field
            elif st == _LENGTH:
                avail = len(buf) - pos
                if avail <= 0:
                    break
                take = min(avail, self._left)
                self._body(buf[pos : pos + take], t_ns)
                pos += take
                self._left -= take
                if self._left == 0:
                    if self.sse:
                        self._flush_sse(t_ns, final=True)
                    self._finish(t_ns)
            elif st == _CLOSE:
                if pos < len(buf):
                    self._body(buf[pos:], t_ns)
                    pos = len(buf)
                break
            elif st == _HEAD:
                if pos:
                    del buf[:pos]
                    pos = 0
                if not self._head(t_ns):
                    break
            else:  # _DONE: anything after a complete response is ignored (we never pipeline)
                pos = len(buf)
                break
        if pos:
            del buf[:pos]
