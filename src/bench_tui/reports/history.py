"""The history index: runs, points and scenario results in SQLite for fast history queries.

Two places hold one: the per-user index (``user_db()``, under ``runner.orchestration.runlist.data_dir()``) that
`bench-tui history` uses from any directory, fed by every run directory registered there; and
``<runs dir>/history.sqlite`` for `history --runs-dir DIR`. Either is a cache: every row comes from a run
directory (``load_run``); ``sync`` re-indexes what changed, rebuilds an index that is damaged or empty (with
a warning), and lists a run whose writer still holds its lock as ``running``. Runs are keyed by their
directory name (unique: a UTC time and a random tail).
"""

from __future__ import annotations

import datetime as _dt
import re
import sqlite3
import time
from pathlib import Path
from typing import Any

from bench_tui.reports import floors
from bench_tui.runner.orchestration.runlist import data_dir, registered_run_dirs, run_in_progress

DB_NAME = "history.sqlite"
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS runs (
  run_key TEXT PRIMARY KEY, run_id TEXT, run_dir TEXT, spec_name TEXT, title TEXT, status TEXT,
  started_ts REAL, finished_ts REAL, points_done INTEGER, points_total INTEGER,
  engines TEXT, workloads TEXT, caveats INTEGER, indexed_ts REAL
);
CREATE TABLE IF NOT EXISTS points (
  run_key TEXT, point_id TEXT, engine TEXT, variant TEXT, workload TEXT, kind TEXT, status TEXT,
  pp INTEGER, tg INTEGER, depth INTEGER, concurrency INTEGER, cache TEXT,
  eff_tg_tps REAL, eff_tg_ci_low REAL, eff_tg_ci_high REAL, agg_tg_tps REAL, ttft_ms REAL,
  prefill_tps REAL, decode_tps REAL, server_prefill_tps REAL, server_decode_tps REAL,
  prefix_cache_hit_rate REAL, spec_acceptance_rate REAL, ok INTEGER, failed INTEGER, flags TEXT,
  PRIMARY KEY (run_key, point_id)
);
CREATE TABLE IF NOT EXISTS scores (
  run_key TEXT, engine TEXT, variant TEXT, workload TEXT, pack TEXT, raw_score REAL, adjusted_score REAL,
  deployability REAL, scored INTEGER, total INTEGER,
  PRIMARY KEY (run_key, engine, variant, workload)
);
CREATE TABLE IF NOT EXISTS scenarios (
  run_key TEXT, engine TEXT, variant TEXT, workload TEXT, scenario_id TEXT, trial INTEGER, category TEXT,
  difficulty TEXT, outcome TEXT, raw_verdict TEXT, adjusted_verdict TEXT, overridden INTEGER,
  PRIMARY KEY (run_key, engine, variant, workload, scenario_id, trial)
);
CREATE TABLE IF NOT EXISTS sources (
  run_key TEXT PRIMARY KEY, run_dir TEXT, events_mtime_ns INTEGER, events_size INTEGER, live INTEGER
);
CREATE TABLE IF NOT EXISTS floors (
  run_key TEXT, host TEXT, date TEXT, engine_kind TEXT, shape TEXT, metric TEXT, sigma REAL, within REAL,
  df INTEGER, sessions INTEGER, PRIMARY KEY (run_key, engine_kind, shape, metric)
);
CREATE INDEX IF NOT EXISTS points_engine ON points (engine, variant);
CREATE INDEX IF NOT EXISTS points_workload ON points (workload);
"""


class HistoryError(Exception):
    """A history query that cannot be answered (message for the user)."""


def connect(db: Path | str) -> sqlite3.Connection:
    """Open (creating) an index. ``sqlite3.DatabaseError`` when the file is not a usable index."""
    db = Path(db)
    db.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(str(db), timeout=10)
    try:
        con.row_factory = sqlite3.Row
        con.executescript(_SCHEMA)
        con.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        con.commit()
    except BaseException:
        con.close()
        raise
    return con


def user_db() -> Path:
    """The per-user index (``runner.orchestration.runlist.data_dir()/history.sqlite``) that `history` uses by default."""
    return data_dir() / DB_NAME


def _stamp(run_dir: Path) -> tuple[int, int, int]:
    st = (run_dir / "events.jsonl").stat()
    return st.st_mtime_ns, st.st_size, int(run_in_progress(run_dir))


def _unusable(db: Path) -> str | None:
    """Why ``db`` cannot be used as an index (None when it can)."""
    try:
        con = sqlite3.connect(str(db), timeout=10)
        try:
            row = con.execute("PRAGMA quick_check").fetchone()
            if not row or row[0] != "ok":
                return f"integrity check says {row[0] if row else 'nothing'}"
            con.executescript(_SCHEMA)
        finally:
            con.close()
    except sqlite3.DatabaseError as exc:
        return str(exc)
    return None


def remove_db(db: Path) -> None:
    for p in (
        db,
        db.with_name(db.name + "-journal"),
        db.with_name(db.name + "-wal"),
        db.with_name(db.name + "-shm"),
    ):
        p.unlink(missing_ok=True)


def sync(db: Path | str, run_dirs_: list[Path]) -> tuple[int, list[str]]:
    """Bring the index at ``db`` up to date with ``run_dirs_``: a damaged or empty index is rebuilt from them
    (with a warning), a new or changed run (events.jsonl stamp) is (re-)indexed, a run in progress always is
    and is listed as ``running``, a run whose directory is gone is dropped. Returns (runs re-indexed,
    warnings and problems for the user). ``HistoryError`` when the index cannot be written at all."""
    db = Path(db)
    notes: list[str] = []
    try:
        existed = db.is_file()
        why = _unusable(db) if db.exists() else None
        if why is not None:
            notes.append(
                f"warning: the history index {db} is damaged ({why}); rebuilding it from "
                f"{len(run_dirs_)} run directories"
            )
            remove_db(db)
            existed = False
        con = connect(db)
    except sqlite3.Error as exc:
        raise HistoryError(
            f"cannot use the history index {db}: {exc}; remove it or check the folder's permissions"
        ) from None
    except OSError as exc:
        raise HistoryError(f"cannot create the history index {db}: {exc.strerror or exc}") from None
    try:
        stored = {
            r["run_key"]: (r["run_dir"], r["events_mtime_ns"], r["events_size"], r["live"])
            for r in con.execute("SELECT * FROM sources")
        }
        n_runs = con.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        last = con.execute("SELECT value FROM meta WHERE key = 'synced_runs'").fetchone()
        # empty although it should not be (not an index that was empty because there were no runs yet)
        if existed and n_runs == 0 and run_dirs_ and (last is None or last[0] != "0"):
            notes.append(
                f"warning: the history index {db} is empty but {len(run_dirs_)} run directories exist; "
                "rebuilding it from them"
            )
    finally:
        con.close()
    keys = {d.name for d in run_dirs_}
    done = 0
    for d in run_dirs_:
        try:
            stamp = _stamp(d)
        except OSError:
            continue
        old = stored.get(d.name)
        if old is not None and old[0] == str(d.resolve()) and tuple(old[1:]) == stamp and not stamp[2]:
            continue
        try:
            index_run(d, db, live=bool(stamp[2]), stamp=stamp)
            done += 1
        except sqlite3.Error as exc:
            raise HistoryError(f"cannot write the history index {db}: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - one bad run must not stop the others
            notes.append(
                f"history: skipped {d.name}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
            )
    gone = [k for k, v in stored.items() if k not in keys and not Path(v[0] or "").is_dir()]
    con = connect(db)
    try:
        with con:
            for k in gone:
                _delete(con, k)
            n_runs = con.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
            con.execute("INSERT OR REPLACE INTO meta VALUES ('synced_runs', ?)", (str(n_runs),))
    except sqlite3.Error as exc:
        raise HistoryError(f"cannot write the history index {db}: {exc}") from None
    finally:
        con.close()
    return done, notes


def sources(runs_dir: Path | None) -> tuple[Path, list[Path]]:
    """(index, run directories) for `history`: one runs folder and its own index, or (``None``) the
    per-user index over every registered run directory plus ``./runs``. ``HistoryError`` for a missing
    folder."""
    if runs_dir is not None:
        if not runs_dir.is_dir():
            raise HistoryError(f"{runs_dir}: no such runs directory")
        return runs_dir / DB_NAME, run_dirs(runs_dir)
    dirs: list[Path] = []
    seen: set[str] = set()
    for d in [*registered_run_dirs(), *run_dirs(Path("runs"))]:
        key = str(d.resolve())
        if key not in seen:
            seen.add(key)
            dirs.append(d)
    return user_db(), dirs


def prepare(runs_dir: Path | None, *, rebuild: bool = False) -> tuple[Path, int, list[str]]:
    """Everything `history` does before its query: pick the index (``sources``), optionally drop it, bring it
    up to date. Without ``runs_dir``, a ``./runs/history.sqlite`` (which each finished run updates) is
    repaired too, so a damaged one is reported and rebuilt rather than left broken. Returns (index, runs
    re-indexed, notes for the user)."""
    db, dirs = sources(runs_dir)
    if rebuild:
        remove_db(db)
    n, notes = sync(db, dirs)
    local = Path("runs") / DB_NAME
    if runs_dir is None and local.is_file():
        if rebuild:
            remove_db(local)
        notes += sync(local, run_dirs(Path("runs")))[1]
    return db, n, notes


def _delete(con: sqlite3.Connection, key: str) -> None:
    con.execute("DELETE FROM floors WHERE run_key = ?", (key,))
    for table in ("runs", "points", "scores", "scenarios", "sources"):
        con.execute(f"DELETE FROM {table} WHERE run_key = ?", (key,))  # noqa: S608 - fixed names


def index_run(
    run_dir: Path | str,
    db: Path | str | None = None,
    *,
    model: Any = None,
    live: bool | None = None,
    stamp: tuple[int, int, int] | None = None,
) -> str:
    """(Re-)index one run directory; returns its key. ``db`` default: ``<run_dir>/../history.sqlite``.
    A run whose writer still holds its lock (``live``) is stored with status ``running``."""
    from bench_tui.reports.model import load_run

    run_dir = Path(run_dir)
    m = model if model is not None else load_run(run_dir)
    if stamp is None:
        try:
            stamp = _stamp(run_dir)
        except OSError:
            stamp = (0, 0, 0)
    live = bool(stamp[2]) if live is None else live
    status = "running" if live and m.status == "incomplete" else m.status
    db = Path(db) if db is not None else run_dir.parent / DB_NAME
    key = run_dir.name
    floor_rows = []
    host = ""
    if floors.has_sessions(m):  # a run with >= 2 engine sessions per variant measures this host's noise
        host = floors.host_identity(m.env)
        floor_rows = floors.floors_of(m, floors.load_samples(m))
    con = connect(db)
    try:
        with con:
            _delete(con, key)
            engines = sorted({p.key for p in m.points} | set(m.engines))
            workloads = sorted({p.workload for p in m.points})
            con.execute(
                "INSERT INTO runs VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    key,
                    m.run_id,
                    str(run_dir.resolve()),
                    m.spec_name,
                    m.title,
                    status,
                    m.started_ts,
                    m.finished_ts,
                    m.points_done,
                    m.points_total,
                    ",".join(engines),
                    ",".join(workloads),
                    len(m.caveats),
                    time.time(),
                ),
            )
            con.execute(
                "INSERT INTO sources VALUES (?,?,?,?,?)",
                (key, str(run_dir.resolve()), stamp[0], stamp[1], int(live)),
            )
            for p in m.points:
                s = p.summary
                sv = s.server if s else None
                con.execute(
                    "INSERT INTO points VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        key,
                        p.point_id,
                        p.engine,
                        p.variant,
                        p.workload,
                        p.kind,
                        p.status,
                        p.pp,
                        p.tg,
                        p.depth if p.kind != "scenarios" else None,
                        p.concurrency if p.kind == "throughput" else None,
                        s.cache if s else None,
                        s.eff_tg_tps.median if s else None,
                        s.eff_tg_tps.ci_low if s else None,
                        s.eff_tg_tps.ci_high if s else None,
                        s.agg_tg_tps if s else None,
                        s.ttft_ms.median if s else None,
                        s.prefill_tps.median if s else None,
                        s.decode_tps.median if s else None,
                        sv.prefill_tps if sv else None,
                        sv.decode_tps if sv else None,
                        sv.prefix_cache_hit_rate if sv else None,
                        sv.spec_acceptance_rate if sv else None,
                        s.ok if s else None,
                        s.failed if s else None,
                        ",".join(p.flags),
                    ),
                )
            for r in m.scores:
                con.execute(
                    "INSERT OR REPLACE INTO scores VALUES (?,?,?,?,?,?,?,?,?,?)",
                    (
                        key,
                        r.engine,
                        r.variant,
                        r.workload,
                        r.pack,
                        r.raw.score,
                        r.adjusted.score,
                        r.adjusted.deployability,
                        r.scored,
                        r.scenarios_total,
                    ),
                )
                for sc in r.scenarios:
                    con.execute(
                        "INSERT OR REPLACE INTO scenarios VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                        (
                            key,
                            r.engine,
                            r.variant,
                            r.workload,
                            sc.scenario_id,
                            sc.trial,
                            sc.category,
                            sc.difficulty,
                            sc.outcome,
                            sc.raw_verdict,
                            sc.adjusted_verdict,
                            int(sc.override is not None),
                        ),
                    )
            if floor_rows:
                date = _dt.datetime.fromtimestamp(m.started_ts or time.time(), _dt.UTC).date()
                con.executemany(
                    "INSERT OR REPLACE INTO floors VALUES (?,?,?,?,?,?,?,?,?,?)",
                    [
                        (
                            key,
                            host,
                            date.isoformat(),
                            r.engine_kind,
                            r.shape,
                            r.metric,
                            r.sigma,
                            r.within,
                            r.df,
                            r.sessions,
                        )
                        for r in floor_rows
                    ],
                )
    finally:
        con.close()
    return key


def stored_floors(db: Path | str, host: str) -> list[tuple[Any, str]]:
    """Every floor stored for ``host``: (FloorRow, ISO date) pairs (``reports.floors``)."""
    con = connect(db)
    try:
        rows = con.execute(
            "SELECT engine_kind, shape, metric, sigma, within, df, sessions, date FROM floors WHERE host = ?",
            (host,),
        ).fetchall()
    finally:
        con.close()
    return [(floors.FloorRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6]), r[7]) for r in rows]


def load_floors(models: list[Any]) -> dict[tuple[str, str, str], Any] | None:
    """This host's newest floors (``verdict.Floor`` by engine kind, shape and metric) from the per-user index,
    for the host of the first run; None when none are stored."""
    if not models:
        return None
    host = floors.host_identity(models[0].env)
    db = user_db()
    if not db.is_file():
        return None
    try:
        rows = stored_floors(db, host)
    except sqlite3.DatabaseError:  # a damaged index: no floors (history rebuilds it on its next sync)
        return None
    return floors.as_lookup(rows, host) or None


def run_dirs(runs_dir: Path) -> list[Path]:
    if not runs_dir.is_dir():
        return []
    return sorted(d for d in runs_dir.iterdir() if d.is_dir() and (d / "events.jsonl").is_file())


def rebuild(runs_dir: Path | str, db: Path | str | None = None) -> tuple[int, list[str]]:
    """Recreate the index from every run directory; returns (runs indexed, problems)."""
    runs_dir = Path(runs_dir)
    db = Path(db) if db is not None else runs_dir / DB_NAME
    remove_db(db)
    connect(db).close()
    n, problems = 0, []
    for d in run_dirs(runs_dir):
        try:
            index_run(d, db)
            n += 1
        except Exception as exc:  # noqa: BLE001 - one bad run must not stop the rebuild
            problems.append(f"{d.name}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
    return n, problems


def parse_since(text: str, now: float | None = None) -> float:
    """'7d', '12h', '30m', '2w', or an ISO date/time (UTC when no zone) -> unix seconds."""
    now = time.time() if now is None else now
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([mhdw])\s*", text)
    if m:
        mult = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}[m.group(2)]
        return now - float(m.group(1)) * mult
    try:
        dt = _dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise HistoryError(f"--since {text!r}: use e.g. 7d, 12h, 2026-12-01 or 2026-12-01T10:00") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=_dt.UTC)
    return dt.timestamp()


def query(
    db: Path | str,
    *,
    engine: str | None = None,
    workload: str | None = None,
    since: float | None = None,
    with_points: bool = True,
) -> list[dict[str, Any]]:
    """Runs (newest first) matching the filters, each with its matching points and scores."""
    con = connect(db)
    try:
        where: list[str] = []
        args: list[Any] = []
        if since is not None:
            where.append("COALESCE(started_ts, finished_ts, indexed_ts) >= ?")
            args.append(since)
        pw: list[str] = []
        pargs: list[Any] = []
        if engine:
            # "vllm" matches the engine, "vllm.mtp" the variant too
            eng, _, var = engine.partition(".")
            pw.append("engine = ?" + (" AND variant = ?" if var else ""))
            pargs += [eng, var] if var else [eng]
        if workload:
            pw.append("workload = ?")
            pargs.append(workload)
        if pw:
            where.append(f"run_key IN (SELECT run_key FROM points WHERE {' AND '.join(pw)})")
            args += pargs
        sql = "SELECT * FROM runs" + (f" WHERE {' AND '.join(where)}" if where else "")
        sql += " ORDER BY COALESCE(started_ts, indexed_ts) DESC, run_key DESC"
        out = []
        for row in con.execute(sql, args):
            r = dict(row)
            if with_points:
                psql = "SELECT * FROM points WHERE run_key = ?" + (f" AND {' AND '.join(pw)}" if pw else "")
                r["points"] = [
                    dict(x) for x in con.execute(psql + " ORDER BY point_id", [r["run_key"], *pargs])
                ]
                ssql = "SELECT * FROM scores WHERE run_key = ?"
                sargs: list[Any] = [r["run_key"]]
                if engine:
                    eng, _, var = engine.partition(".")
                    ssql += " AND engine = ?" + (" AND variant = ?" if var else "")
                    sargs += [eng, var] if var else [eng]
                if workload:
                    ssql += " AND workload = ?"
                    sargs.append(workload)
                r["scores"] = [dict(x) for x in con.execute(ssql, sargs)]
            out.append(r)
        return out
    finally:
        con.close()


def scenario_rows(db: Path | str, run_key: str) -> list[dict[str, Any]]:
    con = connect(db)
    try:
        return [
            dict(x)
            for x in con.execute(
                "SELECT * FROM scenarios WHERE run_key = ? ORDER BY scenario_id, engine, variant, trial",
                (run_key,),
            )
        ]
    finally:
        con.close()
