#!/usr/bin/env python3
"""stage_profile.py - where a model's second thread goes: per-stage
parallel efficiency of Quill's compiled code and the two-thread speed-up
the profile predicts, measured in CPU time so that a loaded machine does
not change the answer.

  build/quill quantize m.onnx --backend x86-vnni --calib CALIB -o m.qir
  /usr/bin/python3 bench/stage_profile.py m.qir [--isa amx] [--threads 2]
                   [--chunk-clock cpu|wall]
                   [--reps 100] [--work DIR] [--stages] [--parallel-all]

Compiles m.qir with `quill compile --threads T --isa ISA` (the code a user
links), builds it into a shared library and runs bench-stage-profile on
it twice: with one thread (every stage on the caller: the baseline) and
with T (the shipped pool). bench-stage-profile times every stage that
goes to the pool, and every chunk a thread runs in the thread's CPU time.

From the one-thread run: the serial part (the caller's CPU time outside
the parallel stages) and each parallel stage's time t1. The bound for T
threads on an idle machine (`bound`):

  serial + sum over stages of t1 * (largest chunk count a thread gets,
           the pool's chunking of the stage's tasks) / tasks

that is Amdahl's law with the stage's granularity and no hand-over cost
(`lost us`: a stage's time above t1 / T from its granularity).
From the T-thread run, per stage: the CPU time in chunks of the caller
and of the workers; `cpu-bound` replaces t1 by their sum (cache misses on
the other core's data count), and `measured` is the wall time (on a loaded
machine it says little; the two bounds do not depend on the load). Times
are the least over the runs (other processes only ever add time).
--stages lists every stage (the 20 longest otherwise).

--chunk-clock wall times the chunks on the monotonic clock. The thread
CPU clock is a system call on this kind of virtual machine, about 0.2 us
a read and two a chunk: stages of many small chunks (AMX stages, a
transformer's) then show 10 us or more of `c cpu` + `w cpu` that is the
clock's, and `cpu-bound` is that much too high. Wall time is right when
each thread keeps its core (a quiet machine, chrt -f 50).

--peak: the efficiency view of the one-thread run instead (needs no second
thread): per stage its MACs (qconv2d / qmatmul, read from m.qir; depthwise
included), its least CPU time, the share of the vpdpbusd peak of one
core that those MACs at that time are (with --isa avx2: of the AVX2
peak, vpmaddubsw + vpmaddwd + vpaddd ymm; with --isa avx-vnni: of
vpdpbusd ymm's; with --isa amx: of the tdpbusd peak), the activation
bytes the op reads and writes per second (GB/s: for memory-bound
stages, depthwise convs, adds, pools; weights not counted)
(bench-llvm-kernels --peak, measured in the same run, before and after,
the higher kept) and the op's weight bytes (w KB: what a conv streams in
from L2 or beyond once per run at least), summed per kind of stage (dot,
panel, qadd, ...) at the end:

  /usr/bin/python3 bench/stage_profile.py m.qir --isa avx512-vnni --peak

--isa avx2 compiles for --mcpu haswell unless --mcpu says otherwise: for
the host's CPU LLVM would give the avx2 path's code AVX-512's 32
registers and fuse vpmaddwd + vpaddd into AVX-VNNI's vpdpwssd. --isa
avx-vnni compiles for --mcpu alderlake (AVX-VNNI, no AVX-512) likewise.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHUNKS_PER_THREAD = 16  # runtime/quill_rt.c, QUILL_RT_CHUNKS_PER_THREAD


def sh(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        sys.exit("%s failed: %s" % (" ".join(cmd), p.stderr.strip()))
    return p.stdout


def parse(text):
    stages, total = [], {}
    for line in text.splitlines():
        f = line.split()
        if f and f[0] == "stage":
            stages.append({"off": int(f[2], 16), "ntasks": int(f[3]),
                           "wall": float(f[4]), "cc": float(f[5]),
                           "wc": float(f[6]), "cn": float(f[7]),
                           "wn": float(f[8]), "all": float(f[9])})
        elif f and f[0] == "total":
            total = {f[i]: float(f[i + 1]) for i in range(1, len(f) - 1, 2)}
    return stages, total


def op_macs(qir):
    """MACs of each qconv2d / qmatmul of the first function by the op's
    1-based position (the K of the stage names q.K.<stage>), from the result
    type and the weight's shape (its defining line)."""
    shapes, macs, k = {}, {}, 0
    nbytes, consts, wbytes = {}, set(), {}
    rx = re.compile(r"^\s*%(\w+) = (\w+) (.*)$")
    for line in open(qir):
        m = rx.match(line)
        if not m:
            continue
        name, op, rest = m.groups()
        k += 1
        ts = re.findall(r"tensor<([0-9x]+)x", rest)
        if ts:
            shapes[name] = [int(d) for d in ts[-1].split("x")]
        ops = re.findall(r"%(\w+)", rest.split("{")[0])
        if ts and op != "constant":
            # activation bytes read and written (8-bit: one per element;
            # f32 tensors four), constants (weights) left out
            def size(name, t):
                n = 1
                for d in shapes.get(name, []):
                    n *= d
                return n * (4 if t and "xf32" in t else 1)
            elt = re.findall(r"tensor<[0-9x]+x([^,>]*)", rest)
            nbytes[str(k)] = size(name, "xf32" if elt and elt[-1] == "f32"
                                  else "") + sum(
                size(o, "") for o in ops if o in shapes and
                o not in consts)
        if op == "constant":
            consts.add(name)
        if op == "qconv2d" and len(ops) >= 2 and ops[1] in shapes:
            y, w = shapes[name], shapes[ops[1]]
            macs[str(k)] = y[0] * y[1] * y[2] * y[3] * w[1] * w[2] * w[3]
            wbytes[str(k)] = w[0] * w[1] * w[2] * w[3]
        elif op == "qmatmul" and len(ops) >= 2 and ops[1] in shapes:
            y, b = shapes[name], shapes[ops[1]]
            n = 1
            for d in y:
                n *= d
            macs[str(k)] = n * b[-2]
            if ops[1] in consts:
                wbytes[str(k)] = b[-2] * b[-1]
    return macs, nbytes, wbytes


def peak_gmacs(build, isa=""):
    """The peak of the path's dot step: vpdpbusd zmm, with --isa avx2
    vpmaddubsw + vpmaddwd + vpaddd ymm, with --isa avx-vnni vpdpbusd ymm,
    with --isa amx tdpbusd (bench-llvm-kernels --peak)."""
    out = sh([os.path.join(build, "bench-llvm-kernels"), "--peak"])
    rx = {"avx2": r"^AVX2 peak [^:]*: ([0-9.]+) GMAC/s",
          "avx-vnni": r"^AVX-VNNI peak [^:]*: ([0-9.]+) GMAC/s",
          "amx": r"^AMX peak [^:]*: ([0-9.]+) GMAC/s"}.get(
              isa, r"^VNNI peak [^:]*: ([0-9.]+) GMAC/s")
    m = re.search(rx, out, re.M)
    return float(m.group(1)) if m else 0.0


def peak_name(isa):
    return {"avx2": "vpmaddubsw", "amx": "tdpbusd",
            "avx-vnni": "vpdpbusd ymm"}.get(isa, "vpdpbusd")


def print_peak(a, stages, total, names, peak):
    macs, nbytes, wbytes = op_macs(a.qir)
    one = total["serial_cpu_us"] + sum(s["cc"] for s in stages)
    allm = sum(macs.values())
    print("%s, isa %s, 1 thread: CPU %.0f us (serial %.0f us), %.3f GMAC, "
          "%s peak %.1f GMAC/s: %.1f%% of peak (ideal %.0f us)" % (
              os.path.basename(a.qir), a.isa or "auto", one,
              total["serial_cpu_us"], allm * 1e-9, peak_name(a.isa), peak,
              100 * allm / (one * 1e-6) / (peak * 1e9) if peak else 0,
              allm / (peak * 1e3) if peak else 0))
    print()
    print("%-28s %6s %10s %9s %9s %7s %7s %8s" % (
        "stage", "tasks", "MMAC", "t1 us", "ideal us", "% peak", "GB/s",
        "w KB"))
    kinds = {}
    for s in stages:
        n = names.get(s["off"], "?")
        parts = n.split(".")
        val = parts[1] if len(parts) > 2 else ""
        kind = parts[2] if len(parts) > 2 else n
        mc = macs.get(val, 0) if kind in ("dot", "amx", "dwconv", "conv",
                                          "qconv2d", "qmatmul") else 0
        nb = nbytes.get(val, 0) if kind not in ("halo", "panel") else 0
        ideal = mc / (peak * 1e3) if peak else 0
        k = kinds.setdefault(kind, [0, 0.0, 0.0, 0])
        k[0] += mc
        k[1] += s["cc"]
        k[2] += ideal
        k[3] += 1
        wb = wbytes.get(val, 0) if mc else 0
        print("%-28s %6d %10.1f %9.1f %9.1f %7s %7s %8s" % (
            n, s["ntasks"], mc * 1e-6, s["cc"], ideal,
            "%.0f%%" % (100 * ideal / s["cc"]) if mc and s["cc"] else "",
            "%.1f" % (nb / s["cc"] * 1e-3) if nb and s["cc"] else "",
            "%.0f" % (wb / 1024) if wb else ""))
    print()
    print("%-28s %6s %10s %9s %9s %7s" % ("kind", "stages", "MMAC", "t1 us",
                                          "ideal us", "% peak"))
    for kind, (mc, t, ideal, cnt) in sorted(kinds.items(),
                                            key=lambda kv: -kv[1][1]):
        print("%-28s %6d %10.1f %9.1f %9.1f %7s" % (
            kind, cnt, mc * 1e-6, t, ideal,
            "%.0f%%" % (100 * ideal / t) if mc and t else ""))
    print("%-28s %6s %10s %9.1f" % ("serial (between stages)", "", "",
                                    total["serial_cpu_us"]))


def max_share(ntasks, threads):
    """The fraction of a stage's tasks the busiest thread runs when the
    pool cuts it into min(ntasks, 16 x threads) chunks of sizes within one
    task (quill_rt_pool_run) and each thread claims the next chunk as soon
    as it is free (tasks of equal cost, threads starting together)."""
    nchunks = min(ntasks, threads * CHUNKS_PER_THREAD)
    done = [0] * threads
    for k in range(nchunks):
        size = (k + 1) * ntasks // nchunks - k * ntasks // nchunks
        i = done.index(min(done))
        done[i] += size
    return max(done) / ntasks


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("qir")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--isa", default="")
    ap.add_argument("--mcpu", default="",
                    help="quill compile --mcpu (default: the host's; for "
                    "--isa avx2 haswell, for --isa avx-vnni alderlake, so "
                    "that the code is what a CPU with that path and "
                    "nothing newer runs: 16 ymm registers, no AVX-512)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--work", default="")
    ap.add_argument("--stages", action="store_true")
    ap.add_argument("--chunk-clock", choices=("cpu", "wall"), default="cpu",
                    help="time chunks in the thread's CPU time (a system "
                    "call, about 0.2 us a read here) or wall time (the "
                    "vDSO: for a quiet machine under real-time priority)")
    ap.add_argument("--parallel-all", action="store_true",
                    help="compile with --parallel-all: every stage of "
                    "several tasks goes to the pool, so the profile times "
                    "the small ones the cost model keeps on the caller")
    ap.add_argument("--peak", action="store_true",
                    help="one-thread run only: per-stage MACs, CPU time "
                    "and %% of the path's peak (vpdpbusd; avx2: vpmaddubsw; amx: "
                    "tdpbusd) (implies --parallel-all)")
    a = ap.parse_args()
    if a.peak:
        a.parallel_all = True
        a.threads = max(a.threads, 2)
    work = a.work or tempfile.mkdtemp(prefix="quill-prof-")
    os.makedirs(work, exist_ok=True)
    obj = os.path.join(work, "m.o")
    cmd = [os.path.join(a.build, "quill"), "compile", a.qir, "-o", obj,
           "--name", "m", "--threads", str(a.threads)]
    if a.isa:
        cmd += ["--isa", a.isa]
    mcpu = a.mcpu or {"avx2": "haswell", "avx-vnni": "alderlake"}.get(a.isa,
                                                                      "")
    if mcpu:
        cmd += ["--mcpu", mcpu]
    if a.parallel_all:
        cmd.append("--parallel-all")
    sh(cmd)
    so = os.path.join(work, "m.so")
    sh(["cc", "-shared", "-fPIC", "-o", so, obj])
    names = {}
    for line in sh(["nm", so]).splitlines():
        f = line.split()
        if len(f) == 3 and f[2].startswith("q.task."):
            names[int(f[0], 16)] = f[2].split(".", 3)[3]
    prof = os.path.join(a.build, "bench-stage-profile")
    hdr = os.path.join(work, "m.h")
    runs = {}
    if a.peak:
        pk = peak_gmacs(a.build, a.isa)
        stages, total = parse(sh([prof, so, hdr, "--threads", "1",
                                  "--reps", str(a.reps)]))
        pk = max(pk, peak_gmacs(a.build, a.isa))
        print_peak(a, stages, total, names, pk)
        return 0
    for t in (1, a.threads):
        runs[t] = parse(sh([prof, so, hdr, "--threads", str(t),
                            "--reps", str(a.reps),
                            "--chunk-clock", a.chunk_clock]))
    s1, tot1 = runs[1]
    sT, totT = runs[a.threads]
    par1 = sum(s["cc"] for s in s1)
    serial = tot1["serial_cpu_us"]
    bound = serial + sum(s["cc"] * max_share(s["ntasks"], a.threads)
                         for s in s1)
    cpub = serial + sum(x["all"] *
                        max_share(x["ntasks"], a.threads) for x in sT)
    rows = []
    for x, y in zip(s1, sT):
        n = names.get(x["off"], "?")
        loss = x["cc"] * (max_share(x["ntasks"], a.threads) - 1 / a.threads)
        rows.append((x["cc"], n, x["ntasks"], x["cc"], loss, y["wall"],
                     y["cc"], y["wc"], y["cn"], y["wn"]))
    if not a.stages:
        rows = sorted(rows, reverse=True)[:20]
    one = serial + par1
    print("%s, isa %s, %d threads: 1-thread CPU %.0f us (%d parallel stages "
          "%.0f us, serial %.0f us = %.1f%%)" % (
              os.path.basename(a.qir), a.isa or "auto", a.threads,
              one, len(s1), par1, serial, 100 * serial / one))
    print("bound (granularity, no hand-over) %.0f us = %.2fx; cpu-bound "
          "(the %d-thread run's chunk CPU) %.0f us = %.2fx; measured wall "
          "median %.0f us (1 thread %.0f us) = %.2fx" % (
              bound, one / bound, a.threads, cpub, one / cpub,
              totT["wall_us"], tot1["wall_us"],
              tot1["wall_us"] / totT["wall_us"]))
    print()
    print("%-28s %6s %8s %8s %8s %8s %8s %6s %6s" % (
        "stage", "tasks", "t1 us", "lost us", "wall us", "c cpu", "w cpu",
        "c chk", "w chk"))
    for r in rows:
        print("%-28s %6d %8.1f %8.1f %8.1f %8.1f %8.1f %6.1f %6.1f" % r[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
