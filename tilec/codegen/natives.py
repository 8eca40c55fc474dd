"""The @wp.func_native snippets (frontend/native_funcs.py) as C++ functions: each snippet, as the
user wrote it, is the body of a function of its Python parameters, under their Python names, in
namespace `tl_native` (naming.NATIVE_NAMESPACE), where Warp's scalar type names (`float32`, `uint32`, ...) mean what they
mean in Warp's own generated code, which a snippet may use."""
from __future__ import annotations

from .. import ir, naming
from ..ir.types import SCALARS, Scalar



def native_texts(module: ir.Module, qualifier: str, filename: str) -> list[str]:
    """The namespace holding every snippet function `module` calls ([] when it calls none); each
    function declared with `qualifier` (`static `, `__device__ static `)."""
    if not module.natives:
        return []
    lines = [f"namespace {naming.NATIVE_NAMESPACE} {{  // the @wp.func_native snippets, as written in the source"]
    lines += [f"using {t.name} = {t.ctype};" for t in SCALARS.values() if t.name != "bool"]
    for n in module.natives:
        params = ", ".join(f"{t.ctype} {name}" for name, t in n.params)
        ret = n.ret.ctype if isinstance(n.ret, Scalar) else "void"
        lines += ["", f"// {filename}:{n.span.line}: @wp.func_native `{n.source_name}`",
                  f"[[maybe_unused]] {qualifier}{ret} {naming.native_function(n.name)}({params}) {{", n.snippet.strip("\n"), "}"]
    lines.append(f"}}  // namespace {naming.NATIVE_NAMESPACE}")
    return ["\n".join(lines)]
