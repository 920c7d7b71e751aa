#!/usr/bin/env python3
"""Checks the promises amp-autocast makes about a rewritten training graph.

usage: check_invariants.py ORIGINAL.mlir REWRITTEN.mlir [--precision f16|bf16]

Both files must be in MLIR's generic form (`--mlir-print-op-generic`). Checked:
  1. every tosa.matmul takes low-precision a/b operands and produces f32;
  2. every TOSA convolution takes low-precision input/weight with acc_type = f32;
  3. every exp, log, reciprocal, rsqrt, pow, reduce_sum (TOSA and math) and
     linalg.softmax reads f32 data;
  4. no value is cast twice to the same type (tosa.cast, arith.extf/truncf);
  5. every function signature (types and argument/result attributes) is
     unchanged.
Prints one line per violation and exits 1 if there is any; prints a summary
line "invariants: N ops checked, 0 violations" otherwise.
"""
import re
import sys

OP_RE = re.compile(r'^\s*(?:(%[^=]+?)\s*=\s*)?"([\w.]+)"\((.*?)\)(.*)$')


def split_top(text):
    """Splits a comma-separated list at nesting depth 0."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def signature_of(line):
    """Splits the trailing ': (operand types) -> result types' of a generic op."""
    idx = line.rfind(" : (")
    if idx < 0:
        return None, None
    sig = line[idx + 3:]
    depth = 0
    for i, ch in enumerate(sig):
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
            if depth == 0:
                operands = split_top(sig[1:i])
                rest = sig[i + 1:].strip()
                results = []
                if rest.startswith("->"):
                    rest = rest[2:].strip()
                    if rest.startswith("("):
                        rest = rest[1:rest.rfind(")")]
                    results = split_top(rest)
                return operands, results
    return None, None


def element(type_text):
    m = re.search(r"x?(f16|bf16|f32|f64|i\d+|index)>$", type_text)
    if m:
        return m.group(1)
    m = re.match(r"tensor<(f16|bf16|f32|f64|i\d+)>$", type_text)
    return m.group(1) if m else type_text


def ops(path):
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            m = OP_RE.match(line)
            if not m:
                continue
            operands, results = signature_of(line)
            yield lineno, m.group(2), split_top(m.group(3)), operands or [], results or [], line


def functions(path):
    text = open(path).read()
    sigs = {}
    for m in re.finditer(r'"func\.func"\(\) <\{(.*?)\}> \(\{', text, re.S):
        props = m.group(1)
        name = re.search(r'sym_name = "([^"]+)"', props).group(1)
        sigs[name] = re.sub(r"\s+", " ", props)
    return sigs


def main():
    args = sys.argv[1:]
    low = "f16"
    if "--precision" in args:
        i = args.index("--precision")
        low = args[i + 1]
        del args[i:i + 2]
    if len(args) != 2:
        print(__doc__)
        return 2
    original, rewritten = args
    problems, checked = [], 0
    casts = {}
    for lineno, name, operand_names, operand_types, result_types, line in ops(rewritten):
        where = f"{rewritten}:{lineno}: {name}"
        checked += 1
        if name == "tosa.matmul":
            if [element(t) for t in operand_types[:2]] != [low, low]:
                problems.append(f"{where}: operands {operand_types[:2]} are not {low}")
            if element(result_types[0]) != "f32":
                problems.append(f"{where}: result {result_types[0]} is not f32")
        elif name in ("tosa.conv2d", "tosa.conv3d", "tosa.depthwise_conv2d",
                      "tosa.transpose_conv2d"):
            if [element(t) for t in operand_types[:2]] != [low, low]:
                problems.append(f"{where}: operands {operand_types[:2]} are not {low}")
            if "acc_type = f32" not in line:
                problems.append(f"{where}: acc_type is not f32")
        elif name in ("tosa.exp", "tosa.log", "tosa.reciprocal", "tosa.rsqrt",
                      "tosa.pow", "tosa.reduce_sum", "math.exp", "math.log",
                      "math.rsqrt", "math.powf", "linalg.softmax"):
            for t in operand_types:
                if t.startswith("tensor") and element(t) in ("f16", "bf16"):
                    problems.append(f"{where}: reads {t}, not f32")
        if name in ("tosa.cast", "arith.extf", "arith.truncf") and operand_names:
            key = (operand_names[0], result_types[0] if result_types else "")
            if key in casts:
                problems.append(f"{where}: {key[0]} cast to {key[1]} again "
                                f"(first at line {casts[key]})")
            casts[key] = lineno
    before, after = functions(original), functions(rewritten)
    for name, sig in before.items():
        if after.get(name) != sig:
            problems.append(f"{rewritten}: signature of @{name} changed:\n  before: {sig}\n  after:  {after.get(name)}")
    for p in problems:
        print(p)
    if problems:
        print(f"invariants: {checked} ops checked, {len(problems)} violations")
        return 1
    print(f"invariants: {checked} ops checked, 0 violations")
    return 0


if __name__ == "__main__":
    sys.exit(main())
