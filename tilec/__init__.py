"""tilec: an ahead-of-time compiler for Python tile programs written against the Warp tile API.

`import tilec as tl` also gives programs inert stand-ins for the API (see api.py),
so a tile program still imports and runs its host code as a plain script.
"""

import importlib
import importlib.util
from typing import Any

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    if importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")  # a submodule, e.g. tilec.ir
    api = importlib.import_module(f"{__name__}.api")
    return api.attribute(name)  # AttributeError, with a suggestion, for a name the API lacks
