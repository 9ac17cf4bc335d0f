#!/usr/bin/env python3
"""zoo_variants.py - output SQNR of zoo models under several quantize
variants (a backend config and options each, or a peer quantizer) on the
same calibration and evaluation samples, and each quantize's CPU time.

  PY=build/venv-peers/bin/python    # onnxruntime 1.31 + OpenVINO/NNCF
  $PY bench/zoo_variants.py build/quill /tmp/zoo OUT.jsonl \\
      resnet18,densenet121 vnni=x86-vnni tfl=tflite-int8 ort=ort nncf=nncf \\
      "vnnibc=x86-vnni --bias-correction" --samples 16
  $PY bench/zoo_variants.py --table OUT.jsonl[,MORE.jsonl] [--baseline ort]
      [--group "TITLE=BASE,TAG,..."]... [--md docs/accuracy.md [--marker M]]

For each model of ZOODIR (NAME/model.onnx, calib/*.npy, eval/*.npy, as
test/models/zoo.py reads them) and each TAG=SPEC:

  BACKEND [OPTIONS]  `quill quantize --backend BACKEND --calib calib/*.npy
                     OPTIONS`, `quill run` (the interpreter: what the LLVM
                     and TFLite targets equal) on every evaluation sample;
                     BACKEND is a shipped config, a config file, or pt-int8
                     / pt-w4: tflite-int8 with per-tensor 8-bit / 4-bit
                     weights, written by bench/accuracy.py's
                     derived_configs into the run's directory
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
measured, so a stopped run keeps its rows; each row also records the
commit of this checkout (git describe --always --dirty) and the UTC date.

--table prints a markdown table (several JSONL files, comma-separated,
are read as one run: the last row of a (model, variant) wins). Without
--group it has one column per variant, paired against --baseline; each
--group "TITLE=BASE,TAG,..." makes one table of its own with BASE and the
TAGs as columns, each paired against BASE (a per-backend table: the plain
variant and the same backend's options, plus a reference like ort). A
last row sums each column's quantize CPU seconds (models counted in
brackets), and a line above the tables names the commits and dates of
the rows. --md FILE writes the output between the markers
`<!-- zoo_variants M: begin -->` and `<!-- zoo_variants M: end -->` (M
from --marker, default "table") in FILE (bench/md_section.py), the
prose around them untouched.
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
import time

import numpy as np
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import md_section  # noqa: E402  bench/, beside this script


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


def checkout_commit():
    p = subprocess.run(["git", "-C", HERE, "describe", "--always", "--dirty"],
                       capture_output=True, text=True)
    return p.stdout.strip() or "unknown"


def backend_arg(name, tmp):
    """pt-int8 and pt-w4 are written from tflite-int8.json (accuracy.py)."""
    if name not in ("pt-int8", "pt-w4"):
        return name
    import accuracy  # noqa: E402  bench/, beside this script
    return accuracy.derived_configs(tmp)[name]


def run_quill(quill, model, spec, calib, xs, shape, tmp, tag):
    w = spec.split()
    w[0] = backend_arg(w[0], tmp)
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
    commit = checkout_commit()
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
            row = {"model": name, "variant": tag, "spec": spec,
                   "commit": commit,
                   "date": time.strftime("%Y-%m-%d", time.gmtime())}
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


def load_rows(paths):
    rows = {}
    for path in paths.split(","):
        for line in open(path):
            r = json.loads(line)
            rows[(r["model"], r["variant"])] = r
    return rows


def one_table(rows, models, tags, baseline):
    """One row per model, one column per tag; cells other than the
    baseline's give the paired per-sample difference from it."""
    out = ["| model | samples | " + " | ".join(tags) + " |",
           "|---" * (len(tags) + 2) + "|"]
    cpu = {t: [0.0, 0] for t in tags}
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
            cpu[t][0] += r["quantize_cpu_s"]
            cpu[t][1] += 1
            c = "%.2f" % r["sqnr"]
            if base and t != baseline and "per_sample" in base:
                dd = np.array(r["per_sample"]) - np.array(base["per_sample"])
                se = float(dd.std(ddof=1) / math.sqrt(len(dd))) if len(dd) > 1 else 0.0
                c += " (%+.2f +- %.2f)" % (dd.mean(), se)
            cells.append(c)
        if n != "":
            out.append("| %s | %s | %s |" % (m, n, " | ".join(cells)))
    out.append("| quantize CPU s (models) | | %s |" % " | ".join(
        "%.1f (%d)" % tuple(cpu[t]) if cpu[t][1] else "" for t in tags))
    return "\n".join(out) + "\n"


def table(paths, baseline, groups=()):
    """Markdown of a run: the rows' commits and dates, then one table (all
    variants against baseline) or one per group ("TITLE=BASE,TAG,...")."""
    rows = load_rows(paths)
    models = list(dict.fromkeys(m for m, _ in rows))
    tags = list(dict.fromkeys(t for _, t in rows))
    prov = {}
    for r in rows.values():
        prov.setdefault((r.get("commit", "unknown"), r.get("date", "unknown")),
                        []).append(1)
    text = "Rows: %d (model, variant) pairs; %s.\n\n" % (len(rows), "; ".join(
        "commit %s, %s: %d" % (c, d, len(v)) for (c, d), v in sorted(prov.items())))
    if not groups:
        return text + one_table(rows, models, tags, baseline)
    for g in groups:
        title, cols = g.split("=", 1)
        cols = cols.split(",")
        text += "%s (columns against %s):\n\n" % (title, cols[0])
        text += one_table(rows, models, cols, cols[0]) + "\n"
    return text


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
    ap.add_argument("--table", metavar="JSONL[,JSONL]",
                    help="print the table of a run")
    ap.add_argument("--baseline", default="ort")
    ap.add_argument("--group", action="append", default=[],
                    metavar="TITLE=BASE,TAG,...",
                    help="one table of these columns against BASE (repeatable)")
    ap.add_argument("--md", metavar="FILE",
                    help="also write the tables between the markers in FILE")
    ap.add_argument("--marker", default="table",
                    help="the markers' name (default: table)")
    a = ap.parse_args()
    if a.table:
        text = table(a.table, a.baseline, a.group)
        print(text, end="")
        if a.md:
            md_section.write_between(a.md, text,
                                     "<!-- zoo_variants %s: begin -->" % a.marker,
                                     "<!-- zoo_variants %s: end -->" % a.marker)
        return 0
    if not a.variants:
        ap.print_help()
        return 2
    measure(a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
