#!/usr/bin/env python3
"""Checks that the libraries of lib/ form a DAG and that every include respects it.

Reads every `amp_add_library(NAME sources... [DEPENDS ...] [LINK_LIBS ...])` under lib/, and:

1. the LINK_LIBS graph between the project's libraries has no cycle;
2. every `#include "amp/..."` in a library's sources, its private headers next to them and its
   public headers (include/<its folder>/*.h) names a header of the library itself or of one it links, directly or not. A header belongs to
   the library whose folder mirrors it (include/amp/Policy/Policy.h -> lib/amp/Policy); umbrella
   headers with no library folder of their own (include/amp/Conversion/Passes.h) are skipped.

An include of a library the includer does not link is how a circle starts (AmpIR including
Policy.h while AmpPolicy links AmpIR), so the check fails on the first one. Prints one line per
violation and exits 1, or prints `layering: N libraries, M includes checked, ok`.

Usage: check_layering.py SOURCE_ROOT
"""
import pathlib
import re
import sys

LIBRARY = re.compile(r"amp_add_library\(\s*(\w+)(.*?)\)", re.S)
INCLUDE = re.compile(r'^\s*#\s*include\s+"(amp/[^"]+)"', re.M)


def read_libraries(root):
    """{name: (folder relative to lib/, [source files], [linked project libraries])}."""
    libraries = {}
    for cmake in sorted((root / "lib").rglob("CMakeLists.txt")):
        for match in LIBRARY.finditer(cmake.read_text()):
            name, rest = match.group(1), match.group(2).split()
            sources, links, mode = [], [], "sources"
            for word in rest:
                if word in ("DEPENDS", "LINK_LIBS"):
                    mode = word
                elif mode == "sources":
                    sources.append(cmake.parent / word)
                elif mode == "LINK_LIBS":
                    links.append(word)
            libraries[name] = (cmake.parent.relative_to(root / "lib"), sources, links)
    names = set(libraries)
    return {n: (folder, srcs, [l for l in links if l in names])
            for n, (folder, srcs, links) in libraries.items()}


def find_cycle(libraries):
    """A list of libraries that link each other in a circle, or None."""
    state, stack = {}, []

    def visit(name):
        state[name] = "open"
        stack.append(name)
        for dep in libraries[name][2]:
            if state.get(dep) == "open":
                return stack[stack.index(dep):] + [dep]
            if dep not in state:
                cycle = visit(dep)
                if cycle:
                    return cycle
        state[name] = "done"
        stack.pop()
        return None

    for name in sorted(libraries):
        if name not in state:
            cycle = visit(name)
            if cycle:
                return cycle
    return None


def closure(libraries, name):
    seen, todo = {name}, [name]
    while todo:
        for dep in libraries[todo.pop()][2]:
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen


def owner(libraries, header):
    """The library whose folder mirrors include/<header>, the deepest one; None for an umbrella."""
    folder = pathlib.PurePosixPath(header).parent
    best = None
    for name, (lib_folder, _, _) in libraries.items():
        lib_folder = pathlib.PurePosixPath(lib_folder.as_posix())
        if folder == lib_folder or lib_folder in folder.parents:
            if best is None or len(lib_folder.parts) > len(libraries[best][0].parts):
                best = name
    return best


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    libraries = read_libraries(root)
    problems = []
    cycle = find_cycle(libraries)
    if cycle:
        problems.append("layering: the libraries link each other in a circle: " + " -> ".join(cycle))
    checked = 0
    for name, (folder, sources, _) in sorted(libraries.items()):
        allowed = closure(libraries, name)
        files = (set(sources) | set((root / "lib" / folder).glob("*.h")) |
                 set((root / "include" / folder).glob("*.h")))
        for path in sorted(files):
            if not path.exists():
                continue
            for header in INCLUDE.findall(path.read_text()):
                lib = owner(libraries, header)
                checked += 1
                if lib is not None and lib not in allowed:
                    problems.append(f"layering: {path.relative_to(root)} ({name}) includes {header} "
                                    f"of {lib}, which {name} does not link")
    for line in problems:
        print(line)
    if problems:
        return 1
    print(f"layering: {len(libraries)} libraries, {checked} includes checked, ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
