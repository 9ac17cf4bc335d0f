#!/usr/bin/env python3
"""zoo_variants.py - output SQNR of zoo models under several quantize
variants (a backend config and options each), and each quantize's CPU time.

  build/venv/bin/python bench/zoo_variants.py build/quill /tmp/zoo OUT.jsonl \\
      resnet18,densenet121 minmax=cfg-minmax.json "mse=x86-vnni" \\
      "msebc=x86-vnni --bias-correction"

For each model of ZOODIR (NAME/model.onnx, calib/*.npy, eval/*.npy, as
test/models/zoo.py reads them) and each TAG=BACKEND [OPTIONS]: `quill
quantize --backend BACKEND --calib calib/*.npy OPTIONS`, `quill run` of the
result on the first 4 evaluation samples, SQNR against onnxruntime's float
outputs (zoo.py's vnni column when BACKEND is x86-vnni). The quantize's
CPU time is user + sys of the child (not wall time: the machine may be
shared). One JSON line per (model, variant) is printed and appended to
OUT.jsonl as soon as it is measured, so a stopped run keeps its rows.
"""
import glob
import json
import os
import resource
import subprocess
import sys
import tempfile

import numpy as np
import onnxruntime as ort


def sqnr(ref, got):
    ref = np.concatenate([r.ravel().astype(np.float64) for r in ref])
    got = np.concatenate([g.ravel().astype(np.float64) for g in got])
    n = np.sum((ref - got) ** 2)
    return float("inf") if n == 0 else float(10 * np.log10(np.sum(ref ** 2) / n))


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main():
    if len(sys.argv) < 6:
        print(__doc__)
        return 2
    quill, zoo, out, models = sys.argv[1:5]
    variants = [v.split("=", 1) for v in sys.argv[5:]]
    for name in models.split(","):
        d = os.path.join(zoo, name)
        model = os.path.join(d, "model.onnx")
        calib = sorted(glob.glob(os.path.join(d, "calib", "*.npy")))
        xs = [np.load(f) for f in sorted(glob.glob(os.path.join(d, "eval", "*.npy")))[:4]]
        s = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        iname = s.get_inputs()[0].name
        ref = [s.run(None, {iname: x})[0] for x in xs]
        shape = ["--input-shape", "%s=%s" % (iname, ",".join(map(str, xs[0].shape)))]
        tmp = tempfile.mkdtemp(dir=os.path.dirname(os.path.abspath(out)))
        for tag, spec in variants:
            w = spec.split()
            q = os.path.join(tmp, tag + ".qir")
            c0 = child_cpu()
            p = subprocess.run([quill, "quantize", model, "--backend", w[0], "--calib",
                                ",".join(calib), "-o", q] + shape + w[1:],
                               capture_output=True, text=True)
            cpu = child_cpu() - c0
            if p.returncode:
                row = {"model": name, "variant": tag, "error": p.stderr[-300:]}
            else:
                got = []
                for i, x in enumerate(xs):
                    fi = os.path.join(tmp, "x%d.npy" % i)
                    fo = os.path.join(tmp, "y%d.npy" % i)
                    np.save(fi, x)
                    subprocess.run([quill, "run", q, "--input", fi, "--output", fo],
                                   check=True, capture_output=True)
                    got.append(np.load(fo))
                row = {"model": name, "variant": tag, "sqnr": round(sqnr(ref, got), 2),
                       "quantize_cpu_s": round(cpu, 1)}
            print(json.dumps(row), flush=True)
            with open(out, "a") as f:
                f.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
