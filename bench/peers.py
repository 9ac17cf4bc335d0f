#!/usr/bin/env python3
"""peers.py - Quill's compiled int8 code against the int8 engines users
pick today (the newest onnxruntime, OpenVINO + NNCF, PyTorch/oneDNN), on
the same float ONNX models and calibration samples, in one run.

  PPY=$(scripts/pyenv-peers.sh)     # numpy 2, onnxruntime, openvino, nncf
  cmake --build build               # quill, bench-llvm-kernels
  "$PPY" bench/peers.py [--models resnet18,mobilenet_v2,PATH.onnx[:CALIB]]
                        [--threads 1,2] [--rounds N] [--round-ms MS]
                        [--stat median|least]
                        [--isa amx,avx512-vnni] [--work DIR] [--md FILE]
                        [--zoo] [--quick] [--no-amx | --avx-vnni | --avx2]

Every row the benchmark page needs, in one run (ResNet-18, MobileNetV2
and the model zoo's CNNs; 1 and 2 threads; Quill's amx and avx512-vnni
paths; onnxruntime and OpenVINO int8 and fp32; PyTorch/oneDNN int8;
ratios and SQNR; the run's duration is printed, about 1 minute per model
and thread count plus quantizing and compiling; --work DIR keeps the
exported and compiled models for a second run):

  "$PPY" bench/peers.py --zoo --work /tmp/peers --md docs/benchmarks.md

--isa amx,avx512-vnni,avx2 adds Quill's AVX2 path (vpmaddubsw +
vpmaddwd), what an AVX2-only CPU runs. onnxruntime has no option to pick
its MLAS kernels (it takes the best the CPU has, AMX here), so that row
compares Quill's AVX2 code with onnxruntime's default, not with its AVX2
kernels.

--no-amx runs every engine as on a CPU without AMX (an AMD Zen 4, an
AMX-less Xeon): on an AMX machine the peers otherwise use AMX, and
Quill's forced avx512-vnni path would be compared with AMX kernels. The
script runs itself again with bench/noamx.c preloaded (the request for
AMX's tile state fails, so onnxruntime's MLAS and oneDNN fall back to
their AVX-512 VNNI kernels) and ONEDNN_MAX_CPU_ISA=AVX512_CORE_VNNI;
Quill's path defaults to avx512-vnni, and --md writes its own section:

  "$PPY" bench/peers.py --no-amx --work /tmp/peers --md docs/benchmarks.md

--avx2 does the same for a CPU with AVX2 only (no VNNI: an older Xeon or
client CPU): ONEDNN_MAX_CPU_ISA=AVX2 (OpenVINO and PyTorch's oneDNN),
AMX refused, Quill's avx2 path twice: on the x86-vnni config's model
(weights in [-127, 127]: pairs that could saturate vpmaddubsw run as
correction steps or the conv on vpmaddwd) and on the x86-avx2 config's
(`avx2:x86-avx2`: weights in [-64, 64], no pair can saturate). The SQNR
table says what the narrower weights cost. onnxruntime's MLAS cannot be
limited (it takes the best kernels the CPU has: AVX-512 VNNI here), so
its int8 column is the one peer the ratio leaves out; the table says so:

  "$PPY" bench/peers.py --avx2 --work /tmp/peers --md docs/benchmarks.md

--avx-vnni: a CPU with AVX-VNNI and no AVX-512 (Intel client cores
since Alder Lake, Sierra Forest's E-cores): ONEDNN_MAX_CPU_ISA=AVX2_VNNI,
AMX refused, Quill's avx-vnni path ({vex} vpdpbusd on ymm) compiled for
--mcpu alderlake (16 ymm registers, no AVX-512 instruction). onnxruntime's
MLAS again cannot be limited and stays out of the ratio; Quill's share is
of the AVX-VNNI peak (vpdpbusd ymm), read in the same run:

  "$PPY" bench/peers.py --avx-vnni --work /tmp/peers --md docs/benchmarks.md

Models. A torchvision name (resnet18, mobilenet_v2, ...) is exported by
bench/export_torchvision.py with Debian's python3 (PyTorch 1.13): random
weights, BatchNorm statistics re-estimated, 8 random calibration samples
and a held-out input. Any other float ONNX file works too, so the model
zoo's CNNs can be added: PATH.onnx:CALIB_DIR takes its calibration
samples (.npy) from CALIB_DIR, PATH.onnx alone gets 8 random normal ones
(seed 1) of its input's static shape. Every engine gets that file and
those samples, float in and float out:

  - quill-ISA:  `quill quantize --backend x86-vnni --calib` (quill-ISA:B:
                `--backend B`), then `quill
                compile --isa ISA --threads T` to an object file, linked
                with the shipped quill_rt.c into a shared library and
                called through ctypes (the .o a user links; no JIT). On an
                AMX machine both `amx` and the forced `avx512-vnni` path
                (what AMD Zen 4/5 and AMX-less Xeons run); a path the host
                lacks is left out, with the reason;
  - ort-int8:   onnxruntime's quantize_static (QDQ, u8 activations,
                per-channel s8 weights), then onnxruntime; ort-fp32 the
                float model;
  - ov-int8:    OpenVINO's read_model of the ONNX file, nncf.quantize
                (default preset) on the same samples; ov-fp32 the float
                model; compiled with INFERENCE_NUM_THREADS = T, one
                stream, the LATENCY hint;
  - torch-int8: PyTorch FX post-training quantization with the onednn
                qconfig and engine, for torchvision models only, run in a
                helper process with Debian's python3 (its PyTorch needs
                numpy 1.x) that answers timing requests on a pipe; left
                out when that PyTorch is missing.

Timing. For each thread count, N rounds (--rounds, default 7); in a
round every engine (in an order rotated from round to round) is called
back to back for about --round-ms milliseconds (at least 3 calls) and the
round's time is the median call. An engine's time is the median of its
rounds, or with --stat least the least of them (the round least disturbed
by the rest of the machine: on a shared virtual machine whole stretches
of seconds can run at half speed for every engine, and only ever add
time). All engines live in this one process (torch-int8 in its helper),
so the rounds interleave and drifting machine speed hits every engine
alike. Times are wall clock around one call from Python (Quill's call
goes through ctypes: a few microseconds, like the other engines' Python
APIs). The vpdpbusd peak of one core (bench-llvm-kernels --peak) is
measured before and after; "% peak" is MACs / time / (peak x threads).

Accuracy. Each engine's output on the held-out input against the float
model's (onnxruntime fp32): SQNR in dB, 10 log10(sum ref^2 / sum
(out - ref)^2).

Writes the tables to stdout and, with --md, between this script's
markers in docs/benchmarks.md (bench/md_section.py). --quick is a smoke
run: a small CNN built here with onnx.helper, 1 thread, 2 short rounds.
Not run by ctest (minutes per model).
"""
import argparse
import ctypes
import glob
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import md_section  # noqa: E402  (bench/, beside this script)
from peers_report import fmt_ms, report  # noqa: E402
from onnx_macs import onnx_macs  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SYSPY = "/usr/bin/python3"  # Debian's: PyTorch 1.13 + torchvision
N_CALIB = 8
BEGIN = "<!-- bench/peers.py results: begin -->"
END = "<!-- bench/peers.py results: end -->"
BEGIN_NOAMX = "<!-- bench/peers.py --no-amx results: begin -->"
END_NOAMX = "<!-- bench/peers.py --no-amx results: end -->"
BEGIN_AVX2 = "<!-- bench/peers.py --avx2 results: begin -->"
END_AVX2 = "<!-- bench/peers.py --avx2 results: end -->"
BEGIN_AVXVNNI = "<!-- bench/peers.py --avx-vnni results: begin -->"
END_AVXVNNI = "<!-- bench/peers.py --avx-vnni results: end -->"
# the oneDNN ISA limit of each CPU-limiting mode (QUILL_PEERS_LIMIT)
LIMITS = {"no-amx": "AVX512_CORE_VNNI", "avx2": "AVX2",
          "avx-vnni": "AVX2_VNNI"}
# the CPU Quill's code is compiled for, per path: what a CPU with that
# path and nothing newer runs (for the host's CPU LLVM would use AVX-512's
# 32 registers, and on the avx2 path AVX-VNNI's vpdpwssd)
PATH_MCPU = {"avx2": "haswell", "avx-vnni": "alderlake"}
PRETTY = {"resnet18": "ResNet-18", "mobilenet_v2": "MobileNetV2",
          "tiny": "tiny CNN"}
# --zoo: the CNNs of the model zoo (docs/model-zoo.md), exported here as
# torchvision models like ResNet-18 (the zoo's PP-OCR models have dynamic
# input dims, its transformers are not CNNs)
ZOO_CNNS = ["convnext_tiny", "densenet121", "efficientnet_b0", "googlenet",
            "mnasnet1_0", "mobilenet_v3_small", "regnet_x_400mf",
            "shufflenet_v2_x1_0", "squeezenet1_1"]


def sh(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        why = (p.stderr.strip() or p.stdout.strip() or "?").splitlines()
        raise RuntimeError("%s: %s (exit %d)" % (os.path.basename(cmd[0]),
                                                 why[0], p.returncode))
    return p.stdout


def first_line(ex):
    s = str(ex).strip().splitlines()
    return s[0] if s else type(ex).__name__


# ---- models -----------------------------------------------------------------

class Model:
    """A float ONNX model, its calibration samples and a held-out input."""

    def __init__(self, name, onnx_path, calib, x, tv=None, wdir=None):
        self.name, self.onnx, self.calib, self.x = name, onnx_path, calib, x
        self.tv = tv  # the torchvision name, if it is one
        # where the engines write their files (never beside a shared model)
        self.dir = wdir or os.path.dirname(onnx_path)
        os.makedirs(self.dir, exist_ok=True)
        m = onnx.load(onnx_path, load_external_data=False)
        inits = {t.name for t in m.graph.initializer}
        self.inputs = [i.name for i in m.graph.input if i.name not in inits]
        self.macs = onnx_macs(onnx_path)

    def samples(self):
        return [np.load(f) for f in sorted(glob.glob(os.path.join(
            self.calib, "*.npy")))]

    def feed(self, x):
        return {self.inputs[0]: x}


def torchvision_model(name, work):
    d = os.path.join(work, name)
    path = os.path.join(d, name + ".onnx")
    if not os.path.exists(path):
        sh([SYSPY, os.path.join(ROOT, "bench", "export_torchvision.py"),
            name, d])
    return Model(PRETTY.get(name, name), path,
                 os.path.join(d, "calib_" + name),
                 np.load(os.path.join(d, "input_%s.npy" % name)), tv=name)


def onnx_file_model(spec, work):
    """PATH.onnx[:CALIB]: the held-out input is the first .npy of an eval/
    directory beside CALIB (the model zoo's layout), else random normal;
    a model named model.onnx takes its directory's name."""
    path, _, calib = spec.partition(":")
    path = os.path.abspath(path)
    m = onnx.load(path, load_external_data=False)
    inits = {t.name for t in m.graph.initializer}
    inp = [i for i in m.graph.input if i.name not in inits][0]
    shape = [d.dim_value or 1 for d in inp.type.tensor_type.shape.dim]
    rng = np.random.default_rng(1)
    wdir = os.path.join(work, re.sub(r"\W+", "_", path))
    if not calib:
        calib = os.path.join(wdir, "calib")
        os.makedirs(calib, exist_ok=True)
        for i in range(N_CALIB):
            np.save(os.path.join(calib, "%02d.npy" % i),
                    rng.standard_normal(shape).astype(np.float32))
    held = sorted(glob.glob(os.path.join(os.path.dirname(
        os.path.abspath(calib)), "eval", "*.npy")))
    x = np.load(held[0]) if held else \
        rng.standard_normal(shape).astype(np.float32)
    name = os.path.splitext(os.path.basename(path))[0]
    if name == "model":
        name = os.path.basename(os.path.dirname(path))
    return Model(PRETTY.get(name, name), path, calib, x, wdir=wdir)


def tiny_model(work):
    """The --quick model: conv-relu, a residual conv-add-relu, global
    average pool, a Gemm; 1x8x32x32 in, 10 out."""
    d = os.path.join(work, "tiny")
    path = os.path.join(d, "tiny.onnx")
    rng = np.random.default_rng(0)
    if not os.path.exists(path):
        os.makedirs(os.path.join(d, "calib"), exist_ok=True)

        def w(name, *shape):
            return helper.make_tensor(
                name, TensorProto.FLOAT, shape,
                (rng.standard_normal(shape) * 0.2).astype(np.float32)
                .ravel().tolist())
        nodes = [
            helper.make_node("Conv", ["input", "w1", "b1"], ["c1"],
                             pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c1"], ["r1"]),
            helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"],
                             pads=[1, 1, 1, 1]),
            helper.make_node("Add", ["c2", "r1"], ["a2"]),
            helper.make_node("Relu", ["a2"], ["r2"]),
            helper.make_node("GlobalAveragePool", ["r2"], ["p"]),
            helper.make_node("Flatten", ["p"], ["f"]),
            helper.make_node("Gemm", ["f", "w3", "b3"], ["output"], transB=1),
        ]
        g = helper.make_graph(
            nodes, "tiny",
            [helper.make_tensor_value_info("input", TensorProto.FLOAT,
                                           [1, 8, 32, 32])],
            [helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                           [1, 10])],
            [w("w1", 16, 8, 3, 3), w("b1", 16), w("w2", 16, 16, 3, 3),
             w("b2", 16), w("w3", 10, 16), w("b3", 10)])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        onnx.save(m, path)
        for i in range(N_CALIB):
            np.save(os.path.join(d, "calib", "%02d.npy" % i),
                    rng.standard_normal((1, 8, 32, 32)).astype(np.float32))
    x = np.random.default_rng(2).standard_normal((1, 8, 32, 32)) \
        .astype(np.float32)
    return Model("tiny CNN", path, os.path.join(d, "calib"), x)


# ---- engines ----------------------------------------------------------------
# An engine's prepare(model) does the per-model work once (quantizing);
# runner(model, threads) returns a run(x) -> list of outputs.

class Quill:
    def __init__(self, build, spec):
        """spec: ISA, or ISA:BACKEND for a backend config other than
        x86-vnni (its own column, named quill-ISA:BACKEND)."""
        self.isa, _, backend = spec.partition(":")
        self.build, self.backend = build, backend or "x86-vnni"
        self.name = "quill-" + spec
        self.tag = "" if not backend else "-" + backend
        self.libs = []  # keep the shared libraries loaded

    def prepare(self, m):
        qir = os.path.join(m.dir, "quill%s.qir" % self.tag)
        if self.stale(qir):
            sh([os.path.join(self.build, "quill"), "quantize", m.onnx,
                "--backend", self.backend, "--calib", m.calib, "-o", qir])
        self.compile(m, qir, 1)  # a path the host lacks fails here, once
        return qir

    def stale(self, path):
        """True if path is missing or older than the quill that makes it
        (a second run reuses the first one's files only if the build has
        not changed since)."""
        quill = os.path.join(self.build, "quill")
        return (not os.path.exists(path) or
                os.path.getmtime(path) < os.path.getmtime(quill))

    def compile(self, m, qir, threads):
        d = os.path.join(m.dir, "quill-%s%s-t%d" % (self.isa, self.tag,
                                                     threads))
        obj = os.path.join(d, "m.o")
        if self.stale(obj):
            os.makedirs(d, exist_ok=True)
            mcpu = (["--mcpu", PATH_MCPU[self.isa]]
                    if self.isa in PATH_MCPU else [])
            sh([os.path.join(self.build, "quill"), "compile", qir, "-o", obj,
                "--name", "m", "--isa", self.isa, "--threads", str(threads)]
               + mcpu)
        return d, obj

    def runner(self, m, qir, threads):
        d, obj = self.compile(m, qir, threads)
        so = os.path.join(d, "m.so")
        srcs = [obj] + ([os.path.join(d, "quill_rt.c")] if threads > 1
                        else [])
        sh(["cc", "-O2", "-shared", "-fPIC", "-Wl,-Bsymbolic", "-o", so] +
           srcs + ["-lpthread", "-lm"])
        hdr = open(os.path.join(d, "m.h")).read()
        scratch = int(re.search(r"M_SCRATCH_SIZE (\d+)", hdr).group(1))
        lib = ctypes.CDLL(so)
        self.libs.append(lib)
        fn = lib.m_run_argv
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
        buf = np.zeros(scratch + 64, np.uint8)
        off = (-buf.ctypes.data) % 64
        outs = [np.zeros(o.shape, np.float32) for o in m.ref_out]
        ptrs = (ctypes.c_void_p * (2 + len(outs)))()
        for i, o in enumerate(outs):
            ptrs[1 + i] = o.ctypes.data
        ptrs[1 + len(outs)] = buf.ctypes.data + off
        xs = {}  # id -> the input as a contiguous float32 array

        def run(x, keep=(buf, outs, ptrs)):  # the buffers live as run does
            if id(x) not in xs:
                xs[id(x)] = (x, np.ascontiguousarray(x, np.float32))
            ptrs[0] = xs[id(x)][1].ctypes.data
            if fn(ptrs) != 0:
                raise RuntimeError("m_run returned an error")
            return outs
        return run


class Ort:
    def __init__(self, int8):
        self.int8 = int8
        self.name = "ort-int8" if int8 else "ort-fp32"

    def prepare(self, m):
        if not self.int8:
            return m.onnx
        q = os.path.join(m.dir, "ort_qdq.onnx")
        if os.path.exists(q):
            return q
        from onnxruntime.quantization import (CalibrationDataReader,
                                              QuantFormat, QuantType,
                                              quantize_static)

        class Reader(CalibrationDataReader):
            def __init__(self):
                self.it = iter([m.feed(s) for s in m.samples()])

            def get_next(self):
                return next(self.it, None)
        quantize_static(m.onnx, q, Reader(), quant_format=QuantFormat.QDQ,
                        per_channel=True, activation_type=QuantType.QUInt8,
                        weight_type=QuantType.QInt8)
        return q

    def runner(self, m, path, threads):
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.log_severity_level = 3
        s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        return lambda x: s.run(None, m.feed(x))


class OpenVino:
    def __init__(self, int8):
        self.int8 = int8
        self.name = "ov-int8" if int8 else "ov-fp32"

    def prepare(self, m):
        import openvino as ov
        model = ov.Core().read_model(m.onnx)
        if not self.int8:
            return model
        import nncf
        return nncf.quantize(model, nncf.Dataset([m.feed(s)
                                                  for s in m.samples()]))

    def runner(self, m, model, threads):
        import openvino as ov
        cfg = {"INFERENCE_NUM_THREADS": threads, "NUM_STREAMS": 1,
               "PERFORMANCE_HINT": "LATENCY"}
        if not self.int8:  # else bf16 on CPUs with AMX-BF16 or AVX512-BF16
            cfg["INFERENCE_PRECISION_HINT"] = "f32"
        cm = ov.Core().compile_model(model, "CPU", cfg)
        req = cm.create_infer_request()

        def run(x):
            r = req.infer(m.feed(x))
            return [r[o] for o in cm.outputs]
        return run


TORCH_SERVER = r"""
import sys, numpy as np, torch
from torch.ao.quantization import get_default_qconfig_mapping
from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx
import glob, time, statistics
name, calib = sys.argv[1], sys.argv[2]
torch.backends.quantized.engine = "onednn"
sys.path.insert(0, sys.argv[3])           # bench/
from export_torchvision import build
net = build(name)
xs = [torch.from_numpy(np.load(f))
      for f in sorted(glob.glob(calib + "/*.npy"))]
with torch.no_grad():
    p = prepare_fx(net, get_default_qconfig_mapping("onednn"),
                   example_inputs=(xs[0],))
    for x in xs:
        p(x)
    q = convert_fx(p)
print("ready", flush=True)
x = None
for line in sys.stdin:
    cmd = line.split()
    if cmd[0] == "input":
        x = torch.from_numpy(np.load(cmd[1]))
    elif cmd[0] == "run":                 # run THREADS MS: median call ms
        torch.set_num_threads(int(cmd[1]))
        ts, t_end = [], time.perf_counter() + float(cmd[2]) * 1e-3
        with torch.inference_mode():
            while len(ts) < 3 or time.perf_counter() < t_end:
                t0 = time.perf_counter()
                q(x)
                ts.append(time.perf_counter() - t0)
        print(statistics.median(ts) * 1e3, flush=True)
    elif cmd[0] == "output":
        with torch.inference_mode():
            np.save(cmd[1], q(x).numpy())
        print("ok", flush=True)
"""


class TorchInt8:
    """PyTorch/oneDNN int8 in a helper process (Debian's python3)."""
    name = "torch-int8"

    def prepare(self, m):
        if not m.tv:
            raise RuntimeError("not a torchvision model")
        p = subprocess.Popen([SYSPY, "-c", TORCH_SERVER, m.tv, m.calib,
                              os.path.join(ROOT, "bench")],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
        if p.stdout.readline().strip() != "ready":
            raise RuntimeError("the PyTorch helper did not start")
        xin = os.path.join(m.dir, "torch_input.npy")
        np.save(xin, m.x)
        self.ask(p, "input " + xin, reply=False)
        return p

    @staticmethod
    def ask(p, line, reply=True):
        p.stdin.write(line + "\n")
        p.stdin.flush()
        return p.stdout.readline().strip() if reply else None

    def runner(self, m, p, threads):
        return Remote(self, m, p, threads)


class Remote:
    """A runner whose timing happens in the helper process."""

    def __init__(self, eng, m, p, threads):
        self.eng, self.m, self.p, self.threads = eng, m, p, threads

    def batch_ms(self, round_ms):
        r = self.eng.ask(self.p, "run %d %g" % (self.threads, round_ms))
        try:
            return float(r)
        except ValueError:
            raise RuntimeError("the PyTorch helper failed (see its "
                               "traceback above)") from None

    def __call__(self, x):
        out = os.path.join(self.m.dir, "torch_output.npy")
        if self.eng.ask(self.p, "output " + out) != "ok":
            raise RuntimeError("the PyTorch helper failed (see its "
                               "traceback above)")
        return [np.load(out)]


# ---- timing and accuracy ----------------------------------------------------

def batch_ms(run, x, round_ms):
    """Median milliseconds of the calls made in about round_ms (>= 3)."""
    if isinstance(run, Remote):
        return run.batch_ms(round_ms)
    ts, t_end = [], time.perf_counter() + round_ms * 1e-3
    while len(ts) < 3 or time.perf_counter() < t_end:
        t0 = time.perf_counter()
        run(x)
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3


def sqnr_db(ref, out):
    ref = np.asarray(ref, np.float64).ravel()
    err = np.asarray(out, np.float64).ravel() - ref
    e = float(np.sum(err * err))
    return float("inf") if e == 0 else 10 * np.log10(np.sum(ref * ref) / e)


def peak_gmacs(build):
    """(vpdpbusd zmm, AMX tdpbusd, AVX2 vpmaddubsw + vpmaddwd + vpaddd,
    AVX-VNNI vpdpbusd ymm) peaks of one core, GMAC/s (0 where the CPU
    lacks it)."""
    out = sh([os.path.join(build, "bench-llvm-kernels"), "--peak"])
    v = re.search(r"^VNNI peak.*?([\d.]+) GMAC/s", out, re.M)
    x = re.search(r"AMX peak.*?([\d.]+) GMAC/s", out)
    u = re.search(r"AVX2 peak[^:]*: ([\d.]+) GMAC/s", out)
    w = re.search(r"AVX-VNNI peak[^:]*: ([\d.]+) GMAC/s", out)
    return tuple(float(m.group(1)) if m else 0.0 for m in (v, x, u, w))


# ---- main -------------------------------------------------------------------

def limited(build, limit):
    """Runs this script again with every engine denied AMX: bench/noamx.c
    (built as libbench-noamx.so) preloaded, so the process's request for
    the tile state fails and onnxruntime's MLAS and oneDNN pick their
    AVX-512 VNNI kernels, as on an AMD Zen 4; oneDNN's ONEDNN_MAX_CPU_ISA
    says the same (or AVX2 / AVX2_VNNI, for --avx2 / --avx-vnni) to
    OpenVINO and PyTorch. The helper processes inherit both."""
    lib = os.path.join(build, "libbench-noamx.so")
    if not os.path.exists(lib):
        sys.exit("peers.py: %s is missing (cmake --build %s --target "
                 "bench-noamx)" % (lib, build))
    env = dict(os.environ, QUILL_PEERS_LIMIT=limit,
               ONEDNN_MAX_CPU_ISA=LIMITS[limit],
               LD_PRELOAD=" ".join(p for p in (
                   lib, os.environ.get("LD_PRELOAD", "")) if p))
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--models", default="resnet18,mobilenet_v2",
                    help="torchvision names or PATH.onnx[:CALIB_DIR], "
                    "comma-separated")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--round-ms", type=float, default=250.0)
    ap.add_argument("--stat", choices=("median", "least"), default="median",
                    help="an engine's time from its rounds' times")
    ap.add_argument("--isa", default="",
                    help="Quill instruction paths to time, each ISA or "
                    "ISA:BACKEND (a backend config other than x86-vnni; "
                    "paths the host lacks are left out; default "
                    "amx,avx512-vnni, with --no-amx avx512-vnni, with "
                    "--avx-vnni avx-vnni, with --avx2 avx2,avx2:x86-avx2)")
    lim = ap.add_mutually_exclusive_group()
    lim.add_argument("--no-amx", dest="limit", action="store_const",
                     const="no-amx", help="every engine as on a CPU without "
                     "AMX (bench/noamx.c); its own section of --md")
    lim.add_argument("--avx-vnni", dest="limit", action="store_const",
                     const="avx-vnni", help="every engine that can be "
                     "limited as on a CPU with AVX-VNNI and no AVX-512; its "
                     "own section of --md")
    lim.add_argument("--avx2", dest="limit", action="store_const",
                     const="avx2", help="every engine that can be limited as "
                     "on a CPU with AVX2 only; its own section of --md")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--work", default="",
                    help="directory for models (default: a temporary one)")
    ap.add_argument("--md", default="", help="also write the tables here, "
                    "between this script's markers (docs/benchmarks.md)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: a tiny CNN, 1 thread, 2 short rounds")
    ap.add_argument("--zoo", action="store_true",
                    help="also the model zoo's CNNs (%s)" % ", ".join(
                        ZOO_CNNS))
    a = ap.parse_args()
    if a.limit and os.environ.get("QUILL_PEERS_LIMIT") != a.limit:
        limited(a.build, a.limit)  # runs this script again, never returns
    if not a.isa:
        a.isa = {"no-amx": "avx512-vnni", "avx2": "avx2,avx2:x86-avx2",
                 "avx-vnni": "avx-vnni"}.get(
            a.limit, "amx,avx512-vnni")
    t_start = time.time()
    a.load0 = "%.1f" % os.getloadavg()[0]
    if a.quick:
        a.models, a.threads, a.rounds, a.round_ms = "tiny", "1", 2, 30.0
    if a.zoo:
        have = a.models.split(",")
        a.models = ",".join(have + [z for z in ZOO_CNNS if z not in have])
    threads = [int(t) for t in a.threads.split(",") if t]
    work = a.work or tempfile.mkdtemp(prefix="quill-peers-")
    os.makedirs(work, exist_ok=True)

    models = []
    for spec in [s for s in a.models.split(",") if s]:
        print("model %s" % spec, file=sys.stderr)
        if spec == "tiny":
            models.append(tiny_model(work))
        elif spec.endswith(".onnx") or ".onnx:" in spec:
            models.append(onnx_file_model(spec, work))
        else:
            models.append(torchvision_model(spec, work))

    engines = [Quill(a.build, i) for i in a.isa.split(",") if i]
    engines += [Ort(True), OpenVino(True)]
    if not a.no_torch:
        engines.append(TorchInt8())
    engines += [Ort(False), OpenVino(False)]
    notes = []
    arts = {}  # (model, engine) -> what prepare returned
    for m in models:
        ref = Ort(False).runner(m, m.onnx, 1)
        m.ref_out = [np.asarray(r) for r in ref(m.x)]
        for e in engines:
            try:
                arts[(m.name, e.name)] = e.prepare(m)
            except Exception as ex:
                notes.append("%s on %s: %s." % (e.name, m.name,
                                                first_line(ex)))
                print("%s: %s: %s" % (m.name, e.name, first_line(ex)),
                      file=sys.stderr)

    peaks = [peak_gmacs(a.build)]
    times, sqnr = {}, {}
    for t in threads:
        for m in models:
            runs = {}
            for e in engines:
                if (m.name, e.name) not in arts:
                    continue
                try:
                    run = e.runner(m, arts[(m.name, e.name)], t)
                    out = run(m.x)
                    if (m.name, e.name) not in sqnr:
                        sqnr[(m.name, e.name)] = sqnr_db(m.ref_out[0],
                                                         out[0])
                    runs[e.name] = run
                except Exception as ex:
                    msg = "%s on %s, %d thread(s): %s." % (
                        e.name, m.name, t, first_line(ex))
                    if msg not in notes:
                        notes.append(msg)
                    print(msg, file=sys.stderr)
            names = list(runs)
            per = {n: [] for n in names}
            for r in range(a.rounds):
                k = r % max(1, len(names))
                for n in names[k:] + names[:k]:
                    if n not in runs:
                        continue
                    try:
                        per[n].append(batch_ms(runs[n], m.x, a.round_ms))
                    except Exception as ex:  # an engine failing mid-run
                        msg = "%s on %s, %d thread(s): %s." % (
                            n, m.name, t, first_line(ex))
                        notes.append(msg)
                        print(msg, file=sys.stderr)
                        del runs[n]
            names = [n for n in names if n in runs]
            for n in names:
                times[(m.name, t, n)] = (statistics.median(per[n])
                                         if a.stat == "median"
                                         else min(per[n]))
                print("%-12s %d thr %-16s %s ms" % (
                    m.name, t, n, fmt_ms(times[(m.name, t, n)])),
                    file=sys.stderr)
            del runs
    peaks.append(peak_gmacs(a.build))
    for (mn, en), p in list(arts.items()):
        if isinstance(p, subprocess.Popen):
            try:
                p.stdin.close()
            except OSError:  # a helper that died mid-run
                pass
            p.wait()
    a.minutes = (time.time() - t_start) / 60
    text = report(models, engines, threads, times, sqnr, peaks, notes, a)
    sys.stdout.write(text)
    print("peers.py: %d model(s), %d engine(s), threads %s: %.1f min" % (
        len(models), len(engines), a.threads, a.minutes), file=sys.stderr)
    if a.md:
        begin, end = {"no-amx": (BEGIN_NOAMX, END_NOAMX),
                      "avx2": (BEGIN_AVX2, END_AVX2),
                      "avx-vnni": (BEGIN_AVXVNNI, END_AVXVNNI)}.get(
                          a.limit, (BEGIN, END))
        md_section.write_between(a.md, text, begin, end)
    quill_missing = [m.name for m in models for t in threads
                     if not any((m.name, t, e.name) in times
                                for e in engines
                                if e.name.startswith("quill-"))]
    return 1 if quill_missing else 0


if __name__ == "__main__":
    sys.exit(main())
