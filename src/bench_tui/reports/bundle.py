"""Bundles: one run directory packed into a .tar.gz that `report`, `compare`, `watch` and `rerun` accept.

Layout: ``<run_id>/`` with the run directory's regular files (spec.yaml as given, resolved.json,
events.jsonl, engines/*.log, env.json, report.md/html, scores.json), local scenario packs the spec refers to
by a relative path (so regrading works from the bundle alone), and ``<run_id>/MANIFEST.json`` with the
size and sha256 of every member.

Secrets: every text member is scanned (``reports.scrub``) for the values of secret-like environment
variables, the spec's api_key-like values and well-known key shapes; hits are replaced by ``***REDACTED***``
(or, with ``refuse=True``, the bundle is not written). Binary members containing a secret are refused.

Unpacking (``open_bundle``) first reads every member's header, writing nothing, and refuses absolute
paths, ``..``, links, devices, FIFOs, sparse files, members outside the single top directory, oversized
members, too many members, too many bytes in all, and archives that unpack to over ``MAX_RATIO`` times
their size (a tar bomb); only then does it unpack into a staging folder (removed whatever happens), check
the manifest (types, relative paths inside the bundle, a sha256 and size for every file, no unlisted file)
and move the run into the cache.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import tarfile
import tempfile
import zlib
from pathlib import Path, PurePosixPath
from typing import Any

MANIFEST = "MANIFEST.json"
FORMAT = "bench-tui-bundle/1"
MAX_MEMBER_BYTES = 512 * 1024 * 1024
MAX_TOTAL_BYTES = 1024 * 1024 * 1024
MAX_MEMBERS = 20000
MAX_MANIFEST_BYTES = 16 * 1024 * 1024
# a run's text compresses 5-30x; a tar bomb 1000x: past RATIO_FLOOR_BYTES unpacked, more than MAX_RATIO is refused
MAX_RATIO = 100
RATIO_FLOOR_BYTES = 16 * 1024 * 1024
SKIP_NAMES = {"history.sqlite", "history.sqlite-journal", ".lock"}
BUNDLE_SUFFIXES = (".tar.gz", ".tgz", ".tar")


class BundleError(Exception):
    """A bundle that cannot be written or opened (message for the user)."""


def is_bundle(path: Path) -> bool:
    return path.is_file() and path.name.endswith(BUNDLE_SUFFIXES)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _is_text(data: bytes) -> bool:
    if b"\x00" in data[:8192]:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "bench-tui" / "bundles"


def in_bundle_cache(path: Path) -> bool:
    try:
        path.resolve().relative_to(_cache_root().resolve())
    except ValueError:
        return False
    return True


def _check_member(m: tarfile.TarInfo) -> PurePosixPath:
    name = m.name
    p = PurePosixPath(name)
    if name.startswith(("/", "\\")) or p.is_absolute() or re.match(r"^[A-Za-z]:", name):
        raise BundleError(f"unsafe bundle: absolute path {name!r}")
    if ".." in p.parts or "\\" in name:
        raise BundleError(f"unsafe bundle: path traversal in {name!r}")
    if m.issym() or m.islnk():
        raise BundleError(f"unsafe bundle: link member {name!r}")
    if not (m.isfile() or m.isdir()) or m.issparse():
        raise BundleError(f"unsafe bundle: special member {name!r} (device, fifo, sparse file, ...)")
    if m.size > MAX_MEMBER_BYTES:
        raise BundleError(f"unsafe bundle: member {name!r} is {m.size} bytes (limit {MAX_MEMBER_BYTES})")
    return p


def _scan(tar: tarfile.TarFile, path: Path) -> tuple[str, list[tuple[tarfile.TarInfo, list[str]]]]:
    """Every member checked from its header alone, before a byte is written: names, types, sizes, count,
    the total and the compression ratio (a tar bomb is refused before it is unpacked, and before the whole
    stream is even read). Returns (the top directory, [(member, path parts)])."""
    archive_bytes = path.stat().st_size
    tops: set[str] = set()
    members: list[tuple[tarfile.TarInfo, list[str]]] = []
    total = 0
    for m in tar:
        if len(members) >= MAX_MEMBERS:
            raise BundleError(f"unsafe bundle: more than {MAX_MEMBERS} members")
        p = _check_member(m)
        parts = [x for x in p.parts if x not in ("", ".")]
        if not parts:
            continue
        tops.add(parts[0])
        if len(tops) > 1:
            raise BundleError("unsafe bundle: members outside a single top directory")
        if m.isfile():
            total += m.size
            if total > MAX_TOTAL_BYTES:
                raise BundleError(
                    f"unsafe bundle: more than {MAX_TOTAL_BYTES} bytes once unpacked (limit "
                    f"{MAX_TOTAL_BYTES}); refused before unpacking"
                )
            if total > RATIO_FLOOR_BYTES and total > MAX_RATIO * max(archive_bytes, 1):
                raise BundleError(
                    f"unsafe bundle: {archive_bytes} bytes of archive unpack to more than {total} "
                    f"bytes (over {MAX_RATIO}x): a decompression bomb, refused before unpacking"
                )
        members.append((m, parts))
    if not tops:
        raise BundleError(f"{path}: empty bundle")
    return tops.pop(), members


def open_bundle(path: Path | str, dest: Path | str | None = None) -> Path:
    """Unpack a bundle (validated) and return its run directory. Cached by the archive's sha256."""
    path = Path(path)
    if not path.is_file():
        raise BundleError(f"{path}: no such bundle")
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    digest = h.hexdigest()[:20]
    root = Path(dest) if dest is not None else _cache_root() / digest
    done = root / ".complete"
    if done.is_file():
        top = done.read_text(encoding="utf-8").strip()
        if top and (root / top / "events.jsonl").is_file():
            try:
                _verify(root / top)  # the cached copy is checked again: it may have been edited
                return root / top
            except BundleError:
                done.unlink()
    try:
        tar = tarfile.open(path, "r:*")
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        raise BundleError(f"{path}: not a bundle ({exc})") from None
    staging: Path | None = None
    try:
        with tar:
            try:
                top, members = _scan(tar, path)
            except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
                raise BundleError(f"{path}: damaged bundle ({exc})") from None
            staging = Path(tempfile.mkdtemp(prefix=".unpack-", dir=_ensure(root.parent)))
            for m, parts in members:
                target = staging.joinpath(*parts)
                if m.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                try:
                    src = tar.extractfile(m)
                    if src is None:
                        raise BundleError(f"unsafe bundle: unreadable member {m.name!r}")
                    target.parent.mkdir(parents=True, exist_ok=True)
                    with open(target, "xb") as out:  # x: a member named twice is not written twice
                        # never more than the header said, whatever the stream holds
                        shutil.copyfileobj(_Capped(src, m.size), out)
                except FileExistsError:
                    raise BundleError(f"unsafe bundle: member {m.name!r} appears twice") from None
                except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
                    raise BundleError(f"{path}: damaged bundle ({exc})") from None
        run = staging / top
        _verify(run)
        root.mkdir(parents=True, exist_ok=True)
        final = root / top
        if final.exists():
            shutil.rmtree(final)
        os.replace(run, final)
        done.write_text(top + "\n", encoding="utf-8")
        return final
    finally:  # whatever happened (an error, Ctrl-C), no staging folder is left behind
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)


class _Capped(io.RawIOBase):
    """A reader that yields at most ``limit`` bytes of ``src``."""

    def __init__(self, src: Any, limit: int) -> None:
        self.src, self.left = src, limit

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        if self.left <= 0:
            return b""
        n = self.left if n is None or n < 0 else min(n, self.left)
        data: bytes = self.src.read(n)
        self.left -= len(data)
        return data


def _ensure(p: Path) -> Path:
    p.mkdir(parents=True, exist_ok=True)
    return p


_SHA256_RE = re.compile(r"[0-9a-f]{64}")


def _manifest_files(run: Path) -> list[tuple[str, int, str]]:
    """(path, size, sha256) of every manifest entry, each checked for type and place; BundleError otherwise."""
    mf = run / MANIFEST
    if not mf.is_file():
        raise BundleError(f"not a bench-tui bundle: no {MANIFEST}")
    if mf.stat().st_size > MAX_MANIFEST_BYTES:
        raise BundleError(
            f"damaged bundle: {MANIFEST} is {mf.stat().st_size} bytes (limit {MAX_MANIFEST_BYTES})"
        )
    try:
        manifest = json.loads(mf.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise BundleError(f"damaged bundle: {MANIFEST} is not JSON") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), list):
        raise BundleError(f"damaged bundle: {MANIFEST} has no 'files' list")
    out: list[tuple[str, int, str]] = []
    seen: set[str] = set()
    for i, f in enumerate(manifest["files"]):
        where = f"{MANIFEST} files[{i}]"
        if not isinstance(f, dict):
            raise BundleError(f"damaged bundle: {where} is not an object")
        rel, size, sha = f.get("path"), f.get("size"), f.get("sha256")
        if not isinstance(rel, str) or not rel:
            raise BundleError(f"damaged bundle: {where}.path must be a file name, got {rel!r}")
        pp = PurePosixPath(rel)
        if (
            pp.is_absolute()
            or rel.startswith(("/", "\\"))
            or re.match(r"^[A-Za-z]:", rel)
            or ".." in pp.parts
            or "\\" in rel
            or rel in (".", MANIFEST)
        ):
            raise BundleError(f"unsafe bundle: {where}.path {rel!r} is not a relative path inside the bundle")
        if not isinstance(sha, str) or not _SHA256_RE.fullmatch(sha):
            raise BundleError(
                f"damaged bundle: {where} ({rel}) has no valid sha256 (64 hex digits), got {str(sha)[:80]!r}"
            )
        if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 0):
            raise BundleError(f"damaged bundle: {where}.size must be a byte count, got {size!r}")
        if rel in seen:
            raise BundleError(f"damaged bundle: {where}.path {rel!r} is listed twice")
        seen.add(rel)
        out.append((pp.as_posix(), -1 if size is None else size, sha))
    return out


def _verify(run: Path) -> None:
    files = _manifest_files(run)
    base = run.resolve()
    listed = set()
    for rel, size, sha in files:
        target = run / rel
        if target.is_symlink() or not target.resolve().is_relative_to(base):
            raise BundleError(f"unsafe bundle: {rel} resolves outside the bundle")
        if not target.is_file():
            raise BundleError(f"damaged bundle: {rel} listed in the manifest is missing")
        data = target.read_bytes()
        if size >= 0 and len(data) != size:
            raise BundleError(
                f"damaged bundle: size mismatch for {rel} ({len(data)} bytes, manifest says {size})"
            )
        if _sha256(data) != sha:
            raise BundleError(f"damaged bundle: sha256 mismatch for {rel}")
        listed.add(rel)
    for f in sorted(run.rglob("*")):
        rel = f.relative_to(run).as_posix()
        if f.is_file() and rel != MANIFEST and rel not in listed:
            raise BundleError(f"damaged bundle: {rel} is in the archive but not in {MANIFEST}")
    if not (run / "events.jsonl").is_file():
        raise BundleError("not a bench-tui bundle: no events.jsonl")


def resolve_run(path: Path | str) -> Path:
    """A run directory, or the run directory inside a bundle (unpacked to the cache)."""
    path = Path(path)
    if path.is_dir():
        return path
    if is_bundle(path):
        return open_bundle(path)
    if not path.exists():
        raise BundleError(f"{path}: no such run directory or bundle")
    raise BundleError(f"{path}: neither a run directory nor a bundle (.tar.gz)")
