#!/usr/bin/env python3
"""Quill against onnxruntime's own quantizer on the digits model: the
committed measurement behind "on the same model and calibration data,
Quill's accuracy is at least that of onnxruntime's quantize_static (QDQ,
per-channel)".

Run with the venv python that has onnxruntime (scripts/pyenv.sh), from the
repository root:

    PY=$(scripts/pyenv.sh)
    $PY examples/digits/compare_ort.py build/quill [--all] [--check]

What it does, all on examples/digits/model.onnx, the 100 calibration
samples in examples/digits/calib/ and the 360 test images:

  1. onnxruntime: quant_pre_process, then quantize_static with QDQ format,
     per_channel=True, QInt8 weights, QInt8 and QUInt8 activations, MinMax
     calibration (with --all also Entropy and Percentile): ort_baseline.py's
     functions, so the same settings as that script. Run in onnxruntime
     (CPU, one thread, batch 1: its int8 kernels).
  2. Quill: `quill quantize --backend B` for every shipped backend, run
     with the reference interpreter through `quill run`, one process per
     sample (evaluate.py's run_one; about 3 ms each, so no pool needed).
     tflite-int8 and x86-vnni are also exported as QDQ ONNX (`-o x.onnx`)
     and run in onnxruntime: Quill's quantization in ORT's int8 kernels.
  3. Prints one table row per model: top-1 accuracy, agreement of the
     predictions with the float model (onnxruntime, model.onnx) and the
     mean / max absolute logit difference from its logits; then the
     verdict for the like-for-like pairs: tflite-int8 (i8 asymmetric
     activations, i8 symmetric per-channel weights, minmax) against ORT
     QInt8/MinMax, x86-vnni (u8 activations) against ORT QUInt8/MinMax.

With --check the exit status is 1 if Quill's accuracy is below
onnxruntime's in a pair. Models go to --out (default: a temporary
directory).
"""
import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import evaluate  # noqa: E402  (run_one: one `quill run` per sample)
import ort_baseline as ob  # noqa: E402  (onnxruntime's quantizer, its runs)

from onnxruntime.quantization import CalibrationMethod, QuantType  # noqa: E402
from onnxruntime.quantization.shape_inference import quant_pre_process  # noqa: E402

BACKENDS = ["tflite-int8", "x86-vnni", "academic", "tensorrt", "power2"]
EXPORTED = ["tflite-int8", "x86-vnni"]  # also run in onnxruntime
# (Quill backend, onnxruntime config) pairs with the same scheme.
PAIRS = [("tflite-int8", "QDQ a=QInt8 w=QInt8/ch MinMax"),
         ("x86-vnni", "QDQ a=QUInt8 w=QInt8/ch MinMax")]


def quill_logits(quill, model, x):
    """Logits [N,10] through `quill run`, one sample per process."""
    out = []
    with tempfile.TemporaryDirectory(prefix="quill-cmp-") as tmp:
        for i in range(len(x)):
            y = evaluate.run_one([quill], model, x[i:i + 1], tmp)
            if y is None:
                raise SystemExit(f"compare_ort: quill run {model} failed")
            out.append(np.asarray(y, dtype=np.float64).reshape(1, -1))
    return np.concatenate(out)


def quill_quantize(quill, model, backend, calib, out):
    argv = [quill, "quantize", model, "--backend", backend, "--calib", calib,
            "-o", out]
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"compare_ort: {' '.join(argv)} failed:\n"
                         f"{p.stdout}{p.stderr}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("quill", help="the quill binary")
    ap.add_argument("--data", default=HERE,
                    help="directory with model.onnx, calib/, test_x.npy, "
                         "test_y.npy")
    ap.add_argument("--out", help="where the models go (default: temporary)")
    ap.add_argument("--all", action="store_true",
                    help="also onnxruntime's Entropy and Percentile "
                         "calibration")
    ap.add_argument("--limit", type=int, default=0,
                    help="first N test samples only")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 if Quill is less accurate than onnxruntime "
                         "in a like-for-like pair")
    args = ap.parse_args()
    quill = os.path.abspath(args.quill) if "/" in args.quill else args.quill
    model = os.path.join(args.data, "model.onnx")
    calib = os.path.join(args.data, "calib")
    x = np.load(os.path.join(args.data, "test_x.npy"))
    y = np.load(os.path.join(args.data, "test_y.npy"))
    if args.limit > 0:
        x, y = x[:args.limit], y[:args.limit]

    with tempfile.TemporaryDirectory(prefix="quill-cmp-") as tmp:
        out = args.out or tmp
        os.makedirs(out, exist_ok=True)
        rows = []  # (engine, config, logits, seconds)

        def add(engine, config, fn):
            t0 = time.perf_counter()
            logits = fn()
            rows.append((engine, config, logits, time.perf_counter() - t0))

        add("onnxruntime", "float model.onnx",
            lambda: ob.run_logits(model, x))
        add("quill", "float model.onnx", lambda: quill_logits(quill, model, x))

        input_name = ob.session(model).get_inputs()[0].name
        pre = os.path.join(out, "model.pre.onnx")
        with contextlib.redirect_stdout(sys.stderr):
            quant_pre_process(model, pre)
        methods = [("MinMax", CalibrationMethod.MinMax)]
        if args.all:
            methods += [("Entropy", CalibrationMethod.Entropy),
                        ("Percentile", CalibrationMethod.Percentile)]
        for mname, method in methods:
            for aname, act in (("QInt8", QuantType.QInt8),
                               ("QUInt8", QuantType.QUInt8)):
                path = os.path.join(out, f"ort.{aname}.{mname}.onnx")
                # onnxruntime's calibrators print progress on stdout
                with contextlib.redirect_stdout(sys.stderr):
                    ob.quantize(pre, path, act, method, calib, input_name)
                add("onnxruntime", f"QDQ a={aname} w=QInt8/ch {mname}",
                    lambda p=path: ob.run_logits(p, x))

        for b in BACKENDS:
            qir = os.path.join(out, f"quill.{b}.qir")
            quill_quantize(quill, model, b, calib, qir)
            add("quill", b, lambda q=qir: quill_logits(quill, q, x))
        for b in EXPORTED:
            onnx = os.path.join(out, f"quill.{b}.onnx")
            quill_quantize(quill, model, b, calib, onnx)
            add("onnxruntime", f"Quill's {b} model (QDQ export)",
                lambda p=onnx: ob.run_logits(p, x))

    ref = rows[0][2]
    head = ("engine", "config", "accuracy", "agree w/ float",
            "mean |dlogit|", "max |dlogit|")
    table, acc = [], {}
    for engine, config, logits, secs in rows:
        pred = logits.argmax(1)
        correct = int((pred == y).sum())
        d = np.abs(logits - ref)
        acc[(engine, config)] = correct / len(y)
        table.append((engine, config, f"{correct / len(y):.4f} ({correct})",
                      f"{(pred == ref.argmax(1)).mean():.4f}",
                      f"{d.mean():.5f}", f"{d.max():.5f}"))
    import onnxruntime
    print(f"digits: {len(y)} test images, {len(os.listdir(calib))} "
          f"calibration samples; onnxruntime {onnxruntime.__version__}; "
          f"reference logits: onnxruntime float")
    widths = [max(len(r[i]) for r in table + [head]) for i in range(len(head))]
    line = lambda r: "| " + " | ".join(v.ljust(w) for v, w in
                                       zip(r, widths)) + " |"
    print(line(head))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in table:
        print(line(r))
    worse = False
    for b, cfg in PAIRS:
        q, o = acc[("quill", b)], acc[("onnxruntime", cfg)]
        ok = q >= o
        worse |= not ok
        print(f"quill {b} {q:.4f} {'>=' if ok else '<'} onnxruntime {cfg} "
              f"{o:.4f}: {'ok' if ok else 'WORSE'}")
    return 1 if args.check and worse else 0


if __name__ == "__main__":
    sys.exit(main())
