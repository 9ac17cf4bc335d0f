"""gen_qconv_split.py - strided convs whose output rows have 17-31 pixels
(for amx-split.test): a 1x1 stride-2 conv 32 -> 48 channels to rows of 20
(16 + 4) and a 3x3 stride-2 conv 16 -> 32 with pads to rows of 25
(16 + 9), random weights and biases, u8 activations."""
import random

from qconv_ir import q, weights

rng = random.Random(23)

X, Y = q(0.02, 128), q(0.06, 7)
tx1, ty1 = "tensor<1x32x44x40x%s>" % X, "tensor<1x48x22x20x%s>" % Y
tx2, ty2 = "tensor<1x16x50x50x%s>" % X, "tensor<1x32x25x25x%s>" % Y
out = ["func @split(%%x: %s, %%u: %s) -> (%s, %s) {" % (tx1, tx2, ty1, ty2)]
out += weights(rng, "w1", 48, 32, 1) + weights(rng, "w2", 32, 16, 3)
out += ["  %%y = qconv2d %%x, %%w1, %%bw1 {strides = [2, 2], act_min = 0} : %s"
        % ty1,
        "  %%z = qconv2d %%u, %%w2, %%bw2 {strides = [2, 2], "
        "pads = [1, 1, 1, 1]} : %s" % ty2,
        "  return %y, %z", "}"]
print("\n".join(out))
