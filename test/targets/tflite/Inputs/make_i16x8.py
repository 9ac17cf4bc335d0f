"""int16x8 test models for the TFLite target: float single-op models of
make_models.py quantized by `quill quantize --backend tflite-int16x8`.

  make_i16x8.py QUILL FLOATDIR OUTDIR

For each float model NAME_f32 of FLOATDIR listed below, writes
OUTDIR/NAME_i16x8.qir (the integer IR: i16 activations with zero point 0,
i8 per-channel weights, int64 accumulators) from 4 calibration samples per
input (normal * 2, seeded, as tflite_check.py's inputs), and
OUTDIR/manifest.txt in make_models.py's format. Bounds are 0: the integer
IR follows TFLite's 16x8 reference kernels (conv, depthwise, fully
connected and batch matmul: int64 sums, the 16-bit multiplier of the int64
MultiplyByQuantizedMultiplier; ADD with left shift 15), so every output
step must be equal. The optimized kernels get one step per requantizing
op (ruy rounds once; see make_models.py).
"""
import os
import re
import subprocess
import sys

import numpy as np

# name, optimized-kernel bound, what
MODELS = [
    ("conv2d", 1, "CONV_2D 16x8 (int64 bias)"),
    ("depthwise", 1, "DEPTHWISE_CONV_2D 16x8"),
    ("gemm", 1, "FULLY_CONNECTED 16x8"),
    ("flatten_fc", 1, "CONV_2D + RESHAPE + FULLY_CONNECTED 16x8"),
    ("batch_matmul", 1, "BATCH_MATMUL int16 x int16 (activation x activation)"),
    ("batch_matmul_4d", 1, "BATCH_MATMUL int16, 4-D (heads)"),
    ("add", 1, "ADD int16 (general path, left shift 15), broadcast constant"),
    ("mul", 1, "MUL int16, broadcast constant"),
    ("avgpool", 1, "AVERAGE_POOL_2D int16"),
    ("maxpool", 0, "MAX_POOL_2D int16"),
    ("relu", 0, "RELU float between DEQUANTIZE int16 and QUANTIZE int16"),
    ("relu6", 0, "RELU6 float between DEQUANTIZE int16 and QUANTIZE int16"),
    ("reshape", 0, "RESHAPE int16"),
    ("transpose", 0, "TRANSPOSE int16"),
    ("pad", 0, "PAD int16"),
    ("concat", 0, "QUANTIZE int16 -> int16 (requantize) + CONCATENATION int16"),
    # ir/tfl_int16.c: TFLite's integer kernels, the same in its optimized
    # builds for scales that are not powers of two (LOGISTIC/TANH take
    # their reference path then; SOFTMAX has one int16 path)
    ("logistic", 0, "LOGISTIC int16 (a lut of its table), output 1/32768"),
    ("tanh", 0, "TANH int16 (a lut of its table), output 1/32768"),
    ("softmax", 0, "SOFTMAX int16 over channels (NHWC last axis), output 1/32768"),
]


def inputs(qir):
    head = open(qir).readline()
    out = []
    for name, dims in re.findall(r"%(\w+): tensor<([0-9x]+)xf32>", head):
        out.append((name, [int(d) for d in dims.split("x")]))
    return out


def main():
    quill, src, out = sys.argv[1:4]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(11)
    lines = []
    for base, opt, what in MODELS:
        f = os.path.join(src, base + "_f32.qir")
        calib = os.path.join(out, base + "_calib")
        for s in range(4):
            d = os.path.join(calib, "s%d" % s)
            os.makedirs(d, exist_ok=True)
            for name, shape in inputs(f):
                np.save(os.path.join(d, name + ".npy"),
                        (rng.standard_normal(shape) * 2).astype(np.float32))
        name = base + "_i16x8"
        q = os.path.join(out, name + ".qir")
        p = subprocess.run([quill, "quantize", f, "--backend", "tflite-int16x8",
                            "--calib", calib, "-o", q],
                           capture_output=True, text=True)
        if p.returncode:
            print("FAIL quantize %s: %s" % (base, p.stderr.strip()))
            return 1
        lines.append("%s 0 %d no %s" % (name, opt, what))
    # hand-checked integer IR: the model of int16x8.test (conv + relu,
    # qadd, MEAN with rescaling, fully connected), a qadd whose scales
    # are not f32 values (multipliers from their f32 roundings), a
    # rescaling int16 global average (TFLite's int16 MEAN), and a MUL of
    # two int16 activations (EfficientNet-B0's SiLU scales)
    here = os.path.dirname(os.path.abspath(__file__))
    for name, opt, what in (
            ("i16x8_ops", 2, "CONV_2D + ADD + MEAN + FULLY_CONNECTED 16x8"),
            ("qadd_f64_scales", 2, "ADD int16, scales that are not f32 values"),
            ("i16x8_mean", 0, "MEAN int16 rescaling over 7x7 (1/49 folded "
             "into the multiplier)"),
            # TFLite's optimized int16 MUL is up to 2 steps from its
            # reference kernel on these scales
            ("qmul_f32_multiplier", 2, "MUL int16 of two activations, the "
             "multiplier derived in f32 as TFLite's")):
        with open(os.path.join(here, name + ".qir")) as f, \
                open(os.path.join(out, name + ".qir"), "w") as g:
            g.write(f.read())
        lines.append("%s 0 %d no %s" % (name, opt, what))
    with open(os.path.join(out, "manifest.txt"), "w") as m:
        m.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
