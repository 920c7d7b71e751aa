"""Prints, for each entry of a JIT cache directory (lib/amp/Runner/JitCache.cpp:
the objects, each after its 8-byte little-endian size, then the trailer
"AMPJIT02", the size of the objects part and its xxh3), how many objects it
holds and whether each is an ELF object; with --code-relocations, also how
many relocations of the objects' code write a 64-bit address or offset: the
large code model's calls and addresses (R_X86_64_64 without PIC, GOT64 /
GOTOFF64 / GOTPC64 / PLTOFF64 with it; AArch64's ABS64 and MOVW_UABS), none
in the small, position-independent code the runner compiles
(lib/amp/Runner/HostCodegen.cpp)."""

import argparse
import os
import struct

TRAILER = 24
SHT_RELA = 4
SHF_EXECINSTR = 4
# e_machine -> relocation types of 64-bit addresses and offsets in code
WIDE = {62: {1, 24, 25, 27, 28, 29, 30, 31}, 183: {257, *range(263, 270)}}


def wide_code_relocations(obj: bytes) -> int:
    """Relocations of a type in WIDE in the RELA sections of the executable
    sections of the ELF64 little-endian object `obj`."""
    (machine,) = struct.unpack_from("<H", obj, 0x12)
    (shoff,) = struct.unpack_from("<Q", obj, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", obj, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", obj, shoff + i * shentsize) for i in range(shnum)]
    count = 0
    for _, kind, _, _, offset, size, _, info, _, entsize in sections:
        if kind != SHT_RELA or not sections[info][2] & SHF_EXECINSTR:
            continue
        for at in range(offset, offset + size, entsize):
            (_, rinfo, _) = struct.unpack_from("<QQq", obj, at)
            count += (rinfo & 0xFFFFFFFF) in WIDE.get(machine, ())
    return count


parser = argparse.ArgumentParser()
parser.add_argument("cache_dir")
parser.add_argument("--code-relocations", action="store_true")
args = parser.parse_args()
for name in sorted(os.listdir(args.cache_dir)):
    data = open(os.path.join(args.cache_dir, name), "rb").read()
    magic, size, _ = struct.unpack("<8sQQ", data[-TRAILER:])
    assert magic == b"AMPJIT02" and size == len(data) - TRAILER, name
    payload, objects = data[:-TRAILER], []
    while payload:
        (length,) = struct.unpack("<Q", payload[:8])
        objects.append(payload[8 : 8 + length])
        payload = payload[8 + length :]
    elf = all(o.startswith(b"\x7fELF") for o in objects)
    print(f"entry: {len(objects)} objects, elf: {elf}")
    if args.code_relocations:
        print(f"64-bit code relocations: {sum(wide_code_relocations(o) for o in objects)}")
