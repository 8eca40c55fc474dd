"""Every generated name in one place: the one door through which user text reaches generated code.

Contract:
- `module_name` accepts only a file whose stem is an ASCII Python identifier that is not a Python
  keyword (anything else is refused with a diagnostic by the pipeline); module names are used
  verbatim in file names, C symbols and the loader.
- `c_ident` maps any user identifier (also non-ASCII) injectively to `[A-Za-z0-9_]+`.
- C++ names of user symbols carry a prefix (`v_`, `v<id>_`, `f_`, `k_`) that no C/C++/CUDA keyword,
  standard macro or runtime name starts with; generated temporaries start with `_`; so user
  identifiers never meet a keyword, a macro, a runtime name or each other.
- C entry points are `<module>_<kernel>_<target>_<direction>`: modules link into one program.
- `source_label` is the only form of the user's file name written into generated text.
"""
from __future__ import annotations

import hashlib

import functools
import keyword
import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .ir import Sym

_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PLAIN = re.compile(r"[A-Za-z0-9_]*")

# The marker of an adjoint kernel's extra parameter in the IR: `adj:x` is the adjoint of `x`. A
# Python identifier cannot contain `:`, so a user parameter named `adj_x` never meets it.
ADJOINT_PARAM = "adj:"


# The vendored runtime headers' folder inside an output folder. Not a Python identifier, so running
# Python inside the output folder never imports it in place of the tilec package.
RUNTIME_DIR = "tilec-rt"


def module_name(path: str) -> str | None:
    """The module name of a source file, or None when its stem is not an ASCII Python identifier
    (or is a keyword): such a name cannot be imported, and would reach C symbols and the loader."""
    stem = Path(path).stem
    if _MODULE.fullmatch(stem) and not keyword.iskeyword(stem) and not stem.startswith("__"):
        return stem
    return None


def c_ident(name: str) -> str:
    """An injective map from identifiers to `[A-Za-z0-9_]+`: ASCII identifiers without `_U` stay
    as they are; any other character (and the `_` of a `_U`) is written `_U<hex>_`."""
    if _PLAIN.fullmatch(name) and "_U" not in name:  # the common case, without a loop per character
        return name
    out = []
    for i, c in enumerate(name):
        plain = c.isascii() and (c.isalnum() or c == "_") and not (c == "_" and name[i + 1:i + 2] == "U")
        out.append(c if plain else f"_U{ord(c):x}_")
    return "".join(out)


@functools.lru_cache(maxsize=1 << 16)  # every read of a variable in the emitted C++ asks again
def _user(name: str, index: int = 0) -> str:
    """`v_<name>` (or `v<index>_<name>`): no keyword, macro or runtime name starts so, and the
    prefix keeps (name, index) pairs apart."""
    if name.startswith(ADJOINT_PARAM):
        return "adj_" + _user(name[len(ADJOINT_PARAM):], index)
    return f"v{index or ''}_{c_ident(name)}"


# The marker of an indexed array's index parameter in the IR: `a:index1` holds the indices of
# dimension 1 of the indexed array parameter `a` (whose base array keeps the name `a`).
INDEX_PARAM = ":index"


def index_param(name: str, axis: int) -> str:
    """The IR name of the index array of dimension `axis` of indexed array parameter `name`."""
    return f"{name}{INDEX_PARAM}{axis}"


def indexed_param(name: str) -> tuple[str, int] | None:
    """(indexed array parameter, axis) for an index parameter's IR name, else None."""
    base, marker, axis = name.rpartition(INDEX_PARAM)
    return (base, int(axis)) if marker and base and axis.isdigit() else None


def adjoint_param(name: str) -> str:
    """The IR name of the adjoint kernel's parameter paired with parameter `name`."""
    return ADJOINT_PARAM + name


def func_instance(source_name: str, index: int) -> str:
    """The IR name of the index-th specialisation of a func (`f`, `f%1`, ...)."""
    return source_name if index == 0 else f"{source_name}%{index}"


def func_symbol(ir_name: str) -> str:
    """The C++ name of a func specialisation: `f_<name>`, `f1_<name>`, ..."""
    name, _, index = ir_name.partition("%")
    return f"f{index}_{c_ident(name)}"


NATIVE_NAMESPACE = "tl_native"  # where the @wp.func_native snippets' functions are (codegen/natives.py)


NATIVE_ROLES = {"forward": "n", "replay": "r", "adjoint": "a"}  # a snippet's functions, by what they run


def native_function(name: str, role: str = "forward") -> str:
    """The C++ name of a @wp.func_native's function inside NATIVE_NAMESPACE: `n_<name>` runs its
    snippet, `r_<name>` its replay_snippet, `a_<name>` its adj_snippet."""
    return f"{NATIVE_ROLES[role]}_{c_ident(name)}"


def native_symbol(name: str, role: str = "forward") -> str:
    """The qualified C++ name a call of a @wp.func_native's function uses."""
    return f"{NATIVE_NAMESPACE}::{native_function(name, role)}"


def func_in_range_symbol(ir_name: str) -> str:
    """The C++ name of a func's in-range variant (its exp, log and tanh without edge handling, their
    keys kept in the calling loop's tl::InRange; backend_cpu/emit.py): `fr_<name>`, `fr1_<name>`, ..."""
    name, _, index = ir_name.partition("%")
    return f"fr{index}_{c_ident(name)}"


def kernel_body(kernel: str, direction: str) -> str:
    """The C++ function holding a kernel's forward or backward body (internal linkage)."""
    return f"k_{c_ident(kernel)}_{direction}"


def kernel_instance(base: str, bindings: list[tuple[str, str]]) -> str:
    """The module name of one instantiation of a nested kernel: `k__TILE_16` for `TILE = 16`,
    `k__act_relu` for `act = "relu"` (values spelled as ASCII identifiers: `-` -> `m`, `.` -> `p`;
    a value with other characters (a string's) also gets a digest of its text, so that two values
    never share a name)."""
    out = base
    for name, value in bindings:
        spelled = "".join(c if c.isascii() and c.isalnum() else {"-": "m", ".": "p"}.get(c, "_") for c in value)
        if any(not (c.isascii() and (c.isalnum() or c in "-.")) for c in value):
            spelled += "_" + hashlib.sha256(value.encode()).hexdigest()[:8]
        out += f"__{name}_{spelled}"
    return out


def block_dim_instance(kernel: str, block_dim: int) -> str:
    """The C-level name of a kernel compiled for one of several block_dims (the loader keeps
    the kernel's name and picks the instance by the launch's block_dim)."""
    return f"{kernel}__block_dim_{block_dim}"


# Generated C++ names start with an underscore; user identifiers never do (see cxx_var).
ELEMENT_INDEX = "_e"
IN_RANGE_SEEN = "_seen"  # an element loop's tl::InRange: were exp, log and tanh arguments in their fast ranges (cxx.py)
ROW_INDEX = "_r"  # an element loop split into rows (codegen/element_loops.py): the row
COLUMN_INDEX = "_c"  # and the column, ELEMENT_INDEX = ROW_INDEX * extent + COLUMN_INDEX
REGISTER_SLOT = "_s"  # a thread's slot in a register tile (GPU model)


def temp(index: int) -> str:
    """A checker-made temporary's IR name (its Sym id keeps it apart from user names)."""
    return f"_tmp{index}"


def cxx_temp(index: int) -> str:
    return f"_t{index}"


def c_param(name: str) -> str:
    """A kernel parameter's name in the C API."""
    return _user(name)


def cxx_local_storage(sym: Sym) -> str:
    """The elements of a local array (`a = wp.zeros(shape=..., dtype=T)` in a kernel), declared at the top."""
    return f"_local_{cxx_var(sym)}"


def cxx_heap(sym: Sym) -> str:
    """The owner of a tile allocated on the heap (the tile itself is the reference cxx_var(sym))."""
    return f"_heap_{cxx_var(sym)}"


def cxx_row(sym: Sym) -> str:
    """The pointer an element loop reads or writes a one-row tile through: the array's row in
    place, or the tile's own elements (codegen/row_views.py)."""
    return f"_row_{cxx_var(sym)}"


def cxx_row_add(sym: Sym) -> str:
    """The tl::RowAdd an element loop adds a one-row tile through (codegen/row_views.py)."""
    return f"_add_{cxx_var(sym)}"


def cxx_loop_add(sym: Sym, k: int) -> str:
    """Where an element loop adds tile `sym` for the k-th add after it (codegen/loop_adds.py)."""
    return f"_add{k}_{cxx_var(sym)}"


ELEMENT_LOCAL = "_el_"  # the prefix of cxx_element's names


def cxx_element(sym: Sym) -> str:
    """A tile's element as a local of the one loop that computes and reads it (codegen/fused_loops.py)."""
    return f"{ELEMENT_LOCAL}{cxx_var(sym)}"


def cxx_arg(name: str) -> str:
    """The local holding a converted entry-point argument."""
    return f"_arg_{_user(name)}"


def cxx_sums(name: str) -> str:
    """The entry point's per-thread sums of an array the adjoint only adds tiles into (tile_sums.h)."""
    return f"_sums_{_user(name)}"


@functools.lru_cache(maxsize=1 << 16)  # C-level: symbols are interned and hash by identity
def cxx_var(sym: Sym) -> str:
    """The C++ identifier of an IR symbol (asked at every read of it in the emitted code)."""
    return _user(sym.name, sym.id)


def entry(module: str, kernel: str, target: str, direction: str) -> str:
    """A C entry point: `<module>_<kernel>_<target>_<direction>`."""
    return f"{module}_{c_ident(kernel)}_{target}_{direction}"


def fwd_entry(module: str, kernel: str, target: str) -> str:
    return entry(module, kernel, target, "forward")


def adj_entry(module: str, kernel: str, target: str) -> str:
    return entry(module, kernel, target, "backward")


def live_ids_entry(module: str) -> str:
    """The C entry that sets the table of live objects a kernel checks ids read from values against."""
    return f"{module}_set_live_ids"


_LABEL_SAFE = re.compile(r"[A-Za-z0-9._+@=,-]")


def source_label(filename: str) -> str:
    """The user's file name (no folders) as written into generated comments, strings and docstrings:
    characters outside `[A-Za-z0-9._+@=,-]` are %-escaped, so it cannot end a comment, open a string
    or a format field, or start a line."""
    base = Path(filename).name
    def escape(c: str) -> str:
        return "".join(f"%{b:02X}" for b in c.encode("utf-8", "surrogatepass"))

    return "".join(c if _LABEL_SAFE.fullmatch(c) else escape(c) for c in base)
