#!/usr/bin/env python3
"""Structural guard of a training step lowered for CUDA (no GPU needed).

usage: check_gpu_structure.py INPUT.mlir LOWERED.mlir [--max-thread-work N]
                              [--max-block-work N] [--name NAME]

INPUT.mlir is the step as written (TOSA / linalg on tensors); LOWERED.mlir is
`amp-compile INPUT --target=cuda --emit=gpu`: the host code with its
gpu.launch_func ops and the kernels (gpu.func in gpu.module) before the NVVM
lowering, pretty-printed. Checked:

  1. contractions: every contraction of the input (tosa.matmul, linalg matmul
     family, linalg.contract, linalg.generic whose body multiplies two inputs
     into a reduction) became a GEMM call (amp_rt_gemm / _ex / _out /
     _nested): the number of GEMM calls is at least the number of
     contractions, and no contraction takes more than one call (the calls
     carry `amp.contraction = N`, the number of the contraction they compute);
  2. no thread walks more than --max-thread-work elements (default 65536):
     the product of the constant trip counts of every scf.for nest in a
     kernel; a loop whose bounds are not constants is reported;
  3. no single-block kernel (grid (1,1,1)) covers more than --max-block-work
     elements (default 65536): threads per block x the kernel's thread work;
  4. the host code has exactly one blocking stream synchronisation (a
     `gpu.wait` without `async`) per step function;
  5. every launch fits CUDA's limits (grid y, z <= 65535, x < 2^31, at most
     1024 threads per block);
  6. coalescing: in every kernel, each access (memref.load / store) to the
     kernel's largest buffer moves by at most one element when the thread
     index x moves by one (stride 0 or 1 in the fastest thread index; the
     index expressions are evaluated for threads 0 and 1 of block 0, loops at
     their first iteration; a vector access by its V lanes, so that a stride
     of V is coalesced), or with a larger stride still uses at least
     --min-sector-use (half) of the bytes of the 32-byte sectors that the
     first warp's 32 accesses touch (a slice of each row, such as the half of
     each head's row that rotary embeddings negate), unless --allow-strided
     names the kernel or the
     kernel is the documented exception: a thread that walks the buffer's
     unit-stride dimension in its own loop (a reduction along rows, one thread
     per row: what amp-gpu-split-reductions leaves so, rows under 128
     elements and the combining stages' 32 partials a row; a row of
     --max-row-walk (128) elements or more in a kernel of --row-walk-threads
     (16384) threads or more is a violation), or a
     transpose copy (one load and one store, the other one unit-stride or
     partly coalesced; both would take a tile in shared memory; elementwise
     work fused into it may read other buffers under 64 KiB, such as a
     per-channel scale), or a
     strided window's load (a pooling or convolution window of stride 2 to 4,
     whose unit-stride index is built from a window loop's variable:
     neighbouring outputs read every s-th element); buffers under 64 KiB do
     not count.
     Also
     printed with --traffic: per kernel the bytes its accesses read and write
     (active threads x the constant trip counts around each access x the
     element size; an upper bound, caches not counted), and the total over
     the step against the minimum the step needs (every argument read once,
     every result written once); then the same with each buffer's bytes
     counted at most once a launch (a lower bound: a cache that keeps what a
     kernel reads again, such as a bias or a row's statistics that every
     thread of the row loads).

Prints the counts it found (contractions, GEMM calls and the GEMM library
calls they make, launches, grids,
the largest thread loops, synchronisations), one line per violation, and
exits 1 if there is any violation, 0 otherwise.
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_invariants import split_top  # noqa: E402

CONTRACTION_OPS = (
    "tosa.matmul", "linalg.matmul", "linalg.batch_matmul", "linalg.matmul_transpose_a",
    "linalg.matmul_transpose_b", "linalg.batch_matmul_transpose_a",
    "linalg.batch_matmul_transpose_b", "linalg.batch_reduce_matmul", "linalg.contract",
    "linalg.matvec", "linalg.vecmat", "linalg.batch_matvec", "linalg.dot",
)


# The ops of a body a GEMM call computes (amp::isGemmContraction): the
# inputs, each widened or not, multiplied and added to the accumulator.
GEMM_BODY_OPS = {"arith.extf", "arith.extsi", "arith.extui", "arith.mulf", "arith.muli",
                 "arith.addf", "arith.addi"}


def count_input_contractions(text):
    """Named contractions plus linalg.generic ops with a reduction iterator
    whose region multiplies its two inputs and adds into the output, with
    nothing else than exact widenings of the inputs (a fused negation or
    any other op makes it a reduction that keeps its loops, as in
    amp::isGemmContraction)."""
    named = {}
    for op in CONTRACTION_OPS:
        n = len(re.findall(r"(?:^|[\s=])\"?" + re.escape(op) + r"\"?[\s({<]", text, re.M))
        if n:
            named[op] = n
    generic = 0
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if "linalg.generic" not in line:
            continue
        header = line
        j = i
        while "^bb0" not in header and j + 1 < len(lines) and j < i + 6:
            j += 1
            header += lines[j]
        if '"reduction"' not in header and "reduction>" not in header:
            continue
        ins = re.search(r"ins\(([^:)]*)", header)
        if not ins or len([v for v in ins.group(1).split(",") if v.strip()]) != 2:
            continue
        body = []
        k = j + 1
        while k < len(lines) and "linalg.yield" not in lines[k]:
            body.append(lines[k])
            k += 1
        ops = re.findall(r"=\s*([a-z_]+\.[a-z_0-9.]+)", "\n".join(body))
        if (sum(op in ("arith.mulf", "arith.muli") for op in ops) == 1
                and sum(op in ("arith.addf", "arith.addi") for op in ops) == 1
                and set(ops) <= GEMM_BODY_OPS):
            generic += 1
    return named, generic


def parse_constants(lines):
    consts = {}
    for line in lines:
        m = re.match(r"\s*(%[\w.$-]+) = arith\.constant (-?\d+) : (index|i32|i64)\b", line)
        if m:
            consts[m.group(1)] = int(m.group(2))
    return consts


def split_functions(text):
    """(kind, name, lines) for every func.func (host) and gpu.func (kernel),
    using brace depth to find where each ends."""
    out = []
    lines = text.splitlines()
    i = 0
    module = None
    while i < len(lines):
        line = lines[i]
        mm = re.match(r"\s*gpu\.module @([\w$.-]+)", line)
        if mm:
            module = mm.group(1)
        m = re.match(r"\s*(func\.func|gpu\.func|llvm\.func)\s+(?:private\s+|public\s+)?@([\w$.-]+)",
                     line)
        if m and line.count("{") > line.count("}"):
            depth = 0
            body = []
            j = i
            while j < len(lines):
                depth += lines[j].count("{") - lines[j].count("}")
                body.append(lines[j])
                if depth <= 0:
                    break
                j += 1
            kind = "kernel" if m.group(1) == "gpu.func" else "host"
            name = f"{module}::{m.group(2)}" if kind == "kernel" else m.group(2)
            out.append((kind, name, body))
            i = j + 1
            continue
        i += 1
    return out


def loop_work(body, consts):
    """Largest product of constant scf.for trip counts along a nest, and the
    loops whose bounds are not constants."""
    best = 1
    unknown = []
    stack = []  # (depth at which the loop's region closes, product so far)
    depth = 0
    for line in body:
        while stack and depth < stack[-1][0]:
            stack.pop()
        m = re.search(r"scf\.for (%[\w.$-]+) = (%[\w.$-]+) to (%[\w.$-]+) step (%[\w.$-]+)", line)
        opened = line.count("{") - line.count("}")
        if m:
            lb, ub, st = (consts.get(v) for v in m.group(2, 3, 4))
            outer = stack[-1][1] if stack else 1
            if None in (lb, ub, st) or st <= 0:
                unknown.append(line.strip()[:100])
                trips = 1
            else:
                trips = max(0, -(-(ub - lb) // st))
            product = outer * trips
            best = max(best, product)
            stack.append((depth + 1, product))
        depth += opened
    return best, unknown


# --------------------------------------------------------------------------- coalescing

SHAPE = re.compile(r"memref<((?:\d+x)*)([a-z0-9]+)(?:,\s*strided<\[([^\]]*)\](?:,\s*offset:\s*[^>]+)?>)?")
ELEMENT_BYTES = {"f32": 4, "i32": 4, "f16": 2, "bf16": 2, "i64": 8, "f64": 8, "i8": 1, "i1": 1, "index": 8}


def memref_layout(type_text):
    """(shape, strides in elements, element bytes) of a memref type; None if dynamic."""
    m = SHAPE.search(type_text)
    if not m:
        return None
    dims = [int(d) for d in m.group(1).split("x") if d]
    if m.group(3):
        strides = [s.strip() for s in m.group(3).split(",") if s.strip()]
        if any(not s.lstrip("-").isdigit() for s in strides):
            return None
        strides = [int(s) for s in strides]
    else:
        strides, acc = [], 1
        for d in reversed(dims):
            strides.insert(0, acc)
            acc *= d
    return dims, strides, ELEMENT_BYTES.get(m.group(2), 4)


def parse_affine_maps(text):
    """{#mapN: (dims, syms, python expression)} of the module's affine_map aliases."""
    maps = {}
    for m in re.finditer(r"^(#[\w]+) = affine_map<\(([^)]*)\)(?:\[([^\]]*)\])? -> \((.*)\)>", text, re.M):
        dims = [d.strip() for d in m.group(2).split(",") if d.strip()]
        syms = [d.strip() for d in (m.group(3) or "").split(",") if d.strip()]
        expr = m.group(4)
        if "," in expr:  # multi-result maps are not index computations
            continue
        expr = expr.replace("floordiv", "//").replace(" mod ", " % ")
        if "ceildiv" in expr:
            continue
        maps[m.group(1)] = (dims, syms, expr)
    return maps


BINARY = {
    "arith.addi": lambda a, b: a + b, "arith.subi": lambda a, b: a - b,
    "arith.muli": lambda a, b: a * b,
    "arith.divsi": lambda a, b: int(a / b) if b else None, "arith.divui": lambda a, b: a // b if b else None,
    "arith.remsi": lambda a, b: (a - int(a / b) * b) if b else None,
    "arith.remui": lambda a, b: a % b if b else None,
    "arith.minsi": min, "arith.minui": min, "arith.maxsi": max, "arith.maxui": max,
    "arith.floordivsi": lambda a, b: a // b if b else None,
}


def evaluate_kernel(body, consts, maps, thread):
    """Integer values of the kernel's SSA names for thread x = `thread` of block 0, every loop at
    its lower bound; names that do not evaluate are missing."""
    env = dict(consts)
    for line in body:
        m = re.match(r"\s*(%[\w.$-]+) = (gpu\.(?:thread_id|block_id|block_dim|grid_dim))\s+([xyz])", line)
        if m:
            env[m.group(1)] = (thread if m.group(3) == "x" else 0) if m.group(2) == "gpu.thread_id" else \
                (0 if m.group(2) == "gpu.block_id" else None)
            if env[m.group(1)] is None:
                del env[m.group(1)]
            continue
        m = re.match(r"\s*(?:%[\w.$:-]+ = )?scf\.for (%[\w.$-]+) = (%[\w.$-]+) to", line)
        if m:
            env[m.group(1)] = env.get(m.group(2), 0)
            continue
        m = re.match(r"\s*(%[\w.$-]+) = arith\.constant (-?\d+) : (?:index|i\d+)", line)
        if m:
            env[m.group(1)] = int(m.group(2))
            continue
        m = re.match(r"\s*(%[\w.$-]+) = (arith\.\w+) (%[\w.$-]+), (%[\w.$-]+) : ", line)
        if m and m.group(2) in BINARY and m.group(3) in env and m.group(4) in env:
            v = BINARY[m.group(2)](env[m.group(3)], env[m.group(4)])
            if v is not None:
                env[m.group(1)] = v
            continue
        m = re.match(r"\s*(%[\w.$-]+) = arith\.index_cast (%[\w.$-]+)", line)
        if m and m.group(2) in env:
            env[m.group(1)] = env[m.group(2)]
            continue
        m = re.match(r"\s*(%[\w.$-]+) = affine\.apply (#\w+)\(([^)]*)\)(?:\[([^\]]*)\])?", line)
        if m and m.group(2) in maps:
            dims, syms, expr = maps[m.group(2)]
            dvals = [v.strip() for v in m.group(3).split(",") if v.strip()]
            svals = [v.strip() for v in (m.group(4) or "").split(",") if v.strip()]
            if all(v in env for v in dvals + svals):
                scope = {n: env[v] for n, v in zip(dims + syms, dvals + svals)}
                try:
                    env[m.group(1)] = int(eval(expr, {"__builtins__": {}}, scope))  # noqa: S307
                except Exception:  # noqa: BLE001 (an expression this evaluator does not know)
                    pass
    return env


def data_derived(body):
    """The kernel's SSA names whose values depend on data it loads (a `memref.load` / `vector.load`
    result and every value computed from one): indices among them make a gather, whose addresses
    no evaluation from the thread's position can give."""
    derived = set()
    for line in body:
        m = re.match(r"\s*(%[\w.$-]+)(?::\d+)? = ([\w.]+)(.*)", line)
        if not m:
            continue
        name, op, rest = m.groups()
        if op in ("memref.load", "vector.load") or any(v in derived for v in re.findall(r"%[\w.$-]+", rest)):
            derived.add(name)
    return derived


def sector_use(envs, idx, type_text, lanes):
    """The fraction of the bytes in the 32-byte sectors that one warp's access touches which it uses:
    threads 0-31 of block 0 (`envs`, one environment each), each accessing `lanes` elements from
    the address its indices `idx` give in the memref type `type_text` (its offset included; the
    buffer's base 32-byte aligned, as allocations are). None if an index does not evaluate."""
    shape, strides, size = memref_layout(type_text)
    off = re.search(r"offset: (\d+)", type_text)
    base = int(off.group(1)) if off else 0
    used, sectors = set(), set()
    for env in envs:
        if not all(v in env for v in idx):
            return None
        start = (base + sum(env[v] * st for v, st in zip(idx, strides))) * size
        used.update(range(start, start + lanes * size))
        sectors.update(range(start // 32, (start + lanes * size - 1) // 32 + 1))
    return len(used) / (32 * len(sectors)) if sectors else None


def depends_on(body, name, roots):
    """True when SSA value `name` of the kernel `body` is computed from one of `roots` (through the
    operands of the ops that define it, transitively)."""
    defs = {}
    for line in body:
        m = re.match(r"\s*(%[\w.$-]+) = (.*)$", line)
        if m:
            defs[m.group(1)] = re.findall(r"%[\w.$-]+", m.group(2))
    seen, todo = set(), [name]
    while todo:
        v = todo.pop()
        if v in roots:
            return True
        if v not in seen:
            seen.add(v)
            todo.extend(defs.get(v, []))
    return False


def kernel_accesses(body):
    """(kind, buffer, indices, memref type, enclosing loop lines, lanes) of every load and store
    (lanes: the elements a vector.load / vector.store moves from its index on, 1 for memref's).
    The else branch of an `scf.if` whose then branch accesses a buffer in vectors does not count
    its accesses to that buffer: amp-gpu-vectorize-elementwise's fallback for a base that is not
    aligned at run time (the same elements lane by lane; the branch is uniform across a launch)."""
    out = []
    depth_loops = []  # (depth at which the loop closes, line)
    ifs = []  # [depth at which the if closes, in its else branch, buffers its then branch vectorises]
    depth = 0
    for line in body:
        while depth_loops and depth < depth_loops[-1][0]:
            depth_loops.pop()
        while ifs and depth < ifs[-1][0]:
            ifs.pop()
        if ifs and depth == ifs[-1][0] and re.match(r"\s*\} else \{", line):
            ifs[-1][1] = True
        m = re.search(r"(memref|vector)\.(load|store) (?:[^,\[]+, )?(%[\w.$-]+)\[([^\]]*)\]"
                      r"(?: \{[^}]*\})? : (memref<[^>]*(?:<[^>]*>)?[^>]*>)>?(?:, vector<(\d+)x)?", line)
        if m:
            idx = [v.strip() for v in m.group(4).split(",") if v.strip()]
            lanes = int(m.group(6)) if m.group(1) == "vector" and m.group(6) else 1
            if any(in_else and m.group(3) in vectorised for _, in_else, vectorised in ifs):
                pass  # the lane-by-lane fallback of a vector access
            else:
                out.append((m.group(2), m.group(3), idx, m.group(5), [l for _, l in depth_loops], lanes))
                if lanes > 1 and ifs and not ifs[-1][1]:
                    ifs[-1][2].add(m.group(3))
        if re.search(r"scf\.for ", line):
            depth_loops.append((depth + 1, line))
        if re.search(r"scf\.if ", line) and line.rstrip().endswith("{"):
            ifs.append([depth + 1, False, set()])
        depth += line.count("{") - line.count("}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input")
    ap.add_argument("lowered")
    ap.add_argument("--max-thread-work", type=int, default=65536)
    ap.add_argument("--max-block-work", type=int, default=65536)
    ap.add_argument("--name", default="")
    ap.add_argument("--allow-strided", action="append", default=[],
                    help="a kernel (name or module::name) whose largest buffer may be accessed with a "
                         "stride > 1 in the fastest thread index (a documented exception)")
    ap.add_argument("--max-row-walk", type=int, default=128,
                    help="longest row one thread may walk alone when a kernel has --row-walk-threads "
                         "threads or more (amp-gpu-split-reductions' row-partials splits longer ones)")
    ap.add_argument("--row-walk-threads", type=int, default=16384)
    ap.add_argument("--min-sector-use", type=float, default=0.5,
                    help="a strided access whose warp (threads 0-31 of block 0) uses at least this "
                         "fraction of the bytes of the 32-byte sectors it touches is coalesced enough "
                         "(a slice of each row); below it, a violation unless an exception applies")
    ap.add_argument("--traffic", action="store_true",
                    help="print the bytes each kernel reads and writes")
    args = ap.parse_args()
    # Comments (// ...) do not count.
    src = "\n".join(re.sub(r"//.*$", "", l) for l in open(args.input).read().splitlines())
    low = open(args.lowered).read()
    tag = f"[{args.name}] " if args.name else ""
    violations = []

    # 1. Contractions -> GEMM calls.
    named, generic = count_input_contractions(src)
    contractions = sum(named.values()) + generic
    calls = re.findall(r"call @amp_rt_gemm(?:_ex|_out|_nested)?\(.*$", low, re.M)
    gemm_calls = len(calls)
    per_contraction = {}
    for c in calls:
        m = re.search(r"amp\.contraction = (\d+)", c)
        key = m.group(1) if m else None
        per_contraction[key] = per_contraction.get(key, 0) + 1
    unnumbered = per_contraction.pop(None, 0)
    if unnumbered:
        violations.append(f"{unnumbered} GEMM call(s) without amp.contraction")
    detail = [f"{k} {v}" for k, v in sorted(named.items())]
    if generic:
        detail.append(f"linalg.generic {generic}")
    print(f"{tag}contractions in the input: {contractions} ({', '.join(detail)})")
    print(f"{tag}GEMM calls: {gemm_calls}")
    most = max(per_contraction.values(), default=0)
    print(f"{tag}lowered contractions: {len(per_contraction)}, most GEMM calls for one: {most}")
    # amp_rt_gemm_nested makes min(outer, batch) library calls (the runtime
    # loops over the shorter batch level, NestedGemmLevels in runtime/lib/
    # Common.h); its outer and batch are arguments 19 and 20.
    library_calls, unknown = 0, 0
    for c in calls:
        if not c.startswith("call @amp_rt_gemm_nested("):
            library_calls += 1
            continue
        operands = c[len("call @amp_rt_gemm_nested("):].split(")")[0].split(",")
        sizes = [re.fullmatch(r"\s*%c(\d+)_i64(?:_\d+)?\s*", a) for a in operands[18:20]]
        if len(operands) != 23 or not all(sizes):
            unknown += 1
            continue
        library_calls += min(int(m.group(1)) for m in sizes)
    print(f"{tag}GEMM library calls a step: {library_calls}"
          + (f" (+ {unknown} nested call(s) of unknown size)" if unknown else ""))
    for key, n in sorted(per_contraction.items(), key=lambda kv: int(kv[0])):
        if n > 1:
            violations.append(f"contraction {key} takes {n} GEMM calls (expected 1)")
    if gemm_calls < contractions:
        violations.append(f"{contractions - gemm_calls} contraction(s) not lowered to a GEMM call")
    if contractions == 0 and gemm_calls == 0:
        print(f"{tag}(no contraction)")

    funcs = split_functions(low)
    kernels = {n: b for k, n, b in funcs if k == "kernel"}
    hosts = [(n, b) for k, n, b in funcs if k == "host"]

    # 2. Thread work per launch (kernel loop bounds may be kernel arguments:
    # the constants the launch passes); 3. grids; 4. synchronisations.
    kernel_params = {}
    for name, body in kernels.items():
        m = re.search(r"gpu\.func @[\w$.-]+\((.*?)\)\s*(?:kernel|attributes|\{)", body[0])
        params = []
        if m:
            params = [p.split(":")[0].strip() for p in split_top(m.group(1))]
        kernel_params[name] = params
    kernel_work = {}
    launches = 0
    grids = {}
    single_block = 0
    syncs_total = 0
    steps = 0
    reported_unknown = set()
    biggest_single = 0
    maps = parse_affine_maps(low)
    traffic = {}  # kernel -> [bytes read, bytes written]
    unique = {}  # kernel -> the same, each buffer's bytes at most once a launch
    strided = {}  # kernel -> description of a strided access to its largest buffer
    unevaluated = set()
    gathers = set()  # kernels whose largest buffer is read at indices loaded from data
    derived_names = {}  # kernel -> its SSA names that depend on loaded data
    partial_rows = set()  # kernels whose strided accesses still use half of the sectors' bytes a warp touches
    row_walks = set()
    long_row_walks = {}  # kernel -> (threads, row length)
    windows = set()
    transposes = set()
    minimum = 0
    for name, body in hosts:
        consts = parse_constants(body)
        launch_lines = [l for l in body if "gpu.launch_func" in l]
        syncs = [l for l in body if re.match(r"\s*gpu\.wait\b", l) and "async" not in l]
        if not launch_lines and not syncs:
            continue
        steps += 1
        syncs_total += len(syncs)
        header = re.search(r"func\.func (?:public |private )?@[\w$.-]+\((.*?)\)\s*(?:attributes|\{)", body[0])
        for arg in split_top(header.group(1)) if header else []:
            layout = memref_layout(arg)
            if layout:
                n = 1
                for d in layout[0]:
                    n *= d
                minimum += n * layout[2]
        if len(syncs) != 1:
            violations.append(f"host function @{name}: {len(syncs)} stream synchronisations "
                              f"(expected exactly 1)")
        for l in launch_lines:
            launches += 1
            m = re.search(r"gpu\.launch_func\s+(?:async\s+)?(?:\[[^\]]*\]\s*)?@([\w$.-]+)::@([\w$.-]+)\s+"
                          r"blocks in \(([^)]*)\) threads in \(([^)]*)\)", l)
            if not m:
                violations.append(f"host function @{name}: unparsed launch: {l.strip()[:120]}")
                continue
            kname = f"{m.group(1)}::{m.group(2)}"
            grid = tuple(consts.get(v.strip()) for v in m.group(3).split(","))
            block = tuple(consts.get(v.strip()) for v in m.group(4).split(","))
            args_m = re.search(r"args\((.*)\)\s*$", l)
            values = [a.split(" : ")[0].strip() for a in split_top(args_m.group(1))] if args_m else []
            kconsts = dict(parse_constants(kernels.get(kname, [])))
            for param, value in zip(kernel_params.get(kname, []), values):
                if value in consts:
                    kconsts[param] = consts[value]
            work, unknown = loop_work(kernels.get(kname, []), kconsts)
            kernel_work[kname] = max(kernel_work.get(kname, 1), work)
            for u in unknown:
                if kname not in reported_unknown:
                    reported_unknown.add(kname)
                    violations.append(f"kernel {kname}: loop with non-constant bounds: {u}")
            if work > args.max_thread_work:
                violations.append(f"kernel {kname}: a thread walks {work} elements "
                                  f"(> {args.max_thread_work})")
            if None in grid or None in block:
                violations.append(f"launch of {kname}: non-constant grid {grid} / block {block}")
                continue
            grids[grid] = grids.get(grid, 0) + 1
            # 6. Coalescing and traffic: index expressions at threads 0 and 1.
            kbody = kernels.get(kname, [])
            env0 = evaluate_kernel(kbody, kconsts, maps, 0)
            env1 = evaluate_kernel(kbody, kconsts, maps, 1)
            warp_envs = []  # threads 0-31, evaluated when an access needs them
            total_threads = grid[0] * grid[1] * grid[2] * block[0] * block[1] * block[2]
            active = total_threads
            for g in re.finditer(r"arith\.cmpi (?:ult|slt), (%[\w.$-]+), (%[\w.$-]+)", "\n".join(kbody)):
                a, b = g.group(1), g.group(2)
                if a in env0 and a in env1 and env1[a] == env0[a] + 1 and b in env0:
                    active = min(active, max(env0[b] - env0[a], 0))
                    break
            accesses = kernel_accesses(kbody)
            sizes = {}
            for kind, buf, idx, mtype, loops, lanes in accesses:
                layout = memref_layout(mtype)
                if layout:
                    n = 1
                    for d in layout[0]:
                        n *= d
                    sizes[buf] = n * layout[2]
            largest = max(sizes.values(), default=0)
            rw = traffic.setdefault(kname, [0, 0])
            per_buffer = {}  # (load/store, buffer) -> bytes issued in this launch
            for kind, buf, idx, mtype, loops, lanes in accesses:
                layout = memref_layout(mtype)
                if not layout:
                    continue
                trips = 1
                for loop in loops:
                    lm = re.search(r"= (%[\w.$-]+) to (%[\w.$-]+) step (%[\w.$-]+)", loop)
                    if lm and all(v in kconsts for v in lm.groups()) and kconsts[lm.group(3)] > 0:
                        trips *= max(0, -(-(kconsts[lm.group(2)] - kconsts[lm.group(1)]) // kconsts[lm.group(3)]))
                rw[0 if kind == "load" else 1] += active * trips * lanes * layout[2]
                key = (kind, buf)
                per_buffer[key] = per_buffer.get(key, 0) + active * trips * lanes * layout[2]
                # Small buffers (under 64 KiB: a few transactions whatever the order) do not count.
                if sizes.get(buf) != largest or largest < 65536:
                    continue
                if not all(v in env0 and v in env1 for v in idx):
                    if kname not in derived_names:
                        derived_names[kname] = data_derived(kbody)
                    missing = [v for v in idx if not (v in env0 and v in env1)]
                    (gathers if any(v in derived_names[kname] for v in missing) else unevaluated).add(kname)
                    continue
                a0 = sum(env0[v] * st for v, st in zip(idx, layout[1]))
                a1 = sum(env1[v] * st for v, st in zip(idx, layout[1]))
                short = kname.split("::")[-1]
                # Neighbouring threads on neighbouring elements, or on neighbouring vectors.
                if a1 - a0 in (0, 1, lanes) or kname in args.allow_strided or short in args.allow_strided:
                    continue
                # Neighbouring threads on runs of neighbouring elements with gaps between them (a
                # slice of each row: the second half that rotary embeddings negate, 8 f16 lanes a
                # thread, rows of 16; a transpose whose rows are 8 f32 long): coalesced enough if
                # the warp uses at least --min-sector-use of the bytes of the 32-byte sectors it
                # touches.
                if not warp_envs:
                    warp_envs = [env0, env1] + [evaluate_kernel(kbody, kconsts, maps, t) for t in range(2, 32)]
                use = sector_use(warp_envs[:max(2, min(32, active))], idx, mtype, lanes)
                if use is not None and use >= args.min_sector_use:
                    partial_rows.add(kname)
                    continue
                # The documented exception: a thread that walks the unit-stride dimension itself
                # (its own loop indexes it: a reduction along the rows, one thread per row).
                # Neighbouring threads read neighbouring rows. amp-gpu-split-reductions splits
                # the long rows of many-output reductions into interleaved partials; what is
                # left walks short rows (under 128 elements, a combining stage's 32 partials).
                unit = [v for v, st in zip(idx, layout[1]) if st == 1]
                loop_ivs = {re.search(r"scf\.for (%[\w.$-]+)", l).group(1): l for l in loops}
                if unit and unit[0] in loop_ivs:
                    row_walks.add(kname)
                    # Long rows with threads enough are what the split coalesces: left as
                    # a row walk, they are a violation.
                    lm = re.search(r"= (%[\w.$-]+) to (%[\w.$-]+) step (%[\w.$-]+)", loop_ivs[unit[0]])
                    row = kconsts.get(lm.group(2), 0) - kconsts.get(lm.group(1), 0) if lm else 0
                    if row >= args.max_row_walk and active >= args.row_walk_threads:
                        long_row_walks.setdefault(kname, (active, row))
                    continue
                # The third exception: a strided window's load (a pooling or convolution
                # window of stride 2 to 4: neighbouring outputs read every s-th input element,
                # the unit-stride index built from a window loop's variable and the thread's).
                if 2 <= a1 - a0 <= 4 and unit and depends_on(kbody, unit[0], set(loop_ivs)):
                    windows.add(kname)
                    continue
                # The second exception: a transpose copy (one load, one store, the other side
                # unit-stride): one side of a transpose is strided unless it is tiled through
                # shared memory. Elementwise work fused into it counts too where its other
                # operands are small (under 64 KiB: a per-channel scale or bias broadcast
                # along the transposed dimensions).
                opposite = [a for a in accesses if a[0] != kind]
                same = [a for a in accesses if a[0] == kind]
                # (The strided side one element a thread: a vector access strided across
                # threads reads a slice of each row, not a permutation.)
                if lanes == 1 and len(opposite) == 1 and \
                        sum(sizes.get(a[1], 0) >= 65536 for a in same) == 1:
                    other = opposite[0]
                    olayout = memref_layout(other[3])
                    if olayout and all(v in env0 and v in env1 for v in other[2]):
                        o0 = sum(env0[v] * st for v, st in zip(other[2], olayout[1]))
                        o1 = sum(env1[v] * st for v, st in zip(other[2], olayout[1]))
                        # The other side unit-stride, or partly coalesced (a transpose that
                        # writes every other element of a strided gradient's dilated buffer).
                        ouse = sector_use(warp_envs[:max(2, min(32, active))], other[2], other[3],
                                          other[5])
                        if o1 - o0 in (1, other[5]) or (ouse is not None and ouse >= args.min_sector_use):
                            transposes.add(kname)
                            continue
                strided.setdefault(kname, f"{kind} {mtype} with stride {a1 - a0} in the fastest thread index"
                                   + (f" (a warp uses {use:.0%} of the bytes of the 32-byte sectors it touches)"
                                      if use is not None else ""))
            # The same with each buffer's bytes at most once a launch (a cache that
            # keeps what the kernel reads again: a bias, a row's statistics): a lower
            # bound where the issued count above is the upper one.
            ur = unique.setdefault(kname, [0, 0])
            for (kind, buf), issued in per_buffer.items():
                ur[0 if kind == "load" else 1] += min(issued, sizes.get(buf, issued))
            # CUDA launch limits: grid x < 2^31, y and z <= 65535, 1024
            # threads per block.
            if grid[0] >= 2 ** 31 or grid[1] > 65535 or grid[2] > 65535 or \
                    block[0] * block[1] * block[2] > 1024:
                violations.append(f"launch of {kname}: grid {grid} / block {block} exceeds "
                                  f"CUDA's launch limits")
            if grid == (1, 1, 1):
                single_block += 1
                # Active threads: a bounds guard `thread_id < N` (the
                # parallel loop's extent) limits a tiled block.
                active = list(block)
                kbody = "\n".join(kernels.get(kname, []))
                for i, axis in enumerate("xyz"):
                    g = re.search(r"arith\.cmpi (?:ult|slt), %thread_id_" + axis + r", (%[\w.$-]+)",
                                  kbody)
                    if g and g.group(1) in kconsts:
                        active[i] = min(active[i], kconsts[g.group(1)])
                threads = active[0] * active[1] * active[2]
                covered = threads * work
                biggest_single = max(biggest_single, covered)
                if covered > args.max_block_work:
                    violations.append(f"launch of {kname}: a single block of {threads} active "
                                      f"threads covers {covered} elements (> {args.max_block_work})")
                biggest_single = max(biggest_single, covered)
    top = sorted(kernel_work.items(), key=lambda kv: -kv[1])[:3]
    print(f"{tag}kernels: {len(kernels)}, launches: {launches}, single-block launches: "
          f"{single_block} (largest covers {biggest_single} elements)")
    print(f"{tag}grids: " + ", ".join(f"{g[0]}x{g[1]}x{g[2]}: {n}"
                                      for g, n in sorted(grids.items(), key=lambda kv: -kv[1])))
    print(f"{tag}largest thread work: " + ", ".join(f"{w} ({k.split('::')[-1]})" for k, w in top))
    print(f"{tag}step functions: {steps}, blocking synchronisations: {syncs_total}")
    read = sum(v[0] for v in traffic.values())
    written = sum(v[1] for v in traffic.values())
    ratio = (read + written) / minimum if minimum else 0.0
    print(f"{tag}coalescing: {len(strided)} kernel(s) with a strided access to their largest buffer, "
          f"{len(row_walks - set(strided))} walking rows (one thread per row), "
          f"{len(windows - set(strided))} strided windows and "
          f"{len(transposes - set(strided))} transposes (documented exceptions), "
          f"{len(gathers - unevaluated)} gathers (indices read from data), "
          f"{len(unevaluated)} not evaluated, "
          f"{len(partial_rows - set(strided))} partly coalesced "
          f"(a warp using at least {args.min_sector_use:.0%} of the bytes of its sectors)")
    print(f"{tag}traffic: kernels read {read / 1e6:.1f} MB and write {written / 1e6:.1f} MB; arguments and "
          f"results {minimum / 1e6:.1f} MB; ratio {ratio:.1f}")
    print(f"{tag}traffic, each buffer once a launch: kernels read "
          f"{sum(v[0] for v in unique.values()) / 1e6:.1f} MB and write "
          f"{sum(v[1] for v in unique.values()) / 1e6:.1f} MB")
    if args.traffic:
        for k, (r, w) in sorted(traffic.items(), key=lambda kv: -(kv[1][0] + kv[1][1])):
            print(f"{tag}  {k.split('::')[-1]}: read {r} B, write {w} B"
                  f" (each buffer once: {unique.get(k, [0, 0])[0]} B, {unique.get(k, [0, 0])[1]} B)"
                  + (f", {strided[k]}" if k in strided else "")
                  + (", walks rows" if k in row_walks else "")
                  + (", transpose" if k in transposes else ""))
    for k, what in sorted(strided.items()):
        violations.append(f"kernel {k}: uncoalesced {what}")
    for k, (threads, row) in sorted(long_row_walks.items()):
        if k not in strided:
            violations.append(f"kernel {k}: each of {threads} threads walks its own row of {row} elements "
                              f"(uncoalesced; amp-gpu-split-reductions' row-partials splits such rows)")
    if steps == 0:
        violations.append("no host function launches a kernel")
    for v in violations:
        print(f"{tag}VIOLATION: {v}")
    print(f"{tag}gpu structure: {len(violations)} violation(s)")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
