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


def model(nodes, inputs, outputs, inits=(), opset=13, name="g", vinfo=(),
          extra_opsets=()):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits),
                          value_info=list(vinfo))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)] +
                          [helper.make_opsetid(d, v) for d, v in extra_opsets])
    m.ir_version = 8
    return m


def pb(name, arr):
    """A TensorProto file (for --const)."""
    return numpy_helper.from_array(np.asarray(arr), name).SerializeToString()


def node(op, ins, outs, name, domain=None, **attrs):
    return helper.make_node(op, ins, outs, name=name, domain=domain, **attrs)


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
         init("slope", np.full(4, 0.25, np.float32))], opset=14)


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


def m_empty_concat():
    # Shape of a scalar is empty; concatenated with [-1] it is still a
    # constant target shape (empty parts are dropped before folding).
    return model([
        node("Shape", ["s"], ["e"], "shape"),
        node("Concat", ["e", "m1"], ["tgt"], "cat", axis=0),
        node("Reshape", ["x", "tgt"], ["y"], "reshape"),
    ], [vi("x", [2, 3]), vi("s", [])], [vi("y", [6])],
        [init("m1", np.array([-1], np.int64))])


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


def m_external_offset():
    # An offset near 2^63: offset + size must not wrap around.
    m, files = m_external()
    m.graph.initializer[0].external_data[1].value = str(2**63 - 8)
    return m, files


def m_big_input_dim():
    # A graph input dimension of 2^31 (the largest allowed is 2^31 - 1).
    return model([node("Relu", ["x"], ["y"], "relu")], [vi("x", [2**31, 1])],
                 [vi("y", [2**31, 1])])


def m_big_init_dim():
    # An initializer declaring 2^31 x 0 elements: no data, but a dimension
    # no target can index.
    t = helper.make_tensor("w", F, [2**31, 0], [])
    return model([node("Identity", ["w"], ["y"], "id")], [], [vi("y", [2**31, 0])],
                 [t])


def m_big_constant_of_shape():
    return model([node("ConstantOfShape", ["s"], ["y"], "cos")], [],
                 [vi("y", [2**31])],
                 [init("s", np.array([2**31], np.int64))])


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


def m_conv1d():
    # 1-D Conv / ConvTranspose through the 2-D ops over [N, C, 1, L].
    return model([
        node("Conv", ["x", "w"], ["c"], "conv", strides=[2], pads=[1, 1],
             dilations=[1]),
        node("ConvTranspose", ["x", "wt"], ["t"], "deconv", strides=[2],
             output_padding=[1]),
    ], [vi("x", [1, 2, 8])], [vi("c", [1, 4, 4]), vi("t", [1, 3, 18])],
        [init("w", np.ones((4, 2, 3), np.float32)),
         init("wt", np.ones((2, 3, 3), np.float32))])


def m_resize18():
    # Resize-18/19: axes, keep_aspect_ratio_policy, cubic parameters,
    # tf_crop_and_resize with roi; half_pixel_symmetric.
    return model([
        node("Resize", ["x", "", "", "sz"], ["a"], "keep", mode="linear",
             axes=[2, 3], keep_aspect_ratio_policy="not_larger"),
        node("Resize", ["x", "", "sc"], ["b"], "cubic", mode="cubic",
             axes=[3], cubic_coeff_a=-0.5, exclude_outside=1,
             coordinate_transformation_mode="half_pixel_symmetric"),
        node("Resize", ["x", "roi", "", "sz4"], ["c"], "crop",
             coordinate_transformation_mode="tf_crop_and_resize",
             extrapolation_value=2.0),
    ], [vi("x", [1, 1, 4, 8])],
        [vi("a", [1, 1, 2, 4]), vi("b", [1, 1, 4, 16]), vi("c", [1, 1, 3, 3])],
        [init("sz", np.array([2, 6], np.int64)),
         init("sc", np.array([2.0], np.float32)),
         init("roi", np.array([0, 0, 0.25, 0.25, 1, 1, 0.75, 0.75],
                              np.float32)),
         init("sz4", np.array([1, 1, 3, 3], np.int64))], opset=19)


def m_dropout_mask():
    # Inference Dropout: identity, and a mask of ones when it is used.
    return model([
        node("Dropout", ["x"], ["y", "mask"], "drop"),
        node("Dropout", ["x", "r", "t"], ["z"], "drop0"),
    ], [vi("x", [2, 2])], [vi("y", [2, 2]), vi("mask", [2, 2], TensorProto.BOOL),
                           vi("z", [2, 2])],
        [init("r", np.float32(0.0)), init("t", np.bool_(True))])


def m_layernorm_stats():
    return model([
        node("LayerNormalization", ["x", "g"], ["y", "mean", "inv"], "ln",
             axis=1, epsilon=0.5),
    ], [vi("x", [2, 3])], [vi("y", [2, 3]), vi("mean", [2, 1]),
                           vi("inv", [2, 1])],
        [init("g", np.ones(3, np.float32))], opset=17)


def m_split18():
    return model([
        node("Split", ["x"], ["a", "b", "c"], "split", axis=0, num_outputs=3),
    ], [vi("x", [7])], [vi("a", [3]), vi("b", [3]), vi("c", [1])], opset=18)


def m_legacy_opset6():
    # Opset 6: Add with broadcast/axis, per-channel PRelu slope, inference
    # BatchNormalization (is_test), Dropout(is_test) and Gemm(broadcast).
    return model([
        node("Add", ["x", "bias"], ["a"], "add", broadcast=1, axis=1),
        node("PRelu", ["a", "slope"], ["p"], "prelu"),
        node("BatchNormalization", ["p", "s", "b", "m", "v"], ["bn"], "bn",
             is_test=1, epsilon=1e-5, momentum=0.9),
        node("Dropout", ["bn"], ["d"], "drop", is_test=1, ratio=0.5),
        node("Flatten", ["d"], ["f"], "flat"),
        node("Gemm", ["f", "w", "c"], ["y"], "fc", broadcast=1, transB=1),
    ], [vi("x", [1, 2, 2, 2])], [vi("y", [1, 3])],
        [init("bias", np.array([1, 2], np.float32)),
         init("slope", np.array([0.5, 0.25], np.float32)),
         init("s", np.ones(2, np.float32)), init("b", np.zeros(2, np.float32)),
         init("m", np.zeros(2, np.float32)), init("v", np.ones(2, np.float32)),
         init("w", np.ones((3, 8), np.float32)),
         init("c", np.zeros(3, np.float32))], opset=6)


def m_legacy_opset1():
    # Opset 1: Reshape's shape, Pad's paddings as attributes; Concat's axis
    # defaults to 1; Split takes its sizes as a second input.
    return model([
        node("Reshape", ["x"], ["r"], "reshape", shape=[2, 3]),
        node("Concat", ["r", "r"], ["c"], "concat"),
        node("Pad", ["c"], ["p"], "pad", paddings=[0, 1, 0, 1]),
        node("Split", ["p", "sizes"], ["y", "z"], "split", axis=1),
    ], [vi("x", [6])], [vi("y", [2, 3]), vi("z", [2, 5])],
        [init("sizes", np.array([3, 5], np.int64))], opset=1)


def m_gelu():
    # Gelu is a default-domain op from opset 20; com.microsoft's Gelu (ONNX
    # Runtime's fusion) is the exact form.
    return model([
        node("Gelu", ["x"], ["a"], "gelu", approximate="tanh"),
        node("Gelu", ["a"], ["y"], "msgelu", domain="com.microsoft"),
    ], [vi("x", [4])], [vi("y", [4])], opset=20,
        extra_opsets=[("com.microsoft", 1)])


def m_future_opset():
    # An opset newer than the importer knows: best effort, with a warning.
    return model([node("Relu", ["x"], ["y"], "relu")], [vi("x", [3])],
                 [vi("y", [3])], opset=30)


# ---- quantized ops ---------------------------------------------------------------

def m_qlinear():
    # QLinearConv with per-channel weight scales and an int32 bias, fed by a
    # QuantizeLinear; QLinearMatMul on its (reshaped) output.
    w = np.arange(2 * 3 * 1 * 1, dtype=np.int8).reshape(2, 3, 1, 1)
    return model([
        node("QuantizeLinear", ["x", "xs", "xz"], ["xq"], "quant"),
        node("QLinearConv", ["xq", "xs", "xz", "w", "ws", "wz", "ys", "yz",
                             "bias"], ["c"], "qconv", pads=[0, 0, 0, 0]),
        node("Reshape", ["c", "shape"], ["r"], "reshape"),
        node("QLinearMatMul", ["r", "ys", "yz", "b", "bs", "bz", "ms", "mz"],
             ["mm"], "qmm"),
        node("DequantizeLinear", ["mm", "ms", "mz"], ["y"], "dq"),
    ], [vi("x", [1, 3, 2, 2])], [vi("y", [2, 3])],
        [init("xs", np.float32(0.5)), init("xz", np.uint8(128)), init("w", w),
         init("ws", np.array([0.1, 0.2], np.float32)),
         init("wz", np.zeros(2, np.int8)), init("ys", np.float32(0.25)),
         init("yz", np.uint8(100)), init("bias", np.array([1, -1], np.int32)),
         init("shape", np.array([2, 4], np.int64)),
         init("b", np.ones((4, 3), np.uint8)),
         init("bs", np.array([0.5, 0.25, 1.0], np.float32)),
         init("bz", np.array([1, 2, 3], np.uint8)),
         init("ms", np.float32(2.0)), init("mz", np.uint8(10))])


def m_integer():
    # ConvInteger / MatMulInteger: i32 accumulators; zero points from inputs
    # (absent = 0, the storage type then comes from the operand).
    return model([
        node("ConvInteger", ["x", "w", "xz"], ["c"], "convint"),
        node("ConvInteger", ["x8", "w8", "", "wz8"], ["c8"], "convint8"),
        node("MatMulInteger", ["a", "b", "az", "bz"], ["m"], "mmint"),
        node("DynamicQuantizeLinear", ["f"], ["q", "qs", "qz"], "dyn"),
    ], [vi("x", [1, 1, 3, 3], TensorProto.UINT8),
        vi("x8", [1, 1, 3, 3], TensorProto.INT8),
        vi("a", [2, 3], TensorProto.UINT8), vi("f", [4])],
        [vi("c", [1, 2, 2, 2], TensorProto.INT32),
         vi("c8", [1, 2, 3, 3], TensorProto.INT32),
         vi("m", [2, 2], TensorProto.INT32),
         vi("q", [4], TensorProto.UINT8), vi("qs", [], F),
         vi("qz", [], TensorProto.UINT8)],
        [init("w", np.ones((2, 1, 2, 2), np.uint8)),
         init("xz", np.uint8(3)),
         init("w8", np.ones((2, 1, 1, 1), np.int8)),
         init("wz8", np.array([1, -1], np.int8)),
         init("b", np.ones((3, 2), np.uint8)), init("az", np.uint8(1)),
         init("bz", np.array([2, 4], np.uint8))], opset=11)


def m_qdq_ort():
    # The layout of ONNX Runtime's QDQ quantizer (per-channel int8 weights
    # and int32 bias as initializers behind DequantizeLinear, symmetric
    # activations without zero point) with com.microsoft Q/DQ, as it emits
    # them for per-channel models before opset 13.
    w = np.array([[[[1]], [[-2]]], [[[3]], [[-4]]]], np.int8)
    return model([
        node("QuantizeLinear", ["x", "s", "z"], ["xq"], "q", domain="com.microsoft"),
        node("DequantizeLinear", ["xq", "s", "z"], ["xd"], "dq", domain="com.microsoft"),
        node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], "wdq", axis=0,
             domain="com.microsoft"),
        node("DequantizeLinear", ["bq", "bs"], ["bd"], "bdq", axis=0,
             domain="com.microsoft"),
        node("Conv", ["xd", "wd", "bd"], ["c"], "conv"),
        node("QuantizeLinear", ["c", "s8"], ["cq"], "q8"),
        node("DequantizeLinear", ["cq", "s8"], ["y"], "dq8"),
    ], [vi("x", [1, 2, 2, 2])], [vi("y", [1, 2, 2, 2])],
        [init("s", np.float32(0.5)), init("z", np.int8(0)), init("w", w),
         init("ws", np.array([0.1, 0.2], np.float32)),
         init("wz", np.zeros(2, np.int8)),
         init("bq", np.array([10, -20], np.int32)),
         init("bs", np.array([0.05, 0.1], np.float32)),
         init("s8", np.float32(0.125))],
        opset=11, extra_opsets=[("com.microsoft", 1)])


def m_qdq_reinterpret():
    # DequantizeLinear with other parameters than the QuantizeLinear that
    # feeds it: ONNX passes the integers, so they are reinterpreted.
    return model([
        node("QuantizeLinear", ["x", "s1", "z"], ["q"], "q"),
        node("DequantizeLinear", ["q", "s2", "z"], ["y"], "dq"),
    ], [vi("x", [3])], [vi("y", [3])],
        [init("s1", np.float32(0.5)), init("s2", np.float32(0.25)),
         init("z", np.uint8(3))])


def m_bind():
    # Weights, scales and zero points as graph inputs (as in ONNX's node
    # tests), bound to constants with --const.
    x = vi("x", [1, 1, 3, 3])
    return (model([
        node("Conv", ["x", "w"], ["c"], "conv"),
        node("QuantizeLinear", ["c", "s", "z"], ["q"], "quant"),
        node("DequantizeLinear", ["q", "s", "z"], ["y"], "dequant"),
    ], [x, vi("w", [1, 1, "K", "K"]), vi("s", []), vi("z", [], TensorProto.UINT8)],
        [vi("y", [1, 1, 2, 2])]),
        {"w.pb": pb("w", np.full((1, 1, 2, 2), 0.5, np.float32)),
         "s.pb": pb("s", np.float32(0.25)), "z.pb": pb("z", np.uint8(7)),
         "w_i8.pb": pb("w", np.ones((1, 1, 2, 2), np.int8)),
         "w_rank3.pb": pb("w", np.ones((1, 2, 2), np.float32))})


# ---- bad input -------------------------------------------------------------------

def m_unknown_ops():
    return model([
        node("Foo", ["x"], ["a"], "f1"),
        node("Relu", ["a"], ["b"], "ok"),
        node("Bar", ["b"], ["c"], "b1"),
        node("Foo", ["c"], ["y"], "f2"),
        node("Baz", ["y"], ["z"], "bz", domain="com.example"),
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
    # Upsample-1 (the version in opset 5) is not handled; HardSwish does not
    # exist before opset 14: both nodes are reported.
    return model([node("Upsample", ["x"], ["u"], "up", height_scale=2.0,
                       width_scale=2.0),
                  node("HardSwish", ["u"], ["y"], "hswish")],
                 [vi("x", [1, 1, 2, 2])], [vi("y", [1, 1, 4, 4])], opset=5)


def m_opset0():
    return model([node("Relu", ["x"], ["y"], "relu")], [vi("x", [3])],
                 [vi("y", [3])], opset=0)


def m_new_op_version():
    # Opset 21's DequantizeLinear with blocked quantization.
    return model([node("DequantizeLinear", ["w", "s"], ["y"], "dq", axis=1,
                       block_size=2)],
                 [], [vi("y", [2, 4])],
                 [init("w", np.ones((2, 4), np.int8)),
                  init("s", np.ones((2, 2), np.float32))], opset=21)


def m_dangling_output():
    return model([node("Relu", ["x"], ["y"], "relu")], [vi("x", [3])],
                 [vi("y", [3]), vi("nowhere", [3])])


def m_bad_conv():
    # 3 input channels, weights for 4.
    return model([node("Conv", ["x", "w"], ["y"], "conv")],
                 [vi("x", [1, 3, 4, 4])], [vi("y", [1, 2, 2, 2])],
                 [init("w", np.ones((2, 4, 3, 3), np.float32))])


def m_missing_input():
    return model([node("Conv", ["x"], ["y"], "conv1")],
                 [vi("x", [1, 3, 4, 4])], [vi("y", [1, 2, 2, 2])])


def m_bad_attr_ints():
    # `perm` must be a list of ints; `strides` has the wrong length.
    return model([node("Transpose", ["x"], ["t"], "tr", perm=1.5),
                  ], [vi("x", [2, 3])], [vi("t", [3, 2])])


def m_bad_strides():
    return model([node("Conv", ["x", "w"], ["y"], "conv", strides=[1, 1, 1])],
                 [vi("x", [1, 1, 4, 4])], [vi("y", [1, 1, 2, 2])],
                 [init("w", np.ones((1, 1, 3, 3), np.float32))])


def m_dynamic_scale():
    # A scale computed at run time cannot go into a Quill type.
    return model([node("Abs", ["s"], ["sa"], "abs"),
                  node("QuantizeLinear", ["x", "sa"], ["y"], "quant")],
                 [vi("x", [3]), vi("s", [])], [vi("y", [3], TensorProto.UINT8)])


def m_bad_zero_point():
    # Zero point type int8 but the input is uint8.
    return model([node("DequantizeLinear", ["x", "s", "z"], ["y"], "dq")],
                 [vi("x", [3], TensorProto.UINT8)], [vi("y", [3])],
                 [init("s", np.float32(0.5)), init("z", np.int8(0))])


def m_bad_declared():
    # value_info disagrees with the inferred type.
    return model([node("Relu", ["x"], ["y"], "relu")], [vi("x", [3])],
                 [vi("y", [4])])


def m_declared_dynamic():
    # As PP-OCR mobile v2's classifier: outputs declared with -1 for a
    # dynamic dim (value_info and graph output), inferred 1x2; a bound
    # input declared [-1, 2].
    return (model([
        node("Add", ["x", "b"], ["s"], "add"),
        node("Softmax", ["s"], ["p"], "softmax", axis=1),
        node("Identity", ["p"], ["y"], "id"),
    ], [vi("x", [1, 2]), vi("b", [-1, 2])], [vi("y", [-1, 2])],
        vinfo=[vi("s", [-1, 2]), vi("p", [-1, -1])]),
        {"b.pb": pb("b", np.array([[0.5, -0.5]], np.float32)),
         "b_rank1.pb": pb("b", np.array([0.5, -0.5], np.float32))})


def m_dynamic_input():
    # A graph input declared with -1: dynamic, so it needs --input-shape.
    return model([node("Relu", ["x"], ["y"], "relu")], [vi("x", [-1, 3])],
                 [vi("y", [-1, 3])])


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
