#!/usr/bin/env bash
# The checks that need a GPU, as one script for a lent machine (an H100 or H200, sm_90), run from
# the repository root with results under $OUT (at most 8 files come back):
#   env.txt         the device, drivers, compilers and Python packages seen
#   build.log       every sample built for sm_90 (--target all), with nvcc's resource table
#   gpu_tests.log   tests/test_gpu.py: each sample's forward and adjoint on the device against the CPU
#   emu_on_gpu.log  the suite's CUDA-emulation tests with every emulated launch run on the device
#                   instead (TILEC_EMU_ON_GPU=1, tests/on_gpu.py; all sampled cases: TILEC_TESTS_FULL=1)
#   gpu_bench.json  bench/gpu_bench.py: GEMM against cuBLAS fp32, softmax / layernorm / fused map
#   gpu_bench.log   against torch, each result checked first
# STEPS (default "build tests bench emu") picks the steps: a lease may run "build tests bench"
# in one call (about 3 minutes on 16 cores) and "emu" in the next, so that a machine lost during
# the long step still returned the first results (files under $OUT come back only when a call ends).
# Packages the machine lacks (libcst) travel as wheels in .whl/ (the device tool's README).
# Each step has its own time limit so that one hung step leaves the others' results. Parallelism is
# kept moderate (4-8 processes, TILEC_JOBS=2): the first try, with 12-14 processes each running nvcc
# with a thread per core, ended with the machine no longer answering (cause not established).
set -uo pipefail
OUT=${OUT:-bench/results}
mkdir -p "$OUT"
if [ -d .whl ] && ! python3 -c "import libcst" 2>/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
# Fail at once, not after minutes of failed builds, when what every step needs is missing.
for module in libcst click jinja2 numpy cupy torch cuda.bindings; do
    python3 -c "import $module" 2>/dev/null || { echo "gpu.sh: python3 cannot import $module (carry its wheel in .whl)"; exit 2; }
done
command -v nvcc > /dev/null || { echo "gpu.sh: no nvcc on PATH"; exit 2; }
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 TILEC_JOBS=${TILEC_JOBS:-2}
STEP_TESTS=${STEP_TESTS:-120} STEP_EMU=${STEP_EMU:-200} STEP_BENCH=${STEP_BENCH:-120}
STEPS=${STEPS:-build tests bench emu}
step() { case " $STEPS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
{
    date -u; nvidia-smi; nvcc --version; g++ --version | head -1; python3 --version
    python3 -c "import cupy, torch, numpy, cuda.bindings, libcst, click, jinja2; print('cupy', cupy.__version__, 'torch', torch.__version__, 'numpy', numpy.__version__, 'cuda.bindings', cuda.bindings.__version__)"
    nproc
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

# samples for the tests' reference, bench programs at three block sizes, side by side
if step build || step bench; then
start=$(date +%s)
{
    ls samples/*.py | xargs -P 4 -I{} sh -c 'python3 -m tilec build {} -o /tmp/gpu-build --target all --arch sm_90 -v 2>&1'
    for bd in 64 128 256; do
        ls bench/programs/*.py | sed "s/\$/ $bd/"
    done | xargs -P 6 -n 2 sh -c 'python3 -m tilec build "$0" -o /tmp/gpu-bench/bd$1 --target cuda --arch sm_90 --block-dim $1 -v 2>&1'
} > "$OUT/build.log" 2>&1
echo "builds: $(( $(date +%s) - start )) s, $(grep -c ': built in' "$OUT/build.log") built, $(grep -c 'error' "$OUT/build.log") lines with 'error'"
fi

if step tests; then
start=$(date +%s)
timeout "$STEP_TESTS" python3 -m pytest -q -n 6 -p no:cacheprovider -rfE --tb=short tests/test_gpu.py > "$OUT/gpu_tests.log" 2>&1
echo "test_gpu: rc $?, $(( $(date +%s) - start )) s: $(tail -1 "$OUT/gpu_tests.log")"
fi

if step bench; then
start=$(date +%s)
timeout "$STEP_BENCH" python3 bench/gpu_bench.py /tmp/gpu-bench --json "$OUT/gpu_bench.json" > "$OUT/gpu_bench.log" 2>&1
echo "gpu_bench: rc $?, $(( $(date +%s) - start )) s"
tail -45 "$OUT/gpu_bench.log"
fi

if step emu; then
start=$(date +%s)
TILEC_EMU_ON_GPU=1 TILEC_TESTS_FULL=1 timeout "$STEP_EMU" python3 -m pytest -q -n 8 -p no:cacheprovider -rfE \
    --tb=short --timeout 120 -k "(emu or block32 or block64 or block128 or reverse) and not cpu" tests \
    --deselect "tests/test_launch_forms.py::test_a_tape_replays_a_launch_whose_blocks_span_rows[cuda-emu]" \
    --deselect tests/test_tape_cuda.py::test_tape_on_cuda_matches_the_emulation \
    > "$OUT/emu_on_gpu.log" 2>&1
echo "emulation tests on the GPU: rc $?, $(( $(date +%s) - start )) s: $(tail -1 "$OUT/emu_on_gpu.log")"
grep -E "^(FAILED|ERROR)" "$OUT/emu_on_gpu.log" | cut -c1-200 | head -40
fi
