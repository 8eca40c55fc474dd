"""Every generated name in one place: temporaries, C++ identifiers, entry points."""
from __future__ import annotations

CXX_RESERVED = {
    "alignas", "alignof", "asm", "auto", "bool", "case", "catch", "char", "class", "const",
    "constexpr", "default", "delete", "do", "double", "enum", "explicit", "export", "extern",
    "float", "friend", "goto", "inline", "int", "long", "mutable", "namespace", "new",
    "operator", "private", "protected", "public", "register", "short", "signed", "sizeof",
    "static", "struct", "switch", "template", "this", "throw", "typedef", "typename", "union",
    "unsigned", "using", "virtual", "void", "volatile", "main", "tl", "ctx", "std", "launch",
    "int8_t", "uint8_t", "int32_t", "uint32_t", "int64_t", "uint64_t", "while", "for", "if", "else",
    "return", "break", "continue", "true", "false", "nullptr", "and", "or", "not", "xor",
}  # fmt: skip


# The vendored runtime headers' folder inside an output folder. Not a Python identifier, so running
# Python inside the output folder never imports it in place of the tilec package.
RUNTIME_DIR = "tilec-rt"


def temp(index: int) -> str:
    """A checker-made temporary (cannot clash: user names never start with `_t`... they may, so
    temporaries carry a `%` id in the IR and are mangled on emission)."""
    return f"_tmp{index}"


def func_instance(source_name: str, index: int) -> str:
    """The C-level name of the index-th specialisation of a func."""
    return source_name if index == 0 else f"{source_name}_{index}"


def kernel_instance(base: str, bindings: list) -> str:
    """The module name of one instantiation of a nested kernel: `k__TILE_16` for `TILE = 16`
    (values spelled as identifiers: `-` -> `m`, `.` -> `p`)."""
    out = base
    for name, value in bindings:
        spelled = "".join(c if c.isalnum() else {"-": "m", ".": "p"}.get(c, "_") for c in value)
        out += f"__{name}_{spelled}"
    return out


def block_dim_instance(kernel: str, block_dim: int) -> str:
    """The C-level name of a kernel compiled for one of several block_dims (the loader keeps
    the kernel's name and picks the instance by the launch's block_dim)."""
    return f"{kernel}__block_dim_{block_dim}"


# Generated C++ names start with an underscore; user identifiers never do (see cxx_var).
ELEMENT_INDEX = "_e"
REGISTER_SLOT = "_s"  # a thread's slot in a register tile (GPU model)


def cxx_temp(index: int) -> str:
    return f"_t{index}"


def c_param(name: str) -> str:
    """A kernel parameter's name in the C API (user names, unless they clash with C/C++)."""
    return f"v_{name}" if name in CXX_RESERVED or name.startswith(("_", "v_")) else name


def cxx_arg(name: str) -> str:
    """The local holding a converted entry-point argument."""
    return f"_arg_{name}"


def cxx_var(sym) -> str:
    """The C++ identifier of an IR symbol: never starts with `_`, never a C++ keyword."""
    base = f"{sym.name}_{sym.id}" if sym.id else sym.name
    return f"v_{base}" if base in CXX_RESERVED or base.startswith("_") or base.startswith("v_") else base


def cxx_adj(sym) -> str:
    return f"adj_{cxx_var(sym)}"


def fwd_entry(kernel: str, device: str) -> str:
    return f"{kernel}_{device}_forward"


def adj_entry(kernel: str, device: str) -> str:
    return f"{kernel}_{device}_backward"
