#!/usr/bin/env python3
"""compile_time.py - how long `quill compile` takes on big graphs.

  /usr/bin/python3 bench/compile_time.py [--build DIR] [--work DIR]
                   [--only SUBSTR,...] [--chain N,...] [--reps N]
                   [--flags "--noinline-stages"] [--md FILE]

Workloads:
  - relu chain N: N float Relu ops in a row ([1,16,8,8] each), written as
    textual IR (default N = 1024, 8192);
  - torchvision densenet121, resnet18 and vit_b_16 at 1x3x224x224, random
    weights (seed 0; BatchNorm statistics re-estimated on random batches
    first, as bench/export_torchvision.py does), exported to ONNX (opset
    13) with 8 random calibration samples and quantized with
    `quill quantize --backend x86-vnni` (integer convs and matmuls).

Each is compiled with `quill compile MODEL -o model.o` (one thread, -O3,
the host CPU, plus --flags) --reps times; the table gives the best wall
time, the CPU time (user + system) of that run and the number of ops in
the compiled graph (constants not counted). On a shared machine wall time includes waiting for a
core: CPU time is the number to compare.

Needs Debian's python3-torch, python3-torchvision and python3-onnx (no
onnxruntime). Exports and quantized models are cached in --work (default
/tmp/quill-compile-time). Prints the markdown table and, with
--md docs/benchmarks.md, writes it between that file's compile-time
markers (the rest of the file is left alone).
"""
import argparse
import os
import re
import resource
import subprocess
import sys
import time

import numpy as np

import md_section  # bench/, beside this script

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
N_CALIB = 8
BEGIN = "<!-- bench/compile_time.py results: begin -->"
END = "<!-- bench/compile_time.py results: end -->"


def sh(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s%s" % (
            " ".join(cmd), p.returncode, p.stdout, p.stderr))
    return p.stdout


def relu_chain(n, path):
    """A chain of n float relu ops as textual IR."""
    if os.path.exists(path):
        return path
    t = "tensor<1x16x8x8xf32>"
    lines = ["// %d relu ops in a row (bench/compile_time.py)" % n,
             "func @chain(%%x: %s) -> %s {" % (t, t)]
    prev = "%x"
    for i in range(n):
        lines.append("  %%r%d = relu %s : %s" % (i, prev, t))
        prev = "%%r%d" % i
    lines += ["  return %s" % prev, "}", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))
    return path


def export_torchvision(name, d):
    """d/model.onnx and d/calib/ for a torchvision model (random weights,
    BatchNorm statistics re-estimated)."""
    onnx_path = os.path.join(d, "model.onnx")
    calib = os.path.join(d, "calib")
    if os.path.exists(onnx_path):
        return onnx_path, calib
    import torch
    import export_torchvision  # bench/, beside this script
    os.makedirs(calib, exist_ok=True)
    net = export_torchvision.build(name)
    torch.manual_seed(1)
    for i in range(N_CALIB):
        np.save(os.path.join(calib, "%02d.npy" % i),
                torch.randn(1, 3, 224, 224).numpy().astype(np.float32))
    tmp = onnx_path + ".tmp"
    torch.onnx.export(net, torch.randn(1, 3, 224, 224), tmp,
                      input_names=["input"], output_names=["output"],
                      opset_version=13, do_constant_folding=True)
    os.replace(tmp, onnx_path)
    return onnx_path, calib


def quantized(build, name, work):
    d = os.path.join(work, name)
    qir = os.path.join(d, "quill.qir")
    quill = os.path.join(build, "quill")
    # quantized again when the quantizer has changed since (its passes
    # decide the graph that compile sees)
    if not os.path.exists(qir) or \
            os.path.getmtime(qir) < os.path.getmtime(quill):
        onnx_path, calib = export_torchvision(name, d)
        sh([os.path.join(build, "quill"), "quantize", onnx_path,
            "--backend", "x86-vnni", "--calib", calib, "-o", qir + ".tmp"])
        os.replace(qir + ".tmp", qir)
    return qir


def count_ops(qir):
    """Ops of the graph, constants and the return left out."""
    n = 0
    with open(qir) as f:
        for line in f:
            m = re.match(r"\s*%[^=]*= ([a-z_0-9.]+)", line)
            if m and m.group(1) != "constant":
                n += 1
    return n


def compile_time(build, qir, out, flags, reps):
    """(best wall s, CPU s of that run) of `quill compile`."""
    best = None
    for _ in range(reps):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        sh([os.path.join(build, "quill"), "compile", qir, "-o", out] + flags)
        wall = time.perf_counter() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        if best is None or wall < best[0]:
            best = (wall, cpu)
    return best


def write_md(path, text):
    md_section.write_between(path, text, BEGIN, END)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default="/tmp/quill-compile-time")
    ap.add_argument("--only", default="")
    ap.add_argument("--chain", default="1024,8192")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--flags", default="")
    ap.add_argument("--md", default="")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    flags = a.flags.split()
    work = []
    for n in [int(x) for x in a.chain.split(",") if x]:
        work.append(("relu chain %d" % n, lambda n=n: relu_chain(
            n, os.path.join(a.work, "chain%d.qir" % n))))
    for name, label in (("densenet121", "densenet121 int8"),
                        ("resnet18", "ResNet-18 int8"),
                        ("vit_b_16", "ViT-B/16 int8")):
        work.append((label, lambda name=name: quantized(a.build, name,
                                                        a.work)))
    only = [s for s in a.only.split(",") if s]
    rows = []
    for label, get in work:
        if only and not any(s.lower() in label.lower() for s in only):
            continue
        qir = get()
        wall, cpu = compile_time(a.build, qir,
                                 os.path.join(a.work, "model.o"), flags,
                                 a.reps)
        rows.append((label, count_ops(qir), wall, cpu))
        print("%-20s %6d ops  %7.2f s wall  %7.2f s cpu" % rows[-1],
              file=sys.stderr, flush=True)
    cpu_name = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu_name = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    text = ("`quill compile MODEL -o model.o%s` (one thread, -O3, host CPU: "
            "%s), best of %d run%s:\n\n" % (
                (" " + a.flags) if a.flags else "", cpu_name or "?", a.reps,
                "" if a.reps == 1 else "s"))
    text += "| model | ops | wall s | CPU s |\n| --- | ---: | ---: | ---: |\n"
    for label, ops, wall, cpu in rows:
        text += "| %s | %d | %.2f | %.2f |\n" % (label, ops, wall, cpu)
    print(text)
    if a.md:
        write_md(a.md, text)


if __name__ == "__main__":
    main()
