"""Check an ONNX model and print it compactly, for FileCheck.

Usage: /usr/bin/python3 dump_onnx.py MODEL.onnx

Runs onnx.checker.check_model (full_check: shape inference too), then
prints
  model ir_version=8 opset=13 producer=quill metadata={...}
  input NAME TYPE[dims]          (graph inputs)
  init NAME TYPE[dims] = values  (initializers; the first 8 values)
  node NAME: OpType(in, ...) -> out, ... {attr=value, ...}
  value_info NAME TYPE[dims]
  output NAME TYPE[dims]
Needs Debian's python3-onnx (hence /usr/bin/python3).
"""
import sys

import onnx
from onnx import helper, numpy_helper


def tstr(tt):
    dims = ",".join(str(d.dim_value) if d.HasField("dim_value") else "?"
                    for d in tt.shape.dim)
    return "%s[%s]" % (onnx.TensorProto.DataType.Name(tt.elem_type), dims)


def attr_str(a):
    v = helper.get_attribute_value(a)
    if isinstance(v, bytes):
        return '"%s"' % v.decode()
    if isinstance(v, onnx.TensorProto):
        arr = numpy_helper.to_array(v)
        return "tensor %s%s" % (arr.dtype, list(arr.shape))
    if isinstance(v, float):
        return "%.9g" % v
    if isinstance(v, list):
        return "[%s]" % ", ".join("%.9g" % x if isinstance(x, float)
                                  else str(x) for x in v)
    return str(v)


def main():
    m = onnx.load(sys.argv[1])
    onnx.checker.check_model(m, full_check=True)
    g = m.graph
    meta = {p.key: p.value for p in m.metadata_props}
    print("model ir_version=%d opset=%s producer=%s metadata=%s" % (
        m.ir_version, ",".join("%s:%d" % (o.domain or "ai.onnx", o.version)
                               for o in m.opset_import),
        m.producer_name, meta))
    print("graph %s" % g.name)
    for i in g.input:
        print("input %s %s" % (i.name, tstr(i.type.tensor_type)))
    for t in g.initializer:
        arr = numpy_helper.to_array(t)
        vals = arr.flatten()[:8].tolist()
        print("init %s %s[%s] = %s" % (
            t.name, onnx.TensorProto.DataType.Name(t.data_type),
            ",".join(str(d) for d in t.dims), vals))
    for n in g.node:
        attrs = ", ".join("%s=%s" % (a.name, attr_str(a)) for a in n.attribute)
        print("node %s: %s(%s) -> %s%s" % (
            n.name, n.op_type, ", ".join(n.input), ", ".join(n.output),
            " {%s}" % attrs if attrs else ""))
    for v in g.value_info:
        print("value_info %s %s" % (v.name, tstr(v.type.tensor_type)))
    for o in g.output:
        print("output %s %s" % (o.name, tstr(o.type.tensor_type)))


if __name__ == "__main__":
    main()
