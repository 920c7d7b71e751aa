#!/usr/bin/env bash
# Everything a GPU session checks, in one call of the device tool (its time is short: batch it).
#
# Here (the Debian build machine):
#   ../shared/scripts/pack-for-gpu.sh gpu-pack      # build/ + MLIR/LLVM 22, ~46 MB
#   bash bench/gpu/pack-runtime-deps.sh gpu-pack     # the CPU runtime's OpenBLAS and oneDNN
#   (gpu-pack/ must be a folder .git/info/exclude ignores; name it in the device tool's `carry`)
# There (bare GPU machine: CUDA 13, PyTorch, ncu, compute-sanitizer, no MLIR), from the repo root:
#   source gpu-pack/unpack.sh && bash bench/gpu/device-run.sh [quick|full]
#
# Writes logs to $OUT (the device tool brings them back), and prints a summary. Steps:
#   1. nvidia-smi, the runtime's CUDA unit tests, the fake-driver contract tests
#   2. amp-train --device=cuda against the CPU on the bundled examples (fp32, f16 with a poisoned
#      step, bf16): same skipped steps and scales, losses tracked (test/Integration/Inputs/check_train.py)
#   3. compute-sanitizer memcheck and racecheck over amp-train --device=cuda (3 steps, f16)
#   4. full: bench/gpu/run_gpu_benchmark.py --ncu (amp-train vs PyTorch eager/compile, kernel top list)
set -u
mode=${1:-full}
OUT=${OUT:-/tmp/amp-gpu-out}
mkdir -p "$OUT"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$here"
# The CPU runtime's libraries (bench/gpu/pack-runtime-deps.sh), which a bare machine lacks.
if [ -f gpu-pack/runtime-deps.tar.xz ]; then
  mkdir -p /tmp/amp-runtime-deps && tar -C /tmp/amp-runtime-deps -xJf gpu-pack/runtime-deps.tar.xz
  export LD_LIBRARY_PATH=/tmp/amp-runtime-deps${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
bin=build/bin
summary="$OUT/summary.txt"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
run() { # name command...: runs, logs to $OUT/name.log, notes the exit code
  local name=$1; shift
  local start=$SECONDS
  "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  note "$name: rc=$rc ($((SECONDS - start)) s)"
  return $rc
}

note "== $(date -u '+%Y-%m-%d %H:%M UTC'); $(nvidia-smi -L 2>&1 | head -n 1)"
nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1

run cuda-unit-tests build/runtime/amp_runtime_cuda_tests
run context-tests build/runtime/amp_runtime_context_tests

check=test/Integration/Inputs/check_train.py
for example in mlp_sgd transformer_adam linalg_mlp; do
  src=examples/$example.mlir
  for precision in fp32 f16 bf16; do
    poison=(); [ "$precision" = f16 ] && poison=(--poison-step 5)
    tag=$example-$precision
    run "cpu-$tag" "$bin/amp-train" "$src" --precision=$precision --steps 20 "${poison[@]}"
    cp "$OUT/cpu-$tag.log" "$OUT/cpu-$tag.jsonl"
    run "gpu-$tag" "$bin/amp-train" "$src" --precision=$precision --steps 20 "${poison[@]}" --device=cuda
    cp "$OUT/gpu-$tag.log" "$OUT/gpu-$tag.jsonl"
    run "track-$tag" python3 "$check" track "$OUT/cpu-$tag.jsonl" "$OUT/gpu-$tag.jsonl" --tol 0.001
    if [ "$precision" = f16 ]; then
      run "poison-$tag" python3 "$check" poison "$OUT/gpu-$tag.jsonl" --step 5
      run "inline-$tag" "$bin/amp-train" "$src" --precision=f16 --steps 20 --poison-step 5 \
        --device=cuda --lowering=inline
      cp "$OUT/inline-$tag.log" "$OUT/inline-$tag.jsonl"
      run "track-inline-$tag" python3 "$check" track "$OUT/cpu-$tag.jsonl" "$OUT/inline-$tag.jsonl" --tol 0.001
    fi
  done
done

if command -v compute-sanitizer >/dev/null; then
  for tool in memcheck racecheck; do
    run "sanitizer-$tool" compute-sanitizer --tool "$tool" --error-exitcode 3 \
      "$bin/amp-train" examples/mlp_sgd.mlir --precision=f16 --steps 3 --poison-step 1 --device=cuda
    grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$OUT/sanitizer-$tool.log" | tee -a "$summary"
  done
else
  note "compute-sanitizer: not found"
fi

if [ "$mode" = full ]; then
  run gpu-benchmark env PYTHONPATH="$here/python" python3 bench/gpu/run_gpu_benchmark.py --ncu \
    --out "$OUT/benchmarks.md" --json "$OUT/gpu-benchmark.json" --revision "${AMP_REVISION:-unknown}"
  tail -n 40 "$OUT/gpu-benchmark.log" >>"$summary"
fi
cat "$summary"
