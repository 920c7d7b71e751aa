#!/usr/bin/env python3
"""Rescales the static shapes of a bundled example for structure-only tests.

usage: scale_example.py FILE OLD=NEW [OLD=NEW ...]

Rewrites every dimension OLD of a `tensor<AxBx...>` type and every entry OLD
of a `dense<[...]>` shape list (tosa.const_shape) to NEW and prints the
result. Only shapes change: constants that depend on a size (1/sqrt(d), 1/N
of a mean) keep their values, so the scaled step is for compiling and
inspecting the lowering, not for training. Example: the transformer block of
examples/transformer_adam.mlir (rows 8, width 16, MLP 32) at the issue-9
benchmark's widths, `8=2048 16=512 32=2048`. Standard library only.
"""
import re
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    mapping = {}
    for pair in sys.argv[2:]:
        old, new = pair.split("=")
        mapping[old] = new
    text = open(sys.argv[1]).read()

    def dims(m):
        parts = m.group(1).split("x")
        return "tensor<" + "x".join(mapping.get(p, p) for p in parts) + "x" + m.group(2) + ">"

    text = re.sub(r"tensor<((?:\d+x)*\d+)x([a-z][a-z0-9]*)>", dims, text)

    def shape(m):
        return "dense<[" + ",".join(mapping.get(v.strip(), v.strip())
                                   for v in m.group(1).split(",")) + "]> : tensor<"

    text = re.sub(r"dense<\[([\d,\s]+)\]> : tensor<", shape, text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
