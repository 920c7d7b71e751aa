# amp-mlir: the two commands of a fresh Debian 12 machine.
#   make demo    installs what is missing, builds, rewrites a bundled training step
#                and trains one on the CPU in fp32 and f16 (with a skipped step)
#   make check   installs what is missing, builds, runs every test
# Everything lands in build/ (binaries in build/bin/).

LLVM_VERSION ?= 22
LLVM_PREFIX  ?= /usr/lib/llvm-$(LLVM_VERSION)
BUILD        ?= build
BUILD_TYPE   ?= Release
DEB_PACKAGES := libmlir-$(LLVM_VERSION)-dev mlir-$(LLVM_VERSION)-tools \
                llvm-$(LLVM_VERSION)-dev llvm-$(LLVM_VERSION)-tools clang-$(LLVM_VERSION) \
                cmake ninja-build python3 python3-dev python3-venv libopenblas-dev \
                libdnnl-dev
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps py-deps py-torch py-iree asan-deps configure build demo check check-lit check-asan fuzz op-coverage model-zoo py-models clean help

all: build

help:
	@echo "make demo    - install missing packages, build, run amp-opt and amp-train on bundled examples"
	@echo "make check   - install missing packages, build, run every test"
	@echo "make build   - configure (CMake + Ninja) and build into $(BUILD)/"
	@echo "make check-asan - build amp-opt/amp-train/amp-compile with ASan+UBSan in $(ASAN_BUILD)/, run their lit tests"
	@echo "make op-coverage - regenerate docs/OpCoverage.md (every policy op x dtype x backend)"
	@echo "make model-zoo - regenerate docs/ModelZoo.md (real models through torch-mlir, amp-train and IREE vs PyTorch)"
	@echo "make fuzz    - mutate the fuzz corpus through amp-opt/amp-train for FUZZ_SECONDS (default 300)"

# Installs the Debian packages that are missing; silent when all are present.
deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing:$$missing"; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null || exit 1; \
	fi

# The Python side (bindings, PyTorch export, comparison with torch.amp) runs
# in a virtual environment under build/ that sees the packages already
# installed for python3. torch comes from PyPI: its Linux wheel is a CUDA
# build, about 2.8 GiB to download (5.2 GiB installed) the first time. With
# less than $(TORCH_GIB) GiB free the install warns first: a disk that fills up
# can leave a torch that does not import, and the tests then stop with its
# error. Where torch cannot be installed, the tests that need it are skipped
# and say so.
VENV         := $(BUILD)/venv
PY           := $(VENV)/bin/python
PY_PACKAGES  := numpy pytest pytest-xdist nanobind matplotlib
py-deps: deps
	@[ -x $(PY) ] || python3 -m venv --system-site-packages $(VENV)
	@$(PY) -c "import numpy, pytest, xdist, nanobind, matplotlib" 2>/dev/null || \
	  $(PY) -m pip install -q $(PY_PACKAGES) || \
	  echo "== pip could not install $(PY_PACKAGES): the Python module and its tests are skipped"

TORCH_GIB := 9
py-torch: py-deps
	@$(PY) -c "import torch" 2>/dev/null || { \
	  free=$$(df -Pk $(BUILD) | awk 'NR == 2 { print int($$4 / 1048576) }'); \
	  [ "$$free" -ge $(TORCH_GIB) ] || \
	    echo "== warning: $$free GiB free under $(BUILD); installing torch takes about $(TORCH_GIB)"; \
	  $(PY) -m pip install -q $(TORCH_PACKAGE) || \
	    echo "== torch could not be installed: the tests that need it are skipped"; }

# The PyTorch front end (torch-mlir's FX importer) and the model zoo's model
# libraries, pinned to versions that work with $(TORCH_PACKAGE) (about 100 MB).
# Where they cannot be installed, the exporter falls back to its builtin
# lowering and the zoo's models are skipped, each saying which package is missing.
TORCH_PACKAGE  := torch==2.15.0
MODEL_PACKAGES := torch-mlir==20261001 torchvision==0.29.2 timm==1.0.31 transformers==5.24.0
py-models: py-torch
	@$(PY) -c "import torch_mlir.fx, torchvision, timm, transformers" 2>/dev/null || \
	  $(PY) -m pip install -q $(MODEL_PACKAGES) || \
	  echo "== $(MODEL_PACKAGES) could not be installed: the torch-mlir front end and the model zoo are skipped"

# IREE (compiler and runtime from PyPI, about 400 MB installed) for the tests of the IREE path
# (docs/IREE.md); skipped with a reason where it cannot be installed.
# Pinned: the op-coverage matrix (docs/OpCoverage.md) records what this IREE does
# (3.13.0 compiles f16 maxnumf / minnumf / softmax, which an earlier unpinned
# install could not).
IREE_PACKAGES := iree-base-compiler==3.13.0 iree-base-runtime==3.13.0
py-iree: py-deps
	@$(PY) -c "import iree.compiler, iree.runtime" 2>/dev/null || \
	  $(PY) -m pip install -q $(IREE_PACKAGES) || \
	  echo "== $(IREE_PACKAGES) could not be installed: the IREE tests are skipped"

$(BUILD)/build.ninja: | py-deps
	@cmake -S . -B $(BUILD) -G Ninja -Wno-dev \
	  -DPython3_EXECUTABLE=$(abspath $(PY)) \
	  -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  -DMLIR_DIR=$(LLVM_PREFIX)/lib/cmake/mlir \
	  -DCMAKE_C_COMPILER=$(LLVM_PREFIX)/bin/clang \
	  -DCMAKE_CXX_COMPILER=$(LLVM_PREFIX)/bin/clang++ >/dev/null

configure: py-deps $(BUILD)/build.ninja

build: configure
	@ninja -C $(BUILD) --quiet amp-opt amp-train

DEMO_INPUT ?= examples/transformer_adam.mlir
DEMO_TRAIN ?= examples/mlp_sgd.mlir
DEMO_STEPS ?= 30
DEMO_POISON ?= 10
demo: build
	@mkdir -p $(BUILD)/demo
	@echo "== amp-opt $(DEMO_INPUT) --amp-autocast (f16)"
	@$(BUILD)/bin/amp-opt $(DEMO_INPUT) \
	  --amp-autocast="precision=f16 report=$(BUILD)/demo/report.json" \
	  -mlir-pass-statistics -o $(BUILD)/demo/transformer_adam.f16.mlir
	@python3 tools/amp-report/amp-report.py $(BUILD)/demo/report.json
	@echo "== rewritten IR: $(BUILD)/demo/transformer_adam.f16.mlir (first matmuls below)"
	@grep -m 4 "tosa.matmul" $(BUILD)/demo/transformer_adam.f16.mlir | cut -c1-160
	@$(LLVM_PREFIX)/bin/mlir-opt --allow-unregistered-dialect $(BUILD)/demo/transformer_adam.f16.mlir -o /dev/null && \
	  echo "== Debian's mlir-opt $(LLVM_VERSION) verifies the rewritten IR (the typed #amp attributes read as an unregistered dialect's)"
	@echo "== amp-opt $(DEMO_TRAIN) --amp-pipeline (autocast + dynamic loss scaling): the amp ops"
	@$(BUILD)/bin/amp-opt $(DEMO_TRAIN) --amp-pipeline -o $(BUILD)/demo/mlp_sgd.amp.mlir
	@for op in unscale_and_check keep_on_overflow update_scale; do \
	  grep -m 1 "amp\.$$op" $(BUILD)/demo/mlp_sgd.amp.mlir | cut -c1-160; done
	@echo "== amp-train $(DEMO_TRAIN): $(DEMO_STEPS) steps on the CPU, fp32 vs f16, and f16 with a poisoned step"
	@python3 tools/amp-demo/amp-demo.py --amp-train $(BUILD)/bin/amp-train \
	  --steps $(DEMO_STEPS) --poison-step $(DEMO_POISON) $(DEMO_TRAIN)

# The Python packages (torch, torch-mlir and the model libraries, IREE: minutes of pip the first time)
# install beside the C++ build, which needs none of them; their output follows the build's, and the
# tests start once both are done.
check: configure
	@$(MAKE) --no-print-directory py-torch py-models py-iree > $(BUILD)/py-install.log 2>&1 & pip=$$!; \
	  ninja -C $(BUILD) --quiet all; built=$$?; \
	  wait $$pip; installed=$$?; cat $(BUILD)/py-install.log; \
	  [ $$installed = 0 ] || echo "== installing the Python packages failed (above)"; [ $$built = 0 ] && [ $$installed = 0 ]
	@ninja -C $(BUILD) check-amp
	@if ninja -C $(BUILD) -t query check-amp-python >/dev/null 2>&1; then \
	  ninja -C $(BUILD) check-amp-python; \
	else echo "== Python tests skipped: the module is not configured (needs python3-dev and nanobind)"; fi

# The op-coverage matrix (test/op-coverage/op_coverage.py): every op of the
# default policy x f32/f16/bf16 x cpu/gpu/iree, written to docs/OpCoverage.md.
# `make check` regenerates it and fails if any cell differs.
op-coverage: configure py-iree
	@ninja -C $(BUILD) --quiet all
	@$(PY) test/op-coverage/op_coverage.py --build $(BUILD) --write docs/OpCoverage.md

# The model zoo (test/model-zoo/model_zoo.py): real models exported through
# torch-mlir, trained in fp32/f16/bf16 against PyTorch, written to
# docs/ModelZoo.md (with the CUDA compile of each step where ptxas exists).
model-zoo: configure py-models py-iree
	@ninja -C $(BUILD) --quiet all
	@$(PY) test/model-zoo/model_zoo.py --build $(BUILD) --work $(BUILD)/model-zoo \
	  --doc docs/ModelZoo.md --json $(BUILD)/model-zoo/results.json $$([ -x /usr/local/cuda/bin/ptxas ] && echo --gpu)

# The robustness fuzzer (test/fuzz/fuzz.py) for a fixed time; `make check`
# runs a short deterministic slice of it. Failing inputs stay in
# $(BUILD)/fuzz with the command that replays them.
FUZZ_SECONDS ?= 300
FUZZ_SEED    ?= 1
fuzz: build
	@python3 test/fuzz/fuzz.py --amp-opt $(BUILD)/bin/amp-opt --amp-train $(BUILD)/bin/amp-train \
	  --seed $(FUZZ_SEED) --time-budget $(FUZZ_SECONDS) --timeout 60 \
	  --corpus test/fuzz/Inputs/corpus --corpus examples \
	  --work $(BUILD)/fuzz --json $(BUILD)/fuzz/summary.json

# amp-opt, amp-train and amp-compile built with AddressSanitizer and
# UndefinedBehaviorSanitizer in their own tree, and
# the lit tests that need nothing else (no runtime library, no Python), the
# fuzz slice included. Only the project's code is instrumented (Debian's
# libMLIR/libLLVM are not), but every heap block goes through ASan's
# allocator, so a use after free or an overflow of one is caught wherever it
# was allocated. abort_on_error makes a report a crash, which also fails
# the `not amp-opt ...` RUN lines. ASAN_OPTIONS can be overridden. The tree
# has no CUDA backend: CMake links CUDA code with the host g++, which does not
# take clang's -shared-libsan (and the backend cannot run here anyway).
ASAN_BUILD   ?= build-asan
ASAN_TESTS   ?= Policy Transforms Pipelines Conversion/AmpToLinalg Conversion/Checks Codegen/CPU/amp-cpu-vectorize.mlir \
                Codegen/CPU/amp-cpu-widen-contraction-operands.mlir Codegen/CPU/amp-cpu-approximate-math-run.mlir \
                Codegen/CPU/amp-cpu-check-in-update.mlir \
                Conversion/AmpToRuntime/amp-lower-to-runtime.mlir Conversion/AmpToRuntime/check-source.mlir \
                Dialect Tools/amp-opt fuzz \
                Codegen/GPU/amp-gpu-emulate-on-host.mlir Integration/amp-train-cuda-emulated.test
# UndefinedBehaviorSanitizer too, every report fatal (-fno-sanitize-recover).
# vptr needs RTTI (LLVM builds without it); function would check calls into
# the uninstrumented libMLIR/libLLVM, whose functions carry no type hash.
ASAN_FLAGS   ?= -fsanitize=address,undefined -fno-sanitize=vptr,function \
                -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g1
# The shared ASan runtime: the runtime libraries link with -z defs, and
# their __asan_* references must resolve there, not only in the executable.
ASAN_RTDIR    = $(shell $(LLVM_PREFIX)/bin/clang -print-runtime-dir)
ASAN_LINK     = -fsanitize=address,undefined -shared-libsan -Wl,-rpath,$(ASAN_RTDIR)
# allow_user_poisoning=0: LLVM's BumpPtrAllocator poisons the free rest of
# each slab when the code inlining it is instrumented, and unpoisons what it
# hands out; Debian's uninstrumented libMLIR allocates from the same
# allocators (the attribute/type uniquer) without unpoisoning, so every such
# allocation would be reported as a use after poison.
ASAN_OPTIONS ?= detect_leaks=1:abort_on_error=1:allow_user_poisoning=0
# clang's AddressSanitizer runtime.
ASAN_PACKAGES := libclang-rt-$(LLVM_VERSION)-dev
asan-deps: deps
	@dpkg-query -W -f='$${Status}' $(ASAN_PACKAGES) 2>/dev/null | grep -q "install ok installed" || \
	  { echo "Installing: $(ASAN_PACKAGES)"; \
	    $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	      $(ASAN_PACKAGES) >/dev/null; }

$(ASAN_BUILD)/build.ninja: | py-deps asan-deps
	@cmake -S . -B $(ASAN_BUILD) -G Ninja -Wno-dev \
	  -DPython3_EXECUTABLE=$(abspath $(PY)) \
	  -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
	  -DCMAKE_C_FLAGS="$(ASAN_FLAGS)" -DCMAKE_CXX_FLAGS="$(ASAN_FLAGS)" \
	  -DCMAKE_EXE_LINKER_FLAGS="$(ASAN_LINK)" -DCMAKE_SHARED_LINKER_FLAGS="$(ASAN_LINK)" \
	  -DMLIR_DIR=$(LLVM_PREFIX)/lib/cmake/mlir \
	  -DAMP_RUNTIME_ENABLE_CUDA=OFF \
	  -DCMAKE_C_COMPILER=$(LLVM_PREFIX)/bin/clang \
	  -DCMAKE_CXX_COMPILER=$(LLVM_PREFIX)/bin/clang++ >/dev/null

check-asan: py-deps asan-deps $(ASAN_BUILD)/build.ninja
	@ninja -C $(ASAN_BUILD) --quiet amp-opt amp-train amp-compile amp_runtime_cpu
	@cd $(ASAN_BUILD)/test && ASAN_OPTIONS=$(ASAN_OPTIONS) \
	  $(abspath $(PY)) $(LLVM_PREFIX)/bin/lit -sv $(ASAN_TESTS)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
