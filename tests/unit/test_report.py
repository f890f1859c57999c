"""report.md / report.html rendered from a recorded run (tests/fixtures_runs.py): sections, traceable numbers,
caveats, marks, self-contained HTML."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import pytest

from bench_tui.events import PlanReady, PointFinished, RunFinished, encode, read_events
from bench_tui.reports.model import load_run
from bench_tui.reports.render import render, write_reports
from fixtures_runs import API_KEY_ENV, FIXTURE_API_KEY, FIXTURE_LITERAL_KEY, make_run_dir


@pytest.fixture
def run(tmp_path, monkeypatch):
    monkeypatch.setenv(API_KEY_ENV, FIXTURE_API_KEY)
    return make_run_dir(tmp_path / "runs")


def _summaries(run: Path) -> dict[str, PointFinished]:
    return {e.point_id: e for e in read_events(str(run / "events.jsonl")) if isinstance(e, PointFinished)}


def _md_table(md: str, title_part: str) -> tuple[list[str], list[list[str]]]:
    lines = md.splitlines()
    i = next(i for i, ln in enumerate(lines) if ln.startswith("**") and title_part in ln)
    rows = []
    j = i + 1
    while not lines[j].startswith("|"):
        j += 1
    while j < len(lines) and lines[j].startswith("|"):
        rows.append([c.strip() for c in lines[j].strip().strip("|").split(" | ")])
        j += 1
    return rows[0], [r for r in rows[2:]]


def test_write_reports_writes_formats_and_sections(run):
    paths = write_reports(run)
    assert sorted(p.name for p in paths) == ["report.html", "report.md"]
    md = (run / "report.md").read_text()
    for heading in (
        "# Fixture study: vLLM base vs MTP",
        "## Caveats",
        "## Setup",
        "## Throughput",
        "## Server-side reference",
        "## Speculative decoding acceptance",
        "## Tool-call scores",
        "### Overrides",
        "## Spec (as given)",
    ):
        assert heading in md, heading
    for table in (
        "effective tg t/s (depth × concurrency)",
        "TTFT ms (depth × concurrency)",
        "prefill t/s (depth",
        "decode t/s (depth",
        "Server-side prefill per point",
        "Server-side decode per point",
        "Acceptance per point",
        "Scores (raw vs adjusted)",
        "Categories",
        "Difficulty tiers",
        "Scenarios (raw → adjusted",
    ):
        assert f"{table}" in md, table
    # each headline number says what it is
    assert "eff tg t/s = output tokens / (t_done − t_send)" in md
    assert "TTFT ms = t_first_token − t_send: first token of any channel" in md
    assert "not the first SSE event" in md
    # setup: exact commands and versions and hardware
    assert '--speculative-config \'{"method":"mtp","num_speculative_tokens":2}\'' in md
    assert "| vllm.mtp | 0.32.0 | qwen |" in md
    assert "AMD EPYC 7B13" in md
    assert (run / "scores.json").is_file()


def test_summary_comes_first(run):
    from fixtures_runs import calibrate_host

    calibrate_host(run)  # one session a side: claims need this host's measured session noise
    md = render(load_run(run), "md")
    assert md.index("## Summary") < md.index("## Variants against the baseline") < md.index("## Caveats")
    assert md.index("## Caveats") < md.index("## Throughput") < md.index("# Appendix") < md.index("## Setup")
    summary = md.split("## Summary", 1)[1].split("## Variants against the baseline", 1)[0]
    # the findings: scores by category and acceptance by content, each citing its cells
    assert "vllm.mtp `tools` tool-call score 66.7 % (raw 50.0 %)" in summary
    assert "prose d0 52.0 %" in summary and "[vllm.mtp · accept · prose d0]" in summary
    verdicts = md.split("## Variants against the baseline", 1)[1].split("## Caveats", 1)[0]
    # the verdicts of reports.verdict: claims cite their cell; marked points are named, never claimed
    assert "`sweep`: vllm.mtp vs vllm.base: better: " in verdicts
    assert "decode 44.1 % higher at pp512 tg64 d2048 c1 [decode t/s · sweep pp512 tg64 d2048 c1]" in verdicts
    assert "not claimed (client-limited, degraded) in 16: pp512 tg64 d0 c4, pp512 tg64 d2048 c4" in verdicts
    assert (
        "speculative vs plain decoding (vllm.mtp / vllm.base): better: decode 1.44× at pp512 tg64 d2048 c1"
        in verdicts
    )
    assert "lies beyond ±5 %" in verdicts and "faster by" not in md  # the test and threshold are stated


def test_throughput_numbers_trace_to_events(run):
    write_reports(run)
    md = (run / "report.md").read_text()
    pf = _summaries(run)
    heads, rows = _md_table(md, "effective tg t/s (depth × concurrency)")
    assert heads[0] == "depth" and len(heads) == 5
    checked = 0
    for row in rows:
        depth = int(row[0])
        for head, cell in zip(heads[1:], row[1:], strict=True):
            variant, conc = head.split(" c")
            pid = f"{variant}/sweep/pp512-tg64-d{depth}-c{conc}"
            st = pf[pid].summary.eff_tg_tps
            m = re.match(r"([\d.]+) \[([\d.]+)–([\d.]+)\]", cell)
            assert m, cell
            assert float(m.group(1)) == pytest.approx(st.median, abs=0.051)
            assert float(m.group(2)) == pytest.approx(st.ci_low, abs=0.051)
            assert float(m.group(3)) == pytest.approx(st.ci_high, abs=0.051)
            checked += 1
    assert checked == 8
    # TTFT table the same way
    heads, rows = _md_table(md, "TTFT ms (depth × concurrency)")
    for row in rows:
        for head, cell in zip(heads[1:], row[1:], strict=True):
            variant, conc = head.split(" c")
            st = pf[f"{variant}/sweep/pp512-tg64-d{row[0]}-c{conc}"].summary.ttft_ms
            assert float(cell.split(" ")[0]) == pytest.approx(st.median, abs=0.051)
    # server-side tables: server decode t/s and prefix-cache hit rate per point
    heads, rows = _md_table(md, "Server-side decode per point")
    col = heads.index("server decode t/s")
    for row in rows:
        assert float(row[col]) == pytest.approx(pf[row[0]].summary.server.decode_tps, abs=0.051)
    heads, rows = _md_table(md, "Server-side prefill per point")
    hit = heads.index("prefix-cache hit")
    for row in rows:
        sv = pf[row[0]].summary.server
        assert float(row[hit].rstrip("%")) == pytest.approx(100 * sv.prefix_cache_hit_rate, abs=0.051)
    # spec acceptance by content
    heads, rows = _md_table(md, "Acceptance per point")
    acc = {r[0]: float(r[heads.index("acceptance rate")].rstrip("%")) for r in rows}
    for c in ("code", "json", "prose"):
        pid = f"vllm.mtp/accept/{c}-d0"
        assert acc[pid] == pytest.approx(100 * pf[pid].summary.server.spec_acceptance_rate, abs=0.051)


def test_degraded_and_client_limited_are_marked_not_hidden(run):
    md = render(load_run(run), "md")
    heads, rows = _md_table(md, "effective tg t/s (depth × concurrency)")
    by = {(r[0], h): c for r in rows for h, c in zip(heads[1:], r[1:], strict=True)}
    assert by[("2048", "vllm.base c4")].endswith("⚠")
    assert by[("0", "vllm.mtp c4")].endswith("†")
    assert by[("2048", "vllm.mtp c1")].endswith("‡")
    assert not by[("0", "vllm.base c1")].endswith(("⚠", "†", "‡"))
    caveats = md.split("## Caveats", 1)[1].split("## Throughput", 1)[0]
    assert "vllm.base/sweep/pp512-tg64-d2048-c4 is degraded" in caveats
    assert "vllm.mtp/sweep/pp512-tg64-d0-c4 may be client-limited" in caveats
    assert "vllm.mtp/sweep/pp512-tg64-d2048-c1: the server's token count and the client's disagree" in caveats
    assert "cold: 7 point(s); warm: 4 point(s)" in caveats
    assert "override [1] for TC-01#0 is stale" in caveats
    assert "incomplete" not in caveats


def test_scores_raw_and_adjusted_with_override_footnotes(run):
    md = render(load_run(run), "md")
    heads, rows = _md_table(md, "Scores (raw vs adjusted)")
    score = next(r for r in rows if r[0] == "score")
    assert heads[1:] == ["vllm.base raw", "vllm.base adjusted", "vllm.mtp raw", "vllm.mtp adjusted"]
    assert score[1:] == ["66.7", "66.7", "50.0", "66.7"]  # mtp: TC-02 overridden fail -> pass
    heads, rows = _md_table(md, "Scenarios (raw → adjusted")
    tc02 = next(r for r in rows if r[0] == "TC-02#0")
    assert tc02[heads.index("vllm.mtp")] == "fail → pass [1]"
    assert tc02[-1] == "differs"
    overrides = md.split("### Overrides", 1)[1]
    assert "[1] TC-02 (vllm.mtp): fail → pass." in overrides
    assert "— mk, 2026-12-01" in overrides
    assert "[stale] TC-01#0" in overrides and "NOT applied" in overrides
    heads, rows = _md_table(md, "Categories")
    pp = next(r for r in rows if r[0] == "parameter_precision")
    assert pp[heads.index("Δ adj vs vllm.base")] == "+100.0 pts"
    heads, rows = _md_table(md, "Difficulty tiers")
    assert [r[0] for r in rows] == ["easy", "medium", "hard"]


def test_html_is_self_contained_with_charts(run):
    write_reports(run)
    html = (run / "report.html").read_text()
    assert html.startswith("<!DOCTYPE html>")
    assert "<script" not in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "<link" not in html
    assert html.count("<svg") >= 6  # 4 throughput charts, spec acceptance, categories
    for title in (
        "effective tg t/s vs depth",
        "TTFT ms vs depth",
        "prefill t/s vs depth",
        "decode t/s vs depth",
        "spec acceptance by content type",
        "scenario categories",
    ):
        assert title in html, title
    assert 'class="mark"' in html  # marked cells styled
    assert 'fill="white" stroke="#d62728"' in html  # degraded point drawn hollow red


def test_formats_follow_the_spec(run):
    spec = (run / "spec.yaml").read_text()
    (run / "spec.yaml").write_text(
        spec.replace("  baseline: vllm.base\n", "  baseline: vllm.base\n  formats: [md]\n")
    )
    paths = write_reports(run)
    assert [p.name for p in paths] == ["report.md"]


def test_incomplete_run_caveat(tmp_path, monkeypatch):
    run = make_run_dir(tmp_path / "runs", finished=False)
    md = render(load_run(run), "md")
    assert "the run is incomplete" in md
    # an aborted run says so
    evs = read_events(str(run / "events.jsonl"))
    evs.append(RunFinished(status="aborted", points_done=5, points_total=13, message="user pressed q"))
    (run / "events.jsonl").write_bytes(b"".join(encode(e) + b"\n" for e in evs))
    md = render(load_run(run), "md")
    assert "the run was aborted" in md and "user pressed q" in md


def test_report_is_a_pure_function_of_the_run_dir(run):
    a = render(load_run(run), "md")
    b = render(load_run(run), "md")
    assert a == b
    h1, h2 = render(load_run(run), "html"), render(load_run(run), "html")
    assert h1 == h2


def test_no_secret_in_reports(run):
    for p in write_reports(run):
        text = p.read_text()
        assert FIXTURE_API_KEY not in text
        assert FIXTURE_LITERAL_KEY not in text
    assert FIXTURE_API_KEY not in (run / "scores.json").read_text()
    # the spec as given keeps ${VAR} unexpanded
    assert "${BENCH_FIXTURE_API_KEY}" in (run / "report.md").read_text()


def test_report_cli_on_run_dir_and_errors(run, tmp_path):
    from click.testing import CliRunner

    from bench_tui.cli.reports import report

    r = CliRunner().invoke(report, [str(run)])
    assert r.exit_code == 0, r.output
    assert (run / "report.md").is_file() and (run / "report.html").is_file()
    out = tmp_path / "x.html"
    r = CliRunner().invoke(report, [str(run), "-o", str(out)])
    assert r.exit_code == 0 and out.read_text().startswith("<!DOCTYPE html>")
    r = CliRunner().invoke(report, [str(tmp_path / "nope")])
    assert r.exit_code == 2 and "no such run directory or bundle" in r.output
    assert "Traceback" not in r.output


def _numbers(obj, out: set[float]) -> None:
    if isinstance(obj, bool):
        return
    if isinstance(obj, int | float):
        for v in (obj, 100 * obj):
            out.add(round(v, 1))
            out.add(round(v, 2))
            out.add(float(round(v)))
    elif isinstance(obj, dict):
        for v in obj.values():
            _numbers(v, out)
    elif isinstance(obj, list):
        for v in obj:
            _numbers(v, out)


def test_every_number_in_the_measurement_tables_is_in_the_events(run):

    md = render(load_run(run), "md")
    known: set[float] = set()
    for ev in _summaries(run).values():
        _numbers(msgspec.to_builtins(ev.summary), known)
        s = ev.summary
        if s.output_tokens.median is not None:
            _numbers(s.output_tokens.median * s.ok, known)  # "client out tok" column
    for p in read_events(str(run / "events.jsonl")):
        if isinstance(p, PlanReady):
            for pp in p.points:
                _numbers(msgspec.to_builtins(pp.params), known)
    body = md.split("## Throughput", 1)[1].split("## Tool-call scores", 1)[0]
    checked = 0
    title = ""
    for block in body.split("\n\n"):
        block = block.strip("\n")
        if block.startswith("**"):
            title = block
            continue
        if not block.startswith("|") or "vs baseline" in title:
            continue  # the Δ table holds ratios of two medians, checked in test_compare
        for line in block.splitlines()[2:]:
            if not line.startswith("|"):
                continue
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            for cell in cells[1:]:
                for tok in re.findall(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])", cell):
                    assert float(tok) in known, (tok, cell, line)
                    checked += 1
    assert checked > 300, checked
    # the check can fail: a number that is not in the events is caught
    assert 12345.6 not in known


def test_html_escapes_text_from_the_run(run):
    spec = (run / "spec.yaml").read_text().replace("(recorded fixture)", "<script>alert(1)</script>")
    (run / "spec.yaml").write_text(spec)
    html = render(load_run(run), "html")
    assert "<script" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_load_workers_table_names_each_worker_and_its_clock(run):
    import json

    env = json.loads((run / "env.json").read_text())
    env["load"] = {
        "backend": "ray",
        "ray_address": "auto",
        "warnings": ["load worker ray-1: clock spread 4.2 ms"],
        "workers": [
            {
                "name": "ray-0",
                "host": "gpu-a",
                "cores": 32,
                "python": "3.11.7",
                "bench_tui": "0.1.0",
                "clock_offset_ms": -0.031,
                "clock_spread_ms": 0.12,
            },
            {
                "name": "ray-1",
                "host": "gpu-b",
                "cores": 16,
                "python": "3.11.7",
                "bench_tui": "0.1.0",
                "clock_offset_ms": 812.5,
                "clock_spread_ms": 4.2,
                "died": "RayActorError: killed",
            },
        ],
    }
    (run / "env.json").write_text(json.dumps(env))
    md = render(load_run(run), "md")
    heads, rows = _md_table(md, "Load generation: backend `ray` at `auto`, 2 worker(s)")
    assert heads[:3] == ["worker", "host", "cores"]
    assert rows[0][:7] == ["ray-0", "gpu-a", "32", "3.11.7", "0.1.0", "-0.031", "0.120"]
    assert rows[1][0] == "ray-1" and rows[1][5] == "812.500" and rows[1][-1] == "RayActorError: killed"
    assert "Load warning: load worker ray-1: clock spread 4.2 ms" in md
    assert "load.workers" not in md  # not repeated in the flat hardware table
