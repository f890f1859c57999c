"""Matrix expansion (engine variants x workloads, exclude, include), point ids and request estimates,
through the real loader."""

from __future__ import annotations

import itertools
import shutil
import textwrap
from pathlib import Path

import pytest

from bench_tui.events import AcceptanceParams, ScenarioParams, ThroughputParams
from bench_tui.runner.orchestration.planner import TURNS_PER_SCENARIO, estimate_requests, plan_points
from bench_tui.spec.loader import LoadedSpec, load_spec, load_spec_text
from bench_tui.spec.matrix import Cell, expand

MINI_PACK = Path(__file__).parent / "data" / "grader_mini_pack.yaml"

ENGINES = """\
engines:
  vllm:
    kind: external
    base_url: http://127.0.0.1:1
    variants:
      cold: {}
      warm: {}
      mtp1: {}
      mtp3: {}
  ninfer:
    kind: external
    base_url: http://127.0.0.1:2
    variants:
      cold: {}
      warm: {}
  llama:
    kind: external
    base_url: http://127.0.0.1:3
"""

WORKLOADS = """\
workloads:
  sweep: {kind: throughput, pp: [64], tg: [8]}
  accept: {kind: spec_acceptance, content: [code], depths: [0]}
  short: {kind: throughput, pp: [32], tg: [4]}
"""


def load(matrix: str = "", *, workloads: str = WORKLOADS, engines: str = ENGINES) -> LoadedSpec:
    text = "version: 1\nname: m\n" + engines + workloads + textwrap.dedent(matrix)
    return load_spec_text(text, "matrix.yaml", env={})


def cells(ld: LoadedSpec) -> list[str]:
    return [f"{c.engine}.{c.variant}/{c.workload}" for c in expand(ld.spec)]


ALL_VARIANTS = [
    "vllm.cold",
    "vllm.warm",
    "vllm.mtp1",
    "vllm.mtp3",
    "ninfer.cold",
    "ninfer.warm",
    "llama.default",
]
ALL_WORKLOADS = ["sweep", "accept", "short"]


# --------------------------------------------------------------------------------------------- expand


def test_default_is_every_variant_times_every_workload_in_spec_order() -> None:
    got = cells(load())
    assert got == [f"{v}/{w}" for v in ALL_VARIANTS for w in ALL_WORKLOADS]
    assert len(got) == 7 * 3


def test_engine_without_variants_has_the_default_variant() -> None:
    assert [c for c in expand(load().spec) if c.engine == "llama"] == [
        Cell(engine="llama", variant="default", workload=w) for w in ALL_WORKLOADS
    ]


def test_engines_by_name_and_by_name_dot_variant() -> None:
    ld = load("matrix:\n  engines: [ninfer, vllm.mtp3]\n  workloads: [sweep]\n")
    assert cells(ld) == ["vllm.mtp3/sweep", "ninfer.cold/sweep", "ninfer.warm/sweep"]


def test_order_follows_the_spec_not_the_matrix_list_and_duplicates_collapse() -> None:
    ld = load(
        "matrix:\n  engines: [llama, vllm.warm, vllm.cold, vllm.warm, llama.default]\n"
        "  workloads: [short, sweep, short]\n"
    )
    assert cells(ld) == [
        "vllm.cold/sweep",
        "vllm.cold/short",
        "vllm.warm/sweep",
        "vllm.warm/short",
        "llama.default/sweep",
        "llama.default/short",
    ]


def test_workloads_filter() -> None:
    ld = load("matrix:\n  workloads: [accept]\n")
    assert cells(ld) == [f"{v}/accept" for v in ALL_VARIANTS]


@pytest.mark.parametrize(
    ("rule", "removed"),
    [
        (
            "{engine: vllm}",
            [f"vllm.{v}/{w}" for v in ("cold", "warm", "mtp1", "mtp3") for w in ALL_WORKLOADS],
        ),
        ("{variant: cold}", [f"{e}.cold/{w}" for e in ("vllm", "ninfer") for w in ALL_WORKLOADS]),
        ("{workload: accept}", [f"{v}/accept" for v in ALL_VARIANTS]),
        ("{engine: vllm.mtp1}", [f"vllm.mtp1/{w}" for w in ALL_WORKLOADS]),
        ("{engine: ninfer, variant: warm, workload: short}", ["ninfer.warm/short"]),
        ("{engine: vllm, workload: accept}", [f"vllm.{v}/accept" for v in ("cold", "warm", "mtp1", "mtp3")]),
    ],
)
def test_exclude(rule: str, removed: list[str]) -> None:
    base = cells(load())
    got = cells(load(f"matrix:\n  exclude:\n    - {rule}\n"))
    assert got == [c for c in base if c not in removed]
    assert len(got) == len(base) - len(removed)


def test_include_adds_cells_outside_the_base_matrix_variant_scoped() -> None:
    ld = load("""\
        matrix:
          engines: [vllm.cold, vllm.warm, ninfer]
          workloads: [sweep]
          include:
            - {engine: vllm, variant: mtp3, workload: accept}
            - {engine: ninfer, variant: warm, workload: accept}
        """)
    assert cells(ld) == [
        "vllm.cold/sweep",
        "vllm.warm/sweep",
        "vllm.mtp3/accept",
        "ninfer.cold/sweep",
        "ninfer.warm/sweep",
        "ninfer.warm/accept",
    ]


def test_include_with_dotted_engine_and_include_of_a_whole_workload() -> None:
    ld = load("""\
        matrix:
          engines: [llama]
          workloads: [sweep]
          include:
            - {engine: vllm.mtp1, workload: accept}
            - {workload: short}
        """)
    want = [
        "vllm.cold/short",
        "vllm.warm/short",
        "vllm.mtp1/accept",
        "vllm.mtp1/short",
        "vllm.mtp3/short",
        "ninfer.cold/short",
        "ninfer.warm/short",
        "llama.default/sweep",
        "llama.default/short",
    ]
    assert cells(ld) == want


def test_include_wins_over_exclude_and_never_duplicates() -> None:
    ld = load("""\
        matrix:
          workloads: [sweep]
          exclude:
            - {engine: vllm}
          include:
            - {engine: vllm, variant: warm, workload: sweep}
            - {engine: llama, workload: sweep}
        """)
    assert cells(ld) == ["vllm.warm/sweep", "ninfer.cold/sweep", "ninfer.warm/sweep", "llama.default/sweep"]
    assert len(set(cells(ld))) == len(cells(ld))


def test_cell_prefix() -> None:
    assert Cell(engine="vllm", variant="mtp3", workload="accept").prefix == "vllm.mtp3/accept"


# --------------------------------------------------------------------------------------------- points


def test_throughput_points_are_pp_x_tg_x_depth_x_concurrency() -> None:
    ld = load(
        workloads="""\
        workloads:
          sweep: {kind: throughput, pp: [128, 512], tg: [16, 64], depths: [0, 1024, 4096], concurrency: [1, 4],
                  repetitions: 3, warmup: 2, cache: warm, endpoint: chat}
        """.replace("        ", ""),
        engines=ENGINES.split("  vllm:")[0] + "  llama:\n    kind: external\n"
        "    base_url: http://127.0.0.1:3\n",
    )
    pts = plan_points(ld)
    assert len(pts) == 2 * 2 * 3 * 2
    want_ids = [
        f"llama.default/sweep/pp{pp}-tg{tg}-d{d}-c{c}"
        for d, c, pp, tg in itertools.product([0, 1024, 4096], [1, 4], [128, 512], [16, 64])
    ]
    assert [p.point_id for p in pts] == want_ids
    assert len(set(want_ids)) == len(want_ids)
    p = pts[-1]
    assert (p.kind, p.engine, p.variant, p.workload) == ("throughput", "llama", "default", "sweep")
    assert p.params == ThroughputParams(
        pp=512,
        tg=64,
        depth=4096,
        concurrency=4,
        repetitions=3,
        warmup=2,
        cache="warm",
        endpoint="chat",
        request_timeout=600.0,
    )
    assert p.requests == 3 * 4  # repetitions per slot x concurrency, warm-up excluded
    assert [q.requests for q in pts if q.params.concurrency == 1] == [3] * 12


def test_throughput_defaults() -> None:
    ld = load(
        workloads="workloads:\n  sweep: {kind: throughput}\n",
        engines="engines:\n  e: {kind: external, base_url: 'http://127.0.0.1:1'}\n",
    )
    (p,) = plan_points(ld)
    assert p.point_id == "e.default/sweep/pp512-tg128-d0-c1"
    assert p.requests == 3


def test_spec_acceptance_points_are_content_x_depth() -> None:
    ld = load(
        workloads="workloads:\n  acc: {kind: spec_acceptance, content: [json, prose], depths: [0, 8192], "
        "runs: 5, tg: 64}\n",
        engines="engines:\n  e:\n    kind: external\n    base_url: http://127.0.0.1:1\n"
        "    variants: {mtp3: {}}\n",
    )
    pts = plan_points(ld)
    assert [p.point_id for p in pts] == [
        "e.mtp3/acc/json-d0",
        "e.mtp3/acc/json-d8192",
        "e.mtp3/acc/prose-d0",
        "e.mtp3/acc/prose-d8192",
    ]
    assert {p.kind for p in pts} == {"spec_acceptance"}
    assert [p.requests for p in pts] == [5, 5, 5, 5]
    assert pts[1].params == AcceptanceParams(content="json", depth=8192, runs=5, tg=64)


def _pack_spec(tmp_path: Path, workload: str) -> LoadedSpec:
    shutil.copy(MINI_PACK, tmp_path / "pack.yaml")
    path = tmp_path / "s.yaml"
    path.write_text(
        "version: 1\nname: p\nengines:\n  e: {kind: external, base_url: 'http://127.0.0.1:1'}\n"
        "workloads:\n  tools: " + workload + "\n",
        encoding="utf-8",
    )
    return load_spec(path, env={})


@pytest.mark.parametrize(
    ("workload", "scenarios", "trials"),
    [
        ("{kind: scenarios, pack: pack.yaml}", 6, 1),
        ("{kind: scenarios, pack: pack.yaml, subset: short, trials: 4}", 3, 4),
        ("{kind: scenarios, pack: pack.yaml, subset: short, scenarios: [TC-05], trials: 2}", 1, 2),
    ],
)
def test_scenario_workload_is_one_point_per_cell(
    tmp_path: Path, workload: str, scenarios: int, trials: int
) -> None:
    ld = _pack_spec(tmp_path, workload)
    (p,) = plan_points(ld)
    assert p.point_id == "e.default/tools/pack"
    assert p.kind == "scenarios"
    assert isinstance(p.params, ScenarioParams)
    assert p.params.pack == "pack.yaml" and p.params.trials == trials
    assert p.requests == scenarios * trials * TURNS_PER_SCENARIO


def test_point_ids_are_stable_and_unique() -> None:
    spec = """\
        matrix:
          include: [{engine: vllm, variant: mtp3, workload: accept}]
        """
    a = [p.point_id for p in plan_points(load(spec))]
    b = [p.point_id for p in plan_points(load(spec))]
    assert a == b
    assert len(set(a)) == len(a)
    # parameters that are not part of a point's identity do not change its id
    more_reps = WORKLOADS.replace("pp: [64], tg: [8]", "pp: [64], tg: [8], repetitions: 9, warmup: 0")
    assert [p.point_id for p in plan_points(load(spec, workloads=more_reps))] == a
    for pid in a:
        engine_variant, workload, point = pid.split("/")
        assert engine_variant.count(".") == 1 and workload and point


def test_plan_points_accepts_a_bare_spec() -> None:
    ld = load("matrix:\n  workloads: [sweep]\n")
    assert [p.point_id for p in plan_points(ld.spec)] == [p.point_id for p in plan_points(ld)]
    assert [p.point_id for p in plan_points(ld)] == [f"{v}/sweep/pp64-tg8-d0-c1" for v in ALL_VARIANTS]


# --------------------------------------------------------------------------------------------- estimates


def test_estimate_requests_sums_every_point() -> None:
    ld = load(
        workloads="""\
workloads:
  sweep: {kind: throughput, pp: [64, 128], tg: [8], depths: [0, 512], concurrency: [1, 2, 4], repetitions: 2}
  accept: {kind: spec_acceptance, content: [code, json, prose], depths: [0], runs: 3}
""",
        engines="engines:\n  e:\n    kind: external\n    base_url: http://127.0.0.1:1\n    variants: {a: {}, b: {}}\n",
        matrix="matrix:\n  exclude: [{variant: b, workload: accept}]\n",
    )
    pts = plan_points(ld)
    # sweep: 2 variants x (2 pp x 2 depths) x sum over concurrency (1+2+4) x 2 repetitions
    sweep = 2 * (2 * 2) * (1 + 2 + 4) * 2
    accept = 1 * 3 * 3  # only variant a: 3 contents x 3 runs
    assert estimate_requests(pts) == sweep + accept == 121
    assert estimate_requests(pts) == sum(p.requests for p in pts)
    assert estimate_requests([]) == 0
    assert estimate_requests(pts[:1]) == pts[0].requests == 2
