#!/usr/bin/env python3
"""qat_imports.py - models from quantization-aware training tools in Quill.

  PYTHONPATH=PKGS /usr/bin/python3 test/conformance/qat_imports.py --quill Q

(run_qat_imports.sh installs PKGS: brevitas and its exporters' onnx,
onnxoptimizer, protobuf, next to Debian's python3-torch.)

1. Brevitas (the real tool): a QuantIdentity (8-bit input), a QuantConv2d
   with 4-bit per-channel weights, a 4-bit QuantReLU, a QuantLinear with
   6-bit weights; exported with export_qonnx (QONNX Quant nodes) and with
   export_onnx_qcdq (QuantizeLinear -> Clip -> DequantizeLinear). `quill
   run` of each must give the output of the Brevitas model in PyTorch,
   which computes the same fake quantization in float (relative error
   1e-5: float sums in another order).
2. MQBench's custom nodes (MQBench does not install here: built by hand
   per its torch.onnx symbolics): LearnablePerTensorAffine,
   FixedPerTensorAffine, FixedPerChannelAffine and
   FakeQuantizeLearnablePerchannelAffine around a Conv, against numpy's
   fake quantization (clamp(round(x / s + zp), qmin, qmax) - zp) * s.
3. The Brevitas QCDQ model in its integer form (canonicalize,
   fuse-activation, fuse-qdq: a qconv2d, the 4-bit ReLU a requantize) on
   the LLVM target against the interpreter (its last layer stays float).
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper


def quill_run(quill, model, x, tmp, extra=()):
    fi, fo = os.path.join(tmp, "x.npy"), os.path.join(tmp, "y.npy")
    np.save(fi, x)
    subprocess.run([quill, "run", model, "--input", fi, "--output", fo] + list(extra),
                   check=True)
    return np.load(fo)


def brevitas_model():
    import brevitas.nn as qnn

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = qnn.QuantIdentity(bit_width=8, return_quant_tensor=True)
            self.conv = qnn.QuantConv2d(3, 8, 3, weight_bit_width=4, bias=False,
                                        weight_scaling_per_output_channel=True,
                                        return_quant_tensor=True)
            self.relu = qnn.QuantReLU(bit_width=4, return_quant_tensor=True)
            self.flat = torch.nn.Flatten()
            self.fc = qnn.QuantLinear(8 * 6 * 6, 10, weight_bit_width=6, bias=False)

        def forward(self, x):
            return self.fc(self.flat(self.relu(self.conv(self.inp(x)))))
    torch.manual_seed(0)
    m = M()
    m.train()
    with torch.no_grad():  # let the activation quantizers see some data
        for _ in range(8):
            m(torch.randn(4, 3, 8, 8))
    m.eval()
    return m


def mqbench_models(rng):
    """(name, model, reference function) for each MQBench node kind."""
    w = (rng.standard_normal([4, 3, 3, 3]) * 0.3).astype(np.float32)
    out = []

    def fq(x, s, z, lo, hi, axis=None):
        if axis is not None:
            shape = [1] * x.ndim
            shape[axis] = -1
            s, z = s.reshape(shape), z.reshape(shape)
        z = np.clip(np.round(z), lo, hi)
        return ((np.clip(np.round(x / s) + z, lo, hi) - z) * s).astype(np.float32)

    def conv(x, ww):
        import torch.nn.functional as F
        return F.conv2d(torch.from_numpy(x), torch.from_numpy(ww)).numpy()

    def const(name, v, dtype=np.float32):
        return numpy_helper.from_array(np.asarray(v, dtype=dtype), name)

    for kind in ("LearnablePerTensorAffine", "FixedPerTensorAffine",
                 "FixedPerChannelAffine", "FakeQuantizeLearnablePerchannelAffine"):
        inits = [const("w", w)]
        per_channel = "Channel" in kind or "channel" in kind
        ws = (np.abs(w).reshape(4, -1).max(1) / 7).astype(np.float32) if per_channel \
            else np.float32(np.abs(w).max() / 7)
        wz = np.zeros_like(ws)
        inits += [const("ws", ws), const("wz", wz), const("as", 0.05), const("az", 3.4),
                  const("lo", -8, np.int64), const("hi", 7, np.int64),
                  const("alo", 0, np.int64), const("ahi", 255, np.int64),
                  const("axis", 0, np.int64)]
        act_kind = "FixedPerTensorAffine" if per_channel else kind
        nodes = [helper.make_node(act_kind, ["x", "as", "az", "alo", "ahi"], ["xq"])]
        if kind == "FixedPerChannelAffine":
            nodes.append(helper.make_node(kind, ["w", "ws", "wz", "axis", "lo", "hi"], ["wq"]))
        elif kind == "FakeQuantizeLearnablePerchannelAffine":
            nodes.append(helper.make_node(kind, ["w", "ws", "wz"], ["wq"],
                                          quant_min=-8, quant_max=7))
        else:
            nodes.append(helper.make_node(kind, ["w", "ws", "wz", "lo", "hi"], ["wq"]))
        nodes.append(helper.make_node("Conv", ["xq", "wq"], ["y"]))
        g = helper.make_graph(nodes, kind,
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 6, 6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 4, 4])],
                              inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])

        def ref(x, ws=ws, wz=wz, per_channel=per_channel):
            xq = fq(x, np.float32(0.05), np.float32(3.4), 0, 255)
            wq = fq(w, ws, wz, -8, 7, 0 if per_channel else None)
            return conv(xq, wq)
        out.append((kind, m, ref))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quill", required=True)
    a = ap.parse_args()
    from brevitas.export import export_onnx_qcdq, export_qonnx
    bad = 0
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        m = brevitas_model()
        x = torch.randn(1, 3, 8, 8)
        want = m(x).detach().numpy()
        for name, export in (("qonnx", export_qonnx), ("qcdq", export_onnx_qcdq)):
            path = os.path.join(tmp, name + ".onnx")
            export(m, x, export_path=path)
            kinds = sorted({"%s%s" % (n.domain + "." if n.domain else "", n.op_type)
                            for n in onnx.load(path).graph.node})
            got = quill_run(a.quill, path, x.numpy(), tmp)
            rel = float(np.abs(got - want).max() / np.abs(want).max())
            ok = rel <= 1e-5
            bad += not ok
            print("%s brevitas %-6s (%s): rel err %.2e" % (
                "ok  " if ok else "FAIL", name, ",".join(kinds), rel))
        # the QCDQ model in its integer form (QDQ fused: qconv2d, the 4-bit
        # ReLU a requantize) on the LLVM target against the interpreter; the
        # last layer is float (Brevitas leaves its output unquantized), so
        # its float sum may round in another order
        path = os.path.join(tmp, "qcdq.onnx")
        pipe = ["--pass-pipeline", "canonicalize,fuse-activation,fuse-qdq"]
        ir = subprocess.run([a.quill + "-translate", "--import-onnx", path],
                            check=True, capture_output=True, text=True).stdout
        fused = subprocess.run([a.quill + "-opt", "--pass-pipeline=" + pipe[1]],
                               input=ir, check=True, capture_output=True,
                               text=True).stdout
        ref = quill_run(a.quill, path, x.numpy(), tmp, pipe)
        jit = quill_run(a.quill, path, x.numpy(), tmp, pipe + ["--jit"])
        rel = float(np.abs(ref - jit).max() / np.abs(ref).max())
        ok = "qconv2d" in fused and rel <= 1e-6
        bad += not ok
        print("%s brevitas qcdq, integer form (qconv2d: %s): LLVM target vs "
              "interpreter rel err %.2e" % ("ok  " if ok else "FAIL",
                                            "qconv2d" in fused, rel))
        for kind, model, ref_fn in mqbench_models(rng):
            path = os.path.join(tmp, kind + ".onnx")
            onnx.save(model, path)
            xs = rng.standard_normal([1, 3, 6, 6]).astype(np.float32) * 3
            got = quill_run(a.quill, path, xs, tmp)
            want = ref_fn(xs)
            rel = float(np.abs(got - want).max() / np.abs(want).max())
            ok = rel <= 1e-5
            bad += not ok
            print("%s mqbench %-40s rel err %.2e" % ("ok  " if ok else "FAIL", kind, rel))
        # refused with a located error naming the node: BipolarQuant, an
        # unsupported rounding mode
        for kind, attrs, inputs, msg in (
                ("BipolarQuant", {}, ["x", "s"], "BipolarQuant is not supported"),
                ("Quant", {"rounding_mode": "FLOOR"}, ["x", "s", "z", "b"],
                 "rounding_mode 'FLOOR' is not supported")):
            n = helper.make_node(kind, inputs, ["y"], name="q0",
                                 domain="qonnx.custom_op.general", **attrs)
            g = helper.make_graph([n], "bad", [helper.make_tensor_value_info(
                "x", TensorProto.FLOAT, [4])], [helper.make_tensor_value_info(
                    "y", TensorProto.FLOAT, [4])],
                [numpy_helper.from_array(np.float32(v), k) for k, v in
                 (("s", 0.1), ("z", 0.0), ("b", 8.0))])
            path = os.path.join(tmp, "bad.onnx")
            onnx.save(helper.make_model(g, opset_imports=[
                helper.make_opsetid("", 13),
                helper.make_opsetid("qonnx.custom_op.general", 1)]), path)
            p = subprocess.run([a.quill, "run", path, "--input", os.path.join(tmp, "x.npy")],
                               capture_output=True, text=True)
            ok = p.returncode == 1 and "q0" in p.stderr and msg in p.stderr
            bad += not ok
            print("%s refused: %s" % ("ok  " if ok else "FAIL", p.stderr.strip()[:160]))
    print("FAILED" if bad else "all passed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
