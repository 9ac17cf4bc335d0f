"""gen_qconv_kblock.py OUT.qir X.npy C M H STRIDE - a 3x3 qconv2d (pads 1)
of C input and M output channels on an H x H u8 image, per-channel s8
weights in [-127, 127] (numpy, fixed seed), and its input; for
kblock-ymm.test (which convs K blocking takes, conv_dot.c)."""
import sys

import numpy as np

out, xpath = sys.argv[1], sys.argv[2]
C, M, H, S = (int(v) for v in sys.argv[3:7])
OH = (H + 2 - 3) // S + 1
rs = np.random.RandomState(7)
w = rs.randint(-127, 128, (M, C, 3, 3))
scales = ", ".join("%g:0" % (0.0002 + 0.000001 * m) for m in range(M))
wt = ("tensor<%dx%dx3x3x!quant.uniform<i8<-127:127>:f32:0, {%s}>>"
      % (M, C, scales))
yt = "tensor<1x%dx%dx%dx!quant.uniform<u8:f32, 0.1:128>>" % (M, OH, OH)
with open(out, "w") as f:
    f.write("func @kb(%%x: tensor<1x%dx%dx%dx!quant.uniform<u8:f32, 0.02:128>>)"
            " -> %s {\n" % (C, H, H, yt))
    f.write('  %%w = constant {value = dense<"0x%s"> : %s} : %s\n'
            % (w.astype(np.int8).tobytes().hex().upper(), wt, wt))
    f.write("  %%y = qconv2d %%x, %%w {strides = [%d, %d], pads = [1, 1, 1, 1]}"
            " : %s\n" % (S, S, yt))
    f.write("  return %y\n}\n")
np.save(xpath, rs.randint(0, 256, (1, C, H, H)).astype(np.uint8))
