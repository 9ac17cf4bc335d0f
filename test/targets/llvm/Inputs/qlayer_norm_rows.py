"""Write OUT.qir: @rows, a layer_norm {numerics = "integer"} between a
dequantize and a quantize over rows of 768 (ViT-B/16's and BERT-base's
width) read through a transpose, with seeded random gamma and beta per
element (hex dense constants); qlayer-norm.test runs it."""
import struct
import sys

import numpy as np

r = np.random.RandomState(7)
w = r.uniform(-2, 2, 768).astype(np.float32)
b = r.uniform(-1, 1, 768).astype(np.float32)
hx = lambda a: "0x" + a.tobytes().hex().upper()
xt = "!quant.uniform<u8:f32, 0.08:121>"
yt = "!quant.uniform<i8:f32, 0.04:-3>"
open(sys.argv[1], "w").write(f"""func @rows(%x: tensor<2x768x5x{xt}>) -> tensor<2x5x768x{yt}> {{
  %w = constant {{value = dense<"{hx(w)}"> : tensor<768xf32>}} : tensor<768xf32>
  %b = constant {{value = dense<"{hx(b)}"> : tensor<768xf32>}} : tensor<768xf32>
  %t = transpose %x {{perm = [0, 2, 1]}} : tensor<2x5x768x{xt}>
  %xf = dequantize %t : tensor<2x5x768xf32>
  %n = layer_norm %xf, %w, %b {{axis = -1, epsilon = 1e-06, numerics = "integer"}} : tensor<2x5x768xf32>
  %nq = quantize %n {{rounding = "half_even"}} : tensor<2x5x768x{yt}>
  return %nq
}}
""")
