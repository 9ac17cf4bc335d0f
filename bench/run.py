#!/usr/bin/env python3
"""run.py - Quill's speed benchmark: Quill's compiled int8 code against
onnxruntime (fp32 and QDQ int8) and PyTorch's x86 int8 path (oneDNN), on
the same float models, in the same run, with the machine's int8 peak
measured in that run too.

  PY=$(scripts/pyenv.sh)
  "$PY" bench/run.py [--build DIR] [--reps N] [--threads 1,2]
                     [--only SUBSTR,...] [--work DIR] [--md FILE] [--quick]

How it works. Every workload is a float PyTorch module with random weights
(no pretrained weights can be downloaded here): torchvision's ResNet-18 and
MobileNetV2 at 1x3x224x224 (BatchNorm statistics re-estimated on random
batches first, else activations shrink towards zero and int8 timings mean
little), and the single layers of the issue (3x3 convs, a strided 1x1
conv, a depthwise conv, two GEMMs). Each is exported once to ONNX (opset
13) with 8 random calibration samples, and then

  - quill:       `quill quantize MODEL.onnx --backend x86-vnni --calib DIR`
                 (u8 activations, per-channel s8 weights, integer ops), the
                 result compiled by the LLVM target and timed by
                 bench-llvm-model (the JIT runs the code `quill compile`
                 writes to the .o; float input and output, the quantize and
                 dequantize included, like the other engines);
  - ort-fp32:    onnxruntime on the float model;
  - ort-int8:    onnxruntime's static quantizer on the same model and
                 samples (QDQ, u8 activations, per-channel s8 weights),
                 then onnxruntime;
  - torch-int8:  PyTorch FX graph-mode post-training quantization with
                 the onednn qconfig and engine (oneDNN's int8 kernels, the
                 x86 int8 path of Debian's PyTorch, which has no fbgemm),
                 same samples.

Each engine runs with 1 and 2 threads (--threads). A time is the median of
N >= 30 samples (--reps) after 5 warm-up runs. The Python engines (ort,
torch): a sample of a workload that runs under 1 ms is the mean of enough
back-to-back runs to last about 1 ms (so the timer's overhead does not
dominate; the per-call overhead of their Python API stays in), one run
otherwise. Quill: single runs timed in C by bench-llvm-model (at least 100
samples). The int8 peak (u8*s8 MACs per second of one core, a vpdpbusd
zmm loop: bench-llvm-kernels --peak) is measured before and after the
engines; the table's "% peak" is MACs / time / (the larger peak x threads).
Quill's kernels alone (u8 NHWC in and out, no quantize/transposes around
them: bench-llvm-kernels) are reported for the conv layers too.

Writes the markdown tables to stdout and to --md (default: none; given
docs/benchmarks.md, only the part between its results markers is
replaced). The numbers drift between runs on a shared machine; compare
within one run.
"""
import argparse
import glob
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx  # before torch: Debian's torch would load an older onnx's protos
import onnxruntime

import md_section  # bench/, beside this script
from machine import cpu_model  # bench/
from onnx_macs import onnx_macs  # bench/

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
N_CALIB = 8


# ---- workloads -------------------------------------------------------------

def conv_layer(cin, cout, k, stride, hw, groups=1):
    import torch.nn as nn

    def make():
        return nn.Sequential(nn.Conv2d(cin, cout, k, stride=stride,
                                       padding=k // 2, groups=groups))
    ohw = (hw + 2 * (k // 2) - k) // stride + 1
    macs = ohw * ohw * cout * (cin // groups) * k * k
    return make, (1, cin, hw, hw), macs


def gemm_layer(m, k, n):
    import torch.nn as nn

    def make():
        return nn.Sequential(nn.Linear(k, n))
    return make, (m, k), m * k * n


def tv_model(name):
    def make():
        import export_torchvision  # bench/, beside this script
        return export_torchvision.build(name)
    return make, (1, 3, 224, 224), None


# name, (make, input shape, MACs or None = count from the ONNX graph),
# the bench-llvm-kernels layer that is the same conv (or None)
WORKLOADS = [
    ("ResNet-18", tv_model("resnet18"), None),
    ("MobileNetV2", tv_model("mobilenet_v2"), None),
    ("conv 3x3 64->64 @56", conv_layer(64, 64, 3, 1, 56), "r18 3x3 64->64 @56"),
    ("conv 3x3 128->128 @28", conv_layer(128, 128, 3, 1, 28),
     "r18 3x3 128->128 @28"),
    ("conv 3x3 256->256 @14", conv_layer(256, 256, 3, 1, 14),
     "r18 3x3 256->256 @14"),
    ("conv 1x1/2 256->512 @14", conv_layer(256, 512, 1, 2, 14),
     "1x1/2 256->512 @14"),
    ("depthwise 3x3 32 @112", conv_layer(32, 32, 3, 1, 112, groups=32),
     "dw3x3 32 @112"),
    ("GEMM 128x768x768", gemm_layer(128, 768, 768), None),
    ("GEMM 1x1024x1024", gemm_layer(1, 1024, 1024), None),
]


def slug(name):
    return re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_").lower()


def export(name, spec, work):
    """The float ONNX model and calibration samples of one workload."""
    import torch
    make, shape, macs = spec
    d = os.path.join(work, slug(name))
    onnx_path = os.path.join(d, "model.onnx")
    calib = os.path.join(d, "calib")
    if not os.path.exists(onnx_path):
        os.makedirs(calib, exist_ok=True)
        net = make()
        torch.manual_seed(1)
        for i in range(N_CALIB):
            np.save(os.path.join(calib, "%02d.npy" % i),
                    torch.randn(*shape).numpy().astype(np.float32))
        torch.onnx.export(net, torch.randn(*shape), onnx_path,
                          input_names=["input"], output_names=["output"],
                          opset_version=13, do_constant_folding=True)
    if macs is None:
        macs = onnx_macs(onnx_path)
    return onnx_path, calib, macs


def samples(calib):
    return [np.load(f) for f in sorted(glob.glob(os.path.join(calib,
                                                              "*.npy")))]


# ---- timing ----------------------------------------------------------------

def median_ms(run, reps):
    """Median milliseconds of reps samples of run() after warm-up."""
    for _ in range(5):
        run()
    t0 = time.perf_counter()
    run()
    once = time.perf_counter() - t0
    inner = max(1, min(1000, int(1e-3 / max(once, 1e-7))))
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(inner):
            run()
        ts.append((time.perf_counter() - t0) / inner)
    return statistics.median(ts) * 1e3


def sh(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s%s" % (
            " ".join(cmd), p.returncode, p.stdout, p.stderr))
    return p.stdout


class Quill:
    name = "quill"

    def __init__(self, build):
        self.build = build

    def prepare(self, onnx_path, calib, d):
        qir = os.path.join(d, "quill.qir")
        if not os.path.exists(qir):
            sh([os.path.join(self.build, "quill"), "quantize", onnx_path,
                "--backend", "x86-vnni", "--calib", calib, "-o", qir])
        return qir

    def time(self, qir, x, threads, reps):
        # single runs timed in C: no timer overhead to amortize, so more
        # samples instead of batches
        out = sh([os.path.join(self.build, "bench-llvm-model"), qir,
                  "--reps", str(max(reps, 100)), "--threads", str(threads)])
        m = re.search(r"compile (\d+) ms, best ([\d.]+) ms, median ([\d.]+)",
                      out)
        if not m:
            raise RuntimeError("bench-llvm-model: " + out)
        return float(m.group(3))

    def compile_seconds(self, qir, d):
        t0 = time.perf_counter()
        sh([os.path.join(self.build, "quill"), "compile", qir, "-o",
            os.path.join(d, "model.o")])
        return time.perf_counter() - t0


class Ort:
    def __init__(self, int8):
        self.int8 = int8
        self.name = "ort-int8" if int8 else "ort-fp32"

    def prepare(self, onnx_path, calib, d):
        if not self.int8:
            return onnx_path
        q = os.path.join(d, "ort_qdq.onnx")
        if os.path.exists(q):
            return q
        from onnxruntime.quantization import (CalibrationDataReader,
                                              QuantFormat, QuantType,
                                              quantize_static)

        class Reader(CalibrationDataReader):
            def __init__(self):
                self.it = iter([{"input": s} for s in samples(calib)])

            def get_next(self):
                return next(self.it, None)
        quantize_static(onnx_path, q, Reader(), quant_format=QuantFormat.QDQ,
                        per_channel=True, activation_type=QuantType.QUInt8,
                        weight_type=QuantType.QInt8)
        return q

    def time(self, path, x, threads, reps):
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.log_severity_level = 3
        s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        feed = {"input": x}
        return median_ms(lambda: s.run(None, feed), reps)


class TorchInt8:
    name = "torch-int8"

    def __init__(self, specs):
        self.specs = specs

    def prepare(self, onnx_path, calib, d):
        import torch
        from torch.ao.quantization import get_default_qconfig_mapping
        from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx
        torch.backends.quantized.engine = "onednn"
        make, shape, _ = self.specs[d]
        net = make().eval()
        xs = [torch.from_numpy(s) for s in samples(calib)]
        qmap = get_default_qconfig_mapping("onednn")
        with torch.no_grad():
            p = prepare_fx(net, qmap, example_inputs=(xs[0],))
            for x in xs:
                p(x)
            return convert_fx(p)

    def time(self, net, x, threads, reps):
        import torch
        torch.backends.quantized.engine = "onednn"
        torch.set_num_threads(threads)
        t = torch.from_numpy(x)
        with torch.inference_mode():
            return median_ms(lambda: net(t), reps)


def call_floor_ms(threads, reps):
    """The per-call floor of the Python engines: onnxruntime running an
    Identity of one float, PyTorch calling an empty module."""
    import torch
    from onnx import TensorProto, helper
    g = helper.make_graph(
        [helper.make_node("Identity", ["input"], ["output"])], "id",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    so = onnxruntime.SessionOptions()
    so.intra_op_num_threads = threads
    s = onnxruntime.InferenceSession(m.SerializeToString(), so,
                                     providers=["CPUExecutionProvider"])
    feed = {"input": np.zeros(1, np.float32)}
    ort_ms = median_ms(lambda: s.run(None, feed), reps)
    net, t = torch.nn.Sequential(torch.nn.Identity()), torch.zeros(1)
    with torch.inference_mode():
        torch_ms = median_ms(lambda: net(t), reps)
    return ort_ms, torch_ms


def peak_macs(build):
    """(VNNI, AMX) peak u8*s8 MACs/s of one core (AMX 0 if absent)."""
    out = sh([os.path.join(build, "bench-llvm-kernels"), "--peak"])
    m = re.search(r"VNNI peak.*?([\d.]+) GMAC/s", out)
    x = re.search(r"AMX peak.*?([\d.]+) GMAC/s", out)
    return (float(m.group(1)) * 1e9 if m else 0.0,
            float(x.group(1)) * 1e9 if x else 0.0)


def quill_kernels(build, threads, reps, layers, isa=None):
    """ms of bench-llvm-kernels' layers (median), by layer name; isa forces
    an instruction path (default: what auto picks)."""
    cmd = [os.path.join(build, "bench-llvm-kernels"), "--threads",
           str(threads), "--reps", str(max(reps, 30))]
    if isa:
        cmd += ["--isa", isa]
    if len(layers) == 1:
        cmd += ["--filter", layers[0]]
    elif not layers:
        return {}
    out = sh(cmd)
    res = {}
    for line in out.splitlines():
        m = re.match(r"(.+?)\s+\d+ms\s+([\d.]+)\s+([\d.]+)\s", line)
        if m:
            res[m.group(1).strip()] = float(m.group(3))
    return res


# ---- report ----------------------------------------------------------------

def fmt_ms(ms):
    return "-" if ms is None else ("%.3f" % ms if ms < 1 else "%.2f" % ms)


def fmt_pct(macs, ms, peak):
    if ms is None or not peak:
        return "-"
    return "%.0f%%" % (100.0 * macs / (ms * 1e-3) / peak)


BEGIN = "<!-- bench/run.py results: begin -->"
END = "<!-- bench/run.py results: end -->"


def write_md(path, text):
    """Write the tables to path, or between the BEGIN/END markers of an
    existing document (docs/benchmarks.md), leaving its prose alone."""
    md_section.write_between(path, text, BEGIN, END)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--only", default="",
                    help="comma-separated substrings of workload names")
    ap.add_argument("--work", default="",
                    help="directory for models (default: a temporary one)")
    ap.add_argument("--md", default="",
                    help="also write the tables here (between the results "
                    "markers if the file has them: docs/benchmarks.md)")
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run: the small layers only, 3 samples")
    a = ap.parse_args()
    if a.quick:
        a.reps = 3
        a.only = a.only or "GEMM 1x1024,depthwise"
    elif a.reps < 30:
        print("note: fewer than 30 samples per time", file=sys.stderr)
    threads = [int(t) for t in a.threads.split(",") if t]
    only = [s for s in a.only.split(",") if s]
    work = a.work or tempfile.mkdtemp(prefix="quill-bench-")
    os.makedirs(work, exist_ok=True)
    wl = [w for w in WORKLOADS if not only or any(o in w[0] for o in only)]

    import torch
    cpu = cpu_model("")
    print("preparing %d workloads in %s" % (len(wl), work), file=sys.stderr)
    specs = {}
    prepared = []
    torch_int8 = TorchInt8(specs)
    engines = [Quill(a.build), Ort(False), Ort(True), torch_int8]
    for name, spec, klayer in wl:
        onnx_path, calib, macs = export(name, spec, work)
        d = os.path.dirname(onnx_path)
        specs[d] = spec
        x = samples(calib)[0]
        arts = {}
        for e in engines:
            try:
                arts[e.name] = e.prepare(onnx_path, calib, d)
            except Exception as ex:  # an engine that cannot take it: '-'
                print("%s: %s: %s" % (name, e.name, str(ex).splitlines()[0]),
                      file=sys.stderr)
        prepared.append((name, macs, klayer, x, d, arts))

    peak0 = peak_macs(a.build)
    rows = {}
    for t in threads:
        for name, macs, klayer, x, d, arts in prepared:
            for e in engines:
                ms = None
                if e.name in arts:
                    try:
                        ms = e.time(arts[e.name], x, t, a.reps)
                    except Exception as ex:
                        print("%s: %s: %s" % (name, e.name,
                                              str(ex).splitlines()[0]),
                              file=sys.stderr)
                rows[(name, t, e.name)] = ms
                print("%-26s %d thr %-10s %s ms" % (name, t, e.name,
                                                   fmt_ms(ms)),
                      file=sys.stderr)
    klayers = [p[2] for p in prepared if p[2]]
    kern = {t: quill_kernels(a.build, t, a.reps, klayers) for t in threads}
    # on an AMX machine auto picks the amx path; the vpdpbusd kernels are
    # what a CPU without AMX runs, so they are timed too
    kvnni = ({t: quill_kernels(a.build, t, a.reps, klayers, "avx512-vnni")
              for t in threads} if peak0[1] else None)
    floor = call_floor_ms(1, a.reps)
    peak1 = peak_macs(a.build)
    peak = max(peak0[0], peak1[0])
    amx = max(peak0[1], peak1[1])
    compile_s = None
    for name, macs, klayer, x, d, arts in prepared:
        if name == "ResNet-18" and "quill" in arts:
            compile_s = Quill(a.build).compile_seconds(arts["quill"], d)

    out = []
    out.append("Machine: %s, %d cores; onnxruntime %s, PyTorch %s "
               "(engine onednn); %s." % (cpu or "?", os.cpu_count(),
                                         onnxruntime.__version__,
                                         torch.__version__,
                                         time.strftime("%Y-%m-%d")))
    out.append("")
    out.append("int8 peak of one core (vpdpbusd zmm loop, before / after "
               "the engines): %.0f / %.0f GMAC/s." % (peak0[0] * 1e-9,
                                                      peak1[0] * 1e-9))
    if amx:
        out.append("")
        out.append("This CPU also has AMX-INT8: a tdpbusd loop sustains "
                   "%.0f GMAC/s per core (%.1fx the vpdpbusd peak). Quill's "
                   "`auto` instruction path here is `amx` (convs and "
                   "matmuls on AMX tiles); the %% columns are of the "
                   "vpdpbusd peak, so AMX code exceeds 100%%. \"quill "
                   "kernel alone\" also gives the share of the AMX peak; "
                   "\"vnni kernel alone\" is the same conv forced onto the "
                   "`avx512-vnni` path, what a CPU without AMX runs."
                   % (amx * 1e-9, amx / peak))
    out.append("")
    out.append("Per-call floor of the Python APIs (included in their "
               "times): onnxruntime %.1f us (an Identity of one float), "
               "PyTorch %.1f us (an empty module). Quill's times are taken "
               "in C around the compiled entry function." % (
                   floor[0] * 1e3, floor[1] * 1e3))
    if compile_s is not None:
        out.append("")
        out.append("Quill AOT compile of ResNet-18 (`quill compile r18.qir "
                   "-o r18.o`, quantized model in, .o + .h out): %.1f s."
                   % compile_s)
    names = [e.name for e in engines]
    for t in threads:
        out.append("")
        out.append("### %d thread%s (median ms; %% of the int8 peak of %d "
                   "core%s)" % (t, "s" if t > 1 else "", t,
                                "s" if t > 1 else ""))
        out.append("")
        vcol = " vnni kernel alone |" if kvnni else ""
        out.append("| workload | GMAC | " + " | ".join(names) +
                   " | quill kernel alone |" + vcol + " quill vs ort-int8 |")
        out.append("| --- | ---: | " + " | ".join("---:" for _ in names) +
                   " | ---: |" + (" ---: |" if kvnni else "") + " ---: |")
        for name, macs, klayer, x, d, arts in prepared:
            cells = []
            for n in names:
                ms = rows.get((name, t, n))
                cells.append("-" if ms is None else "%s (%s)" % (
                    fmt_ms(ms), fmt_pct(macs, ms, peak * t)))
            k = kern[t].get(klayer) if klayer else None
            kc = "-" if k is None else "%s (%s)" % (fmt_ms(k),
                                                     fmt_pct(macs, k,
                                                             peak * t))
            if k is not None and amx:
                kc = "%s (%s; AMX %s)" % (fmt_ms(k), fmt_pct(macs, k, peak * t),
                                          fmt_pct(macs, k, amx * t))
            if kvnni:
                v = kvnni[t].get(klayer) if klayer else None
                kc += " | " + ("-" if v is None else "%s (%s)" % (
                    fmt_ms(v), fmt_pct(macs, v, peak * t)))
            q, o = rows.get((name, t, "quill")), rows.get((name, t,
                                                          "ort-int8"))
            sp = "-" if not q or not o else "%.2fx" % (o / q)
            out.append("| %s | %.3f | %s | %s | %s |" % (
                name, macs * 1e-9, " | ".join(cells), kc, sp))
    text = "\n".join(out) + "\n"
    sys.stdout.write(text)
    if a.md:
        write_md(a.md, text)
    missing = [k for k, v in rows.items() if v is None and k[2] == "quill"]
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
