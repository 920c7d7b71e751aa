#!/usr/bin/env bash
# Everything a GPU session checks, in one call of the device tool (its time is short: batch it).
#
# Here (the Debian build machine), after `ninja -C build`:
#   bash bench/gpu/pack.sh          # gpu-pack/: build/, MLIR/LLVM 22, the CPU runtime's libraries,
#                                   # the benchmark's and the zoo's steps (exported here: the GPU
#                                   # machine has no torch-mlir); under the device tool's 64 MiB
# There (bare GPU machine: CUDA 13, PyTorch, ncu, compute-sanitizer, no MLIR), from the repo root,
# with the device tool's carry ["gpu-pack"]:
#   source gpu-pack/unpack.sh && bash bench/gpu/device-run.sh [quick|full|bench]
#
# The device tool brings back at most 8 files from $OUT: each step's log goes to $AMP_GPU_LOGS
# (default /tmp/amp-gpu-logs) and is appended to $OUT/logs.txt; $OUT also gets summary.txt,
# nvidia-smi.txt and the benchmark's log, table and JSON. Every command runs under `timeout`
# ($AMP_GPU_TIMEOUT s, default 180) so that one hang cannot use up the device call. Steps:
#   1. nvidia-smi, the runtime's CUDA unit tests, the fake-driver contract tests
#   2. amp-train --device=cuda against the CPU on the bundled examples (fp32, f16 with a poisoned
#      step, bf16): same skipped steps and scales, losses tracked (test/Integration/Inputs/check_train.py)
#   3. the exported zoo models in gpu-pack/zoo, CPU against GPU (f16, fp32), alongside step 2
#   4. full: bench/gpu/run_gpu_benchmark.py --ncu (amp-train vs PyTorch eager/compile, kernel top list)
#   5. compute-sanitizer memcheck and racecheck over amp-train --device=cuda (3 steps, f16)
# $AMP_GPU_BENCH_ARGS goes to step 4's run_gpu_benchmark.py (e.g. "--ncu-sizes large");
# bench: only step 4 (a second, short call)
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
# The build (AMP_BUILD_DIR, default build/: pack-for-gpu.sh recreates it at the path it was built at).
build=${AMP_BUILD_DIR:-build}
bin=$build/bin
# The exported steps and zoo models, compressed to fit the device tool's 64 MiB.
[ -f gpu-pack/mlir.tar.xz ] && tar -C gpu-pack -xJf gpu-pack/mlir.tar.xz
logs=${AMP_GPU_LOGS:-/tmp/amp-gpu-logs}
limit=${AMP_GPU_TIMEOUT:-180}
mkdir -p "$logs"
summary="$OUT/summary.txt"
: >"$summary"
: >"$OUT/logs.txt"
note() { echo "$*" | tee -a "$summary"; }
run() { # name command...: runs under timeout, logs to $logs/name.log and $OUT/logs.txt, notes rc
  local name=$1; shift
  local start=$SECONDS
  timeout -k 10 "$limit" "$@" >"$logs/$name.log" 2>&1
  local rc=$?
  note "$name: rc=$rc ($((SECONDS - start)) s)"
  { echo "==== $name: rc=$rc ($((SECONDS - start)) s): $*"; tail -n 60 "$logs/$name.log"; } >>"$OUT/logs.txt"
  return $rc
}

note "== $(date -u '+%Y-%m-%d %H:%M UTC'); $(nvidia-smi -L 2>&1 | head -n 1)"
nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1

benchmark() { # extra arguments...: run_gpu_benchmark.py (step 4), then $AMP_GPU_BENCH_ARGS
  local exported=() start=$SECONDS
  [ -d gpu-pack/steps ] && exported=(--exported gpu-pack/steps)
  # shellcheck disable=SC2086  # $AMP_GPU_BENCH_ARGS is split on purpose
  PYTHONUNBUFFERED=1 PYTHONPATH="$here/python" timeout -k 10 "${AMP_GPU_BENCH_TIMEOUT:-420}" \
    python3 bench/gpu/run_gpu_benchmark.py "${exported[@]}" "$@" --amp-train "$bin/amp-train" \
    --out "$OUT/benchmarks.md" --json "$OUT/gpu-benchmark.json" \
    --revision "${AMP_REVISION:-$(cat gpu-pack/revision 2>/dev/null || echo unknown)}" \
    ${AMP_GPU_BENCH_ARGS:-} >"$OUT/gpu-benchmark.log" 2>&1
  note "gpu-benchmark: rc=$? ($((SECONDS - start)) s)"
  tail -n 40 "$OUT/gpu-benchmark.log" >>"$summary"
}

if [ "$mode" = bench ]; then
  # Only the benchmark (e.g. AMP_GPU_BENCH_ARGS="--models mlp --sizes large --ncu --ncu-sizes large
  # --ncu-torch f16,bf16"): a short second call.
  benchmark
  exit 0
fi

run cuda-unit-tests "$build/runtime/amp_runtime_cuda_tests"
run context-tests "$build/runtime/amp_runtime_context_tests"

check=test/Integration/Inputs/check_train.py
# Real models (test/model-zoo; exported here, where torch-mlir is, into gpu-pack/zoo/NAME with or
# without their arg<N>.npy; without them both runs draw the same amp.init values): 5 steps on the
# CPU and on the GPU in fp32 and f16, same skipped steps and scales, losses within 1% (f16) / 1e-3
# (fp32) relative. The models run side by side (their compiles are host work).
zoo_model() { # name: four runs and two checks, logged like run() but not into logs.txt
  local name=$1 dir=gpu-pack/zoo/$1 inputs=() p
  ls "$dir"/arg*.npy >/dev/null 2>&1 && inputs=(--inputs "$dir")
  for p in f16 fp32; do
    local tag=zoo-$name-$p rtol=0.001
    [ "$p" = f16 ] && rtol=0.01
    for dev in cpu cuda; do
      local start=$SECONDS
      timeout -k 10 "$limit" "$bin/amp-train" "$dir/train_step.mlir" "${inputs[@]}" --precision=$p --steps 5 \
        --device=$dev >"$logs/$tag-$dev.jsonl" 2>"$logs/$tag-$dev.err"
      note "$tag-$dev: rc=$? ($((SECONDS - start)) s)"
    done
    python3 "$check" close "$logs/$tag-cpu.jsonl" "$logs/$tag-cuda.jsonl" --rtol $rtol >"$logs/$tag-close.log" 2>&1
    note "$tag-close: rc=$?"
  done
}

zoo_start=$SECONDS
if [ -d gpu-pack/zoo ]; then
  for dir in gpu-pack/zoo/*/; do zoo_model "$(basename "$dir")" & done
fi

for example in mlp_sgd transformer_adam linalg_mlp; do
  src=examples/$example.mlir
  for precision in fp32 f16 bf16; do
    poison=(); [ "$precision" = f16 ] && poison=(--poison-step 5)
    tag=$example-$precision
    run "cpu-$tag" "$bin/amp-train" "$src" --precision=$precision --steps 20 "${poison[@]}"
    grep "^{" "$logs/cpu-$tag.log" >"$logs/cpu-$tag.jsonl"
    run "gpu-$tag" "$bin/amp-train" "$src" --precision=$precision --steps 20 "${poison[@]}" --device=cuda
    grep "^{" "$logs/gpu-$tag.log" >"$logs/gpu-$tag.jsonl"
    run "track-$tag" python3 "$check" track "$logs/cpu-$tag.jsonl" "$logs/gpu-$tag.jsonl" --tol 0.001
    if [ "$precision" = f16 ]; then
      run "poison-$tag" python3 "$check" poison "$logs/gpu-$tag.jsonl" --step 5
      run "inline-$tag" "$bin/amp-train" "$src" --precision=f16 --steps 20 --poison-step 5 \
        --device=cuda --lowering=inline
      grep "^{" "$logs/inline-$tag.log" >"$logs/inline-$tag.jsonl"
      run "track-inline-$tag" python3 "$check" track "$logs/cpu-$tag.jsonl" "$logs/inline-$tag.jsonl" --tol 0.001
    fi
  done
done

# The zoo's jobs get until $AMP_GPU_ZOO_DEADLINE s after they started (default 240); then the rest stop.
while [ -n "$(jobs -rp)" ] && [ $((SECONDS - zoo_start)) -lt "${AMP_GPU_ZOO_DEADLINE:-240}" ]; do sleep 2; done
for job in $(jobs -rp); do pkill -TERM -P "$job"; kill "$job"; note "zoo: stopped at the deadline (job $job)"; done
wait
for f in "$logs"/zoo-*; do [ -e "$f" ] && { echo "==== $(basename "$f")"; tail -n 30 "$f"; } >>"$OUT/logs.txt"; done

if [ "$mode" = full ]; then
  benchmark --ncu --torch-modes "${AMP_GPU_TORCH_MODES:-fp32,f16,bf16,compile-f16}"
fi
if command -v compute-sanitizer >/dev/null; then
  for tool in memcheck racecheck; do
    limit=${AMP_GPU_SANITIZER_TIMEOUT:-90} run "sanitizer-$tool" compute-sanitizer --tool "$tool" --error-exitcode 3 \
      "$bin/amp-train" examples/mlp_sgd.mlir --precision=f16 --steps 3 --poison-step 1 --device=cuda
    grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$logs/sanitizer-$tool.log" | tee -a "$summary"
  done
else
  note "compute-sanitizer: not found"
fi

cat "$summary"
