#!/usr/bin/env python3
"""peers_report.py - the markdown tables of bench/peers.py: the machine and
the engines' versions, the times of each thread count with Quill's share
of the peak and its ratio to the best int8 peer, the speed-up of two
threads over one, and each engine's SQNR. Imported by peers.py, which
documents what is measured and how."""
import os
import time

from machine import cpu_model


def fmt_ms(ms):
    return "-" if ms is None else ("%.3f" % ms if ms < 1 else "%.2f" % ms)


def report(models, engines, threads, times, sqnr, peaks, notes, a):
    import onnxruntime
    import openvino
    import nncf
    cpu = cpu_model()
    try:
        load = "%.1f" % os.getloadavg()[0]
    except OSError:
        load = "?"
    quills = [e.name for e in engines if e.name.startswith("quill-")]
    peers = [e.name for e in engines if not e.name.startswith("quill-")]
    # onnxruntime's MLAS takes the best kernels the CPU has: with a limit
    # below AVX-512 VNNI it is shown but out of the ratio
    ymm = a.limit in ("avx2", "avx-vnni")
    int8_peers = [n for n in peers if n.endswith("-int8")
                  and not (ymm and n == "ort-int8")]
    o = []
    o.append("Machine: %s, %d cores, load average %s when the run started; "
             "onnxruntime %s, OpenVINO %s + NNCF %s; %s. %s of %d "
             "interleaved rounds of about %d ms per engine (a round's time: "
             "its median call); the whole run took %.1f min." % (
                 cpu, os.cpu_count(), a.load0, onnxruntime.__version__,
                 openvino.__version__, nncf.__version__,
                 time.strftime("%Y-%m-%d"),
                 "Median" if a.stat == "median" else "Least", a.rounds,
                 a.round_ms, a.minutes))
    o.append("")
    ymm_peak = ""  # the limited path's own peak
    if a.limit == "avx2" and peaks[0][2]:
        ymm_peak = ("; AVX2 vpmaddubsw + vpmaddwd + vpaddd ymm %.0f / %.0f "
                    "GMAC/s (CPU time)" % (peaks[0][2], peaks[1][2]))
    elif a.limit == "avx-vnni" and peaks[0][3]:
        ymm_peak = ("; AVX-VNNI vpdpbusd ymm %.0f / %.0f GMAC/s (CPU time)"
                    % (peaks[0][3], peaks[1][3]))
    o.append("vpdpbusd peak of one core (before / after): %.0f / %.0f "
             "GMAC/s%s%s; load average at the end %s." % (
                 peaks[0][0], peaks[1][0],
                 "; AMX tdpbusd %.0f GMAC/s" % max(peaks[0][1], peaks[1][1])
                 if peaks[0][1] else "", ymm_peak, load))
    if a.limit == "no-amx":
        o.append("")
        o.append("Every engine ran as on a CPU without AMX (`--no-amx`): "
                 "the process's request for AMX's tile state was refused "
                 "(bench/noamx.c) and oneDNN was limited to AVX512_CORE_VNNI, "
                 "so onnxruntime, OpenVINO and PyTorch used the kernels "
                 "they run on an AMD Zen 4, and Quill its avx512-vnni path.")
    elif a.limit == "avx2":
        o.append("")
        o.append("The engines ran as on a CPU with AVX2 only (`--avx2`) "
                 "as far as each can be told: oneDNN limited to AVX2 "
                 "(OpenVINO, PyTorch), AMX refused (bench/noamx.c), Quill "
                 "its avx2 path (vpmaddubsw + vpmaddwd, compiled for "
                 "--mcpu haswell; quill-avx2:x86-avx2 on the x86-avx2 "
                 "config's model, weights in [-64, 64]). onnxruntime's MLAS "
                 "cannot be limited and used its AVX-512 VNNI kernels: "
                 "ort-int8 is shown but not in the best-peer ratio.")
    elif a.limit == "avx-vnni":
        o.append("")
        o.append("The engines ran as on a CPU with AVX-VNNI and no AVX-512 "
                 "(`--avx-vnni`) as far as each can be told: oneDNN "
                 "limited to AVX2_VNNI (OpenVINO, PyTorch), AMX refused "
                 "(bench/noamx.c), Quill its avx-vnni path ({vex} vpdpbusd "
                 "ymm, compiled for --mcpu alderlake). onnxruntime's MLAS "
                 "cannot be limited and used its AVX-512 VNNI kernels: "
                 "ort-int8 is shown but not in the best-peer ratio.")
    for n in notes:
        o.append("")
        o.append("Note: " + n)
    pk = {"avx2": 2, "avx-vnni": 3}.get(a.limit, 0)
    peak = max(peaks[0][pk], peaks[1][pk]) * 1e9
    for t in threads:
        o.append("")
        o.append("### %d thread%s (%s ms; quill: %% of the %s peak "
                 "of %d core%s)" % (t, "s" if t > 1 else "",
                                    "median" if a.stat == "median"
                                    else "least round's",
                                    {2: "AVX2", 3: "AVX-VNNI"}.get(
                                        pk, "vpdpbusd"),
                                    t, "s" if t > 1 else ""))
        o.append("")
        cols = quills + peers + ["best int8 peer / " + q for q in quills]
        o.append("| model | GMAC | " + " | ".join(cols) + " |")
        o.append("| --- | ---: | " + " | ".join("---:" for _ in cols) + " |")
        for m in models:
            cells = []
            for n in quills:
                ms = times.get((m.name, t, n))
                cells.append("-" if ms is None else "%s (%.0f%%)" % (
                    fmt_ms(ms), 100.0 * m.macs / (ms * 1e-3) / (peak * t))
                    if peak else fmt_ms(ms))
            for n in peers:
                cells.append(fmt_ms(times.get((m.name, t, n))))
            best = [times.get((m.name, t, n)) for n in int8_peers]
            best = min([b for b in best if b is not None], default=None)
            for n in quills:
                q = times.get((m.name, t, n))
                cells.append("-" if not q or best is None else
                             "%.2fx" % (best / q))
            o.append("| %s | %.3f | %s |" % (m.name, m.macs * 1e-9,
                                             " | ".join(cells)))
    if len(threads) > 1:
        o.append("")
        o.append("Speed-up of %d threads over 1 (same run):" % threads[-1])
        o.append("")
        names = quills + peers
        o.append("| model | " + " | ".join(names) + " |")
        o.append("| --- | " + " | ".join("---:" for _ in names) + " |")
        for m in models:
            cells = []
            for n in names:
                a1 = times.get((m.name, threads[0], n))
                a2 = times.get((m.name, threads[-1], n))
                cells.append("-" if not a1 or not a2 else "%.2fx" % (a1 / a2))
            o.append("| %s | %s |" % (m.name, " | ".join(cells)))
    o.append("")
    o.append("SQNR of each engine's output against the float model's "
             "(onnxruntime fp32), on one held-out input, dB:")
    o.append("")
    names = [n for n in quills + peers if n != "ort-fp32"]
    o.append("| model | " + " | ".join(names) + " |")
    o.append("| --- | " + " | ".join("---:" for _ in names) + " |")
    for m in models:
        cells = []
        for n in names:
            v = sqnr.get((m.name, n))
            cells.append("-" if v is None else "%.1f" % v)
        o.append("| %s | %s |" % (m.name, " | ".join(cells)))
    return "\n".join(o) + "\n"
