"""Build: generated files -> an output folder, compiled, swapped in file by file.

Contract (tilec owns only what its manifest lists):
- `OUTDIR/<module>/` is refused when it exists, is not empty and holds no tilec manifest of this
  module: tilec never writes into, hides or deletes a folder of someone else's files.
- Inside a tilec folder, files the manifest does not list (a user's notes, say) are never touched;
  a generated file that would overwrite such a file is refused.
- Everything is generated and compiled in a temporary sibling folder first: a failed build leaves
  the previous output as it was. The swap moves each file into place (an atomic rename), then
  replaces manifest.json last; before it starts, the manifest is rewritten to own the union of the
  old and new files with no valid hash, so a build killed mid-swap is never "up to date", is
  repaired by the next build, and never wedges it.
- The manifest stores the sha256 of every artefact, the built libraries included, and its own
  (`manifest_sha256`, over its text with that value blank); "up to date" re-hashes them all, so an
  edited manifest is rebuilt like an edited library. Libraries of other targets (`--target cpu` then `--target cuda`) are kept
  while the source they were compiled from is unchanged.
- Builds of one OUTDIR are serialised by an flock on the folder itself: no lock file is left.
  Folders and files are created with the user's umask.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path, PurePosixPath
from typing import Any, Callable

from . import __version__

TMP_MARKER = ".tilec-build-in-progress"  # written first into every temporary build folder
SEAL = "manifest_sha256"  # the manifest's own hash, over its text with this value blank


class BuildError(Exception):
    """A compiler failed: the command and where its log is."""

    def __init__(self, message: str, command: list[str], log_path: str | None, errors: tuple[str, ...] = ()):
        super().__init__(message)
        self.command = command
        self.log_path = log_path
        self.errors = errors  # the compiler's first error lines (a @wp.func_native snippet's own, often)


class OutputFolderError(Exception):
    """The output folder holds files tilec did not write: nothing was changed."""


class BuildResult:
    """Where a build went. A plain class: the no-op rebuild's shortcut imports this module, and
    dataclasses (with inspect) would be a tenth of its time; so are the modules only a build uses
    (fcntl, shutil, subprocess, tempfile), imported where they are used."""

    def __init__(self, folder: Path, up_to_date: bool):
        self.folder = folder
        self.up_to_date = up_to_date  # nothing was rebuilt


def inputs_hash(files: dict[str, str], flags: dict[str, Any]) -> str:
    h = hashlib.sha256(f"tilec {__version__}\n".encode())
    for name in sorted(files):
        h.update(name.encode() + b"\0" + files[name].encode() + b"\0")
    h.update(repr(sorted(flags.items())).encode())
    return h.hexdigest()


def library_key(source: str, text: str, command: list[str]) -> dict[str, Any]:
    """What a library was compiled from and how: a rebuild is needed when any of it changes."""
    how = hashlib.sha256(json.dumps([source, text, list(command)]).encode()).hexdigest()
    return {"key": how, "sources": {source: hashlib.sha256(text.encode()).hexdigest()}}


def file_sha256(path: Path) -> str | None:
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    except OSError:
        return None
    return h.hexdigest()


def _safe_relative(name: object) -> bool:
    """A manifest entry names a file inside the folder (a crafted manifest cannot reach outside)."""
    if not isinstance(name, str) or not name or "\0" in name or "\\" in name:
        return False
    p = PurePosixPath(name)
    return not p.is_absolute() and ".." not in p.parts and "." not in p.parts


def read_manifest(folder: Path, module: str) -> dict[str, Any] | None:
    """The tilec manifest of `module` in folder, or None."""
    try:
        data = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or "tilec_version" not in data or data.get("module") != module:
        return None
    return data


def owned_files(data: dict[str, Any], module: str) -> set[str]:
    """The relative paths a manifest says tilec wrote."""
    names = {"manifest.json"}
    for key in ("files", "libraries"):
        entries = data.get(key)
        if isinstance(entries, dict):
            names |= {n for n in entries if _safe_relative(n)}
    # manifests of earlier tilec versions listed no libraries: these names are tilec's own
    names |= {f"lib{module}_cpu.so", f"lib{module}_cuda_emu.so", f"{module}.fatbin"}
    return names


def _hashes_hold(folder: Path, entries: object) -> bool:
    if not isinstance(entries, dict):
        return False
    for name, entry in entries.items():
        want = entry.get("sha256") if isinstance(entry, dict) else entry
        if not _safe_relative(name) or not isinstance(want, str) or file_sha256(folder / name) != want:
            return False
    return True


def up_to_date(folder: Path, module: str, digest: str, products: dict[str, dict[str, Any]]) -> bool:
    """The manifest matches these inputs and every artefact it lists still has its recorded hash."""
    data = read_manifest(folder, module)
    if data is None or data.get("inputs_hash") != digest:
        return False
    libraries = data.get("libraries", {})
    if not isinstance(libraries, dict) or any(
            not isinstance(libraries.get(p), dict) or libraries[p].get("key") != key["key"]
            for p, key in products.items()):
        return False
    return artefacts_hold(folder, data)


def artefacts_hold(folder: Path, data: dict[str, Any]) -> bool:
    """The manifest is as the build left it (its seal holds) and every file and library it lists
    still has its recorded sha256."""
    return (_sealed(folder / "manifest.json") and _hashes_hold(folder, data.get("files"))
            and _hashes_hold(folder, data.get("libraries", {})))


def _manifest_text(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def _seal(path: Path) -> None:
    """Writes the manifest's own hash into it: the last change a build makes to it."""
    data = json.loads(path.read_text(encoding="utf-8"))
    data[SEAL] = ""
    data[SEAL] = hashlib.sha256(_manifest_text(data).encode()).hexdigest()
    path.write_text(_manifest_text(data), encoding="utf-8")


def _sealed(path: Path) -> bool:
    """The manifest's text is exactly what _seal wrote: any edit, even of spacing, breaks it."""
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text)
    except (OSError, ValueError):
        return False
    if not isinstance(data, dict) or not isinstance(data.get(SEAL), str) or _manifest_text(data) != text:
        return False
    claimed: str = data[SEAL]  # a str: checked above
    data[SEAL] = ""
    return hashlib.sha256(_manifest_text(data).encode()).hexdigest() == claimed


def write_and_build(outdir: Path, module: str, files: dict[str, str], digest: str,
                    compile_steps: list[Callable[[Path], None]],
                    products: dict[str, tuple[str, list[str]]]) -> BuildResult:
    """files: relative path -> text. compile_steps: callables(tmp_folder) that build products.
    products: library file name -> (the generated file it is compiled from, the compiler command)."""
    import fcntl
    import shutil
    import tempfile

    keys = {name: library_key(source, files.get(source, ""), command)
            for name, (source, command) in products.items()}
    outdir = Path(os.path.abspath(outdir))
    outdir.mkdir(parents=True, exist_ok=True)
    final = outdir / module
    fd = os.open(outdir, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        _recover(outdir, module)
        old = _claim(final, module)
        if old is not None and up_to_date(final, module, digest, keys):
            return BuildResult(final, True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{module}.tmp-", dir=outdir))
        try:
            (tmp / TMP_MARKER).write_text("")
            for name, text in files.items():
                path = tmp / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(text.encode("utf-8"))
            for step in compile_steps:
                step(tmp)
            carried = _carried_libraries(final, old, keys, files)
            _record_libraries(tmp, keys, carried)
            _seal(tmp / "manifest.json")
            _swap(tmp, final, module, old, set(carried))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    finally:
        os.close(fd)
    return BuildResult(final, False)


def _claim(final: Path, module: str) -> dict[str, Any] | None:
    """The folder's current manifest (None when absent or empty); refuses a folder tilec does not own."""
    if not final.exists() and not final.is_symlink():
        return None
    if final.is_symlink() or not final.is_dir():
        raise OutputFolderError(f"{final} exists and is not a folder tilec wrote; choose another -o folder")
    data = read_manifest(final, module)
    if data is None and any(final.iterdir()):
        raise OutputFolderError(
            f"{final} holds files that tilec did not write (no tilec manifest of module `{module}`): refusing to "
            "build there; choose another -o folder or move those files away")
    return data


def _carried_libraries(final: Path, old: dict[str, Any] | None, products: dict[str, dict[str, Any]],
                       files: dict[str, str]) -> dict[str, Any]:
    """Libraries of the previous build that stay: not rebuilt now, their hash intact, and compiled
    from a source that is unchanged (the sources' names are part of the library's key)."""
    if old is None or not isinstance(old.get("libraries"), dict):
        return {}
    new_hashes = {n: hashlib.sha256(t.encode()).hexdigest() for n, t in files.items()}
    keep = {}
    for name, entry in old["libraries"].items():
        if name in products or not _safe_relative(name) or not isinstance(entry, dict):
            continue
        sources = entry.get("sources", {})
        if (isinstance(sources, dict) and sources and all(new_hashes.get(s) == h for s, h in sources.items())
                and file_sha256(final / name) == entry.get("sha256")):
            keep[name] = entry
    return keep


def _record_libraries(tmp: Path, products: dict[str, dict[str, Any]], carried: dict[str, Any]) -> None:
    """Adds each built library's hash, key and source hashes to the manifest in tmp."""
    built = {p: k for p, k in products.items() if (tmp / p).exists()}
    if not built and not carried:
        return
    path = tmp / "manifest.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    libraries = dict(carried)
    for name, key in built.items():
        libraries[name] = {"sha256": file_sha256(tmp / name), **key}
    data["libraries"] = dict(sorted(libraries.items()))
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _swap(tmp: Path, final: Path, module: str, old: dict[str, Any] | None, carried: set[str]) -> None:
    new_names = {str(p.relative_to(tmp).as_posix()) for p in tmp.rglob("*") if p.is_file()} - {TMP_MARKER}
    owned = owned_files(old, module) if old is not None else set()
    for name in sorted(new_names):
        target = final / name
        if (target.exists() or target.is_symlink()) and name not in owned:
            raise OutputFolderError(f"{target} was not written by tilec: refusing to overwrite it")
    final.mkdir(exist_ok=True)
    if old is not None:  # until the swap completes the folder owns old and new files, and is never up to date
        pending = dict(old)
        pending["files"] = {n: "" for n in sorted(owned | new_names) if n != "manifest.json"}
        pending.pop("libraries", None)
        pending["inputs_hash"] = "swap in progress"
        _atomic_write(final / "manifest.json", json.dumps(pending, indent=2, sort_keys=True) + "\n")
    for name in sorted(new_names - {"manifest.json"}):
        target = final / name
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(tmp / name, target)
    for name in sorted(owned - new_names - carried):
        target = final / name
        if target.is_file() and not target.is_symlink():
            target.unlink()
    os.replace(tmp / "manifest.json", final / "manifest.json")


def _atomic_write(path: Path, text: str) -> None:
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)


def _recover(outdir: Path, module: str) -> None:
    """Leftovers of an interrupted build: temporary folders (marked as tilec's), a `.module.old`
    folder of an earlier tilec's swap (put back when the module folder is missing), a lock file of
    an earlier tilec (empty), a half-written manifest."""
    import shutil

    final, old = outdir / module, outdir / f".{module}.old"
    if old.is_dir() and not final.exists() and read_manifest(old, module) is not None:
        os.rename(old, final)
    for stale in outdir.glob(f".{module}.tmp-*"):
        if stale.is_dir() and ((stale / TMP_MARKER).exists() or not any(stale.iterdir())):
            shutil.rmtree(stale, ignore_errors=True)
    lock = outdir / f".{module}.lock"
    if lock.is_file() and not lock.is_symlink() and lock.stat().st_size == 0:
        lock.unlink()
    partial = final / "manifest.json.partial"
    if partial.is_file():
        partial.unlink()


def run_compiler(command: list[str], cwd: Path, log_name: str, outdir: Path) -> str:
    """Runs a compiler; returns its output, or raises BuildError with the command and a log."""
    import subprocess

    proc = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        log_dir = outdir / "logs"
        log_dir.mkdir(parents=True, exist_ok=True)
        log_path = log_dir / log_name
        log_path.write_text(" ".join(command) + "\n\n" + proc.stdout + proc.stderr)
        errors = tuple(line.strip() for line in (proc.stdout + proc.stderr).splitlines() if " error" in line)[:3]
        raise BuildError(f"{Path(command[0]).name} failed (exit {proc.returncode})", command, str(log_path), errors)
    return proc.stdout + proc.stderr
