"""gen_dense.py - a DenseNet-like block as textual IR (for dense-block
tests): x0 = maxpool(x); each layer reads the concat of all earlier
outputs (a prefix of the block's last concat) through a depthwise 1x1
conv (DenseNet's BatchNorm-ReLU) and adds 16 channels; the block's outputs
come from a 3x3 conv, an average pool and a requantize, all of the block's
type, so the last concat is one buffer and every earlier concat a view of
its first channels (memplan.c). The second layer's concat is also read by
a dense 1x1 conv and an unpadded 3x3 conv, which read the view in place
(pixel stride 64 bytes, 48 channels)."""
import random

rng = random.Random(29)


def q(scale, zp, st="u8"):
    return "!quant.uniform<%s:f32, %s:%d>" % (st, scale, zp)


def t(c, hw, e):
    return "tensor<1x%dx%dx%dx%s>" % (c, hw, hw, e)


def weights(name, m, c, k, dw=False):
    n = m * (1 if dw else c) * k * k
    data = "".join("%02X" % rng.randrange(256) for _ in range(n))
    bias = ", ".join(str(rng.randrange(-2000, 2000)) for _ in range(m))
    wt = "tensor<%dx%dx%dx%dx%s>" % (m, 1 if dw else c, k, k,
                                     q(0.004, 0, "i8"))
    return ['  %%%s = constant {value = dense<"0x%s"> : %s} : %s'
            % (name, data, wt, wt),
            "  %%b%s = constant {value = dense<[%s]> : tensor<%dxi32>} : "
            "tensor<%dxi32>" % (name, bias, m, m)]


HW = 11
G, N, K, O = q(0.05, 120), q(0.02, 0), q(0.03, 7), q(0.07, 3)
out = ["func @dense(%%x: %s) -> (%s, %s, %s) {"
       % (t(32, HW, G), t(16, HW, O), t(24, HW, O), t(16, HW - 2, O))]
out += weights("n1", 32, 32, 1, True) + weights("k1", 16, 32, 3)
out += weights("n2", 48, 48, 1, True) + weights("k2", 16, 48, 3)
out += weights("wd2", 24, 48, 1) + weights("wu2", 16, 48, 3)
out += weights("n3", 64, 64, 1, True) + weights("k3", 16, 64, 3)
out += weights("wy", 16, 80, 1)
out += [
    "  %%x0 = maxpool %%x {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : %s"
    % t(32, HW, G),
    "  %%c1 = concat %%x0 {axis = 1} : %s" % t(32, HW, G),
    "  %%m1 = qconv2d %%c1, %%n1, %%bn1 {group = 32, act_min = 0} : %s"
    % t(32, HW, N),
    "  %%x1 = qconv2d %%m1, %%k1, %%bk1 {pads = [1, 1, 1, 1]} : %s"
    % t(16, HW, G),
    "  %%c2 = concat %%x0, %%x1 {axis = 1} : %s" % t(48, HW, G),
    "  %%m2 = qconv2d %%c2, %%n2, %%bn2 {group = 48, act_min = 0} : %s"
    % t(48, HW, N),
    "  %%p2 = qconv2d %%m2, %%k2, %%bk2 {pads = [1, 1, 1, 1]} : %s"
    % t(16, HW, G),
    "  %%x2 = avgpool %%p2 {kernel_shape = [3, 3], pads = [1, 1, 1, 1], "
    "rounding = \"half_even\"} : %s" % t(16, HW, G),
    "  %%d2 = qconv2d %%c2, %%wd2, %%bwd2 : %s" % t(24, HW, O),
    "  %%u2 = qconv2d %%c2, %%wu2, %%bwu2 : %s" % t(16, HW - 2, O),
    "  %%c3 = concat %%x0, %%x1, %%x2 {axis = 1} : %s" % t(64, HW, G),
    "  %%m3 = qconv2d %%c3, %%n3, %%bn3 {group = 64, act_min = 0} : %s"
    % t(64, HW, N),
    "  %%p3 = qconv2d %%m3, %%k3, %%bk3 {pads = [1, 1, 1, 1]} : %s"
    % t(16, HW, K),
    "  %%x3 = requantize %%p3 {rounding = \"half_even\"} : %s" % t(16, HW, G),
    "  %%c = concat %%x0, %%x1, %%x2, %%x3 {axis = 1} : %s" % t(80, HW, G),
    "  %%y = qconv2d %%c, %%wy, %%bwy : %s" % t(16, HW, O),
    "  return %y, %d2, %u2",
    "}"]
print("\n".join(out))
