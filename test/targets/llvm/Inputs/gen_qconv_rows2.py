"""gen_qconv_rows2.py - strided convs whose output rows have at most 16
pixels (for amx-rows2.test), each block of the amx kernel two output rows:

  y  3x3 stride 2, 64 -> 64, 14x14 -> 7x7 (ResNet-18's layer4 entry in
     small: an odd row count, so the last pair is rows 5-6 again)
  z  3x3 stride (2, 1), 32 -> 48, 16x12 -> 8x12 (rows two apart in the
     panel, 48 channels: a partial channel block)
  v  1x1 stride (1, 2), 64 -> 32, 9x26 -> 9x13 (rows one apart, odd)

random weights and biases, u8 activations."""
import random

from qconv_ir import q, weights

rng = random.Random(29)

X, Y = q(0.02, 128), q(0.09, 7)
t = lambda c, h, w, e: "tensor<1x%dx%dx%dx%s>" % (c, h, w, e)
tx, ty = t(64, 14, 14, X), t(64, 7, 7, Y)
tu, tz = t(32, 16, 12, X), t(48, 8, 12, Y)
tw, tv = t(64, 9, 26, X), t(32, 9, 13, Y)
out = ["func @rows2(%%x: %s, %%u: %s, %%w: %s) -> (%s, %s, %s) {"
       % (tx, tu, tw, ty, tz, tv)]
out += weights(rng, "w1", 64, 64, 3) + weights(rng, "w2", 48, 32, 3) \
    + weights(rng, "w3", 32, 64, 1)
out += ["  %%y = qconv2d %%x, %%w1, %%bw1 {strides = [2, 2], "
        "pads = [1, 1, 1, 1], act_min = 0} : %s" % ty,
        "  %%z = qconv2d %%u, %%w2, %%bw2 {strides = [2, 1], "
        "pads = [1, 1, 1, 1]} : %s" % tz,
        "  %%v = qconv2d %%w, %%w3, %%bw3 {strides = [1, 2]} : %s" % tv,
        "  return %y, %z, %v", "}"]
print("\n".join(out))
