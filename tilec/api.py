"""The tile API as seen by Python at run time: inert stand-ins.

`import tilec as tl` must work in a program that is also run as a script
(host code, tests). Decorators return the function unchanged; annotations and
dtypes evaluate to placeholders. Tile operations only exist in compiled code,
so calling one from Python raises.
"""
from __future__ import annotations

from types import ModuleType
from typing import Any, TypeVar

_F = TypeVar("_F")


class _Placeholder:
    def __init__(self, name: str):
        self._name = name

    def __call__(self, *args: Any, **kwargs: Any) -> _Placeholder:
        if self._name.startswith("tile") or self._name in ("tid", "untile", "atomic_add"):
            raise RuntimeError(f"tl.{self._name} runs only inside a compiled kernel; build with `tilec build`")
        return self

    def __getitem__(self, item: Any) -> _Placeholder:
        return self

    def __repr__(self) -> str:
        return f"<tilec api {self._name}>"


def _decorator(fn: Any = None, **options: Any) -> Any:
    if fn is None:
        return lambda f: f
    return fn


kernel = _decorator
func = _decorator


def constant(value: _F) -> _F:
    return value


def placeholder(name: str) -> _Placeholder:
    return _Placeholder(name)


# Names a Warp program reaches at module level or in annotations beyond the op table's.
_TYPE_NAMES = ("array", "array1d", "array2d", "array3d", "array4d", "indexedarray", "Tile", "tile",
               "vec", "mat", "vec2", "vec3", "vec4", "mat22", "mat33", "mat44", "quat", "transform",
               "spatial_vector", "spatial_matrix", "struct", "overload", "func_grad", "int16", "uint16",
               "uint64", "bfloat16", "Any", "init", "Texture1D", "Texture2D", "Texture3D", "HashGridQuery")
# Warp's host-side API, which the module `tilec build` generates replaces: name -> what to use.
_LAUNCH = "launch through the generated module: mod = tilec.load(folder); mod.<kernel>.{}(...)"
_ARRAYS = "pass numpy arrays (or Warp's own arrays) to the generated module's launches"
_HOST_ONLY = {"launch": _LAUNCH.format("launch"), "launch_tiled": _LAUNCH.format("launch_tiled"),
              "Tape": "record launches with the generated module's tape: with mod.Tape() as tape: ...",
              "zeros": _ARRAYS, "empty": _ARRAYS, "ones": _ARRAYS, "full": _ARRAYS, "from_numpy": _ARRAYS,
              "synchronize": "launches of the generated module on the CPU return when done"}


def known_names() -> frozenset[str]:
    """Every name `import tilec as wp` provides: the op table's API, dtypes, math constants, types."""
    from .frontend.resolve import MATH_CONSTANTS
    from .ir.types import DTYPE_NAMES
    from .ops import API_OPS

    return frozenset({*API_OPS, *DTYPE_NAMES, *MATH_CONSTANTS, *_TYPE_NAMES, "kernel", "func", "constant", "load"})


def attribute(name: str) -> Any:
    """`tilec.<name>` for a program run as a script: a stand-in, or AttributeError naming the fix."""
    if name in ("kernel", "func", "constant", "load"):
        return globals()[name]
    if name == "init":
        return lambda *args, **kwargs: None
    known = known_names()
    if name in known:
        return placeholder(name)
    if name in _HOST_ONLY:
        raise AttributeError(f"module 'tilec' has no attribute '{name}' (tilec compiles kernels ahead of time): "
                             f"{_HOST_ONLY[name]}")
    from .frontend.suggest import closest, same_kind

    close = closest(name, same_kind(name, known))
    raise AttributeError(f"module 'tilec' has no attribute '{name}'" + (f"; did you mean '{close}'?" if close else ""))


def load(folder: str) -> ModuleType:
    """Import a generated module from its output folder, e.g. tl.load("build/gemm").

    Useful when the program file and the generated module share a name; otherwise
    put OUTDIR on sys.path and `import <module>`.
    """
    import importlib.util
    import os
    import sys

    folder = os.path.abspath(folder)
    name = os.path.basename(folder.rstrip(os.sep))
    spec = importlib.util.spec_from_file_location(
        f"tilec_generated.{name}", os.path.join(folder, "__init__.py"), submodule_search_locations=[folder])
    if spec is None or spec.loader is None or not os.path.exists(os.path.join(folder, "__init__.py")):
        raise ImportError(f"no generated tilec module in {folder}: run `tilec build` first")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
