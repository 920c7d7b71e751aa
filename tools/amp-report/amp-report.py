#!/usr/bin/env python3
"""Summarises an amp-autocast JSON report (amp-opt --amp-autocast=report=FILE).

usage: amp-report.py REPORT.json [--ops]

Prints TensorFlow's one-line summary ("Converted N/M float ops to f16 using K
casts"), the counts of the summary, and a table of op kinds by precision;
--ops also lists every op with its location and reason.
"""
import collections
import json
import sys


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    path = argv[0]
    try:
        with open(path) as f:
            report = json.load(f)
    except (OSError, ValueError) as e:
        print(f"amp-report: cannot read {path}: {e}", file=sys.stderr)
        return 1
    s = report["summary"]
    low = report["precision"]
    print(f"Converted {s['low_precision_ops']}/{s['float_ops']} float ops to {low} "
          f"using {s['casts_inserted']} cast(s) "
          f"({s['bytes_converted']} bytes converted per call, "
          f"{s['constants_converted']} constant(s) converted at compile time, "
          f"{s['unknown_ops']} unknown op(s))")
    table = collections.Counter((e["op"], e["precision"]) for e in report["ops"])
    kinds = sorted({op for op, _ in table})
    width = max([len(k) for k in kinds] + [2])
    print(f"  {'op':<{width}}  {low:>5}  {'f32':>5}")
    for k in kinds:
        print(f"  {k:<{width}}  {table[(k, low)]:>5}  {table[(k, 'f32')]:>5}")
    if "--ops" in argv[1:]:
        for e in report["ops"]:
            print(f"  {e['location']}: {e['op']} -> {e['precision']} ({e['reason']})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
