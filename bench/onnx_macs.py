"""onnx_macs.py - the multiply-accumulates of an ONNX model's Conv, Gemm
and MatMul nodes, from ONNX's shape inference (a node whose output shape
is not inferred counts 0). The MAC count behind the "% of peak" columns of
bench/run.py and bench/peers.py."""
import numpy as np
import onnx


def onnx_macs(path):
    m = onnx.shape_inference.infer_shapes(onnx.load(path))
    shapes = {}
    for vi in list(m.graph.value_info) + list(m.graph.input) + \
            list(m.graph.output):
        shapes[vi.name] = [d.dim_value for d in vi.type.tensor_type.shape.dim]
    for t in m.graph.initializer:
        shapes[t.name] = list(t.dims)
    total = 0
    for n in m.graph.node:
        if n.op_type == "Conv" and n.output[0] in shapes:
            w, y = shapes[n.input[1]], shapes[n.output[0]]
            total += int(np.prod(y)) * int(np.prod(w[1:]))
        elif n.op_type in ("Gemm", "MatMul") and n.output[0] in shapes:
            a, y = shapes[n.input[0]], shapes[n.output[0]]
            total += int(np.prod(y)) * a[-1]
    return total
