"""Prints, for each entry of a JIT cache directory (lib/amp/Runner/JitCache.cpp:
the objects, each after its 8-byte little-endian size, then the trailer
"AMPJIT02", the size of the objects part and its xxh3), how many objects it
holds and whether each is an ELF object."""

import os
import struct
import sys

TRAILER = 24

for name in sorted(os.listdir(sys.argv[1])):
    data = open(os.path.join(sys.argv[1], name), "rb").read()
    magic, size, _ = struct.unpack("<8sQQ", data[-TRAILER:])
    assert magic == b"AMPJIT02" and size == len(data) - TRAILER, name
    payload, objects = data[:-TRAILER], []
    while payload:
        (length,) = struct.unpack("<Q", payload[:8])
        objects.append(payload[8 : 8 + length])
        payload = payload[8 + length :]
    elf = all(o.startswith(b"\x7fELF") for o in objects)
    print(f"entry: {len(objects)} objects, elf: {elf}")
