"""lstm.test: Quill's lstm (reference interpreter) against ONNX LSTM's
forward equations written out in numpy float64 (gates i, o, f, c;
sigmoid, tanh), with the state rounded to f32 after every step as Quill
does.

  lstm_check.py QIR X.npy Y.npy   prints the largest difference
"""
import re
import sys

import numpy as np


def consts(text):
    out = {}
    for name, vals, dims in re.findall(
            r"%(\w+) = constant \{value = dense<\[([^\]]*)\]> : tensor<([\dx]+)xf32>",
            text):
        shape = [int(d) for d in dims.split("x")]
        out[name] = np.array([float(v) for v in vals.split(",")],
                             np.float32).reshape(shape)
    return out


def lstm(x, w, r, b):
    h = r.shape[1]
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    H = np.zeros((x.shape[1], h))
    C = np.zeros((x.shape[1], h))
    ys = []
    for t in range(x.shape[0]):
        a = x[t].astype(np.float64) @ w.T.astype(np.float64) + \
            H @ r.T.astype(np.float64) + b[:4 * h] + b[4 * h:]
        i, o, f, c = (a[:, k * h:(k + 1) * h] for k in range(4))
        C = (sig(f) * C + sig(i) * np.tanh(c)).astype(np.float32).astype(np.float64)
        H = (sig(o) * np.tanh(C)).astype(np.float32).astype(np.float64)
        ys.append(H)
    return np.stack(ys).astype(np.float32)


c = consts(open(sys.argv[1]).read())
x, y = np.load(sys.argv[2]), np.load(sys.argv[3])
want = lstm(x, c["w"], c["r"], c["b"].astype(np.float64))
print("shape %s max diff %.1e" % ("x".join(map(str, y.shape)),
                                  float(np.abs(y - want).max())))
