#!/usr/bin/python3
"""accuracy.py - what the accuracy passes (equalize, bias-correction) buy:
accuracy and output SQNR of Quill's quantized models with and without them.

    /usr/bin/python3 bench/accuracy.py build/quill [--out DIR]
        [--write docs/accuracy.md] [--models digits,mobilenet_v2]
        [--max-samples N]

Every number comes from one `quill report MODEL --backend B --calib C
--format json [flags]` run: `outputs[0].sqnr_db` is the model output's SQNR
of the quantized model against the float model over the calibration
samples, `accuracy` (digits only) the test-set accuracy (--eval / --labels)
of the reference form (`quantized`) and of the LLVM-compiled integer model
(`compiled`; they differ where a requantization rounds a near-tie
otherwise, docs/quantization.md).

Models:
  digits        examples/digits/model.onnx, its 100 calibration samples,
                the 360 test images (float accuracy 0.9972)
  mobilenet_v2  torchvision's, random weights with the BatchNorm statistics
                re-estimated (bench/export_torchvision.py, run here into
                DIR; needs torch), its 8 random calibration samples; SQNR
                only (no labels), measured on the calibration samples

Configs: the shipped tflite-int8 (per-channel weights) and power2
(per-tensor power-of-two scales), and four made here from tflite-int8:
`pt-int8` (per-tensor weights), `w4` and `pt-w4` (4-bit weights in
[-7, 7], per channel and per tensor) and `w2` (2-bit weights in [-1, 1]
per channel); MobileNetV2 with pt-int8 and tflite-int8. Variants on the
digits: the config as it is ("plain": the shipped observers),
--bias-correction, --equalize, both, --adaround-iters 2000 and all three;
on MobileNetV2 none, the first four and --equalize=relu6 (relu6 treated
as relu, the DFQ paper's choice), with and without bias correction.

--write FILE puts each model's table between this script's markers for it
in FILE (bench/md_section.py), so the models can run as separate
processes. Exit status 1 if a quill command fails (its output
is shown).
"""
import argparse
import copy
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import md_section  # bench/, beside this script

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARK = "<!-- bench/accuracy.py %s results: %s -->"
VARIANTS = [("plain", []), ("bias-corr", ["--bias-correction"]),
            ("CLE", ["--equalize"]),
            ("CLE + bias-corr", ["--equalize", "--bias-correction"])]
ADAROUND = [("AdaRound", ["--adaround-iters", "2000"]),
            ("CLE + bias-corr + AdaRound",
             ["--equalize", "--bias-correction", "--adaround-iters", "2000"])]
DIGITS_CONFIGS = ["tflite-int8", "pt-int8", "power2", "w4", "pt-w4", "w2"]
RELU6 = [("CLE relu6", ["--equalize=relu6"]),
         ("CLE relu6 + bias-corr", ["--equalize=relu6", "--bias-correction"])]
# MobileNetV2 rows (each report takes minutes in the reference interpreter)
MOBILENET = [("pt-int8", VARIANTS + RELU6),
             ("tflite-int8", [VARIANTS[0], RELU6[1]])]


def derived_configs(out):
    """pt-int8, w4, pt-w4 and w2 from tflite-int8.json; returns {name:
    path}."""
    base = json.load(open(os.path.join(ROOT, "backends", "tflite-int8.json")))
    made = {}
    for name, pt, w in (("pt-int8", True, {}),
                        ("w4", False, {"bits": 4, "range": [-7, 7]}),
                        ("pt-w4", True, {"bits": 4, "range": [-7, 7]}),
                        ("w2", False, {"bits": 2, "range": [-1, 1]})):
        c = copy.deepcopy(base)
        c["name"] = name
        c["description"] = "tflite-int8 with %s%s weights" % (
            "per-tensor" if pt else "per-channel",
            ", %d-bit" % w["bits"] if w else "")
        if pt:
            c["weight"]["granularity"] = "per_tensor"
        c["weight"].update(w)
        path = os.path.join(out, name + ".json")
        with open(path, "w") as f:
            json.dump(c, f, indent=1)
        made[name] = path
    return made


def report(quill, model, backend, calib, flags, extra):
    argv = [quill, "report", model, "--backend", backend, "--calib", calib,
            "--format", "json"] + extra + flags
    t0 = time.time()
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if p.returncode != 0:
        sys.stderr.write(f"accuracy: '{shlex.join(argv)}' exited with "
                         f"{p.returncode}\n{p.stderr}")
        sys.exit(1)
    r = json.loads(p.stdout)
    sqnr = r["outputs"][0]["sqnr_db"]
    acc = r["accuracy"]
    return {"sqnr": sqnr, "acc": acc["quantized"] if acc else None,
            "compiled": acc.get("compiled") if acc else None,
            "float": acc["float"] if acc else None,
            "pairs": sum(1 for x in r.get("accuracy_passes", [])
                         if x.startswith("equalize:")),
            "layers": sum(1 for x in r.get("accuracy_passes", [])
                          if x.startswith("bias-correction:")),
            "time": time.time() - t0}


def fmt_db(v):
    return v if isinstance(v, str) else "%.2f" % v


def table(rows, with_acc):
    head = "| model | config | variant | " + (
        "accuracy | compiled | " if with_acc else "") + \
        "output SQNR dB | pairs | layers |"
    lines = [head, "|" + " --- |" * (head.count("|") - 1)]
    for model, cfg, var, r in rows:
        acc = ("%.4f | %s | " % (r["acc"], "%.4f" % r["compiled"]
                                 if r["compiled"] is not None else "-")
               if with_acc else "")
        lines.append(f"| {model} | {cfg} | {var} | {acc}{fmt_db(r['sqnr'])} | "
                     f"{r['pairs']} | {r['layers']} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("quill")
    ap.add_argument("--out")
    ap.add_argument("--write")
    ap.add_argument("--models", default="digits")
    ap.add_argument("--max-samples", type=int, default=0)
    a = ap.parse_args()
    quill = os.path.abspath(a.quill)
    tmp = tempfile.TemporaryDirectory(prefix="quill-accuracy-")
    out = a.out or tmp.name
    os.makedirs(out, exist_ok=True)
    cfgs = derived_configs(out)
    ms = ["--max-samples", str(a.max_samples)] if a.max_samples else []

    models = a.models.split(",")
    sections = []
    if "digits" in models:
        digits = os.path.join(ROOT, "examples", "digits")
        dmodel = os.path.join(digits, "model.onnx")
        dcalib = os.path.join(digits, "calib")
        ev = ["--eval", os.path.join(digits, "test_x.npy"),
              "--labels", os.path.join(digits, "test_y.npy")] + ms
        drows = []
        for cfg in DIGITS_CONFIGS:
            for var, flags in VARIANTS + ADAROUND:
                r = report(quill, dmodel, cfgs.get(cfg, cfg), dcalib, flags,
                           ev)
                drows.append(("digits", cfg, var, r))
                print(f"digits {cfg:12} {var:22} acc {r['acc']:.4f} "
                      f"SQNR {fmt_db(r['sqnr'])} ({r['time']:.1f} s)",
                      flush=True)
        sections.append(("digits", "Digits (float accuracy %.4f; SQNR over "
                         "the 100 calibration samples):\n\n"
                         % drows[0][3]["float"] + table(drows, True)))
    if "mobilenet_v2" in models:
        if not os.path.exists(os.path.join(out, "mobilenet_v2.onnx")):
            subprocess.run(["/usr/bin/python3",
                            os.path.join(ROOT, "bench", "export_torchvision.py"),
                            "mobilenet_v2", out], check=True)
        mmodel = os.path.join(out, "mobilenet_v2.onnx")
        mcalib = os.path.join(out, "calib_mobilenet_v2")
        mrows = []
        for cfg, variants in MOBILENET:
            for var, flags in variants:
                r = report(quill, mmodel, cfgs.get(cfg, cfg), mcalib, flags,
                           ms)
                mrows.append(("mobilenet_v2", cfg, var, r))
                print(f"mobilenet_v2 {cfg:12} {var:22} SQNR "
                      f"{fmt_db(r['sqnr'])} ({r['time']:.1f} s)", flush=True)
        sections.append(("mobilenet_v2", "MobileNetV2 (torchvision, random "
                         "weights, BatchNorm re-estimated; SQNR over its "
                         "calibration samples):\n\n" + table(mrows, False)))
    for name, text in sections:
        print(text)
        if a.write:
            md_section.write_between(a.write, text, MARK % (name, "begin"),
                                     MARK % (name, "end"))


if __name__ == "__main__":
    main()
