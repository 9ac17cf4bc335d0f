"""Print the largest |cell state| of Inputs/lstm_relu.qir's lstm (x ->
relu -> lstm) over the .npy samples in a directory, in float64 with the
states rounded to f32 per step as the reference kernel stores them: an
independent check of the calibrate pass's cell observer (passes/observers.c).

  lstm_cell_absmax.py MODEL.qir CALIBDIR
"""
import glob
import re
import sys

import numpy as np


def const(src, name, shape):
    m = re.search(r"%%%s = constant \{value = dense<\[([^\]]*)\]>" % name, src)
    return np.array([float(v) for v in m.group(1).split(",")]).reshape(shape)


def main():
    src = open(sys.argv[1]).read()
    w, r = const(src, "w", (12, 4)), const(src, "r", (12, 3))
    b = const(src, "b", (24,))
    bias = b[:12] + b[12:]
    sig = lambda v: 1.0 / (1.0 + np.exp(-v))
    f32 = lambda v: v.astype(np.float32).astype(np.float64)
    cmax = 0.0
    for path in sorted(glob.glob(sys.argv[2] + "/*.npy")):
        x = np.maximum(np.load(path).astype(np.float64), 0.0)
        h = np.zeros((x.shape[1], 3))
        c = np.zeros((x.shape[1], 3))
        for t in range(x.shape[0]):
            a = x[t] @ w.T + h @ r.T + bias
            i, o, f, g = sig(a[:, 0:3]), sig(a[:, 3:6]), sig(a[:, 6:9]), \
                np.tanh(a[:, 9:12])
            c = f32(f * c + i * g)
            h = f32(o * np.tanh(c))
            cmax = max(cmax, float(np.abs(c).max()))
    print("cell_absmax %.6f" % cmax)


main()
