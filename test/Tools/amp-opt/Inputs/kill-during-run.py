"""Kills amp-opt with SIGKILL in the middle of a run and prints what is left.

Usage: kill-during-run.py AMP_OPT WORK_DIR

The input is a long chain of TOSA ops (a few seconds of amp-autocast). The
script waits until amp-opt has created its temporary output file (it does so
before the passes run), kills it, and prints the number of temporary files
seen and the contents of the -o file, which held OLD-OUTPUT before.
"""
import glob
import os
import signal
import subprocess
import sys
import time

amp_opt, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
src, out = os.path.join(work, "big.mlir"), os.path.join(work, "out.mlir")
t = "tensor<1x4x4xf32>"
with open(src, "w") as f:
    f.write("func.func @big(%%a: %s, %%zp: tensor<1xf32>) -> %s {\n" % (t, t))
    prev = "%a"
    for i in range(200000):
        if i % 2 == 0:
            f.write("  %%v%d = tosa.matmul %s, %%a, %%zp, %%zp : (%s, %s, tensor<1xf32>, "
                    "tensor<1xf32>) -> %s\n" % (i, prev, t, t, t))
        else:
            f.write("  %%v%d = tosa.exp %s : (%s) -> %s\n" % (i, prev, t, t))
        prev = "%%v%d" % i
    f.write("  return %s : %s\n}\n" % (prev, t))
with open(out, "w") as f:
    f.write("OLD-OUTPUT\n")

proc = subprocess.Popen([amp_opt, src, "--amp-autocast", "-o", out],
                        stderr=subprocess.DEVNULL)
temps = []
deadline = time.monotonic() + 120
while proc.poll() is None and time.monotonic() < deadline:
    temps = glob.glob(out + ".tmp-*")
    if temps:
        break
    time.sleep(0.002)
if proc.poll() is not None:
    print("amp-opt finished (exit %d) before it could be killed, %d temporary file(s) seen"
          % (proc.returncode, len(temps)))
    sys.exit(1)
proc.send_signal(signal.SIGKILL)
proc.wait()
print("killed with %d temporary file(s)" % len(temps))
with open(out) as f:
    print("output: " + f.read().strip())
for temp in glob.glob(out + ".tmp-*"):
    os.remove(temp)
