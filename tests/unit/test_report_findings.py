"""The findings of one run (reports/findings.py) on recorded runs (tests/fixtures_runs.py): scaling with depth
and concurrency, cache and speculation multipliers, scores by category, flagged points; every cite names a
cell of the run, ratios carry their range, and a direction is stated only when the intervals do not
overlap; flagged points never enter a ratio."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from bench_tui.events import PointSummary, ScenarioGraded, read_events
from bench_tui.reports.findings import (
    CACHE,
    CONCURRENCY,
    DEPTH,
    FLAGGED,
    SCORES,
    SPECULATION,
    Finding,
    findings,
)
from bench_tui.reports.model import RunModel, load_run
from bench_tui.reports.render import build_view, render
from fixtures_runs import (
    API_KEY_ENV,
    FIXTURE_API_KEY,
    make_custom_run,
    make_run_dir,
    sweep_point,
    sweep_summary,
    write_events,
)

RECORDED = Path(__file__).parent / "data" / "runs" / "scripted_resume"

SPEC = """\
version: 1
name: custom
engines:
  llama:
    kind: llamacpp
    model: /models/m.gguf
    variants: {VARIANTS}
workloads:
{WORKLOADS}
"""


def _spec(variants: str, workloads: dict[str, str]) -> str:
    wl = "\n".join(
        f"  {name}: {{kind: throughput, pp: [256], tg: [32], depths: [0, 512], concurrency: [1, 4], "
        f"repetitions: 3, cache: {cache}}}"
        for name, cache in workloads.items()
    )
    return SPEC.replace("{VARIANTS}", variants).replace("{WORKLOADS}", wl)


def cell_exists(m: RunModel, cite: str) -> bool:
    """Whether a cite names a measured cell of the run (parsed here, independently of findings.cell_id)."""
    parts = cite.split(" · ")
    key, wl = parts[0], parts[1]
    where = parts[2] if len(parts) > 2 else ""
    if where == "overall" or where.startswith("category "):
        for r in m.scores:
            if f"{r.engine}.{r.variant}" == key.split(" [")[0] and r.workload == wl:
                return where == "overall" or where[len("category ") :] in r.adjusted.categories
        return False
    for p in m.points:
        if p.key != key or p.workload != wl:
            continue
        if p.kind == "throughput":
            mt = re.fullmatch(r"pp(\d+) tg(\d+) d(\d+) c(\d+)", where)
            if mt and tuple(map(int, mt.groups())) == (p.pp, p.tg, p.depth, p.concurrency):
                return True
        elif p.kind == "spec_acceptance":
            if where == f"{p.content} d{p.depth}":
                return True
        elif where == "":
            return True
    return False


def _check_cites(m: RunModel, found: list[Finding]) -> None:
    assert found
    for f in found:
        assert f.cites, f.text
        for c in f.cites:
            assert cell_exists(m, c), (c, f.text)
            assert f"[{c}]" in f.text, (c, f.text)


def _ratio(text: str, label: str) -> tuple[float, float, float, str]:
    """(ratio, range low, range high, verdict word) of one metric's phrase in a finding."""
    mt = re.search(
        re.escape(label) + r" [\d.]+ → [\d.]+ \S+ ×([\d.]+) \(range ×([\d.]+)–([\d.]+), ([^)]*)\)", text
    )
    assert mt, (label, text)
    return float(mt.group(1)), float(mt.group(2)), float(mt.group(3)), mt.group(4)


def _expected(
    a: PointSummary, b: PointSummary, key: str, threshold: float = 5.0
) -> tuple[float, float, float, str]:
    sa, sb = getattr(a, key), getattr(b, key)
    lo, hi = sb.ci_low / sa.ci_high, sb.ci_high / sa.ci_low
    if sb.ci_low <= sa.ci_high and sb.ci_high >= sa.ci_low:
        word = "intervals overlap: no difference stated"
    elif 1 - threshold / 100 < lo < 1 + threshold / 100 or 1 - threshold / 100 < hi < 1 + threshold / 100:
        word = f"within ±{threshold:g} %: no difference stated"
    else:
        word = "higher" if lo > 1 else "lower"
    return sb.median / sa.median, lo, hi, word


# ---------------------------------------------------------------------------------------- throughput only


@pytest.fixture
def throughput_run(tmp_path):
    pts = []
    shapes = {  # (depth, conc) -> eff, ttft ms, decode, aggregate tg of the 3 repetitions
        (0, 1): (30.0, 2500.0, 32.0, [29.0, 30.0, 31.0]),
        (512, 1): (24.0, 7500.0, 31.5, [23.0, 24.0, 25.0]),  # decode barely moves: the intervals overlap
        (0, 4): (18.0, 6000.0, 20.0, [70.0, 72.0, 74.0]),
        (512, 4): (12.0, 16000.0, 15.0, [50.0, 52.0, 53.0]),
    }
    for (d, c), (eff, ttft, dec, agg) in shapes.items():
        s = sweep_summary(eff=eff, ttft_ms=ttft, decode=dec, agg_reps=agg, conc=c, pp=256, depth=d)
        pts.append((sweep_point("llama", "default", "sweep", pp=256, tg=32, depth=d, conc=c), "ok", s, []))
    return make_custom_run(tmp_path / "runs", _spec("{default: {}}", {"sweep": "cold"}), pts)


def test_throughput_only_run_states_depth_and_concurrency_scaling(throughput_run):
    m = load_run(throughput_run)
    found = findings(m)
    _check_cites(m, found)
    assert [f.kind for f in found] == [DEPTH, CONCURRENCY]  # nothing else holds in this run
    s = {(p.depth, p.concurrency): p.summary for p in m.points}
    depth, conc = found
    assert "llama.default `sweep` pp256 tg32, depth 0 → 512 at c1" in depth.text
    assert depth.cites == [
        "llama.default · sweep · pp256 tg32 d0 c1",
        "llama.default · sweep · pp256 tg32 d512 c1",
    ]
    for label, key in (("TTFT", "ttft_ms"), ("prefill", "prefill_tps"), ("decode", "decode_tps")):
        got = _ratio(depth.text, label)
        want = _expected(s[(0, 1)], s[(512, 1)], key)
        assert got[:3] == pytest.approx(want[:3], abs=0.006) and got[3] == want[3], label
    assert "TTFT 2500 → 7500 ms ×3.00" in depth.text and _ratio(depth.text, "TTFT")[3] == "higher"
    # decode 32.0 → 31.5 with 3 % spreads: measured ratio given, no direction claimed
    assert _ratio(depth.text, "decode")[3] == "intervals overlap: no difference stated"
    # concurrency: aggregate tg over the repetitions' range, the per-request decode beside it
    assert (
        "concurrency 1 → 4 at d0" in conc.text
        and "the pooling multiplier of 4 concurrent requests" in conc.text
    )
    r, lo, hi, word = _ratio(conc.text, "aggregate tg")
    assert (r, lo, hi) == pytest.approx(
        (72.0 / 30.0, 70.0 / 31.0, 74.0 / 29.0), abs=0.006
    ) and word == "higher"
    r, lo, hi, word = _ratio(conc.text, "decode")
    assert word == "lower" and r == pytest.approx(20.0 / 32.0, abs=0.006)
    assert "faster" not in " ".join(f.text for f in found)


def test_every_engine_session_gets_its_own_findings(tmp_path):
    """Two engine sessions of one variant: each session's depth and concurrency findings come from its own
    points and cite them as ``engine.variant#k``; no ratio mixes the sessions (it read only the first)."""
    import msgspec

    ttft = {1: (2500.0, 7500.0), 2: (2000.0, 9000.0)}  # the second session scales differently
    pts = []
    for k in (1, 2):
        for (d, c), (eff, dec, agg) in {
            (0, 1): (30.0, 32.0, [29.0, 30.0, 31.0]),
            (512, 1): (24.0, 31.5, [23.0, 24.0, 25.0]),
            (0, 4): (18.0, 20.0, [70.0, 72.0, 74.0]),
            (512, 4): (12.0, 15.0, [50.0, 52.0, 53.0]),
        }.items():
            t = ttft[k][0 if d == 0 else 1] * (2 if c == 4 else 1)
            s = sweep_summary(eff=eff, ttft_ms=t, decode=dec, agg_reps=agg, conc=c, pp=256, depth=d)
            p = sweep_point("llama", "default", "sweep", pp=256, tg=32, depth=d, conc=c)
            p = msgspec.structs.replace(p, point_id=f"{p.point_id}@s{k}", session=k)
            pts.append((p, "ok", s, []))
    m = load_run(make_custom_run(tmp_path / "runs", _spec("{default: {}}", {"sweep": "cold"}), pts))
    depth = [f for f in findings(m) if f.kind == DEPTH]
    assert len(depth) == 2
    for k, f in zip((1, 2), depth, strict=True):
        assert f.cites == [
            f"llama.default#{k} · sweep · pp256 tg32 d0 c1",
            f"llama.default#{k} · sweep · pp256 tg32 d512 c1",
        ]
        lo, hi = ttft[k]
        assert f"TTFT {lo:.0f} → {hi:.0f} ms ×{hi / lo:.2f}" in f.text, f.text
    assert len([f for f in findings(m) if f.kind == CONCURRENCY]) == 2


def test_recorded_runner_run_states_no_direction_inside_the_threshold(tmp_path):
    """A run the real runner recorded (scripted server): TTFT at d32 is 1 % below d0 with intervals that do not
    overlap; inside the 5 % practical threshold no direction is stated, the measured ratio still is."""
    run = tmp_path / "runs" / "scripted_resume"
    shutil.copytree(RECORDED, run)
    m = load_run(run)
    found = findings(m)
    _check_cites(m, found)
    depth = next(f for f in found if f.kind == DEPTH)
    a, b = (p.summary for p in sorted(m.points, key=lambda p: p.depth) if p.concurrency == 1)
    for label, key in (("TTFT", "ttft_ms"), ("prefill", "prefill_tps")):
        got, want = _ratio(depth.text, label), _expected(a, b, key)
        assert got[:3] == pytest.approx(want[:3], abs=0.006) and got[3] == want[3], label
    assert _ratio(depth.text, "TTFT")[3] == "within ±5 %: no difference stated"
    assert _ratio(depth.text, "prefill")[3] == "higher"


def test_summary_leads_the_report_and_setup_is_in_the_appendix(throughput_run):
    m = load_run(throughput_run)
    view = build_view(m)
    ids = [s.id for s in view["sections"]]
    assert ids == ["summary", "throughput", "server", "setup", "host", "definitions"]
    assert [s.appendix for s in view["sections"]] == [False, False, False, True, True, True]
    md = render(m, "md")
    summary = md.split("## Summary", 1)[1].split("## Caveats", 1)[0]
    for f in findings(m):
        assert f"- {f.text}" in summary
    assert md.index("## Caveats") < md.index("## Throughput") < md.index("# Appendix") < md.index("## Setup")
    assert md.index("## Setup") < md.index("## Host and environment") < md.index("## Definitions")
    assert md.index("Host and hardware (env.json)") > md.index("# Appendix")
    assert md.index("## Definitions") < md.index("## Spec (as given)")
    html = render(m, "html")
    assert html.index('id="summary"') < html.index('id="throughput"') < html.index('<h1 id="appendix">')
    assert html.index('<h1 id="appendix">') < html.index('id="host"')
    assert "llama.default `sweep` pp256 tg32, depth 0 → 512 at c1" in html.split('id="throughput"')[0]


# ------------------------------------------------------------------------------------------ warm and cold


@pytest.fixture
def cache_run(tmp_path):
    pts = []
    for variant, hits in (("nocache", False), ("default", True)):
        for wl, layout in (("sweep_cold", "cold"), ("sweep_warm", "warm")):
            for d in (0, 2048):
                shared = hits and layout == "warm" and d > 0
                ttft = 1500.0 if shared else (2000.0 if d == 0 else 9000.0)
                s = sweep_summary(
                    eff=20.0,
                    ttft_ms=ttft,
                    decode=25.0,
                    agg_reps=[19.0, 20.0, 21.0],
                    conc=1,
                    pp=256,
                    depth=d,
                    cache=layout,
                    hit=0.85 if shared else 0.0,
                )
                pts.append(
                    (
                        sweep_point("llama", variant, wl, pp=256, tg=32, depth=d, conc=1, cache=layout),
                        "ok",
                        s,
                        [],
                    )
                )
    env = {"llama.nocache": {"prefix_caching": "off"}, "llama.default": {"prefix_caching": "on"}}
    spec = _spec(
        "{nocache: {args: {no-cache-prompt: true}}, default: {}}",
        {"sweep_cold": "cold", "sweep_warm": "warm"},
    )
    return make_custom_run(tmp_path / "runs", spec, pts, env_engines=env)


def test_warm_vs_cold_variants_and_workloads(cache_run):
    m = load_run(cache_run)
    found = findings(m)
    _check_cites(m, found)
    cache = {f.text.split(" at d", 1)[0]: f for f in found if f.kind == CACHE}
    # prefix caching off -> on, two variants of one engine (from env.json, not the variants' names)
    on = cache["llama prefix caching off → on (llama.nocache → llama.default), `sweep_warm`"]
    assert on.cites == [
        "llama.nocache · sweep_warm · pp256 tg32 d2048 c1",
        "llama.default · sweep_warm · pp256 tg32 d2048 c1",
    ]  # the largest depth: where the shared prefix is
    r, lo, hi, word = _ratio(on.text, "TTFT")
    assert r == pytest.approx(1500.0 / 9000.0, abs=0.006) and word == "lower" and lo < r < hi
    assert "prefix-cache hit rate 0.0 % → 85.0 %" in on.text
    # the same variants on cold prompts: the ratio is measured, nothing is claimed
    off = cache["llama prefix caching off → on (llama.nocache → llama.default), `sweep_cold`"]
    assert _ratio(off.text, "TTFT")[3] == "intervals overlap: no difference stated"
    # two workloads of one variant: cold vs warm prompt layout
    layout = cache["llama.default prompt layout, cold `sweep_cold` → warm `sweep_warm`"]
    assert _ratio(layout.text, "TTFT")[3] == "lower" and "0.0 % → 85.0 %" in layout.text
    nolayout = cache["llama.nocache prompt layout, cold `sweep_cold` → warm `sweep_warm`"]
    assert _ratio(nolayout.text, "TTFT")[3] == "intervals overlap: no difference stated"
    assert not [f for f in found if f.kind in (SPECULATION, SCORES, FLAGGED)]


# ------------------------------------------------------------------- scores by category, speculation, flags


@pytest.fixture
def fixture_run(tmp_path, monkeypatch):
    monkeypatch.setenv(API_KEY_ENV, FIXTURE_API_KEY)
    return make_run_dir(tmp_path / "runs")


def test_scenario_pack_by_category(fixture_run):
    m = load_run(fixture_run)
    found = findings(m)
    _check_cites(m, found)
    scores = {f.cites[0]: f for f in found if f.kind == SCORES}
    assert set(scores) == {"vllm.base · tools · overall", "vllm.mtp · tools · overall"}
    for rep in m.scores:
        f = scores[f"{rep.engine}.{rep.variant} · tools · overall"]
        cats = {n: b.score for n, b in rep.adjusted.categories.items()}
        best, worst = max(cats.values()), min(cats.values())
        assert f"at {best:.1f} %" in f.text and f"at {worst:.1f} %" in f.text
        strongest = f.text.split("strongest ", 1)[1].split(" at ", 1)[0]
        weakest = f.text.split("weakest ", 1)[1].split(" at ", 1)[0]
        for n, v in cats.items():  # every tied category named (at most 5 a side), and only those
            assert (n in strongest) == (v == best) and (n in weakest) == (v == worst), (n, f.text)
        for n, v in cats.items():
            assert (f"[{rep.engine}.{rep.variant} · tools · category {n}]" in f.text) == (v in (best, worst))
        assert "no harness errors" in f.text
    assert "tool-call score 66.7 % (raw 50.0 %)" in scores["vllm.mtp · tools · overall"].text
    assert "safety-critical not all passed: TC-03#0" in scores["vllm.mtp · tools · overall"].text


def test_harness_errors_are_counted_apart(fixture_run):
    evs = read_events(str(fixture_run / "events.jsonl"))
    for i, e in enumerate(evs):
        if isinstance(e, ScenarioGraded) and e.point_id == "vllm.base/tools" and e.scenario_id == "TC-06":
            evs[i] = ScenarioGraded(
                ts=e.ts,
                point_id=e.point_id,
                scenario_id=e.scenario_id,
                trial=e.trial,
                category=e.category,
                verdict=None,
                points=None,
                outcome="harness_error",
                reasons=["timeout after 300 s"],
            )
    write_events(fixture_run / "events.jsonl", evs)
    m = load_run(fixture_run)
    base = next(f for f in findings(m) if f.kind == SCORES and f.cites[0].startswith("vllm.base"))
    assert "over 5 scored of 6 scenario-trials" in base.text
    assert "harness errors 1 (counted apart from the model's score)" in base.text


def test_speculation_multiplier_and_acceptance_by_content(fixture_run):
    m = load_run(fixture_run)
    spec = [f for f in findings(m) if f.kind == SPECULATION]
    _check_cites(m, spec)
    sweep, accept = spec
    assert sweep.cites == ["vllm.base · sweep · pp512 tg64 d0 c1", "vllm.mtp · sweep · pp512 tg64 d0 c1"]
    a, b = (m.point(f"vllm.{v}/sweep/pp512-tg64-d0-c1").summary for v in ("base", "mtp"))  # type: ignore[union-attr]
    got, want = _ratio(sweep.text, "decode"), _expected(a, b, "decode_tps")
    assert got[:3] == pytest.approx(want[:3], abs=0.006) and got[3] == want[3] == "higher"
    assert "acceptance 70.0 %" in sweep.text
    # highest acceptance first, each content citing its point
    assert re.search(r"json d0 86\.0 % .*code d0 78\.0 % .*prose d0 52\.0 %", accept.text)


def test_fixture_flags_are_named_and_kept_out_of_ratios(fixture_run):
    m = load_run(fixture_run)
    found = findings(m)
    flagged = {f.text.split(":", 1)[0]: f for f in found if f.kind == FLAGGED}
    assert flagged[
        "1 point(s) degraded (some requests failed; numbers from the successful ones only)"
    ].cites == ["vllm.base · sweep · pp512 tg64 d2048 c4"]
    # vllm.mtp's concurrency ratio skips d0 (its c4 point is client-limited) and says so
    conc = next(f for f in found if f.kind == CONCURRENCY and f.text.startswith("vllm.mtp"))
    assert "at d2048" in conc.text
    assert conc.text.endswith("left out: [vllm.mtp · sweep · pp512 tg64 d0 c4] client-limited.")


@pytest.fixture
def flagged_run(tmp_path):
    def pt(variant, wl, d, c, status="ok", flags=(), failed=0, server_decode=None, measured=True):
        s = (
            sweep_summary(
                eff=20.0 - d / 100,
                ttft_ms=2000.0 + 10 * d,
                decode=25.0 / c,
                agg_reps=[19.0 * c**0.5, 20.0 * c**0.5, 21.0 * c**0.5],
                conc=c,
                pp=256,
                depth=d,
                failed=failed,
                server_decode=server_decode,
            )
            if measured
            else None
        )
        return (sweep_point("llama", variant, wl, pp=256, tg=32, depth=d, conc=c), status, s, list(flags))

    starved = "starved:c1 decode 0.6 t/s is 5 % of this engine's first c1 figure (12.9 t/s at x): busy cores"
    gap = "server-decode-differs:server 1.3 vs client median 2.4 t/s (pooling: the server divides ...)"
    pts = [
        pt("a", "sweep", 0, 1),
        pt("a", "sweep", 512, 1, "degraded", ["degraded:2/3 failed"], failed=2),
        pt("a", "sweep", 0, 4, "ok", ["client-limited"]),
        pt("a", "sweep", 512, 4, "ok", [starved]),
        pt("b", "sweep", 0, 1),
        pt("b", "sweep", 512, 1, "degraded", ["stalled:180s"]),
        pt("b", "sweep", 0, 4),
        pt("b", "sweep", 512, 4, "ok", [gap], server_decode=1.3),
        pt("b", "extra", 0, 1, "failed", ["engine-crashed"], measured=False),
    ]
    spec = _spec("{a: {}, b: {}}", {"sweep": "cold", "extra": "cold"})
    return load_run(make_custom_run(tmp_path / "runs", spec, pts))


def test_flagged_points_are_named_never_averaged_in(flagged_run):
    m = flagged_run
    found = findings(m)
    _check_cites(m, found)
    excluded = {
        "llama.a · sweep · pp256 tg32 d512 c1",
        "llama.a · sweep · pp256 tg32 d0 c4",
        "llama.a · sweep · pp256 tg32 d512 c4",
        "llama.b · sweep · pp256 tg32 d512 c1",
    }
    # a ratio never rests on an excluded point: excluded cells appear only after "left out:"
    for f in found:
        if f.kind in (DEPTH, CONCURRENCY, CACHE, SPECULATION):
            stated = f.text.split("left out:", 1)[0]
            if "no ratio is stated" in stated:
                continue
            assert not any(f"[{c}]" in stated for c in excluded), f.text
    # llama.a: every depth pair holds a flagged point -> no ratio, and the flagged points named
    a_depth = next(f for f in found if f.kind == DEPTH and f.text.startswith("llama.a"))
    assert "depth 0 → 512: no ratio is stated" in a_depth.text and "×" not in a_depth.text
    assert "[llama.a · sweep · pp256 tg32 d512 c1] degraded" in a_depth.text
    assert "[llama.a · sweep · pp256 tg32 d0 c4] client-limited" in a_depth.text
    assert "[llama.a · sweep · pp256 tg32 d512 c4] starved" in a_depth.text
    # llama.b: c1 holds the stalled point, so the depth ratio is stated at c4 and says what it left out
    b_depth = next(f for f in found if f.kind == DEPTH and f.text.startswith("llama.b"))
    assert "depth 0 → 512 at c4" in b_depth.text
    assert "left out: [llama.b · sweep · pp256 tg32 d512 c1] degraded, stalled" in b_depth.text
    b_conc = next(f for f in found if f.kind == CONCURRENCY and f.text.startswith("llama.b"))
    assert "concurrency 1 → 4 at d0" in b_conc.text and "left out" not in b_conc.text
    # each flag named once with its points and detail; the excluding ones say they were left out
    flagged = {f.text.split(" (", 1)[0].split(": ", 1)[0]: f for f in found if f.kind == FLAGGED}
    text = {k: f.text for k, f in flagged.items()}
    assert set(flagged) == {
        "1 point(s) failed",
        "2 point(s) degraded",
        "1 point(s) client-limited",
        "1 point(s) starved",
        "1 point(s) stalled",
        "1 point(s) server decode differs from the client's median request by over 25 %",
    }
    assert "[llama.b · extra · pp256 tg32 d0 c1] (engine-crashed)" in text["1 point(s) failed"]
    assert "(c1 decode 0.6 t/s is 5 % of this engine's first c1 figure)" in text["1 point(s) starved"]
    assert (
        "(server 1.3 vs client median 2.4 t/s)"
        in text["1 point(s) server decode differs from the client's median request by over 25 %"]
    )
    for k in ("2 point(s) degraded", "1 point(s) client-limited", "1 point(s) starved", "1 point(s) stalled"):
        assert text[k].endswith("Left out of every ratio above."), k
    assert (
        "Left out"
        not in text["1 point(s) server decode differs from the client's median request by over 25 %"]
    )
