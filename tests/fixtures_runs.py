"""Realistic recorded run directories built from the event Structs (no engine involved).

``make_run_dir(root)`` writes a run of one vLLM engine with two variants (``base`` and ``mtp``):
- a throughput sweep (pp512, tg64, depths 0/2048, concurrency 1/4, 3 repetitions) where one point is
  degraded (2 failed requests), one is client-limited and one has a token-count disagreement;
- a spec-acceptance workload on the ``mtp`` variant (code / json / prose);
- a scenarios workload (the grader mini pack) with an override and a stale override.

A fake API key (``FIXTURE_API_KEY``) is planted in env.json, an engine log, an EngineLog event and the
spec (as a literal on a second engine): every output made from the run must not contain it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from bench_tui.events import (
    AcceptanceParams,
    EngineLog,
    EngineReady,
    EngineStarting,
    EngineStopped,
    Event,
    PlanPoint,
    PlanReady,
    PointFinished,
    PointStarted,
    PointSummary,
    RequestFinished,
    RequestRecord,
    RunFinished,
    RunStarted,
    RunWarning,
    ScenarioGraded,
    ScenarioParams,
    ServerSide,
    ThroughputParams,
    encode,
)
from bench_tui.graders.grade import canonical_sha256
from bench_tui.graders.pack import load_pack
from bench_tui.graders.simulator import simulate
from bench_tui.runner.workloads.metrics import stat

PACK_SRC = Path(__file__).parent / "unit" / "data" / "grader_mini_pack.yaml"
FIXTURE_API_KEY = "sk-fixture-9f8e7d6c5b4a39281706"
FIXTURE_LITERAL_KEY = "sk-literal-0a1b2c3d4e5f60718293"
API_KEY_ENV = "BENCH_FIXTURE_API_KEY"

SPEC_YAML = """\
version: 1
name: fixture-study
description: "vLLM base vs MTP speculative decoding (recorded fixture)"
engines:
  vllm:
    kind: vllm
    model: /models/qwen-0.5b
    served_model_name: qwen
    port: 18999
    api_key: ${BENCH_FIXTURE_API_KEY}
    args: {max-model-len: 8192, enforce-eager: true}
    variants:
      base: {description: "no speculation"}
      mtp:
        description: "MTP, 2 speculative tokens"
        args: {speculative-config: {method: mtp, num_speculative_tokens: 2}}
  other:
    kind: external
    base_url: http://127.0.0.1:18998
    api_key: "sk-literal-0a1b2c3d4e5f60718293"
workloads:
  sweep: {kind: throughput, pp: [512], tg: [64], depths: [0, 2048], concurrency: [1, 4], repetitions: 3}
  accept: {kind: spec_acceptance, content: [code, json, prose], depths: [0], runs: 3, tg: 128}
  tools: {kind: scenarios, pack: mini_pack.yaml, mode: lenient}
matrix:
  engines: [vllm]
  exclude:
    - {variant: base, workload: accept}
grading:
  overrides:
    - scenario: TC-02
      engine: vllm
      variant: mtp
      verdict: pass
      reason: "500 K to K is the identity; the mention of fahrenheit is an aside"
      author: mk
      date: "2026-12-01"
    - scenario: TC-01
      verdict: fail
      reason: "bound to an older partial verdict"
      author: jd
      date: "2026-11-20"
      raw_verdict: partial
report:
  title: "Fixture study: vLLM base vs MTP"
  baseline: vllm.base
"""

# (variant, depth, concurrency) -> base effective tg t/s per request
_BASE = {0: 42.0, 2048: 31.0}
_MTP_GAIN = 1.35
_CONC_FACTOR = {1: 1.0, 4: 0.62}


def _vals(center: float, n: int, spread: float = 0.03) -> list[float]:
    # deterministic, asymmetric spread around a center
    offs = [0.0, -spread, spread * 0.7, -spread * 0.4, spread * 1.2, -spread * 1.1, spread * 0.2]
    return [round(center * (1 + offs[i % len(offs)]), 3) for i in range(n)]


def _records(
    point_id: str, variant: str, depth: int, conc: int, *, reps: int, failed: int, scale: float, ts: float
) -> list[Event]:
    """The measured requests behind a throughput point's summary (same centers and spreads), so that the
    verdicts, which test repetitions and requests, have units to work with."""
    gain = _MTP_GAIN if variant == "mtp" else 1.0
    eff = _BASE[depth] * gain * _CONC_FACTOR[conc] * scale
    n = reps * conc - failed
    ttft = (0.09 + depth * 0.00011) * (1 + 0.4 * (conc - 1)) * 1000.0
    out: list[Event] = []
    for j, (e, t) in enumerate(zip(_vals(eff, n), _vals(ttft, n, 0.05), strict=True)):
        e2e_ns = int(64 / e * 1e9)
        t_first = int(t * 1e6)
        rec = RequestRecord(
            request_id=f"{point_id}@1:r{j // conc}.{j % conc}",
            point_id=point_id,
            ok=True,
            t_send_ns=1,
            t_first_token_ns=1 + t_first,
            t_last_token_ns=1 + e2e_ns,
            t_done_ns=1 + e2e_ns,
            prompt_tokens=512 + depth,
            output_tokens=64,
            token_source="usage",
            client_output_tokens=64,
        )
        out.append(RequestFinished(ts=ts, record=rec))
    for j in range(n, n + failed):
        out.append(
            RequestFinished(
                ts=ts,
                record=RequestRecord(
                    request_id=f"{point_id}@1:r{j // conc}.{j % conc}",
                    point_id=point_id,
                    ok=False,
                    error="http 503",
                    error_kind="http",
                ),
            )
        )
    return out


def _summary(
    variant: str, depth: int, conc: int, *, reps: int, failed: int = 0, scale: float = 1.0
) -> PointSummary:
    gain = _MTP_GAIN if variant == "mtp" else 1.0
    eff = _BASE[depth] * gain * _CONC_FACTOR[conc] * scale
    n = reps * conc - failed
    prompt = 512 + depth
    ttft = (0.09 + depth * 0.00011) * (1 + 0.4 * (conc - 1)) * 1000.0
    decode = eff * 1.18
    e2e = 64 / eff * 1000.0
    srv_pre = prompt / (ttft / 1000.0) * 1.04
    hit = 0.0 if depth == 0 else 0.8
    return PointSummary(
        requests=reps * conc,
        ok=n,
        failed=failed,
        wall_s=round(e2e / 1000.0 * reps, 3),
        eff_tg_tps=stat(_vals(eff, n)),
        agg_tg_tps=round(eff * conc * 0.97, 3),
        ttft_ms=stat(_vals(ttft, n, 0.05)),
        ttfb_ms=stat(_vals(ttft * 0.1, n, 0.05)),
        prefill_tps=stat(_vals(prompt / (ttft / 1000.0), n, 0.05)),
        decode_tps=stat(_vals(decode, n)),
        itl_ms=stat(_vals(1000.0 / decode, n)),
        e2e_ms=stat(_vals(e2e, n)),
        prompt_tokens=stat([float(prompt)] * n),
        output_tokens=stat([64.0] * n),
        token_source="usage",
        cache="cold" if depth == 0 else "warm",
        server=ServerSide(
            source="vllm /metrics",
            prompt_tokens=float(prompt * n),
            generation_tokens=float(64 * n),
            prefill_tps=round(srv_pre, 3),
            decode_tps=round(decode * 1.02, 3),
            prefix_cache_hit_rate=hit,
            **(
                {
                    "spec_drafts": 900.0,
                    "spec_draft_tokens": 1800.0,
                    "spec_accepted": 1260.0,
                    "spec_acceptance_rate": 0.7,
                    "spec_acceptance_length": 2.4,
                    "spec_per_position": [0.82, 0.58],
                }
                if variant == "mtp"
                else {}
            ),
        ),
    )


def _spec_accept_summary(content: str) -> PointSummary:
    rate = {"code": 0.78, "json": 0.86, "prose": 0.52}[content]
    drafts = 300.0
    draft_tokens = drafts * 2
    accepted = round(draft_tokens * rate, 1)
    eff = 50.0 * (1 + rate * 0.6)
    return PointSummary(
        requests=3,
        ok=3,
        wall_s=8.0,
        eff_tg_tps=stat(_vals(eff, 3)),
        decode_tps=stat(_vals(eff * 1.15, 3)),
        ttft_ms=stat(_vals(95.0, 3)),
        output_tokens=stat([128.0] * 3),
        token_source="usage",
        cache="cold",
        server=ServerSide(
            source="vllm /metrics",
            generation_tokens=384.0,
            decode_tps=round(eff * 1.17, 3),
            spec_drafts=drafts,
            spec_draft_tokens=draft_tokens,
            spec_accepted=accepted,
            spec_acceptance_rate=round(accepted / draft_tokens, 4),
            spec_acceptance_length=round(1 + accepted / drafts, 3),
            spec_per_position=[round(min(1.0, rate * 1.15), 3), round(rate * 0.85, 3)],
        ),
    )


# scenario verdicts per variant: which transcript ("reference" or "wrong") each scenario gets
_SCENARIO_PLAN = {
    "base": {
        "TC-01": "reference",
        "TC-02": "wrong",
        "TC-03": "reference",
        "TC-04": "wrong",
        "TC-05": "reference",
        "TC-06": "reference",
    },
    "mtp": {
        "TC-01": "reference",
        "TC-02": "wrong",
        "TC-03": "wrong",
        "TC-04": "reference",
        "TC-05": "reference",
        "TC-06": "wrong",
    },
}


def write_events(path: Path, events: list[Event]) -> None:
    path.write_bytes(b"".join(encode(e) + b"\n" for e in events))


def make_run_dir(
    root: Path,
    *,
    run_id: str = "20261202T220000Z_fx01",
    finished: bool = True,
    scale: dict[str, float] | None = None,
    with_scenarios: bool = True,
    ts0: float = 1796248800.0,
) -> Path:
    """Write a run directory under ``root`` (and its spec source dir next to it); return the run dir.

    ``scale`` multiplies the throughput of a variant (e.g. ``{"mtp": 0.5}``) to build a second run for
    comparisons. ``finished=False`` leaves out RunFinished (an interrupted run).
    """
    scale = scale or {}
    root.mkdir(parents=True, exist_ok=True)
    src = root / f"src_{run_id}"
    src.mkdir(exist_ok=True)
    (src / "fixture.yaml").write_text(SPEC_YAML, encoding="utf-8")
    shutil.copyfile(PACK_SRC, src / "mini_pack.yaml")
    run = root / run_id
    (run / "engines").mkdir(parents=True, exist_ok=True)
    (run / "spec.yaml").write_text(SPEC_YAML, encoding="utf-8")

    t = [ts0]

    def at(dt: float = 1.0) -> float:
        t[0] += dt
        return t[0]

    points: list[PlanPoint] = []
    for variant in ("base", "mtp"):
        for depth in (0, 2048):
            for conc in (1, 4):
                points.append(
                    PlanPoint(
                        point_id=f"vllm.{variant}/sweep/pp512-tg64-d{depth}-c{conc}",
                        engine="vllm",
                        variant=variant,
                        workload="sweep",
                        kind="throughput",
                        params=ThroughputParams(pp=512, tg=64, depth=depth, concurrency=conc, repetitions=3),
                        requests=3 * conc,
                    )
                )
        if variant == "mtp":
            for content in ("code", "json", "prose"):
                points.append(
                    PlanPoint(
                        point_id=f"vllm.mtp/accept/{content}-d0",
                        engine="vllm",
                        variant="mtp",
                        workload="accept",
                        kind="spec_acceptance",
                        params=AcceptanceParams(content=content, depth=0, tg=128),
                        requests=3,
                    )
                )
        if with_scenarios:
            points.append(
                PlanPoint(
                    point_id=f"vllm.{variant}/tools",
                    engine="vllm",
                    variant=variant,
                    workload="tools",
                    kind="scenarios",
                    params=ScenarioParams(pack="mini_pack.yaml"),
                    requests=6,
                )
            )

    ev: list[Event] = [
        RunStarted(
            ts=at(0),
            run_id=run_id,
            spec_name="fixture-study",
            spec_path=str(src / "fixture.yaml"),
            run_dir=str(run),
        ),
        PlanReady(ts=at(0.1), points=points, estimated_requests=sum(p.requests for p in points)),
    ]
    pack = load_pack(str(src / "mini_pack.yaml"))
    done = 0
    for variant in ("base", "mtp"):
        log_path = run / "engines" / f"vllm.{variant}.log"
        cmd = [
            "python",
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            "/models/qwen-0.5b",
            "--served-model-name",
            "qwen",
            "--port",
            "18999",
            "--max-model-len",
            "8192",
            "--enforce-eager",
            "--api-key",
            "***",
        ]
        if variant == "mtp":
            cmd += ["--speculative-config", '{"method":"mtp","num_speculative_tokens":2}']
        ev.append(
            EngineStarting(
                ts=at(), engine="vllm", variant=variant, command=cmd, log_path=str(log_path), pid=4242
            )
        )
        ev.append(
            EngineLog(
                ts=at(0.5),
                engine="vllm",
                variant=variant,
                line=f"INFO api_server.py args: api_key='{FIXTURE_API_KEY}'",
            )
        )
        ev.append(
            EngineReady(
                ts=at(70),
                engine="vllm",
                variant=variant,
                base_url="http://127.0.0.1:18999",
                model_id="qwen",
                version="0.32.0",
                startup_s=71.2,
            )
        )
        log_path.write_text(
            f"INFO starting vLLM 0.32.0\nINFO api_server.py args: api_key='{FIXTURE_API_KEY}'\n"
            "INFO Uvicorn running on http://127.0.0.1:18999\n",
            encoding="utf-8",
        )
        for p in [p for p in points if p.variant == variant]:
            ev.append(PointStarted(ts=at(), point_id=p.point_id, index=done, total=len(points)))
            if p.kind == "throughput":
                assert isinstance(p.params, ThroughputParams)
                depth, conc = p.params.depth, p.params.concurrency
                flags: list[str] = []
                status = "ok"
                failed = 0
                if variant == "base" and depth == 2048 and conc == 4:
                    failed, status = 2, "degraded"
                    flags.append("degraded:2 failed")
                s = _summary(variant, depth, conc, reps=3, failed=failed, scale=scale.get(variant, 1.0))
                if variant == "mtp" and depth == 0 and conc == 4:
                    s.client_limited = True
                    s.max_loop_lag_ms = 41.0
                    flags.append("client-limited")
                if variant == "mtp" and depth == 2048 and conc == 1:
                    s.token_disagreements = 1
                    flags.append("token-disagreement")
                if status == "degraded":
                    ev.append(
                        RunWarning(
                            ts=at(),
                            code="degraded",
                            point_id=p.point_id,
                            message="2 of 12 requests failed (http 503)",
                        )
                    )
                ev.extend(
                    _records(
                        p.point_id,
                        variant,
                        depth,
                        conc,
                        reps=3,
                        failed=failed,
                        scale=scale.get(variant, 1.0),
                        ts=at(),
                    )
                )
                ev.append(
                    PointFinished(ts=at(20), point_id=p.point_id, status=status, summary=s, flags=flags)
                )
            elif p.kind == "spec_acceptance":
                ev.append(
                    PointFinished(
                        ts=at(10),
                        point_id=p.point_id,
                        status="ok",
                        summary=_spec_accept_summary(getattr(p.params, "content", "")),
                    )
                )
            else:
                for sid, which in _SCENARIO_PLAN[variant].items():
                    sc = pack.scenario(sid)
                    tr = simulate(sc, pack, sc.reference if which == "reference" else sc.wrong)
                    verdict = "pass" if which == "reference" else "fail"
                    ev.append(
                        ScenarioGraded(
                            ts=at(2),
                            point_id=p.point_id,
                            scenario_id=sid,
                            trial=0,
                            category=sc.category,
                            verdict=verdict,
                            points=2 if verdict == "pass" else 0,
                            transcript=tr,
                            transcript_sha256=canonical_sha256(tr),
                            median_turn_ms=900.0 if variant == "base" else 700.0,
                            reasons=[] if verdict == "pass" else ["expected answer not found"],
                        )
                    )
                ev.append(
                    PointFinished(
                        ts=at(), point_id=p.point_id, status="ok", summary=PointSummary(requests=6, ok=6)
                    )
                )
            done += 1
        ev.append(EngineStopped(ts=at(), engine="vllm", variant=variant, returncode=0, reason="done"))
    if finished:
        ev.append(RunFinished(ts=at(), status="completed", points_done=done, points_total=len(points)))
    write_events(run / "events.jsonl", ev)
    env: dict[str, Any] = {
        "host": {"hostname": "bench-box", "os": "Linux 6.8", "python": "3.11.9"},
        "cpu": {"model": "AMD EPYC 7B13", "cores": 2, "threads": 2},
        "memory_gb": 7.8,
        "gpus": [],
        "engines": {
            "vllm": {
                "version": "0.32.0",
                "env": {"VLLM_API_KEY": FIXTURE_API_KEY, "VLLM_CPU_KVCACHE_SPACE": "2"},
            }
        },
    }
    (run / "env.json").write_text(json.dumps(env, indent=2), encoding="utf-8")
    resolved = {"spec": "fixture-study", "points": [p.point_id for p in points]}
    (run / "resolved.json").write_text(json.dumps(resolved, indent=2), encoding="utf-8")
    return run


# ------------------------------------------------------------------------------------ small custom sweeps


def sweep_summary(
    *,
    eff: float,
    ttft_ms: float,
    decode: float,
    agg_reps: list[float],
    conc: int,
    pp: int,
    depth: int,
    cache: str = "cold",
    hit: float | None = None,
    failed: int = 0,
    server_decode: float | None = None,
    spec_acceptance: float | None = None,
    spread: float = 0.03,
) -> PointSummary:
    """A throughput point's summary as the sweep writes it: per-request stats with a deterministic spread,
    the repetitions' aggregate tg in ``extra["reps"]`` (their mean as the point's figure)."""
    reps = len(agg_reps)
    n = reps * conc - failed
    return PointSummary(
        requests=reps * conc,
        ok=n,
        failed=failed,
        wall_s=round(reps * 32 / eff, 3),
        eff_tg_tps=stat(_vals(eff, n, spread)),
        agg_tg_tps=round(sum(agg_reps) / reps, 3),
        ttft_ms=stat(_vals(ttft_ms, n, spread)),
        prefill_tps=stat(_vals((pp + depth) / (ttft_ms / 1000.0), n, spread)),
        decode_tps=stat(_vals(decode, n, spread)),
        pooled_decode_tps=decode,
        prompt_tokens=stat([float(pp + depth)] * n),
        output_tokens=stat([32.0] * n),
        token_source="timings",
        cache=cache,
        server=ServerSide(
            source="llamacpp /metrics + timings",
            decode_tps=server_decode if server_decode is not None else decode,
            prefix_cache_hit_rate=hit,
            **(
                {"spec_drafts": 100.0, "spec_draft_tokens": 300.0, "spec_accepted": 300.0 * spec_acceptance}
                | {"spec_acceptance_rate": spec_acceptance}
                if spec_acceptance is not None
                else {}
            ),
        ),
        extra={
            "reps": [
                {"rep": i, "wall_s": 1.0, "ok": conc, "failed": 0, "agg_tg_tps": a}
                for i, a in enumerate(agg_reps)
            ]
        },
    )


def make_custom_run(
    root: Path,
    spec_yaml: str,
    points: list[tuple[PlanPoint, str, PointSummary | None, list[str]]],
    *,
    run_id: str = "20261204T120000Z_cu01",
    env_engines: dict[str, Any] | None = None,
    graded: list[ScenarioGraded] | None = None,
    ts0: float = 1796400000.0,
) -> Path:
    """A run directory from explicit points: (plan point, status, summary or None, flags) in run order, one
    engine session per engine.variant; ``env_engines`` becomes env.json's ``engines`` (e.g. prefix_caching)."""
    run = root / run_id
    (run / "engines").mkdir(parents=True, exist_ok=True)
    (run / "spec.yaml").write_text(spec_yaml, encoding="utf-8")
    t = [ts0]

    def at(dt: float = 1.0) -> float:
        t[0] += dt
        return t[0]

    plan = [p for p, _, _, _ in points]
    ev: list[Event] = [
        RunStarted(ts=at(0), run_id=run_id, spec_name="custom", spec_path="spec.yaml", run_dir=str(run)),
        PlanReady(ts=at(0.1), points=plan, estimated_requests=sum(p.requests for p in plan)),
    ]
    started: set[str] = set()
    for i, (p, status, summary, flags) in enumerate(points):
        key = f"{p.engine}.{p.variant}"
        if key not in started:
            started.add(key)
            ev.append(EngineStarting(ts=at(), engine=p.engine, variant=p.variant, command=["llama-server"]))
            ev.append(
                EngineReady(
                    ts=at(5), engine=p.engine, variant=p.variant, base_url="http://127.0.0.1:1", model_id="m"
                )
            )
        ev.append(PointStarted(ts=at(), point_id=p.point_id, index=i, total=len(points)))
        ev.extend(g for g in graded or [] if g.point_id == p.point_id)
        ev.append(
            PointFinished(
                ts=at(10), point_id=p.point_id, status=status, summary=summary or PointSummary(), flags=flags
            )
        )
    ev.append(RunFinished(ts=at(), status="completed", points_done=len(points), points_total=len(points)))
    write_events(run / "events.jsonl", ev)
    env = {"host": {"hostname": "cpu-box"}, "engines": env_engines or {}}
    (run / "env.json").write_text(json.dumps(env, indent=2), encoding="utf-8")
    return run


def sweep_point(
    engine: str,
    variant: str,
    workload: str,
    *,
    pp: int,
    tg: int,
    depth: int,
    conc: int,
    reps: int = 3,
    cache: str = "cold",
) -> PlanPoint:
    return PlanPoint(
        point_id=f"{engine}.{variant}/{workload}/pp{pp}-tg{tg}-d{depth}-c{conc}",
        engine=engine,
        variant=variant,
        workload=workload,
        kind="throughput",
        params=ThroughputParams(
            pp=pp,
            tg=tg,
            depth=depth,
            concurrency=conc,
            repetitions=reps,
            cache=cache,  # type: ignore[arg-type]
        ),
        requests=reps * conc,
    )


def calibrate_host(run_dir: Path, sigma: float = 0.02, sessions: int = 9) -> None:
    """Store a session-noise floor for every shape and metric of ``run_dir``'s points under its host, in
    the per-user history (as `bench-tui calibrate` on that host would have)."""
    from bench_tui.reports import floors, history, verdict
    from bench_tui.reports.model import load_run

    m = load_run(run_dir)
    host = floors.host_identity(m.env)
    con = history.connect(history.user_db())
    with con:
        for p in m.points:
            if p.kind not in ("throughput", "spec_acceptance"):
                continue
            for metric in verdict.METRICS:
                con.execute(
                    "INSERT OR REPLACE INTO floors VALUES (?,?,?,?,?,?,?,?,?,?)",
                    (
                        "calib",
                        host,
                        "2026-12-03",
                        floors.engine_kind(m, p.key),
                        floors.shape_key(p),
                        metric.key,
                        sigma,
                        0.0001,
                        sessions - 1,
                        sessions,
                    ),
                )
    con.close()
