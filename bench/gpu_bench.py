"""tilec's CUDA kernels against torch on the same device, same data (run by bench/gpu.sh)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    import torch

    import tilec

    sys.path.insert(0, str(ROOT / "samples"))
    out = Path("/tmp/gpu-build")
    rows = ["| workload | tilec ms | torch ms | torch / tilec |", "|---|---|---|---|"]

    def timed(fn, repeats=20):
        fn()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(repeats):
            fn()
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) / repeats

    dev = "cuda"
    rng = np.random.default_rng(0)
    gemm = tilec.load(out / "gemm")
    for n in (512, 1024, 2048):
        A = torch.from_numpy(rng.standard_normal((n, n)).astype(np.float32)).to(dev)
        B = torch.from_numpy(rng.standard_normal((n, n)).astype(np.float32)).to(dev)
        C = torch.zeros((n, n), device=dev)
        t = timed(lambda: gemm.gemm.launch_tiled(dim=(n // 32, n // 32), inputs=[A, B, C], device="cuda"))
        r = timed(lambda: torch.matmul(A, B))
        rows.append(f"| GEMM {n} fp32 | {t:.3f} | {r:.3f} | {r / t:.2f} |")
    softmax = tilec.load(out / "softmax")
    X = torch.from_numpy(rng.standard_normal((4096, 256)).astype(np.float32)).to(dev)
    Y = torch.zeros_like(X)
    t = timed(lambda: softmax.softmax.launch_tiled(dim=4096 // 4, inputs=[X, Y], device="cuda"))
    r = timed(lambda: torch.softmax(X, dim=1))
    rows.append(f"| softmax 4096x256 | {t:.3f} | {r:.3f} | {r / t:.2f} |")
    layernorm = tilec.load(out / "layernorm")
    g, b = torch.ones(256, device=dev), torch.zeros(256, device=dev)
    t = timed(lambda: layernorm.layernorm.launch_tiled(dim=4096 // 4, inputs=[X, g, b, Y], device="cuda"))
    r = timed(lambda: torch.nn.functional.layer_norm(X, (256,), g, b))
    rows.append(f"| layernorm 4096x256 | {t:.3f} | {r:.3f} | {r / t:.2f} |")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
