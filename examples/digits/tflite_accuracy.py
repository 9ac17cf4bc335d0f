"""Accuracy of a digits .tflite (written by `quill compile -o m.tflite`) in
the TFLite interpreter, on the test set.

Usage: tflite_accuracy.py MODEL.tflite TEST_X.npy TEST_Y.npy
(run with the venv python of scripts/pyenv.sh, which has tflite-runtime).

Quill writes 4-D activations NHWC, so the NCHW test images are transposed;
int8 inputs and outputs are quantized / dequantized with the tensors' own
scale and zero point.
"""
import sys

import numpy as np

try:
    from tflite_runtime.interpreter import Interpreter
except ImportError:  # LiteRT
    from ai_edge_litert.interpreter import Interpreter


def main():
    model, xs, ys = sys.argv[1], np.load(sys.argv[2]), np.load(sys.argv[3])
    it = Interpreter(model_path=model)
    it.allocate_tensors()
    inp, out = it.get_input_details()[0], it.get_output_details()[0]
    correct = 0
    for x, y in zip(xs, ys):
        x = x[None]
        if x.ndim == 4 and tuple(inp["shape"]) == (1,) + x.shape[2:] + (x.shape[1],):
            x = x.transpose(0, 2, 3, 1)
        scale, zp = inp["quantization"]
        if inp["dtype"] != np.float32:
            info = np.iinfo(inp["dtype"])
            x = np.clip(np.round(x / scale) + zp, info.min, info.max)
        it.set_tensor(inp["index"], x.astype(inp["dtype"]))
        it.invoke()
        logits = it.get_tensor(out["index"]).astype(np.float32)
        scale, zp = out["quantization"]
        if out["dtype"] != np.float32:
            logits = (logits - zp) * scale
        correct += int(np.argmax(logits) == y)
    print("TFLite interpreter accuracy: %.4f (%d/%d)"
          % (correct / len(ys), correct, len(ys)))


if __name__ == "__main__":
    main()
