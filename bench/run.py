"""tilec CPU against numpy (one thread and default) and Warp CPU (when installed), in one process.

    python bench/run.py [--repeats 7] [--only gemm,softmax]

Every workload runs the same Warp-API program from bench/programs/ (compiled by
tilec, and by Warp when it is importable). Runs are interleaved across
implementations and the median of the repeats is reported. numpy single-thread
timings need threadpoolctl; without it that column is left empty.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"

try:
    from threadpoolctl import threadpool_limits
except ImportError:  # numpy-1T column unavailable
    threadpool_limits = None

try:
    import warp as wp

    wp.config.quiet = True
    wp.init()
except Exception:  # noqa: BLE001 - Warp is optional
    wp = None


def build_all(outdir: Path) -> dict:
    """tilec build of every program; returns {name: (module, build seconds)}."""
    import tilec

    built = {}
    for path in sorted(PROGRAMS.glob("*.py")):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "tilec.cli", "build", str(path), "-o", str(outdir), "--target", "cpu"],
                       check=True, capture_output=True)
        built[path.stem] = (tilec.load(outdir / path.stem), time.perf_counter() - t0)
    return built


def warp_module(name: str):
    if wp is None:
        return None
    spec = importlib.util.spec_from_file_location(f"warp_bench_{name}", PROGRAMS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def timeit(fn, repeats: int) -> list:
    fn()  # warm-up (and Warp's first-launch compile)
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def interleaved(impls: dict, repeats: int) -> dict:
    """impls: {label: callable or None} -> {label: median seconds}."""
    impls = {k: v for k, v in impls.items() if v is not None}
    for fn in impls.values():
        fn()
    samples = {k: [] for k in impls}
    for _ in range(repeats):
        for k, fn in impls.items():
            t0 = time.perf_counter()
            fn()
            samples[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in samples.items()}


def one_thread(fn):
    if threadpool_limits is None:
        return None

    def run():
        with threadpool_limits(limits=1):
            fn()

    return run


def warp_launch(module, kernel, dim, arrays, block_dim=256, adjoint=False, adj=None):
    wa = [wp.array(a, device="cpu") if isinstance(a, np.ndarray) else a for a in arrays]
    wadj = None if adj is None else [wp.array(a, device="cpu") for a in adj]

    extra = {} if wadj is None else {"adj_inputs": wadj, "adjoint": adjoint}

    def run():
        wp.launch_tiled(getattr(module, kernel), dim=dim, inputs=wa, block_dim=block_dim, device="cpu", **extra)

    return run


def gemm_rows(built, repeats, sizes):
    rows = []
    for tile in (32, 64):
        name = f"gemm{tile}"
        mod = built[name][0]
        wmod = warp_module(name)
        for n in sizes:
            rng = np.random.default_rng(0)
            A, B = rng.standard_normal((n, n)).astype(np.float32), rng.standard_normal((n, n)).astype(np.float32)
            C = np.zeros((n, n), np.float32)
            dA, dB, dC = np.zeros_like(A), np.zeros_like(B), np.ones_like(C)
            grid = (n // tile, n // tile)
            impls = {
                "tilec": lambda: mod.gemm.launch_tiled(dim=grid, inputs=[A, B, C]),
                "tilec bwd": lambda: mod.gemm.launch_tiled(dim=grid, inputs=[A, B, C], adj_inputs=[dA, dB, dC],
                                                           adjoint=True),
                "numpy 1T": one_thread(lambda: np.matmul(A, B, out=C)),
                "numpy": lambda: np.matmul(A, B, out=C),
                "warp": warp_launch(wmod, "gemm", grid, [A, B, C], block_dim=64) if wmod else None,
            }
            t = interleaved(impls, repeats)
            np.matmul(A, B, out=C)
            want = C.copy()
            mod.gemm.launch_tiled(dim=grid, inputs=[A, B, C])
            assert np.allclose(C, want, rtol=1e-3, atol=1e-2), "tilec gemm is wrong"
            rows.append((f"GEMM {n} (tile {tile})", t, 2.0 * n ** 3))
    return rows


def rowwise_rows(built, repeats):
    from softmax import reference as softmax_ref  # bench/programs on sys.path
    from layernorm import reference as layernorm_ref

    rows = []
    rng = np.random.default_rng(0)
    X = rng.standard_normal((4096, 256)).astype(np.float32)
    Y = np.zeros_like(X)
    gamma, beta = rng.standard_normal((1, 256)).astype(np.float32), rng.standard_normal((1, 256)).astype(np.float32)
    sm, ln = built["softmax"][0], built["layernorm"][0]
    grid = 4096
    wsm, wln = warp_module("softmax"), warp_module("layernorm")
    rows.append(("softmax 4096x256", interleaved({
        "tilec": lambda: sm.softmax.launch_tiled(dim=grid, inputs=[X, Y]),
        "numpy 1T": one_thread(lambda: softmax_ref(X)),
        "numpy": lambda: softmax_ref(X),
        "warp": warp_launch(wsm, "softmax", grid, [X, Y], block_dim=64) if wsm else None,
    }, repeats), None))
    rows.append(("layernorm 4096x256", interleaved({
        "tilec": lambda: ln.layernorm.launch_tiled(dim=grid, inputs=[X, gamma, beta, Y]),
        "numpy 1T": one_thread(lambda: layernorm_ref(X, gamma, beta)),
        "numpy": lambda: layernorm_ref(X, gamma, beta),
        "warp": warp_launch(wln, "layernorm", grid, [X, gamma, beta, Y], block_dim=64) if wln else None,
    }, repeats), None))
    n = 16 * 1024 * 1024
    x = rng.standard_normal(n).astype(np.float32)
    y = np.zeros_like(x)
    fm = built["fused_map"][0]
    wfm = warp_module("fused_map")

    def numpy_map():
        return np.tanh(x) * x + 0.5 * x * x - 1.0

    rows.append(("fused map 16M", interleaved({
        "tilec": lambda: fm.fused.launch_tiled(dim=n // 4096, inputs=[x, y]),
        "numpy 1T": one_thread(numpy_map),
        "numpy": numpy_map,
        "warp": warp_launch(wfm, "fused", n // 4096, [x, y], block_dim=64) if wfm else None,
    }, repeats), None))
    return rows


def mlp_rows(built, repeats):
    mod = built["mlp256"][0]
    wmod = warp_module("mlp256")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((1024, 256)).astype(np.float32)
    W1, W2 = (rng.standard_normal((256, 256)) / 16).astype(np.float32), (rng.standard_normal((256, 256)) / 16).astype(np.float32)
    b1, b2 = rng.standard_normal((1, 256)).astype(np.float32), rng.standard_normal((1, 256)).astype(np.float32)
    Y = np.zeros((1024, 256), np.float32)
    adj = [np.zeros_like(a) for a in (X, W1, b1, W2, b2)] + [np.ones_like(Y)]
    grid = 1024 // 16

    def numpy_fwd():
        return np.maximum(X @ W1 + b1, 0) @ W2 + b2

    def numpy_bwd():
        h = X @ W1 + b1
        r = np.maximum(h, 0)
        g = np.ones_like(Y)
        dW2, db2, dr = r.T @ g, g.sum(0), g @ W2.T
        dh = dr * (h > 0)
        return X.T @ dh, dh.sum(0), dh @ W1.T, dW2, db2

    args = [X, W1, b1, W2, b2, Y]
    t = interleaved({
        "tilec": lambda: mod.mlp.launch_tiled(dim=grid, inputs=args),
        "tilec bwd": lambda: mod.mlp.launch_tiled(dim=grid, inputs=args, adj_inputs=adj, adjoint=True),
        "numpy 1T": one_thread(numpy_fwd),
        "numpy": numpy_fwd,
        "numpy bwd": numpy_bwd,
        "warp": warp_launch(wmod, "mlp", grid, args, block_dim=64) if wmod else None,
        "warp bwd": warp_launch(wmod, "mlp", grid, args, block_dim=64, adjoint=True, adj=adj) if wmod else None,
    }, repeats)
    return [("MLP 1024x256x256x256", t, 2.0 * 1024 * 256 * 256 * 2)]


def fmt_ms(t):
    return "" if t is None else f"{t * 1e3:8.2f}"


def report(rows, built) -> str:
    cols = ["tilec", "tilec bwd", "numpy 1T", "numpy", "numpy bwd", "warp", "warp bwd"]
    lines = ["| workload | " + " | ".join(f"{c} ms" for c in cols) + " | tilec GFLOP/s | vs numpy 1T | vs numpy | vs warp | bwd/fwd |",
             "|---" * (len(cols) + 6) + "|"]
    for name, t, flops in rows:
        cells = [fmt_ms(t.get(c)) for c in cols]
        gf = f"{flops / t['tilec'] / 1e9:.1f}" if flops else ""

        def ratio(other):
            return f"{t[other] / t['tilec']:.2f}x" if other in t else ""

        bwd = f"{t['tilec bwd'] / t['tilec']:.2f}" if "tilec bwd" in t else ""
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {gf} | {ratio('numpy 1T')} | {ratio('numpy')} | "
                     f"{ratio('warp')} | {bwd} |")
    lines.append("")
    lines.append("ratios are speed-ups of tilec (other time / tilec time); bwd/fwd is tilec's adjoint over its forward")
    lines.append("")
    lines.append("| program | tilec build s |")
    lines.append("|---|---|")
    for name, (_, secs) in built.items():
        lines.append(f"| {name} | {secs:.2f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--sizes", default="256,512,1024")
    parser.add_argument("--only", default="gemm,rowwise,mlp")
    args = parser.parse_args()
    sys.path.insert(0, str(PROGRAMS))
    print(f"numpy {np.__version__}, warp {wp.__version__ if wp else 'not installed'}, "
          f"threadpoolctl {'yes' if threadpool_limits else 'no'}, cores {os.cpu_count()}")
    with tempfile.TemporaryDirectory() as tmp:
        built = build_all(Path(tmp))
        rows = []
        if "gemm" in args.only:
            rows += gemm_rows(built, args.repeats, [int(s) for s in args.sizes.split(",")])
        if "rowwise" in args.only:
            rows += rowwise_rows(built, args.repeats)
        if "mlp" in args.only:
            rows += mlp_rows(built, args.repeats)
        text = report(rows, built)
    print(text)
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / "latest.md").write_text(text + "\n")


if __name__ == "__main__":
    main()
