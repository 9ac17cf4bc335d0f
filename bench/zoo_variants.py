#!/usr/bin/env python3
"""zoo_variants.py - output SQNR of zoo models under several quantize
variants (a backend config and options each, or a peer quantizer) on the
same calibration and evaluation samples, and each quantize's CPU time.

  PY=build/venv-peers/bin/python    # onnxruntime 1.31 + OpenVINO/NNCF
  $PY bench/zoo_variants.py build/quill /tmp/zoo OUT.jsonl \\
      resnet18,densenet121 vnni=x86-vnni tfl=tflite-int8 ort=ort nncf=nncf \\
      "vnnibc=x86-vnni --bias-correction" --samples 16
  $PY bench/zoo_variants.py --table OUT.jsonl [--baseline ort]

For each model of ZOODIR (NAME/model.onnx, calib/*.npy, eval/*.npy, as
test/models/zoo.py reads them) and each TAG=SPEC:

  BACKEND [OPTIONS]  `quill quantize --backend BACKEND --calib calib/*.npy
                     OPTIONS`, `quill run` (the interpreter: what the LLVM
                     and TFLite targets equal) on every evaluation sample
  ort                onnxruntime's quantize_static as zoo.py's ORT column
                     (QDQ, per-channel s8 weights, u8 MinMax activations),
                     run in onnxruntime
  nncf               OpenVINO's read_model + nncf.quantize (default preset)
                     on the calibration samples, run on OpenVINO's CPU
                     plugin (1 thread)

Every variant calibrates on the model's calibration samples and is
measured on the same evaluation samples: the eval files, and, with
--samples N beyond their number, N(0, 1) samples drawn with --seed, the
distribution export_torch.py draws its samples from (the PP-OCR models,
whose inputs are rendered text, use their eval files only). SQNR is
against onnxruntime's float outputs, over all samples together (zoo.py's
measure), and per sample ("per_sample": --table pairs them with the
baseline variant's: mean difference and its standard error). CPU time is
user + sys of the quantize (the child for quill, this process for the
peers; not wall time: the machine may be shared). One JSON line per
(model, variant) is printed and appended to OUT.jsonl as soon as it is
measured, so a stopped run keeps its rows.
"""
import argparse
import glob
import json
import math
import os
import resource
import subprocess
import sys
import tempfile

import numpy as np
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))


def sqnr(ref, got):
    ref = np.concatenate([r.ravel().astype(np.float64) for r in ref])
    got = np.concatenate([g.ravel().astype(np.float64) for g in got])
    n = np.sum((ref - got) ** 2)
    return float("inf") if n == 0 else float(10 * np.log10(np.sum(ref ** 2) / n))


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def self_cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def eval_samples(d, name, n, seed):
    xs = [np.load(f) for f in sorted(glob.glob(os.path.join(d, "eval", "*.npy")))][:n]
    if len(xs) < n and not name.startswith("ppocr"):
        rng = np.random.default_rng(seed)
        xs += [rng.standard_normal(xs[0].shape).astype(np.float32)
               for _ in range(n - len(xs))]
    return xs


def ort_session(path):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def run_quill(quill, model, spec, calib, xs, shape, tmp, tag):
    w = spec.split()
    q = os.path.join(tmp, tag + ".qir")
    c0 = child_cpu()
    p = subprocess.run([quill, "quantize", model, "--backend", w[0], "--calib",
                        ",".join(calib), "-o", q] + shape + w[1:],
                       capture_output=True, text=True)
    cpu = child_cpu() - c0
    if p.returncode:
        raise RuntimeError(p.stderr[-300:])
    got = []
    for i, x in enumerate(xs):
        fi = os.path.join(tmp, "x%d.npy" % i)
        fo = os.path.join(tmp, "y%d.npy" % i)
        np.save(fi, x)
        subprocess.run([quill, "run", q, "--input", fi, "--output", fo],
                       check=True, capture_output=True)
        got.append(np.load(fo))
    return got, cpu


def run_ort(model, calib, xs, tmp):
    sys.path.insert(0, os.path.join(HERE, "..", "test", "models"))
    sys.path.insert(0, os.path.join(HERE, "..", "test", "targets", "tflite", "Inputs"))
    import zoo  # noqa: E402  test/models/: the ORT column's quantize_static call
    path = os.path.join(tmp, "ort.onnx")
    c0 = self_cpu()
    zoo.ort_quantize(model, calib, path)
    cpu = self_cpu() - c0
    s = ort_session(path)
    iname = s.get_inputs()[0].name
    return [s.run(None, {iname: x})[0] for x in xs], cpu


def run_nncf(model, calib, xs):
    import nncf
    import openvino as ov
    core = ov.Core()
    c0 = self_cpu()
    q = nncf.quantize(core.read_model(model),
                      nncf.Dataset([np.load(f) for f in calib]),
                      subset_size=len(calib))
    cpu = self_cpu() - c0
    c = core.compile_model(q, "CPU", {"INFERENCE_NUM_THREADS": 1})
    return [c(x)[0] for x in xs], cpu


def measure(a):
    variants = [v.split("=", 1) for v in a.variants]
    for name in a.models.split(","):
        d = os.path.join(a.zoo, name)
        model = os.path.join(d, "model.onnx")
        calib = sorted(glob.glob(os.path.join(d, "calib", "*.npy")))
        xs = eval_samples(d, name, a.samples, a.seed)
        s = ort_session(model)
        iname = s.get_inputs()[0].name
        ref = [s.run(None, {iname: x})[0] for x in xs]
        shape = ["--input-shape", "%s=%s" % (iname, ",".join(map(str, xs[0].shape)))]
        tmp = tempfile.mkdtemp(dir=os.path.dirname(os.path.abspath(a.out)))
        for tag, spec in variants:
            row = {"model": name, "variant": tag, "spec": spec}
            try:
                if spec == "ort":
                    got, cpu = run_ort(model, calib, xs, tmp)
                elif spec == "nncf":
                    got, cpu = run_nncf(model, calib, xs)
                else:
                    got, cpu = run_quill(a.quill, model, spec, calib, xs, shape, tmp, tag)
                row.update({"sqnr": round(sqnr(ref, got), 2), "samples": len(xs),
                            "per_sample": [round(sqnr([r], [g]), 3)
                                           for r, g in zip(ref, got)],
                            "quantize_cpu_s": round(cpu, 1)})
            except Exception as e:  # noqa: BLE001 - a failure is a row too
                row["error"] = ("%s: %s" % (type(e).__name__, e))[-300:]
            print(json.dumps(row), flush=True)
            with open(a.out, "a") as f:
                f.write(json.dumps(row) + "\n")


def table(path, baseline):
    """Markdown: one row per model, one column per variant (the last row
    of each (model, variant) in the file wins); cells other than the
    baseline's give the paired per-sample difference from it."""
    rows = {}
    for line in open(path):
        r = json.loads(line)
        rows[(r["model"], r["variant"])] = r
    models = list(dict.fromkeys(m for m, _ in rows))
    tags = list(dict.fromkeys(t for _, t in rows))
    out = ["| model | samples | " + " | ".join(tags) + " |",
           "|---" * (len(tags) + 2) + "|"]
    for m in models:
        base = rows.get((m, baseline))
        cells, n = [], ""
        for t in tags:
            r = rows.get((m, t))
            if r is None:
                cells.append("")
                continue
            if "error" in r:
                cells.append("fails")
                continue
            n = r["samples"]
            c = "%.2f" % r["sqnr"]
            if base and t != baseline and "per_sample" in base:
                dd = np.array(r["per_sample"]) - np.array(base["per_sample"])
                se = float(dd.std(ddof=1) / math.sqrt(len(dd))) if len(dd) > 1 else 0.0
                c += " (%+.2f +- %.2f)" % (dd.mean(), se)
            cells.append(c)
        out.append("| %s | %s | %s |" % (m, n, " | ".join(cells)))
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("quill", nargs="?")
    ap.add_argument("zoo", nargs="?")
    ap.add_argument("out", nargs="?")
    ap.add_argument("models", nargs="?")
    ap.add_argument("variants", nargs="*", help="TAG=SPEC (see the module doc)")
    ap.add_argument("--samples", type=int, default=4,
                    help="evaluation samples per model (default 4)")
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--table", metavar="JSONL", help="print the table of a run")
    ap.add_argument("--baseline", default="ort")
    a = ap.parse_args()
    if a.table:
        print(table(a.table, a.baseline), end="")
        return 0
    if not a.variants:
        ap.print_help()
        return 2
    measure(a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
