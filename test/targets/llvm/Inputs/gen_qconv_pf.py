"""gen_qconv_pf.py - two 3x3 convs for amx-prefetch.test: 256 -> 256
channels at 8x8 (576 KiB of weights, more than stays in L2 between a
channel tile's pixel chunks: the amx kernel prefetches the next tile's)
and 64 -> 64 (36 KiB: no prefetch), random weights and biases, u8
activations."""
import random

from qconv_ir import q, weights

rng = random.Random(31)

X, Y = q(0.02, 128), q(0.3, 7)
t = lambda c, h, w, e: "tensor<1x%dx%dx%dx%s>" % (c, h, w, e)
tx, ty = t(256, 8, 8, X), t(256, 8, 8, Y)
tu, tz = t(64, 8, 8, X), t(64, 8, 8, Y)
out = ["func @pf(%%x: %s, %%u: %s) -> (%s, %s) {" % (tx, tu, ty, tz)]
out += weights(rng, "w1", 256, 256, 3) + weights(rng, "w2", 64, 64, 3)
out += ["  %%y = qconv2d %%x, %%w1, %%bw1 {pads = [1, 1, 1, 1]} : %s" % ty,
        "  %%z = qconv2d %%u, %%w2, %%bw2 {pads = [1, 1, 1, 1]} : %s" % tz,
        "  return %y, %z", "}"]
print("\n".join(out))
