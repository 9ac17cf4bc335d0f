"""gen_fconv_avx2.py - a float 3x3 conv (32 -> 64 channels, 10x10, relu)
with normal random weights, 4 calibration samples and an input, for
backend-x86-avx2.test: per-channel int8 weights of [-127, 127] (x86-vnni)
have many pairs that could saturate vpmaddubsw, those of [-64, 64]
(x86-avx2) none.

  gen_fconv_avx2.py OUT.qir CALIB.npy X.npy"""
import sys

import numpy as np

rng = np.random.default_rng(7)
w = rng.standard_normal((64, 32, 3, 3)).astype(np.float32) * 0.1
b = rng.standard_normal(64).astype(np.float32) * 0.1


def hexf(a):
    return a.astype("<f4").tobytes().hex().upper()


wt, bt = "tensor<64x32x3x3xf32>", "tensor<64xf32>"
with open(sys.argv[1], "w") as f:
    f.write("func @main(%%x: tensor<1x32x10x10xf32>) -> "
            "tensor<1x64x10x10xf32> {\n"
            '  %%w = constant {value = dense<"0x%s"> : %s} : %s\n'
            '  %%b = constant {value = dense<"0x%s"> : %s} : %s\n'
            "  %%c = conv2d %%x, %%w, %%b {strides = [1, 1], "
            "pads = [1, 1, 1, 1], dilations = [1, 1], group = 1} : "
            "tensor<1x64x10x10xf32> loc(\"conv\")\n"
            "  %%y = relu %%c : tensor<1x64x10x10xf32>\n"
            "  return %%y\n}\n" % (hexf(w), wt, wt, hexf(b), bt, bt))
np.save(sys.argv[2], np.abs(rng.standard_normal((4, 32, 10, 10)))
        .astype(np.float32))
np.save(sys.argv[3], np.abs(rng.standard_normal((1, 32, 10, 10)))
        .astype(np.float32))
