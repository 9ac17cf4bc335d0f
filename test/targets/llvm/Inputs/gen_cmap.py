"""gen_cmap.py - depthwise 1x1 convs between two dense convs as textual IR
(for cmap.test), one function each: @bn a BatchNorm-ReLU of 40 channels
(u8 -> u8, slopes 0.3 - 3, some negative), @steep the same with slopes of
20 - 60 on some channels (the wide form misses them: the narrow one on
AVX-512), @tflite TFLite's fixed-point rounding with results on both sides
of the zero point (its two roundings half away from zero are not one floor
of a line: neither form fits, the depthwise kernel), @i8 i8 storage on both sides with a clamp (act_min)."""
import random

rng = random.Random(31)
C, HW = 40, 9


def q(scale, zp, st="u8"):
    return "!quant.uniform<%s:f32, %s:%d>" % (st, scale, zp)


def t(e, hw=HW):
    return "tensor<1x%dx%dx%dx%s>" % (C, hw, hw, e)


def hexs(vals, fmt):
    return "".join(fmt(v) for v in vals)


def dense(name, k, wq):
    data = hexs([rng.randrange(256) for _ in range(C * C * k * k)],
                lambda v: "%02X" % v)
    wt = "tensor<%dx%dx%dx%dx%s>" % (C, C, k, k, wq)
    return ['  %%%s = constant {value = dense<"0x%s"> : %s} : %s'
            % (name, data, wt, wt)]


def func(name, xq, mq, yq, slopes, attrs):
    ws = [rng.choice([-127, -90, 33, 77, 127]) for _ in range(C)]
    xs = float(mq.split(", ")[1].split(":")[0])
    ys = float(yq.split(", ")[1].split(":")[0])
    scales = ["%.9g" % (s * ys / (xs * abs(w))) for s, w in zip(slopes, ws)]
    wq = "!quant.uniform<i8:f32:0, {%s}>" % ", ".join(s + ":0" for s in scales)
    wt = "tensor<%dx1x1x1x%s>" % (C, wq)
    wdata = hexs(ws, lambda v: "%02X" % (v & 255))
    bias = ", ".join(str(rng.randrange(-30000, 30000)) for _ in range(C))
    out = ["func @%s(%%x: %s) -> %s {" % (name, t(xq), t(yq))]
    out += dense("a", 3, q(0.004, 0, "i8"))
    out.append("  %%m = qconv2d %%x, %%a {pads = [1, 1, 1, 1]} : %s" % t(mq))
    out.append('  %%w = constant {value = dense<"0x%s"> : %s} : %s'
               % (wdata, wt, wt))
    out.append("  %%b = constant {value = dense<[%s]> : tensor<%dxi32>} : "
               "tensor<%dxi32>" % (bias, C, C))
    out.append("  %%d = qconv2d %%m, %%w, %%b {group = %d%s} : %s"
               % (C, attrs, t(yq)))
    out += dense("c", 1, q(0.004, 0, "i8"))
    out.append("  %%y = qconv2d %%d, %%c : %s" % t(yq))
    out.append("  return %y\n}")
    return out


def slopes(steep):
    return [rng.uniform(20, 60) if steep and i % 5 == 0
            else rng.uniform(0.3, 3) for i in range(C)]


lines = []
lines += func("bn", q(0.05, 120), q(0.03, 120), q(0.02, 0), slopes(False),
              ', rounding = "half_even"')
lines += func("steep", q(0.05, 120), q(0.03, 120), q(0.02, 0), slopes(True),
              ', rounding = "half_even"')
mult = ", ".join(str(rng.randrange(1 << 30, 1 << 31)) for _ in range(C))
shift = ", ".join(str(rng.randrange(-8, 0)) for _ in range(C))
lines += func("tflite", q(0.05, 120), q(0.03, 120), q(0.02, 128), slopes(False),
              ', rounding = "tflite", multiplier = [%s], shift = [%s]'
              % (mult, shift))
lines += func("i8", q(0.05, -8, "i8"), q(0.03, 5, "i8"), q(0.02, -20, "i8"),
              slopes(False), ', rounding = "half_even", act_min = -20')
print("\n".join(lines))
