# -*- Python -*-
# lit configuration of the amp-mlir regression tests.

import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "AMP"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.amp_obj_root, "test")
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py",
                   "Inputs", "tools"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%amp_src_root", config.amp_src_root))
config.substitutions.append(("%amp_obj_root", config.amp_obj_root))
config.substitutions.append(("%examples", os.path.join(config.amp_src_root, "examples")))
config.substitutions.append(("%mlir_dir", config.mlir_dir))
config.substitutions.append(("%cmake", config.cmake_command))
config.substitutions.append(("%cxx", config.cxx_compiler))
config.substitutions.append(("%cc", config.c_compiler))
config.substitutions.append(
    ("%mlir_c_runner_utils",
     os.path.join(os.path.dirname(config.llvm_tools_dir), "lib", "libmlir_c_runner_utils.so")))
config.substitutions.append(
    ("%mlir_runner_utils",
     os.path.join(os.path.dirname(config.llvm_tools_dir), "lib", "libmlir_runner_utils.so")))
config.substitutions.append(("%python", config.python_executable or "python3"))
config.substitutions.append(
    ("%check-invariants",
     "%s %s" % (config.python_executable or "python3",
                os.path.join(config.amp_src_root, "test", "tools", "check_invariants.py"))))

config.substitutions.append(
    ("%check-gpu-structure",
     "%s %s" % (config.python_executable or "python3",
                os.path.join(config.amp_src_root, "test", "tools", "check_gpu_structure.py"))))
config.substitutions.append(
    ("%gen-training-graph",
     "%s %s" % (config.python_executable or "python3",
                os.path.join(config.amp_src_root, "bench", "gen_training_graph.py"))))

llvm_config.use_default_substitutions()
# `not` (and `count`) at the start of a RUN line are only found through PATH:
# use_default_substitutions() rewrites them only after a pipe.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_system_environment(["HOME", "TMPDIR", "TMP", "TEMP"])
# Compiled steps are cached in the build tree, not in the user's ~/.cache
# (Runner/JitCache.h); test/Integration/amp-train-jit-cache.test checks the cache.
config.environment["AMP_CACHE_DIR"] = os.path.join(config.amp_obj_root, "jit-cache")

tool_dirs = [config.amp_tools_dir, config.llvm_tools_dir, "/usr/local/cuda/bin"]
tools = [
    "amp-opt",
    "amp-train",
    ToolSubst("mlir-opt", unresolved="fatal"),
    ToolSubst("mlir-runner", unresolved="fatal"),
    ToolSubst("mlir-translate", unresolved="fatal"),
    ToolSubst("llc", unresolved="fatal"),
    "amp-compile",
    ToolSubst("ptxas", unresolved="ignore"),
]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# /dev/full (Linux): the write-error tests.
if os.path.exists("/dev/full"):
    config.available_features.add("dev-full")

# GPU tests need an NVIDIA device; without one they are UNSUPPORTED, never passed.
if shutil.which("nvidia-smi") and os.system("nvidia-smi -L >/dev/null 2>&1") == 0:
    config.available_features.add("cuda-device")
if shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc"):
    config.available_features.add("nvcc")

# A CPU that rounds f32 to bf16 in one instruction (AVX512_BF16 with AVX512VL,
# or AVX-NE-CONVERT): amp-train's --cpu-native-bf16 default then uses it
# (getEffectiveLoweringConfig), and an f32 subnormal rounds to zero.
if os.path.exists("/proc/cpuinfo"):
    with open("/proc/cpuinfo") as f:
        _flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    if ("avx512_bf16" in _flags and "avx512vl" in _flags) or "avx_ne_convert" in _flags:
        config.available_features.add("host-bf16-rounding")
    # AMX-BF16: oneDNN's AMX kernels, which the runtime keeps off small bf16 GEMMs.
    if "amx_bf16" in _flags and "avx512_bf16" in _flags:
        config.available_features.add("host-amx-bf16")

# Which runtime backends this build has (written by runtime/CMakeLists.txt).
_backend_file = os.path.join(config.amp_obj_root, "runtime", "amp_runtime_backend.txt")
if os.path.exists(_backend_file):
    with open(_backend_file) as f:
        if f.read().strip() == "cuda":
            config.available_features.add("amp-runtime-cuda")
config.substitutions.append(("%amp_runtime_dir", os.path.join(config.amp_obj_root, "runtime")))

# The CPU runtime's threads are libgomp's when it links it (through oneDNN):
# the OpenMP wait-policy test.
_runtime_cpu = os.path.join(config.amp_obj_root, "runtime", "libamp_runtime_cpu.so")
if shutil.which("ldd") and os.path.exists(_runtime_cpu):
    _ldd = subprocess.run(["ldd", _runtime_cpu], capture_output=True, text=True).stdout
    if "libgomp.so" in _ldd:
        config.available_features.add("libgomp")
