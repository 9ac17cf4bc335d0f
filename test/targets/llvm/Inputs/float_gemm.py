"""float-gemm-order.test: inputs, and the check of the interpreter's float
gemm/matmul against its summation order written out in numpy float32
(targets/reference/sgemm_order.h): per K block of 256 terms, either a sum
in k order from 0 or, for a gemm with trans_b and fewer than 4 rows, 8
lanes (lane k mod 8) reduced as ((l0 + l1) + (l2 + l3)) + ((l4 + l5) +
(l6 + l7)); the blocks added in order. Also the inputs of the unrolled
LSTM and GRU models (rnn_models.py lstm_jit, gru_jit), scaled so that their
gates do not saturate (a saturated sigmoid hides a sum's last bits).

  float_gemm.py gen DIR     write the inputs
  float_gemm.py check DIR   compare the outputs (exactly)
"""
import os
import sys

import numpy as np

F = np.float32
KC, LANES = 256, 8


def block_seq(a, b):
    s = F(0)
    for x, y in zip(a, b):
        s = F(s + F(x * y))
    return s


def block_lanes(a, b):
    lane = [F(0)] * LANES
    for k, (x, y) in enumerate(zip(a, b)):
        lane[k % LANES] = F(lane[k % LANES] + F(x * y))
    l0, l1, l2, l3, l4, l5, l6, l7 = lane
    return F(F(F(l0 + l1) + F(l2 + l3)) + F(F(l4 + l5) + F(l6 + l7)))


def dot(a, b, lanes):
    tot = None
    for p in range(0, len(a), KC):
        s = (block_lanes if lanes else block_seq)(a[p:p + KC], b[p:p + KC])
        tot = s if tot is None else F(tot + s)
    return tot


def mm(a, bt, lanes):
    """a [M, K] times bt^T (bt [N, K])."""
    return np.array([[dot(r, c, lanes) for c in bt] for r in a], F)


def gen(d):
    rng = np.random.default_rng(14)
    f = lambda *s: rng.standard_normal(s).astype(F)
    ins = dict(da=f(2, 300), db=f(40, 300), dc=f(40), sa=f(6, 520),
               sb=f(24, 520), ma=f(2, 3, 300), mb=f(300, 24),
               lx=(f(5, 1, 300) * F(0.05)), gx=(f(1, 3, 300) * F(0.05)),
               gh=(f(2, 3, 12) * F(0.5)))
    for k, v in ins.items():
        np.save(os.path.join(d, k + ".npy"), v)


def check(d):
    ld = lambda n: np.load(os.path.join(d, n + ".npy"))
    want = {
        "dots": F(0.5) * mm(ld("da"), ld("db"), True) + F(2) * ld("dc"),
        "seq_gemm": mm(ld("sa"), ld("sb"), False),
        "seq_matmul": np.stack([mm(x, ld("mb").T, False) for x in ld("ma")]),
    }
    bad = 0
    for name, w in want.items():
        got = ld("y_" + name)
        n = int(np.sum(got.view(np.uint32) != w.astype(F).view(np.uint32)))
        print("%s: %d of %d values differ" % (name, n, got.size))
        bad += n
    # the documented order matters: the plain k-order sum differs
    plain = np.array([[block_seq(r, c) for c in ld("db")] for r in ld("da")])
    print("dots vs one k-order sum: %d of %d differ" % (
        int(np.sum(F(0.5) * plain + F(2) * ld("dc") != ld("y_dots"))),
        plain.size))
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2])
    else:
        sys.exit(check(sys.argv[2]))
