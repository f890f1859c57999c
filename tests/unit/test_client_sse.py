"""The incremental HTTP/SSE parser, fed bytes split at every possible place."""

from __future__ import annotations

import pytest

from bench_tui.runner.transport.sse import ProtocolError, ResponseParser


def _chunked(*payloads: bytes) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in payloads) + b"0\r\n\r\n"


HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
EVENTS = [
    b'data: {"a":1}\n\n',
    b'data: {"b":2}\n\ndata: {"c":3}\n\n',
    b": comment\n\n",
    b"event: x\ndata: line1\ndata: line2\n\n",
    b"data: [DONE]\n\n",
]
WANT = [b'{"a":1}', b'{"b":2}', b'{"c":3}', b"line1\nline2", b"[DONE]"]


class Sink:
    def __init__(self) -> None:
        self.events: list[tuple[bytes, int]] = []
        self.heads: list[tuple[int, dict[str, str]]] = []
        self.done: list[int] = []

    def parser(self) -> ResponseParser:
        return ResponseParser(
            lambda d, t: self.events.append((d, t)), lambda s, h: self.heads.append((s, h)), self.done.append
        )


def test_whole_response_in_one_read() -> None:
    s = Sink()
    p = s.parser()
    p.feed(HEAD + _chunked(*EVENTS), 7)
    assert [d for d, _ in s.events] == WANT and s.done == [7] and p.complete and p.keep_alive
    assert s.heads[0][0] == 200 and s.heads[0][1]["content-type"] == "text/event-stream"


@pytest.mark.parametrize("step", [1, 2, 3, 5, 8, 13])
def test_split_everywhere_keeps_events_and_times(step: int) -> None:
    raw = HEAD + _chunked(*EVENTS)
    s = Sink()
    p = s.parser()
    for i in range(0, len(raw), step):
        p.feed(raw[i : i + step], i)
    assert [d for d, _ in s.events] == WANT
    assert p.complete
    # each event is stamped with the read that completed it: times never go backwards
    times = [t for _, t in s.events]
    assert times == sorted(times)


def test_event_split_across_chunks_and_crlf_lines() -> None:
    s = Sink()
    p = s.parser()
    p.feed(HEAD + _chunked(b'data: {"x"', b":1}\r\n\r\ndata: 2\r\n\r\n"), 1)
    assert [d for d, _ in s.events] == [b'{"x":1}', b"2"]


def test_event_time_is_the_completing_read() -> None:
    s = Sink()
    p = s.parser()
    p.feed(HEAD, 1)
    p.feed(b'f\r\ndata: {"a":1}\n', 2)  # 14 of 15 bytes: the event is not finished yet
    p.feed(b"\n\r\n", 3)
    assert s.events == [(b'{"a":1}', 3)]


def test_content_length_error_body_and_close_delimited() -> None:
    s = Sink()
    p = s.parser()
    body = b'{"error":{"message":"busy"}}'
    p.feed(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: %d\r\n\r\n" % len(body) + body[:5], 1)
    assert not p.complete
    p.feed(body[5:], 2)
    assert p.complete and p.status == 503 and bytes(p.body) == body and not s.events
    s2 = Sink()
    p2 = s2.parser()
    p2.feed(b"HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: 1\n\ndata: 2", 1)
    assert [d for d, _ in s2.events] == [b"1"] and not p2.complete and not p2.keep_alive
    assert p2.eof(5) and [d for d, _ in s2.events] == [b"1", b"2"]


def test_interim_100_and_chunk_extensions_and_trailers() -> None:
    s = Sink()
    p = s.parser()
    p.feed(b"HTTP/1.1 100 Continue\r\n\r\n" + HEAD + b"9;ext=1\r\ndata: 1\n\n\r\n0\r\nX-T: y\r\n\r\n", 1)
    assert [d for d, _ in s.events] == [b"1"] and p.complete and p.status == 200


@pytest.mark.parametrize("bad", [b"SMTP nope\r\n\r\n", HEAD + b"zz\r\n", b"HTTP/1.1 abc OK\r\n\r\n"])
def test_garbage_raises_protocol_error(bad: bytes) -> None:
    p = Sink().parser()
    with pytest.raises(ProtocolError):
        p.feed(bad, 1)
