"""The no-op rebuild's shortcut: `tilec build` decides it has nothing to do without compiling the
source (no libcst, no op table, no numpy).

A build that succeeds without printing a diagnostic records a *stamp* for its output folder in
tilec's cache folder: a key over everything the generated files and compiler commands depend on,
known before anything is generated (the source bytes and path, the output folder, the flags and
options, the environment variables that pick compilers, the machine, and a fingerprint of tilec
itself: its version and the size and mtime of each of its source files, templates and runtime
headers), with the sha256 of the manifest the build left. A later build whose key is the stamp's
finds the same manifest and re-hashes every artefact it lists (the libraries included), as the
full path's "up to date" does (build.up_to_date). Anything else sends the build down the full
path: another key, a changed manifest or artefact, leftovers of an interrupted build beside the
folder. The stamp lives outside the output folder (tilec owns only what the manifest lists there)
and is only a hint: without it, or when the cache folder cannot be written, builds are slower.

`tilec check` has the same shortcut for a clean result: a check that printed nothing (no error,
no warning, no note) records its key (the source bytes and path, the options, tilec's fingerprint
and the versions of the libraries it reads the source with); the same check again exits 0 at
once. A check that printed anything always runs again and prints it again.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import stat
from pathlib import Path
from typing import Any

from . import __version__
from .build import artefacts_hold, read_manifest
from .cachedir import cache_dir, keep_recent
from .frontend.source import package_root

PACKAGE = Path(__file__).resolve().parent
FINGERPRINTED = (".py", ".j2", ".h")  # tilec's own files whose change may change generated output
LIBRARIES = ("libcst", "jinja2")  # whose upgrade may change what tilec reads or writes
STAMPS_KEPT = 256  # the most recently written stamps kept (one per output folder built, or per clean check)
ENVIRONMENT = ("CXX", "NVCC", "PATH", "CUDA_HOME", "CUDA_PATH")  # pick the compilers a build uses


def tilec_fingerprint() -> str:
    """Size and mtime of every file of the tilec package and of the checkout's runtime headers
    (an editable install changes without a new version number)."""
    h = hashlib.sha256(f"tilec {__version__}\n".encode())
    roots = [PACKAGE, PACKAGE.parent / "runtime_headers"]
    for root in roots:
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith(FINGERPRINTED):
                    st = os.stat(os.path.join(folder, name))
                    h.update(f"{folder}/{name}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    for library in LIBRARIES:  # where it is installed and when (found without importing it)
        spec = importlib.util.find_spec(library)
        origin = spec.origin if spec is not None else None
        st_lib = os.stat(origin) if origin and os.path.exists(origin) else None
        h.update(f"{library}\0{origin}\0{st_lib.st_mtime_ns if st_lib else None}\n".encode())
    return h.hexdigest()


def build_key(source_path: str, outdir: str, options: dict[str, Any]) -> str | None:
    """The stamp key of one `tilec build` invocation; None when the source is not a regular file
    (/dev/zero, a FIFO: the full path refuses those with a message) or cannot be read."""
    return _key(source_path, {"outdir": os.path.abspath(outdir), "options": sorted((k, repr(v)) for k, v in options.items())})


def check_key(source_path: str, options: dict[str, Any]) -> str | None:
    """The key of one `tilec check` invocation (its options: block_dim, max_shared)."""
    return _key(source_path, {"command": "check", "options": sorted((k, repr(v)) for k, v in options.items())})


def _key(source_path: str, invocation: dict[str, Any]) -> str | None:
    try:
        if not stat.S_ISREG(os.stat(source_path).st_mode):
            return None
        with open(source_path, "rb") as f:
            source = f.read()
    except OSError:
        return None
    if _imports_project_files(source_path, source):
        return None  # the key would have to cover those files too: the full path compares what they generate
    parts = {
        **invocation,
        "source": hashlib.sha256(source).hexdigest(),
        "path": [source_path, os.path.abspath(source_path)],
        "environment": [(k, os.environ.get(k)) for k in ENVIRONMENT],
        "machine": os.uname().machine,
        "tilec": tilec_fingerprint(),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


IMPORT_FROM = re.compile(rb"^[ \t]*from[ \t]+(\.*)[ \t]*([\w.]*)[ \t]+import\b", re.MULTILINE)
IMPORT = re.compile(rb"^[ \t]*import[ \t]+([\w.]+)", re.MULTILINE)


def _imports_project_files(source_path: str, source: bytes) -> bool:
    """Whether the source may import names from another of the project's files (frontend/imports.py,
    module_aliases.py): a relative import, or a module found beside the file or at its package's root
    (by name only)."""
    folder = Path(source_path).resolve().parent
    root = package_root(folder)
    found = IMPORT_FROM.findall(source) + [(b"", module) for module in IMPORT.findall(source)]
    for dots, module in found:
        if dots:
            return True
        top = module.decode("ascii", "replace").split(".")[0]
        if top and any((base / f"{top}.py").exists() or (base / top).is_dir() for base in (folder, root)):
            return True
        if top and any(above.name == top for above in (folder, *folder.parents)):
            return True  # the file's own package by its absolute name (imports._own_package_module)
    return False


def _stamp_path(folder: Path) -> Path:
    where = hashlib.sha256(os.path.abspath(folder).encode()).hexdigest()[:32]
    return cache_dir() / "uptodate" / f"{where}.json"


def _interrupted(folder: Path, module: str) -> bool:
    """Leftovers of an interrupted build that only the full path (build._recover) cleans up."""
    try:
        names = os.listdir(folder.parent)
    except OSError:
        return True
    leftovers = {f".{module}.old", f".{module}.lock"}
    return (any(n in leftovers or n.startswith(f".{module}.tmp-") for n in names)
            or os.path.lexists(folder / "manifest.json.partial"))


def holds(key: str | None, folder: Path, module: str) -> bool:
    """True when folder is the output a build under `key` left, every artefact re-verified."""
    if key is None:
        return False
    try:
        stamp = json.loads(_stamp_path(folder).read_text(encoding="utf-8"))
        manifest = (folder / "manifest.json").read_bytes()
    except (OSError, ValueError):
        return False
    if not isinstance(stamp, dict) or stamp.get("key") != key:
        return False
    if stamp.get("manifest_sha256") != hashlib.sha256(manifest).hexdigest() or _interrupted(folder, module):
        return False
    data = read_manifest(folder, module)
    return data is not None and artefacts_hold(folder, data)


def record(key: str | None, folder: Path) -> None:
    """Stamps folder (just built or found up to date under `key`); silently nothing on failure."""
    if key is None:
        return
    path = _stamp_path(folder)
    try:
        manifest = (folder / "manifest.json").read_bytes()
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
        partial.write_text(json.dumps({"key": key, "manifest_sha256": hashlib.sha256(manifest).hexdigest(),
                                       "folder": os.path.abspath(folder)}), encoding="utf-8")
        os.replace(partial, path)
        keep_recent(path.parent, "*.json", STAMPS_KEPT)
    except OSError:
        pass


def _checked_path(key: str) -> Path:
    return cache_dir() / "checked" / key


def checked_clean(key: str | None) -> bool:
    """A check under `key` ran and printed nothing."""
    return key is not None and _checked_path(key).is_file()


def record_clean_check(key: str | None) -> None:
    """Remembers that the check under `key` printed nothing; silently nothing on failure."""
    if key is None:
        return
    path = _checked_path(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
        keep_recent(path.parent, "*", STAMPS_KEPT)
    except OSError:
        pass


# ---------------------------------------------------------------- before the command line loads
# `python -m tilec build ...` asks here first, before click and the CLI are imported (a third of a
# no-op rebuild's time). Only the plain spellings of the options that `_shortcut` in cli.py keys
# on are read, each with cli.py's default; any other argument (--check, -v, --dump-after, --help,
# --cxx, an unknown or malformed option) leaves the decision to the command line. A value spelled
# differently from click's reading of it only gives another key: the build then takes the full path.
DEFAULTS = {"target": "all", "arch": "sm_80,sm_90", "emit_only": False, "debug": False, "native": False,
            "cxx": None, "nvcc": None, "line_directives": False, "block_dim": 256, "max_shared": None}
VALUED = {"-o": "outdir", "--outdir": "outdir", "--target": "target", "--arch": "arch", "--block-dim": "block_dim",
          "--max-shared": "max_shared", "--color": "color"}
FLAGS = {"--emit-only": "emit_only", "--debug": "debug", "--native": "native", "--line-directives": "line_directives"}
CHOICES = {"target": ("cpu", "cuda", "cuda-emu", "all"), "color": ("auto", "always", "never")}
INT_RANGES = {"block_dim": (1, 1024), "max_shared": (0, None)}


def read_build_argv(argv: list[str]) -> tuple[str, str, dict[str, Any]] | None:
    """(file, outdir, options) of `build FILE [options]` in argv (without the program name), the
    options as cli.py's build passes them to _shortcut; None for anything else."""
    if len(argv) < 2 or argv[0] != "build":
        return None
    file, outdir, options = None, "build", dict(DEFAULTS)
    words = list(argv[1:])
    while words:
        word = words.pop(0)
        name, equals, inline = word.partition("=") if word.startswith("--") else (word, "", "")
        if name in FLAGS and not equals:
            options[FLAGS[name]] = True
        elif name in VALUED:
            if not equals and not words:
                return None
            value = inline if equals else words.pop(0)
            key = VALUED[name]
            if key in INT_RANGES:
                low, high = INT_RANGES[key]
                if not value.isdigit() or int(value) < low or (high is not None and int(value) > high):
                    return None
                options[key] = int(value)
            elif key in CHOICES and value not in CHOICES[key]:
                return None
            elif key == "outdir":
                outdir = value
            elif key != "color":  # colour shapes diagnostics, and the shortcut prints none
                options[key] = value
        elif word.startswith("-") or file is not None or not word:
            return None
        else:
            file = word
    return None if file is None else (file, outdir, options)


def read_check_argv(argv: list[str]) -> tuple[str, dict[str, Any]] | None:
    """(file, options) of `check FILE [--block-dim N] [--max-shared N] [--color C]` in argv, the
    options as cli.py's check records them; None for anything else (-v, --show-types, --format...)."""
    if len(argv) < 2 or argv[0] != "check":
        return None
    if any(w.startswith("-") and w.partition("=")[0] not in CHECK_SPELLINGS for w in argv[1:]):
        return None
    read = read_build_argv(["build", *argv[1:]])
    return None if read is None else (read[0], {k: read[2][k] for k in CHECK_OPTIONS})


CHECK_OPTIONS = ("block_dim", "max_shared")  # what check's result depends on, besides the source
CHECK_SPELLINGS = ("--block-dim", "--max-shared", "--color")


def answer(argv: list[str]) -> bool:
    """True when the command is answered here: a `tilec build` whose output folder is current (as
    cli.py's _shortcut decides it), after printing `MODULE: up to date in FOLDER`, or a `tilec
    check` that ran clean before (it prints nothing); False: run the command line."""
    checked = read_check_argv(argv)
    if checked is not None:
        return checked_clean(check_key(*checked))
    read = read_build_argv(argv)
    if read is None:
        return False
    from . import naming

    file, outdir, options = read
    module = naming.module_name(file)
    if module is None:
        return False
    folder = Path(os.path.abspath(outdir)) / module
    if not holds(build_key(file, outdir, options), folder, module):
        return False
    print(f"{module}: up to date in {folder}", flush=True)
    return True
