"""tilec's CUDA kernels against cuBLAS / torch on the same GPU, same data (run by bench/gpu.sh).

Usage: python3 bench/gpu_bench.py BUILDS [--json OUT]. BUILDS holds bench/programs/*.py built with
`tilec build --target cuda --arch sm_90 --block-dim B` into BUILDS/bd<B>/ (gpu.sh does this).
Each row: median milliseconds per launch over `REPEATS` timed batches of launches (CUDA events
around each batch, after a warm-up), the rate (TFLOP/s for matrix products, GB/s for the
memory-bound rows: bytes read plus bytes written once), and tilec's time as a share of the
reference's. Every tilec result is checked first (outputs poisoned with NaN before the launch,
compared with torch in float64); a wrong one is listed at the end and the exit status is 1.
Matrix products run in plain fp32 on both sides (torch.backends.cuda.matmul.allow_tf32 = False:
cuBLAS SGEMM, no tensor cores).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

REPEATS = 15


def main() -> int:
    import torch

    import tilec

    parser = argparse.ArgumentParser()
    parser.add_argument("builds", type=Path)
    parser.add_argument("--json", type=Path)
    opts = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(0)
    rows: list[dict] = []

    def rand(*shape):
        return torch.randn(*shape, device=dev, generator=gen)

    def timed(fn, per_batch):
        for _ in range(2):
            fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(REPEATS):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(per_batch):
                fn()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) / per_batch)
        return statistics.median(times)

    failures: list[str] = []

    def check(name, got, want, tol):
        """The relative error; one over `tol` (or NaN: an element the kernel never wrote) is
        reported and listed at the end, and the timing goes on."""
        err = float((got.double() - want.double()).norm() / want.double().norm())
        if not err < tol:
            failures.append(f"{name}: relative error {err:.3g} (tolerance {tol:g})")
            print(f"WRONG RESULT {failures[-1]}", flush=True)
        return err

    def first_run(name, launch, out, want, tol):
        """The relative error of launch's first result: `out` poisoned with NaN before it, so that an
        element the kernel never writes fails too."""
        out.fill_(float("nan"))
        launch()
        torch.cuda.synchronize()
        return check(name, out, want, tol)

    def row(workload, impl, ms, work, unit, ref_ms=None, err=None):
        rate = work / ms / (1e6 if unit == "GB/s" else 1e9)  # per ms: bytes -> GB/s, FLOP -> TFLOP/s
        r = {"workload": workload, "impl": impl, "ms": round(ms, 4), unit: round(rate, 2)}
        if ref_ms is not None:
            r["reference_ms_over_tilec_ms"] = round(ref_ms / ms, 3)
        if err is not None:
            r["rel_err"] = float(f"{err:.3g}")
        rows.append(r)
        print(json.dumps(r), flush=True)

    def module(name, block_dim):
        return tilec.load(opts.builds / f"bd{block_dim}" / name)

    # GEMM: tilec's tile GEMMs (32x32 and 64x64 output tiles, two block sizes) against cuBLAS SGEMM
    for n in (1024, 2048, 4096):
        A, B = rand(n, n), rand(n, n)
        want = torch.matmul(A, B)
        ref = timed(lambda: torch.matmul(A, B), 5)
        flops = 2.0 * n ** 3
        row(f"GEMM {n}", "cuBLAS fp32", ref, flops, "TFLOP/s")
        for tile in (32, 64):
            for bd in (64, 128, 256):
                try:
                    mod = module(f"gemm{tile}", bd)
                except Exception as e:  # noqa: BLE001 - a variant that did not build is reported, not fatal
                    print(f"GEMM {n} tile {tile} block {bd}: not built ({e})")
                    continue
                C = torch.empty((n, n), device=dev)

                def launch(mod=mod, tile=tile, C=C, A=A, B=B, **adjoint):
                    mod.gemm.launch_tiled(dim=(n // tile, n // tile), inputs=[A, B, C], device="cuda", **adjoint)

                err = first_run(f"GEMM {n} tile {tile} block {bd}", launch, C, want, 1e-4)
                ms = timed(launch, 3 if n < 4096 else 1)
                row(f"GEMM {n}", f"tilec tile {tile} block {bd}", ms, flops, "TFLOP/s", ref, err)
                if n == 2048:
                    dA, dB, dC = torch.zeros_like(A), torch.zeros_like(B), rand(n, n)
                    adjoint = {"adj_inputs": [dA, dB, dC], "adjoint": True}
                    launch(**adjoint)
                    torch.cuda.synchronize()
                    check(f"GEMM adjoint dA tile {tile} block {bd}", dA, dC @ B.T, 1e-4)
                    check(f"GEMM adjoint dB tile {tile} block {bd}", dB, A.T @ dC, 1e-4)
                    bwd = timed(lambda launch=launch, adjoint=adjoint: launch(**adjoint), 2)
                    ref_bwd = timed(lambda: (dC @ B.T, A.T @ dC), 3)
                    row(f"GEMM {n} backward", f"tilec tile {tile} block {bd}", bwd, 2 * flops, "TFLOP/s", ref_bwd)
                    rows[-1]["bwd_over_fwd"] = round(bwd / ms, 3)

    # memory-bound rows: softmax, layernorm (rows of 256), the fused map (16M floats)
    for rows_n in (4096, 65536):
        X = rand(rows_n, 256)
        nbytes = 2 * X.numel() * 4
        want = torch.softmax(X.double(), dim=1)
        ref = timed(lambda: torch.softmax(X, dim=1), 10)
        row(f"softmax {rows_n}x256", "torch", ref, nbytes, "GB/s")
        g, b = rand(1, 256), rand(1, 256)
        want_ln = torch.nn.functional.layer_norm(X.double(), (256,), g[0].double(), b[0].double())
        ref_ln = timed(lambda: torch.nn.functional.layer_norm(X, (256,), g[0], b[0]), 10)
        row(f"layernorm {rows_n}x256", "torch", ref_ln, nbytes, "GB/s")
        Y = torch.empty_like(X)
        for bd in (64, 128, 256):
            sm, ln = module("softmax", bd), module("layernorm", bd)
            launches = [("softmax", lambda: sm.softmax.launch_tiled(dim=rows_n, inputs=[X, Y], device="cuda"),
                         want, ref),
                        ("layernorm", lambda: ln.layernorm.launch_tiled(dim=rows_n, inputs=[X, g, b, Y],
                                                                         device="cuda"), want_ln, ref_ln)]
            for name, launch, expected, reference in launches:
                err = first_run(f"{name} {rows_n} block {bd}", launch, Y, expected, 1e-5)
                row(f"{name} {rows_n}x256", f"tilec block {bd}", timed(launch, 10), nbytes, "GB/s", reference, err)
    n = 16 * 1024 * 1024
    x = rand(n)
    want = torch.tanh(x.double()) * x + 0.5 * x * x - 1.0
    ref = timed(lambda: torch.tanh(x) * x + 0.5 * x * x - 1.0, 10)
    row("fused map 16M", "torch (eager, 5 kernels)", ref, 2 * n * 4, "GB/s")
    y = torch.empty_like(x)
    for bd in (64, 128, 256):
        fm = module("fused_map", bd)

        def fused(fm=fm):
            fm.fused.launch_tiled(dim=n // 4096, inputs=[x, y], device="cuda")

        err = first_run(f"fused map block {bd}", fused, y, want, 1e-5)
        row("fused map 16M", f"tilec block {bd}", timed(fused, 10), 2 * n * 4, "GB/s", ref, err)

    # the loader's cost per launch: a softmax of 2 rows, next to no device work
    X2, Y2 = rand(2, 256), torch.zeros(2, 256, device=dev)
    sm = module("softmax", 256)
    ms = timed(lambda: sm.softmax.launch_tiled(dim=2, inputs=[X2, Y2], device="cuda"), 200)
    row("one launch, softmax 2x256", "tilec block 256", ms, 2 * X2.numel() * 4, "GB/s")
    print("\n| workload | impl | ms | rate | reference / tilec |\n|---|---|---|---|---|")
    for r in rows:
        rate = next(f"{r[k]} {k}" for k in ("TFLOP/s", "GB/s") if k in r)
        print(f"| {r['workload']} | {r['impl']} | {r['ms']} | {rate} | {r.get('reference_ms_over_tilec_ms', '')} |")
    if opts.json:
        opts.json.write_text(json.dumps({"device": torch.cuda.get_device_name(), "rows": rows,
                                         "wrong_results": failures}, indent=1, sort_keys=True) + "\n")
    for line in failures:
        print(f"WRONG RESULT {line}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
