#!/usr/bin/python3
"""Digits test-set accuracy: the float model against Quill's quantized
models, one row per variant and backend.

    /usr/bin/python3 examples/digits/accuracy.py build/quill [options]

For each shipped backend (or those given with --backends) the script runs

    QUILL quantize examples/digits/model.onnx --backend B \\
        --calib examples/digits/calib -o OUT/B.qir --time

(the reference quantized QDQ model), then evaluate.py on the result, and
prints a table: accuracy, agreement of the predictions with the float
model, the largest logit difference from it, the calibrate pass's time
(from --time) and the whole `quill quantize` wall time.

Variants are rows of VARIANTS below: (label, extra quantize arguments): the
integer model (fuse-qdq, what targets run) and the reference QDQ model.

Options: --backends a,b  --limit N (first N test samples)  --out DIR (where
the models go; default a temporary directory)  --max-samples N.
Exit status 0, or 1 if a command fails (its output is shown).
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BACKENDS = ["tflite-int8", "x86-vnni", "academic", "tensorrt", "power2"]
# (label, extra `quill quantize` arguments): the reference QDQ model now;
# the integer-fused pipeline will be another row.
VARIANTS = [("int8", ["--form", "integer"]), ("qdq", ["--form", "reference"])]


def run(argv):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if p.returncode != 0:
        sys.stderr.write(f"accuracy: '{shlex.join(argv)}' exited with "
                         f"{p.returncode}\n{p.stdout}{p.stderr}")
        return None
    return p


def evaluate(quill, model, args, logits, ref=None):
    argv = [sys.executable, os.path.join(HERE, "evaluate.py"), quill, model,
            "--save-logits", logits]
    if args.limit:
        argv += ["--limit", str(args.limit)]
    if ref:
        argv += ["--ref-logits", ref]
    p = run(argv)
    if p is None:
        return None
    acc = re.search(r"accuracy: ([0-9.]+) \((\d+)/(\d+)\)", p.stdout)
    agree = re.search(r"agreement with \S+: ([0-9.]+); max \|dlogit\| (\S+)",
                      p.stdout)
    return (acc.group(1), acc.group(2), acc.group(3),
            agree.group(1) if agree else "1.0000",
            agree.group(2) if agree else "0")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("quill")
    ap.add_argument("--backends", default=",".join(BACKENDS))
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--max-samples", type=int, default=0)
    ap.add_argument("--out")
    args = ap.parse_args()
    quill = os.path.abspath(args.quill) if "/" in args.quill else args.quill
    model = os.path.join(HERE, "model.onnx")
    calib = os.path.join(HERE, "calib")
    with tempfile.TemporaryDirectory(prefix="quill-acc-") as tmp:
        out = args.out or tmp
        os.makedirs(out, exist_ok=True)
        ref = os.path.join(out, "float-logits.npy")
        r = evaluate(quill, model, args, ref)
        if r is None:
            return 1
        rows = [("float", "-", f"{r[0]} ({r[1]}/{r[2]})", "-", "-", "-",
                 "-")]
        for label, extra in VARIANTS:
            for b in args.backends.split(","):
                qir = os.path.join(out, f"{b}.{label}.qir")
                argv = [quill, "quantize", model, "--backend", b, "--calib",
                        calib, "-o", qir, "--time"] + extra
                if args.max_samples:
                    argv += ["--max-samples", str(args.max_samples)]
                t0 = time.perf_counter()
                p = run(argv)
                wall = time.perf_counter() - t0
                if p is None:
                    return 1
                m = re.search(r"^\s*([0-9.]+) \(\s*[0-9.]+%\)\s+calibrate$",
                              p.stderr, re.M)
                cal = f"{float(m.group(1)) * 1e3:.1f} ms" if m else "?"
                logits = os.path.join(out, f"{b}.{label}-logits.npy")
                r = evaluate(quill, qir, args, logits, ref)
                if r is None:
                    return 1
                rows.append((label, b, f"{r[0]} ({r[1]}/{r[2]})", r[3],
                             f"{float(r[4]):.3g}", cal,
                             f"{wall * 1e3:.0f} ms"))
    head = ("model", "backend", "accuracy", "agree w/ float",
            "max dlogit", "calibrate", "quill quantize")
    widths = [max(len(str(x[i])) for x in rows + [head])
              for i in range(len(head))]
    line = lambda r: "| " + " | ".join(str(v).ljust(w)
                                       for v, w in zip(r, widths)) + " |"
    print(line(head))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print(line(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
