#!/usr/bin/env python3
"""ort_int8.py - onnxruntime's int8 baseline for the LLVM target's
benchmarks: quantize a float ONNX model with onnxruntime's static
quantizer (QDQ format, u8 activations, s8 per-channel weights, the same
calibration data) and time it on one thread (or N).

  PY=$(scripts/pyenv.sh)
  "$PY" bench/ort_int8.py MODEL.onnx CALIB_DIR [--threads N] [--reps R]

Prints the best and median milliseconds of R runs after warm-up.
"""
import argparse
import glob
import os
import statistics
import sys
import tempfile
import time

import numpy as np
import onnxruntime as ort
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat,
                                      QuantType, quantize_static)


class Reader(CalibrationDataReader):
    def __init__(self, files, name):
        self.it = iter([{name: np.load(f)} for f in files])

    def get_next(self):
        return next(self.it, None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("calib")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--reps", type=int, default=50)
    a = ap.parse_args()
    files = sorted(glob.glob(os.path.join(a.calib, "*.npy")))
    name = ort.InferenceSession(a.model).get_inputs()[0].name
    out = os.path.join(tempfile.mkdtemp(), "q.onnx")
    quantize_static(a.model, out, Reader(files, name),
                    quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8)
    so = ort.SessionOptions()
    so.intra_op_num_threads = a.threads
    so.inter_op_num_threads = 1
    s = ort.InferenceSession(out, so, providers=["CPUExecutionProvider"])
    x = {name: np.load(files[0])}
    for _ in range(5):
        s.run(None, x)
    t = []
    for _ in range(a.reps):
        t0 = time.perf_counter()
        s.run(None, x)
        t.append(time.perf_counter() - t0)
    print("%s: onnxruntime %s int8, %d thread(s): best %.3f ms, median %.3f ms"
          % (os.path.basename(a.model), ort.__version__, a.threads,
             min(t) * 1e3, statistics.median(t) * 1e3))


if __name__ == "__main__":
    sys.exit(main())
