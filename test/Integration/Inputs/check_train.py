#!/usr/bin/env python3
"""Checks the JSON lines amp-train prints (one object per step).

  check_train.py falls RUN [--ratio R] [--scale S]
      every line is {"step", "loss", "scale", "skipped"} with steps 0, 1, ...;
      no step is skipped, every loss is finite, last loss < R * first loss
      (default 0.8) and every scale equals S (default 1).
  check_train.py track REF LOW [--tol T]
      pairs the losses of two runs after the same number of APPLIED
      (non-skipped) steps; requires |low - ref| <= T * (first ref loss),
      T default 0.02, and at least 10 pairs.
  check_train.py poison RUN --step K
      step K is skipped, its scale is half of step K-1's, no other step is
      skipped.
  check_train.py scale-rule RUN [--init 65536] [--growth-factor 2]
      [--backoff-factor 0.5] [--growth-interval 2000] [--backoff-interval 1]
      [--min-scale 0] [--max-scale 0]
      recomputes the printed scale of every step from the printed skipped flags
      with PyTorch's GradScaler rule (REFERENCE section 1), generalised with a
      backoff interval (consecutive overflows, Paddle), a floor and a ceiling
      (0: none), in float32; requires exact equality.
  check_train.py close A B [--rtol R]
      the two runs have the same steps, skipped flags and scales, and every
      loss of B is within R (default 1e-5) relative of A's (or both are null:
      not finite).
  check_train.py same-loss A:I B:J
      the loss printed by run A at step I equals (as text) B's at step J.
  check_train.py same-dir DIR_A DIR_B
      both directories hold the same arg<N>.npy names with identical bytes.
  check_train.py npy-info FILE
      prints the version, header dict, header alignment and data size of a
      .npy file.
"""
import json
import math
import os
import re
import struct
import sys

LINE = re.compile(r'^\{"step": (\d+), "loss": ([^,]+), "scale": ([^,]+), '
                  r'"skipped": (true|false)\}$')


def fail(message):
    sys.exit("check_train.py: " + message)


def f32(x):
    """x rounded to float32 (to +-inf past the largest float32)."""
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def read_run(path):
    steps = []
    with open(path) as f:
        for n, text in enumerate(f.read().splitlines()):
            if not LINE.match(text):
                fail("%s:%d: not an amp-train line: %r" % (path, n + 1, text))
            obj = json.loads(text)
            if obj["step"] != n:
                fail("%s:%d: step %d out of order" % (path, n + 1, obj["step"]))
            steps.append(obj)
    if not steps:
        fail(path + ": no steps")
    return steps


def option(args, name, default, conv=float):
    if name in args:
        return conv(args[args.index(name) + 1])
    return default


def cmd_falls(args):
    run = read_run(args[0])
    ratio = option(args, "--ratio", 0.8)
    scale = option(args, "--scale", 1.0)
    for s in run:
        if s["skipped"]:
            fail("step %d skipped" % s["step"])
        if s["loss"] is None or not math.isfinite(s["loss"]):
            fail("step %d: loss %r is not finite" % (s["step"], s["loss"]))
        if s["scale"] != scale:
            fail("step %d: scale %r, expected %r" % (s["step"], s["scale"], scale))
    first, last = run[0]["loss"], run[-1]["loss"]
    if not last < ratio * first:
        fail("loss %r -> %r does not fall below %g x the first" % (first, last, ratio))
    print("falls: %d steps, loss %.6g -> %.6g" % (len(run), first, last))


def applied_losses(run):
    """{number of applied steps before it: loss} for the non-skipped steps."""
    out, applied = {}, 0
    for s in run:
        if not s["skipped"]:
            out[applied] = s["loss"]
            applied += 1
    return out


def cmd_track(args):
    ref, low = read_run(args[0]), read_run(args[1])
    tol = option(args, "--tol", 0.02)
    bound = tol * ref[0]["loss"]
    a, b = applied_losses(ref), applied_losses(low)
    pairs = sorted(set(a) & set(b))
    if len(pairs) < 10:
        fail("only %d comparable steps" % len(pairs))
    worst = 0.0
    for k in pairs:
        if b[k] is None or not math.isfinite(b[k]):
            fail("after %d applied steps: loss %r" % (k, b[k]))
        diff = abs(b[k] - a[k])
        worst = max(worst, diff)
        if diff > bound:
            fail("after %d applied steps: |%r - %r| = %g > %g"
                 % (k, b[k], a[k], diff, bound))
    print("track: %d steps, worst |diff| %.3g <= %.3g" % (len(pairs), worst, bound))


def cmd_poison(args):
    run = read_run(args[0])
    k = option(args, "--step", None, int)
    if k is None or k < 1 or k >= len(run):
        fail("--step must name a step after the first")
    for s in run:
        if s["skipped"] != (s["step"] == k):
            fail("step %d: skipped is %s" % (s["step"], s["skipped"]))
    if run[k]["scale"] != run[k - 1]["scale"] / 2:
        fail("scale %r at step %d is not half of %r" % (run[k]["scale"], k,
                                                        run[k - 1]["scale"]))
    print("poison: step %d skipped, scale %g -> %g" % (k, run[k - 1]["scale"],
                                                      run[k]["scale"]))


def cmd_scale_rule(args):
    run = read_run(args[0])
    scale = f32(option(args, "--init", 65536.0))
    growth = f32(option(args, "--growth-factor", 2.0))
    backoff = f32(option(args, "--backoff-factor", 0.5))
    interval = option(args, "--growth-interval", 2000, int)
    backoff_interval = option(args, "--backoff-interval", 1, int)
    floor = f32(option(args, "--min-scale", 0.0))
    ceiling = f32(option(args, "--max-scale", 0.0))
    growth_tracker = overflow_tracker = 0
    skipped = 0
    for s in run:
        skipped += s["skipped"]
        if interval != 0:
            if s["skipped"]:
                growth_tracker = 0
                overflow_tracker += 1
                if overflow_tracker >= backoff_interval:
                    scale = f32(scale * backoff)
                    if floor > 0:
                        scale = max(scale, floor)
                    overflow_tracker = 0
            else:
                overflow_tracker = 0
                growth_tracker += 1
                if growth_tracker == interval:
                    grown = f32(scale * growth)
                    if ceiling > 0:
                        grown = min(grown, ceiling)
                    if math.isfinite(grown):
                        scale = grown
                    growth_tracker = 0
        # %.9g round-trips a float32: the printed text rounds back to it.
        if s["scale"] is None or f32(s["scale"]) != scale:
            fail("step %d: printed scale %r, the rule gives %r"
                 % (s["step"], s["scale"], scale))
    print("scale-rule: %d steps (%d skipped), final scale %g"
          % (len(run), skipped, scale))


def cmd_close(args):
    a, b = read_run(args[0]), read_run(args[1])
    rtol = option(args, "--rtol", 1e-5)
    if len(a) != len(b):
        fail("%d steps vs %d" % (len(a), len(b)))
    worst = 0.0
    for x, y in zip(a, b):
        k = x["step"]
        if x["skipped"] != y["skipped"] or x["scale"] != y["scale"]:
            fail("step %d: skipped/scale %s/%r vs %s/%r" % (k, x["skipped"], x["scale"],
                                                          y["skipped"], y["scale"]))
        if x["loss"] is None or y["loss"] is None:
            if x["loss"] != y["loss"]:
                fail("step %d: loss %r vs %r" % (k, x["loss"], y["loss"]))
            continue
        rel = abs(y["loss"] - x["loss"]) / max(abs(x["loss"]), 1e-30)
        worst = max(worst, rel)
        if rel > rtol:
            fail("step %d: loss %r vs %r, relative difference %.3g > %g"
                 % (k, x["loss"], y["loss"], rel, rtol))
    print("close: %d steps, worst relative difference %.3g <= %g" % (len(a), worst, rtol))


def cmd_same_loss(args):
    (pa, ia), (pb, ib) = (a.rsplit(":", 1) for a in args[:2])
    la = open(pa).read().splitlines()[int(ia)]
    lb = open(pb).read().splitlines()[int(ib)]
    loss = lambda line: LINE.match(line).group(2)
    if loss(la) != loss(lb) or loss(la) == "null":
        fail("loss %s (%s) != %s (%s)" % (loss(la), args[0], loss(lb), args[1]))
    print("same-loss: %s" % loss(la))


def cmd_same_dir(args):
    a, b = args[:2]
    names = lambda d: sorted(n for n in os.listdir(d) if n.endswith(".npy"))
    if names(a) != names(b) or not names(a):
        fail("different files: %s vs %s" % (names(a), names(b)))
    for n in names(a):
        if open(os.path.join(a, n), "rb").read() != open(os.path.join(b, n), "rb").read():
            fail("%s differs" % n)
    print("same-dir: %d identical files" % len(names(a)))


def cmd_npy_info(args):
    blob = open(args[0], "rb").read()
    if blob[:6] != b"\x93NUMPY":
        fail(args[0] + ": no magic")
    major = blob[6]
    size = 2 if major == 1 else 4
    length = int.from_bytes(blob[8:8 + size], "little")
    start = 8 + size + length
    header = blob[8 + size:start].decode("latin1")
    print("version %d.%d" % (major, blob[7]))
    print("header %s" % header.strip())
    print("aligned %s ends-with-newline %s" % (start % 64 == 0, header.endswith("\n")))
    print("data %d bytes" % (len(blob) - start))


COMMANDS = {"falls": cmd_falls, "track": cmd_track, "poison": cmd_poison,
            "scale-rule": cmd_scale_rule, "close": cmd_close, "same-loss": cmd_same_loss,
            "same-dir": cmd_same_dir, "npy-info": cmd_npy_info}

if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in COMMANDS:
        fail(__doc__)
    COMMANDS[sys.argv[1]](sys.argv[2:])
