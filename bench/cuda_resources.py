"""What nvcc's ptxas reports for tilec's CUDA kernels, without a GPU: registers per thread, bytes
spilled, stack frame, shared memory, for the bench programs and the samples at several block sizes.

Registers bound how many blocks a multiprocessor holds, and spills are local-memory traffic in
the inner loops, so this table is the first check of a change to the GPU code (runtime headers,
CUDA emission) on a machine without a device; bench/gpu.sh times the kernels where one is lent.

Usage: python bench/cuda_resources.py [--arch sm_90] [--block-dims 64,128,256] [--json OUT]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = sorted((ROOT / "bench" / "programs").glob("*.py")) + sorted((ROOT / "samples").glob("*.py"))


def build(program: Path, block_dim: int, arch: str, out: Path) -> list[dict]:
    name = f"{program.parent.name}/{program.stem}"  # bench/programs and samples share some names
    folder = out / program.parent.name / f"bd{block_dim}"
    proc = subprocess.run([sys.executable, "-m", "tilec", "build", str(program), "-o", str(folder), "--target",
                           "cuda", "--arch", arch, "--block-dim", str(block_dim)], capture_output=True, text=True)
    if proc.returncode != 0:
        return [{"program": name, "block_dim": block_dim, "error": proc.stderr.strip()[-300:]}]
    manifest = json.loads((folder / program.stem / "manifest.json").read_text())
    rows = []
    for kernel, facts in sorted(manifest["kernels"].items()):
        for direction, by_arch in sorted(facts.get("cuda_resources", {}).items()):
            r = by_arch[arch]
            rows.append({"program": name, "kernel": kernel, "direction": direction, "block_dim": block_dim,
                         "registers": r["registers"], "spill_stores": r["spill_stores"],
                         "spill_loads": r["spill_loads"], "stack_frame_bytes": r.get("stack_frame_bytes", 0),
                         "shared_bytes": facts["cuda_shared_bytes"][direction] + r["static_shared_bytes"]})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--block-dims", default="64,128,256")
    parser.add_argument("--json", type=Path)
    opts = parser.parse_args()
    block_dims = [int(b) for b in opts.block_dims.split(",")]
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(2) as pool:
        jobs = [pool.submit(build, p, bd, opts.arch, Path(tmp)) for p in PROGRAMS for bd in block_dims]
        rows = [row for job in jobs for row in job.result()]
    print("| program | kernel | direction | block_dim | registers | spilled bytes (st/ld) | stack frame | shared bytes |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['program']} | | | {r['block_dim']} | build failed: {r['error']} | | | |")
            continue
        print(f"| {r['program']} | {r['kernel']} | {r['direction']} | {r['block_dim']} | {r['registers']} | "
              f"{r['spill_stores']}/{r['spill_loads']} | {r['stack_frame_bytes']} | {r['shared_bytes']} |")
    if opts.json:
        opts.json.write_text(json.dumps({"arch": opts.arch, "rows": rows}, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
