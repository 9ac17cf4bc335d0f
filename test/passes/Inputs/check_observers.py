#!/usr/bin/python3
"""Check the ranges `calibrate` chose against reference implementations.

    check_observers.py CALIBRATED.qir DATA_DIR

For every calibrated fake_quant of CALIBRATED.qir (one observer over the
graph input %x, or over relu(%x) when the observed value is named %r), the
script recomputes the range from the samples in DATA_DIR with numpy,
following the algorithms documented in passes/observers.c, and the scale
and zero point with the formulas of docs/quantization.md section 2. For
symmetric kl it also runs pytorch-quantization's _compute_amax_entropy
(TensorRT's entropy calibration), an independent implementation, and
requires the same amax. Prints one line per observer ("kl i8 sym: ok ...")
and exits 1 on the first mismatch.
"""
import glob
import math
import re
import sys
from collections import Counter

import numpy as np

FQ = re.compile(r"fake_quant %(\w+) \{(.*)\} : ")
QUANT = re.compile(r"quant = !quant\.uniform<(\w+)(?:<(-?\d+):(-?\d+)>)?"
                   r":f32, ([^:]+):(-?\d+)>")


def attrs(text):
    out = {}
    for key in ("qmin", "qmax", "bins"):
        m = re.search(rf"\b{key} = (-?\d+)", text)
        if m:
            out[key] = int(m.group(1))
    for key in ("min", "max", "percentile", "momentum"):
        m = re.search(rf"\b{key} = (-?[0-9.e+-]+)", text)
        if m:
            out[key] = float(m.group(1))
    out["symmetric"] = "symmetric = true" in text
    out["p2"] = "power_of_two = true" in text
    out["observer"] = re.search(r'observer = "(\w+)"', text).group(1)
    m = QUANT.search(text)
    out["scale"], out["zp"] = float(m.group(4)), int(m.group(5))
    return out


def params(a, lo, hi):
    """quill_quant_params_from_range (backends/scheme.c)."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    n = float(a["qmax"] - a["qmin"])
    if a["symmetric"]:
        sc = 2.0 * max(-lo, hi) / n
    else:
        sc = (hi - lo) / n
    degen = not sc >= 2.2250738585072014e-308
    if degen:
        sc = 1.0
    if a["p2"] and not degen:
        m, e = math.frexp(sc)
        sc = sc if m == 0.5 else math.ldexp(1.0, e)
    if a["symmetric"]:
        return sc, 0
    zp = round(a["qmin"] - (0.0 if degen else lo) / sc)  # half even
    return sc, min(max(zp, a["qmin"]), a["qmax"])


class Hist:
    def __init__(self, samples, sym, bins):
        mn = min(float(s.min()) for s in samples)
        mx = max(float(s.max()) for s in samples)
        self.mn, self.mx, self.bins, self.sym = mn, mx, bins, sym
        if sym:
            self.lo, self.w = 0.0, max(abs(mn), abs(mx)) / bins
        else:
            lo, hi = min(mn, 0.0), max(mx, 0.0)
            self.lo, self.w = lo, hi / bins - lo / bins
        h = np.zeros(bins)
        hs = np.zeros(bins)  # sums of the positions (bin units), for means
        inv = 1.0 / self.w
        for s in samples:
            v = s.astype(np.float64)
            u = ((np.abs(v) if sym else v) - self.lo) * inv
            b = np.where(u < 0, 0.0, np.where(u > bins - 1, bins - 1,
                                              np.floor(u)))
            np.add.at(h, b.astype(np.int64), 1.0)
            np.add.at(hs, b.astype(np.int64), np.clip(u, b, b + 1))
        self.h = h
        self.hs = hs

    def cum(self, h):
        return np.concatenate([[0.0], np.cumsum(h)])


def value_at(H, h, cum, q):
    for b in range(H.bins):
        if cum[b + 1] >= q and h[b] > 0:
            frac = min(max((q - cum[b]) / h[b], 0.0), 1.0)
            return H.lo + (b + frac) * H.w
    return H.lo + H.bins * H.w


def windows(H, first):
    z = 0.0 if H.sym else -H.lo / H.w
    for i in range(H.bins, first - 1, -1):
        a = 0 if H.sym else int(math.floor(z * (H.bins - i) / H.bins + 0.5))
        a = min(a, H.bins - i)
        if H.sym:
            yield i, a, -i * H.w, i * H.w
        else:
            yield i, a, H.lo + a * H.w, H.lo + (a + i) * H.w


def kl_range(H, a):
    h = H.h.copy()
    if H.sym:
        h[0] = h[1]
    else:
        b = min(int(math.floor(-H.lo / H.w)), H.bins - 1)
        nb = [h[k] for k in (b - 1, b + 1) if 0 <= k < H.bins]
        h[b] = sum(nb) / len(nb)
    cum = H.cum(h)
    total = cum[-1]
    nq = a["qmax"] + 1 if H.sym else a["qmax"] - a["qmin"] + 1
    best, choice = math.inf, None
    for i, s, lo, hi in windows(H, min(nq, H.bins)):
        w = h[s:s + i]
        qtot = cum[s + i] - cum[s]
        p = w.copy()
        p[0] += cum[s]
        p[-1] += total - cum[s + i]
        g = (np.arange(i) * nq) // i
        nz = w > 0
        gs = np.bincount(g[nz], weights=w[nz], minlength=nq)
        gn = np.bincount(g[nz], minlength=nq)
        if qtot <= 0 or np.any((p > 0) & ~nz):
            d = math.inf
        else:
            m = p > 0
            pn = p[m] / total
            qn = gs[g[m]] / gn[g[m]] / qtot
            d = float(np.sum(pn * np.log(pn / qn)))
        if d < best:
            best, choice = d, (lo, hi)
    return choice


def pytorch_quantization_amax(hist, edges, nbins=128, start=128):
    """pytorch_quantization.calib.histogram._compute_amax_entropy."""
    bins = hist.copy()
    bins[0] = bins[1]
    total = np.sum(bins)
    div = []
    for i in range(start, len(bins) + 1):
        space = np.linspace(0, i, num=nbins + 1)
        dig = np.digitize(range(i), space) - 1
        dig[bins[:i] == 0] = -1
        nd = np.zeros(nbins)
        for idx, d in enumerate(dig):
            if d != -1:
                nd[d] += bins[idx]
        for k, v in Counter(dig).items():
            if k != -1:
                nd[k] /= v
        q = np.array([nd[d] if d != -1 else 0.0 for d in dig])
        p = np.array(bins[:i], dtype=np.float64)
        p[-1] += np.sum(bins[i:])
        p, q = p / total, q / q.sum()
        m = p > 0
        div.append(math.inf if np.any(q[m] == 0)
                   else float(np.sum(p[m] * np.log(p[m] / q[m]))))
    div = np.array(div)
    last = len(div) - 1 - np.argmin(div[::-1])
    return edges[last + start]


def mse_range(H, a):
    best, choice, cache = math.inf, None, None
    nz = H.h > 0
    # each bin's values quantized at their mean (passes/observers.c)
    means = H.lo + np.where(nz, H.hs / np.maximum(H.h, 1.0),
                            np.arange(H.bins) + 0.5) * H.w
    for i, s, lo, hi in windows(H, 1):
        sc, zp = params(a, lo, hi)
        if cache and cache[0] == (sc, zp):
            err = cache[1]
        else:
            x = means[nz]
            q = np.clip(np.rint(x * (1.0 / sc)) + zp, a["qmin"], a["qmax"])
            err = float(np.sum(H.h[nz] * (x - (q - zp) * sc) ** 2))
            cache = ((sc, zp), err)
        if err < best:
            best, choice = err, (lo, hi)
    return choice


def expected(a, samples):
    kind = a["observer"]
    mn = min(float(s.min()) for s in samples)
    mx = max(float(s.max()) for s in samples)
    if kind == "minmax":
        return mn, mx
    if kind == "ema_minmax":
        m = a.get("momentum", 0.9)
        lo, hi = float(samples[0].min()), float(samples[0].max())
        for s in samples[1:]:
            lo = m * lo + (1 - m) * float(s.min())
            hi = m * hi + (1 - m) * float(s.max())
        return lo, hi
    bins = 2048 if kind == "percentile" else a.get("bins", 2048)
    H = Hist(samples, a["symmetric"], bins)
    if kind == "percentile":
        cum = H.cum(H.h)
        p = a["percentile"] / 100.0
        if H.sym:
            amax = value_at(H, H.h, cum, p * cum[-1])
            lo, hi = -amax, amax
        else:
            lo = value_at(H, H.h, cum, (1 - p) * cum[-1])
            hi = value_at(H, H.h, cum, p * cum[-1])
    elif kind == "kl":
        lo, hi = kl_range(H, a)
        if H.sym and a["qmax"] == 127:
            edges = np.linspace(0.0, H.bins * H.w, H.bins + 1)
            ref = pytorch_quantization_amax(H.h.copy(), edges)
            if not math.isclose(ref, hi, rel_tol=1e-12):
                sys.exit(f"kl: pytorch-quantization gives amax {ref}, "
                         f"the reference here {hi}")
    else:
        lo, hi = mse_range(H, a)
    lo, hi = max(lo, mn), min(hi, mx)
    return min(lo, hi), hi


def main():
    text = open(sys.argv[1]).read()
    files = sorted(glob.glob(f"{sys.argv[2]}/*.npy"))
    xs = [np.load(f).astype(np.float32) for f in files]
    data = {"x": xs, "r": [np.maximum(x, 0) for x in xs]}
    for name, body in FQ.findall(text):
        a = attrs(body)
        lo, hi = expected(a, data[name])
        sc, zp = params(a, lo, hi)
        what = (f"{a['observer']} {'sym' if a['symmetric'] else 'asym'} "
                f"[{a['qmin']}, {a['qmax']}]{' p2' if a['p2'] else ''} "
                f"on %{name}")
        ok = (math.isclose(lo, a["min"], rel_tol=1e-9, abs_tol=1e-12) and
              math.isclose(hi, a["max"], rel_tol=1e-9, abs_tol=1e-12) and
              math.isclose(sc, a["scale"], rel_tol=1e-12) and zp == a["zp"])
        if not ok:
            print(f"{what}: MISMATCH: expected [{lo!r}, {hi!r}] scale "
                  f"{sc!r} zp {zp}; got [{a['min']!r}, {a['max']!r}] scale "
                  f"{a['scale']!r} zp {a['zp']}")
            return 1
        print(f"{what}: ok [{lo:.6g}, {hi:.6g}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
