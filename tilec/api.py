"""The tile API as seen by Python at run time: inert stand-ins.

`import tilec as tl` must work in a program that is also run as a script
(host code, tests). Decorators return the function unchanged; annotations and
dtypes evaluate to placeholders. Tile operations only exist in compiled code,
so calling one from Python raises.
"""
from __future__ import annotations


class _Placeholder:
    def __init__(self, name: str):
        self._name = name

    def __call__(self, *args, **kwargs):
        if self._name.startswith("tile") or self._name in ("tid", "untile", "atomic_add"):
            raise RuntimeError(f"tl.{self._name} runs only inside a compiled kernel; build with `tilec build`")
        return self

    def __getitem__(self, item):
        return self

    def __repr__(self) -> str:
        return f"<tilec api {self._name}>"


def _decorator(fn=None, **options):
    if fn is None:
        return lambda f: f
    return fn


kernel = _decorator
func = _decorator


def constant(value):
    return value


def placeholder(name: str):
    return _Placeholder(name)


def load(folder):
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
    if spec is None or not os.path.exists(os.path.join(folder, "__init__.py")):
        raise ImportError(f"no generated tilec module in {folder}: run `tilec build` first")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
