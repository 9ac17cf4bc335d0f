"""Test models for the TFLite target, written as Quill textual IR.

  make_models.py OUTDIR [--only NAME,NAME]

Writes OUTDIR/<name>.qir for every model below and OUTDIR/manifest.txt,
one line per model:

  <name> <max_ref> <max_opt> <armnn:yes|no> <what>

max_ref (TFLite's reference kernels) and max_opt (its optimized kernels
and the XNNPACK delegate) are the largest differences, in steps of the output's quantization
(floats: in units of 1e-5 relative), allowed between Quill's reference
interpreter and the TFLite interpreter; 0 for integer IR that follows
TFLite's arithmetic (qconv2d/qmatmul with "tflite" rounding and the
multipliers TFLite derives from the f32 scales, data movement on int8),
more where the model is in reference QDQ form (float op between
dequantize and quantize) and TFLite computes the int8 op its own way.
TFLite's optimized kernels requantize through ruy, which rounds once
(ruy/apply_multiplier.cc: "double rounding ... removed compared to
reference"), and XNNPACK requantizes in fp32: one more step per
requantizing op, and more through deep networks (max_opt).

Models (random weights, fixed seeds; scales are f32 values so TFLite's f32
parameters are exactly Quill's):
  single ops, int8 integer IR  conv2d / depthwise / fully connected /
                               batch matmul / pools / data movement /
                               quantize / dequantize / requantize
  single ops, int8 QDQ form    add, sub, mul, mean, softmax, logistic,
                               tanh, hard_swish, relu, relu6, resize
                               bilinear, concatenation with rescale
  single ops, float            every builtin above in float
  shape and conv ops           STRIDED_SLICE, SPLIT / SPLIT_V, GATHER, grouped
                               CONV_2D, TRANSPOSE_CONV (float, folded QDQ,
                               cropped), batch_norm as MUL + ADD (float and
                               between dequantize/quantize): shape_conv_ops(),
                               with a generator of its own
  resnet18_int8                ResNet-18 (torchvision layout) on 1x3x64x64:
                               integer convolutions, QDQ residual adds
  mobilenetv2_int8             MobileNetV2 on 1x3x64x64: integer 1x1 and
                               depthwise convolutions with ReLU6, QDQ adds
"""
import math
import os
import sys

import numpy as np

F32 = np.float32


# ---- quantization arithmetic (TFLite's) ------------------------------------

def f32(x):
    return float(np.float32(x))


def quantize_multiplier(real):
    """TFLite's QuantizeMultiplier: real = m * 2^(shift - 31)."""
    if real <= 0:
        return 0, 0
    q, e = math.frexp(real)
    m = math.floor(q * (1 << 31) + 0.5)
    if m == 1 << 31:
        m //= 2
        e += 1
    if e < -31:
        return 0, 0
    return m, e


def mean_multiplier(real, n):
    """TFLite's int8 MEAN over n values (reduce.cc, mean.h): the multiplier
    of s_x / s_y with n folded in by an integer division (ir/quant.h
    quill_mean_multiplier)."""
    m, e = quantize_multiplier(real)
    rs = min(n.bit_length() - 1, 32, 31 + e)
    return (m << rs) // n, e - rs


def qadd_params(sa, sb, sy, left_shift=20):
    """TFLite's ADD: multipliers of s_a/m, s_b/m, m/(2^L s_y), m = 2 max."""
    m = 2 * max(f32(sa), f32(sb))
    out = [quantize_multiplier(f32(sa) / m), quantize_multiplier(f32(sb) / m),
           quantize_multiplier(m / ((1 << left_shift) * f32(sy)))]
    return [o[0] for o in out], [o[1] for o in out]


def act_params(lo, hi):
    """Asymmetric int8 params for the range [lo, hi] (widened to hold 0),
    the scale rounded to f32."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    if hi - lo < 1e-6:
        hi = lo + 1e-6
    s = f32((hi - lo) / 255.0)
    zp = int(np.clip(round(-128 - lo / s), -128, 127))
    return s, zp


def weight_params(w, axis=0):
    """Symmetric per-channel int8 [-127, 127] quantization along axis."""
    red = tuple(i for i in range(w.ndim) if i != axis)
    amax = np.maximum(np.abs(w).max(axis=red), 1e-8)
    s = np.array([f32(a / 127.0) for a in amax], dtype=np.float64)
    shape = [1] * w.ndim
    shape[axis] = -1
    q = np.clip(np.round(w / s.reshape(shape)), -127, 127).astype(np.int8)
    return q, s


# ---- IR text ---------------------------------------------------------------------

def qt(s, zp):
    return "!quant.uniform<i8:f32, %r:%d>" % (f32(s), zp)


def qt_axis(scales, axis):
    body = ", ".join("%r:0" % f32(s) for s in scales)
    return "!quant.uniform<i8<-127:127>:f32:%d, {%s}>" % (axis, body)


def tensor(shape, elem):
    return "tensor<%s%s>" % ("".join("%dx" % d for d in shape), elem)


def dense(arr, ty):
    data = np.ascontiguousarray(arr).tobytes().hex().upper()
    return 'constant {value = dense<"0x%s"> : %s} : %s' % (data, ty, ty)


def ints(v):
    return "[%s]" % ", ".join(str(int(x)) for x in v)


class Graph:
    """Builds one func: args, ops (text lines), result."""

    def __init__(self, name):
        self.name = name
        self.args = []
        self.lines = []
        self.n = 0
        self.results = []

    def arg(self, name, ty):
        self.args.append("%%%s: %s" % (name, ty))
        return "%" + name

    def op(self, text, ty, name=None):
        self.n += 1
        v = "%%%s" % (name or "v%d" % self.n)
        self.lines.append("  %s = %s : %s" % (v, text, ty))
        return v

    def const(self, arr, ty, name=None):
        self.n += 1
        v = "%%%s" % (name or "c%d" % self.n)
        self.lines.append("  %s = %s" % (v, dense(arr, ty)))
        return v

    def ret(self, v, ty):
        self.results.append((v, ty))

    def text(self):
        res = ", ".join(t for _, t in self.results)
        if len(self.results) > 1:
            res = "(" + res + ")"
        out = ["func @%s(%s) -> %s {" % (self.name, ", ".join(self.args), res)]
        out += self.lines
        out.append("  return %s" % ", ".join(v for v, _ in self.results))
        out.append("}")
        return "\n".join(out) + "\n"


# ---- numpy float reference (for calibration only) -------------------------------

def conv_f(x, w, b, stride, pad, group):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[2]), (pad[1], pad[3])))
    oh = (xp.shape[2] - kh) // stride + 1
    ow = (xp.shape[3] - kw) // stride + 1
    y = np.zeros((n, o, oh, ow), dtype=np.float64)
    og = o // group
    for g in range(group):
        xs = xp[:, g * cg:(g + 1) * cg]
        ws = w[g * og:(g + 1) * og]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
                y[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch,
                                                       ws[:, :, i, j])
    return y + b.reshape(1, -1, 1, 1)


class Net:
    """Builds an integer-IR network while running it in float (on dequantized
    int8 values) to pick each activation's quantization."""

    def __init__(self, name, x_shape, rng, qdq=False):
        self.qdq = qdq
        self.g = Graph(name)
        self.rng = rng
        xf = rng.standard_normal(x_shape)
        self.s_in, self.zp_in = act_params(-3.0, 3.0)
        self.x = (self.g.arg("x", tensor(x_shape, qt(self.s_in, self.zp_in))),
                  xf, self.s_in, self.zp_in)

    def deq(self, a):
        v, xf, s, zp = a
        return (np.clip(np.round(xf / s) + zp, -128, 127) - zp) * s

    def conv(self, a, cout, k, stride=1, pad=None, group=1, act=None):
        v, xf, s, zp = a
        xq = self.deq(a)
        cin = xq.shape[1]
        if pad is None:
            pad = [k // 2] * 4
        fan = (cin // group) * k * k
        w = self.rng.standard_normal((cout, cin // group, k, k)) * \
            math.sqrt(2.0 / fan)
        b = self.rng.standard_normal(cout) * 0.1
        wq, ws = weight_params(w, 0)
        bq = np.round(b / (s * ws)).astype(np.int32)
        yf = conv_f(xq, wq * ws.reshape(-1, 1, 1, 1), bq * s * ws, stride, pad,
                    group)
        if act == "relu":
            yf = np.maximum(yf, 0)
        elif act == "relu6":
            yf = np.clip(yf, 0, 6)
        so, zo = act_params(yf.min(), yf.max())
        amin = zo if act else -128
        six = math.floor(float(np.float32(6.0) / np.float32(so)) + 0.5)
        amax = min(127, zo + six) if act == "relu6" else 127
        mult, shift = zip(*[quantize_multiplier(f32(s) * f32(x) / f32(so))
                            for x in ws])
        g = self.g
        wv = g.const(wq, tensor(wq.shape, qt_axis(ws, 0)))
        bv = g.const(bq, tensor(bq.shape, "i32"))
        attrs = ("strides = %s, pads = %s, group = %d, rounding = \"tflite\", "
                 "multiplier = %s, shift = %s, act_min = %d, act_max = %d" %
                 (ints([stride, stride]), ints(pad), group, ints(mult),
                  ints(shift), amin, amax))
        ty = tensor(yf.shape, qt(so, zo))
        y = g.op("qconv2d %s, %s, %s {%s}" % (v, wv, bv, attrs), ty)
        return (y, yf, so, zo)

    def add(self, a, b, act=None):
        g = self.g
        fa = self.deq(a)
        fb = self.deq(b)
        yf = fa + fb
        if act == "relu":
            yf = np.maximum(yf, 0)
        so, zo = act_params(yf.min(), yf.max())
        if not self.qdq:
            mult, shift = qadd_params(a[2], b[2], so)
            amin = zo if act else -128
            y = g.op('qadd %s, %s {rounding = "tflite", multiplier = %s, '
                     'shift = %s, left_shift = 20, act_min = %d}' %
                     (a[0], b[0], ints(mult), ints(shift), amin),
                     tensor(yf.shape, qt(so, zo)))
            return (y, yf, so, zo)
        ta = tensor(fa.shape, "f32")
        da = g.op("dequantize %s" % a[0], ta)
        db = g.op("dequantize %s" % b[0], ta)
        at = ' {activation = "relu"}' if act else ""
        s = g.op("add %s, %s%s" % (da, db, at), ta)
        q = g.op('quantize %s {rounding = "tflite"}' % s,
                 tensor(yf.shape, qt(so, zo)))
        return (q, yf, so, zo)

    def maxpool(self, a, k, stride, pad):
        v, xf, s, zp = a
        xq = self.deq(a)
        xp = np.pad(xq, ((0, 0), (0, 0), (pad, pad), (pad, pad)),
                    constant_values=-1e9)
        oh = (xp.shape[2] - k) // stride + 1
        y = np.full((xq.shape[0], xq.shape[1], oh, oh), -1e9)
        for i in range(k):
            for j in range(k):
                y = np.maximum(y, xp[:, :, i:i + stride * oh:stride,
                                     j:j + stride * oh:stride])
        ty = tensor(y.shape, qt(s, zp))
        out = self.g.op("maxpool %s {kernel_shape = [%d, %d], strides = [%d, %d], "
                        "pads = %s}" % (v, k, k, stride, stride, ints([pad] * 4)),
                        ty)
        return (out, y, s, zp)

    def gap_fc(self, a, nout):
        v, xf, s, zp = a
        xq = self.deq(a)
        n, c = xq.shape[:2]
        ty = tensor([n, c, 1, 1], qt(s, zp))
        if self.qdq:
            # reference form: the interpreter runs quantized pooling only
            # once the integer pooling kernels exist
            d = self.g.op("dequantize %s" % v, tensor(xq.shape, "f32"))
            pf_ = self.g.op("global_avgpool %s" % d, tensor([n, c, 1, 1], "f32"))
            p = self.g.op('quantize %s {rounding = "tflite"}' % pf_, ty)
        else:
            p = self.g.op('global_avgpool %s {rounding = "tflite"}' % v, ty)
        f = self.g.op("flatten %s {axis = 1}" % p, tensor([n, c], qt(s, zp)))
        pf = xq.mean(axis=(2, 3))
        w = self.rng.standard_normal((c, nout)) * math.sqrt(1.0 / c)
        # per-tensor: Arm NN 20.08 aborts on per-channel FULLY_CONNECTED
        # (fc_int8 tests per-channel)
        ws = np.full(nout, f32(np.abs(w).max() / 127.0))
        wq = np.clip(np.round(w / ws[0]), -127, 127).astype(np.int8)
        b = self.rng.standard_normal(nout) * 0.1
        bq = np.round(b / (s * ws)).astype(np.int32)
        yf = pf @ (wq * ws) + bq * s * ws
        so, zo = act_params(yf.min(), yf.max())
        mult, shift = quantize_multiplier(f32(s) * f32(ws[0]) / f32(so))
        mult, shift = [mult], [shift]
        wv = self.g.const(wq, tensor(wq.shape, "!quant.uniform<i8<-127:127>:f32, "
                                     "%r:0>" % f32(ws[0])))
        bv = self.g.const(bq, tensor(bq.shape, "i32"))
        ty = tensor([n, nout], qt(so, zo))
        y = self.g.op('qmatmul %s, %s, %s {rounding = "tflite", multiplier = %s, '
                      "shift = %s}" % (f, wv, bv, ints(mult), ints(shift)), ty)
        self.g.ret(y, ty)


def resnet18(rng):
    net = Net("resnet18_int8", (1, 3, 64, 64), rng)
    x = net.conv(net.x, 64, 7, stride=2, pad=[3, 3, 3, 3], act="relu")
    x = net.maxpool(x, 3, 2, 1)
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        for blk in range(2):
            s = stride if blk == 0 else 1
            idn = x
            y = net.conv(x, cout, 3, stride=s, act="relu")
            y = net.conv(y, cout, 3)
            if s != 1 or idn[1].shape[1] != cout:
                idn = net.conv(idn, cout, 1, stride=s, pad=[0, 0, 0, 0])
            x = net.add(y, idn, act="relu")
    net.gap_fc(x, 1000)
    return net.g


def mobilenetv2(rng):
    net = Net("mobilenetv2_int8", (1, 3, 64, 64), rng)
    x = net.conv(net.x, 32, 3, stride=2, pad=[1, 1, 1, 1], act="relu6")
    cin = 32
    cfg = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
           (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
    for t, c, n, s in cfg:
        for i in range(n):
            stride = s if i == 0 else 1
            y = x
            if t != 1:
                y = net.conv(y, cin * t, 1, pad=[0, 0, 0, 0], act="relu6")
            y = net.conv(y, cin * t, 3, stride=stride, pad=[1, 1, 1, 1],
                         group=cin * t, act="relu6")
            y = net.conv(y, c, 1, pad=[0, 0, 0, 0])
            x = net.add(y, x) if stride == 1 and cin == c else y
            cin = c
    x = net.conv(x, 1280, 1, pad=[0, 0, 0, 0], act="relu6")
    net.gap_fc(x, 1000)
    return net.g


# ---- single-op models --------------------------------------------------------------

def single_ops(rng):
    """(name, max_lsb, armnn, text, what) for every single-op model."""
    out = []
    sx, zx = 0.05, -3           # a common int8 input quantization
    X = qt(sx, zx)

    def add(name, lsb, armnn, g, what, opt=None):
        out.append((name, (lsb, lsb if opt is None else opt), armnn, g.text(),
                    what))

    # conv2d: SAME padding, relu; stride 2 with PyTorch pads (PAD + VALID)
    for name, stride, pads, act, hw in (("conv2d_int8", 1, [1, 1, 1, 1], "relu", 10),
                                        ("conv2d_s2_int8", 2, [1, 1, 1, 1], "relu6", 10),
                                        ("conv2d_valid_int8", 1, [0, 0, 0, 0], None, 9)):
        net = Net(name, (1, 3, hw, hw), rng)
        y = net.conv(net.x, 8, 3, stride=stride, pad=pads, act=act)
        net.g.ret(y[0], tensor(y[1].shape, qt(y[2], y[3])))
        add(name, 0, True, net.g, "CONV_2D int8 per-channel", opt=1)
    net = Net("depthwise_int8", (1, 4, 8, 8), rng)
    y = net.conv(net.x, 8, 3, pad=[1, 1, 1, 1], group=4, act="relu6")
    net.g.ret(y[0], tensor(y[1].shape, qt(y[2], y[3])))
    add("depthwise_int8", 0, True, net.g, "DEPTHWISE_CONV_2D int8, multiplier 2",
        opt=1)
    rng3 = np.random.default_rng(2468)
    # fc_3d: nn.Linear on [T, B, C] (a transformer's projections); TFLite
    # 2.14's reference per-channel kernel takes the batch from output dim 0
    # only, so the writer flattens to 2-D around the FULLY_CONNECTED
    for name, per_channel, lead in (("fc_int8", True, [2]),
                                    ("fc_per_tensor_int8", False, [2]),
                                    ("fc_3d_int8", True, [4, 3]),
                                    ("fc_3d_per_tensor_int8", False, [4, 3])):
        g = Graph(name)
        x = g.arg("x", tensor(lead + [16], X))
        r = rng if len(lead) == 1 else rng3  # the earlier models' data unchanged
        w = r.standard_normal((16, 10)) * 0.25
        wq, ws = weight_params(w, 1)
        if not per_channel:
            ws = np.full(10, f32(np.abs(w).max() / 127))
            wq = np.clip(np.round(w / ws[0]), -127, 127).astype(np.int8)
        bq = r.integers(-500, 500, 10).astype(np.int32)
        so = f32(sx * 16 * 0.25)
        mult, shift = zip(*[quantize_multiplier(f32(sx) * f32(v) / so)
                            for v in (ws if per_channel else ws[:1])])
        wt = qt_axis(ws, 1) if per_channel else \
            "!quant.uniform<i8<-127:127>:f32, %r:0>" % f32(ws[0])
        wv = g.const(wq, tensor(wq.shape, wt))
        bv = g.const(bq, tensor([10], "i32"))
        ty = tensor(lead + [10], qt(so, 3))
        g.ret(g.op('qmatmul %s, %s, %s {rounding = "tflite", multiplier = %s, '
                   "shift = %s, act_min = 3}" % (x, wv, bv, ints(mult),
                                                 ints(shift)), ty), ty)
        add(name, 0, True, g, "FULLY_CONNECTED int8 %s, fused RELU" %
            ("per-channel" if per_channel else "per-tensor"), opt=1)

    # a classic CNN head: flatten of a 4x4 map into a fully connected layer
    # (the flatten reads NHWC data, the FC weights are permuted to match)
    net = Net("flatten_fc_int8", (1, 3, 4, 4), rng)
    y = net.conv(net.x, 4, 3, pad=[1, 1, 1, 1], act="relu")
    g = net.g
    f = g.op("flatten %s {axis = 1}" % y[0], tensor([1, 64], qt(y[2], y[3])))
    w = rng.standard_normal((64, 5)) * 0.125
    wq, ws = weight_params(w, 1)
    so = f32(y[2] * 4)
    mult, shift = zip(*[quantize_multiplier(f32(y[2]) * f32(v) / so) for v in ws])
    wv = g.const(wq, tensor(wq.shape, qt_axis(ws, 1)))
    ty = tensor([1, 5], qt(so, 0))
    g.ret(g.op('qmatmul %s, %s {rounding = "tflite", multiplier = %s, shift = %s}'
               % (f, wv, ints(mult), ints(shift)), ty), ty)
    add("flatten_fc_int8", 0, True, g, "CONV_2D + RESHAPE (NHWC order) + "
        "FULLY_CONNECTED with permuted weights", opt=1)

    # batch matmul: qmatmul of two activations
    g = Graph("batch_matmul_int8")
    a = g.arg("a", tensor([2, 3, 4], X))
    b = g.arg("b", tensor([2, 4, 5], qt(0.04, 2)))
    so = f32(0.05 * 0.04 * 4)
    m, sh = quantize_multiplier(f32(0.05) * f32(0.04) / so)
    ty = tensor([2, 3, 5], qt(so, 1))
    y = g.op('qmatmul %s, %s {rounding = "tflite", multiplier = [%d], shift = [%d]}'
             % (a, b, m, sh), ty)
    g.ret(y, ty)
    add("batch_matmul_int8", 0, False, g, "BATCH_MATMUL int8", opt=1)

    # pooling and data movement on int8 (equal quantization)
    def movement(name, body, in_shape, out_shape, what, armnn=True, lsb=0):
        g = Graph(name)
        x = g.arg("x", tensor(in_shape, X))
        ty = tensor(out_shape, X)
        y = g.op(body % x, ty)
        g.ret(y, ty)
        add(name, lsb, armnn, g, what)

    movement("maxpool_int8", "maxpool %s {kernel_shape = [3, 3], strides = [2, 2], "
             "pads = [1, 1, 1, 1]}", [1, 4, 9, 9], [1, 4, 5, 5], "MAX_POOL_2D int8 SAME")
    movement("avgpool_int8", "avgpool %s {kernel_shape = [2, 2], strides = [2, 2], "
             "rounding = \"tflite\"}",
             [1, 4, 8, 8], [1, 4, 4, 4], "AVERAGE_POOL_2D int8 VALID")
    movement("avgpool_same_int8", "avgpool %s {kernel_shape = [3, 3], strides = [1, 1], "
             "pads = [1, 1, 1, 1], rounding = \"tflite\"}", [1, 4, 6, 6], [1, 4, 6, 6],
             "AVERAGE_POOL_2D int8 SAME (padding not counted)")
    movement("global_avgpool_int8", "global_avgpool %s {rounding = \"tflite\"}",
             [1, 8, 7, 7], [1, 8, 1, 1],
             "AVERAGE_POOL_2D int8 over 7x7")
    movement("reshape_int8", "reshape %s", [1, 4, 3, 2], [1, 24], "RESHAPE int8")
    movement("transpose_int8", "transpose %s {perm = [0, 2, 1]}", [2, 3, 4], [2, 4, 3],
             "TRANSPOSE int8")
    movement("pad_int8", "pad %s {pads = [0, 0, 1, 2, 0, 0, 2, 1]}", [1, 2, 4, 4],
             [1, 2, 7, 7], "PAD int8 (pads with the zero point)")

    # integer elementwise ops
    for name, shapes, act in (("qadd_int8", ([1, 4, 5, 5], [1, 4, 5, 5]), True),
                              ("qadd_broadcast_int8", ([1, 4, 5, 5], [1, 4, 1, 1]),
                               False)):
        g = Graph(name)
        a = g.arg("a", tensor(shapes[0], X))
        b = g.arg("b", tensor(shapes[1], qt(0.03, 7)))
        so, zo = 0.0625, -128 if act else 3
        mult, shift = qadd_params(sx, 0.03, so)
        ty = tensor(shapes[0], qt(so, zo))
        g.ret(g.op('qadd %s, %s {rounding = "tflite", multiplier = %s, shift = %s, '
                   'left_shift = 20%s}' % (a, b, ints(mult), ints(shift),
                                          ", act_min = -128" if act else ""), ty), ty)
        add(name, 0, True, g, "ADD int8 (qadd)%s" % (", fused RELU" if act else
                                                       ", broadcast"), opt=1)
    g = Graph("qmul_int8")
    a = g.arg("a", tensor([1, 4, 5, 5], X))
    b = g.arg("b", tensor([1, 4, 5, 5], qt(0.03, 7)))
    so = 0.02
    m, sh = quantize_multiplier(f32(sx) * f32(0.03) / f32(so))
    ty = tensor([1, 4, 5, 5], qt(so, -5))
    g.ret(g.op('qmul %s, %s {rounding = "tflite", multiplier = [%d], shift = [%d]}'
               % (a, b, m, sh), ty), ty)
    add("qmul_int8", 0, True, g, "MUL int8 (qmul)", opt=1)
    g = Graph("lut_int8")
    x = g.arg("x", tensor([1, 4, 5, 5], X))
    table = np.clip(np.round(1 / (1 + np.exp(-(np.arange(-128, 128) - zx) * sx))
                             * 256) - 128, -128, 127).astype(np.int8)
    ty = tensor([1, 4, 5, 5], qt(1.0 / 256, -128))
    g.ret(g.op('lut %s {table = dense<"0x%s"> : tensor<256xi8>}'
               % (x, table.tobytes().hex().upper()), ty), ty)
    add("lut_int8", 0, True, g, "lut (a sigmoid table) as CAST + ADD + GATHER")
    # 64 channels: the multiplier of s_x / (49 s_y) agreed with TFLite on
    # the 8 channels this case had and differed on 30 of ResNet-18's 512
    g = Graph("global_avgpool_requant_int8")
    x = g.arg("x", tensor([1, 64, 7, 7], X))
    ty = tensor([1, 64, 1, 1], qt(0.02, 4))
    m, sh = mean_multiplier(f32(sx) / f32(0.02), 49)
    g.ret(g.op('global_avgpool %s {rounding = "tflite", multiplier = [%d], '
               'shift = [%d]}' % (x, m, sh), ty), ty)
    add("global_avgpool_requant_int8", 0, True, g,
        "rescaling global_avgpool as MEAN int8", opt=1)
    movement("resize_nearest_int8", "resize %s {mode = \"nearest\", "
             "coordinate_transformation_mode = \"asymmetric\", nearest_mode = \"floor\"}",
             [1, 3, 4, 4], [1, 3, 8, 8], "RESIZE_NEAREST_NEIGHBOR int8")
    g = Graph("concat_int8")
    a = g.arg("a", tensor([1, 2, 4, 4], X))
    b = g.arg("b", tensor([1, 3, 4, 4], X))
    ty = tensor([1, 5, 4, 4], X)
    y = g.op("concat %s, %s {axis = 1}" % (a, b), ty)
    g.ret(y, ty)
    add("concat_int8", 0, True, g, "CONCATENATION int8 (NHWC, axis 3)")

    # quantization ops
    g = Graph("quantize_int8")
    x = g.arg("x", tensor([1, 3, 4, 4], "f32"))
    ty = tensor([1, 3, 4, 4], X)
    g.ret(g.op('quantize %s {rounding = "tflite"}' % x, ty), ty)
    add("quantize_int8", 0, True, g, "QUANTIZE float -> int8", opt=1)
    g = Graph("dequantize_int8")
    x = g.arg("x", tensor([1, 3, 4, 4], X))
    ty = tensor([1, 3, 4, 4], "f32")
    g.ret(g.op("dequantize %s" % x, ty), ty)
    add("dequantize_int8", 0, True, g, "DEQUANTIZE int8 -> float")
    g = Graph("requantize_int8")
    x = g.arg("x", tensor([1, 16], X))
    so = f32(0.0731)
    m, sh = quantize_multiplier(f32(sx) / so)
    ty = tensor([1, 16], qt(so, 7))
    g.ret(g.op('requantize %s {rounding = "tflite", multiplier = [%d], shift = [%d]}'
               % (x, m, sh), ty), ty)
    add("requantize_int8", 0, True, g, "QUANTIZE int8 -> int8 (requantization)",
        opt=1)

    # QDQ reference form: float op between dequantize and quantize
    def qdq(name, op_text, shapes, out_shape, out_q, what, lsb=1, armnn=True,
            nin=1):
        g = Graph(name)
        ds = []
        for i in range(nin):
            xi = g.arg("x%d" % i, tensor(shapes[i], qt(sx * (1 + i), zx + 5 * i)))
            ds.append(g.op("dequantize %s" % xi, tensor(shapes[i], "f32")))
        r = g.op(op_text % tuple(ds), tensor(out_shape, "f32"))
        ty = tensor(out_shape, out_q)
        g.ret(g.op('quantize %s {rounding = "tflite"}' % r, ty), ty)
        add(name, lsb, armnn, g, what)

    qdq("add_qdq", 'add %s, %s {activation = "relu"}', [[1, 4, 5, 5]] * 2,
        [1, 4, 5, 5], qt(0.06, -128), "ADD int8 + fused RELU", nin=2)
    qdq("sub_qdq", "sub %s, %s", [[1, 4, 5, 5], [1, 4, 1, 1]], [1, 4, 5, 5],
        qt(0.1, 0), "SUB int8, broadcast", nin=2)
    qdq("mul_qdq", "mul %s, %s", [[1, 4, 5, 5]] * 2, [1, 4, 5, 5], qt(0.08, 0),
        "MUL int8", nin=2)
    # reduce_mean is not folded into an int8 MEAN (op_table.c): DEQUANTIZE,
    # float MEAN, QUANTIZE compute what the reference interpreter does
    qdq("mean_qdq", "reduce_mean %s {axes = [2, 3], keepdims = 1}", [[1, 6, 5, 5]],
        [1, 6, 1, 1], qt(0.03, -2), "MEAN float between DEQUANTIZE and QUANTIZE",
        lsb=0)
    qdq("softmax_qdq", "softmax %s {axis = -1}", [[2, 10]], [2, 10],
        qt(1.0 / 256, -128), "SOFTMAX int8")
    qdq("logistic_qdq", "sigmoid %s", [[1, 4, 3, 3]], [1, 4, 3, 3],
        qt(1.0 / 256, -128), "LOGISTIC int8")
    qdq("tanh_qdq", "tanh %s", [[1, 4, 3, 3]], [1, 4, 3, 3], qt(1.0 / 128, 0),
        "TANH int8")
    qdq("hard_swish_qdq", "hard_swish %s", [[1, 4, 3, 3]], [1, 4, 3, 3],
        qt(0.03, -110), "HARD_SWISH int8", armnn=False)
    qdq("relu_qdq", "relu %s", [[1, 4, 3, 3]], [1, 4, 3, 3], qt(0.04, -128),
        "RELU int8 (rescaling)")
    qdq("relu6_qdq", "clip %s {min = 0.0, max = 6.0}", [[1, 4, 3, 3]], [1, 4, 3, 3],
        qt(0.02, -128), "RELU6 int8 (rescaling)")
    qdq("resize_bilinear_qdq", 'resize %s {mode = "linear", '
        'coordinate_transformation_mode = "half_pixel"}', [[1, 2, 4, 4]],
        [1, 2, 8, 8], qt(sx, zx), "RESIZE_BILINEAR int8 half-pixel")
    qdq("avgpool_qdq", "avgpool %s {kernel_shape = [2, 2], strides = [2, 2]}",
        [[1, 4, 6, 6]], [1, 4, 3, 3], qt(sx, zx), "AVERAGE_POOL_2D int8 (folded)")
    qdq("global_avgpool_qdq", "global_avgpool %s", [[1, 8, 7, 7]], [1, 8, 1, 1],
        qt(sx, zx), "AVERAGE_POOL_2D int8 over 7x7 (folded)")
    qdq("pad_qdq", "pad %s {pads = [0, 0, 1, 2, 0, 0, 2, 1]}", [[1, 2, 4, 4]],
        [1, 2, 7, 7], qt(sx, zx), "PAD int8 (folded)", lsb=0)
    qdq("resize_nearest_qdq", 'resize %s {mode = "nearest", '
        'coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"}',
        [[1, 3, 4, 4]], [1, 3, 8, 8], qt(sx, zx),
        "RESIZE_NEAREST_NEIGHBOR int8 (folded)", lsb=0)
    qdq("maxpool_qdq", "maxpool %s {kernel_shape = [2, 2], strides = [2, 2]}",
        [[1, 4, 6, 6]], [1, 4, 3, 3], qt(sx, zx), "MAX_POOL_2D int8 (folded)",
        lsb=0)
    return out


def float_ops(rng):
    """Float single-op models: (name, text)."""
    out = []

    def unary(name, body, shape, out_shape=None, armnn=True):
        g = Graph(name)
        x = g.arg("x", tensor(shape, "f32"))
        ty = tensor(out_shape or shape, "f32")
        g.ret(g.op(body % x, ty), ty)
        out.append((name, (0, 0), armnn, g.text(), "float"))

    def weights(shape):
        return rng.standard_normal(shape).astype(F32) * 0.3

    g = Graph("conv2d_f32")
    x = g.arg("x", tensor([1, 3, 8, 8], "f32"))
    w = g.const(weights([6, 3, 3, 3]), tensor([6, 3, 3, 3], "f32"))
    b = g.const(weights([6]), tensor([6], "f32"))
    ty = tensor([1, 6, 4, 4], "f32")
    g.ret(g.op('conv2d %s, %s, %s {strides = [2, 2], pads = [1, 1, 1, 1], '
               'activation = "relu"}' % (x, w, b), ty), ty)
    out.append(("conv2d_f32", (0, 0), True, g.text(), "float"))
    g = Graph("depthwise_f32")
    x = g.arg("x", tensor([1, 4, 6, 6], "f32"))
    w = g.const(weights([4, 1, 3, 3]), tensor([4, 1, 3, 3], "f32"))
    ty = tensor([1, 4, 6, 6], "f32")
    g.ret(g.op('conv2d %s, %s {pads = [1, 1, 1, 1], group = 4, activation = "clip", '
               'activation_min = 0.0, activation_max = 6.0}' % (x, w), ty), ty)
    out.append(("depthwise_f32", (0, 0), True, g.text(), "float"))
    g = Graph("gemm_f32")
    x = g.arg("x", tensor([2, 8], "f32"))
    w = g.const(weights([8, 5]), tensor([8, 5], "f32"))
    b = g.const(weights([5]), tensor([5], "f32"))
    ty = tensor([2, 5], "f32")
    g.ret(g.op("gemm %s, %s, %s" % (x, w, b), ty), ty)
    out.append(("gemm_f32", (0, 0), True, g.text(), "float"))
    g = Graph("flatten_fc_f32")
    x = g.arg("x", tensor([1, 3, 4, 4], "f32"))
    w = g.const(weights([4, 3, 3, 3]), tensor([4, 3, 3, 3], "f32"))
    c = g.op('conv2d %s, %s {pads = [1, 1, 1, 1], activation = "relu"}' % (x, w),
             tensor([1, 4, 4, 4], "f32"))
    f = g.op("flatten %s {axis = 1}" % c, tensor([1, 64], "f32"))
    fw = g.const(weights([5, 64]), tensor([5, 64], "f32"))
    ty = tensor([1, 5], "f32")
    g.ret(g.op("gemm %s, %s {trans_b = 1}" % (f, fw), ty), ty)
    out.append(("flatten_fc_f32", (0, 0), True, g.text(), "float"))
    g = Graph("batch_matmul_f32")
    a = g.arg("a", tensor([2, 3, 4], "f32"))
    b = g.arg("b", tensor([2, 4, 5], "f32"))
    ty = tensor([2, 3, 5], "f32")
    g.ret(g.op("matmul %s, %s" % (a, b), ty), ty)
    out.append(("batch_matmul_f32", (0, 0), False, g.text(), "float"))
    for name, op in (("add_f32", "add"), ("sub_f32", "sub"), ("mul_f32", "mul")):
        g = Graph(name)
        a = g.arg("a", tensor([1, 4, 5, 5], "f32"))
        c = g.const(weights([4, 1, 1]), tensor([4, 1, 1], "f32"))
        ty = tensor([1, 4, 5, 5], "f32")
        g.ret(g.op("%s %s, %s" % (op, a, c), ty), ty)
        out.append((name, (0, 0), True, g.text(), "float, broadcast constant"))
    unary("avgpool_f32", "avgpool %s {kernel_shape = [2, 2], strides = [2, 2]}",
          [1, 3, 6, 6], [1, 3, 3, 3])
    unary("maxpool_f32", "maxpool %s {kernel_shape = [3, 3], strides = [1, 1], "
          "pads = [1, 1, 1, 1]}", [1, 3, 6, 6])
    unary("mean_f32", "reduce_mean %s {axes = [2, 3], keepdims = 0}", [1, 5, 4, 4],
          [1, 5])
    unary("softmax_f32", "softmax %s {axis = 1}", [1, 6, 3, 3])
    unary("logistic_f32", "sigmoid %s", [2, 7])
    unary("tanh_f32", "tanh %s", [2, 7])
    unary("hard_swish_f32", "hard_swish %s", [1, 3, 4, 4], armnn=False)
    unary("relu_f32", "relu %s", [1, 3, 4, 4])
    unary("relu6_f32", "clip %s {min = 0.0, max = 6.0}", [1, 3, 4, 4])
    unary("reshape_f32", "flatten %s {axis = 1}", [1, 3, 4, 4], [1, 48])
    unary("transpose_f32", "transpose %s {perm = [1, 0]}", [3, 5], [5, 3])
    unary("pad_f32", "pad %s {pads = [0, 0, 1, 1, 0, 0, 1, 1]}", [1, 2, 3, 3],
          [1, 2, 5, 5])
    unary("resize_bilinear_f32", 'resize %s {mode = "linear", '
          'coordinate_transformation_mode = "half_pixel"}', [1, 2, 4, 4], [1, 2, 8, 8])
    unary("resize_nearest_f32", 'resize %s {mode = "nearest", '
          'coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"}',
          [1, 2, 3, 3], [1, 2, 6, 6])
    g = Graph("concat_f32")
    a = g.arg("a", tensor([1, 2, 3, 3], "f32"))
    b = g.arg("b", tensor([1, 4, 3, 3], "f32"))
    ty = tensor([1, 6, 3, 3], "f32")
    g.ret(g.op("concat %s, %s {axis = 1}" % (a, b), ty), ty)
    out.append(("concat_f32", (0, 0), True, g.text(), "float"))
    return out


def shape_conv_ops(rng):
    """Single-op models of slice, split, gather, grouped and transposed
    convolution and batch_norm (a generator of their own, so the models
    above keep their random data): (name, bounds, armnn, text, what)."""
    out = []
    sx, zx = 0.05, -3
    X = qt(sx, zx)

    def add(name, lsb, g, what, armnn=False, opt=None):
        out.append((name, (lsb, lsb if opt is None else opt), armnn, g.text(),
                    what))

    def weights(shape):
        return rng.standard_normal(shape).astype(F32) * 0.3

    def nhwc_conv(g, x, c, ty):
        """A 1x1 float conv2d, so that what follows it is NHWC."""
        w = g.const(weights([c, c, 1, 1]), tensor([c, c, 1, 1], "f32"))
        return g.op("conv2d %s, %s" % (x, w), ty)

    def one(name, elem, in_shape, body, out_shape, what, lsb=0, pre=False):
        g = Graph(name)
        x = g.arg("x", tensor(in_shape, elem))
        if pre:
            x = nhwc_conv(g, x, in_shape[1], tensor(in_shape, elem))
        ty = tensor(out_shape, elem)
        g.ret(g.op(body % x, ty), ty)
        add(name, lsb, g, what)

    # slice -> STRIDED_SLICE (shufflenet's channel halves, vit's tokens)
    one("slice_nhwc_f32", "f32", [1, 8, 5, 5],
        "slice %s {starts = [4], ends = [8], axes = [1]}", [1, 4, 5, 5],
        "STRIDED_SLICE of the channels of an NHWC value", pre=True)
    one("slice_steps_f32", "f32", [1, 8, 6, 7],
        "slice %s {starts = [-1, 1, 0], ends = [-100, 6, 2], axes = [3, 2, 1], "
        "steps = [-2, 2, 1]}", [1, 2, 3, 4],
        "STRIDED_SLICE, negative step to the front (end_mask), NHWC", pre=True)
    one("slice_tokens_f32", "f32", [1, 17, 16],
        "slice %s {starts = [1], ends = [9223372036854775807], axes = [1]}",
        [1, 16, 16], "STRIDED_SLICE of tokens 1.. (3-D, native layout)")
    one("slice_int8", "!quant.uniform<i8:f32, 0.05:-3>", [1, 4, 6, 6],
        "slice %s {starts = [1, 0, 1], ends = [3, 6, 5], axes = [1, 2, 3], "
        "steps = [1, 2, 3]}", [1, 2, 3, 2], "STRIDED_SLICE int8")
    # split -> SPLIT (equal parts) / SPLIT_V
    for name, elem, sizes, what in (
            ("split_f32", "f32", (4, 4), "SPLIT into equal channel halves, NHWC"),
            ("split_v_int8", X, (3, 5), "SPLIT_V int8 (3 + 5 channels)")):
        g = Graph(name)
        x = g.arg("x", tensor([1, 8, 4, 4], elem))
        outs = ["%%p%d" % i for i in range(len(sizes))]
        tys = [tensor([1, c, 4, 4], elem) for c in sizes]
        g.lines.append("  %s = split %s {axis = 1} : %s" %
                       (", ".join(outs), x, ", ".join(tys)))
        for v, t in zip(outs, tys):
            g.ret(v, t)
        add(name, 0, g, what)
    # gather -> GATHER (vit's class token; constant indices, one negative)
    for name, elem, idx, shape, oshape, what in (
            ("gather_f32", "f32", np.array(0, np.int64), [1, 5, 6], [1, 6],
             "GATHER of token 0 (scalar index)"),
            ("gather_int8", X, np.array([2, -1], np.int64), [1, 5, 6], [1, 2, 6],
             "GATHER int8, a negative index normalized")):
        g = Graph(name)
        x = g.arg("x", tensor(shape, elem))
        i = g.const(idx, tensor(list(idx.shape), "i64"))
        ty = tensor(oshape, elem)
        g.ret(g.op("gather %s, %s {axis = 1}" % (x, i), ty), ty)
        add(name, 0, g, what)

    # grouped convolution (regnet: group 2) -> CONV_2D, filter of C/group
    net = Net("conv2d_group2_int8", (1, 8, 6, 6), rng)
    y = net.conv(net.x, 6, 3, pad=[1, 1, 1, 1], group=2, act="relu")
    net.g.ret(y[0], tensor(y[1].shape, qt(y[2], y[3])))
    add("conv2d_group2_int8", 0, net.g, "grouped CONV_2D int8 (group 2)",
        opt=1)
    g = Graph("conv2d_group4_f32")
    x = g.arg("x", tensor([1, 8, 7, 7], "f32"))
    w = g.const(weights([12, 2, 3, 3]), tensor([12, 2, 3, 3], "f32"))
    b = g.const(weights([12]), tensor([12], "f32"))
    ty = tensor([1, 12, 4, 4], "f32")
    g.ret(g.op('conv2d %s, %s, %s {strides = [2, 2], pads = [1, 1, 1, 1], '
               'group = 4}' % (x, w, b), ty), ty)
    add("conv2d_group4_f32", 0, g, "grouped CONV_2D (group 4, stride 2)")

    # conv_transpose2d -> TRANSPOSE_CONV (PP-OCR det's 2x up-sampling)
    for name, xs, ws, attrs, ys, what in (
            ("conv_transpose_f32", [1, 4, 5, 5], [4, 3, 2, 2], "strides = [2, 2]",
             [1, 3, 10, 10], "TRANSPOSE_CONV stride 2, VALID"),
            ("conv_transpose_same_f32", [1, 4, 5, 5], [4, 3, 4, 4],
             "strides = [2, 2], pads = [1, 1, 1, 1]", [1, 3, 10, 10],
             "TRANSPOSE_CONV stride 2, SAME"),
            ("conv_transpose_crop_f32", [1, 4, 5, 5], [4, 2, 3, 3],
             "strides = [2, 2], pads = [1, 1, 1, 1], output_padding = [1, 1]",
             [1, 2, 10, 10], "TRANSPOSE_CONV VALID + STRIDED_SLICE (ONNX pads)"),
            # a fused relu is a RELU after it (version 4, TRANSPOSE_CONV's
            # fused activation, is not in tflite-runtime 2.14: PP-OCRv4 det)
            ("conv_transpose_relu_f32", [1, 4, 5, 5], [4, 3, 2, 2],
             'strides = [2, 2], activation = "relu"', [1, 3, 10, 10],
             "TRANSPOSE_CONV + RELU"),
            ("conv_transpose_crop_relu6_f32", [1, 4, 5, 5], [4, 2, 3, 3],
             'strides = [2, 2], pads = [1, 1, 1, 1], output_padding = [1, 1], '
             'activation = "clip", activation_min = 0.0, activation_max = 6.0',
             [1, 2, 10, 10], "TRANSPOSE_CONV + STRIDED_SLICE + RELU6")):
        g = Graph(name)
        x = g.arg("x", tensor(xs, "f32"))
        w = g.const(weights(ws), tensor(ws, "f32"))
        b = g.const(weights([ws[1]]), tensor([ws[1]], "f32"))
        ty = tensor(ys, "f32")
        g.ret(g.op("conv_transpose2d %s, %s, %s {%s}" % (x, w, b, attrs), ty), ty)
        add(name, 0, g, what)
    # int8 (QDQ): not folded (op_table.c), DEQUANTIZE, float TRANSPOSE_CONV
    # with the weights dequantized at compile time, QUANTIZE compute what
    # Quill's reference form computes (the folded int8 TRANSPOSE_CONV was
    # 1 step off, 57 at PP-OCRv4 det's output); bit-exact with the
    # reference kernels, a kernel no larger than the stride
    g = Graph("conv_transpose_qdq")
    x = g.arg("x", tensor([1, 4, 5, 5], X))
    wf = rng.standard_normal((4, 3, 2, 2)) * 0.3
    wq, wsc = weight_params(wf, 1)
    bq = rng.integers(-300, 300, 3).astype(np.int32)
    wv = g.const(wq, tensor([4, 3, 2, 2], qt_axis(wsc, 1)))
    bty = "!quant.uniform<i32:f32:0, {%s}>" % ", ".join(
        "%r:0" % (f32(sx) * f32(v)) for v in wsc)
    bv = g.const(bq, tensor([3], bty))
    dx = g.op("dequantize %s" % x, tensor([1, 4, 5, 5], "f32"))
    dw = g.op("dequantize %s" % wv, tensor([4, 3, 2, 2], "f32"))
    db = g.op("dequantize %s" % bv, tensor([3], "f32"))
    r = g.op("conv_transpose2d %s, %s, %s {strides = [2, 2]}" % (dx, dw, db),
             tensor([1, 3, 10, 10], "f32"))
    ty = tensor([1, 3, 10, 10], qt(0.04, 2))
    g.ret(g.op('quantize %s {rounding = "tflite"}' % r, ty), ty)
    add("conv_transpose_qdq", 0, g, "DEQUANTIZE + TRANSPOSE_CONV float + QUANTIZE (QDQ)",
        opt=1)

    # batch_norm with no conv before it -> MUL + ADD, bit-exact
    def bn(g, x, c, shape):
        ps = [g.const(a.astype(F32), tensor([c], "f32")) for a in (
            rng.standard_normal(c), rng.standard_normal(c) * 0.1,
            rng.standard_normal(c) * 0.2, rng.uniform(0.5, 2.0, c))]
        return g.op("batch_norm %s, %s, %s, %s, %s {epsilon = 0.001}" %
                    ((x,) + tuple(ps)), tensor(shape, "f32"))

    g = Graph("batch_norm_f32")
    x = g.arg("x", tensor([1, 4, 5, 5], "f32"))
    g.ret(bn(g, x, 4, [1, 4, 5, 5]), tensor([1, 4, 5, 5], "f32"))
    add("batch_norm_f32", 0, g, "batch_norm as MUL + ADD (NCHW constants)")
    g = Graph("batch_norm_nhwc_f32")
    x = g.arg("x", tensor([1, 4, 5, 5], "f32"))
    c = nhwc_conv(g, x, 4, tensor([1, 4, 5, 5], "f32"))
    g.ret(bn(g, c, 4, [1, 4, 5, 5]), tensor([1, 4, 5, 5], "f32"))
    add("batch_norm_nhwc_f32", 0, g, "batch_norm as MUL + ADD after a conv (NHWC)")
    g = Graph("batch_norm_qdq")
    x = g.arg("x", tensor([1, 4, 5, 5], X))
    d = g.op("dequantize %s" % x, tensor([1, 4, 5, 5], "f32"))
    ty = tensor([1, 4, 5, 5], qt(0.06, 1))
    g.ret(g.op('quantize %s {rounding = "tflite"}' % bn(g, d, 4, [1, 4, 5, 5]),
               ty), ty)
    add("batch_norm_qdq", 0, g, "batch_norm between dequantize and quantize: "
        "DEQUANTIZE, MUL, ADD, QUANTIZE")
    return out


def activation_ops(rng):
    """LEAKY_RELU, PRELU, BATCH_MATMUL (activation x activation), RESIZE
    variants, layer_norm, float and int8 (folded QDQ), with a generator of
    their own:
    (name, bounds, armnn, text, what). The int8 ones are QDQ reference
    form: TFLite requantizes in fixed point where Quill computes the float
    op on dequantized values and rounds once, so they may be 1 step apart
    next to a rounding boundary (bound 1)."""
    out = []
    sx, zx = 0.05, -3

    def add(name, lsb, g, what, lsb_opt=None):
        out.append((name, (lsb, lsb if lsb_opt is None else lsb_opt), False,
                    g.text(), what))

    def model(name, body, shape, out_shape, what, out_q=None, consts=(),
              nin=1, lsb=0, lsb_opt=None):
        g = Graph(name)
        xs = []
        for i in range(nin):
            if out_q:
                xi = g.arg("x%d" % i, tensor(shape[i], qt(sx * (1 + i), zx + 5 * i)))
                xs.append(g.op("dequantize %s" % xi, tensor(shape[i], "f32")))
            else:
                xs.append(g.arg("x%d" % i, tensor(shape[i], "f32")))
        cs = [c(g) for c in consts]
        r = g.op(body % tuple(xs + cs), tensor(out_shape, "f32"))
        if out_q:
            ty = tensor(out_shape, out_q)
            r = g.op('quantize %s {rounding = "tflite"}' % r, ty)
            g.ret(r, ty)
        else:
            g.ret(r, tensor(out_shape, "f32"))
        add(name, lsb, g, what, lsb_opt)

    def slope_f32(g):
        return g.const((rng.standard_normal((4, 1, 1)) * 0.3).astype(F32),
                       tensor([4, 1, 1], "f32"))

    def slope_q(g):
        q = np.clip(np.round(rng.standard_normal((4, 1, 1)) * 40), -127,
                    127).astype(np.int8)
        ty = tensor([4, 1, 1], "!quant.uniform<i8<-127:127>:f32, 0.0078125:0>")
        c = g.const(q, ty)
        return g.op("dequantize %s" % c, tensor([4, 1, 1], "f32"))

    s4 = [[1, 4, 5, 5]]
    model("leaky_relu_f32", "leaky_relu %s {alpha = 0.1}", s4, [1, 4, 5, 5],
          "LEAKY_RELU")
    model("leaky_relu_qdq", "leaky_relu %s {alpha = 0.1}", s4, [1, 4, 5, 5],
          "LEAKY_RELU int8", out_q=qt(0.04, -20), lsb=1)
    model("prelu_f32", "prelu %s, %s", s4, [1, 4, 5, 5],
          "PRELU, per-channel slope", consts=[slope_f32])
    model("prelu_qdq", "prelu %s, %s", s4, [1, 4, 5, 5],
          "PRELU int8, per-channel int8 slope", out_q=qt(0.04, -20),
          consts=[slope_q], lsb=1)
    model("batch_matmul_qdq", "matmul %s, %s", [[2, 3, 4], [2, 4, 5]], [2, 3, 5],
          "BATCH_MATMUL int8, activation x activation (attention)",
          out_q=qt(0.1, 3), nin=2, lsb=1)
    model("batch_matmul_4d_f32", "matmul %s, %s", [[1, 2, 6, 8], [1, 2, 8, 6]],
          [1, 2, 6, 6], "BATCH_MATMUL, 4-D (heads)", nin=2)
    for name, attrs, shape, oshape in (
            ("resize_bilinear_align_f32", 'mode = "linear", '
             'coordinate_transformation_mode = "align_corners"',
             [1, 2, 4, 5], [1, 2, 7, 9]),
            ("resize_bilinear_asym_f32", 'mode = "linear", '
             'coordinate_transformation_mode = "asymmetric"',
             [1, 2, 4, 4], [1, 2, 8, 8]),
            ("resize_bilinear_pytorch_f32", 'mode = "linear", '
             'coordinate_transformation_mode = "pytorch_half_pixel"',
             [1, 2, 3, 5], [1, 2, 6, 10]),
            ("resize_nearest_half_f32", 'mode = "nearest", '
             'coordinate_transformation_mode = "half_pixel", '
             'nearest_mode = "round_prefer_ceil"', [1, 2, 3, 3], [1, 2, 6, 6]),
            ("resize_nearest_align_f32", 'mode = "nearest", '
             'coordinate_transformation_mode = "align_corners", '
             'nearest_mode = "round_prefer_ceil"', [1, 2, 3, 3], [1, 2, 7, 7])):
        model(name, "resize %%s {%s}" % attrs, [shape], oshape,
              "RESIZE, " + attrs.replace('"', ""))
    # GELU (convnext's exact form, and the tanh approximation): TFLite's
    # int8 GELU is a table of its own float function, rounded once
    for form in ("none", "tanh"):
        model("gelu_%s_f32" % form, 'gelu %%s {approximate = "%s"}' % form, s4,
              [1, 4, 5, 5], "GELU, approximate = %s" % form)
        model("gelu_%s_qdq" % form, 'gelu %%s {approximate = "%s"}' % form, s4,
              [1, 4, 5, 5], "GELU int8, approximate = %s" % form,
              out_q=qt(0.03, -110), lsb=1)
    # layer_norm as MEAN, SQUARED_DIFFERENCE, RSQRT, ...: f32 steps where
    # the reference accumulates in double (about 1e-6 relative apart)
    def gamma(g):
        return g.const((1 + rng.standard_normal(16) * 0.2).astype(F32),
                       tensor([16], "f32"))

    def beta(g):
        return g.const((rng.standard_normal(16) * 0.1).astype(F32),
                       tensor([16], "f32"))

    model("layer_norm_f32", "layer_norm %s, %s, %s {axis = -1, epsilon = 0.00001}",
          [[1, 7, 16]], [1, 7, 16], "layer_norm as MEAN, SQUARED_DIFFERENCE, "
          "RSQRT, SUB, MUL, ADD", consts=[gamma, beta])
    model("layer_norm_qdq", "layer_norm %s, %s, %s {axis = -1, epsilon = 0.00001}",
          [[1, 7, 16]], [1, 7, 16], "layer_norm float between DEQUANTIZE and "
          "QUANTIZE", out_q=qt(0.03, 1), consts=[gamma, beta], lsb=1)
    # numerics = "f32" (the tflite-int8 backend's layer_norms): Quill
    # computes TFLite's f32 sequence, equal with the reference kernels bit
    # for bit (a float output named *_f32exact is held to 0, not 1e-5);
    # rows of convnext_tiny's 96 and ViT's 768 channels, more than one row
    # so the MEANs are per row. The optimized kernels sum otherwise (bound
    # 1e-5 relative, 1 step).
    for n, rows, sx_ in ((16, 7, 1.0), (96, 12, 3.0), (768, 5, 0.5)):
        def g_n(g, n=n):
            return g.const((1 + rng.standard_normal(n) * 0.2).astype(F32),
                           tensor([n], "f32"))

        def b_n(g, n=n):
            return g.const((rng.standard_normal(n) * 0.1).astype(F32),
                           tensor([n], "f32"))
        body = ('layer_norm %%s, %%s, %%s {axis = -1, epsilon = %s, '
                'numerics = "f32"}' % ("0.00001" if n != 768 else "0.000001"))
        model("layer_norm%d_f32exact" % n, body, [[1, rows, n]], [1, rows, n],
              "layer_norm numerics f32, rows of %d" % n, consts=[g_n, b_n])
        model("layer_norm%d_qdq_exact" % n, body, [[1, rows, n]], [1, rows, n],
              "layer_norm numerics f32 between DEQUANTIZE and QUANTIZE, rows "
              "of %d" % n, out_q=qt(0.03, 1), consts=[g_n, b_n], lsb_opt=1)
    model("layer_norm_nobias_qdq_exact",
          'layer_norm %s, %s {axis = -1, epsilon = 0.000001, numerics = "f32"}',
          [[1, 6, 48]], [1, 6, 48], "layer_norm numerics f32 without bias "
          "(ViT's form after quantize)", out_q=qt(0.02, -4),
          consts=[lambda g: g.const((1 + rng.standard_normal(48) * 0.2)
                                    .astype(F32), tensor([48], "f32"))],
          lsb_opt=1)
    # lstm: one float UNIDIRECTIONAL_SEQUENCE_LSTM. Quill's reference sums
    # each gate in double and rounds the state to f32 once per step; TFLite
    # sums in f32 and has its own sigmoid and tanh: a gate sum of K = in +
    # hidden = 24 products is off by at most about K * 2^-24 relative, the
    # activations' slopes are at most 1, and the forget gate (< 1) shrinks
    # what earlier steps left: within the 1e-5 relative float bound.
    def lstm_w(rows, cols, scale):
        return lambda g: g.const(
            (rng.standard_normal((rows, cols)) * scale).astype(F32),
            tensor([rows, cols], "f32"))

    def lstm_b(g):
        return g.const((rng.standard_normal(128) * 0.1).astype(F32),
                       tensor([128], "f32"))
    model("lstm_f32", "lstm %s, %s, %s, %s", [[6, 2, 8]], [6, 2, 16],
          "UNIDIRECTIONAL_SEQUENCE_LSTM, time major, ONNX gates i o f c",
          consts=[lstm_w(64, 8, 0.4), lstm_w(64, 16, 0.3), lstm_b])
    model("lstm_nobias_f32", "lstm %s, %s, %s", [[3, 1, 5]], [3, 1, 4],
          "UNIDIRECTIONAL_SEQUENCE_LSTM without bias",
          consts=[lstm_w(16, 5, 0.5), lstm_w(16, 4, 0.5)])
    model("resize_bilinear_align_qdq", 'resize %s {mode = "linear", '
          'coordinate_transformation_mode = "align_corners"}', [[1, 2, 4, 4]],
          [1, 2, 7, 7], "RESIZE_BILINEAR int8 align_corners", out_q=qt(sx, zx),
          lsb=1)
    return out


def qlstm_ops(rng):
    """qlstm (TFLite's integer UNIDIRECTIONAL_SEQUENCE_LSTM, ir/qlstm.h) on
    random weights: hidden 8/16/32, input 4/20, seq 1/5, batch 1/2, cell
    state scales 2^-9..2^-15 and hidden zero points of either sign (TFLite
    adds the hidden state's zero point after its rescale). Bit-exact: 0
    LSB on every resolver."""
    out = []
    for name, seq, batch, nin, h, cell, sx, zx, sy, zy, gain in (
            ("qlstm_h8_i4_s5_b2", 5, 2, 4, 8, -11, 0.05, -3, 0.0078125, 0, 1),
            ("qlstm_h16_i20_s1_b1", 1, 1, 20, 16, -15, 0.03, 7, 0.008, 5, 1),
            ("qlstm_h32_i20_s5_b1", 5, 1, 20, 32, -12, 0.04, 0, 0.0075, -7, 1),
            ("qlstm_h16_i4_s5_b2", 5, 2, 4, 16, -9, 0.06, -10, 0.0079, 2, 1),
            # weights 4x larger: gate sums beyond Q3.12's +-8 (saturating
            # to +-32767) and cell states that can reach 2^-13's end (4)
            ("qlstm_h32_i4_s5_b2_sat", 5, 2, 4, 32, -13, 0.05, 1, 0.0078, -1,
             4)):
        g = Graph(name)
        X = qt(sx, zx)
        x = g.arg("x", tensor([seq, batch, nin], X))
        W = rng.standard_normal((4 * h, nin)) * 0.4 * gain
        R = rng.standard_normal((4 * h, h)) * 0.3 * gain
        B = rng.standard_normal(4 * h) * 0.3 * gain
        sw = f32(np.abs(W).max() / 127.0)
        sr = f32(np.abs(R).max() / 127.0)
        wq = np.clip(np.round(W / sw), -127, 127).astype(np.int8)
        rq = np.clip(np.round(R / sr), -127, 127).astype(np.int8)
        bq = np.round(B / (f32(sx) * sw)).astype(np.int32)
        wt = "!quant.uniform<i8<-127:127>:f32, %r:0>"
        wc = g.const(wq, tensor([4 * h, nin], wt % sw))
        rc = g.const(rq, tensor([4 * h, h], wt % sr))
        bc = g.const(bq, tensor([4 * h], "i32"))
        yt = tensor([seq, batch, h], qt(sy, zy))
        g.ret(g.op("qlstm %s, %s, %s, %s {cell_shift = %d}"
                   % (x, wc, rc, bc, cell), yt, "y"), yt)
        out.append((name, (0, 0), False, g.text(),
                    "integer UNIDIRECTIONAL_SEQUENCE_LSTM, cell 2^%d" % cell))
    return out


def softmax_i8_ops(rng):
    """softmax on int8 values with the result at 1/256, zero point -128:
    TFLite's int8 SOFTMAX integer for integer (ir/tfl_int8.h), 0 LSB
    against its reference kernels. Its optimized kernels (the default
    resolver; XNNPACK does not take int8 SOFTMAX) compute the row in f32
    from a table of exp: 1 step. Rows of 10, 40, 197 and 1000; input
    scales from small ones (0.02: rows of 1000 sum to about 200) to large
    ones where diff_min drops most of the row (0.4: differences below -62
    give -128; 2.0: below -7; 40: the multiplier capped at 2^31 - 1, only
    the maximum counts). Not here: flat rows whose sum passes 512 (rows of
    1000 at 0.004), where the final shift is 32 or more: TFLite 2.14's
    reference kernel shifts an int32 by it (undefined; 127 on x86, where
    Quill and the optimized kernels give -128) and LiteRT 2.3's aborts
    (ir/tfl_int16.c; lit targets/llvm/int8-softmax.test runs such rows)."""
    out = []
    for rows, n, sx, zx in ((3, 10, 0.1, 3), (4, 40, 0.0625, -20),
                            (2, 40, 0.4, 0), (2, 197, 0.05, 7),
                            (2, 197, 2.0, -5), (2, 1000, 0.02, 0),
                            (2, 1000, 0.1, -9), (3, 10, 40.0, 1)):
        name = "softmax_i8_r%d_n%d_s%g" % (rows, n, sx)
        g = Graph(name.replace(".", "p"))
        x = g.arg("x", tensor([rows, n], qt(sx, zx)))
        yt = tensor([rows, n], qt(1.0 / 256, -128))
        g.ret(g.op("softmax %s {axis = -1}" % x, yt, "y"), yt)
        out.append((name.replace(".", "p"), (0, 1), False, g.text(),
                    "SOFTMAX int8, rows of %d, input scale %g" % (n, sx)))
    return out


def main():
    outdir = sys.argv[1]
    only = None
    if len(sys.argv) > 3 and sys.argv[2] == "--only":
        only = set(sys.argv[3].split(","))
    os.makedirs(outdir, exist_ok=True)
    rng = np.random.default_rng(1234)
    models = single_ops(rng) + float_ops(rng)
    models.append(("resnet18_int8", (0, 8), True, resnet18(rng).text(),
                   "ResNet-18, integer IR (qconv2d, qadd, pooling, qmatmul)"))
    models.append(("mobilenetv2_int8", (0, 24), True, mobilenetv2(rng).text(),
                   "MobileNetV2, integer IR (qconv2d incl. depthwise, qadd)"))
    models += shape_conv_ops(np.random.default_rng(4321))
    models += activation_ops(np.random.default_rng(5678))
    models += qlstm_ops(np.random.default_rng(2468))
    models += softmax_i8_ops(np.random.default_rng(1357))
    with open(os.path.join(outdir, "manifest.txt"), "w") as man:
        for name, lsb, armnn, text, what in models:
            if only and name not in only:
                continue
            with open(os.path.join(outdir, name + ".qir"), "w") as f:
                f.write(text)
            man.write("%s %s %s %s %s\n" % (name, lsb[0], lsb[1],
                                          "yes" if armnn else "no", what))


main()
