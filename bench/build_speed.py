"""Compile speed of the command line on the samples (issue #20 item 6: a cold `tilec build
--target cpu` <= 0.5 s per sample module, a no-op rebuild <= 50 ms, `tilec check` <= 100 ms).

Runs each command as a user runs it (a fresh `python -m tilec` process) and reports its CPU
seconds (user + sys of the process and the compilers it starts, from getrusage), the median of
--repeats runs, so that other load on a shared machine inflates the numbers less than wall time
would (wall time is printed too). "cold" is a build into an empty output folder with tilec's
compiler cache (the precompiled runtime header, the runtime object, the objects of gemm.h's
instances) already filled by a first build: a rebuild after an edit that keeps the tile shapes;
"new tile shapes" is the same with gemm.h's instances compiled anew (a module's first build, or
new tile sizes); "cold, empty cache" is printed once per sample with --empty-cache. "check" is a check with
no record of an earlier clean check of the file (uptodate.py); "check again" repeats it unchanged,
which that record answers. "cold" runs empty tilec's cache of compiled products (product_cache.py)
first; "C++ unchanged" is a build after an edit that leaves the generated C++ as it was (a comment
appended), into an empty output folder: the library compiled before is copied.

The commands run with Python's bytecode cache on (in a temporary PYTHONPYCACHEPREFIX, filled by
the first run), as an installed tilec has its .pyc files: an environment with
PYTHONDONTWRITEBYTECODE=1 recompiles every tilec module on every command (about 0.1 s more per
command); --no-bytecode keeps the environment's setting. The interpreter's own start (`python -c
pass`, with the same site packages) is measured too: no command can take less.

    python bench/build_speed.py                      # every sample, 3 repeats
    python bench/build_speed.py gemm softmax --repeats 5 --json
    python bench/build_speed.py mlp --jobs 1,2       # one translation unit against two, interleaved

"cold" uses TILEC_JOBS as the environment sets it (unset: as many compilers at once as there are
idle cores, backend_cpu/compiler.py compile_jobs), so on a loaded machine it compiles one unit.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted(p.stem for p in (ROOT / "samples").glob("*.py"))


def timed(args: list, env: dict, argv: list | None = None) -> tuple:
    """(CPU seconds, wall seconds) of one command, children included."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    argv = argv or [sys.executable, "-m", "tilec", *args]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def measure(sample: str, repeats: int, env: dict, work: Path, empty_cache: bool, jobs: list,
            target: str = "cpu") -> dict:
    src = str(ROOT / "samples" / f"{sample}.py")
    row = {"sample": sample}
    if empty_cache:
        cache = work / "empty-cache"
        shutil.rmtree(cache, ignore_errors=True)
        out = work / "out-empty"
        shutil.rmtree(out, ignore_errors=True)
        row["cold_empty_cache_cpu_s"], _ = timed(["build", src, "-o", str(out), "--target", "cpu"],
                                                  {**env, "TILEC_CACHE_DIR": str(cache)})
    out = work / "out"
    shutil.rmtree(out, ignore_errors=True)
    timed(["build", src, "-o", str(out), "--target", target], env)  # fills the cache
    edited = work / "edited" / f"{sample}.py"  # the sample with a comment appended: the same C++
    edited.parent.mkdir(exist_ok=True)
    edited.write_text(Path(src).read_text() + "\n# edited\n")
    products = Path(env["TILEC_CACHE_DIR"]) / "products"  # libraries compiled before (product_cache.py)
    runs = {"cold": [], "cold_new_shapes": [], "cpp_unchanged": [], "noop": [], "check": [], "check_again": []}
    runs.update({f"cold_jobs{n}": [] for n in jobs})
    for _ in range(repeats):
        for n in jobs:  # the same cold build under each TILEC_JOBS, interleaved
            shutil.rmtree(out, ignore_errors=True)
            shutil.rmtree(products, ignore_errors=True)
            runs[f"cold_jobs{n}"].append(timed(["build", src, "-o", str(out), "--target", target],
                                               {**env, "TILEC_JOBS": str(n)}))
        shutil.rmtree(out, ignore_errors=True)
        shutil.rmtree(products, ignore_errors=True)
        runs["cold"].append(timed(["build", src, "-o", str(out), "--target", target], env))
        shutil.rmtree(out, ignore_errors=True)
        runs["cpp_unchanged"].append(timed(["build", str(edited), "-o", str(out), "--target", target], env))
        shutil.rmtree(out, ignore_errors=True)
        shutil.rmtree(products, ignore_errors=True)
        shutil.rmtree(Path(env["TILEC_CACHE_DIR"]) / "gemm", ignore_errors=True)  # gemm.h's instances compiled anew
        runs["cold_new_shapes"].append(timed(["build", src, "-o", str(out), "--target", target], env))
        runs["noop"].append(timed(["build", src, "-o", str(out), "--target", target], env))
        shutil.rmtree(Path(env["TILEC_CACHE_DIR"]) / "checked", ignore_errors=True)  # no clean-check record
        runs["check"].append(timed(["check", src], env))
        runs["check_again"].append(timed(["check", src], env))  # the same file again: its record answers
    for name, values in runs.items():
        row[f"{name}_cpu_s"] = round(statistics.median(v[0] for v in values), 3)
        row[f"{name}_wall_s"] = round(statistics.median(v[1] for v in values), 3)
    return row


def interpreter_floor(repeats: int, env: dict) -> dict:
    """Median CPU and wall seconds of `python -c pass`: the start every command pays."""
    runs = [timed([], env, [sys.executable, "-c", "pass"]) for _ in range(max(repeats, 5))]
    return {"sample": "(python -c pass)", "cpu_s": round(statistics.median(r[0] for r in runs), 3),
            "wall_s": round(statistics.median(r[1] for r in runs), 3)}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("samples", nargs="*", default=SAMPLES)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.add_argument("--empty-cache", action="store_true", help="also time one build with an empty cache")
    parser.add_argument("--jobs", default="", help="also time the cold build under each of these TILEC_JOBS "
                        "values, interleaved (e.g. 1,2: one compiler at a time against two translation units)")
    parser.add_argument("--target", default="cpu", help="the builds' --target (cpu; all adds nvcc)")
    parser.add_argument("--no-bytecode", action="store_true",
                        help="keep the environment's bytecode setting (PYTHONDONTWRITEBYTECODE)")
    args = parser.parse_args(argv)
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp:
        env.setdefault("TILEC_CACHE_DIR", str(Path(tmp) / "cache"))
        if not args.no_bytecode:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        floor = interpreter_floor(args.repeats, env)
        if args.json:
            print(json.dumps(floor, sort_keys=True), flush=True)
        else:
            print(f"interpreter start (python -c pass): {floor['cpu_s']:.3f} s CPU (wall {floor['wall_s']:.2f})")
        for sample in args.samples:
            jobs = [int(n) for n in args.jobs.split(",") if n.strip()]
            row = measure(sample, args.repeats, env, Path(tmp), args.empty_cache, jobs, args.target)
            if args.json:
                print(json.dumps(row, sort_keys=True), flush=True)
            else:
                extra = (f", cold with empty cache {row['cold_empty_cache_cpu_s']:.2f}"
                         if "cold_empty_cache_cpu_s" in row else "")
                print(f"{sample:>10}: cold build {row['cold_cpu_s']:.3f} s (new tile shapes "
                      f"{row['cold_new_shapes_cpu_s']:.3f} s), C++ unchanged {row['cpp_unchanged_cpu_s']:.3f} s "
                      f"(wall {row['cpp_unchanged_wall_s']:.2f}), no-op rebuild {row['noop_cpu_s']:.3f} s, "
                      f"check {row['check_cpu_s']:.3f} s, check again {row['check_again_cpu_s']:.3f} s CPU "
                      f"(wall {row['cold_wall_s']:.2f} / {row['noop_wall_s']:.2f} / {row['check_wall_s']:.2f} / "
                      f"{row['check_again_wall_s']:.2f}){extra}", flush=True)
                for n in jobs:
                    print(f"{'':>10}  cold build, TILEC_JOBS={n}: {row[f'cold_jobs{n}_cpu_s']:.3f} s CPU "
                          f"(wall {row[f'cold_jobs{n}_wall_s']:.2f})", flush=True)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(json.dumps({"load_average": load}) if args.json else f"load average: {load}")


if __name__ == "__main__":
    main()
