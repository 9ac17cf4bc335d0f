"""Check a `quill report --format json` file against an independent
computation: the SQNR of the model's output over the calibration samples,
from `quill run` of the float model (after fold-batchnorm and
fuse-activation: the report's reference) and of `quill quantize`'s model, summed
in numpy. Also checks the JSON's stable field names (docs/report.md).

Usage: /usr/bin/python3 check_report.py QUILL REPORT.json FLOAT_MODEL
           QUANT_MODEL CALIB_DIR N
Prints "ok: output SQNR X dB" or the mismatch (exit 1).
"""
import glob
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

quill, report, fmodel, qmodel, calib, n = sys.argv[1:7]
imodel = sys.argv[7] if len(sys.argv) > 7 else None
rep = json.load(open(report))
top = ["quill_report", "model", "backend", "keep_float", "samples", "rows",
       "outputs", "compiled_note", "accuracy", "accuracy_passes"]
row = ["name", "opcode", "activation", "status", "reason", "fused_into",
       "output", "weight", "weight_sqnr_db", "sqnr_db", "signal", "noise",
       "bias_saturated"]
if list(rep) != top:
    sys.exit(f"top-level fields {list(rep)} != {top}")
for r in rep["rows"]:
    if list(r) != row:
        sys.exit(f"row fields {list(r)} != {row}")
sig = noise = 0.0
files = sorted(glob.glob(os.path.join(calib, "*.npy")))[:int(n)]
with tempfile.TemporaryDirectory() as t:
    out = os.path.join(t, "o.npy")
    for f in files:
        y = []
        for m in (fmodel, qmodel):
            subprocess.run([quill, "run", m, "--input", f, "--output", out],
                           check=True, stdout=subprocess.DEVNULL)
            y.append(np.load(out).astype(np.float64))
        sig += float((y[0] ** 2).sum())
        noise += float(((y[0] - y[1]) ** 2).sum())
want = 10 * math.log10(sig / noise)
got = rep["outputs"][0]["sqnr_db"]
if rep["samples"] != len(files) or abs(got - want) > 1e-9:
    sys.exit(f"output SQNR {got} dB over {rep['samples']} samples, numpy "
             f"says {want} dB over {len(files)}")
print(f"ok: output SQNR {want:.4f} dB")
if imodel:
    # the compiled column: the integer form on the JIT against the
    # reference form on the interpreter, first output
    sig = noise = 0.0
    diff = count = 0
    with tempfile.TemporaryDirectory() as t:
        out = os.path.join(t, "o.npy")
        for f in files:
            y = []
            for cmd in ([quill, "run", qmodel], [quill, "run", "--jit", imodel]):
                subprocess.run(cmd + ["--input", f, "--output", out],
                               check=True, stdout=subprocess.DEVNULL)
                y.append(np.load(out).astype(np.float64))
            sig += float((y[0] ** 2).sum())
            noise += float(((y[0] - y[1]) ** 2).sum())
            diff += int((y[0] != y[1]).sum())
            count += y[0].size
    c = rep["outputs"][0]["compiled"]
    want = "inf" if noise == 0 else 10 * math.log10(sig / noise)
    got = c["sqnr_db"]
    same = got == want if isinstance(want, str) else abs(got - want) <= 1e-9
    if not same or c["differing"] != diff or c["count"] != count:
        sys.exit(f"compiled: {c}, numpy says SQNR {want} dB, {diff} of "
                 f"{count} values differ")
    print(f"ok: compiled SQNR {want} dB, {diff} of {count} values differ")
