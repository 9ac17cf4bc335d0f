#!/usr/bin/env python3
"""fuse-qdq on onnxruntime's own QDQ model of the digits example, against
onnxruntime (ctest passes.fuse-qdq-ort).

    fuse_qdq_ort.py --quill-translate T --quill-opt O --quill Q [--limit N]

1. `quill-translate --import-onnx examples/digits/model.ort-qdq.onnx`
   gives the reference quantized form (QDQ pairs around float ops);
2. `quill-opt --pass-pipeline=fuse-qdq[{backend=B}]` rewrites it into
   integer ops, for no backend (ONNX semantics: half_even, float
   requantization) and for tflite-int8 (fixed point, tflite rounding); the
   script checks that every conv, the gemm, the add and the pools were
   fused (no float op reads a dequantized value any more);
3. `quill run` evaluates the reference form and both fused models on the
   test images, onnxruntime the .onnx file.

The model ends with a DequantizeLinear (scale s, zero point z), so every
output is (q - z) * s: differences divided by s are differences of the
quantized logits in LSB. Prints the LSB histograms and the accuracies, and
fails if the fused ONNX-semantics model differs from onnxruntime by more
than 1 LSB anywhere, or if an accuracy drops below onnxruntime's minus 1%.
Exit 77 (skip) if onnxruntime cannot be imported.
"""
import argparse
import collections
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
DIGITS = os.path.join(ROOT, "examples", "digits")
MODEL = os.path.join(DIGITS, "model.ort-qdq.onnx")


def sh(argv):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if p.returncode != 0:
        sys.exit(f"fuse_qdq_ort: {' '.join(argv)} failed ({p.returncode}):\n"
                 f"{p.stderr}")
    return p


def quill_logits(quill, model, xs, tmp):
    out = []
    inp, res = os.path.join(tmp, "in.npy"), os.path.join(tmp, "out.npy")
    for x in xs:
        np.save(inp, x[None].astype(np.float32))
        sh([quill, "run", model, "--input", inp, "--output", res])
        out.append(np.load(res)[0])
    return np.array(out)


def output_scale(qir):
    """The scale of the quantized logits (the last DequantizeLinear's
    operand, defined by `%logits_QuantizeLinear_Output = quantize ...`)."""
    text = open(qir).read()
    i = text.rfind("logits_QuantizeLinear_Output = ")
    seg = text[i:text.find("\n", i)]
    s = seg[seg.rfind("!quant.uniform<"):]
    return float(s.split(",")[1].split(":")[0])


def hist(d):
    c = collections.Counter(np.abs(d).round().astype(int).ravel().tolist())
    return ", ".join(f"{k} LSB: {v}" for k, v in sorted(c.items()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quill-translate", required=True)
    ap.add_argument("--quill-opt", required=True)
    ap.add_argument("--quill", required=True)
    ap.add_argument("--limit", type=int, default=0)
    args = ap.parse_args()
    try:
        import onnxruntime as ort
    except ImportError:
        print("SKIP: onnxruntime is not importable")
        return 77

    x = np.load(os.path.join(DIGITS, "test_x.npy"))
    y = np.load(os.path.join(DIGITS, "test_y.npy"))
    if args.limit:
        x, y = x[:args.limit], y[:args.limit]

    with tempfile.TemporaryDirectory() as tmp:
        ref = os.path.join(tmp, "ref.qir")
        sh([args.quill_translate, "--import-onnx", MODEL, "-o", ref])
        models = {"reference form": ref}
        for name, pipe in (("fused (no backend)", "fuse-qdq"),
                           ("fused (tflite-int8)",
                            "fuse-qdq{backend=tflite-int8}")):
            out = os.path.join(tmp, name.split()[1].strip("()") + ".qir")
            p = sh([args.quill_opt, ref, "--pass-pipeline=" + pipe,
                    "--pass-statistics", "-o", out])
            stats = [l.strip() for l in p.stderr.splitlines() if "(S)" in l]
            print(f"{name}: " + "; ".join(s.replace("(S) ", "")
                                          for s in stats))
            unfused = [s for s in stats if "num-unfused" in s]
            if unfused:
                sys.exit(f"fuse_qdq_ort: {name} left float ops: {unfused}")
            models[name] = out
        scale = output_scale(ref)

        sess = ort.InferenceSession(MODEL, providers=["CPUExecutionProvider"])
        iname = sess.get_inputs()[0].name
        o = np.array([sess.run(None, {iname: xi[None]})[0][0] for xi in x])
        acc = {"onnxruntime": float((o.argmax(1) == y).mean())}
        fail = False
        for name, path in models.items():
            q = quill_logits(args.quill, path, x, tmp)
            d = (q - o) / scale
            acc[name] = float((q.argmax(1) == y).mean())
            agree = float((q.argmax(1) == o.argmax(1)).mean())
            print(f"{name} vs onnxruntime: max {np.abs(d).max():.0f} LSB "
                  f"({hist(d)}); argmax agreement {agree:.4f}")
            if name == "fused (no backend)" and np.abs(d).max() > 1.5:
                fail = True
        for name, a in acc.items():
            print(f"accuracy {name}: {a:.4f} ({round(a * len(y))}/{len(y)})")
            if a < acc["onnxruntime"] - 0.01:
                fail = True
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
