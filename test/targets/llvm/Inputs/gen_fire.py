"""gen_fire.py - a SqueezeNet fire module as textual IR (for
concat-slab.test): a 1x1 squeeze conv, expand convs 1x1 (24 channels:
not a multiple of 16) and 3x3 (40) of the concat's own type, the concat
read only by a padded 3x3 conv (so it is a haloed buffer); and a second
returned concat of a conv and a maxpool (the user's buffer:
copied)."""
import random

from qconv_ir import q, t, weights

rng = random.Random(17)


X, S, T, U = q(0.02, 128), q(0.03, 5), q(0.05, 3), q(0.07, 0)
out = ["func @fire(%%x: %s) -> (%s, %s) {"
       % (t(32, 12, X), t(16, 12, U), t(48, 12, X))]
out += weights(rng, "ws", 16, 32, 1) + weights(rng, "w1", 24, 16, 1)
out += weights(rng, "w3", 40, 16, 3) + weights(rng, "wy", 16, 64, 3)
out += weights(rng, "w4", 16, 32, 1)
out += [
    "  %%s = qconv2d %%x, %%ws, %%bws {act_min = 0} : %s" % t(16, 12, S),
    "  %%e1 = qconv2d %%s, %%w1, %%bw1 {act_min = 0} : %s" % t(24, 12, T),
    "  %%e3 = qconv2d %%s, %%w3, %%bw3 {pads = [1, 1, 1, 1], act_min = 0} : %s"
    % t(40, 12, T),
    "  %%c = concat %%e1, %%e3 {axis = 1} : %s" % t(64, 12, T),
    "  %%y = qconv2d %%c, %%wy, %%bwy {pads = [1, 1, 1, 1]} : %s" % t(16, 12, U),
    "  %%e4 = qconv2d %%x, %%w4, %%bw4 : %s" % t(16, 12, X),
    "  %%m = maxpool %%x {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : %s"
    % t(32, 12, X),
    "  %%d = concat %%e4, %%m {axis = 1} : %s" % t(48, 12, X),
    "  return %y, %d",
    "}"]
print("\n".join(out))
