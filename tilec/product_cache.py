"""Compiled products kept by what they were compiled from.

A build whose generated source is unchanged (an edit to a comment, a docstring or the file's host
code; a branch switched back; a fresh output folder for a program built before) copies the CPU
library or the CUDA fatbin compiled from that exact text instead of compiling it again: g++ takes
1-5 s per module and nvcc about 4, where the copy takes milliseconds.

The key is the compiler (its real path and version line), every flag of its command, and the text
of every file the source may include (the source itself and the runtime headers): the compilers are
deterministic functions of these, so a hit is the file the compile would write. Products whose
contents name the folder they were built in (debug information), or the machine they were built
on (`-march=native`, where a cache folder may be shared), are never kept, and `TILEC_PCH=0` (no
compiler cache at all) turns this off too. An entry is a folder holding the product and what the
step read from the compiler besides it (nvcc's ptxas report), with their SHA-256 (a copy that does
not match, say after a crash mid-write, is refused and the entry removed); the KEEP most recently
used stay.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from .cachedir import cache_dir, keep_recent, remove_stale

KEEP = 64  # entries kept (a library is 0.1-1 MB, a fatbin about as much)
KIND = "products"  # the cache folder's subfolder
DIGESTS = "sha256.json"  # in an entry: each file's SHA-256, checked on every copy out


def enabled() -> bool:
    return os.environ.get("TILEC_PCH") != "0"


def product_key(compilers: list[str], versions: list[str], options: list[str], texts: dict[str, str]) -> str:
    """The entry of what these compilers (paths: their real paths are keyed) of these versions make
    with these options from the files `texts` (relative name -> text)."""
    real = [os.path.realpath(c) for c in compilers]
    key = hashlib.sha256("\0".join([*real, "", *versions, "", *options]).encode())
    for name in sorted(texts):
        key.update(b"\1" + name.encode() + b"\0" + texts[name].encode())
    return key.hexdigest()[:32]


def fetch(key: str, folder: Path, names: list[str]) -> bool:
    """Copies entry `key`'s files `names` into folder; False, with none of them left in folder,
    when there is no such entry, it lacks one (another build pruned it while it was read), or a copy
    is not what was stored (a damaged entry, then removed)."""
    entry = cache_dir() / KIND / key
    try:
        os.utime(entry)  # a hit counts as new: keep_recent keeps the entries builds use
        digests = json.loads((entry / DIGESTS).read_text())
    except (OSError, ValueError):
        return False
    copied: list[str] = []
    try:
        for name in names:
            _copy_as_made(entry / name, folder / name)
            copied.append(name)
            if not isinstance(digests, dict) or digests.get(name) != _digest(folder / name):
                shutil.rmtree(entry, ignore_errors=True)
                raise OSError(f"{entry / name}: not the file stored")
    except OSError:
        for name in copied:
            (folder / name).unlink(missing_ok=True)
        return False
    return True


def store(key: str, files: list[Path]) -> None:
    """Keeps copies of files as entry `key`; quietly nothing when the cache cannot be written, or
    another build stored the same entry first."""
    folder = cache_dir() / KIND
    try:
        folder.mkdir(parents=True, exist_ok=True)
        remove_stale(folder, ".build-")
        staging = Path(tempfile.mkdtemp(dir=folder, prefix=".build-"))
        try:
            for path in files:
                shutil.copyfile(path, staging / path.name)
                shutil.copymode(path, staging / path.name)  # a library's execute bits: see _copy_as_made
            digests = {path.name: _digest(staging / path.name) for path in files}
            (staging / DIGESTS).write_text(json.dumps(digests, sort_keys=True))
            os.rename(staging, folder / key)  # whole or not at all
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)
            return
        keep_recent(folder, "[!.]*", KEEP)
    except OSError:
        return


def _copy_as_made(source: Path, target: Path) -> None:
    """A copy with the permissions the compiler would have given it in this process: a file it
    made executable (a library) 0o777, else 0o666, both less the umask (the kernel applies it)."""
    mode = 0o777 if os.stat(source).st_mode & 0o111 else 0o666
    target.unlink(missing_ok=True)
    with open(source, "rb") as read, os.fdopen(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode), "wb") as write:
        shutil.copyfileobj(read, write)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
