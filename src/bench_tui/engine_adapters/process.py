"""Shared lifecycle for engines we talk to over HTTP (``ServedEngine``) and engines we launch (``ProcessEngine``).

A launched engine runs in its own session / process group (``start_new_session``) so that stopping it reaches
every worker it forked (vLLM's engine core, tokenizer pools ...): SIGTERM to the group, wait, SIGKILL. Its
stdout and stderr are pumped by two threads into ``log_dir/<name>.<variant>.log`` and, line by line, into
``EngineLog`` events (secrets scrubbed, rate-capped so a chatty engine cannot flood the event stream; the file
always has every line). Readiness is the health path answering 200 and the model list answering with the
served model; every way this can fail is an ``EngineStartError`` that says what to do.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

from bench_tui.engine_adapters import http, reaper
from bench_tui.engine_adapters.base import Emit, EngineAdapter, EngineInfo, EngineStartError
from bench_tui.engine_adapters.prometheus import parse_prometheus
from bench_tui.engine_adapters.registry import Dialect, dialect
from bench_tui.events import EngineLog, EngineReady, EngineStarting, EngineStopped
from bench_tui.spec.flags import merge_args, render_flags
from bench_tui.spec.schema import DEFAULT_HEALTH_PATH, Engine, Variant
from bench_tui.spec.secrets import redact

TAIL_LINES = 500
LOG_LINE_MAX = 4000
EMIT_LINES_PER_S = 200  # EngineLog events per second at most; the log file gets everything
HTTP_TIMEOUT = 5.0
BUILTIN_MODELS = ("qwen2.5-coder-0.5b",)


class EngineConfigError(ValueError):
    """The engine section cannot be turned into a command (raised by make_adapter / command())."""


# ------------------------------------------------------------------------------------------- helpers


def resolve_model(model: str, kind: str, spec_dir: Path) -> str:
    """``builtin:NAME`` -> the installed test model (GGUF for llama.cpp, the bf16 folder otherwise);
    ``./x`` and ``../x`` relative to the spec file; ``~`` expanded; anything else (hub ids) as given."""
    if model.startswith("builtin:"):
        name = model.split(":", 1)[1]
        if name not in BUILTIN_MODELS:
            raise EngineConfigError(f"unknown builtin model {name!r}; known: {', '.join(BUILTIN_MODELS)}")
        from bench_tui.engine_adapters.install import model_dir, model_path

        if kind == "llamacpp":
            return str(model_path())
        return str(model_dir() / "qwen2.5-coder-0.5b-instruct-bf16")
    if model.startswith("~"):
        return str(Path(model).expanduser())
    if model.startswith(("./", "../")):
        return str((spec_dir / model).resolve())
    return model


def port_problem(host: str, port: int) -> str | None:
    """Why we cannot listen on host:port (None when it is free)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return (
                    f"port {port} on {host} is already in use (another engine or an earlier run still "
                    f"running?); stop it or set a free `port:` for this engine"
                )
            if exc.errno == errno.EADDRNOTAVAIL:
                return f"host {host!r} is not an address of this machine; use 127.0.0.1"
            return f"cannot bind {host}:{port}: {exc.strerror or exc}"
    return None


def find_binary(argv0: str, spec_dir: Path) -> str | None:
    """The executable for argv[0]: a path (relative to the spec file, then the working directory) or a
    name on PATH. None when there is none."""
    if os.sep in argv0 or (os.altsep and os.altsep in argv0):
        p = Path(argv0).expanduser()
        candidates = [p] if p.is_absolute() else [spec_dir / p, Path.cwd() / p]
        for c in candidates:
            if c.is_file() and os.access(c, os.X_OK):
                return str(c.resolve()) if not p.is_absolute() else str(c)
        return None
    return shutil.which(argv0)


def substitute(item: str, values: dict[str, str]) -> str:
    for key, val in values.items():
        item = item.replace("{" + key + "}", val)
    return item


def engine_kind(engine: Any) -> str:
    """The ``kind`` tag of an engine Struct (tagged unions carry it in the struct config, not as a field)."""
    cfg = getattr(type(engine), "__struct_config__", None)
    tag = getattr(cfg, "tag", None)
    return str(tag) if isinstance(tag, str) else str(getattr(engine, "kind", ""))


def _group_exists(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# ------------------------------------------------------------------------------------------- served


def flatten_slots(slots: Any) -> dict[str, float]:
    """``/slots`` JSON -> a few numbers: slot count, busy slots, speculative slots, and sums over the busy ones."""
    out: dict[str, float] = {}
    if not isinstance(slots, list):
        return out
    busy = [s for s in slots if isinstance(s, dict) and s.get("is_processing")]
    out["llamacpp_slots:total"] = float(len(slots))
    out["llamacpp_slots:processing"] = float(len(busy))
    # slots set up for speculative decoding: llama.cpp's spec counters exist either way, this says it is on
    out["llamacpp_slots:speculative"] = float(
        sum(1 for s in slots if isinstance(s, dict) and s.get("speculative"))
    )
    sums = {
        "n_decoded": 0.0,
        "n_prompt_tokens": 0.0,
        "n_prompt_tokens_processed": 0.0,
        "n_prompt_tokens_cache": 0.0,
    }
    for s in busy:
        for key in ("n_prompt_tokens", "n_prompt_tokens_processed", "n_prompt_tokens_cache"):
            v = s.get(key)
            if isinstance(v, int | float) and not isinstance(v, bool):
                sums[key] += float(v)
        for nt in s.get("next_token") or []:
            v = nt.get("n_decoded") if isinstance(nt, dict) else None
            if isinstance(v, int | float) and not isinstance(v, bool):
                sums["n_decoded"] += float(v)
    for key, v in sums.items():
        out[f"llamacpp_slots:{key}"] = v
    ctx = [s["n_ctx"] for s in slots if isinstance(s, dict) and isinstance(s.get("n_ctx"), int)]
    if ctx:
        out["llamacpp_slots:n_ctx"] = float(ctx[0])
    return out


class ServedEngine(EngineAdapter):
    """HTTP side of every engine: readiness, model id, metrics, version, auth headers, env info."""

    kind = ""
    metrics_dialect = "none"
    models_path = "/v1/models"
    api_key_env: str | None = (
        None  # the variable the engine reads its API key from (else `--api-key` in argv)
    )

    def __init__(
        self,
        name: str,
        engine: Engine,
        variant_name: str,
        variant: Variant | None,
        *,
        spec_dir: Path,
        log_dir: Path,
        emit: Emit,
    ) -> None:
        super().__init__(
            name, engine, variant_name, variant, spec_dir=Path(spec_dir), log_dir=Path(log_dir), emit=emit
        )
        self.api_key: str | None = engine.api_key or None
        self.model_id = ""
        self.version = ""
        self.startup_s = 0.0
        self._t0 = 0.0
        self._stopping = False

    @property
    def dialect(self) -> Dialect:
        """What this engine's /metrics and control endpoints mean (``registry.dialect``)."""
        return dialect(self.metrics_dialect)

    # -- naming and config
    @property
    def label(self) -> str:
        return f"{self.name}.{self.variant_name}"

    def args(self) -> dict[str, Any]:
        return merge_args(self.engine.args, self.variant.args if self.variant else None)

    def environment(self) -> dict[str, str]:
        env = dict(self.engine.env)
        if self.variant:
            env.update(self.variant.env)
        if self.api_key and self.api_key_env:
            env[self.api_key_env] = self.api_key
        return env

    def chat_template(self) -> str | None:
        """The chat template path (variant over engine), relative to the spec file. A variant's empty
        ``chat_template: ""`` means the model's own (stock) template even when the engine sets one."""
        if self.variant is not None and self.variant.chat_template is not None:
            raw: str | None = self.variant.chat_template or None
        else:
            raw = self.engine.chat_template
        if not raw:
            return None
        p = Path(raw).expanduser()
        return str(p if p.is_absolute() else (self.spec_dir / p).resolve())

    def scrub(self, obj: Any) -> Any:
        return redact(obj, {self.api_key} if self.api_key else None)

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    @property
    def health_path(self) -> str:
        return self.engine.health_path or DEFAULT_HEALTH_PATH.get(engine_kind(self.engine), "/health")

    def url(self, path: str) -> str:
        return self.base_url + path

    # -- readiness
    def _exited(self) -> int | None:
        """The exit code when a launched engine has died, else None."""
        return None

    def _on_start_failure(self) -> None:
        """Clean up after a readiness failure (launched engines stop their process)."""

    def _fail(self, message: str) -> EngineStartError:
        self._on_start_failure()
        return EngineStartError(f"{self.label}: {message}", self.log_tail(30))

    def wait_ready(self, timeout: float | None = None) -> EngineInfo:
        limit = float(timeout if timeout is not None else self.engine.startup_timeout)
        if not self._t0:
            self._t0 = time.monotonic()
        deadline = time.monotonic() + limit
        health = self.url(self.health_path)
        last = "no answer yet"
        pause = 0.2
        ids: list[str] = []
        while True:
            if self._stopping:
                raise EngineStartError(f"{self.label}: stopped while starting")
            rc = self._exited()
            if rc is not None:
                self._settle_logs()
                raise self._fail(
                    f"the engine exited during start-up with code {rc}"
                    f"{_signal_note(rc)}; see the log lines below"
                )
            try:
                http.request("GET", health, headers=self.headers, timeout=min(HTTP_TIMEOUT, 3.0))
                ids = http.model_ids(
                    http.get_json(self.url(self.models_path), headers=self.headers, timeout=HTTP_TIMEOUT)
                )
                if ids:
                    break
                last = f"{self.models_path} lists no model yet"
            except http.HttpError as exc:
                if exc.status in (401, 403):
                    raise self._fail(
                        f"the engine refused our credentials (HTTP {exc.status} on {health}); check `api_key`"
                    ) from None
                last = f"HTTP {exc.status}: {exc.body[:200]}"
            except (OSError, ValueError) as exc:
                last = str(exc) or type(exc).__name__
            now = time.monotonic()
            if now >= deadline:
                raise self._fail(
                    f"not ready after {limit:.0f} s at {health} (last: {last}); raise "
                    f"`startup_timeout` if the model needs longer to load"
                )
            time.sleep(min(pause, max(0.05, deadline - now)))
            pause = min(pause * 1.5, 1.0)
        want = self.engine.served_model_name
        if want:
            if want not in ids:
                raise self._fail(f"the engine serves {ids} but not {want!r} (`served_model_name`)")
            self.model_id = want
        else:
            self.model_id = ids[0]
        self.startup_s = time.monotonic() - self._t0
        try:
            self.version = self.probe_version()
        except Exception:  # noqa: BLE001 - a version is nice to have, never a reason to fail
            self.version = ""
        info = EngineInfo(
            base_url=self.base_url,
            model_id=self.model_id,
            version=self.version,
            startup_s=round(self.startup_s, 3),
            command=self.recorded_command(),
            pid=self.pid(),
        )
        self.emit(
            EngineReady(
                engine=self.name,
                variant=self.variant_name,
                base_url=self.base_url,
                model_id=self.model_id,
                version=self.version,
                startup_s=info.startup_s,
            )
        )
        return info

    def _settle_logs(self) -> None:
        """Let the log pumps catch up (a dying engine's last lines are the useful ones)."""

    def pid(self) -> int | None:
        return None

    def recorded_command(self) -> list[str]:
        return list(self.scrub(self.command()))

    # -- observation and control
    def probe_version(self) -> str:
        try:
            data = http.get_json(self.url("/version"), headers=self.headers, timeout=HTTP_TIMEOUT)
        except (OSError, ValueError):
            return ""
        if isinstance(data, dict) and isinstance(data.get("version"), str):
            return str(data["version"])
        return ""

    def scrape_metrics(self) -> dict[str, float]:
        """``/metrics`` parsed; for the llamacpp dialect ``/slots`` flattened too. Never raises."""
        values: dict[str, float] = {}
        try:
            values = parse_prometheus(
                http.get_text(self.url("/metrics"), headers=self.headers, timeout=HTTP_TIMEOUT)
            )
        except OSError:
            pass
        if self.dialect.slots:
            try:
                values.update(
                    flatten_slots(
                        http.get_json(self.url("/slots"), headers=self.headers, timeout=HTTP_TIMEOUT)
                    )
                )
            except (OSError, ValueError):
                pass
        return values

    def reset_prefix_cache(self) -> bool:
        """The dialect's reset endpoint (vLLM ``POST /reset_prefix_cache``, SGLang ``POST /flush_cache``); on
        llama.cpp, which has none, every slot is erased."""
        d = self.dialect
        if d.reset_path is not None:
            return self._post_ok(d.reset_path)
        if not d.slots:
            return False
        try:
            slots = http.get_json(self.url("/slots"), headers=self.headers, timeout=HTTP_TIMEOUT)
        except (OSError, ValueError):
            return False
        ids = (
            [s["id"] for s in slots if isinstance(s, dict) and isinstance(s.get("id"), int)]
            if isinstance(slots, list)
            else []
        )
        return bool(ids) and all(self._post_ok(f"/slots/{i}?action=erase") for i in ids)

    def tokenize(self, text: str) -> list[int] | None:
        """The engine's ``POST /tokenize`` in the dialect's request shape(s). None when it has no such endpoint."""
        for body_of in self.dialect.tokenize:
            try:
                data = http.post_json(
                    self.url("/tokenize"), body_of(self.model_id, text), headers=self.headers, timeout=30.0
                )
            except (OSError, ValueError):
                continue
            toks = data.get("tokens") if isinstance(data, dict) else None
            if isinstance(toks, list):
                return [int(t["id"]) if isinstance(t, dict) else int(t) for t in toks]
        return None

    def _post_ok(self, path: str, body: Any = None) -> bool:
        try:
            http.request("POST", self.url(path), body=body, headers=self.headers, timeout=30.0)
        except OSError:
            return False
        return True

    def env_info(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": engine_kind(self.engine),
            "version": self.version,
            "command": self.recorded_command(),
            "base_url": self.base_url,
            "model": self.engine.model,
            "model_id": self.model_id,
            "metrics_dialect": self.metrics_dialect,
            "startup_s": round(self.startup_s, 3),
            "prefix_caching": self.prefix_caching(),
        }
        env = self.environment()
        if env:
            out["env"] = self.scrub(env)
        tmpl = self.chat_template()
        if tmpl:
            out["chat_template"] = tmpl
        if self.variant and self.variant.description:
            out["variant_description"] = self.variant.description
        return out


def _signal_note(rc: int) -> str:
    if rc < 0:
        try:
            return f" (killed by {signal.Signals(-rc).name})"
        except ValueError:
            return ""
    return ""


# ------------------------------------------------------------------------------------------- launched


class ProcessEngine(ServedEngine):
    """An engine we launch, watch and stop. Subclasses build the argv (``command()``)."""

    # flag names (without dashes) the adapter renders from the engine's own fields; in `args` they would
    # contradict what the adapter connects to
    reserved_args: frozenset[str] = frozenset({"host", "port"})

    def __init__(
        self,
        name: str,
        engine: Engine,
        variant_name: str,
        variant: Variant | None,
        *,
        spec_dir: Path,
        log_dir: Path,
        emit: Emit,
    ) -> None:
        super().__init__(name, engine, variant_name, variant, spec_dir=spec_dir, log_dir=log_dir, emit=emit)
        clash = sorted(k for k in self.args() if k.lstrip("-") in self.reserved_args)
        if clash:
            raise EngineConfigError(
                f"{self.label}: {', '.join(clash)} in `args` would contradict the engine's own settings; set "
                f"them with the engine fields (host, port, model, served_model_name, chat_template, api_key)"
            )
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = self.log_dir / f"{self.name}.{self.variant_name}.log"
        self._log_fh: IO[str] | None = None
        self._log_lock = threading.Lock()
        self._tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        self._pumps: list[threading.Thread] = []
        self._stopped_emitted = False
        self._emit_window = (0.0, 0)
        self._suppressed = 0
        self._killed = False
        self._watchdog: subprocess.Popen[bytes] | None = None
        self._forced = False
        self.starts = 0

    @property
    def base_url(self) -> str:
        host = self.engine.host
        if host in ("0.0.0.0", "", "::"):
            host = "127.0.0.1"
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.engine.port}"

    def placeholders(self) -> dict[str, str]:
        return {
            "python": sys.executable,
            "host": self.engine.host,
            "port": str(self.engine.port),
            "model": resolve_model(self.engine.model, engine_kind(self.engine), self.spec_dir),
        }

    def launcher(self) -> list[str]:
        launcher: list[str] = list(getattr(self.engine, "launcher", []))
        values = self.placeholders()
        return [substitute(a, values) for a in launcher]

    def flags(self) -> list[str]:
        return render_flags(self.args())

    def flag_set(self, name: str) -> Any:
        """The value of flag ``name`` (without dashes) in the merged args, None when absent."""
        for key, value in self.args().items():
            if key.lstrip("-") == name:
                return value
        return None

    def model_arg(self, what: str) -> str:
        """The model as the engine takes it (``builtin:`` names resolved); ``what`` says what is expected."""
        if not self.engine.model:
            raise EngineConfigError(f"{self.label}: `model` is empty ({what})")
        return resolve_model(self.engine.model, self.kind, self.spec_dir)

    def serve_command(
        self,
        head: list[str],
        *,
        name_flag: str = "--served-model-name",
        template_flag: str = "--chat-template",
    ) -> list[str]:
        """launcher + ``head`` (model and address, as this engine spells them) + served name, chat template,
        the rendered args and the api key."""
        eng = self.engine
        argv = [*self.launcher(), *head]
        if eng.served_model_name:
            argv += [name_flag, eng.served_model_name]
        tmpl = self.chat_template()
        if tmpl:
            argv += [template_flag, tmpl]
        argv += self.flags()
        if (
            self.api_key and not self.api_key_env
        ):  # argv is readable by every local user (`ps`): env if we can
            argv += ["--api-key", self.api_key]
        return argv

    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    # -- lifecycle
    def start(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            return  # already running
        self._release_watchdog()
        self._stopping = False
        self._forced = False
        self._stopped_emitted = False
        argv = self.command()
        if not argv:
            raise EngineStartError(f"{self.label}: empty command")
        exe = find_binary(argv[0], self.spec_dir)
        if exe is None:
            where = "at that path" if os.sep in argv[0] else "on PATH"
            raise EngineStartError(
                f"{self.label}: the engine binary {argv[0]!r} was not found {where}; install "
                f"it or point `launcher:`/`command:` at it"
            )
        if os.sep in argv[0]:
            argv[0] = exe
        tmpl = self.chat_template()
        if tmpl and not Path(tmpl).is_file():
            raise EngineStartError(
                f"{self.label}: chat template not found: {tmpl} (paths are relative to the spec file)"
            )
        problem = port_problem(self.engine.host, self.engine.port)
        if problem:
            raise EngineStartError(f"{self.label}: {problem}")
        env = dict(os.environ)
        env.setdefault("PYTHONUNBUFFERED", "1")
        env.update(self.environment())
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self._log_fh = open(self.log_path, "a", encoding="utf-8", errors="replace")  # noqa: SIM115
        self._tail.clear()
        self.starts += 1
        recorded = list(self.scrub(argv))
        self._write_line(f"=== bench-tui: start {self.starts} of {self.label}: {' '.join(recorded)}")
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                cwd=str(self.spec_dir),
                start_new_session=True,
            )
        except OSError as exc:
            self._close_log()
            raise EngineStartError(
                f"{self.label}: could not run {argv[0]!r}: {exc.strerror or exc}"
            ) from None
        self._t0 = time.monotonic()
        self._guard()
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._pumps = [
            threading.Thread(
                target=self._pump,
                args=(self.proc.stdout, "stdout"),
                daemon=True,
                name=f"log-{self.label}-out",
            ),
            threading.Thread(
                target=self._pump,
                args=(self.proc.stderr, "stderr"),
                daemon=True,
                name=f"log-{self.label}-err",
            ),
        ]
        for t in self._pumps:
            t.start()
        self.emit(
            EngineStarting(
                engine=self.name,
                variant=self.variant_name,
                command=recorded,
                log_path=str(self.log_path),
                pid=self.proc.pid,
            )
        )

    def _guard(self) -> None:
        """Start the engine's watchdog and record pid + start time in the run directory (see reaper.py)."""
        assert self.proc is not None
        pid = self.proc.pid
        try:
            self._watchdog = subprocess.Popen(
                reaper.watchdog_argv(pid, reaper.start_ticks(pid)),
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as exc:
            self._watchdog = None
            self._write_line(
                f"=== bench-tui: no watchdog for {self.label} ({exc}); if this runner is killed, "
                f"the engine may be left running"
            )
        try:
            reaper.write_record(self.log_dir, self.label, pid, self._watchdog.pid if self._watchdog else None)
        except OSError:
            pass

    def _release_watchdog(self) -> None:
        """The engine is stopped (or never started): let its watchdog go and drop the run-dir record."""
        wd, self._watchdog = self._watchdog, None
        if wd is not None:
            try:
                if wd.stdin is not None:
                    wd.stdin.close()  # EOF: it finds the group gone and leaves
                wd.wait(timeout=10.0)
            except (OSError, subprocess.TimeoutExpired):
                wd.kill()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    wd.wait(timeout=5.0)
        if self.proc is not None and not _group_exists(self.proc.pid):
            reaper.clear_record(self.log_dir, self.label)

    def kill_now(self) -> None:
        """SIGKILL the engine's group at once (a forced stop); ``stop()`` then only reaps and reports."""
        proc = self.proc
        if proc is None:
            return
        self._stopping = True
        self._forced = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if proc.poll() is None or _group_exists(proc.pid):
                os.killpg(proc.pid, signal.SIGKILL)

    def _write_line(self, line: str) -> None:
        with self._log_lock:
            self._tail.append(line)
            if self._log_fh is not None:
                try:
                    self._log_fh.write(line + "\n")
                    self._log_fh.flush()
                except (OSError, ValueError):
                    pass

    def _pump(self, stream: IO[bytes], which: str) -> None:
        try:
            for raw in iter(stream.readline, b""):
                text = raw.decode("utf-8", "replace").rstrip("\r\n")
                if "\r" in text:  # progress bars redraw with \r: keep the last state
                    text = [p for p in text.split("\r") if p.strip()][-1] if text.strip() else ""
                line = self.scrub(text[:LOG_LINE_MAX])
                self._write_line(line)
                self._emit_log(line, which)
        except (OSError, ValueError):
            pass
        finally:
            try:
                stream.close()
            except OSError:
                pass

    def _emit_log(self, line: str, which: str) -> None:
        now = time.monotonic()
        start, count = self._emit_window
        if now - start >= 1.0:
            if self._suppressed:
                self._safe_emit(
                    f"({self._suppressed} log lines not shown; all are in {self.log_path})", "stdout"
                )
                self._suppressed = 0
            start, count = now, 0
        if count >= EMIT_LINES_PER_S:
            self._suppressed += 1
            self._emit_window = (start, count)
            return
        self._emit_window = (start, count + 1)
        self._safe_emit(line, which)

    def _safe_emit(self, line: str, which: str) -> None:
        try:
            self.emit(
                EngineLog(
                    engine=self.name,
                    variant=self.variant_name,
                    line=line,
                    stream="stderr" if which == "stderr" else "stdout",
                )
            )
        except Exception:  # noqa: BLE001 - a subscriber's bug must not stop the log pump
            pass

    def _settle_logs(self) -> None:
        for t in self._pumps:
            t.join(timeout=2.0)

    def _exited(self) -> int | None:
        if self.proc is None:
            return None
        return self.proc.poll()

    def _on_start_failure(self) -> None:
        self._kill_group(grace=5.0)

    def is_alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None and not self._stopping

    def log_tail(self, n: int = 30) -> list[str]:
        with self._log_lock:
            lines = list(self._tail)
        if not lines and self.log_path.is_file():
            try:
                lines = self.log_path.read_text(errors="replace").splitlines()
            except OSError:
                lines = []
        return lines[-n:] if n > 0 else []

    def _kill_group(self, grace: float) -> int | None:
        """SIGTERM the whole group, wait up to ``grace`` s, SIGKILL what is left. Returns the leader's code."""
        proc = self.proc
        if proc is None:
            return None
        pgid = proc.pid  # start_new_session: the leader's pid is the group id
        if proc.poll() is None or _group_exists(pgid):
            try:
                os.killpg(pgid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            if proc.poll() is not None and not _group_exists(pgid):
                break
            time.sleep(0.1)
        killed = False
        if proc.poll() is None or _group_exists(pgid):
            try:
                os.killpg(pgid, signal.SIGKILL)
                killed = True
            except ProcessLookupError:
                pass
        try:
            proc.wait(timeout=10.0)
        except subprocess.TimeoutExpired:
            pass
        end = time.monotonic() + 5.0
        while _group_exists(pgid) and time.monotonic() < end:
            time.sleep(0.05)
        self._killed = killed
        self._release_watchdog()
        return proc.returncode

    def stop(self, timeout: float = 20.0) -> int | None:
        self._stopping = True
        proc = self.proc
        if proc is None:
            return None
        already = proc.poll()
        self._killed = False
        rc = self._kill_group(grace=timeout)
        self._settle_logs()
        if self._forced:
            reason = "killed (SIGKILL) at once: a forced stop"
        elif already is not None:
            reason = f"had already exited with code {already}{_signal_note(already)}"
        elif self._killed:
            reason = f"killed (SIGKILL) after not stopping within {timeout:.0f} s of SIGTERM"
        else:
            reason = "stopped (SIGTERM)"
        self._write_line(f"=== bench-tui: {self.label} {reason}, exit code {rc}")
        self._close_log()
        if not self._stopped_emitted:
            self._stopped_emitted = True
            self.emit(
                EngineStopped(engine=self.name, variant=self.variant_name, returncode=rc, reason=reason)
            )
        return rc

    def _close_log(self) -> None:
        with self._log_lock:
            if self._log_fh is not None:
                try:
                    self._log_fh.close()
                except OSError:
                    pass
                self._log_fh = None

    def env_info(self) -> dict[str, Any]:
        out = super().env_info()
        out["log_path"] = str(self.log_path)
        if self.proc is not None:
            out["pid"] = self.proc.pid
        return out
