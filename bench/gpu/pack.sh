#!/usr/bin/env bash
# Makes gpu-pack/, everything bench/gpu/device-run.sh needs on a bare GPU machine, within the device
# tool's 64 MiB (working tree and carried paths together):
#   bash bench/gpu/pack.sh [PACK_DIR]        (from the project root, after `ninja -C build`)
# then, with the device tool: carry ["gpu-pack"], command
#   source gpu-pack/unpack.sh && bash bench/gpu/device-run.sh full
#
# 1. ../shared/scripts/pack-for-gpu.sh: build/ and the MLIR/LLVM 22 libraries (amp-compile and
#    amp-capi-smoke are dropped from it: device-run.sh does not use them, and they do not fit);
# 2. pack-runtime-deps.sh: the CPU runtime's OpenBLAS / oneDNN (the CPU reference runs);
# 3. what needs torch-mlir, which the GPU machine lacks: the benchmark's four steps
#    (run_gpu_benchmark.py --export-to; their arrays are written there from the model) and the
#    model zoo's steps (python/amp_mlir/torch/zoo.py, no arrays: both runs draw the same amp.init
#    values), xz-compressed into PACK_DIR/mlir.tar.xz.
set -euo pipefail
pack=${1:-gpu-pack}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$here"
py=build/venv/bin/python
zoo_models=${AMP_GPU_ZOO:-mnist_mlp,lstm,gpt2,bert,distilbert,vit_tiny,resnet18,mobilenet_v3_small}
grep -qx "/$pack/" .git/info/exclude 2>/dev/null || echo "/$pack/" >>.git/info/exclude
rm -rf "$pack"
../shared/scripts/pack-for-gpu.sh "$pack"
# Drop the two tools device-run.sh does not run (about 7 MB compressed).
xz -d -T0 "$pack/amp-gpu.tar.xz"
drop=$(tar -tf "$pack/amp-gpu.tar" | grep -E '/bin/(amp-compile|amp-capi-smoke)$|/CMakeFiles/$' |
  grep -vE 'CMakeFiles/.+CMakeFiles/$' || true)
[ -n "$drop" ] && tar --delete -f "$pack/amp-gpu.tar" $drop
# -9e: at -6 the pack came out 1 MiB over the 64 MiB (2026-12-04).
xz -T0 -9e "$pack/amp-gpu.tar"
bash bench/gpu/pack-runtime-deps.sh "$pack"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
"$py" bench/gpu/run_gpu_benchmark.py --export-to "$stage/steps"
"$py" - "$stage/zoo" "$zoo_models" <<'EOF'
import os, sys
sys.path.insert(0, "build/python")
from amp_mlir.torch.zoo import UNSEEN, ZOO
out, names = sys.argv[1], sys.argv[2].split(",")
cases = {**ZOO, **UNSEEN}
for name in names:
    d = os.path.join(out, name)
    cases[name]().export(d)
    for f in os.listdir(d):
        if f.endswith(".npy"):
            os.remove(os.path.join(d, f))
    print(f"zoo: {name}")
EOF
tar -C "$stage" -cf - steps zoo | xz -9e -T0 >"$pack/mlir.tar.xz"
# The revision the build is of (the GPU machine's copy of .git may be older).
git describe --always --dirty >"$pack/revision"
tracked=$(git ls-files -z | xargs -0 du -cb | tail -n 1 | cut -f1)
total=$(( $(du -sb "$pack" | cut -f1) + tracked ))
echo "$pack: $(du -sh "$pack" | cut -f1); with the working tree $((total / 1048576)) MiB of the device tool's 64"
[ "$total" -lt $((64 * 1048576)) ] || { echo "pack.sh: over 64 MiB" >&2; exit 1; }
