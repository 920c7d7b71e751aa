#!/usr/bin/env python3
"""Writes a .npy file with the standard library only (struct + the header format).

usage: make_npy.py OUT DESCR SHAPE [VALUES...] [--fortran] [--truncate N] [--iota STEP]
  DESCR   a numpy dtype string: <f4, <i4, <i8, |b1, or any other (to test errors)
  SHAPE   comma-separated dims ("" or "()" for rank 0), e.g. 16,32
  VALUES  the elements in C order; missing ones repeat the last (default 0)
  --fortran     write 'fortran_order': True and the elements in Fortran (column-major) order
  --truncate N  drop the last N bytes of the file
  --iota STEP   the elements 0, STEP, 2 STEP, ... in C order (instead of VALUES)
"""
import struct
import sys

FORMATS = {"<f4": "<f", "<i4": "<i", "<i8": "<q", "|b1": "<?", "<f8": "<d",
           ">f4": ">f", "<f2": "<e"}


def main(argv):
    fortran = "--fortran" in argv
    truncate = 0
    if "--truncate" in argv:
        i = argv.index("--truncate")
        truncate = int(argv[i + 1])
        del argv[i:i + 2]
    iota = None
    if "--iota" in argv:
        i = argv.index("--iota")
        iota = float(argv[i + 1])
        del argv[i:i + 2]
    argv = [a for a in argv if a != "--fortran"]
    out, descr, shape_text = argv[1:4]
    values = argv[4:]
    dims = [int(d) for d in shape_text.strip("()").split(",") if d.strip()]
    count = 1
    for d in dims:
        count *= d
    shape = "(" + ", ".join(map(str, dims)) + ("," if len(dims) == 1 else "") + ")"
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        descr, "True" if fortran else "False", shape)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    fmt = FORMATS[descr]
    conv = float if fmt[1] in "fde" else int
    if fmt[1] == "?":
        conv = lambda v: bool(int(v))
    elems = [conv(v) for v in values] or [conv(0)]
    elems += [elems[-1]] * (count - len(elems))
    if iota is not None:
        elems = [conv(i * iota) for i in range(count)]
    elems = elems[:count]
    if fortran:  # the same array, column-major: the first index moves fastest
        order = [0]
        for k, d in enumerate(dims):
            stride = 1
            for e in dims[k + 1:]:
                stride *= e
            order = [o + i * stride for i in range(d) for o in order]
        elems = [elems[o] for o in order]
    data = b"".join(struct.pack(fmt, v) for v in elems)
    blob = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode()
    blob += data
    if truncate:
        blob = blob[:-truncate]
    with open(out, "wb") as f:
        f.write(blob)


if __name__ == "__main__":
    main(sys.argv)
