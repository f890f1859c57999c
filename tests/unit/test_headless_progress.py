"""The headless progress lines: a scenario point's score, a start line cut at a flag, an ETA with engine starts."""

from __future__ import annotations

import io

from bench_tui.events import (
    EngineReady,
    EngineStarting,
    PlanPoint,
    PlanReady,
    PointFinished,
    PointStarted,
    RequestFinished,
    RequestRecord,
    ScenarioGraded,
    ThroughputParams,
)
from bench_tui.runner.orchestration.headless import ProgressPrinter, command_text


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def _pt(engine: str, variant: str, n: int) -> PlanPoint:
    return PlanPoint(
        point_id=f"{engine}.{variant}/w/p{n}",
        engine=engine,
        variant=variant,
        workload="w",
        kind="throughput",
        params=ThroughputParams(pp=8, tg=8),
        requests=5,
    )


def _req(i: int) -> RequestFinished:
    return RequestFinished(record=RequestRecord(request_id=f"x@1:r{i}.0", point_id="e.a/w/p0", ok=True))


def test_start_line_is_cut_before_a_flag_never_inside_one() -> None:
    argv = [
        "python",
        "-m",
        "server",
        "--model",
        "/models/" + "m" * 60,
        "--ctx-size",
        "32768",
        "--speculative-config",
        '{"method":"mtp","num_speculative_tokens":3}',
        "--port",
        "8000",
        "--api-key",
        "xyz",
        "--chat-template",
        "/very/long/path/" + "t" * 80 + ".jinja",
    ]
    text = command_text(argv, width=120)
    assert len(text) < 160 and text.endswith("more arguments)")
    kept = text.split(" … ")[0]
    assert kept.split()[-1] != "--speculative-config" and not kept.split()[-1].startswith("-")
    nxt = argv[len(kept.split())]
    assert nxt.startswith("--")  # the cut is at a flag boundary
    assert command_text(["a", "--b", "c"]) == "a --b c"


def test_eta_counts_engine_starts_and_does_not_jump_after_one() -> None:
    clock = Clock()
    out = io.StringIO()
    pr = ProgressPrinter(out, total_points=2, done_points=0, est_requests=20, clock=clock)
    pr(PlanReady(points=[_pt("e", "a", 0), _pt("e", "b", 1)]))
    pr(EngineStarting(engine="e", variant="a", command=["srv"]))
    clock.t += 10.0
    pr(EngineReady(engine="e", variant="a", base_url="", model_id="m", startup_s=10.0))
    for i in range(10):  # 1 s per request
        clock.t += 1.0
        pr(_req(i))
    # 10 requests left at 1 s each, plus variant b's start (10 s, as measured for a)
    assert pr.eta_seconds() == 20.0
    pr(EngineStarting(engine="e", variant="b", command=["srv"]))
    clock.t += 4.0
    assert pr.eta_seconds() == 16.0  # 10 s of requests + the 6 s left of a typical start
    clock.t += 6.0
    pr(EngineReady(engine="e", variant="b", base_url="", model_id="m", startup_s=10.0))
    assert pr.eta_seconds() == 10.0  # the start did not count as request time


def test_scenario_point_line_shows_its_score() -> None:
    out = io.StringIO()
    pr = ProgressPrinter(out, total_points=1, done_points=0, est_requests=3)
    pr(PointStarted(point_id="e.a/tools"))
    for sid, pts in (("TC-01", 2), ("TC-02", 1), ("TC-03", 0), ("TC-04", None)):
        pr(
            ScenarioGraded(
                point_id="e.a/tools",
                scenario_id=sid,
                trial=0,
                category="c",
                verdict={2: "pass", 1: "partial", 0: "fail", None: None}[pts],
                points=pts,
            )
        )  # type: ignore[arg-type]
    pr(PointFinished(point_id="e.a/tools", status="ok"))
    last = out.getvalue().splitlines()[-1]
    assert "score 50.0% raw (1 pass, 1 partial, 1 fail, 1 not graded)" in last


def test_eta_counts_every_engine_session_still_to_start() -> None:
    """With ``matrix.sessions`` a variant starts once per session: the ETA keeps a start for each one left."""
    import msgspec

    pts = [
        msgspec.structs.replace(_pt("e", v, 1), point_id=f"e.{v}/w/p1@s{k}", session=k)
        for v, k in (("a", 1), ("b", 1), ("b", 2), ("a", 2))
    ]
    clock = Clock()
    pp = ProgressPrinter(io.StringIO(), total_points=4, done_points=0, est_requests=20, clock=clock)
    pp(PlanReady(points=pts, estimated_requests=20))
    assert pp.sessions_left == [("e.a", 1), ("e.b", 1), ("e.b", 2), ("e.a", 2)]
    pp(EngineStarting(engine="e", variant="a", command=["x"]))
    pp(EngineStarting(engine="e", variant="b", command=["x"]))
    assert pp.sessions_left == [("e.b", 2), ("e.a", 2)]  # two starts still ahead, not zero
