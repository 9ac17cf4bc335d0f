"""Build the tiny ONNX models the frontend lit tests import.

Usage: /usr/bin/python3 make_models.py OUTDIR NAME...

Writes OUTDIR/NAME.onnx for each NAME (a function below, prefixed `m_`).
Needs the `onnx` module (Debian's python3-onnx, hence /usr/bin/python3).
Models are built with onnx.helper and are deliberately small, with named
nodes so that the imported IR can be checked for locations.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def vi(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def model(nodes, inputs, outputs, inits=(), opset=13, name="g", vinfo=()):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits),
                          value_info=list(vinfo))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def node(op, ins, outs, name, **attrs):
    return helper.make_node(op, ins, outs, name=name, **attrs)


# ---- op families -------------------------------------------------------------

def m_conv():
    w = np.arange(8 * 3 * 3 * 3, dtype=np.float32).reshape(8, 3, 3, 3) / 100
    dw = np.ones((8, 1, 3, 3), dtype=np.float32)
    return model([
        node("Conv", ["x", "w", "b"], ["c1"], "conv1", strides=[2, 2],
             pads=[1, 1, 1, 1]),
        node("Conv", ["c1", "dw"], ["c2"], "dwconv", group=8,
             auto_pad="SAME_UPPER"),
        node("MaxPool", ["c2"], ["p1"], "pool1", kernel_shape=[2, 2],
             strides=[2, 2]),
        node("AveragePool", ["p1"], ["p2"], "pool2", kernel_shape=[3, 3],
             pads=[1, 1, 1, 1], count_include_pad=1),
        node("GlobalAveragePool", ["p2"], ["y"], "gap"),
        node("ConvTranspose", ["x", "wt"], ["t"], "deconv", strides=[2, 2],
             dilations=[1, 1]),
    ], [vi("x", [1, 3, 8, 8])], [vi("y", [1, 8, 1, 1]), vi("t", [1, 2, 17, 17])],
        [init("w", w), init("b", np.zeros(8, np.float32)), init("dw", dw),
         init("wt", np.ones((3, 2, 3, 3), np.float32))])


def m_gemm():
    return model([
        node("Gemm", ["x", "w", "b"], ["g"], "fc", alpha=0.5, transB=1),
        node("MatMul", ["g", "m"], ["y"], "mm"),
    ], [vi("x", [2, 4])], [vi("y", [2, 3])],
        [init("w", np.ones((5, 4), np.float32)),
         init("b", np.zeros(5, np.float32)),
         init("m", np.ones((5, 3), np.float32))])


def m_eltwise():
    return model([
        node("Add", ["x", "b"], ["a"], "add"),
        node("Mul", ["a", "x"], ["m"], "mul"),
        node("Sub", ["m", "b"], ["s"], "sub"),
        node("Div", ["s", "b"], ["d"], "div"),
        node("Pow", ["d", "two"], ["p"], "pow"),
        node("Sqrt", ["p"], ["q"], "sqrt"),
        node("Sum", ["q", "x", "a"], ["sum"], "sum3"),
        node("Mean", ["sum", "x"], ["mean"], "mean2"),
        node("Max", ["mean", "x"], ["mx"], "max2"),
        node("Less", ["mx", "b"], ["lt"], "less"),
        node("Where", ["lt", "mx", "x"], ["y"], "where"),
    ], [vi("x", [2, 3])], [vi("y", [2, 3])],
        [init("b", np.ones(3, np.float32)), init("two", np.float32(2.0))])


def m_activations():
    return model([
        node("Relu", ["x"], ["r"], "relu"),
        node("LeakyRelu", ["r"], ["l"], "leaky", alpha=0.1),
        node("Sigmoid", ["l"], ["s"], "sig"),
        node("HardSigmoid", ["s"], ["h"], "hsig"),
        node("HardSwish", ["h"], ["hs"], "hswish"),
        node("Tanh", ["hs"], ["t"], "tanh"),
        node("Erf", ["t"], ["e"], "erf"),
        node("Clip", ["e", "lo", "hi"], ["c"], "clip"),
        node("PRelu", ["c", "slope"], ["y"], "prelu"),
    ], [vi("x", [1, 4])], [vi("y", [1, 4])],
        [init("lo", np.float32(0.0)), init("hi", np.float32(6.0)),
         init("slope", np.full(4, 0.25, np.float32))])


def m_shape_ops():
    return model([
        node("Reshape", ["x", "shape"], ["r"], "reshape"),
        node("Transpose", ["r", ], ["t"], "transpose", perm=[1, 0]),
        node("Unsqueeze", ["t", "ax0"], ["u"], "unsqueeze"),
        node("Squeeze", ["u", "ax0"], ["s"], "squeeze"),
        node("Flatten", ["x"], ["f"], "flatten", axis=2),
        node("Dropout", ["f"], ["y"], "drop"),
        node("Identity", ["s"], ["z"], "ident"),
    ], [vi("x", [2, 3, 4])], [vi("y", [6, 4]), vi("z", [12, 2])],
        [init("shape", np.array([0, -1], np.int64)),
         init("ax0", np.array([0], np.int64))])


def m_reductions():
    return model([
        node("ReduceMean", ["x"], ["m"], "mean", axes=[-1], keepdims=1),
        node("ReduceMax", ["x"], ["mx"], "max", axes=[1], keepdims=0),
        node("ReduceSum", ["x", "ax"], ["s"], "sum", keepdims=0),
        node("ReduceMin", ["x"], ["mn"], "min"),
        node("Softmax", ["x"], ["sm"], "softmax", axis=1),
        node("LogSoftmax", ["x"], ["lsm"], "logsoftmax"),
    ], [vi("x", [2, 3, 4])],
        [vi("m", [2, 3, 1]), vi("mx", [2, 4]), vi("s", [2, 3]),
         vi("mn", [1, 1, 1]), vi("sm", [2, 3, 4]), vi("lsm", [2, 3, 4])],
        [init("ax", np.array([2], np.int64))])


def m_softmax_legacy():
    return model([node("Softmax", ["x"], ["y"], "softmax", axis=1)],
                 [vi("x", [2, 3, 4])], [vi("y", [2, 3, 4])], opset=11)


def m_normalization():
    return model([
        node("BatchNormalization", ["x", "s", "b", "m", "v"], ["bn"], "bn",
             epsilon=1e-3),
        node("LayerNormalization", ["bn", "g", "beta"], ["y"], "ln", axis=-1),
    ], [vi("x", [1, 2, 3, 3])], [vi("y", [1, 2, 3, 3])],
        [init("s", np.ones(2, np.float32)), init("b", np.zeros(2, np.float32)),
         init("m", np.zeros(2, np.float32)), init("v", np.ones(2, np.float32)),
         init("g", np.ones(3, np.float32)),
         init("beta", np.zeros(3, np.float32))], opset=17)


def m_resize():
    return model([
        node("Resize", ["x", "", "scales"], ["up"], "up2", mode="nearest"),
        node("Resize", ["x", "", "", "sizes"], ["y"], "lin", mode="linear",
             coordinate_transformation_mode="align_corners"),
    ], [vi("x", [1, 1, 2, 2])], [vi("up", [1, 1, 4, 4]), vi("y", [1, 1, 3, 5])],
        [init("scales", np.array([1, 1, 2, 2], np.float32)),
         init("sizes", np.array([1, 1, 3, 5], np.int64))])


def m_upsample():
    return model([node("Upsample", ["x"], ["y"], "up", mode="nearest",
                       scales=[1.0, 1.0, 2.0, 3.0])],
                 [vi("x", [1, 1, 2, 2])], [vi("y", [1, 1, 4, 6])], opset=7)


def m_data_movement():
    return model([
        node("Concat", ["x", "x"], ["c"], "concat", axis=1),
        node("Split", ["c", "sizes"], ["s0", "s1"], "split", axis=1),
        node("Slice", ["s0", "starts", "ends", "axes", "steps"], ["sl"],
             "slice"),
        node("Pad", ["sl", "pads", "pv"], ["y"], "pad", mode="constant"),
    ], [vi("x", [2, 4])], [vi("y", [4, 5]), vi("s1", [2, 6])],
        [init("sizes", np.array([2, 6], np.int64)),
         init("starts", np.array([0, 0], np.int64)),
         init("ends", np.array([2, 9223372036854775807], np.int64)),
         init("axes", np.array([0, 1], np.int64)),
         init("steps", np.array([1, 2], np.int64)),
         init("pads", np.array([1, 2, 1, 2], np.int64)),
         init("pv", np.float32(0.5))])


def m_slice_legacy():
    return model([
        node("Slice", ["x"], ["y"], "slice", starts=[1], ends=[-1], axes=[1]),
        node("Pad", ["y"], ["z"], "pad", pads=[0, 1, 0, 1], mode="edge"),
    ], [vi("x", [2, 5])], [vi("z", [2, 5])], opset=9)


def m_quant():
    w = np.array([[1, 2], [3, 4], [5, 6]], np.int8)
    return model([
        node("QuantizeLinear", ["x", "s", "zp"], ["q"], "quant"),
        node("DequantizeLinear", ["q", "s", "zp"], ["dq"], "dequant"),
        node("DequantizeLinear", ["w", "ws", "wzp"], ["wd"], "wdequant",
             axis=0),
        node("MatMul", ["wd", "dq"], ["y"], "mm"),
    ], [vi("x", [2, 4])], [vi("y", [3, 4])],
        [init("s", np.float32(0.5)), init("zp", np.uint8(128)), init("w", w),
         init("ws", np.array([0.1, 0.2, 0.25], np.float32)),
         init("wzp", np.zeros(3, np.int8))])


def m_fold_shape():
    # The PyTorch export pattern: Shape -> Gather -> Unsqueeze -> Concat ->
    # Reshape, plus Cast / ConstantOfShape / Range / Expand / Size.
    return model([
        node("Shape", ["x"], ["sh"], "shape"),
        node("Gather", ["sh", "i0"], ["n"], "gather", axis=0),
        node("Unsqueeze", ["n", "ax0"], ["n1"], "unsq"),
        node("Concat", ["n1", "m1"], ["tgt"], "cat", axis=0),
        node("Reshape", ["x", "tgt"], ["y"], "reshape"),
        node("Cast", ["sh"], ["shf"], "cast", to=TensorProto.FLOAT),
        node("ConstantOfShape", ["sh"], ["ones"], "cos",
             value=helper.make_tensor("v", F, [1], [1.0])),
        node("Range", ["r0", "r1", "r2"], ["rg"], "range"),
        node("Size", ["x"], ["sz"], "size"),
        node("Expand", ["one", "sh"], ["ex"], "expand"),
        node("Add", ["x", "ex"], ["z"], "add"),
    ], [vi("x", [2, 3, 4])],
        [vi("y", [2, 12]), vi("shf", [3]), vi("ones", [2, 3, 4]),
         vi("rg", [3], TensorProto.INT64), vi("sz", [], TensorProto.INT64),
         vi("z", [2, 3, 4])],
        [init("i0", np.int64(0)), init("ax0", np.array([0], np.int64)),
         init("m1", np.array([-1], np.int64)), init("r0", np.int64(1)),
         init("r1", np.int64(7)), init("r2", np.int64(2)),
         init("one", np.array([1.0], np.float32))])


def m_constant_node():
    return model([
        node("Constant", [], ["c"], "const",
             value=helper.make_tensor("c", F, [2], [1.5, -2.0])),
        node("Constant", [], ["ci"], "const_ints", value_ints=[1, 2]),
        node("Add", ["x", "c"], ["y"], "add"),
    ], [vi("x", [2])], [vi("y", [2]), vi("ci", [2], TensorProto.INT64)])


def m_external():
    # Weights in a separate file, referenced by `location` and `offset`.
    m = model([node("Add", ["x", "w"], ["y"], "add")], [vi("x", [4])],
              [vi("y", [4])], [init("w", np.array([1, 2, 3, 4], np.float32))])
    w = m.graph.initializer[0]
    data = w.raw_data
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "ext_weights.bin"), ("offset", "8"),
                 ("length", str(len(data)))):
        e = w.external_data.add()
        e.key, e.value = k, v
    return m, {"ext_weights.bin": b"\0" * 8 + data}


def m_external_escape():
    m, _ = m_external()
    m.graph.initializer[0].external_data[0].value = "../../etc/passwd"
    return m


def m_typed_fields():
    # Initializers in float_data / int64_data / int32_data / double_data
    # instead of raw_data.
    f = helper.make_tensor("f", F, [2], [0.5, 1.5])
    i = helper.make_tensor("i", TensorProto.INT64, [2], [3, -4])
    h = helper.make_tensor("h", TensorProto.INT8, [2], [-1, 7])
    d = helper.make_tensor("d", TensorProto.DOUBLE, [1], [2.25])
    return model([
        node("Add", ["x", "f"], ["y"], "add"),
        node("Identity", ["i"], ["iy"], "ii"),
        node("Identity", ["h"], ["hy"], "hi"),
        node("Identity", ["d"], ["dy"], "di"),
    ], [vi("x", [2])], [vi("y", [2]), vi("iy", [2], TensorProto.INT64),
                        vi("hy", [2], TensorProto.INT8),
                        vi("dy", [1], TensorProto.DOUBLE)], [f, i, h, d])


def m_symbolic():
    return model([node("Relu", ["x"], ["y"], "relu")], [vi("x", ["N", 3])],
                 [vi("y", ["N", 3])])


def m_unsorted():
    # Nodes listed in reverse order: still imported (sorted first).
    return model([
        node("Relu", ["a"], ["y"], "second"),
        node("Neg", ["x"], ["a"], "first"),
    ], [vi("x", [3])], [vi("y", [3])])


# ---- bad input -------------------------------------------------------------------

def m_unknown_ops():
    return model([
        node("Foo", ["x"], ["a"], "f1"),
        node("Relu", ["a"], ["b"], "ok"),
        node("Bar", ["b"], ["c"], "b1"),
        node("Foo", ["c"], ["y"], "f2"),
        node("QLinearConv", ["y"], ["z"], "qc"),
    ], [vi("x", [3])], [vi("z", [3])])


def m_missing_init():
    return model([node("Add", ["x", "w"], ["y"], "add_w")], [vi("x", [3])],
                 [vi("y", [3])])


def m_wrong_attr_type():
    return model([node("LeakyRelu", ["x"], ["y"], "leaky", alpha="big")],
                 [vi("x", [3])], [vi("y", [3])])


def m_bad_shape():
    return model([node("Add", ["x", "w"], ["y"], "add34")], [vi("x", [3])],
                 [vi("y", [3])], [init("w", np.ones(4, np.float32))])


def m_cycle():
    return model([
        node("Relu", ["x", ], ["a"], "entry"),
        node("Add", ["a", "c"], ["b"], "loop_a"),
        node("Neg", ["b"], ["c"], "loop_b"),
    ], [vi("x", [3])], [vi("c", [3])])


def m_bad_opset():
    return model([node("Relu", ["x"], ["y"], "relu")], [vi("x", [3])],
                 [vi("y", [3])], opset=5)


def m_bad_declared():
    # value_info disagrees with the inferred type.
    return model([node("Relu", ["x"], ["y"], "relu")], [vi("x", [3])],
                 [vi("y", [4])])


def m_bad_reshape():
    return model([node("Reshape", ["x", "s"], ["y"], "reshape")],
                 [vi("x", [2, 3])], [vi("y", [4, 2])],
                 [init("s", np.array([4, 2], np.int64))])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name in sys.argv[2:]:
        m = globals()["m_" + name]()
        files = {}
        if isinstance(m, tuple):
            m, files = m
        for fname, data in files.items():
            with open(os.path.join(out, fname), "wb") as f:
                f.write(data)
        with open(os.path.join(out, name + ".onnx"), "wb") as f:
            f.write(m.SerializeToString())


if __name__ == "__main__":
    main()
