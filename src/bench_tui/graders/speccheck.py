"""Checks of a spec that need its scenario packs (the spec layer cannot load packs: they are the graders')."""

from __future__ import annotations

from bench_tui.graders.pack import PackError, load_pack
from bench_tui.spec.loader import KeyPath, LoadedSpec, Problems, hint_names
from bench_tui.spec.schema import ScenarioWorkload


def check_packs(ld: LoadedSpec, out: Problems) -> None:
    """The packs a spec runs load, their subsets and scenario ids exist, and every override names a scenario
    of them (problems at the spec's `file:line:col`)."""
    spec = ld.spec
    ids: set[str] = set()
    any_pack = False
    failed = False
    for wname, wl in spec.workloads.items():
        if not isinstance(wl, ScenarioWorkload):
            continue
        any_pack = True
        kp: KeyPath = ("workloads", wname)
        try:
            pack = load_pack(wl.pack, ld.dir)
        except PackError as exc:
            failed = True
            first = exc.problems[0] if exc.problems else str(exc)
            more = f" (+{len(exc.problems) - 1} more problems)" if len(exc.problems) > 1 else ""
            out.add((*kp, "pack"), f"workloads.{wname}.pack: cannot load pack {wl.pack!r}: {first}{more}")
            continue
        except Exception as exc:  # noqa: BLE001 - a broken pack file must not become a traceback
            failed = True
            out.add(
                (*kp, "pack"),
                f"workloads.{wname}.pack: cannot load pack {wl.pack!r}: {type(exc).__name__}: {exc}",
            )
            continue
        ids.update(pack.ids)
        if wl.subset is not None and wl.subset not in pack.subsets:
            out.add(
                (*kp, "subset"),
                f"workloads.{wname}.subset: pack {pack.pack.id!r} has no subset {wl.subset!r}; "
                + hint_names(wl.subset, list(pack.subsets), "its subsets"),
            )
        known = set(pack.ids)
        for i, sid in enumerate(wl.scenarios):
            if sid not in known:
                out.add(
                    (*kp, "scenarios", i),
                    f"workloads.{wname}.scenarios[{i}]: pack {pack.pack.id!r} has no "
                    f"scenario {sid!r}; " + hint_names(sid, sorted(known), "ids"),
                )
    for i, ov in enumerate(spec.grading.overrides):
        kp = ("grading", "overrides", i)
        if failed:
            continue  # the pack error above already says it
        if not any_pack:
            out.add(
                (*kp, "scenario"),
                f"grading.overrides[{i}].scenario: override for {ov.scenario!r} but no "
                "workload of kind 'scenarios' runs a pack; add one or remove the override",
            )
            continue
        if ov.scenario not in ids:
            out.add(
                (*kp, "scenario"),
                f"grading.overrides[{i}].scenario: no scenario {ov.scenario!r} in the "
                "packs this spec runs; " + hint_names(ov.scenario, sorted(ids), "scenario ids"),
            )
