"""layer_norm-f32.test: inputs, and the check of Quill's results against
TFLite's float builtins' steps written out in numpy float32 (MEAN: one
sum in row order, divided by (float)n; SQUARED_DIFFERENCE; ADD; RSQRT as
1 / sqrt; SUB, MUL, MUL, ADD), and against the f64 definition.

  layer_norm_f32.py gen DIR     write the inputs
  layer_norm_f32.py check DIR   compare the outputs
"""
import os
import sys

import numpy as np

F = np.float32


def tflite_steps(x, g, b, eps):
    n = x.shape[-1]
    rows = x.reshape(-1, n)
    out = np.empty_like(rows)
    for r, row in enumerate(rows):
        s = F(0)
        for v in row:
            s = F(s + v)
        m = F(s / F(n))
        q = F(0)
        for v in row:
            d = F(v - m)
            q = F(q + F(d * d))
        inv = F(F(1) / np.sqrt(F(F(q / F(n)) + F(eps))))
        out[r] = ((row - m) * inv) * g + b
    return out.reshape(x.shape)


def f64_def(x, g, b, eps):
    x = x.astype(np.float64)
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return ((x - m) / np.sqrt(v + eps) * g + b).astype(F)


def main():
    cmd, d = sys.argv[1], sys.argv[2]
    p = lambda n: os.path.join(d, n + ".npy")  # noqa: E731
    if cmd == "gen":
        r = np.random.RandomState(11)
        np.save(p("x"), (r.randn(3, 5, 96) * 3 + 1).astype(F))
        np.save(p("g"), (1 + r.randn(96) * 0.2).astype(F))
        np.save(p("b"), (r.randn(96) * 0.1).astype(F))
        np.save(p("q"), r.randint(-128, 128, (4, 768)).astype(np.int8))
        np.save(p("g768"), (1 + r.randn(768) * 0.2).astype(F))
        return 0
    x, g, b = np.load(p("x")), np.load(p("g")), np.load(p("b"))
    want = tflite_steps(x, g, b, 1e-6)
    y, z = np.load(p("y")), np.load(p("z"))
    assert np.array_equal(y.view(np.int32), want.view(np.int32)), \
        "numerics f32 is not TFLite's steps: %g" % np.abs(y - want).max()
    assert np.abs(z - f64_def(x, g, b, 1e-6)).max() <= 1e-6
    assert (y != z).any(), "the two numerics agree everywhere: a weak input"
    # fused: dequantize, TFLite's steps, quantize (round half away, as
    # "tflite" rounds a float): every value
    q, g7 = np.load(p("q")), np.load(p("g768"))
    f = F(0.07) * (q.astype(F) - F(3))
    ln = tflite_steps(f, g7, np.zeros(768, F), 1e-6)
    t = ln.astype(np.float64) / F(0.004)
    want_q = np.clip(np.sign(t) * np.floor(np.abs(t) + 0.5) - 2, -128, 127)
    h = np.load(p("h"))
    assert np.array_equal(h.astype(np.int64), want_q.astype(np.int64)), \
        "fused: %d values differ" % (h != want_q).sum()
    print("ok: %d of %d f32 values differ from f64" % ((y != z).sum(), y.size))
    return 0


sys.exit(main())
