"""ONNX RNN, GRU and LSTM models for the frontend's lit tests (rnn.test).

Usage:
    /usr/bin/python3 rnn_models.py make OUTDIR NAME...   # OUTDIR/NAME.onnx
    /usr/bin/python3 rnn_models.py check QUILL OUTDIR [QUILL_TRANSLATE]
                                                    # the value matrix

`make` writes the small models whose imported IR or diagnostics the lit
test checks (functions `m_<NAME>` below). `check` builds one model per
configuration (op, direction, layout, bias, initial state, peepholes,
linear_before_reset, activations), runs it with `QUILL run` on random
inputs and compares every output with the numpy reference below (ONNX's
equations, written out independently of the importer): one line
"ok NAME max-err E" per configuration, or "FAIL NAME ..." and exit 1.
Needs Debian's python3-onnx (hence /usr/bin/python3).
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
NOUT = {"RNN": 2, "GRU": 2, "LSTM": 3}


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


ACTS = {
    "Sigmoid": lambda x, a, b: sigmoid(x),
    "Tanh": lambda x, a, b: np.tanh(x),
    "Relu": lambda x, a, b: np.maximum(x, 0),
    "HardSigmoid": lambda x, a, b: np.clip(a * x + b, 0, 1),
    "LeakyRelu": lambda x, a, b: np.where(x >= 0, x, a * x),
}
DEFAULT_ACTS = {"RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"],
                "LSTM": ["Sigmoid", "Tanh", "Tanh"]}
ACT_DEFAULTS = {"HardSigmoid": (0.2, 0.5), "LeakyRelu": (0.01, 0.0)}


def reference(op, x, w, r, b, h0, c0, p, direction, layout, lbr, acts,
              alphas, betas):
    """ONNX's outputs (Y, Y_h[, Y_c]) in float64."""
    if layout:
        x = x.transpose(1, 0, 2)
    seq, batch, _ = x.shape
    nd, hid = w.shape[0], r.shape[2]
    g = GATES[op]
    per = len(DEFAULT_ACTS[op])
    names = acts or DEFAULT_ACTS[op] * nd
    if len(names) == per:
        names = names * nd
    fns, ia, ib = [], 0, 0
    for nm in names:
        a, bb = ACT_DEFAULTS.get(nm, (0.0, 0.0))
        if nm in ("HardSigmoid", "LeakyRelu") and ia < len(alphas):
            a, ia = alphas[ia], ia + 1
        if nm == "HardSigmoid" and ib < len(betas):
            bb, ib = betas[ib], ib + 1
        fns.append(lambda v, f=ACTS[nm], a=a, bb=bb: f(v, a, bb))
    y = np.zeros((seq, nd, batch, hid))
    yh = np.zeros((nd, batch, hid))
    yc = np.zeros((nd, batch, hid))
    for d in range(nd):
        f = fns[d * per:(d + 1) * per]
        wd, rd = w[d].astype(np.float64), r[d].astype(np.float64)
        bd = b[d] if b is not None else np.zeros(2 * g * hid)
        wb, rb = bd[:g * hid], bd[g * hid:]
        h = h0[d] if h0 is not None else np.zeros((batch, hid))
        c = c0[d] if c0 is not None else np.zeros((batch, hid))
        pd = p[d] if p is not None else np.zeros(3 * hid)
        rev = direction == "reverse" or d == 1
        for t in (range(seq - 1, -1, -1) if rev else range(seq)):
            xt = x[t]
            if op == "RNN":
                h = f[0](xt @ wd.T + h @ rd.T + wb + rb)
            elif op == "LSTM":
                gs = xt @ wd.T + h @ rd.T + wb + rb
                i, o, fg, cc = np.split(gs, 4, axis=1)
                pi, po, pf = np.split(pd, 3)
                i = f[0](i + pi * c)
                fg = f[0](fg + pf * c)
                cc = f[1](cc)
                c = fg * c + i * cc
                o = f[0](o + po * c)
                h = o * f[2](c)
            else:
                wz, wr, wh = np.split(wd, 3)
                rz, rr, rh = np.split(rd, 3)
                wbz, wbr, wbh = np.split(wb, 3)
                rbz, rbr, rbh = np.split(rb, 3)
                z = f[0](xt @ wz.T + h @ rz.T + wbz + rbz)
                rt = f[0](xt @ wr.T + h @ rr.T + wbr + rbr)
                if lbr:
                    hh = f[1](xt @ wh.T + rt * (h @ rh.T + rbh) + wbh)
                else:
                    hh = f[1](xt @ wh.T + (rt * h) @ rh.T + rbh + wbh)
                h = (1 - z) * hh + z * h
            y[t, d] = h
        yh[d], yc[d] = h, c
    if layout:
        y, yh, yc = (y.transpose(2, 0, 1, 3), yh.transpose(1, 0, 2),
                     yc.transpose(1, 0, 2))
    return [y, yh, yc][:NOUT[op]]


def build(op, seq, batch, inp, hid, direction="forward", layout=0,
          bias=True, init_state=False, peep=False, lbr=0, acts=None,
          alphas=(), betas=(), seq_lens=None, weights_as_inputs=False,
          zero_state=False, nout=None, seed=0, **extra):
    """(model, feeds {name: array}, reference outputs). zero_state: the
    initial states as all-zero initializers; nout: only the first nout
    outputs (Y, Y_h, Y_c)."""
    rng = np.random.default_rng(seed)
    nd = 2 if direction == "bidirectional" else 1
    g = GATES[op]
    f32 = lambda *s: (rng.standard_normal(s) * 0.6).astype(np.float32)
    x = f32(*((batch, seq, inp) if layout else (seq, batch, inp)))
    w, r = f32(nd, g * hid, inp), f32(nd, g * hid, hid)
    b = f32(nd, 2 * g * hid) if bias else None
    hs = (batch, nd, hid) if layout else (nd, batch, hid)
    h0 = f32(*hs) if init_state else None
    c0 = f32(*hs) if init_state and op == "LSTM" else None
    p = f32(nd, 3 * hid) if peep else None
    inits, ins = [], ["x", "w", "r", "b" if bias else "", "", "", "", ""]
    feeds = {"x": x}
    consts = {"w": w, "r": r}
    if bias:
        consts["b"] = b
    if seq_lens is not None:
        ins[4] = "lens"
        inits.append(numpy_helper.from_array(
            np.asarray(seq_lens, np.int32), "lens"))
    if zero_state:
        ins[5] = "h0"
        inits.append(numpy_helper.from_array(np.zeros(hs, np.float32), "h0"))
        if op == "LSTM":
            ins[6] = "c0"
            inits.append(numpy_helper.from_array(np.zeros(hs, np.float32),
                                                 "c0"))
    if init_state:
        ins[5] = "h0"
        feeds["h0"] = h0
        if op == "LSTM":
            ins[6] = "c0"
            feeds["c0"] = c0
    if peep:
        ins[7] = "p"
        consts["p"] = p
    while ins and not ins[-1]:
        ins.pop()
    if op != "LSTM":
        ins = ins[:6]
    for k, v in consts.items():
        if weights_as_inputs:
            feeds[k] = v
        else:
            inits.append(numpy_helper.from_array(v, k))
    attrs = dict(hidden_size=hid, direction=direction, **extra)
    if layout:
        attrs["layout"] = 1
    if lbr:
        attrs["linear_before_reset"] = lbr
    if acts:
        attrs["activations"] = acts
    if alphas:
        attrs["activation_alpha"] = list(alphas)
    if betas:
        attrs["activation_beta"] = list(betas)
    outs = ["y", "yh", "yc"][:nout or NOUT[op]]
    nodes = [helper.make_node(op, ins, outs, name="rnn", **attrs)]
    gin = [helper.make_tensor_value_info(k, F, v.shape)
           for k, v in feeds.items()]
    gout = [helper.make_tensor_value_info(o, F, None) for o in outs]
    graph = helper.make_graph(nodes, "g", gin, gout, inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    m.ir_version = 8
    if layout:  # the reference works on layout 0 states
        h0 = h0.transpose(1, 0, 2) if h0 is not None else None
        c0 = c0.transpose(1, 0, 2) if c0 is not None else None
    if any(a not in ACTS for a in acts or ()):
        return m, feeds, None  # an error case
    want = reference(op, x.astype(np.float64), w, r, b, h0, c0, p, direction,
                     layout, lbr, acts, list(alphas), list(betas))
    return m, feeds, want[:nout or NOUT[op]]


# ---- models for the IR and diagnostics checks --------------------------------

def m_lstm_small():
    return build("LSTM", 2, 1, 3, 2)[0]


def m_gru_lbr():
    return build("GRU", 2, 1, 3, 2, lbr=1, init_state=True)[0]


def m_rnn_bidir_batchwise():
    return build("RNN", 2, 1, 2, 2, direction="bidirectional", layout=1)[0]


def m_lstm_y_batchwise():
    return build("LSTM", 2, 1, 3, 2, layout=1, nout=2)[0]


def m_lstm_jit():
    # the LLVM target's float gemms (quill run --jit): x's projection with
    # 5 rows and K = 300 (two K blocks, summed in k order), each step's
    # H R^T with 1 row (8-lane dot products, K = 20: a tail of 4)
    return build("LSTM", 5, 1, 300, 20, seed=3)[0]


def m_gru_jit():
    # 3 rows: x's projection as 8-lane dot products over two K blocks
    # (300 = 256 + 37 * 8 + 4), both directions, linear_before_reset
    return build("GRU", 1, 3, 300, 12, direction="bidirectional", lbr=1,
                 init_state=True, seed=4)[0]


def m_lstm_clip():
    return build("LSTM", 2, 1, 3, 2, clip=3.0)[0]


def m_lstm_short_seq():
    return build("LSTM", 3, 2, 3, 2, seq_lens=[3, 2])[0]


def m_gru_elu():
    return build("GRU", 2, 1, 3, 2, acts=["Elu", "Tanh"])[0]


def m_lstm_input_forget():
    return build("LSTM", 2, 1, 3, 2, input_forget=1)[0]


def m_rnn_too_long():
    return build("RNN", 4097, 1, 1, 1, direction="bidirectional")[0]


def m_lstm_bad_w():
    m = build("LSTM", 2, 1, 3, 2)[0]
    w = m.graph.initializer[0]
    w.CopyFrom(numpy_helper.from_array(np.zeros((1, 6, 3), np.float32), "w"))
    return m


# ---- the value matrix ----------------------------------------------------------

CONFIGS = [
    ("rnn_fwd", "RNN", 3, 2, 3, 4, {}),
    ("rnn_rev_relu", "RNN", 3, 2, 3, 4,
     dict(direction="reverse", acts=["Relu"], init_state=True)),
    ("rnn_bidir_batchwise", "RNN", 4, 2, 2, 3,
     dict(direction="bidirectional", layout=1, init_state=True)),
    ("gru_fwd", "GRU", 3, 2, 3, 4, {}),
    ("gru_lbr_state", "GRU", 3, 2, 3, 4, dict(lbr=1, init_state=True)),
    ("gru_lbr_nostate", "GRU", 3, 2, 3, 4, dict(lbr=1)),
    ("gru_rev_nobias", "GRU", 3, 1, 2, 3,
     dict(direction="reverse", bias=False, init_state=True)),
    ("gru_bidir_batchwise", "GRU", 4, 2, 3, 5,
     dict(direction="bidirectional", layout=1, init_state=True)),
    ("gru_hardsigmoid", "GRU", 3, 2, 3, 4,
     dict(acts=["HardSigmoid", "LeakyRelu"], alphas=[0.3, 0.1],
          betas=[0.4])),
    ("lstm_fwd", "LSTM", 3, 2, 3, 4, {}),
    ("lstm_rev_state", "LSTM", 3, 2, 3, 4,
     dict(direction="reverse", init_state=True)),
    ("lstm_bidir", "LSTM", 5, 3, 4, 6, dict(direction="bidirectional")),
    ("lstm_bidir_batchwise_state", "LSTM", 4, 2, 3, 5,
     dict(direction="bidirectional", layout=1, init_state=True)),
    ("lstm_peepholes", "LSTM", 3, 2, 3, 4, dict(peep=True, init_state=True)),
    ("lstm_peepholes_nostate", "LSTM", 3, 2, 3, 4, dict(peep=True)),
    ("lstm_full_seq_lens", "LSTM", 3, 2, 3, 4, dict(seq_lens=[3, 3])),
    ("lstm_acts_bidir", "LSTM", 3, 2, 3, 4,
     dict(direction="bidirectional",
          acts=["Sigmoid", "Tanh", "Tanh", "HardSigmoid", "Relu", "Tanh"])),
    ("lstm_weights_as_inputs", "LSTM", 3, 2, 3, 4,
     dict(weights_as_inputs=True, init_state=True)),
    # with --rnn-ops, the forms Quill's lstm op states (one forward layer,
    # zero states, Y_c unused)
    ("lstm_y", "LSTM", 4, 2, 3, 5, dict(nout=1)),
    ("lstm_y_yh_batchwise", "LSTM", 3, 2, 3, 4, dict(nout=2, layout=1)),
    ("lstm_nobias_zero_state", "LSTM", 3, 1, 2, 3,
     dict(nout=2, bias=False, zero_state=True)),
]


def check(quill, outdir, translate=None):
    """Every configuration through `quill run` of the ONNX file, or with
    translate (quill-translate), imported with --rnn-ops to a .qir first
    (the line then says whether the node became one lstm op)."""
    bad = 0
    for name, op, seq, batch, inp, hid, kw in CONFIGS:
        m, feeds, want = build(op, seq, batch, inp, hid, **kw)
        path = os.path.join(outdir, name + ".onnx")
        onnx.save(m, path)
        form = ""
        if translate:
            qir = os.path.join(outdir, name + ".qir")
            p = subprocess.run([translate, "--import-onnx", path,
                                "--rnn-ops", "-o", qir],
                               capture_output=True, text=True)
            if p.returncode:
                print("FAIL %s: import exited %d: %s" % (
                    name, p.returncode, p.stderr.strip()))
                bad += 1
                continue
            path = qir
            form = (" lstm-op" if " = lstm " in open(qir).read()
                    else " unrolled")
        args = [quill, "run", path]
        for k, v in feeds.items():
            f = os.path.join(outdir, "%s.%s.npy" % (name, k))
            np.save(f, v)
            args += ["--input", "%s=%s" % (k, f)]
        outs = []
        for i in range(len(want)):
            outs.append(os.path.join(outdir, "%s.out%d.npy" % (name, i)))
            args += ["--output", outs[-1]]
        p = subprocess.run(args, capture_output=True, text=True)
        if p.returncode:
            print("FAIL %s: quill run exited %d: %s" % (name, p.returncode,
                                                        p.stderr.strip()))
            bad += 1
            continue
        err = 0.0
        for f, w in zip(outs, want):
            got = np.load(f)
            if got.shape != w.shape:
                err = float("inf")
                print("FAIL %s: shape %s, want %s" % (name, got.shape,
                                                      w.shape))
                break
            err = max(err, float(np.max(np.abs(got - w))))
        if err > 1e-5:
            bad += 1
            print("FAIL %s max-err %.3g" % (name, err))
        else:
            print("ok %s%s max-err<=1e-5" % (name, form))
    return 1 if bad else 0


def main():
    if sys.argv[1] == "check":
        sys.exit(check(*sys.argv[2:5]))
    out = sys.argv[2]
    for name in sys.argv[3:]:
        onnx.save(globals()["m_" + name](), os.path.join(out, name + ".onnx"))


if __name__ == "__main__":
    main()
