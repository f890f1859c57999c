"""Sessions points against the scripted server, judged by what the server logged (its arrival times, its
prefix-cache counts), never by in-process wall-clock timing: open-loop arrival rates, Poisson dispersion,
multi-turn prefix-cache hit, the max-rate knee against a known saturation, goodput from the event log."""

from __future__ import annotations

import io
import itertools
import statistics
from pathlib import Path
from typing import Any

import pytest
from scripted_engine import factory, loaded_from_text, plan

from bench_tui.events import PointFinished, RequestFinished, SessionTurn
from bench_tui.reports import compare
from bench_tui.reports.model import load_run
from bench_tui.reports.render import render_run
from bench_tui.runner.orchestration.headless import run_headless
from bench_tui.runner.orchestration.session import new_run
from bench_tui.runner.orchestration.store import load_events
from scripted_server import Schedule, ScriptedServerProcess, ServedRequest

pytestmark = pytest.mark.timing  # rates judged within 2 %: the heavy lane, never beside the engine

HEAD = """\
version: 1
name: sessions
engines:
  s:
    kind: external
    base_url: http://127.0.0.1:{port}
    metrics_dialect: vllm
workloads:
"""


def _run(tmp_path: Path, text: str) -> tuple[Path, list[Any]]:
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    loaded = loaded_from_text(text, path)
    handle = new_run(
        loaded, plan(loaded), runs_dir=tmp_path / "runs", adapter_factory=factory, engine_warmup=False
    )
    out = io.StringIO()
    rc = run_headless(handle, out=out)
    assert rc == 0, out.getvalue()
    return handle.run_dir, load_events(handle.run_dir)


def _finished(events: list[Any]) -> dict[str, PointFinished]:
    return {
        e.point_id.rsplit("/", 2)[-2] + "/" + e.point_id.rsplit("/", 1)[-1]: e
        for e in events
        if isinstance(e, PointFinished)
    }


def _served(log: list[ServedRequest], point: str) -> list[ServedRequest]:
    return sorted((r for r in log if r.request_id.startswith(point + "@")), key=lambda r: r.t_recv_ns)


def test_open_loop_rates_land_on_the_offered_rate_and_poisson_disperses(tmp_path: Path) -> None:
    spec = HEAD + (
        "  const:\n"
        "    kind: sessions\n"
        "    source: {synthetic: {turns: 1, input_tokens: 8, output_tokens: 2}}\n"
        "    arrival: {rate: [24, 100], process: constant, seed: 3}\n"
        "    sessions: 120\n"
        "  pois:\n"
        "    kind: sessions\n"
        "    source: {synthetic: {turns: 1, input_tokens: 8, output_tokens: 2}}\n"
        "    arrival: {rate: [60], process: poisson, seed: 11}\n"
        "    sessions: 300\n"
    )
    with ScriptedServerProcess(Schedule(prefill_s=0.005, itl_s=0.001), port=0) as srv:
        _, events = _run(tmp_path, spec.replace("{port}", str(srv.port)))
        log = srv.fetch_log()
    done = _finished(events)
    assert {k: v.status for k, v in done.items()} == {"const/r24": "ok", "const/r100": "ok", "pois/r60": "ok"}
    for name, offered in (("const/r24", 24.0), ("const/r100", 100.0)):
        served = _served(log, f"s.default/{name}")
        assert len(served) == 120
        arrived = (len(served) - 1) / ((served[-1].t_recv_ns - served[0].t_recv_ns) / 1e9)
        assert abs(arrived - offered) / offered < 0.02, (name, arrived)
        fig = done[name].summary.extra["sessions"]
        assert abs(fig["achieved_rate"] - offered) / offered < 0.02
        assert fig["stable"] is True and fig["offered_rate"] == offered
    served = _served(log, "s.default/pois/r60")
    gaps = [(b.t_recv_ns - a.t_recv_ns) / 1e9 for a, b in itertools.pairwise(served)]
    rate = 1.0 / statistics.fmean(gaps)
    cv = statistics.pstdev(gaps) / statistics.fmean(gaps)
    n = len(gaps)
    assert abs(rate - 60.0) / 60.0 < 3.0 / n**0.5, rate  # three standard errors of a Poisson count
    assert 0.8 < cv < 1.2, cv
    # the plan itself is seeded: the same seed gives the same schedule the server saw (within send jitter)
    turns = [e for e in events if isinstance(e, SessionTurn) and e.point_id.endswith("pois/r60")]
    sched = sorted(t.t_scheduled_ns for t in turns)
    planned = [b - a for a, b in itertools.pairwise(sched)]
    planned_cv = statistics.pstdev(planned) / statistics.fmean(planned)
    assert abs(planned_cv - cv) < 0.1


def test_multi_turn_sessions_hit_the_prefix_cache_and_goodput_matches_the_event_log(tmp_path: Path) -> None:
    spec = HEAD + (
        "  agents:\n"
        "    kind: sessions\n"
        "    source: {synthetic: {shared_prefix_tokens: 64, turns: 4, input_tokens: 24, output_tokens: 8}}\n"
        "    think_time_s: {dist: exponential, mean: 0.05}\n"
        "    arrival: {rate: [8], process: poisson, seed: 5}\n"
        "    sessions: 16\n"
        "    slo: {ttft_ms: {p90: 40}, e2e_s: {p99: 1}}\n"
    )
    sched = Schedule(
        prefill_s=0.005, prefill_per_token_s=0.0002, itl_s=0.002, prefix_cache=True, prefix_block=16
    )
    with ScriptedServerProcess(sched, port=0) as srv:
        run_dir, events = _run(tmp_path, spec.replace("{port}", str(srv.port)))
        log = srv.fetch_log()
    fin = _finished(events)["agents/r8"]
    fig = fin.summary.extra["sessions"]
    served = {r.request_id: r for r in _served(log, "s.default/agents/r8")}
    assert len(served) == 16 * 4
    turn_of = {e.request_id: e.turn for e in events if isinstance(e, SessionTurn)}
    for row in fig["per_turn"]:
        mine = [r for rid, r in served.items() if turn_of[rid] == row["turn"]]
        server_hit = sum(r.cached_tokens for r in mine) / sum(r.prompt_tokens for r in mine)
        assert row["cache_hit"] == server_hit  # the report's hit is the server's own count
        if row["turn"] >= 2:
            assert server_hit >= 0.70, (row["turn"], server_hit)
            assert row["ideal_hit"] is not None and row["ideal_hit"] >= server_hit
    # the /metrics account of the point agrees with the per-request counts
    total = sum(r.cached_tokens for r in served.values()) / sum(r.prompt_tokens for r in served.values())
    assert abs(fin.summary.server.prefix_cache_hit_rate - total) < 1e-9
    # goodput recomputed from events.jsonl: scheduled times (SessionTurn) joined with the request records
    recs = {e.record.request_id: e.record for e in events if isinstance(e, RequestFinished) and not e.warmup}
    turns = [(e.t_scheduled_ns, recs[e.request_id]) for e in events if isinstance(e, SessionTurn)]
    good = sum(
        1
        for due, r in turns
        if r.ok and (r.t_first_token_ns - due) / 1e6 <= 40.0 and (r.t_done_ns - due) / 1e9 <= 1.0
    )
    span = (max(r.t_done_ns for _, r in turns) - min(due for due, _ in turns)) / 1e9
    assert good > 0
    assert abs(fig["goodput_rps"] - good / span) < 1e-9
    assert fin.summary.extra["goodput_rps"] == fig["goodput_rps"]
    # the report's sessions section and compare cells read the same figures
    md = render_run(run_dir, "md")
    assert "Sessions per point" in md and "Per turn" in md
    assert f"{fig['goodput_rps']:.2f}" in md
    model = load_run(run_dir)
    cells = [c.to_json() for c in compare.build([model, model]).cells if c.table == "sessions"]
    got = {c["metric"]: c for c in cells}
    assert set(got) == {"goodput_rps", "ttft_ms_turns2plus"}  # no max_rate without a search
    for c in got.values():
        assert {"metric", "claim", "delta_pct", "higher_is_better", "text"} <= set(c)
        assert c["delta_pct"] == 0.0 and c["claim"] is False
    assert got["goodput_rps"]["baseline_value"] == round(fig["goodput_rps"], 2)
    assert got["goodput_rps"]["higher_is_better"] and not got["ttft_ms_turns2plus"]["higher_is_better"]


def test_max_rate_search_finds_the_saturation_knee(tmp_path: Path) -> None:
    # 4 slots, each request 20 ms prefill + 7 x 10 ms decode = 90 ms: saturation at 4 / 0.09 = 44.4 req/s
    spec = HEAD + (
        "  knee:\n"
        "    kind: sessions\n"
        "    source: {synthetic: {turns: 1, input_tokens: 8, output_tokens: 8}}\n"
        "    arrival: {process: constant}\n"
        "    sessions: 80\n"
        "    slo: {ttft_ms: {p90: 150}}\n"
        "    search: {max_rate: {low: 20, high: 100, resolution_pct: 5}}\n"
    )
    with ScriptedServerProcess(Schedule(prefill_s=0.02, itl_s=0.01, tokens=8, slots=4), port=0) as srv:
        run_dir, events = _run(tmp_path, spec.replace("{port}", str(srv.port)))
        log = srv.fetch_log()
    fin = _finished(events)["knee/max-rate"]
    search = fin.summary.extra["sessions"]["search"]
    knee = fin.summary.extra["max_rate"]
    saturation = 4 / 0.09
    assert abs(knee - saturation) / saturation < 0.15, (knee, search["tried"])
    rates = [t["rate"] for t in search["tried"]]
    assert rates[:2] == [20, 100] and len(rates) >= 4
    assert not next(t for t in search["tried"] if t["rate"] == 100)["passed"]
    model = load_run(run_dir)
    assert "max sustainable rate" in render_run(run_dir, "md")
    cell = next(c for c in compare.build([model, model]).cells if c.metric == "max_rate")
    assert cell.baseline_value == knee and cell.verdict.unit == "point"
    # the server's truth: requests waited for a slot at 100/s, never more than 4 ran at once
    waits = [(r.t_slot_ns - r.t_recv_ns) / 1e6 for r in log if r.t_slot_ns]
    assert max(waits) > 100.0


def test_pack_trace_and_conversation_sources(tmp_path: Path) -> None:
    import shutil

    shutil.copy(Path(__file__).parents[1] / "unit" / "data" / "grader_mini_pack.yaml", tmp_path / "pack.yaml")
    (tmp_path / "t.jsonl").write_text(
        '{"timestamp": 0, "input_length": 40, "output_length": 3, "hash_ids": [1], "session_id": "a"}\n'
        '{"timestamp": 1, "input_length": 600, "output_length": 3, "hash_ids": [2, 3]}\n'
        '{"timestamp": 2, "input_length": 560, "output_length": 3, "hash_ids": [2, 4], "session_id": "a",'
        ' "delay": 30}\n'
    )
    (tmp_path / "c.jsonl").write_text(
        '{"conversations": [{"from": "system", "value": "be brief"}, {"from": "human", "value": "hi there"},'
        ' {"from": "gpt", "value": "hello you"}, {"from": "human", "value": "and now?"},'
        ' {"from": "gpt", "value": "now what"}]}\n'
    )
    spec = HEAD + (
        "  tools:\n"
        "    kind: sessions\n"
        "    source: {pack: pack.yaml, subset: short}\n"
        "    arrival: {rate: [5], process: constant}\n"
        "    sessions: 3\n"
        "  trace:\n"
        "    kind: sessions\n"
        "    source: {trace: t.jsonl}\n"
        "    arrival: {concurrency: [1]}\n"
        "    sessions: 2\n"
        "  chat:\n"
        "    kind: sessions\n"
        "    source: {conversations: c.jsonl}\n"
        "    think_time_s: 0.01\n"
        "    arrival: {rate: [5]}\n"
        "    sessions: 1\n"
    )
    sched = Schedule(prefill_s=0.002, itl_s=0.001, tokens=4, prefix_cache=True, prefix_block=16)
    with ScriptedServerProcess(sched, port=0) as srv:
        _, events = _run(tmp_path, spec.replace("{port}", str(srv.port)))
        log = srv.fetch_log()
    done = _finished(events)
    assert {k: v.status for k, v in done.items()} == {"tools/r5": "ok", "trace/c1": "ok", "chat/r5": "ok"}
    graded = [e for e in events if type(e).__name__ == "ScenarioGraded" and e.point_id.endswith("tools/r5")]
    assert sorted(g.scenario_id for g in graded) == ["TC-01", "TC-02", "TC-03"]
    turns = [e for e in events if isinstance(e, SessionTurn)]
    pack_turns = [t for t in turns if t.point_id.endswith("tools/r5")]
    assert len(pack_turns) == 3
    # a pack turn hands its due time to the transport like every other source: the record keeps the plan on
    # its own clock (a remote worker's differs from the runner's), and the turn's lateness is measured from it
    recs = {e.record.request_id: e.record for e in events if isinstance(e, RequestFinished)}
    for t in pack_turns:
        rec = recs[t.request_id]
        assert rec.t_scheduled_ns == t.t_scheduled_ns, (rec.t_scheduled_ns, t.t_scheduled_ns)
        assert 0 <= rec.t_send_ns - rec.t_scheduled_ns < 50_000_000  # sent on time, never early
    trace = sorted((t.session, t.turn) for t in turns if t.point_id.endswith("trace/c1"))
    assert trace == [(0, 1), (0, 2), (1, 1)]
    served = _served(log, "s.default/trace/c1")
    assert [r.prompt_tokens for r in served] == [40, 560, 600]
    # hash id 2 is the first block of the last two lines: the same 512 words, so the server's cache hits them
    assert served[2].cached_tokens == 512 and served[1].cached_tokens == 0
    second = _served(log, "s.default/chat/r5")[1].body["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]
    assert second[2]["content"].split() == ["the", "quick", "brown", "fox"]  # the model's own answer
