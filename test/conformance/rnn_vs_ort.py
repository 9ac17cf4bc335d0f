#!/usr/bin/env python3
"""PyTorch LSTM and GRU models through Quill: import, compile, quantize.

Exports with torch.onnx (opset 13, Debian's python3-torch, run as
/usr/bin/python3 by this script) and checks, for each model:

  float     `quill run` against onnxruntime:
                max |quill - ort| / max |ort|  <=  1e-4
  compiled  `quill compile` (LLVM, float) linked with a generated C main:
                equal to `quill run` bit for bit (the float gemm sums in
                the interpreter's order, targets/llvm/lower_fmatmul.c)
  int8      `quill quantize --backend x86-vnni` on random calibration
            data (its rnn_float keeps the recurrent nodes float, the
            head integer): SQNR of the outputs against the float ones
            (printed, >= --min-sqnr dB), and the quantized model compiled
            with `quill compile` equal to `quill run` of it bit for bit

Models:
  lstm  nn.LSTM(8, 16, num_layers=2, bidirectional=True) + nn.Linear(32, 5)
        on x [seq 6, batch 2, 8]; outputs y, h_n, c_n
  gru   nn.GRU(8, 16, bidirectional=True, batch_first=True) from an
        initial state input h0; x [batch 2, seq 6, 8]; outputs y, h_n
        (torch exports linear_before_reset = 1)
  big   (--time only) nn.LSTM(128, 128, bidirectional=True) on x [seq 40,
        batch 1, 128]: the unrolled graph's size

With --time, the wall times of the import (`quill-translate
--import-onnx`), of `quill compile` of the float model and of the int8
model, and of `quill quantize` are printed per model.

Run with the Python that scripts/pyenv.sh prints (it has onnxruntime):

    py="$(scripts/pyenv.sh)"
    "$py" test/conformance/rnn_vs_ort.py --quill build/quill [--time]

Exit status: 0 all checks pass, 1 a check fails, 77 torch is missing.
"""
import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

EXPORT = r"""
import sys, torch
torch.manual_seed(0)
kind, path = sys.argv[1], sys.argv[2]
class Lstm(torch.nn.Module):
    def __init__(s, i, h, layers, head):
        super().__init__()
        s.rnn = torch.nn.LSTM(i, h, num_layers=layers, bidirectional=True)
        s.fc = torch.nn.Linear(2 * h, 5) if head else None
    def forward(s, x):
        y, (h, c) = s.rnn(x)
        return (s.fc(y) if s.fc else y), h, c
class Gru(torch.nn.Module):
    def __init__(s):
        super().__init__()
        s.rnn = torch.nn.GRU(8, 16, bidirectional=True, batch_first=True)
    def forward(s, x, h0):
        return s.rnn(x, h0)
if kind == "lstm":
    m, args, ins, outs = Lstm(8, 16, 2, True), (torch.randn(6, 2, 8),), \
        ["x"], ["y", "h", "c"]
elif kind == "gru":
    m, args, ins, outs = Gru(), (torch.randn(2, 6, 8), torch.randn(2, 2, 16)), \
        ["x", "h0"], ["y", "h"]
else:
    m, args, ins, outs = Lstm(128, 128, 1, False), (torch.randn(40, 1, 128),), \
        ["x"], ["y", "h", "c"]
torch.onnx.export(m.eval(), args, path, opset_version=13, input_names=ins,
                  output_names=outs)
"""

# a main() for a compiled model: inputs from files, outputs to files, with
# NAME_run_argv and the sizes and element types from the header
MAIN_C = """#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "%(name)s.h"
static unsigned char scratch[%(NAME)s_SCRATCH_SIZE]
    __attribute__((aligned(%(NAME)s_SCRATCH_ALIGN)));
int main(int argc, char **argv) {
  static const size_t bytes[] = {%(bytes)s};
  const int n = %(n)d, nin = %(NAME)s_NUM_INPUTS;
  void *ptrs[%(n)d + 1];
  if (argc != n + 1) return 2;
  for (int i = 0; i < n; i++) {
    ptrs[i] = malloc(bytes[i]);
    if (i < nin) {
      FILE *f = fopen(argv[1 + i], "rb");
      if (!f || fread(ptrs[i], 1, bytes[i], f) != bytes[i]) return 3;
      fclose(f);
    }
  }
  ptrs[n] = scratch;
  if (%(name)s_run_argv(ptrs)) return 4;
  for (int i = nin; i < n; i++) {
    FILE *f = fopen(argv[1 + i], "wb");
    if (!f || fwrite(ptrs[i], 1, bytes[i], f) != bytes[i]) return 5;
    fclose(f);
  }
  return 0;
}
"""

CTYPES = {"float": np.float32, "uint8_t": np.uint8, "int8_t": np.int8}


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode:
        raise RuntimeError("%s exited %d:\n%s" % (" ".join(cmd), p.returncode,
                                                  p.stderr))
    return p


class Clock:
    """Wall and CPU time (of child processes) of a block, as "W s (C s
    CPU)": the machine may be shared, the CPU time is the steadier."""

    def __enter__(self):
        self.w, self.c = time.perf_counter(), self.cpu()
        return self

    def __exit__(self, *exc):
        self.text = "%.2f s (%.2f s CPU)" % (time.perf_counter() - self.w,
                                             self.cpu() - self.c)

    @staticmethod
    def cpu():
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime


def quill_run(quill, model, feeds, names, tmp, tag):
    args = [quill, "run", model]
    for k, v in feeds.items():
        f = os.path.join(tmp, "%s.in.%s.npy" % (tag, k))
        np.save(f, v)
        args += ["--input", "%s=%s" % (k, f)]
    outs = [os.path.join(tmp, "%s.out.%s.npy" % (tag, o)) for o in names]
    for o, f in zip(names, outs):
        args += ["--output", "%s=%s" % (o, f)]
    run(args)
    return [np.load(f) for f in outs]


def run_compiled(quill, model, feeds, tmp, tag):
    """Compile model to TAG.o, link a main and run it: the outputs in the
    header's order and types, and the time of `quill compile`."""
    obj = os.path.join(tmp, tag + ".o")
    with Clock() as clock:
        run([quill, "compile", model, "-o", obj])
    hdr = open(os.path.join(tmp, tag + ".h")).read()
    ios = re.findall(r"/\* (in|out) (\d+) '([^']*)': (\w+) \[([0-9, ]*)\]",
                     hdr)
    shapes = [tuple(int(d) for d in s.split(",") if d.strip())
              for _, _, _, _, s in ios]
    types = [CTYPES[t] for _, _, _, t, _ in ios]
    nbytes = [int(np.prod(s)) * np.dtype(t).itemsize
              for s, t in zip(shapes, types)]
    with open(os.path.join(tmp, tag + "_main.c"), "w") as f:
        f.write(MAIN_C % dict(name=tag, NAME=tag.upper(), n=len(ios),
                              bytes=", ".join(map(str, nbytes))))
    exe = os.path.join(tmp, tag + "_main")
    run(["cc", "-O1", "-I", tmp, os.path.join(tmp, tag + "_main.c"), obj,
         "-o", exe, "-lm"])
    files = []
    for (io, i, name, _, _), s, t in zip(ios, shapes, types):
        fn = os.path.join(tmp, "%s.%s%s.bin" % (tag, io, i))
        if io == "in":
            np.ascontiguousarray(feeds[name], dtype=t).tofile(fn)
        files.append(fn)
    run([exe] + files)
    return [np.fromfile(fn, dtype=t).reshape(s)
            for (io, _, _, _, _), fn, s, t in zip(ios, files, shapes, types)
            if io == "out"], clock


def rel_err(got, want):
    return max(float(np.max(np.abs(g.astype(np.float64) - w))) /
               max(float(np.max(np.abs(w))), 1e-30)
               for g, w in zip(got, want))


def sqnr(got, want):
    g = np.concatenate([x.ravel() for x in got]).astype(np.float64)
    w = np.concatenate([x.ravel() for x in want]).astype(np.float64)
    return 10 * np.log10(np.sum(w * w) / max(np.sum((g - w) ** 2), 1e-30))


def check_model(a, kind, tmp):
    import onnx
    import onnxruntime as ort
    path = os.path.join(tmp, kind + ".onnx")
    run(["/usr/bin/python3", "-c", EXPORT, kind, path])
    m = onnx.load(path)
    inputs = [(i.name, [d.dim_value for d in i.type.tensor_type.shape.dim])
              for i in m.graph.input]
    names = [o.name for o in m.graph.output]
    n_rnn = sum(n.op_type in ("LSTM", "GRU") for n in m.graph.node)
    rng = np.random.default_rng(1)
    sample = lambda: {k: rng.standard_normal(s).astype(np.float32)
                      for k, s in inputs}
    feeds = sample()
    ok = True
    print("== %s (%d %s nodes, inputs %s)" % (
        kind, n_rnn, "/".join(sorted({n.op_type for n in m.graph.node
                                      if n.op_type in ("LSTM", "GRU")})),
        ", ".join("%s %s" % (k, s) for k, s in inputs)))

    with Clock() as t_import:
        run([a.translate, "--import-onnx", path, "-o",
             os.path.join(tmp, kind + ".qir")])
    got = quill_run(a.quill, path, feeds, names, tmp, kind)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    want = sess.run(names, feeds)
    e = rel_err(got, want)
    ok &= e <= 1e-4
    print("float: quill run vs onnxruntime: max rel err %.2e (<= 1e-4) %s"
          % (e, "ok" if e <= 1e-4 else "FAIL"))

    comp, t_compile = run_compiled(a.quill, path, feeds, tmp, kind + "_f32")
    same = all(c.shape == g.shape and c.tobytes() == g.tobytes()
               for c, g in zip(comp, got))
    ok &= same
    print("float: compiled .o vs quill run: %s (max rel err %.2e)" % (
        "bit-exact ok" if same else "FAIL (differs)", rel_err(comp, got)))

    calib = os.path.join(tmp, kind + "_calib")
    for i in range(8):
        os.makedirs(os.path.join(calib, str(i)))
        for k, v in sample().items():
            np.save(os.path.join(calib, str(i), k + ".npy"), v)
    qmodel = os.path.join(tmp, kind + "_q.qir")
    with Clock() as t_quant:
        run([a.quill, "quantize", path, "--backend", "x86-vnni", "--calib",
             calib, "-o", qmodel])
    qgot = quill_run(a.quill, qmodel, feeds, names, tmp, kind + "_q")
    s = sqnr(qgot, got)
    ok &= s >= a.min_sqnr
    print("int8 x86-vnni: SQNR vs float %.1f dB (>= %.0f) %s"
          % (s, a.min_sqnr, "ok" if s >= a.min_sqnr else "FAIL"))
    qcomp, t_qcompile = run_compiled(a.quill, qmodel, feeds, tmp,
                                     kind + "_i8")
    same = all(c.shape == g.shape and c.tobytes() == g.tobytes()
               for c, g in zip(qcomp, qgot))
    ok &= same
    print("int8 x86-vnni: compiled .o vs quill run: %s" % (
        "bit-exact ok" if same else "FAIL (differs)"))
    if a.time:
        ops = sum(1 for l in open(os.path.join(tmp, kind + ".qir"))
                  if " = " in l)
        print("time: import %s (%d ops); quill compile: float "
              "%s, int8 %s; quantize (8 samples) %s"
              % (t_import.text, ops, t_compile.text, t_qcompile.text,
                 t_quant.text))
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--quill", default=os.path.join(here, "..", "..",
                                                    "build", "quill"))
    ap.add_argument("--model", action="append",
                    choices=["lstm", "gru", "big"],
                    help="models to check (default lstm and gru; big with "
                         "--time)")
    ap.add_argument("--min-sqnr", type=float, default=20.0)
    ap.add_argument("--time", action="store_true")
    ap.add_argument("--keep", help="work in this directory and keep it")
    a = ap.parse_args()
    a.quill = os.path.abspath(a.quill)
    a.translate = os.path.join(os.path.dirname(a.quill), "quill-translate")
    if subprocess.run(["/usr/bin/python3", "-c", "import torch"],
                      capture_output=True).returncode:
        print("SKIP: /usr/bin/python3 has no torch (Debian python3-torch)")
        return 77
    models = a.model or (["lstm", "gru"] + (["big"] if a.time else []))
    ok = True
    with tempfile.TemporaryDirectory(prefix="quill-rnn-") as tmp:
        work = a.keep or tmp
        os.makedirs(work, exist_ok=True)
        for kind in models:
            try:
                ok &= check_model(a, kind, work)
            except RuntimeError as e:
                print("FAIL %s: %s" % (kind, e))
                ok = False
    print("rnn_vs_ort: %s" % ("all checks pass" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
