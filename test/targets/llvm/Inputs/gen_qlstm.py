"""Write a one-op qlstm module (TFLite's integer LSTM, ir/qlstm.h) with
random int8 weights and int32 biases, and a random int8 input for it.

  gen_qlstm.py OUT.qir OUT_X.npy SEQ BATCH IN HIDDEN CELL_SHIFT SEED [WSCALE
               [Y_SCALE]]

WSCALE multiplies the weights' range (large values saturate the gate sums
and the cell state); Y_SCALE (default 1/128) below 1/128 saturates y. The scales are chosen so that gates span the
logistic's range; numpy only.
"""
import sys

import numpy as np


def dense(a, ty):
    return "dense<\"0x%s\"> : %s" % (a.tobytes().hex().upper(), ty)


def main():
    out, xout = sys.argv[1], sys.argv[2]
    seq, batch, nin, h, cell, seed = (int(v) for v in sys.argv[3:9])
    wscale = float(sys.argv[9]) if len(sys.argv) > 9 else 1.0
    rs = np.random.RandomState(seed)
    lim = int(min(127, 40 * wscale))
    w = rs.randint(-lim, lim + 1, (4 * h, nin)).astype(np.int8)
    r = rs.randint(-lim, lim + 1, (4 * h, h)).astype(np.int8)
    b = rs.randint(-3000, 3001, 4 * h).astype(np.int32)
    sy = float(sys.argv[10]) if len(sys.argv) > 10 else 1.0 / 128
    sx, zx, sw, sr, zy = 0.05, int(rs.randint(-10, 11)), 0.004, 0.005, \
        int(rs.randint(-8, 9))
    xt = "tensor<%dx%dx%dx!quant.uniform<i8:f32, %g:%d>>" % (seq, batch, nin,
                                                            sx, zx)
    yt = "tensor<%dx%dx%dx!quant.uniform<i8:f32, %g:%d>>" % (seq, batch, h,
                                                            sy, zy)
    wt = "tensor<%dx%dx!quant.uniform<i8<-127:127>:f32, %g:0>>" % (4 * h, nin,
                                                                  sw)
    rt = "tensor<%dx%dx!quant.uniform<i8<-127:127>:f32, %g:0>>" % (4 * h, h,
                                                                  sr)
    bt = "tensor<%dxi32>" % (4 * h)
    with open(out, "w") as f:
        f.write("func @qlstm(%%x: %s) -> %s {\n" % (xt, yt))
        f.write("  %%w = constant {value = %s} : %s\n" % (dense(w, wt), wt))
        f.write("  %%r = constant {value = %s} : %s\n" % (dense(r, rt), rt))
        f.write("  %%b = constant {value = %s} : %s\n" % (dense(b, bt), bt))
        f.write("  %%y = qlstm %%x, %%w, %%r, %%b {cell_shift = %d} : %s\n" %
                (cell, yt))
        f.write("  return %y\n}\n")
    np.save(xout, rs.randint(-128, 128, (seq, batch, nin)).astype(np.int8))


main()
