"""Write hand-made quantized Quill graphs and their expected outputs.

Usage: python3 make_quant_graphs.py OUTDIR [NAME...]

For each case NAME (a function `case_NAME` below) writes
  OUTDIR/NAME.qir              the graph in Quill's textual IR
  OUTDIR/NAME.in<i>.npy        graph input i
  OUTDIR/NAME.out<i>.npy       expected graph output i
The graphs are in Quill's reference quantized form (docs/quantization.md
section 2: float ops between dequantize and quantize, integer weights with
per-channel parameters, i32 biases) or use the integer ops (qconv2d,
qmatmul). Graph outputs are the quantized tensors themselves (integers), so
an exported model can be compared exactly. The expected outputs follow the
documented semantics, computed with numpy:

  quantize    q = clip(rint(f32(x) / f32(s)) + zp, qmin, qmax)
  dequantize  x = f32(q - zp) * f32(s)
  qconv2d / qmatmul (float requantization):
              acc = sum (x - zp_x)(w - zp_w[c]) + b[c]   (exact integers)
              y = clip(zp_y + rint(f32(acc) * f32(f32(s_x) f32(s_w[c]) / f32(s_y))),
                       lo, hi)

Float convolutions are computed in float64; the quantized outputs of the
reference-form graphs may then differ from an f32 runtime at exact rounding
ties (the checker reports how many elements differ and by how much).
Deterministic (each case seeds from its name); needs only numpy.
"""
import os
import sys
import zlib

import numpy as np

F32 = np.float32


def f32(v):
    return float(np.float32(v))


# ---- numpy reference ---------------------------------------------------------

def quantize(x, s, zp, qmin, qmax, axis=None, shape=None):
    x = np.asarray(x, F32)
    s = np.asarray(s, F32)
    zp = np.asarray(zp, np.int64)
    if axis is not None:
        bshape = [1] * x.ndim
        bshape[axis] = -1
        s, zp = s.reshape(bshape), zp.reshape(bshape)
    q = np.rint((x / s).astype(F32)).astype(np.int64) + zp
    return np.clip(q, qmin, qmax)


def dequantize(q, s, zp, axis=None):
    q = np.asarray(q, np.int64)
    s = np.asarray(s, F32)
    zp = np.asarray(zp, np.int64)
    if axis is not None:
        bshape = [1] * q.ndim
        bshape[axis] = -1
        s, zp = s.reshape(bshape), zp.reshape(bshape)
    return ((q - zp).astype(F32) * s).astype(F32)


def conv2d(x, w, b, pads, strides=(1, 1), group=1, dtype=np.float64):
    n, c, h, wd = x.shape
    o, ci, kh, kw = w.shape
    xp = np.zeros((n, c, h + pads[0] + pads[2], wd + pads[1] + pads[3]),
                  dtype)
    xp[:, :, pads[0]:pads[0] + h, pads[1]:pads[1] + wd] = x
    oh = (xp.shape[2] - kh) // strides[0] + 1
    ow = (xp.shape[3] - kw) // strides[1] + 1
    y = np.zeros((n, o, oh, ow), dtype)
    og = o // group
    for g in range(group):
        for oc in range(g * og, (g + 1) * og):
            for i in range(oh):
                for j in range(ow):
                    win = xp[:, g * ci:(g + 1) * ci,
                             i * strides[0]:i * strides[0] + kh,
                             j * strides[1]:j * strides[1] + kw]
                    y[:, oc, i, j] = (win * w[oc].astype(dtype)).sum(
                        axis=(1, 2, 3))
            if b is not None:
                y[:, oc] += b[oc]
    return y


def requant_scale(sx, sw, sy):
    return F32(F32(sx) * F32(sw)) / F32(sy)


def requant(acc, scale, zp, lo, hi):
    v = np.rint((acc.astype(F32) * scale).astype(F32)).astype(np.int64)
    return np.clip(v + zp, lo, hi)


# ---- .qir text --------------------------------------------------------------

STORAGE = {"i8": np.int8, "u8": np.uint8, "i32": np.int32}


def qtype(storage, s, zp, rng=None):
    st = storage if rng is None else "%s<%d:%d>" % (storage, rng[0], rng[1])
    return "!quant.uniform<%s:f32, %r:%d>" % (st, f32(s), zp)


def qtype_axis(storage, axis, scales, zps, rng=None):
    st = storage if rng is None else "%s<%d:%d>" % (storage, rng[0], rng[1])
    params = ", ".join("%r:%d" % (f32(s), z) for s, z in zip(scales, zps))
    return "!quant.uniform<%s:f32:%d, {%s}>" % (st, axis, params)


def tensor(shape, elem):
    return "tensor<%s>" % "x".join([str(d) for d in shape] + [elem])


def dense(arr, storage_np, ty):
    data = np.ascontiguousarray(np.asarray(arr).astype(storage_np)).tobytes()
    return 'constant {value = dense<"0x%s"> : %s} : %s' % (
        data.hex().upper(), ty, ty)


def rand_weights(rng, shape, axis=0):
    """Per-channel symmetric i8 weights: ints in [-127, 127] and scales."""
    q = rng.integers(-127, 128, size=shape)
    scales = [f32(v) for v in rng.uniform(0.005, 0.02, size=shape[axis])]
    return q, scales


# ---- cases --------------------------------------------------------------------

def case_qdq_conv(rng):
    """Reference form: Q -> DQ -> conv2d (per-channel i8 weights, i32 bias,
    activation relu) -> Q, u8 activations."""
    x = rng.uniform(-1.5, 2.0, size=(1, 3, 8, 8)).astype(F32)
    sx, zx = f32(0.0137), 110
    w, sw = rand_weights(rng, (4, 3, 3, 3))
    sb = [f32(F32(sx) * F32(s)) for s in sw]
    b = rng.integers(-2000, 2000, size=4)
    sy, zy = f32(0.0213), 3
    xq = quantize(x, sx, zx, 0, 255)
    xd = dequantize(xq, sx, zx)
    wd = dequantize(w, sw, np.zeros(4, np.int64), axis=0)
    bd = dequantize(b, sb, np.zeros(4, np.int64), axis=0)
    y = conv2d(xd, wd, bd, (1, 1, 1, 1))
    y = np.maximum(y, 0).astype(F32)
    yq = quantize(y, sy, zy, 0, 255)
    tx = qtype("u8", sx, zx)
    tw = qtype_axis("i8", 0, sw, [0] * 4, (-127, 127))
    tb = qtype_axis("i32", 0, sb, [0] * 4)
    ty = qtype("u8", sy, zy)
    text = f"""func @qdq_conv(%x: {tensor((1, 3, 8, 8), 'f32')}) -> {tensor((1, 4, 8, 8), ty)} {{
  %xq = quantize %x : {tensor((1, 3, 8, 8), tx)}
  %xd = dequantize %xq : {tensor((1, 3, 8, 8), 'f32')}
  %wq = {dense(w, np.int8, tensor((4, 3, 3, 3), tw))}
  %wd = dequantize %wq : {tensor((4, 3, 3, 3), 'f32')}
  %bq = {dense(b, np.int32, tensor((4,), tb))}
  %bd = dequantize %bq : {tensor((4,), 'f32')}
  %y = conv2d %xd, %wd, %bd {{strides = [1, 1], pads = [1, 1, 1, 1], activation = "relu"}} : {tensor((1, 4, 8, 8), 'f32')}
  %yq = quantize %y : {tensor((1, 4, 8, 8), ty)}
  return %yq
}}
"""
    return text, [x], [yq.astype(np.uint8)]


def case_qdq_gemm(rng):
    """Reference form: gemm (trans_b, per-channel i8 weights, i32 bias,
    activation clip [0, 6]) between i8 Q/DQ."""
    x = rng.uniform(-3, 3, size=(2, 16)).astype(F32)
    sx, zx = f32(0.0251), -7
    w, sw = rand_weights(rng, (8, 16))
    sb = [f32(F32(sx) * F32(s)) for s in sw]
    b = rng.integers(-5000, 5000, size=8)
    sy, zy = f32(0.0247), -128
    xq = quantize(x, sx, zx, -128, 127)
    xd = dequantize(xq, sx, zx).astype(np.float64)
    wd = dequantize(w, sw, np.zeros(8, np.int64), axis=0).astype(np.float64)
    bd = dequantize(b, sb, np.zeros(8, np.int64), axis=0)
    y = np.clip(xd @ wd.T + bd, 0, 6).astype(F32)
    yq = quantize(y, sy, zy, -128, 127)
    tx = qtype("i8", sx, zx)
    tw = qtype_axis("i8", 0, sw, [0] * 8, (-127, 127))
    tb = qtype_axis("i32", 0, sb, [0] * 8)
    ty = qtype("i8", sy, zy)
    text = f"""func @qdq_gemm(%x: {tensor((2, 16), 'f32')}) -> {tensor((2, 8), ty)} {{
  %xq = quantize %x : {tensor((2, 16), tx)}
  %xd = dequantize %xq : {tensor((2, 16), 'f32')}
  %wq = {dense(w, np.int8, tensor((8, 16), tw))}
  %wd = dequantize %wq : {tensor((8, 16), 'f32')}
  %bq = {dense(b, np.int32, tensor((8,), tb))}
  %bd = dequantize %bq : {tensor((8,), 'f32')}
  %y = gemm %xd, %wd, %bd {{trans_b = 1, activation = "clip", activation_min = 0.0, activation_max = 6.0}} : {tensor((2, 8), 'f32')}
  %yq = quantize %y : {tensor((2, 8), ty)}
  return %yq
}}
"""
    return text, [x], [yq.astype(np.int8)]


def case_qdq_add(rng):
    """Reference form: add of two differently quantized inputs, then ops on
    quantized storage (maxpool, flatten) and a narrowed-range requantize."""
    a = rng.uniform(-2, 2, size=(1, 4, 6, 6)).astype(F32)
    b = rng.uniform(-1, 3, size=(1, 4, 6, 6)).astype(F32)
    sa, za, sb_, zb = f32(0.0161), 5, f32(0.0173), -40
    sy, zy = f32(0.0309), -9
    s2, z2 = f32(0.0415), 0
    aq = quantize(a, sa, za, -128, 127)
    bq = quantize(b, sb_, zb, -128, 127)
    y = (dequantize(aq, sa, za) + dequantize(bq, sb_, zb)).astype(F32)
    yq = quantize(y, sy, zy, -128, 127)
    pq = yq.reshape(1, 4, 3, 2, 3, 2).max(axis=(3, 5))
    fq = pq.reshape(1, 36)
    rq = quantize(dequantize(fq, sy, zy), s2, z2, -127, 127)
    ta, tb, ty = qtype("i8", sa, za), qtype("i8", sb_, zb), qtype("i8", sy, zy)
    tr = qtype("i8", s2, z2, (-127, 127))
    text = f"""func @qdq_add(%a: {tensor((1, 4, 6, 6), 'f32')}, %b: {tensor((1, 4, 6, 6), 'f32')}) -> ({tensor((1, 4, 6, 6), ty)}, {tensor((1, 36), tr)}) {{
  %aq = quantize %a : {tensor((1, 4, 6, 6), ta)}
  %ad = dequantize %aq : {tensor((1, 4, 6, 6), 'f32')}
  %bq = quantize %b : {tensor((1, 4, 6, 6), tb)}
  %bd = dequantize %bq : {tensor((1, 4, 6, 6), 'f32')}
  %y = add %ad, %bd : {tensor((1, 4, 6, 6), 'f32')}
  %yq = quantize %y : {tensor((1, 4, 6, 6), ty)}
  %p = maxpool %yq {{kernel_shape = [2, 2], strides = [2, 2]}} : {tensor((1, 4, 3, 3), ty)}
  %f = flatten %p {{axis = 1}} : {tensor((1, 36), ty)}
  %r = requantize %f : {tensor((1, 36), tr)}
  return %yq, %r
}}
"""
    return text, [a, b], [yq.astype(np.int8), rq.astype(np.int8)]


def case_qpool(rng):
    """avgpool / global_avgpool on quantized storage (equal in/out types):
    the mean of the stored values rounded half to even (odd zero point, so
    rounding mean(q - zp) instead would differ at ties)."""
    x = rng.uniform(-2, 2, size=(1, 3, 6, 6)).astype(F32)
    s, z = f32(0.125), -3
    q = quantize(x, s, z, -128, 127)
    win = q.reshape(1, 3, 3, 2, 3, 2).sum(axis=(3, 5))
    ap = np.clip(np.rint(win / 4.0), -128, 127)
    gp = np.clip(np.rint(q.sum(axis=(2, 3), keepdims=True) / 36.0), -128, 127)
    t = qtype("i8", s, z)
    text = f"""func @qpool(%x: {tensor((1, 3, 6, 6), 'f32')}) -> ({tensor((1, 3, 3, 3), t)}, {tensor((1, 3, 1, 1), t)}) {{
  %q = quantize %x : {tensor((1, 3, 6, 6), t)}
  %a = avgpool %q {{kernel_shape = [2, 2], strides = [2, 2]}} : {tensor((1, 3, 3, 3), t)}
  %g = global_avgpool %q : {tensor((1, 3, 1, 1), t)}
  return %a, %g
}}
"""
    return text, [x], [ap.astype(np.int8), gp.astype(np.int8)]


def case_fake_quant(rng):
    """A calibrated graph: fake_quant with a `quant` type is Q -> DQ."""
    x = rng.uniform(-4, 4, size=(3, 5)).astype(F32)
    s, z = f32(0.0331), 4
    y = dequantize(quantize(x, s, z, -128, 127), s, z)
    y = np.maximum(y, 0)
    sy, zy = f32(0.0157), -128
    yq = quantize(y, sy, zy, -128, 127)
    text = f"""func @fake_quant(%x: {tensor((3, 5), 'f32')}) -> {tensor((3, 5), qtype('i8', sy, zy))} {{
  %f = fake_quant %x {{role = "activation", observer = "minmax", quant = {qtype('i8', s, z)}}} : {tensor((3, 5), 'f32')}
  %r = relu %f : {tensor((3, 5), 'f32')}
  %q = quantize %r : {tensor((3, 5), qtype('i8', sy, zy))}
  return %q
}}
"""
    return text, [x], [yq.astype(np.int8)]


def case_qconv(rng):
    """Integer op: qconv2d with u8 activations, per-channel i8 weights, an i32
    bias and a fused relu (act_min = zp_y): QLinearConv."""
    x = rng.uniform(-1, 2, size=(1, 3, 7, 7)).astype(F32)
    sx, zx = f32(0.0119), 84
    w, sw = rand_weights(rng, (6, 3, 3, 3))
    b = rng.integers(-3000, 3000, size=6)
    sy, zy = f32(0.0187), 20
    xq = quantize(x, sx, zx, 0, 255)
    acc = conv2d(xq - zx, w, b, (1, 1, 1, 1), (2, 2), dtype=np.int64)
    scale = np.array([requant_scale(sx, s, sy) for s in sw], F32)
    yq = requant(acc, scale.reshape(1, -1, 1, 1), zy, zy, 255)
    tx, ty = qtype("u8", sx, zx), qtype("u8", sy, zy)
    tw = qtype_axis("i8", 0, sw, [0] * 6, (-127, 127))
    text = f"""func @qconv(%x: {tensor((1, 3, 7, 7), 'f32')}) -> {tensor((1, 6, 4, 4), ty)} {{
  %xq = quantize %x : {tensor((1, 3, 7, 7), tx)}
  %w = {dense(w, np.int8, tensor((6, 3, 3, 3), tw))}
  %b = {dense(b, np.int32, tensor((6,), 'i32'))}
  %y = qconv2d %xq, %w, %b {{strides = [2, 2], pads = [1, 1, 1, 1], act_min = {zy}}} : {tensor((1, 6, 4, 4), ty)}
  return %y
}}
"""
    return text, [x], [yq.astype(np.uint8)]


def case_qconv_acc(rng):
    """Integer op with an i32 (accumulator) result: ConvInteger + bias."""
    x = rng.uniform(-1, 2, size=(1, 2, 5, 5)).astype(F32)
    sx, zx = f32(0.0119), 84
    w = rng.integers(0, 256, size=(3, 2, 3, 3))
    sw, zw = f32(0.0101), 131
    b = rng.integers(-3000, 3000, size=3)
    xq = quantize(x, sx, zx, 0, 255)
    acc = conv2d(xq - zx, w - zw, b, (0, 0, 0, 0), dtype=np.int64)
    tx, tw = qtype("u8", sx, zx), qtype("u8", sw, zw)
    text = f"""func @qconv_acc(%x: {tensor((1, 2, 5, 5), 'f32')}) -> {tensor((1, 3, 3, 3), 'i32')} {{
  %xq = quantize %x : {tensor((1, 2, 5, 5), tx)}
  %w = {dense(w, np.uint8, tensor((3, 2, 3, 3), tw))}
  %b = {dense(b, np.int32, tensor((3,), 'i32'))}
  %y = qconv2d %xq, %w, %b : {tensor((1, 3, 3, 3), 'i32')}
  return %y
}}
"""
    return text, [x], [acc.astype(np.int32)]


def case_qmatmul(rng):
    """Integer op: qmatmul with u8 a and per-column i8 b. Without a bias
    QLinearMatMul; with one MatMulInteger + Add + float requantization; an
    i32 result MatMulInteger + Add."""
    x = rng.uniform(-1, 3, size=(3, 16)).astype(F32)
    sa, za = f32(0.0161), 62
    w, sw = rand_weights(rng, (16, 8), axis=1)
    b = rng.integers(-4000, 4000, size=8)
    sy, zy = f32(0.0293), 128
    aq = quantize(x, sa, za, 0, 255)
    acc = (aq - za) @ w
    scale = np.array([requant_scale(sa, s, sy) for s in sw], F32)
    y1 = requant(acc, scale, zy, 0, 255)
    y2 = requant(acc + b, scale, zy, 0, 255)
    ta, ty = qtype("u8", sa, za), qtype("u8", sy, zy)
    tw = qtype_axis("i8", 1, sw, [0] * 8, (-127, 127))
    text = f"""func @qmatmul(%x: {tensor((3, 16), 'f32')}) -> ({tensor((3, 8), ty)}, {tensor((3, 8), ty)}, {tensor((3, 8), 'i32')}) {{
  %aq = quantize %x : {tensor((3, 16), ta)}
  %w = {dense(w, np.int8, tensor((16, 8), tw))}
  %b = {dense(b, np.int32, tensor((8,), 'i32'))}
  %y1 = qmatmul %aq, %w : {tensor((3, 8), ty)}
  %y2 = qmatmul %aq, %w, %b : {tensor((3, 8), ty)}
  %y3 = qmatmul %aq, %w, %b : {tensor((3, 8), 'i32')}
  return %y1, %y2, %y3
}}
"""
    return text, [x], [y1.astype(np.uint8), y2.astype(np.uint8),
                       (acc + b).astype(np.int32)]


def main():
    out = sys.argv[1]
    names = sys.argv[2:] or sorted(k[5:] for k in globals()
                                   if k.startswith("case_"))
    os.makedirs(out, exist_ok=True)
    for name in sorted(names):
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        text, ins, outs = globals()["case_" + name](rng)
        with open(os.path.join(out, name + ".qir"), "w") as f:
            f.write(text)
        for k, a in enumerate(ins):
            np.save(os.path.join(out, "%s.in%d.npy" % (name, k)), a)
        for k, a in enumerate(outs):
            np.save(os.path.join(out, "%s.out%d.npy" % (name, k)), a)
        print(name)


if __name__ == "__main__":
    main()
