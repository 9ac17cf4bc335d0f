"""gen_qconv_narrow.py - GoogLeNet's 3x3 convs of few input channels (for
vnni-narrow.test), whose VNNI tiles have more than 8 pixels:

  y  3x3, 16 -> 32, 28x28 (2 channel vectors x 12 pixels a tile)
  z  3x3, 32 -> 96, 28x28 (3 channel vectors x 9 pixels a tile)

random weights and biases, u8 activations, padding 1."""
import random

from qconv_ir import q, t, weights

rng = random.Random(31)

X, Y = q(0.02, 128), q(0.09, 7)
tx, ty = t(16, 28, X), t(32, 28, Y)
tu, tz = t(32, 28, X), t(96, 28, Y)
out = ["func @narrow(%%x: %s, %%u: %s) -> (%s, %s) {" % (tx, tu, ty, tz)]
out += weights(rng, "w1", 32, 16, 3) + weights(rng, "w2", 96, 32, 3)
out += ["  %%y = qconv2d %%x, %%w1, %%bw1 {pads = [1, 1, 1, 1], "
        "act_min = 0} : %s" % ty,
        "  %%z = qconv2d %%u, %%w2, %%bw2 {pads = [1, 1, 1, 1]} : %s" % tz,
        "  return %y, %z", "}"]
print("\n".join(out))
