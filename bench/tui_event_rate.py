"""Can the TUI keep up with a busy run? Feed the app a synthetic live stream and measure it.

A producer thread pushes events into the app's queue the way the runner's subscriber does (from another
thread), at ``--rate`` events/s for ``--seconds``: ``--concurrency`` requests in flight, each sending
RequestStarted, RequestFirstToken, a RequestProgress every few tokens, RequestFinished; plus engine
gauges and engine log lines. The app runs headless (``App.run_test``) at a fixed size with the run screen
showing, so every batch really updates the widgets.

Printed: events pushed and applied, drain batches per second (the update rate; the timer asks for ~12/s),
batch sizes, the longest fold+refresh of one batch, the worst latency from an event's emit time to the
end of its batch's widget update, and how late a 50 ms UI-loop probe timer ran (responsiveness to keys).

Run: ``.venv/bin/python bench/tui_event_rate.py [--rate 2000] [--seconds 10] [--concurrency 64]``.
This is a benchmark with numbers, not a test: nothing here asserts a speed.

Measured 2026-12-03 on the shared 2-core box (CPython 3.11.7, Textual 8.2.8, 160x48, 10 s each):

    rate/s  in flight  batches/s  batch mean/p95/max  fold+refresh max  emit->screen max  50ms-probe late med/max
      1000         64        9.7       100/207/235           13.7 ms           228 ms          25.6/176.5 ms
      2000         64       10.0       192/410/470           17.2 ms           232 ms          26.1/204.3 ms
      5000        256       10.0       485/1004/1130          8.3 ms           229 ms          31.2/181.6 ms

Every pushed event was applied; the cost is Textual's rendering, not the batch fold (<= 17 ms).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import threading
import time

from bench_tui.events import (
    Chunk,
    EngineLog,
    EngineStats,
    PlanPoint,
    PlanReady,
    PointStarted,
    RequestFinished,
    RequestFirstToken,
    RequestProgress,
    RequestRecord,
    RequestStarted,
    RunStarted,
)
from bench_tui.tui.app import make_app


class _Handle:
    """Just enough of a RunHandle for the app: subscribe/start/control; the producer does the rest."""

    def __init__(self) -> None:
        self.subs: list = []
        self.run_dir = "/nonexistent"
        self.running = True

        class _C:
            def pause(self) -> None: ...
            def resume(self) -> None: ...
            def skip_point(self) -> None: ...
            def abort(self) -> None: ...

        self.control = _C()

    def subscribe(self, fn) -> None:  # type: ignore[no-untyped-def]
        self.subs.append(fn)

    def start(self) -> None:
        pass

    def wait(self, timeout: float | None = None) -> str:
        return "completed"


def produce(push, rate: float, seconds: float, conc: int, stop: threading.Event, counts: dict) -> None:  # type: ignore[no-untyped-def]
    pid = "bench.default/sweep/pp512-tg256-d0-c64"
    push(RunStarted(run_id="bench", spec_name="tui-event-rate", spec_path="", run_dir="/nonexistent"))
    push(
        PlanReady(
            points=[
                PlanPoint(
                    point_id=pid,
                    engine="bench",
                    variant="default",
                    workload="sweep",
                    kind="throughput",
                    params={"concurrency": conc},
                )
            ]
        )
    )
    push(PointStarted(point_id=pid, index=0, total=1))
    tokens = [0] * conc
    rid = [0] * conc
    nid = 0
    for i in range(conc):
        nid += 1
        rid[i] = nid
        push(RequestStarted(point_id=pid, request_id=f"r{nid}", prompt_tokens=512, max_tokens=256))
    sent = 3 + conc
    t0 = time.perf_counter()
    slot = 0
    while not stop.is_set():
        el = time.perf_counter() - t0
        if el >= seconds:
            break
        due = int(el * rate) - sent
        for _ in range(max(0, due)):
            i = slot % conc
            slot += 1
            r = f"r{rid[i]}"
            if sent % 97 == 0:
                push(
                    EngineStats(
                        engine="bench",
                        variant="default",
                        running=conc,
                        waiting=3,
                        kv_usage=0.4,
                        prefix_cache_hit_rate=0.3,
                        spec_acceptance_rate=0.6,
                    )
                )
            elif sent % 89 == 0:
                push(
                    EngineLog(engine="bench", variant="default", line=f"slot {i}: decoded {tokens[i]} tokens")
                )
            elif tokens[i] == 0:
                tokens[i] = 1
                push(RequestFirstToken(point_id=pid, request_id=r, ttft_ms=120.0 + i))
            elif tokens[i] < 256:
                tokens[i] += 8
                push(
                    RequestProgress(
                        point_id=pid,
                        request_id=r,
                        tokens=tokens[i],
                        content_tokens=tokens[i],
                        elapsed_ms=120 + 20.0 * tokens[i],
                    )
                )
            else:
                rec = RequestRecord(
                    request_id=r,
                    point_id=pid,
                    ok=True,
                    t_send_ns=0,
                    t_first_token_ns=120_000_000,
                    t_last_token_ns=5_000_000_000,
                    t_done_ns=5_001_000_000,
                    output_tokens=tokens[i],
                    chunks=[Chunk(120_000_000, tokens[i], "content")],
                )
                push(RequestFinished(record=rec))
                nid += 1
                rid[i] = nid
                tokens[i] = 0
                push(RequestStarted(point_id=pid, request_id=f"r{nid}", prompt_tokens=512, max_tokens=256))
                sent += 1
            sent += 1
        time.sleep(0.002)
    counts["sent"] = sent
    counts["wall"] = time.perf_counter() - t0


async def main_async(args: argparse.Namespace) -> None:
    handle = _Handle()
    app = make_app(handle=handle)
    stop = threading.Event()
    counts: dict = {}
    probe_late: list[float] = []
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.2)
        last = [time.perf_counter()]

        def probe() -> None:
            now = time.perf_counter()
            probe_late.append(max(0.0, (now - last[0] - 0.05) * 1000))
            last[0] = now

        app.set_interval(0.05, probe)
        b0, e0 = app.pump.batches, app.pump.events
        t = threading.Thread(
            target=produce, args=(app.pump.push, args.rate, args.seconds, args.concurrency, stop, counts)
        )
        t0 = time.perf_counter()
        t.start()
        while t.is_alive():
            await pilot.pause(0.1)
        deadline = time.perf_counter() + 10
        while not app.pump.q.empty() and time.perf_counter() < deadline:
            await pilot.pause(0.05)
        await pilot.pause(0.2)
        wall = time.perf_counter() - t0
        sizes = app.pump.batch_sizes[b0:]
        batches = app.pump.batches - b0
        applied = app.pump.events - e0
        print(
            f"events pushed     {counts['sent']} in {counts['wall']:.1f} s = {counts['sent'] / counts['wall']:.0f}/s "
            f"(target {args.rate:.0f}/s, {args.concurrency} requests in flight)"
        )
        print(f"events applied    {applied}")
        print(f"update rate       {batches / wall:.1f} batches/s over {wall:.1f} s (timer asks for 12/s)")
        if sizes:
            q = statistics.quantiles(sizes, n=20) if len(sizes) >= 2 else [sizes[0]] * 19
            print(
                f"batch size        mean {statistics.mean(sizes):.0f}  median {statistics.median(sizes):.0f}  "
                f"p95 {q[18]:.0f}  max {max(sizes)}"
            )
        print(f"fold+refresh      max {app.pump.max_update_ms:.1f} ms per batch")
        print(f"emit->on screen   max {app.pump.max_latency_ms:.0f} ms")
        if probe_late:
            print(
                f"UI loop lateness  50 ms probe: median {statistics.median(probe_late):.1f} ms  "
                f"max {max(probe_late):.1f} ms"
            )
        print(
            f"state             {len(app.state.requests)} live requests, {app.state.requests_finished} finished, "
            f"{sum(app.state.tok_series.totals(10_000)):.0f} tokens counted"
        )
        handle.running = False


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rate", type=float, default=2000.0)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--concurrency", type=int, default=64)
    asyncio.run(main_async(ap.parse_args()))


if __name__ == "__main__":
    main()
