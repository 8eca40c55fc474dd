"""Warp's own example programs run twice, as written: once under Warp (CPU), once with every
kernel launch and every hash grid going to tilec's build of the same file, then their arrays
compared bit for bit and the time per frame printed (the median of the frames after the first) (a port's "change the import line" check on
whole simulations, not single kernels).

    python bench/warp_example_runs.py [--frames 2] [--threads 1] [--json] [NAME ...]
        # NAME: sph, dem, sample_mesh, mesh, nvdb, raycast, mesh_intersect, mcgp, repulsion (mesh, raycast and
        # mesh_intersect read USD files: pip install usd-core; repulsion a PNG: pip install pillow)

The example file is read from the INSTALLED warp package and is built by `tilec build` as is.
The tilec run keeps the example's host code: `wp.launch(kernel, dim, inputs)` is redirected to
the generated loader's kernel of the same name (Warp's CPU arrays pass through its array
interface, no copy), `wp.HashGrid`, `wp.Mesh` and `wp.Volume` are the loader's, and a graph capture records those
launches to replay them. Needs warp-lang (the reference).
"""
from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

# name -> (module, the Example's arguments, what runs frame k of it, tilec build's options)
EXAMPLES = {"sph": ("warp.examples.core.example_sph", {"stage_path": None}, lambda e, k: e.step(), ()),
            "dem": ("warp.examples.core.example_dem", {"stage_path": None}, lambda e, k: e.step(), ()),
            "sample_mesh": ("warp.examples.core.example_sample_mesh", {"stage_path": None}, lambda e, k: e.step(), ()),
            "mesh": ("warp.examples.core.example_mesh", {"stage_path": None}, lambda e, k: e.step(), ()),
            "nvdb": ("warp.examples.core.example_nvdb", {"stage_path": None}, lambda e, k: e.step(), ()),
            "raycast": ("warp.examples.core.example_raycast", {"height": 512, "width": 512}, lambda e, k: e.render(),
                        ()),
            "mesh_intersect": ("warp.examples.core.example_mesh_intersect", {"stage_path": None},
                               lambda e, k: e.step(), ()),
            "repulsion": ("warp.examples.optim.example_particle_repulsion", {}, lambda e, k: e.step(), ()),
            "mcgp": ("warp.examples.tile.example_tile_mcgp", {"seed": 42, "height": 64, "slices": 8},
                     lambda e, k: e.render(k % 8), ("--block-dim", "128"))}


def build_tilec(path: Path, out: Path, options=()):
    subprocess.run([sys.executable, "-m", "tilec", "build", str(path), "-o", str(out), "--target", "cpu", *options],
                   check=True, capture_output=True, text=True)
    sys.path.insert(0, str(out))
    try:
        return importlib.import_module(path.stem)
    finally:
        sys.path.remove(str(out))


@contextmanager
def through_tilec(wp, module, threads: int):
    """wp.launch, wp.launch_tiled, wp.HashGrid, wp.Mesh, wp.Volume and Warp's graph capture redirected to the tilec module
    while the block runs: a capture (wp.ScopedCapture) records the launches, wp.capture_launch replays them."""
    saved = wp.launch, wp.launch_tiled, wp.HashGrid, wp.Mesh, wp.Volume, wp.ScopedCapture, wp.capture_launch
    recording: list[list] = []

    def launcher(how):
        def tilec_launch(kernel, dim, inputs=(), outputs=(), device=None, **_):
            def call():
                getattr(getattr(module, kernel.key), how)(dim=dim, inputs=list(inputs), outputs=list(outputs),
                                                          num_threads=threads)
            if recording:
                recording[-1].append(call)
            else:
                call()
        return tilec_launch

    class Capture:
        def __init__(self, *args, **kwargs):
            self.graph: list = []

        def __enter__(self):
            recording.append(self.graph)
            return self

        def __exit__(self, *exc):
            recording.remove(self.graph)

    def capture_launch(graph, *args, **kwargs):
        for call in graph:
            call()

    wp.launch, wp.launch_tiled, wp.HashGrid, wp.Mesh, wp.Volume, wp.ScopedCapture, wp.capture_launch = (
        launcher("launch"), launcher("launch_tiled"), module.HashGrid, module.Mesh, module.Volume, Capture,
        capture_launch)
    try:
        yield
    finally:
        wp.launch, wp.launch_tiled, wp.HashGrid, wp.Mesh, wp.Volume, wp.ScopedCapture, wp.capture_launch = saved


def arrays_of(example, wp) -> dict:
    return {name: value.numpy().copy() for name, value in sorted(vars(example).items()) if isinstance(value, wp.array)}


def run(name: str, frames: int, out: Path, threads: int) -> dict:
    import warp as wp

    wp.config.quiet = True
    path, arguments, frame, options = EXAMPLES[name]
    program = importlib.import_module(path)
    module = build_tilec(Path(program.__file__), out, options)
    with wp.ScopedDevice("cpu"):
        reference = program.Example(**arguments)
        with through_tilec(wp, module, threads):
            ported = program.Example(**arguments)
        seconds: dict[str, list[float]] = {"warp": [], "tilec": []}
        for k in range(frames):
            t = time.perf_counter()
            frame(reference, k)
            seconds["warp"].append(time.perf_counter() - t)
            with through_tilec(wp, module, threads):
                t = time.perf_counter()
                frame(ported, k)
                seconds["tilec"].append(time.perf_counter() - t)
    # per frame: the median of the frames after the first (Warp compiles or loads its module at its first launch)
    timed = {side: float(np.median(s[1:] if len(s) > 1 else s)) for side, s in seconds.items()}
    want, got = arrays_of(reference, wp), arrays_of(ported, wp)
    diffs = {k: float(np.max(np.abs(got[k].astype(np.float64) - want[k].astype(np.float64)), initial=0.0))
             for k in want}
    return {"example": name, "frames": frames, "arrays": sorted(want), "bit_exact": all(
        np.array_equal(got[k], want[k], equal_nan=True) for k in want), "max_abs_diff": diffs,
        "tilec_threads": threads, "warp_s_per_frame": timed["warp"], "tilec_s_per_frame": timed["tilec"]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Warp's examples under Warp and through tilec, compared.")
    parser.add_argument("names", nargs="*", help=f"examples to run (default: all of {', '.join(sorted(EXAMPLES))})")
    parser.add_argument("--frames", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1,
                        help="tilec's threads per launch (default 1: Warp's CPU launches run on one; 0: all cores)")
    parser.add_argument("--json", action="store_true", help="one JSON object per example")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in EXAMPLES]
    if unknown:
        parser.error(f"unknown example {unknown[0]!r} (choose from {', '.join(sorted(EXAMPLES))})")
    with tempfile.TemporaryDirectory(prefix="tilec-example-runs-") as tmp:
        for name in args.names or sorted(EXAMPLES):
            row = run(name, args.frames, Path(tmp), args.threads)
            if args.json:
                print(json.dumps(row, sort_keys=True))
                continue
            worst = max(row["max_abs_diff"].values(), default=0.0)
            print(f"{name}: {row['frames']} frames, arrays {', '.join(row['arrays'])}: "
                  f"{'bit for bit' if row['bit_exact'] else f'largest difference {worst:.3g}'}; "
                  f"s per frame: Warp {row['warp_s_per_frame']:.3f}, tilec {row['tilec_s_per_frame']:.3f} "
                  f"on {args.threads or 'all'} thread(s) "
                  f"({row['warp_s_per_frame'] / row['tilec_s_per_frame']:.2f}x)")


if __name__ == "__main__":
    main()
