"""Build the models and tensor files the `quill run` lit tests use.

Usage: /usr/bin/python3 make_run_inputs.py OUTDIR

Writes into OUTDIR:
  add_relu.onnx   a[2,3] f32, b[3] f32 -> sum = a + b, out = relu(sum)
  mul_int.onnx    p[4] i64, q[4] i64 -> prod = p * q
  dyn.onnx        x[N,2] f32 -> y = neg(x)         (a symbolic dim)
  reshape.onnx    x[6] f32, shape[2] i64 -> y      (needs a constant shape)
  unknown.onnx    x[2] f32 -> Foo -> y             (an op nobody knows)
  a.npy b.npy p.npy q.npy x32.npy x6.npy s23.npy  good inputs
  a.pb                                             a as an ONNX TensorProto
  a_f64.npy a_2x2.npy                              wrong dtype / shape
  corrupt.npy                                      a broken .npy header
Needs Debian's python3-onnx and python3-numpy (so: /usr/bin/python3).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def vi(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def save_model(path, nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, path)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    p = lambda n: os.path.join(out, n)
    save_model(p("add_relu.onnx"),
               [helper.make_node("Add", ["a", "b"], ["sum"], name="add"),
                helper.make_node("Relu", ["sum"], ["out"], name="relu")],
               [vi("a", [2, 3]), vi("b", [3])],
               [vi("sum", [2, 3]), vi("out", [2, 3])])
    save_model(p("mul_int.onnx"),
               [helper.make_node("Mul", ["p", "q"], ["prod"], name="mul")],
               [vi("p", [4], I64), vi("q", [4], I64)], [vi("prod", [4], I64)])
    save_model(p("dyn.onnx"),
               [helper.make_node("Neg", ["x"], ["y"], name="neg")],
               [vi("x", ["N", 2])], [vi("y", ["N", 2])])
    save_model(p("reshape.onnx"),
               [helper.make_node("Reshape", ["x", "shape"], ["y"],
                                 name="reshape")],
               [vi("x", [6]), vi("shape", [2], I64)], [vi("y", [2, 3])])
    save_model(p("unknown.onnx"),
               [helper.make_node("Foo", ["x"], ["y"], name="foo")],
               [vi("x", [2])], [vi("y", [2])])

    a = np.array([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.5]], np.float32)
    np.save(p("a.npy"), a)
    np.save(p("b.npy"), np.array([0.5, 0.25, -1.0], np.float32))
    np.save(p("p.npy"), np.array([1, -2, 3, 1 << 40], np.int64))
    np.save(p("q.npy"), np.array([5, 6, -7, 2], np.int64))
    np.save(p("x32.npy"), np.arange(6, dtype=np.float32).reshape(3, 2))
    np.save(p("x6.npy"), np.arange(6, dtype=np.float32))
    np.save(p("s23.npy"), np.array([2, 3], np.int64))
    np.save(p("a_f64.npy"), a.astype(np.float64))
    np.save(p("a_2x2.npy"), np.zeros((2, 2), np.float32))
    with open(p("a.pb"), "wb") as f:
        f.write(numpy_helper.from_array(a, "a").SerializeToString())
    with open(p("corrupt.npy"), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00\x20\x00{'descr': '<f4', 'shape': (2,}   \n")


if __name__ == "__main__":
    main()
