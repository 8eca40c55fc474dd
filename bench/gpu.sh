#!/usr/bin/env bash
# Run on a lent GPU machine (an H200), from the repository root, with results under $OUT:
# build every sample for sm_90, run the `gpu` and `cuda` test tiers for real, and time the
# samples against torch. Wheels for packages the machine lacks (libcst, and its deps) travel
# in .whl/ (see the device tool's README); they are installed first when present.
set -uo pipefail
OUT=${OUT:-bench/results}
mkdir -p "$OUT"
if [ -d .whl ] && ! python3 -c "import libcst" 2>/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
for f in samples/*.py; do
    python3 -m tilec.cli build "$f" -o /tmp/gpu-build --target all --arch sm_90 -v
done > "$OUT/build.log" 2>&1
for d in /tmp/gpu-build/*/; do  # each manifest.json holds its kernels' registers, shared memory and spills
    cp "$d/manifest.json" "$OUT/$(basename "$d").manifest.json" 2>/dev/null
done
python3 -m pytest -q tests/test_gpu.py tests/test_cuda.py -p no:cacheprovider 2>&1 | tee "$OUT/tests.log" | tail -5
python3 bench/gpu_bench.py 2>&1 | tee "$OUT/gpu_bench.md"
