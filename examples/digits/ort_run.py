#!/usr/bin/env python3
"""A stand-in for `quill run` backed by onnxruntime (for testing
evaluate.py and for reference outputs).

    $PY examples/digits/ort_run.py run MODEL.onnx --input x.npy --output y.npy

Same interface as `quill run`: the input array feeds the model's first
graph input, the first output is written as .npy. Only .onnx models.
$PY is the venv python printed by scripts/pyenv.sh.
"""
import argparse
import sys

import numpy as np
import onnxruntime as ort


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("command", choices=["run"])
    ap.add_argument("model")
    ap.add_argument("--input", required=True)
    ap.add_argument("--output", required=True)
    args = ap.parse_args()
    if not args.model.endswith(".onnx"):
        sys.exit(f"ort_run: {args.model}: only .onnx models are supported")
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    s = ort.InferenceSession(args.model, so,
                             providers=["CPUExecutionProvider"])
    x = np.load(args.input)
    y = s.run(None, {s.get_inputs()[0].name: x})[0]
    np.save(args.output, y)
    return 0


if __name__ == "__main__":
    sys.exit(main())
