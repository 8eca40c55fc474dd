"""tilec CPU against numpy/OpenBLAS and Warp CPU, like with like, in one process.

    python bench/run.py [--repeats 9] [--only gemm,rowwise,mlp,launch] [--sizes 256,512,1024] [--json OUT]
                        [--native] [--clock wall|thread]

Every workload runs the same Warp-API program from bench/programs/ (compiled by tilec, and by
Warp when it is importable). Each implementation runs at a stated thread count: tilec with
`num_threads=1` against numpy under `threadpoolctl.threadpool_limits(1)` (the headline columns),
and tilec with every core against numpy's default (every core). Warp's CPU backend runs a launch
on one thread, so it appears in the one-thread rows only. Runs are interleaved across
implementations and the median of the repeats is reported, so machine noise hits all alike.

`--json OUT` writes every measurement as a row: workload, implementation, threads, median ms,
and ratio = this row's time over tilec's time at the same thread count and direction (forward or
backward), so a ratio above 1 means tilec is faster; tilec's own backward row carries bwd/fwd.
The memory-bound workloads also carry GB/s against one core's stream bandwidth (numpy copy and
add, measured first), and every row on several threads its speed-up over one thread.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# OpenBLAS's worker threads spin for 2**28 cycles (~0.1 s) after each multi-threaded call before they
# sleep: the tilec row run next on every core found one of them taken (GEMM 512 on two threads ran
# at one thread's speed right after numpy's two-thread GEMM, 1.9x faster after none). Both sides'
# helpers spin about as long as tilec's (TILEC_SPIN_US, 100 us): 2**18 cycles. Set before numpy
# loads OpenBLAS, unless the caller set it.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "18")

import numpy as np  # noqa: E402  (after the environment OpenBLAS reads when it loads)

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"
CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)

try:
    from threadpoolctl import ThreadpoolController, threadpool_info, threadpool_limits
except ImportError:  # main() refuses to run: without it numpy's one-thread rows cannot be measured
    ThreadpoolController = threadpool_info = threadpool_limits = None

try:
    import warp as wp

    wp.config.quiet = True
    wp.config.enable_cpu_blocks = True
    wp.init()
except Exception:  # noqa: BLE001 - Warp is optional
    wp = None


def build_all(outdir: Path, extra_flags: list) -> dict:
    """tilec build of every program; returns {name: (module, build seconds)}."""
    import tilec

    built = {}
    for path in sorted(PROGRAMS.glob("*.py")):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "tilec", "build", str(path), "-o", str(outdir), "--target", "cpu",
                        *extra_flags], check=True, capture_output=True)
        built[path.stem] = (tilec.load(outdir / path.stem), time.perf_counter() - t0)
    return built


def warp_module(name: str):
    if wp is None:
        return None
    spec = importlib.util.spec_from_file_location(f"warp_bench_{name}", PROGRAMS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Workload:
    """The implementations of one workload, each (label, threads, direction, callable). `flops` gives
    the GFLOP/s column; `bytes_moved` (each array element read or written once: the least memory
    traffic the workload needs) the GB/s one; `stream` names the stream measurement it is held
    against ("dram" or "cache", see stream_bandwidth)."""

    def __init__(self, name: str, flops: float | None = None, bytes_moved: float | None = None,
                 stream: str | None = None):
        self.name, self.flops, self.impls = name, flops, []
        self.bytes_moved, self.stream = bytes_moved, stream

    def add(self, label: str, threads: int, fn, direction: str = "fwd") -> None:
        if fn is not None:
            self.impls.append((label, threads, direction, fn))

    def measure(self, repeats: int, clock: str = "wall") -> list:
        """Interleaved runs, the order rotated each repeat; one row per implementation with its median.
        clock "thread": one-thread rows time the calling thread's CPU time (every one-thread
        implementation here runs in the calling thread), which a shared machine's other load and idle
        BLAS threads do not inflate; rows on several threads are always wall-clock."""
        for *_, fn in self.impls:
            fn()  # warm-up (and Warp's first-launch compile)
        samples = [[] for _ in self.impls]
        walls = [[] for _ in self.impls]  # wall-clock too: scaling compares wall with wall
        timers = [time.thread_time if clock == "thread" and threads == 1 else time.perf_counter
                  for _, threads, _, _ in self.impls]
        for r in range(repeats):
            # rotated by one each repeat: no implementation always runs right after the same other one
            # (the one after Warp's GEMM finds the caches cold: GEMM 512 5-10 % slower)
            order = list(range(len(self.impls)))
            order = order[r % len(order):] + order[:r % len(order)]
            for k in order:
                fn = self.impls[k][3]
                w0, t0 = time.perf_counter(), timers[k]()
                fn()
                samples[k].append(timers[k]() - t0)
                walls[k].append(time.perf_counter() - w0)
        rows = [{"workload": self.name, "implementation": label, "threads": threads, "direction": direction,
                 "median_ms": statistics.median(s) * 1e3, "median_wall_ms": statistics.median(w) * 1e3,
                 "clock": "thread cpu" if timer is time.thread_time else "wall"}
                for (label, threads, direction, _), s, w, timer in zip(self.impls, samples, walls, timers)]
        for row in rows:
            base = _find(rows, "tilec", row["threads"], row["direction"])
            if row["implementation"] == "tilec" and row["direction"] == "bwd":
                base = _find(rows, "tilec", row["threads"], "fwd")
            row["ratio"] = None if base is None else row["median_ms"] / base["median_ms"]
            if self.flops and row["direction"] == "fwd":
                row["gflops"] = self.flops / (row["median_ms"] * 1e-3) / 1e9
            if self.bytes_moved and row["direction"] == "fwd":
                row["gbps"] = self.bytes_moved / (row["median_ms"] * 1e-3) / 1e9
                row["stream"] = self.stream
        for row in rows:  # scaling: this thread count's speed-up over one thread, per thread, wall over wall
            one = _find(rows, row["implementation"], 1, row["direction"])
            if row["threads"] > 1 and one is not None:
                row["speedup_vs_1t"] = one["median_wall_ms"] / row["median_wall_ms"]
                row["scaling_efficiency"] = row["speedup_vs_1t"] / row["threads"]
        return rows


def _find(rows, impl, threads, direction):
    for r in rows:
        if (r["implementation"], r["threads"], r["direction"]) == (impl, threads, direction):
            return r
    return None


_BLAS = None  # one ThreadpoolController: threadpool_limits() scans the loaded libraries at every call


def numpy_at(threads: int, fn):
    """fn with numpy's BLAS pinned to `threads`. The limit costs ~10 us through a controller made once;
    a fresh threadpool_limits() per call cost ~0.4 ms of CPU time (1.6 ms wall at GEMM 256), inside
    the timed call, which made numpy look slower than it is."""
    global _BLAS
    if _BLAS is None:
        _BLAS = ThreadpoolController()

    def run():
        with _BLAS.limit(limits=threads):
            fn()

    return run


def warp_launch(module, kernel, dim, arrays, block_dim=64, adj=None):
    if module is None:
        return None
    wa = [wp.array(a, device="cpu") for a in arrays]
    extra = {} if adj is None else {"adj_inputs": [wp.array(a, device="cpu") for a in adj], "adjoint": True}

    def run():
        wp.launch_tiled(getattr(module, kernel), dim=dim, inputs=wa, block_dim=block_dim, device="cpu", **extra)

    return run


def thread_counts() -> list:
    return [1] if CORES == 1 else [1, CORES]


def add_tilec(w: Workload, launch, with_backward: bool) -> None:
    for t in thread_counts():
        w.add("tilec", t, lambda t=t: launch(num_threads=t))
        if with_backward:
            w.add("tilec", t, lambda t=t: launch(num_threads=t, adjoint=True), "bwd")


def add_numpy(w: Workload, fn, direction: str = "fwd") -> None:
    for t in thread_counts():
        w.add("numpy", t, numpy_at(t, fn), direction)


def gemm_workloads(built, sizes) -> list:
    out = []
    for tile in (32, 64):
        name = f"gemm{tile}"
        mod, wmod = built[name][0], warp_module(name)
        for n in sizes:
            rng = np.random.default_rng(0)
            A, B = rng.standard_normal((n, n)).astype(np.float32), rng.standard_normal((n, n)).astype(np.float32)
            C = np.zeros((n, n), np.float32)
            dA, dB, dC = np.zeros_like(A), np.zeros_like(B), np.ones_like(C)
            grid = (n // tile, n // tile)

            def launch(num_threads, adjoint=False, mod=mod, A=A, B=B, C=C, dA=dA, dB=dB, dC=dC, grid=grid):
                adj = {"adj_inputs": [dA, dB, dC], "adjoint": True} if adjoint else {}
                mod.gemm.launch_tiled(dim=grid, inputs=[A, B, C], num_threads=num_threads, **adj)

            mod.gemm.launch_tiled(dim=grid, inputs=[A, B, C])
            assert np.allclose(C, A @ B, rtol=1e-3, atol=1e-2), "tilec gemm is wrong"
            w = Workload(f"GEMM {n} (tile {tile})", 2.0 * n ** 3)
            add_tilec(w, launch, True)
            add_numpy(w, lambda A=A, B=B, C=C: np.matmul(A, B, out=C))
            add_numpy(w, lambda A=A, B=B, dC=dC: (dC @ B.T, A.T @ dC), "bwd")
            w.add("warp", 1, warp_launch(wmod, "gemm", grid, [A, B, C]))
            out.append(w)
    return out


def rowwise_workloads(built) -> list:
    from layernorm import reference as layernorm_ref  # bench/programs is on sys.path
    from softmax import reference as softmax_ref

    rng = np.random.default_rng(0)
    X = rng.standard_normal((4096, 256)).astype(np.float32)
    Y = np.zeros_like(X)
    gamma, beta = rng.standard_normal((1, 256)).astype(np.float32), rng.standard_normal((1, 256)).astype(np.float32)
    sm, ln = built["softmax"][0], built["layernorm"][0]
    out = []
    dX, dY = np.zeros_like(X), np.ones_like(Y)
    dgamma, dbeta = np.zeros_like(gamma), np.zeros_like(beta)

    def adj(adjoint, *arrays):
        return {"adj_inputs": list(arrays), "adjoint": True} if adjoint else {}

    w = Workload("softmax 4096x256", bytes_moved=X.nbytes + Y.nbytes, stream="cache")
    add_tilec(w, lambda num_threads, adjoint=False: sm.softmax.launch_tiled(
        dim=4096, inputs=[X, Y], num_threads=num_threads, **adj(adjoint, dX, dY)), True)
    add_numpy(w, lambda: softmax_ref(X))
    w.add("warp", 1, warp_launch(warp_module("softmax"), "softmax", 4096, [X, Y]))
    out.append(w)
    w = Workload("layernorm 4096x256", bytes_moved=X.nbytes + Y.nbytes + gamma.nbytes + beta.nbytes, stream="cache")
    add_tilec(w, lambda num_threads, adjoint=False: ln.layernorm.launch_tiled(
        dim=4096, inputs=[X, gamma, beta, Y], num_threads=num_threads, **adj(adjoint, dX, dgamma, dbeta, dY)), True)
    add_numpy(w, lambda: layernorm_ref(X, gamma, beta))
    w.add("warp", 1, warp_launch(warp_module("layernorm"), "layernorm", 4096, [X, gamma, beta, Y]))
    out.append(w)
    n = 16 * 1024 * 1024
    x = rng.standard_normal(n).astype(np.float32)
    y = np.zeros_like(x)
    fm = built["fused_map"][0]
    w = Workload("fused map 16M", bytes_moved=x.nbytes + y.nbytes, stream="dram")
    add_tilec(w, lambda num_threads, adjoint=False: fm.fused.launch_tiled(dim=n // 4096, inputs=[x, y],
                                                                         num_threads=num_threads), False)
    add_numpy(w, lambda: np.tanh(x) * x + 0.5 * x * x - 1.0)
    w.add("warp", 1, warp_launch(warp_module("fused_map"), "fused", n // 4096, [x, y]))
    out.append(w)
    return out


LAUNCHES = 200  # launches per timed call of the launch-overhead row


def launch_workloads(built) -> list:
    """Launch overhead: LAUNCHES launches of the softmax on 2 rows (next to no work), forward and
    adjoint, through tilec's loader and Warp's wp.launch_tiled, the same arrays every time (a loop's
    launches). One row's ms over LAUNCHES is the cost of one launch."""
    X = np.random.default_rng(0).standard_normal((2, 256)).astype(np.float32)
    Y, dX, dY = np.zeros_like(X), np.zeros_like(X), np.zeros_like(X)
    sm = built["softmax"][0]

    def repeated(fn):
        def run():
            for _ in range(LAUNCHES):
                fn()
        return None if fn is None else run

    w = Workload(f"{LAUNCHES} launches, softmax 2x256")
    w.add("tilec", 1, repeated(lambda: sm.softmax.launch_tiled(dim=2, inputs=[X, Y], num_threads=1)))
    w.add("tilec", 1, repeated(lambda: sm.softmax.launch_tiled(dim=2, inputs=[X, Y], num_threads=1,
                                                                adj_inputs=[dX, dY], adjoint=True)), "bwd")
    wmod = warp_module("softmax")
    w.add("warp", 1, repeated(warp_launch(wmod, "softmax", 2, [X, Y])))
    w.add("warp", 1, repeated(warp_launch(wmod, "softmax", 2, [X, Y], adj=[dX, dY])), "bwd")
    return [w]


def mlp_workloads(built) -> list:
    mod, wmod = built["mlp256"][0], warp_module("mlp256")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((1024, 256)).astype(np.float32)
    W1, W2 = (rng.standard_normal((256, 256)) / 16).astype(np.float32), (rng.standard_normal((256, 256)) / 16).astype(np.float32)
    b1, b2 = rng.standard_normal((1, 256)).astype(np.float32), rng.standard_normal((1, 256)).astype(np.float32)
    Y = np.zeros((1024, 256), np.float32)
    adj = [np.zeros_like(a) for a in (X, W1, b1, W2, b2)] + [np.ones_like(Y)]
    args = [X, W1, b1, W2, b2, Y]

    def numpy_fwd():
        return np.maximum(X @ W1 + b1, 0) @ W2 + b2

    def numpy_bwd():  # numpy's hand-written backward, forward activations recomputed as tilec's adjoint does
        h = X @ W1 + b1
        r = np.maximum(h, 0)
        g = adj[-1]
        dW2, db2, dr = r.T @ g, g.sum(0), g @ W2.T
        dh = dr * (h > 0)
        return X.T @ dh, dh.sum(0), dh @ W1.T, dW2, db2

    def launch(num_threads, adjoint=False):
        extra = {"adj_inputs": adj, "adjoint": True} if adjoint else {}
        mod.mlp.launch_tiled(dim=1024 // 16, inputs=args, num_threads=num_threads, **extra)

    w = Workload("MLP 1024x256x256x256", 2.0 * 1024 * 256 * 256 * 2)
    add_tilec(w, launch, True)
    add_numpy(w, numpy_fwd)
    add_numpy(w, numpy_bwd, "bwd")
    w.add("warp", 1, warp_launch(wmod, "mlp", 1024 // 16, args))
    w.add("warp", 1, warp_launch(wmod, "mlp", 1024 // 16, args, adj=adj), "bwd")
    return [w]


PEAK_PROBE = r"""
// FMA throughput of one core: independent chains of vector FMAs (the widest the build enables).
#include <ctime>
#include <cstdio>
#if defined(__AVX512F__)
constexpr int BYTES = 64;
#elif defined(__AVX__)
constexpr int BYTES = 32;
#else
constexpr int BYTES = 16;
#endif
typedef float V __attribute__((vector_size(BYTES)));
int main() {
    constexpr int CHAINS = 12, LANES = BYTES / 4;
    const long iters = 20000000;
    V acc[CHAINS], x, y;
    for (int l = 0; l < LANES; ++l) { x[l] = 0.999999f; y[l] = 1e-7f; }
    for (int c = 0; c < CHAINS; ++c) acc[c] = x * float(c);
    std::clock_t t0 = std::clock();  // CPU time: a shared machine's waits are not counted
    for (long i = 0; i < iters; ++i) {
#pragma GCC unroll 12
        for (int c = 0; c < CHAINS; ++c) acc[c] = acc[c] * x + y;
    }
    double s = double(std::clock() - t0) / CLOCKS_PER_SEC;
    float sink = 0;
    for (int c = 0; c < CHAINS; ++c) sink += acc[c][0];
    std::printf("%f %d %f\n", 2.0 * CHAINS * LANES * iters / s / 1e9, BYTES * 8, sink);
}
"""


def fma_peak(tmp: Path) -> tuple:
    """(GFLOP/s of one core, vector bits), the best of a few runs of PEAK_PROBE; (None, None) without g++."""
    src, exe = tmp / "peak.cpp", tmp / "peak"
    src.write_text(PEAK_PROBE)
    cxx = os.environ.get("CXX", "g++")
    try:
        subprocess.run([cxx, "-O2", "-march=native", "-ffp-contract=fast", "-o", str(exe), str(src)], check=True,
                       capture_output=True)
        runs = [subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split()
                for _ in range(5)]
    except (OSError, subprocess.CalledProcessError):
        return None, None
    return max(float(r[0]) for r in runs), int(runs[0][1])


STREAM_SIZES = {"dram": 64 << 20, "cache": 4 << 20}  # bytes per array: past the L3, and rowwise's 4 MiB


def stream_bandwidth(clock: str, repeats: int = 9) -> dict:
    """{"dram"|"cache": {"copy": GB/s, "add": GB/s}}: numpy's copy (c = a) and add (c = a + b, STREAM's
    add kernel: one ufunc pass) over float32 arrays of STREAM_SIZES, one thread (numpy ufuncs do not thread), median wall time,
    bytes counted as read + written (write-allocate traffic not counted, as STREAM counts it).
    The ceiling a one-pass workload of the same size can reach on one core."""
    out = {}
    for where, size in STREAM_SIZES.items():
        n = size // 4
        a, b, c = np.ones(n, np.float32), np.full(n, 2.0, np.float32), np.zeros(n, np.float32)
        kernels = {"copy": (lambda: np.copyto(c, a), 2 * size), "add": (lambda: np.add(a, b, out=c), 3 * size)}
        out[where] = {}
        timer = time.thread_time if clock == "thread" else time.perf_counter
        for name, (fn, moved) in kernels.items():
            fn()
            times = []
            for _ in range(repeats if where == "dram" else 5 * repeats):
                t0 = timer()
                fn()
                times.append(timer() - t0)
            out[where][name] = moved / statistics.median(times) / 1e9
    return out


def stream_facts(stream: dict, clock: str) -> list:
    return [f"- stream bandwidth, one core, {clock} clock (numpy copy / add, {STREAM_SIZES[w] >> 20} MiB arrays, "
            f"{'past the L3' if w == 'dram' else 'cache-resident'}): {v['copy']:.1f} / {v['add']:.1f} GB/s"
            for w, v in stream.items()]


def machine_facts(peak, bits) -> list:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    blas = []
    if threadpool_info is not None:  # always, once main() has checked
        blas = [f"{i.get('internal_api')} {i.get('version')} ({i.get('architecture', '?')} kernels, "
                f"{i.get('num_threads')} threads by default)" for i in threadpool_info() if i.get("user_api") == "blas"]
    env = {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_THREAD_TIMEOUT", "OMP_NUM_THREADS") if k in os.environ}
    return [
        f"- CPU: {cpu}, {CORES} cores usable ({platform.machine()}, {platform.system()})",
        f"- one-core FMA peak (measured, {bits}-bit vectors): " + (f"{peak:.0f} GFLOP/s" if peak else "unknown"),
        f"- numpy {np.__version__}, BLAS: {'; '.join(blas) or 'unknown'}"
        + (f", environment {env}" if env else ""),
        f"- Warp {wp.__version__ if wp else 'not installed'} (CPU launches run on one thread)",
        f"- Python {platform.python_version()}",
    ]


def fmt(x, spec="8.2f"):
    return "" if x is None else format(x, spec)


def scaling(row) -> str:
    if not row or "speedup_vs_1t" not in row:
        return ""
    return f"{row['speedup_vs_1t']:.2f}x / {100 * row['scaling_efficiency']:.0f} %"


def report(rows: list, built: dict, facts: list, peak, stream: dict) -> str:
    lines = ["## Machine", "", *facts, "", "## Results (median ms; ratio = other / tilec at the same thread count)",
             "",
             "| workload | threads | tilec ms | numpy ms | numpy / tilec | Warp ms | Warp / tilec | tilec bwd ms "
             "| tilec bwd/fwd | numpy bwd / tilec bwd | tilec GFLOP/s | % of peak | tilec GB/s | % of stream "
             "| tilec scaling | numpy scaling |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    workloads = list(dict.fromkeys(r["workload"] for r in rows))
    for name in workloads:
        mine = [r for r in rows if r["workload"] == name]
        for t in sorted({r["threads"] for r in mine if r["implementation"] == "tilec"}):
            def get(impl, direction="fwd"):
                return _find(mine, impl, t, direction)
            tf, nf, wf = get("tilec"), get("numpy"), get("warp")
            tb, nb = get("tilec", "bwd"), get("numpy", "bwd")
            gf, gb = tf.get("gflops"), tf.get("gbps")
            pct = None if gf is None or not peak else 100.0 * gf / (peak * t)
            # one core's stream bandwidth is the one-thread ceiling; at more threads it is only a reference
            spct = None if gb is None else 100.0 * gb / stream[tf["stream"]]["copy"]
            lines.append(
                f"| {name} | {t} | {fmt(tf['median_ms'])} | {fmt(nf and nf['median_ms'])} | "
                f"{fmt(nf and nf['ratio'], '.2f')} | {fmt(wf and wf['median_ms'])} | {fmt(wf and wf['ratio'], '.2f')} | "
                f"{fmt(tb and tb['median_ms'])} | {fmt(tb and tb['ratio'], '.2f')} | {fmt(nb and nb['ratio'], '.2f')} | "
                f"{fmt(gf, '.1f')} | {fmt(pct, '.0f')} | {fmt(gb, '.1f')} | {fmt(spct, '.0f')} | "
                f"{scaling(tf)} | {scaling(nf)} |")
    lines += ["", "Warp's CPU backend runs each launch on one thread; its rows at more threads are empty.",
              "GB/s: each array element read or written once over tilec's time; % of stream: over one core's "
              "numpy copy bandwidth at the workload's size (past the L3 for the fused map, cache-resident for the "
              "4 MiB rowwise matrices). Scaling: speed-up over the same implementation's one-thread row / "
              "efficiency (speed-up per thread), wall-clock medians on both sides (a one-thread row's ms may be thread "
              "CPU time, --clock thread); rows on several threads are wall-clock.", "",
              "Builds: wall seconds of `tilec build --target cpu` into an empty folder with tilec's compiler cache "
              "as found (about 0.5 s: an unchanged library copied from its cache of compiled products); "
              "bench/build_speed.py measures cold builds.", "",
              "| program | tilec build s |", "|---|---|"]
    lines += [f"| {name} | {secs:.2f} |" for name, (_, secs) in built.items()]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--sizes", default="256,512,1024")
    parser.add_argument("--only", default="gemm,rowwise,mlp,launch")
    parser.add_argument("--json", metavar="OUT", help="write every row (workload, implementation, threads, ms, ratio)")
    parser.add_argument("--native", action="store_true", help="build tilec's libraries with --native")
    parser.add_argument("--clock", choices=("wall", "thread"), default="wall",
                        help="thread: one-thread rows in the calling thread's CPU time (for a shared machine)")
    args = parser.parse_args()
    if threadpool_limits is None:
        sys.exit("bench/run.py needs threadpoolctl to pin numpy's BLAS to one thread (the headline rows compare "
                 "tilec and numpy on one thread each): pip install 'tilec[bench]' (or threadpoolctl)")
    sys.path.insert(0, str(PROGRAMS))
    with tempfile.TemporaryDirectory() as tmp:
        peak, bits = fma_peak(Path(tmp))
        stream = stream_bandwidth(args.clock)
        facts = machine_facts(peak, bits) + stream_facts(stream, args.clock)
        print("\n".join(facts), flush=True)
        built = build_all(Path(tmp), ["--native"] if args.native else [])
        workloads = []
        if "gemm" in args.only:
            workloads += gemm_workloads(built, [int(s) for s in args.sizes.split(",")])
        if "rowwise" in args.only:
            workloads += rowwise_workloads(built)
        if "mlp" in args.only:
            workloads += mlp_workloads(built)
        if "launch" in args.only:
            workloads += launch_workloads(built)
        rows = []
        for w in workloads:
            rows += w.measure(args.repeats, args.clock)
            print(f"measured {w.name}", file=sys.stderr, flush=True)
        command = "python bench/run.py " + " ".join(sys.argv[1:])
        text = report(rows, built, facts, peak, stream) + (f"\n\nCommand: `{command.strip()}` (repeats {args.repeats}; "
                                                    f"one-thread rows timed by {args.clock} clock)\n")
    print(text)
    if args.json:
        payload = {"machine": facts, "fma_peak_gflops_1core": peak, "cores": CORES, "command": command,
                   "stream_gbps_1core": stream,
                   "clock_one_thread": args.clock,
                   "repeats": args.repeats, "rows": rows,
                   "builds": [{"program": n, "seconds": s, "cache": "as found"} for n, (_, s) in built.items()]}
        Path(args.json).write_text(json.dumps(payload, indent=1) + "\n")


if __name__ == "__main__":
    main()
