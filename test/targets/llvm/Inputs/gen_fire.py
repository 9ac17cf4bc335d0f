"""gen_fire.py - a SqueezeNet fire module as textual IR (for
concat-slab.test): a 1x1 squeeze conv, expand convs 1x1 (24 channels:
not a multiple of 16) and 3x3 (40) of the concat's own type, the concat
read only by a padded 3x3 conv (so it is a haloed buffer); and a second
returned concat of a conv and a maxpool (the user's buffer:
copied)."""
import random

rng = random.Random(17)


def q(scale, zp, st="u8"):
    return "!quant.uniform<%s:f32, %s:%d>" % (st, scale, zp)


def t(c, hw, e):
    return "tensor<1x%dx%dx%dx%s>" % (c, hw, hw, e)


def weights(name, m, c, k):
    data = "".join("%02X" % rng.randrange(256) for _ in range(m * c * k * k))
    bias = ", ".join(str(rng.randrange(-2000, 2000)) for _ in range(m))
    wt = "tensor<%dx%dx%dx%dx%s>" % (m, c, k, k, q(0.004, 0, "i8"))
    return ['  %%%s = constant {value = dense<"0x%s"> : %s} : %s'
            % (name, data, wt, wt),
            "  %%b%s = constant {value = dense<[%s]> : tensor<%dxi32>} : "
            "tensor<%dxi32>" % (name, bias, m, m)]


X, S, T, U = q(0.02, 128), q(0.03, 5), q(0.05, 3), q(0.07, 0)
out = ["func @fire(%%x: %s) -> (%s, %s) {"
       % (t(32, 12, X), t(16, 12, U), t(48, 12, X))]
out += weights("ws", 16, 32, 1) + weights("w1", 24, 16, 1)
out += weights("w3", 40, 16, 3) + weights("wy", 16, 64, 3)
out += weights("w4", 16, 32, 1)
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
