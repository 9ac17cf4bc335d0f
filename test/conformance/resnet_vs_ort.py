#!/usr/bin/env python3
"""Check `quill run` against onnxruntime on a ResNet-style model.

Builds a ResNet (stem conv/bn/relu/maxpool, basic residual blocks with
1x1 projection shortcuts, global average pool, flatten, gemm), runs it on
a random input with `quill run` (the reference interpreter) and with
onnxruntime, and checks

    max |quill - ort| / max |ort|  <=  --tol (default 1e-4)

Models:
    --model small      2 stages of 1 block, widths 8/16, 1x3x32x32 (seconds)
    --model resnet18   ResNet-18 layout, 1x3x224x224
Builders:
    --builder helper   the graph written with onnx.helper, He-initialised
                       random weights and BatchNorm statistics (default)
    --builder torch    torchvision's resnet18 (random weights, BatchNorm
                       statistics re-estimated on random batches) exported
                       with torch.onnx; needs python3-torch and
                       python3-torchvision (only with --model resnet18)

Run it with the Python that scripts/pyenv.sh prints (it has onnxruntime):

    py="$(scripts/pyenv.sh)"
    "$py" test/conformance/resnet_vs_ort.py --quill build/quill
    "$py" test/conformance/resnet_vs_ort.py --model resnet18 --time

With --time, the times of the quill run (from `quill run --time`) and of
onnxruntime are printed. Exit status: 0 within tolerance, 1 otherwise.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Builder:
    """Accumulates nodes and initializers of a ResNet graph."""

    def __init__(self, rng):
        self.rng = rng
        self.nodes, self.inits = [], []
        self.n = 0

    def name(self, p):
        self.n += 1
        return "%s%d" % (p, self.n)

    def init(self, p, arr):
        nm = self.name(p)
        self.inits.append(numpy_helper.from_array(arr.astype(np.float32), nm))
        return nm

    def conv(self, x, cin, cout, k, stride=1, pad=0):
        w = self.rng.standard_normal((cout, cin, k, k)) * np.sqrt(
            2.0 / (cin * k * k))
        y = self.name("conv")
        self.nodes.append(helper.make_node(
            "Conv", [x, self.init("w", w)], [y], kernel_shape=[k, k],
            strides=[stride, stride], pads=[pad] * 4, name=y))
        return y

    def bn(self, x, c):
        scale = 1.0 + 0.1 * self.rng.standard_normal(c)
        bias = 0.1 * self.rng.standard_normal(c)
        mean = 0.1 * self.rng.standard_normal(c)
        var = 1.0 + 0.1 * np.abs(self.rng.standard_normal(c))
        y = self.name("bn")
        self.nodes.append(helper.make_node(
            "BatchNormalization",
            [x, self.init("s", scale), self.init("b", bias),
             self.init("m", mean), self.init("v", var)], [y],
            epsilon=1e-5, name=y))
        return y

    def op(self, kind, ins, **attrs):
        y = self.name(kind.lower())
        self.nodes.append(helper.make_node(kind, ins, [y], name=y, **attrs))
        return y

    def block(self, x, cin, cout, stride):
        h = self.op("Relu", [self.bn(self.conv(x, cin, cout, 3, stride, 1),
                                     cout)])
        h = self.bn(self.conv(h, cout, cout, 3, 1, 1), cout)
        sc = x
        if stride != 1 or cin != cout:
            sc = self.bn(self.conv(x, cin, cout, 1, stride, 0), cout)
        return self.op("Relu", [self.op("Add", [h, sc])])


def helper_model(kind, seed):
    rng = np.random.default_rng(seed)
    b = Builder(rng)
    if kind == "small":
        size, stem, stem_k, stem_s, widths, blocks, classes = (
            32, 8, 3, 1, [8, 16], [1, 1], 10)
    else:
        size, stem, stem_k, stem_s, widths, blocks, classes = (
            224, 64, 7, 2, [64, 128, 256, 512], [2, 2, 2, 2], 1000)
    h = b.op("Relu", [b.bn(b.conv("x", 3, stem, stem_k, stem_s, stem_k // 2),
                           stem)])
    h = b.op("MaxPool", [h], kernel_shape=[3, 3], strides=[2, 2],
             pads=[1, 1, 1, 1])
    cin = stem
    for i, (w, n) in enumerate(zip(widths, blocks)):
        for j in range(n):
            h = b.block(h, cin, w, 2 if (i > 0 and j == 0) else 1)
            cin = w
    h = b.op("Flatten", [b.op("GlobalAveragePool", [h])], axis=1)
    fc_w = rng.standard_normal((classes, cin)) * np.sqrt(1.0 / cin)
    fc_b = 0.01 * rng.standard_normal(classes)
    b.nodes.append(helper.make_node(
        "Gemm", [h, b.init("fc_w", fc_w), b.init("fc_b", fc_b)], ["y"],
        transB=1, name="fc"))
    g = helper.make_graph(
        b.nodes, "resnet_" + kind,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       [1, 3, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, classes])],
        b.inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="quill-resnet-check")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m.SerializeToString(), (1, 3, size, size)


def torch_model(path, seed):
    import torch
    import torchvision
    torch.manual_seed(seed)
    net = torchvision.models.resnet18(weights=None)
    # random weights shrink activations layer by layer; re-estimate the
    # BatchNorm statistics so that the numbers mean something
    for m in net.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None
    net.train()
    with torch.no_grad():
        for _ in range(4):
            net(torch.randn(8, 3, 224, 224))
    net.eval()
    x = torch.randn(1, 3, 224, 224)
    torch.onnx.export(net, x, path, input_names=["x"], output_names=["y"],
                      opset_version=13)
    return (1, 3, 224, 224)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quill", default=os.path.join(here, "..", "..",
                                                    "build", "quill"))
    ap.add_argument("--model", choices=["small", "resnet18"], default="small")
    ap.add_argument("--builder", choices=["helper", "torch"],
                    default="helper")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--time", action="store_true")
    ap.add_argument("--keep", help="also save the model to this path")
    a = ap.parse_args()
    import onnxruntime as ort

    with tempfile.TemporaryDirectory(prefix="quill-resnet-") as tmp:
        model = os.path.join(tmp, "model.onnx")
        if a.builder == "torch":
            if a.model != "resnet18":
                ap.error("--builder torch builds resnet18 only")
            shape = torch_model(model, a.seed)
        else:
            data, shape = helper_model(a.model, a.seed)
            with open(model, "wb") as f:
                f.write(data)
        if a.keep:
            with open(model, "rb") as f, open(a.keep, "wb") as g:
                g.write(f.read())
        x = np.random.default_rng(a.seed + 1).standard_normal(shape).astype(
            np.float32)
        xin, yout = os.path.join(tmp, "x.npy"), os.path.join(tmp, "y.npy")
        np.save(xin, x)

        p = subprocess.run([a.quill, "run", model, "--input", "x=" + xin,
                            "--output", yout, "--time"],
                           capture_output=True, text=True)
        if p.returncode != 0:
            print("quill run failed (exit %d):\n%s" % (p.returncode,
                                                      p.stderr))
            return 1
        got = np.load(yout)

        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        sess = ort.InferenceSession(model, so,
                                    providers=["CPUExecutionProvider"])
        sess.run(None, {"x": x})  # warm-up
        t0 = time.perf_counter()
        want = sess.run(None, {"x": x})[0]
        ort_ms = (time.perf_counter() - t0) * 1e3

    if got.shape != want.shape:
        print("shape %s, onnxruntime %s" % (got.shape, want.shape))
        return 1
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
    rel = diff.max() / max(np.abs(want).max(), 1e-30)
    print("%s/%s %s: max |quill - ort| = %.3g, max |ort| = %.3g, "
          "relative %.3g (tolerance %.0e)"
          % (a.model, a.builder, "x".join(map(str, shape)), diff.max(),
             np.abs(want).max(), rel, a.tol))
    print("top-1: quill %d, onnxruntime %d" % (got.argmax(), want.argmax()))
    if a.time:
        m = re.search(r"run ([\d.]+) ms", p.stderr)
        print("time: quill run (reference interpreter) %s ms, onnxruntime "
              "(1 thread) %.1f ms" % (m.group(1) if m else "?", ort_ms))
    ok = rel <= a.tol
    print("resnet_vs_ort: %s" % ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
