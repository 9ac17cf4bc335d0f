#!/usr/bin/env python3
"""onnxruntime's own int8 quantizer on the digits model: the baseline Quill
is compared against.

Run with the venv python that has onnxruntime (scripts/pyenv.sh):

    PY=$(scripts/pyenv.sh)
    $PY examples/digits/ort_baseline.py [--out build/digits-ort] [--quick]

What it does:
  1. quant_pre_process (onnxruntime.quantization.shape_inference): shape
     inference plus onnxruntime's basic graph optimizations, which fold every
     BatchNormalization into its Conv. This is onnxruntime's documented
     first step before quantize_static.
  2. quantize_static, QDQ format, per_channel=True, weights QInt8, for each
     activation type (QInt8, QUInt8) and calibration method (MinMax, and
     Entropy and Percentile unless --quick), fed the committed calibration
     samples (examples/digits/calib/*.npy, sorted by name) through a
     CalibrationDataReader. Other options are onnxruntime's defaults
     (asymmetric activations, symmetric weights).
  3. Runs the float model and every quantized model with onnxruntime
     (CPU, default optimizations: onnxruntime executes QDQ models with its
     int8 kernels) over test_x.npy, one sample per run (batch 1), and prints
     a table: top-1 accuracy, agreement with the float model's predictions
     and the mean/max absolute logit difference from the float logits.

All models are written to --out (not committed). With --commit-qdq the
QInt8/MinMax model is also copied to examples/digits/model.ort-qdq.onnx, the
committed test input for Quill's QDQ import.
"""
import argparse
import glob
import os
import shutil
import sys

import numpy as np
import onnxruntime as ort
from onnxruntime.quantization import (CalibrationDataReader,
                                      CalibrationMethod, QuantFormat,
                                      QuantType, quantize_static)
from onnxruntime.quantization.shape_inference import quant_pre_process

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


class DigitsReader(CalibrationDataReader):
    """Feeds each calib/*.npy file (one [1,1,16,16] sample) once."""

    def __init__(self, calib_dir, input_name):
        self.files = sorted(glob.glob(os.path.join(calib_dir, "*.npy")))
        if not self.files:
            raise SystemExit(f"no .npy files in {calib_dir}")
        self.input_name = input_name
        self.it = iter(self.files)

    def get_next(self):
        f = next(self.it, None)
        if f is None:
            return None
        return {self.input_name: np.load(f).astype(np.float32)}

    def rewind(self):
        self.it = iter(self.files)


def session(path):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def run_logits(path, x):
    """Logits [N,10] of the model at path, one sample per run."""
    s = session(path)
    name = s.get_inputs()[0].name
    return np.concatenate([s.run(None, {name: x[i:i + 1]})[0]
                           for i in range(len(x))])


def quantize(pre, out, act, method, calib_dir, input_name):
    quantize_static(pre, out, DigitsReader(calib_dir, input_name),
                    quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=act, weight_type=QuantType.QInt8,
                    calibrate_method=method)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=os.path.join(HERE, "model.onnx"))
    ap.add_argument("--data", default=HERE,
                    help="directory with test_x.npy, test_y.npy and calib/")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "digits-ort"))
    ap.add_argument("--quick", action="store_true",
                    help="MinMax calibration only")
    ap.add_argument("--commit-qdq", action="store_true",
                    help="copy the QInt8/MinMax model to "
                         "examples/digits/model.ort-qdq.onnx")
    args = ap.parse_args()

    os.makedirs(args.out, exist_ok=True)
    x = np.load(os.path.join(args.data, "test_x.npy"))
    y = np.load(os.path.join(args.data, "test_y.npy"))
    calib_dir = os.path.join(args.data, "calib")
    input_name = session(args.model).get_inputs()[0].name

    pre = os.path.join(args.out, "model.pre.onnx")
    quant_pre_process(args.model, pre)

    methods = [("minmax", CalibrationMethod.MinMax)]
    if not args.quick:
        methods += [("entropy", CalibrationMethod.Entropy),
                    ("percentile", CalibrationMethod.Percentile)]
    acts = [("qint8", QuantType.QInt8), ("quint8", QuantType.QUInt8)]

    rows = [("float", args.model), ("float (preprocessed)", pre)]
    for mname, method in methods:
        for aname, act in acts:
            path = os.path.join(args.out, f"model.qdq.{aname}.{mname}.onnx")
            quantize(pre, path, act, method, calib_dir, input_name)
            rows.append((f"qdq a={aname} w=qint8/ch {mname}", path))

    ref = run_logits(args.model, x)
    print(f"onnxruntime {ort.__version__}; test set {len(y)} images; "
          f"calibration {len(DigitsReader(calib_dir, input_name).files)} "
          f"samples")
    print(f"{'model':34s} {'accuracy':>14s} {'agree':>7s} "
          f"{'mean|dlogit|':>12s} {'max|dlogit|':>11s}  size")
    for label, path in rows:
        logits = ref if path == args.model else run_logits(path, x)
        pred = logits.argmax(1)
        acc = (pred == y).mean()
        agree = (pred == ref.argmax(1)).mean()
        d = np.abs(logits - ref)
        print(f"{label:34s} {acc:8.4f} ({int((pred == y).sum()):3d})"
              f" {agree:7.4f} {d.mean():12.5f} {d.max():11.5f}"
              f"  {os.path.getsize(path):6d}")

    if args.commit_qdq:
        src = os.path.join(args.out, "model.qdq.qint8.minmax.onnx")
        dst = os.path.join(HERE, "model.ort-qdq.onnx")
        shutil.copyfile(src, dst)
        print(f"copied {src} -> {dst}", file=sys.stderr)


if __name__ == "__main__":
    main()
