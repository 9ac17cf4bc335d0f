"""gen_qconv_wide.py OUT.qir X.npy - a qconv2d of 1024 input channels, 16
outputs, 3x3 on a 3x3 image (pads 1), whose weights are small but 1% large
(a few vpmaddubsw pairs could saturate), and a u8 input with some 255s;
for ubsw-split.test (K blocking with correction steps on the avx2 path)."""
import sys

import numpy as np

rs = np.random.RandomState(11)
C, M = 1024, 16
w = rs.randint(-40, 41, (M, C, 3, 3))
big = rs.rand(M, C, 3, 3) < 0.01
w[big] = rs.choice([-1, 1], big.sum()) * rs.randint(90, 128, big.sum())
scales = ", ".join("%g:0" % (0.0005 + 0.00001 * m) for m in range(M))
wt = ("tensor<%dx%dx3x3x!quant.uniform<i8<-127:127>:f32:0, {%s}>>"
      % (M, C, scales))
hexw = w.astype(np.int8).tobytes().hex().upper()
with open(sys.argv[1], "w") as f:
    f.write("func @wide(%%x: tensor<1x%dx3x3x!quant.uniform<u8:f32, 0.02:128>>)"
            " -> tensor<1x%dx3x3x!quant.uniform<u8:f32, 0.1:128>> {\n" % (C, M))
    f.write('  %%w = constant {value = dense<"0x%s"> : %s} : %s\n'
            % (hexw, wt, wt))
    f.write("  %%y = qconv2d %%x, %%w {pads = [1, 1, 1, 1]} : "
            "tensor<1x%dx3x3x!quant.uniform<u8:f32, 0.1:128>>\n" % M)
    f.write("  return %y\n}\n")
x = rs.randint(0, 256, (1, C, 3, 3))
x[0, :, 1, 1] = 255
np.save(sys.argv[2], x.astype(np.uint8))
