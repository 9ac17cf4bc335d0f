#!/usr/bin/env python3
"""ocr_accuracy.py - PP-OCRv4 recognition accuracy, float against int8, for
Quill and the peers' quantizers, on the same rendered text lines.

  PY=$(scripts/pyenv.sh)            # or the peers' venv (numpy 2, OpenVINO)
  "$PY" bench/ocr_accuracy.py [--build build] [--lines 300] [--calib 32]
        [--work build/ocr] [--md docs/accuracy.md] [--quill-backends x86-vnni,...]
        [--quill "BACKEND [quantize options]"]... [--peers ort,openvino]
        [--json rows.json]
  "$PY" bench/ocr_accuracy.py --tables a.json,b.json,... [--md docs/accuracy.md]

On a loaded machine, run each engine (or a few) in a process of its own
with --json (--quill-backends '' --peers openvino-aa, say): a slow or
failing peer then costs only its own row, and --tables makes the one
table from those files (rows in the order given, the float row once).

The model is ch_PP-OCRv4_rec_infer.onnx from the rapidocr-onnxruntime wheel
(test/models/ppocr.py fetches it); its CTC alphabet is the model's own
`character` metadata. test/models/ppocr.py --text-lines renders the lines
(Debian's DejaVu/Liberation fonts, noise, blur; words and numbers from the
dictionary's printable ASCII): a labelled evaluation set (seed 1) and a
disjoint calibration set (seed 2). Every engine sees the same inputs.

Engines:
  float           onnxruntime, the float model
  quill BACKEND   `quill quantize --backend BACKEND` (calibration set), then
                  `quill compile` to an object file called through ctypes
                  (the code a user links); --quill "BACKEND OPTS" adds a
                  variant with more `quill quantize` options (e.g.
                  "x86-vnni --bias-correction"; BACKEND may be a config
                  file, named by its file name in the table)
  aimet           AIMET-ONNX's QuantizationSimModel, int8, min_max (its
                  default; aimet-tfe: tf_enhanced), run in its simulation
                  session; quark: AMD Quark's A8W8 QConfig (quark-adaround:
                  A8W8_ADAROUND), its QDQ model in onnxruntime. Both
                  install from PyPI (pip install aimet-onnx amd-quark, a
                  venv of their own: they pull PyTorch)
  ort int8        onnxruntime quantize_static, QDQ, per-channel s8 weights,
                  u8 activations, MinMax (its default)
  openvino int8   nncf.quantize (default preset) on the ONNX model, when
                  openvino and nncf import (the peers' venv); --peers
                  openvino-mixed: the MIXED preset; openvino-aa:
                  nncf.quantize_with_accuracy_control (max drop 0.005 in
                  character accuracy on the calibration lines' labels)

Metrics: character accuracy 1 - sum(edit distance) / sum(label length)
against the rendered text, whole lines equal, and per-timestep argmax
agreement with the float model. Greedy CTC decoding (blank 0, repeats
collapsed), as PaddleOCR decodes.
"""
import argparse
import ctypes
import glob
import json
import os
import re
import resource
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import md_section  # noqa: E402  bench/

BEGIN = "<!-- BEGIN bench/ocr_accuracy.py -->"
END = "<!-- END bench/ocr_accuracy.py -->"


def sh(cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def alphabet(model):
    meta = {p.key: p.value for p in onnx.load(model, load_external_data=False).metadata_props}
    return ["<blank>"] + meta["character"].split("\n") + [" "]


def decode(logits, chars):
    ids = logits.argmax(-1)
    out, prev = [], 0
    for i in ids:
        if i != prev and i != 0:
            out.append(chars[i])
        prev = i
    return "".join(out)


def edit_distance(a, b):
    d = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, d[0] = d[0], i
        for j, cb in enumerate(b, 1):
            prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (ca != cb))
    return d[len(b)]


def ort_session(path, threads=2):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def cpu_s():
    """CPU seconds (user + sys) of this process, its threads and its waited-for
    children: a preparation's cost that the machine's load does not change."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime + c.ru_utime + c.ru_stime


def variant_label(spec):
    """'BACKEND OPTS' as the table names it: a config file by its name, a
    long --keep-float list by its length."""
    words = spec.split()
    out = [os.path.splitext(os.path.basename(words[0]))[0]]
    for w in words[1:]:
        if out[-1] == "--keep-float" and len(w) > 40:
            w = "(%d ops)" % len(w.split(","))
        out.append(w)
    return " ".join(out)


def quill_engine(build, model, spec, calib_dir, work):
    words = spec.split()
    tag = re.sub(r"[^A-Za-z0-9.]+", "_", variant_label(spec)).strip("_")
    qir = os.path.join(work, "quill-%s.qir" % tag)
    obj = os.path.join(work, "quill-%s.o" % tag)
    so = os.path.join(work, "quill-%s.so" % tag)
    t = cpu_s()
    sh([os.path.join(build, "quill"), "quantize", model, "--backend", words[0],
        "--calib", calib_dir, "--input-shape", "x=1,3,48,320", "-o", qir] + words[1:])
    sh([os.path.join(build, "quill"), "compile", qir, "-o", obj, "--name", "m"])
    sh(["cc", "-shared", "-o", so, obj, "-lm"])
    prep = cpu_s() - t
    hdr = open(obj[:-2] + ".h").read()
    scratch = int(re.search(r"M_SCRATCH_SIZE (\d+)", hdr).group(1))
    out_size = int(re.search(r"M_OUT0_SIZE (\d+)", hdr).group(1))
    lib = ctypes.CDLL(so)
    fn = lib.m_run_argv
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    buf = np.zeros(scratch + 64, np.uint8)
    off = (-buf.ctypes.data) % 64
    y = np.zeros(out_size, np.float32)
    ptrs = (ctypes.c_void_p * 3)()

    def run(x):
        x = np.ascontiguousarray(x, np.float32)
        ptrs[0], ptrs[1], ptrs[2] = x.ctypes.data, y.ctypes.data, buf.ctypes.data + off
        if fn(ptrs) != 0:
            raise RuntimeError("m_run failed")
        return y.reshape(1, -1, 6625).copy()
    run.keep = (lib, buf, y, ptrs)
    return run, prep


def calib_reader(calib):
    """onnxruntime's CalibrationDataReader over the calibration lines (the
    form onnxruntime's and Quark's quantizers read)."""
    from onnxruntime.quantization import CalibrationDataReader

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter([{"x": c[None]} for c in calib])

        def get_next(self):
            return next(self.it, None)
    return Reader()


def ort_int8_engine(model, calib, work):
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static
    out = os.path.join(work, "ort-int8.onnx")
    t = cpu_s()
    quantize_static(model, out, calib_reader(calib), quant_format=QuantFormat.QDQ,
                    per_channel=True, activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8)
    s = ort_session(out)
    return (lambda x: s.run(None, {"x": x})[0]), cpu_s() - t


def openvino_engine(model, calib, mode="default", calib_labels=None, chars=None):
    """nncf.quantize with its defaults (mode "default"), with the MIXED
    preset (asymmetric activations; "mixed"), or
    nncf.quantize_with_accuracy_control ("aa": layers reverted to float
    until the character accuracy on the calibration lines, their labels
    as validation, drops by at most 0.005)."""
    import nncf
    import openvino as ov
    t = cpu_s()
    core = ov.Core()
    m = core.read_model(model)
    m.reshape({"x": [1, 3, 48, 320]})
    data = nncf.Dataset([c[None] for c in calib])
    if mode == "mixed":
        q = nncf.quantize(m, data, preset=nncf.QuantizationPreset.MIXED)
    elif mode == "aa":
        def validate(compiled, items):
            dist = total = 0
            for (x, lab) in items:
                y = compiled(x)[0]
                dist += edit_distance(decode(y[0], chars), lab)
                total += len(lab)
            return 1 - dist / total
        val = nncf.Dataset(list(zip([c[None] for c in calib], calib_labels)))
        q = nncf.quantize_with_accuracy_control(
            m, data, val, validation_fn=validate, max_drop=0.005,
            drop_type=nncf.DropType.ABSOLUTE)
    else:
        q = nncf.quantize(m, data)
    c = core.compile_model(q, "CPU", {"INFERENCE_NUM_THREADS": 2})
    return (lambda x: c(x)[0]), cpu_s() - t


def aimet_engine(model, calib, scheme):
    """AIMET-ONNX's QuantizationSimModel (int8 weights and activations, its
    default config file) calibrated with quant scheme `scheme` (min_max,
    AIMET's default, or tf_enhanced, its SQNR-searched ranges), evaluated as
    AIMET users do: its simulation session (fake quantization in float)."""
    from aimet_onnx.quantsim import QuantizationSimModel
    t = cpu_s()
    sim = QuantizationSimModel(onnx.load(model), param_type="int8",
                               activation_type="int8", quant_scheme=scheme)
    sim.compute_encodings([{"x": c[None]} for c in calib])
    return (lambda x: sim.session.run(None, {"x": x})[0]), cpu_s() - t


def quark_engine(model, calib, work, qconfig):
    """AMD Quark for ONNX: ModelQuantizer with one of its shipped QConfigs
    (A8W8: int8 symmetric activations and weights, MinMax; A8W8_ADAROUND:
    the same with AdaRound), its QDQ model run in onnxruntime."""
    import quark.onnx as quark
    out = os.path.abspath(os.path.join(work, "quark-%s.onnx" % qconfig.lower()))
    t = cpu_s()
    # Quark writes quantized_info.csv into the current directory: the work
    # directory's, not the checkout's
    here = os.getcwd()
    os.chdir(work)
    try:
        quark.ModelQuantizer(getattr(quark, qconfig + "_QCONFIG")).quantize_model(
            os.path.abspath(os.path.join(here, model)), out, calib_reader(calib))
    finally:
        os.chdir(here)
    s = ort_session(out)
    return (lambda x: s.run(None, {"x": x})[0]), cpu_s() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work")
    ap.add_argument("--lines", type=int, default=300)
    ap.add_argument("--calib", type=int, default=32)
    ap.add_argument("--quill-backends", default="x86-vnni")
    ap.add_argument("--quill", action="append", default=[],
                    help="a Quill variant: 'BACKEND [quantize options]' (repeatable)")
    ap.add_argument("--peers", default="ort,openvino",
                    help="peer engines to run: ort, openvino, openvino-mixed, "
                         "openvino-aa, aimet, aimet-tfe, quark, quark-adaround "
                         "(comma list, '' for none)")
    ap.add_argument("--json")
    ap.add_argument("--md")
    ap.add_argument("--tables",
                    help="comma list of --json files: write their rows as one table, run nothing")
    a = ap.parse_args()
    if a.tables:
        rows, seen = [], set()
        for f in a.tables.split(","):
            for r in json.load(open(f)):
                if r["engine"] not in seen:
                    seen.add(r["engine"])
                    rows.append(r)
        return write_table(rows, a)
    work = a.work or os.path.join(a.build, "ocr")
    os.makedirs(work, exist_ok=True)
    model = os.path.join(work, "ppocr_rec", "model.onnx")
    if not os.path.exists(model):
        sh(["/usr/bin/python3", os.path.join(ROOT, "test/models/ppocr.py"), work,
            "--pip", sys.executable, "ppocr_rec"])
    ev, cal = os.path.join(work, "eval"), os.path.join(work, "calib")
    for d, n, seed in ((ev, a.lines, 1), (cal, a.calib, 2)):
        if not os.path.exists(os.path.join(d, "x.npy")) or \
                len(json.load(open(os.path.join(d, "labels.json")))) != n:
            sh(["/usr/bin/python3", os.path.join(ROOT, "test/models/ppocr.py"),
                "--text-lines", str(n), "--seed", str(seed), d])
    xs = np.load(os.path.join(ev, "x.npy"))
    labels = json.load(open(os.path.join(ev, "labels.json")))
    calib = np.load(os.path.join(cal, "x.npy"))
    cdir = os.path.join(cal, "samples")
    os.makedirs(cdir, exist_ok=True)
    for i, c in enumerate(calib):
        np.save(os.path.join(cdir, "s%03d.npy" % i), c[None])
    chars = alphabet(model)

    engines = []
    fs = ort_session(model)
    engines.append(("float (onnxruntime)", lambda x: fs.run(None, {"x": x})[0], 0.0))
    specs = [b for b in a.quill_backends.split(",") if b] + a.quill
    for b in specs:
        try:
            run, prep = quill_engine(a.build, model, b, cdir, work)
            engines.append(("Quill int8, %s" % variant_label(b), run, prep))
        except Exception as e:  # noqa: BLE001 - reported in the table
            engines.append(("Quill int8, %s" % variant_label(b), e, 0.0))
    peers = a.peers.split(",")
    if "ort" in peers:
        try:
            run, prep = ort_int8_engine(model, calib, work)
            engines.append(("onnxruntime %s quantize_static" % ort.__version__, run, prep))
        except Exception as e:  # noqa: BLE001
            engines.append(("onnxruntime quantize_static", e, 0.0))
    calib_labels = json.load(open(os.path.join(cal, "labels.json")))
    for peer, mode, what in (("openvino", "default", "nncf.quantize"),
                             ("openvino-mixed", "mixed", "nncf.quantize MIXED preset"),
                             ("openvino-aa", "aa", "nncf accuracy control, max drop 0.005")):
        if peer not in peers:
            continue
        try:
            run, prep = openvino_engine(model, calib, mode, calib_labels, chars)
            import openvino
            engines.append(("OpenVINO %s + %s" % (openvino.__version__.split("-")[0], what),
                            run, prep))
        except ImportError:
            pass
        except Exception as e:  # noqa: BLE001
            engines.append(("OpenVINO + %s" % what, e, 0.0))

    for peer, scheme in (("aimet", "min_max"), ("aimet-tfe", "tf_enhanced")):
        if peer in peers:
            try:
                import aimet_onnx
                run, prep = aimet_engine(model, calib, scheme)
                engines.append(("AIMET-ONNX %s QuantizationSimModel, %s" % (
                    aimet_onnx.__version__, scheme), run, prep))
            except Exception as e:  # noqa: BLE001
                engines.append(("AIMET-ONNX, %s" % scheme, e, 0.0))
    for peer, qc in (("quark", "A8W8"), ("quark-adaround", "A8W8_ADAROUND")):
        if peer in peers:
            try:
                import quark
                run, prep = quark_engine(model, calib, work, qc)
                engines.append(("AMD Quark %s %s" % (quark.__version__, qc), run, prep))
            except Exception as e:  # noqa: BLE001
                engines.append(("AMD Quark %s" % qc, e, 0.0))

    rows, ref_ids = [], None
    for name, run, prep in engines:
        if isinstance(run, Exception):
            rows.append({"engine": name, "error": str(run).splitlines()[0][:200]})
            continue
        dist = total = exact = 0
        agree = steps = 0
        ids_all, errs = [], []
        for i, (x, lab) in enumerate(zip(xs, labels)):
            y = run(x[None])
            ids = y[0].argmax(-1)
            ids_all.append(ids)
            if ref_ids is not None:
                agree += int(np.sum(ids == ref_ids[i]))
                steps += ids.size
            text = decode(y[0], chars)
            errs.append(edit_distance(text, lab))
            dist += errs[-1]
            total += len(lab)
            exact += text == lab
        if ref_ids is None:
            ref_ids = ids_all
        rows.append({"engine": name, "char_acc": 1 - dist / total,
                     "line_errs": errs, "line_lens": [len(l) for l in labels],
                     "lines_exact": exact / len(labels),
                     "argmax_agree": agree / steps if steps else 1.0,
                     "prepare_s": round(prep, 1), "lines": len(labels),
                     "calib": len(calib)})
        print(json.dumps({k: v for k, v in rows[-1].items()
                          if not k.startswith("line_")}), flush=True)
    if a.json:
        json.dump(rows, open(a.json, "w"), indent=1)
    return write_table(rows, a)


def paired(ref, r):
    """r's character accuracy minus ref's in points, with the standard error
    of that difference over the lines (both engines read the same lines):
    d_i = ref's errors - r's errors on line i; the difference is
    sum(d) / sum(len) and its error sqrt(n var(d)) / sum(len)."""
    if ref is None or r is ref or "line_errs" not in r or \
            len(r["line_errs"]) != len(ref["line_errs"]):
        return "-"
    d = np.array(ref["line_errs"], float) - np.array(r["line_errs"], float)
    total = float(sum(r["line_lens"]))
    se = np.sqrt(len(d) * d.var(ddof=1)) / total if len(d) > 1 else 0.0
    return "%+.2f +- %.2f" % (100 * d.sum() / total, 100 * se)


def write_table(rows, a):
    """Prints the rows' table (and writes it into --md)."""
    n = next((r for r in rows if "lines" in r), {"lines": a.lines, "calib": a.calib})
    out = ["PP-OCRv4 recognition (pretrained), %d rendered text lines, calibration "
           "on %d other lines:" % (n["lines"], n["calib"]), "",
           "| engine | character accuracy | against float, points | lines exact | argmax = float | quantize + compile CPU s |",
           "|---|---|---|---|---|---|"]
    ref = rows[0] if rows and "line_errs" in rows[0] else None
    for r in rows:
        if "error" in r:
            out.append("| %s | fails: `%s` | | | | |" % (r["engine"], r["error"]))
        else:
            out.append("| %s | %.4f | %s | %.3f | %.4f | %s |" % (
                r["engine"], r["char_acc"], paired(ref, r), r["lines_exact"],
                r["argmax_agree"], r["prepare_s"] or "-"))
    text = "\n".join(out) + "\n"
    print(text)
    if a.md:
        md_section.write_between(a.md, text, BEGIN, END)
    return 0


if __name__ == "__main__":
    sys.exit(main())
