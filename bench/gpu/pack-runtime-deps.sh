#!/usr/bin/env bash
# Adds the shared libraries of the CPU runtime (OpenBLAS, oneDNN and theirs) to a GPU pack:
#   ../shared/scripts/pack-for-gpu.sh gpu-pack && bash bench/gpu/pack-runtime-deps.sh gpu-pack
# The GPU machine is bare: without them libamp_runtime_cpu.so (the CPU reference runs of
# device-run.sh) does not load. They go, stripped and xz-compressed (~13 MB; the device tool
# carries 64 MiB in all), to PACK_DIR/runtime-deps.tar.xz, which device-run.sh unpacks onto
# LD_LIBRARY_PATH.
set -eu
pack=${1:?usage: pack-runtime-deps.sh PACK_DIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
lib="$here/build/runtime/libamp_runtime_cpu.so"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
# Everything ldd resolves except the C and C++ libraries and the loader, which every machine has.
ldd "$lib" | awk '$3 ~ /^\// {print $3}' |
  grep -v -E '/(libc|libm|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so' |
  while read -r so; do cp -L "$so" "$stage/"; done
strip --strip-unneeded "$stage"/*.so* 2>/dev/null || true
tar -C "$stage" -cf - . | xz -T0 -6 >"$pack/runtime-deps.tar.xz"
echo "$pack/runtime-deps.tar.xz: $(ls "$stage" | tr '\n' ' ')($(du -h "$pack/runtime-deps.tar.xz" | cut -f1))"
