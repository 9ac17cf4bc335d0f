#!/usr/bin/env python3
"""dynquant_vs_ort.py - onnxruntime's dynamically quantized models in Quill.

  PY=$(scripts/pyenv.sh)
  "$PY" test/conformance/dynquant_vs_ort.py --quill build/quill

Builds two float models with onnx.helper (an MLP: MatMul + Add + Relu +
MatMul with a K of 256 and 1024; a CNN: Conv 3x3 + Relu + Conv 1x1),
quantizes them with onnxruntime.quantization.quantize_dynamic (u8
activations from DynamicQuantizeLinear, s8 weights (u8 for convolutions,
the only ConvInteger onnxruntime runs), per tensor and per channel), so they hold DynamicQuantizeLinear, MatMulInteger and
ConvInteger nodes with run-time zero points, then checks on random inputs
that `quill run` (the interpreter) and `quill run --jit` (the LLVM target)
give onnxruntime's outputs: the integer sums are exact in f32 for these
K (see frontends/onnx/ops_quant.c), so the difference is float rounding
of the scale multiplications (relative to max |y|, at most 1e-5).
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import QuantType, quantize_dynamic

LIMIT = 1e-5


def init(name, shape, rng, scale=0.1):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def mlp(rng):
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]),
             helper.make_node("Add", ["h", "b1"], ["hb"]),
             helper.make_node("Relu", ["hb"], ["r"]),
             helper.make_node("MatMul", ["r", "w2"], ["y"])]
    g = helper.make_graph(nodes, "mlp",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 256])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 64])],
                          [init("w1", [256, 1024], rng), init("b1", [1024], rng),
                           init("w2", [1024, 64], rng, 0.03)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), [4, 256]


def cnn(rng):
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Conv", ["r", "w2"], ["y"])]
    g = helper.make_graph(nodes, "cnn",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 12, 12])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 12, 12])],
                          [init("w1", [32, 8, 3, 3], rng, 0.2), init("b1", [32], rng),
                           init("w2", [16, 32, 1, 1], rng, 0.2)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), [1, 8, 12, 12]


def quill_run(quill, model, x, tmp, extra):
    fi, fo = os.path.join(tmp, "x.npy"), os.path.join(tmp, "y.npy")
    np.save(fi, x)
    subprocess.run([quill, "run", model, "--input", fi, "--output", fo] + extra,
                   check=True)
    return np.load(fo)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quill", required=True)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, make in (("mlp", mlp), ("cnn", cnn)):
            model, shape = make(rng)
            fp = os.path.join(tmp, name + ".onnx")
            onnx.save(model, fp)
            for per_channel in (False, True):
                q = os.path.join(tmp, "%s_dyn%d.onnx" % (name, per_channel))
                # onnxruntime's ConvInteger takes u8 weights only
                wt = QuantType.QUInt8 if name == "cnn" else QuantType.QInt8
                quantize_dynamic(fp, q, weight_type=wt, per_channel=per_channel)
                kinds = sorted({n.op_type for n in onnx.load(q).graph.node})
                s = ort.InferenceSession(q, providers=["CPUExecutionProvider"])
                for i in range(3):
                    x = rng.standard_normal(shape).astype(np.float32) * (1 + i)
                    want = s.run(None, {"x": x})[0]
                    for extra in ([], ["--jit"]):
                        got = quill_run(a.quill, q, x, tmp, extra)
                        err = float(np.abs(got - want).max() / np.abs(want).max())
                        ok = err <= LIMIT
                        bad += not ok
                        print("%s %s per_channel=%d sample %d %s: rel err %.2e  (%s)" % (
                            "ok  " if ok else "FAIL", name, per_channel, i,
                            "jit" if extra else "interp", err, ",".join(kinds)))
    print("FAILED" if bad else "all passed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
