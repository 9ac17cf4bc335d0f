"""gen_convnext.py - a ConvNeXt block's end as textual IR (for
nhwc-view.test): a 7x7 depthwise conv, its result transposed to NHWC, a
pointwise qmatmul, transposed back (a view with NHWC strides), the layer
scale (qmul) and the residual qadd, read by the next block's depthwise
conv (pads 3)."""
import random

from qconv_ir import q, t, weights

rng = random.Random(31)


def tl(c, hw, e):
    return "tensor<1x%dx%dx%dx%s>" % (hw, hw, c, e)


X, A, B, G, S = (q(0.02, 128), q(0.03, 120), q(0.05, 127), q(0.004, 126),
                 q(0.04, 129))
W = q(0.004, 0, "i8")
L = q(3.9e-3, 0)
mm = "".join("%02X" % rng.randrange(256) for _ in range(32 * 32))
out = ["func @cnx(%%x: %s) -> %s {" % (t(32, 14, X), t(32, 14, A))]
out += weights(rng, "wd", 32, 1, 7) + weights(rng, "wz", 32, 1, 7)
out += ['  %%w1 = constant {value = dense<"0x%s"> : tensor<32x32x%s>} : '
        'tensor<32x32x%s>' % (mm, W, W),
        '  %%ls = constant {value = dense<200> : tensor<32x1x1x%s>} : '
        'tensor<32x1x1x%s>' % (L, L)]
P = "pads = [3, 3, 3, 3], group = 32"
out += [
    "  %%d = qconv2d %%x, %%wd, %%bwd {%s} : %s" % (P, t(32, 14, A)),
    "  %%t = transpose %%d {perm = [0, 2, 3, 1]} : %s" % tl(32, 14, A),
    "  %%m = qmatmul %%t, %%w1 : %s" % tl(32, 14, B),
    "  %%u = transpose %%m {perm = [0, 3, 1, 2]} : %s" % t(32, 14, B),
    "  %%g = qmul %%u, %%ls : %s" % t(32, 14, G),
    "  %%s = qadd %%g, %%d : %s" % t(32, 14, S),
    "  %%z = qconv2d %%s, %%wz, %%bwz {%s} : %s" % (P, t(32, 14, A)),
    "  return %z",
    "}"]
print("\n".join(out))
