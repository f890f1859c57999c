"""Headless runs end to end against the scripted server: events.jsonl, degraded points, crash + restart."""

from __future__ import annotations

import io
import json
import threading
import time
from pathlib import Path

from scripted_engine import factory, loaded_from_text, plan, set_schedule

from bench_tui.events import (
    EngineCrashed,
    MetricsScraped,
    PlanReady,
    PointFinished,
    PointStarted,
    RequestFinished,
    RunFinished,
    RunStarted,
    ThroughputParams,
)
from bench_tui.runner.orchestration.headless import run_headless
from bench_tui.runner.orchestration.session import new_run
from bench_tui.runner.orchestration.store import load_events
from bench_tui.runner.view import RunView
from scripted_server import Schedule, ScriptedServerProcess, free_port

SPEC = """\
version: 1
name: scripted
engines:
  s:
    kind: external
    base_url: http://127.0.0.1:{port}
    metrics_dialect: vllm
workloads:
  sweep:
    kind: throughput
    pp: [24]
    tg: [6]
    depths: [0, 40]
    concurrency: [1, 3]
    repetitions: 2
    warmup: 1
"""


def _run(
    tmp_path: Path, spec_text: str, *, json_lines: bool = False, subscribe=None
) -> tuple[int, Path, str]:
    path = tmp_path / "spec.yaml"
    path.write_text(spec_text)
    loaded = loaded_from_text(spec_text, path)
    handle = new_run(
        loaded, plan(loaded), runs_dir=tmp_path / "runs", adapter_factory=factory, engine_warmup=False
    )
    if subscribe is not None:
        handle.subscribe(subscribe)
    out = io.StringIO()
    rc = run_headless(handle, json_lines=json_lines, out=out)
    return rc, handle.run_dir, out.getvalue()


def test_headless_sweep_writes_every_point(tmp_path: Path) -> None:
    with ScriptedServerProcess(Schedule(prefill_s=0.02, itl_s=0.005), port=0) as srv:
        rc, run_dir, out = _run(tmp_path, SPEC.format(port=srv.port))
    assert rc == 0, out
    assert (run_dir / "spec.yaml").read_text() == SPEC.format(port=srv.port)
    for name in ("resolved.json", "events.jsonl", "env.json"):
        assert (run_dir / name).is_file()
    events = load_events(run_dir)
    assert isinstance(events[0], RunStarted) and not events[0].resumed
    assert isinstance(events[-1], RunFinished) and events[-1].status == "completed"
    finished = [e for e in events if isinstance(e, PointFinished)]
    assert sorted(e.point_id for e in finished) == sorted(
        p.point_id for p in plan(loaded_from_text(SPEC.format(port=srv.port), tmp_path / "x.yaml"))
    )
    recs = RunView.from_events(events, keep_records=True).records()
    params = {p.point_id: p.params for e in events if isinstance(e, PlanReady) for p in e.points}
    for pf in finished:
        assert pf.status == "ok", (pf.point_id, pf.flags)
        s = pf.summary
        prm = params[pf.point_id]
        assert isinstance(prm, ThroughputParams)
        conc, depth = prm.concurrency, prm.depth
        assert s.requests == s.ok == 2 * conc == len(recs[pf.point_id])
        assert s.output_tokens.median == 6 and s.output_tokens.min == 6
        assert s.prompt_tokens.min == s.prompt_tokens.max == 24 + depth  # exact via /tokenize
        assert s.ttft_ms.median is not None and s.ttft_ms.median >= 20  # the scripted prefill is 20 ms
        assert s.server.prompt_tokens == sum(r.prompt_tokens for r in recs[pf.point_id])
        assert s.server.generation_tokens == 6 * 2 * conc
        assert not any(f.startswith("server-disagrees") for f in pf.flags)
        phases = [e.phase for e in events if isinstance(e, MetricsScraped) and e.point_id == pf.point_id]
        assert phases == ["before", "after"]
    warm = [
        e
        for e in events
        if isinstance(e, RequestFinished)
        and e.warmup
        and "/sweep/" in e.record.point_id
        and ":w" in e.record.request_id
    ]
    assert len(warm) == len(finished)  # one warm-up per point, flagged as such
    assert "4/4" in out and "eff tg" in out and "TTFT med" in out


def test_json_lines_output(tmp_path: Path) -> None:
    spec = SPEC.replace("depths: [0, 40]", "depths: [0]").replace("concurrency: [1, 3]", "concurrency: [2]")
    with ScriptedServerProcess(Schedule(itl_s=0.002), port=0) as srv:
        rc, run_dir, out = _run(tmp_path, spec.format(port=srv.port), json_lines=True)
    assert rc == 0
    lines = [json.loads(x) for x in out.splitlines()]
    types = [x["type"] for x in lines]
    assert types[0] == "run_started" and types[-1] == "run_finished"
    assert types.count("point_finished") == 1
    assert len(lines) == len(load_events(run_dir))


def test_503s_make_a_degraded_point_not_an_average(tmp_path: Path) -> None:
    spec = SPEC.replace("depths: [0, 40]", "depths: [0]").replace("concurrency: [1, 3]", "concurrency: [4]")
    # the first 4 requests get a 503: the probe, the warm-up and two measured requests
    with ScriptedServerProcess(Schedule(itl_s=0.002, status=503, fault_requests=4), port=0) as srv:
        rc, run_dir, out = _run(tmp_path, spec.format(port=srv.port))
    assert rc == 1, out  # a degraded point fails the run for CI (runner.outcome)
    (pf,) = [e for e in load_events(run_dir) if isinstance(e, PointFinished)]
    assert pf.status == "degraded"
    assert "degraded:2/8 failed" in pf.flags
    s = pf.summary
    assert (s.requests, s.ok, s.failed) == (8, 6, 2)
    assert s.eff_tg_tps.n == 6  # failed requests are not averaged in
    assert s.extra["errors"] == {"http": 2}
    assert "degraded" in out


def test_engine_crash_fails_the_point_and_restarts_once(tmp_path: Path) -> None:
    port = free_port()
    spec = f"""\
version: 1
name: crash
engines:
  s:
    kind: command
    command: ["{{python}}", "{Path(__file__).resolve().parents[1] / "scripted_server.py"}", "--port", "{{port}}",
              "--itl-ms", "20"]
    port: {port}
    metrics_dialect: vllm
workloads:
  sweep:
    kind: throughput
    pp: [16]
    tg: [10]
    depths: [0]
    concurrency: [1, 2, 3]
    repetitions: 3
    warmup: 1
"""
    armed = threading.Event()

    def crash_in_second_point(ev) -> None:
        if isinstance(ev, PointStarted) and ev.point_id.endswith("-c2") and not armed.is_set():
            armed.set()
            set_schedule(f"http://127.0.0.1:{port}", itl_s=0.02, fault="crash", fault_after=3)

    rc, run_dir, out = _run(tmp_path, spec, subscribe=crash_in_second_point)
    events = load_events(run_dir)
    finished = {e.point_id: e for e in events if isinstance(e, PointFinished)}
    assert len(finished) == 3, out
    failed = [e for e in finished.values() if e.status == "failed"]
    assert len(failed) == 1, [(e.point_id, e.status, e.flags) for e in finished.values()]
    assert "engine-crashed" in failed[0].flags
    assert "log_tail" in failed[0].summary.extra
    crashed_recs = [
        e.record
        for e in events
        if isinstance(e, RequestFinished) and e.record.point_id == failed[0].point_id and not e.record.ok
    ]
    assert crashed_recs and all(r.error_kind == "engine_crash" for r in crashed_recs)
    crashes = [e for e in events if isinstance(e, EngineCrashed)]
    assert len(crashes) == 1 and crashes[0].point_id == failed[0].point_id
    # points after the crash ran on the restarted engine
    later = [p for p in finished.values() if p.point_id.endswith("-c3")]
    assert later and later[0].status == "ok" or failed[0].point_id.endswith("-c3")
    assert rc == 1  # one failed point: the run goes on, and CI still sees it


ONE_POINT_SLOW = SPEC.replace("depths: [0, 40]", "depths: [0]").replace("tg: [6]", "tg: [20]")


def test_abort_mid_point_keeps_records_and_exits_130(tmp_path: Path) -> None:
    holder: dict[str, object] = {}

    def abort_on_first_measured(ev) -> None:
        if isinstance(ev, RequestFinished) and not ev.warmup and "handle" in holder and "at" not in holder:
            holder["at"] = (time.time(), time.monotonic_ns())
            holder["handle"].control.abort()  # type: ignore[attr-defined]

    with ScriptedServerProcess(Schedule(itl_s=0.02), port=0) as srv:
        path = tmp_path / "spec.yaml"
        text = ONE_POINT_SLOW.format(port=srv.port)
        path.write_text(text)
        loaded = loaded_from_text(text, path)
        handle = new_run(
            loaded, plan(loaded), runs_dir=tmp_path / "runs", adapter_factory=factory, engine_warmup=False
        )
        holder["handle"] = handle
        handle.subscribe(abort_on_first_measured)
        rc = run_headless(handle, out=io.StringIO())
    assert rc == 130
    events = load_events(handle.run_dir)
    assert isinstance(events[-1], RunFinished) and events[-1].status == "aborted"
    started = [e.point_id for e in events if isinstance(e, PointStarted)]
    finished = {e.point_id for e in events if isinstance(e, PointFinished)}
    assert started and started[-1] not in finished  # the interrupted point reruns on resume
    measured = [e.record for e in events if isinstance(e, RequestFinished) and not e.warmup]
    assert measured  # the record that triggered the abort is kept
    # subscribers get events through a queue, so on a busy machine a request may finish before the abort
    # arrives; none may be sent, and no point may start, after it
    wall, mono = holder["at"]  # type: ignore[misc]
    assert all(r.t_send_ns is not None and r.t_send_ns < mono for r in measured)
    assert not any(isinstance(e, PointStarted) and e.ts > wall for e in events)


def test_skip_and_pause(tmp_path: Path) -> None:
    holder: dict[str, object] = {}
    skipped: list[str] = []

    def control(ev) -> None:
        h = holder["handle"]
        if isinstance(ev, PointStarted) and ev.point_id.endswith("-c1") and not skipped:
            skipped.append(ev.point_id)
            h.control.skip_point()  # type: ignore[attr-defined]

    with ScriptedServerProcess(Schedule(itl_s=0.01), port=0) as srv:
        path = tmp_path / "spec.yaml"
        text = ONE_POINT_SLOW.format(port=srv.port)
        path.write_text(text)
        loaded = loaded_from_text(text, path)
        handle = new_run(
            loaded, plan(loaded), runs_dir=tmp_path / "runs", adapter_factory=factory, engine_warmup=False
        )
        holder["handle"] = handle
        handle.subscribe(control)
        handle.control.pause()
        handle.start()
        assert handle.wait(1.5) == "running"  # paused before the first point
        handle.control.resume()
        assert handle.wait(60) == "completed"
    finished = {e.point_id: e for e in load_events(handle.run_dir) if isinstance(e, PointFinished)}
    assert finished[skipped[0]].status == "skipped"
    others = [e for pid, e in finished.items() if pid != skipped[0]]
    assert others and all(e.status == "ok" for e in others)


SPEC_ACCEPT = """\
version: 1
name: accept
engines:
  s:
    kind: external
    base_url: http://127.0.0.1:{port}
    metrics_dialect: vllm
workloads:
  accept:
    kind: spec_acceptance
    content: [code, json]
    depths: [0, 50]
    runs: 2
    tg: 12
"""


def test_spec_acceptance_without_speculation_says_so(tmp_path: Path) -> None:
    with ScriptedServerProcess(Schedule(itl_s=0.002), port=0) as srv:
        rc, run_dir, out = _run(tmp_path, SPEC_ACCEPT.format(port=srv.port))
    assert rc == 0, out
    finished = [e for e in load_events(run_dir) if isinstance(e, PointFinished)]
    assert len(finished) == 4
    for pf in finished:
        assert pf.status == "ok"
        assert "no speculative decoding reported" in pf.flags
        assert pf.summary.server.spec_acceptance_rate is None  # not a zero
        assert pf.summary.requests == 2


def test_spec_acceptance_from_vllm_counters(tmp_path: Path) -> None:
    import scripted_engine

    class SpecEngine(scripted_engine.ScriptedEngine):
        """The scripted server plus vLLM spec-decode counters that follow its generated tokens."""

        def scrape_metrics(self) -> dict[str, float]:
            m = super().scrape_metrics()
            gen = sum(v for k, v in m.items() if k.startswith("vllm:generation_tokens_total"))
            m["vllm:spec_decode_num_drafts_total"] = gen / 2
            m["vllm:spec_decode_num_draft_tokens_total"] = gen * 1.5
            m["vllm:spec_decode_num_accepted_tokens_total"] = gen * 0.75
            m['vllm:spec_decode_num_accepted_tokens_per_pos_total{position="0"}'] = gen * 0.4
            m['vllm:spec_decode_num_accepted_tokens_per_pos_total{position="1"}'] = gen * 0.25
            m['vllm:spec_decode_num_accepted_tokens_per_pos_total{position="2"}'] = gen * 0.1
            return m

    spec = SPEC_ACCEPT.replace("content: [code, json]", "content: [prose]").replace(
        "depths: [0, 50]", "depths: [0]"
    )
    with ScriptedServerProcess(Schedule(itl_s=0.002), port=0) as srv:
        path = tmp_path / "spec.yaml"
        text = spec.format(port=srv.port)
        path.write_text(text)
        loaded = loaded_from_text(text, path)
        handle = new_run(
            loaded,
            plan(loaded),
            runs_dir=tmp_path / "runs",
            engine_warmup=False,
            adapter_factory=lambda *a, **k: SpecEngine(*a, **k),
        )
        assert run_headless(handle, out=io.StringIO()) == 0
    (pf,) = [e for e in load_events(handle.run_dir) if isinstance(e, PointFinished)]
    srv_side = pf.summary.server
    assert srv_side.spec_acceptance_rate is not None and abs(srv_side.spec_acceptance_rate - 0.5) < 1e-9
    assert srv_side.spec_acceptance_length is not None and abs(srv_side.spec_acceptance_length - 2.5) < 1e-9
    assert [round(x, 6) for x in srv_side.spec_per_position] == [0.8, 0.5, 0.2]
    assert "no speculative decoding reported" not in pf.flags
    assert pf.summary.extra["acceptance_source"] == "server /metrics"


def test_without_a_tokenizer_prompts_are_calibrated_on_usage(tmp_path: Path) -> None:
    import scripted_engine

    class NoTokenizer(scripted_engine.ScriptedEngine):
        def tokenize(self, text: str) -> list[int] | None:
            return None

    spec = SPEC.replace("concurrency: [1, 3]", "concurrency: [2]")
    spec = spec.replace("    warmup: 1\n", "    warmup: 1\n    endpoint: chat\n")
    with ScriptedServerProcess(Schedule(itl_s=0.002), port=0) as srv:
        path = tmp_path / "spec.yaml"
        text = spec.format(port=srv.port)
        path.write_text(text)
        loaded = loaded_from_text(text, path)
        handle = new_run(
            loaded,
            plan(loaded),
            runs_dir=tmp_path / "runs",
            engine_warmup=False,
            adapter_factory=lambda *a, **k: NoTokenizer(*a, **k),
        )
        assert run_headless(handle, out=io.StringIO()) == 0
    events = load_events(handle.run_dir)
    finished = [e for e in events if isinstance(e, PointFinished)]
    assert len(finished) == 2
    probes = [e for e in events if isinstance(e, RequestFinished) and ":probe" in e.record.request_id]
    assert len(probes) == 2 and all(e.warmup for e in probes)  # two probe lengths, once per engine
    for pf in finished:
        assert "prompt-length-estimated" in pf.flags
        # the scripted chat "template" adds one token per message: calibration finds and removes it
        assert pf.summary.extra["server_overhead_tokens"] == 1
        depth = next(
            p.params.depth
            for e in events
            if isinstance(e, PlanReady)
            for p in e.points
            if p.point_id == pf.point_id and isinstance(p.params, ThroughputParams)
        )
        assert pf.summary.prompt_tokens.min == pf.summary.prompt_tokens.max == 24 + depth


def test_start_run_from_a_spec_file_keeps_secrets_out(tmp_path: Path, monkeypatch) -> None:
    from bench_tui.runner.orchestration.session import start_run

    monkeypatch.setenv("C2_TEST_KEY", "sk-c2-never-written-0123456789")
    text = SPEC.replace(
        "    metrics_dialect: vllm\n", "    metrics_dialect: vllm\n    api_key: ${{C2_TEST_KEY}}\n"
    )
    text = text.replace("depths: [0, 40]", "depths: [0]").replace("concurrency: [1, 3]", "concurrency: [1]")
    with ScriptedServerProcess(Schedule(itl_s=0.002), port=0) as srv:
        spec = tmp_path / "s.yaml"
        spec.write_text(text.format(port=srv.port))
        handle = start_run(spec, runs_dir=tmp_path / "runs", adapter_factory=factory, engine_warmup=False)
        assert [p.point_id for p in handle.points] == ["s.default/sweep/pp24-tg6-d0-c1"]
        assert run_headless(handle, out=io.StringIO()) == 0
    assert "${C2_TEST_KEY}" in (handle.run_dir / "spec.yaml").read_text()  # as given, unexpanded
    for f in handle.run_dir.rglob("*"):
        if f.is_file():
            assert "sk-c2-never-written" not in f.read_text(errors="replace"), f
    resolved = json.loads((handle.run_dir / "resolved.json").read_text())
    assert resolved["plan"][0]["point_id"] == "s.default/sweep/pp24-tg6-d0-c1"


def test_cold_and_warm_prompts_as_the_server_saw_them(tmp_path: Path) -> None:
    spec = SPEC.replace("depths: [0, 40]", "depths: [60]").replace("concurrency: [1, 3]", "concurrency: [3]")
    warm_spec = spec.replace("    warmup: 1\n", "    warmup: 0\n    cache: warm\n")
    for text, cache in ((spec, "cold"), (warm_spec, "warm")):
        (tmp_path / cache).mkdir()
        with ScriptedServerProcess(Schedule(itl_s=0.002), port=0) as srv:
            rc, run_dir, out = _run(tmp_path / cache, text.format(port=srv.port))
            served = srv.fetch_log()
        assert rc == 0, out
        measured = [r.body["prompt"] for r in served if ":r" in r.request_id]
        assert len(measured) == 6 and all(len(p.split()) == 84 for p in measured)
        firsts = {" ".join(p.split()[:4]) for p in measured}
        ctx_parts = {p.split("\n")[0 if cache == "warm" else 1] for p in measured}
        if cache == "cold":
            assert len(firsts) == 6  # a unique nonce starts every prompt
        else:
            assert (
                len(ctx_parts) == 1 and len(next(iter(ctx_parts)).split()) == 60
            )  # one shared 60-token context
            assert len(set(measured)) == 6
            primed = [r for r in served if ":w" in r.request_id]
            assert len(primed) == 1 and primed[0].body["prompt"].split("\n")[0] == next(iter(ctx_parts))
        (pf,) = [e for e in load_events(run_dir) if isinstance(e, PointFinished)]
        assert pf.summary.cache == cache
