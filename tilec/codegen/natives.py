"""The @wp.func_native snippets (frontend/native_funcs.py) as C++ functions: each snippet, as the
user wrote it, is the body of a function of its Python parameters, under their Python names, in
namespace `tl_native` (naming.NATIVE_NAMESPACE), where Warp's scalar type names (`float32`, `uint32`, ...)
mean what they mean in Warp's own generated code, which a snippet may use. An array parameter is an
`array_t<T>` with the members a Warp snippet reads (`data`, `shape[k]`, `strides[k]` in bytes,
`ndim`) and Warp's conversion to its data pointer, so that `x[i]` indexes the data as in Warp; its
elements are const where no snippet of the func may write them.

A snippet with an adj_snippet gets a second function, `a_<name>`, taking the same parameters, the
float arrays' adjoint arrays (`adj_<name>`) and the result's adjoint (`adj_ret`); the adj_snippet
adds to `adj_<name>` of each scalar, locals of the function, and the function returns the float
scalars' totals (one value, or a vector of them) for the reverse sweep to hand on. The adj_snippet
runs inside a lambda so that a `return;` in it leaves the snippet only."""
from __future__ import annotations

from .. import ir, naming
from ..ir.types import SCALARS, ArrayT, MatT, Scalar, VecT

_ARRAY_ADAPTER = """\
// Warp's array_t, as a snippet sees it: x[i] indexes the data pointer; shape, strides (bytes), ndim.
struct shape_t {
    int dims[4];
    TL_HD int operator[](int i) const { return dims[i]; }
};
template <class T> struct array_t {
    T* data = nullptr;
    T* grad = nullptr;
    shape_t shape = {};
    int strides[4] = {};
    uint16_t ndim = 0;
    uint16_t flags = 0;
    array_t() = default;
    template <class U> TL_HD array_t(const array_t<U>& a)  // array_t<const T> of an array_t<T>
        : data(a.data), grad(a.grad), shape(a.shape), ndim(a.ndim), flags(a.flags) {
        for (int k = 0; k < 4; ++k) strides[k] = a.strides[k];
    }
    TL_HD operator T*() const { return data; }
};
template <class T, int N> TL_HD array_t<T> as_array(const tl::Array<T, N>& a) {
    array_t<T> out;
    out.data = a.data;
    out.ndim = uint16_t(N);
    for (int k = 0; k < N; ++k) { out.shape.dims[k] = int(a.shape[k]); out.strides[k] = int(a.strides[k]); }
    return out;
}"""


# Warp's vector and matrix templates and aliases (wp::vec_t<3, wp::float32>, wp::vec3, wp::mat22d) as
# tilec's tl::vec and tl::mat: components in `c`, v[i], m(i, j), and constructors of every component.
_WARP_VALUE_TYPES = "\n".join([
    "template <unsigned N, class T> using vec_t = tl::vec<int(N), T>;",
    "template <unsigned M, unsigned N, class T> using mat_t = tl::mat<int(M), int(N), T>;",
    *(f"using vec{n}{s} = vec_t<{n}, {t}>;" for n in (2, 3, 4) for s, t in (("", "float"), ("f", "float"), ("d", "double"))),
    *(f"using mat{n}{n}{s} = mat_t<{n}, {n}, {t}>;" for n in (2, 3, 4) for s, t in (("", "float"), ("f", "float"), ("d", "double"))),
])


def param_ctype(t: ir.NativeParam, const: bool = False) -> str:
    """How a snippet's function declares a parameter of type t; `const`: an array of const elements
    (one none of the func's snippets may write, frontend/native_funcs.py: a write the reading missed
    then does not compile)."""
    if isinstance(t, ArrayT):
        assert isinstance(t.dtype, (Scalar, VecT, MatT)), "frontend/native_funcs.py passes arrays of values only"
        return f"array_t<{'const ' if const else ''}{t.dtype.ctype}>"
    return t.ctype


def _params(n: ir.NativeFunc) -> list[str]:
    """The declarations of the snippet's parameters, under their Python names."""
    return [f"{param_ctype(t, const=name not in n.written)} {name}" for name, t in n.params]


def native_texts(module: ir.Module, qualifier: str, filename: str) -> list[str]:
    """The namespace holding every snippet function `module` calls ([] when it calls none); each
    function declared with `qualifier` (`static `, `__device__ static `)."""
    if not module.natives:
        return []
    lines = [f"namespace {naming.NATIVE_NAMESPACE} {{  // the @wp.func_native snippets, as written in the source"]
    scalars = [f"using {t.name} = {t.ctype};" for t in SCALARS.values() if t.name != "bool"]
    lines += scalars + ["namespace wp {  // Warp's own C++ names of its types, which a snippet may spell", *scalars,
                        _WARP_VALUE_TYPES, "}  // namespace wp"]
    if any(isinstance(t, ArrayT) for n in module.natives for _, t in n.params):
        lines += [_ARRAY_ADAPTER]
    for n in module.natives:
        params = ", ".join(_params(n))
        ret = n.ret.ctype if isinstance(n.ret, (Scalar, VecT, MatT)) else "void"
        lines += ["", f"// {filename}:{n.span.line}: @wp.func_native `{n.source_name}`",
                  f"[[maybe_unused]] {qualifier}{ret} {naming.native_function(n.name)}({params}) {{", n.snippet.strip("\n"), "}"]
        if n.replay_snippet is not None:
            lines += ["// its replay_snippet: what the adjoint launch runs in its place",
                      f"[[maybe_unused]] {qualifier}void {naming.native_function(n.name, 'replay')}({params}) {{",
                      n.replay_snippet.strip("\n"), "}"]
        if n.adj_snippet is not None:
            lines += _adjoint_lines(n, qualifier)
    lines.append(f"}}  // namespace {naming.NATIVE_NAMESPACE}")
    return ["\n".join(lines)]


def _adjoint_lines(n: ir.NativeFunc, qualifier: str) -> list[str]:
    assert n.adj_snippet is not None
    params = _params(n) + [f"{param_ctype(t)} adj_{name}" for name, t in n.params
                           if isinstance(t, ArrayT) and ir.float_elements(t)]
    # every other adjoint is a local: the integers', and the vectors' and matrices' (ops/adjoints.py
    # refuses to run an adj_snippet whose float vector or matrix adjoints it would drop)
    locals_ = [f"    {param_ctype(t)} adj_{name}{{}};" for name, t in n.params
               if not isinstance(t, ArrayT) or not ir.float_elements(t)]
    if isinstance(n.ret, Scalar) and n.ret.is_float:
        params.append(f"{n.ret.ctype} adj_ret")  # the sweep hands on only a float scalar's
    elif isinstance(n.ret, (Scalar, VecT, MatT)):
        locals_.append(f"    {n.ret.ctype} adj_ret{{}};")
    floats = [(name, t) for name, t in n.params if isinstance(t, Scalar) and t.is_float]
    result = ir.native_adjoint_type([t for _, t in floats])
    ret = "void" if result is None else result.ctype
    totals = ", ".join(f"adj_{name}" for name, _ in floats)
    back = [] if result is None else [f"    return {totals};" if len(floats) == 1 else f"    return {ret}({totals});"]
    return ["// its adj_snippet: the adjoints of its float scalars returned, its float arrays' added to",
            f"[[maybe_unused]] {qualifier}{ret} {naming.native_function(n.name, 'adjoint')}({', '.join(params)}) {{",
            *locals_, "    [&]() {", n.adj_snippet.strip("\n"), "    }();", *back, "}"]
