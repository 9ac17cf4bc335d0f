"""gen_resblock.py - two ResNet basic blocks as textual IR (for
residual-halo.test): each block's input is read by the block's first 3x3
conv (pads 1) and by the qadd at its end (fused into the second conv's
epilogue), so it is a haloed buffer (memplan.c); then a conv whose qadd
is returned (row-major: the qadd keeps its own stage and reads the haloed
block output through its strides).

`gen_resblock.py down`: a strided block instead, its input read by a
3x3/2 conv (pads 1) and an unpadded 1x1/2 downsample conv (the qadd fused
into the latter): haloed, the 1x1 conv reads the interior in place."""
import random
import sys

from qconv_ir import q, t, weights

rng = random.Random(23)


X, A, B, S = q(0.02, 128), q(0.03, 0), q(0.05, 131), q(0.04, 0)
if sys.argv[1:] == ["down"]:
    out = ["func @down(%%x: %s) -> %s {" % (t(64, 20, X), t(64, 10, X))]
    out += weights(rng, "w0", 64, 64, 3) + weights(rng, "w1", 64, 64, 3)
    out += weights(rng, "w2", 64, 64, 3) + weights(rng, "w3", 64, 64, 1)
    out += weights(rng, "w4", 64, 64, 1)
    P = "pads = [1, 1, 1, 1]"
    out += [
        "  %%b = qconv2d %%x, %%w0, %%bw0 {%s, act_min = 0} : %s"
        % (P, t(64, 20, S)),
        "  %%c1 = qconv2d %%b, %%w1, %%bw1 {%s, strides = [2, 2], act_min = 0}"
        " : %s" % (P, t(64, 10, A)),
        "  %%c2 = qconv2d %%c1, %%w2, %%bw2 {%s} : %s" % (P, t(64, 10, B)),
        "  %%d = qconv2d %%b, %%w3, %%bw3 {strides = [2, 2]} : %s"
        % t(64, 10, X),
        "  %%s = qadd %%c2, %%d {act_min = 0, act_max = 255} : %s"
        % t(64, 10, S),
        "  %%z = qconv2d %%s, %%w4, %%bw4 : %s" % t(64, 10, X),
        "  return %z",
        "}"]
    print("\n".join(out))
    sys.exit(0)
out = ["func @res(%%x: %s) -> %s {" % (t(64, 10, X), t(64, 10, S))]
for n in range(6):
    out += weights(rng, "w%d" % n, 64, 64, 3)
P = "pads = [1, 1, 1, 1]"
out += [
    "  %%b0 = qconv2d %%x, %%w0, %%bw0 {%s, act_min = 0} : %s" % (P, t(64, 10, S)),
    "  %%c1 = qconv2d %%b0, %%w1, %%bw1 {%s, act_min = 0} : %s" % (P, t(64, 10, A)),
    "  %%c2 = qconv2d %%c1, %%w2, %%bw2 {%s} : %s" % (P, t(64, 10, B)),
    "  %%s1 = qadd %%c2, %%b0 {act_min = 0, act_max = 255} : %s" % t(64, 10, S),
    "  %%c3 = qconv2d %%s1, %%w3, %%bw3 {%s, act_min = 0} : %s" % (P, t(64, 10, A)),
    "  %%c4 = qconv2d %%c3, %%w4, %%bw4 {%s} : %s" % (P, t(64, 10, B)),
    "  %%s2 = qadd %%c4, %%s1 {act_min = 0, act_max = 255} : %s" % t(64, 10, S),
    "  %%c5 = qconv2d %%s2, %%w5, %%bw5 {%s} : %s" % (P, t(64, 10, B)),
    "  %%s3 = qadd %%s2, %%c5 {act_min = 0, act_max = 255} : %s" % t(64, 10, S),
    "  return %s3",
    "}"]
print("\n".join(out))
