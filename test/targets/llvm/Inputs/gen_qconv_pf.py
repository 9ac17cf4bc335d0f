"""gen_qconv_pf.py - two 3x3 convs for amx-prefetch.test: 256 -> 256
channels at 8x8 (576 KiB of weights, more than stays in L2 between a
channel tile's pixel chunks: the amx kernel prefetches the next tile's)
and 64 -> 64 (36 KiB: no prefetch), random weights and biases, u8
activations."""
import random

rng = random.Random(31)


def q(scale, zp, st="u8"):
    return "!quant.uniform<%s:f32, %s:%d>" % (st, scale, zp)


def weights(name, m, c, k):
    data = "%0*X" % (2 * m * c * k * k, rng.getrandbits(8 * m * c * k * k))
    bias = ", ".join(str(rng.randrange(-2000, 2000)) for _ in range(m))
    wt = "tensor<%dx%dx%dx%dx%s>" % (m, c, k, k, q(0.004, 0, "i8"))
    return ['  %%%s = constant {value = dense<"0x%s"> : %s} : %s'
            % (name, data, wt, wt),
            "  %%b%s = constant {value = dense<[%s]> : tensor<%dxi32>} : "
            "tensor<%dxi32>" % (name, bias, m, m)]


X, Y = q(0.02, 128), q(0.3, 7)
t = lambda c, h, w, e: "tensor<1x%dx%dx%dx%s>" % (c, h, w, e)
tx, ty = t(256, 8, 8, X), t(256, 8, 8, Y)
tu, tz = t(64, 8, 8, X), t(64, 8, 8, Y)
out = ["func @pf(%%x: %s, %%u: %s) -> (%s, %s) {" % (tx, tu, ty, tz)]
out += weights("w1", 256, 256, 3) + weights("w2", 64, 64, 3)
out += ["  %%y = qconv2d %%x, %%w1, %%bw1 {pads = [1, 1, 1, 1]} : %s" % ty,
        "  %%z = qconv2d %%u, %%w2, %%bw2 {pads = [1, 1, 1, 1]} : %s" % tz,
        "  return %y, %z", "}"]
print("\n".join(out))
