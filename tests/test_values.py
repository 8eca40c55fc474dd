"""Vectors, matrices, quaternions and transforms in SIMT kernels: every builtin of issue #15's
item 3 and the operators, forward against numpy written here from Warp's documented semantics,
the adjoint against float64 central finite differences, and the numpy interpreter against the
compiled code (forward and adjoint). Arrays of value types are numpy arrays with trailing
component axes, as the loader takes them."""
from __future__ import annotations

import numpy as np
import pytest

from gradcheck import check_gradients
from harness import build, compile_ir
from tilec.interp import Interpreter

pytestmark = [pytest.mark.build]

# name: (input dtypes, output dtype, expression of the inputs a, b, c at index i)
KERNELS = {
    "add": (["vec3d", "vec3d"], "vec3d", "a[i] + b[i]"),
    "sub_neg": (["vec3d", "vec3d"], "vec3d", "-(a[i] - b[i])"),
    "scale": (["vec3d", "float64"], "vec3d", "a[i] * b[i] + b[i] * a[i] * wp.float64(2.0)"),
    "div_scalar": (["vec3d", "float64"], "vec3d", "a[i] / b[i]"),
    "scalar_div": (["float64", "vec3d"], "vec3d", "a[i] / b[i]"),
    "mat_vec": (["mat33d", "vec3d"], "vec3d", "a[i] * b[i] + a[i] @ b[i]"),
    "vec_mat": (["vec3d", "mat33d"], "vec3d", "a[i] * b[i]"),
    "mat_mat": (["mat33d", "mat33d"], "mat33d", "a[i] @ b[i] - a[i] * b[i] * wp.float64(0.5)"),
    "mat_arith": (["mat22d", "mat22d", "float64"], "mat22d", "(a[i] + b[i]) / c[i] - c[i] * a[i]"),
    "ctor": (["float64", "float64"], "vec3d", "wp.vec3d(a[i], b[i] * a[i], wp.float64(2.0))"),
    "ctor_fill": (["float64"], "vec4d", "wp.vec4d(a[i])"),
    "ctor_mat": (["float64", "float64"], "mat22d", "wp.mat22d(a[i], b[i], a[i] * b[i], wp.float64(1.0))"),
    "components": (["vec4d", "mat33d"], "float64", "a[i].x * a[i][3] + b[i][1, 2] * a[i].w + b[i][0][1] + a[i][-1]"),
    "dot": (["vec3d", "vec3d"], "float64", "wp.dot(a[i], b[i])"),
    "cross": (["vec3d", "vec3d"], "vec3d", "wp.cross(a[i], b[i])"),
    "length": (["vec3d"], "float64", "wp.length(a[i])"),
    "length_sq": (["vec4d"], "float64", "wp.length_sq(a[i])"),
    "normalize": (["vec3d"], "vec3d", "wp.normalize(a[i])"),
    "outer": (["vec3d", "vec2d"], "mat32", "wp.outer(a[i], b[i])"),
    "transpose": (["mat32"], "mat23", "wp.transpose(a[i])"),
    "determinant": (["mat33d"], "float64", "wp.determinant(a[i])"),
    "determinant22": (["mat22d"], "float64", "wp.determinant(a[i])"),
    "determinant44": (["mat44d"], "float64", "wp.determinant(a[i])"),
    "inverse": (["mat33d"], "mat33d", "wp.inverse(a[i])"),
    "inverse22": (["mat22d"], "mat22d", "wp.inverse(a[i])"),
    "inverse44": (["mat44d"], "mat44d", "wp.inverse(a[i])"),
    "diag": (["vec3d"], "mat33d", "wp.diag(a[i])"),
    "get_diag": (["mat33d"], "vec3d", "wp.get_diag(a[i])"),
    "trace": (["mat33d"], "float64", "wp.trace(a[i])"),
    "ddot": (["mat33d", "mat33d"], "float64", "wp.ddot(a[i], b[i])"),
    "skew": (["vec3d", "vec3d"], "vec3d", "wp.skew(a[i]) @ b[i]"),
    "cw_mul": (["vec3d", "vec3d"], "vec3d", "wp.cw_mul(a[i], b[i])"),
    "cw_div": (["mat22d", "mat22d"], "mat22d", "wp.cw_div(a[i], b[i])"),
    "from_rows": (["vec3d", "vec3d"], "mat23", "wp.matrix_from_rows(a[i], b[i])"),
    "from_cols": (["vec3d", "vec3d"], "mat32", "wp.matrix_from_cols(a[i], b[i])"),
    "identity": (["mat33d"], "mat33d", "a[i] + wp.identity(n=3, dtype=wp.float64)"),
    "quat_rotate": (["quatd", "vec3d"], "vec3d", "wp.quat_rotate(a[i], b[i])"),
    "quat_rotate_inv": (["quatd", "vec3d"], "vec3d", "wp.quat_rotate_inv(a[i], b[i])"),
    "quat_axis_angle": (["vec3d", "float64"], "quatd", "wp.quat_from_axis_angle(a[i], b[i])"),
    "quat_inverse": (["quatd"], "quatd", "wp.quat_inverse(a[i])"),
    "quat_mul": (["quatd", "quatd"], "quatd", "a[i] * b[i]"),
    "quat_ctor": (["vec4d"], "quatd", "wp.quatd(a[i].x, a[i].y, a[i].z, a[i].w) * wp.quat_identity(dtype=wp.float64)"),
    "transform_point": (["transformd", "vec3d"], "vec3d", "wp.transform_point(a[i], b[i])"),
    "transform_vector": (["transformd", "vec3d"], "vec3d", "wp.transform_vector(a[i], b[i])"),
    "transform_multiply": (["transformd", "transformd"], "transformd", "a[i] * b[i]"),
    "transform_multiply_fn": (["transformd", "transformd"], "transformd", "wp.transform_multiply(a[i], b[i])"),
    "transform_inverse": (["transformd"], "transformd", "wp.transform_inverse(a[i])"),
    "transform_parts": (["transformd"], "vec3d",
                        "wp.transform_get_translation(a[i]) + a[i].p * wp.transform_get_rotation(a[i]).w + "
                        "wp.quat_rotate(a[i].q, a[i].p)"),
    "transform_ctor": (["vec3d", "quatd"], "transformd", "wp.transformd(a[i], b[i])"),
    "spatial": (["spatial_matrixd", "spatial_vectord"], "spatial_vectord",
                "a[i] * b[i] + b[i] * wp.float64(2.0) - wp.transpose(a[i]) @ b[i]"),
    "compare": (["vec3d", "vec3d"], "float64",
                "wp.where(a[i] == a[i] and a[i] != b[i], wp.dot(a[i], b[i]), wp.float64(0.0))"),
}

DECLS = {"mat32": "wp.mat(shape=(3, 2), dtype=wp.float64)", "mat23": "wp.mat(shape=(2, 3), dtype=wp.float64)"}
SHAPES = {"float64": (), "vec2d": (2,), "vec3d": (3,), "vec4d": (4,), "quatd": (4,), "transformd": (7,),
          "mat22d": (2, 2), "mat33d": (3, 3), "mat44d": (4, 4), "mat32": (3, 2), "mat23": (2, 3),
          "spatial_vectord": (6,), "spatial_matrixd": (6, 6)}


def _dtype(name: str) -> str:
    return name if name in DECLS else ("wp.float64" if name == "float64" else f"wp.{name}")


def source() -> str:
    lines = ["import warp as wp", ""]
    lines += [f"{name} = {decl}" for name, decl in DECLS.items()]
    for name, (ins, out, expr) in KERNELS.items():
        params = ", ".join(f"{'abc'[k]}: wp.array(dtype={_dtype(t)})" for k, t in enumerate(ins))
        lines += ["", "", "@wp.kernel", f"def k_{name}({params}, out: wp.array(dtype={_dtype(out)})):",
                  "    i = wp.tid()", f"    out[i] = {expr}"]
    return "\n".join(lines) + "\n"


N = 3


def inputs(name: str, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    ins, out, _ = KERNELS[name]
    args = []
    for t in ins:
        x = rng.standard_normal((N, *SHAPES[t]))
        if t == "quatd":
            x /= np.linalg.norm(x, axis=-1, keepdims=True)
        if t == "transformd":
            x[:, 3:] /= np.linalg.norm(x[:, 3:], axis=-1, keepdims=True)
        if t.startswith("mat") and SHAPES[t][0] == SHAPES[t][1]:
            x += 2.0 * np.eye(SHAPES[t][0])  # well conditioned for inverse
        if name in ("div_scalar", "scalar_div", "mat_arith", "cw_div"):
            x = np.sign(x) * (np.abs(x) + 0.5)  # away from zero
        args.append(x)
    return args + [np.zeros((N, *SHAPES[out]))]


def _quat_mul(a, b):
    u, w, v, s = a[:3], a[3], b[:3], b[3]
    return np.concatenate([w * v + s * u + np.cross(u, v), [w * s - u @ v]])


def _rotate(q, v):
    """Rotation of v by a unit quaternion as a matrix (independent of Warp's formula)."""
    x, y, z, w = q
    r = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                  [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                  [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
    return r @ v


def _conj(q):
    return q * np.array([-1, -1, -1, 1])


def _tmul(a, b):
    return np.concatenate([_rotate(a[3:], b[:3]) + a[:3], _quat_mul(a[3:], b[3:])])


REFERENCE = {
    "add": lambda a, b: a + b,
    "sub_neg": lambda a, b: -(a - b),
    "scale": lambda a, b: 3 * a * b,
    "div_scalar": lambda a, b: a / b,
    "scalar_div": lambda a, b: a / b,
    "mat_vec": lambda a, b: 2 * a @ b,
    "vec_mat": lambda a, b: b.T @ a,
    "mat_mat": lambda a, b: 0.5 * a @ b,
    "mat_arith": lambda a, b, c: (a + b) / c - c * a,
    "ctor": lambda a, b: np.array([a, b * a, 2.0]),
    "ctor_fill": lambda a: np.full(4, a),
    "ctor_mat": lambda a, b: np.array([[a, b], [a * b, 1.0]]),
    "components": lambda a, b: a[0] * a[3] + b[1, 2] * a[3] + b[0, 1] + a[3],
    "dot": lambda a, b: a @ b,
    "cross": np.cross,
    "length": np.linalg.norm,
    "length_sq": lambda a: a @ a,
    "normalize": lambda a: a / np.linalg.norm(a),
    "outer": np.outer,
    "transpose": np.transpose,
    "determinant": np.linalg.det,
    "determinant22": np.linalg.det,
    "determinant44": np.linalg.det,
    "inverse": np.linalg.inv,
    "inverse22": np.linalg.inv,
    "inverse44": np.linalg.inv,
    "diag": np.diag,
    "get_diag": np.diag,
    "trace": np.trace,
    "ddot": lambda a, b: np.sum(a * b),
    "skew": np.cross,
    "cw_mul": lambda a, b: a * b,
    "cw_div": lambda a, b: a / b,
    "from_rows": lambda a, b: np.stack([a, b]),
    "from_cols": lambda a, b: np.stack([a, b], 1),
    "identity": lambda a: a + np.eye(3),
    "quat_rotate": _rotate,
    "quat_rotate_inv": lambda q, v: _rotate(_conj(q), v),
    "quat_axis_angle": lambda a, t: np.concatenate([a * np.sin(t / 2), [np.cos(t / 2)]]),
    "quat_inverse": _conj,
    "quat_mul": _quat_mul,
    "quat_ctor": lambda a: a,
    "transform_point": lambda t, p: _rotate(t[3:], p) + t[:3],
    "transform_vector": lambda t, p: _rotate(t[3:], p),
    "transform_multiply": _tmul,
    "transform_multiply_fn": _tmul,
    "transform_inverse": lambda t: np.concatenate([-_rotate(_conj(t[3:]), t[:3]), _conj(t[3:])]),
    "transform_parts": lambda t: t[:3] + t[:3] * t[6] + _rotate(t[3:], t[:3]),
    "transform_ctor": lambda p, q: np.concatenate([p, q]),
    "spatial": lambda m, v: m @ v + 2 * v - m.T @ v,
    "compare": lambda a, b: a @ b,
}


@pytest.fixture(scope="module")
def compiled():
    return build(source(), "values_builtins")


@pytest.fixture(scope="module")
def interp():
    return Interpreter(compile_ir(source(), "values_builtins"))


def test_every_kernel_has_a_reference():
    assert set(KERNELS) == set(REFERENCE)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_forward_matches_numpy(compiled, name):
    args = inputs(name)
    getattr(compiled, f"k_{name}").launch(N, inputs=args)
    want = np.stack([REFERENCE[name](*(a[i] for a in args[:-1])) for i in range(N)])
    np.testing.assert_allclose(args[-1], want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_adjoint_matches_finite_differences(compiled, name):
    args = inputs(name, seed=1)
    out = len(args) - 1
    check_gradients(getattr(compiled, f"k_{name}"), N, args, [out], list(range(out)), tiled=False,
                    rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_interpreter_matches_compiled(compiled, interp, name):
    a_args, b_args = inputs(name, seed=2), inputs(name, seed=2)
    kernel = getattr(compiled, f"k_{name}")
    kernel.launch(N, inputs=a_args)
    interp.launch(f"k_{name}", N, b_args, tiled=False)
    np.testing.assert_allclose(a_args[-1], b_args[-1], rtol=1e-12, atol=1e-12)
    weights = np.random.default_rng(3).standard_normal(a_args[-1].shape)
    adj_a = [np.zeros_like(x) for x in a_args[:-1]] + [weights.copy()]
    adj_b = [np.zeros_like(x) for x in b_args[:-1]] + [weights.copy()]
    kernel.launch(N, inputs=a_args, adj_inputs=adj_a, adjoint=True)
    interp.launch(f"k_{name}", N, b_args, tiled=False, adjoint=True, adj_inputs=adj_b)
    for x, y in zip(adj_a[:-1], adj_b[:-1]):
        np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-12)
