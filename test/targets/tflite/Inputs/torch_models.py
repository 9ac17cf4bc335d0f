"""Float ONNX models from torchvision for the end-to-end TFLite check.

  torch_models.py OUTDIR [--size N] [--calib K]

Writes OUTDIR/resnet18.onnx and OUTDIR/mobilenet_v2.onnx (torchvision's
architectures, random weights, BatchNorm statistics re-estimated on random
batches so activations keep their scale; 1x3xNxN input, N = 96 by
default), OUTDIR/calib/sample_*.npy (K calibration samples, default 8) and
OUTDIR/inputs/input_*.npy (2 test samples). Deterministic (fixed seeds).
Needs Debian's python3-torch and python3-torchvision.
"""
import argparse
import os

import numpy as np
import torch
import torchvision


def reestimate_bn(model, size, rng):
    """Forward random batches in train mode with momentum None (a
    cumulative average), so BatchNorm running stats describe the data."""
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None
    model.train()
    with torch.no_grad():
        for _ in range(4):
            x = torch.from_numpy(rng.standard_normal((8, 3, size, size))
                                 .astype(np.float32))
            model(x)
    model.eval()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--size", type=int, default=96)
    ap.add_argument("--calib", type=int, default=8)
    args = ap.parse_args()
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    os.makedirs(os.path.join(args.outdir, "calib"), exist_ok=True)
    os.makedirs(os.path.join(args.outdir, "inputs"), exist_ok=True)
    n = args.size
    for name, ctor in (("resnet18", torchvision.models.resnet18),
                       ("mobilenet_v2", torchvision.models.mobilenet_v2)):
        model = ctor(num_classes=1000)
        reestimate_bn(model, n, rng)
        x = torch.zeros(1, 3, n, n)
        torch.onnx.export(model, x, os.path.join(args.outdir, name + ".onnx"),
                          input_names=["input"], output_names=["logits"],
                          opset_version=13)
    for i in range(args.calib):
        np.save(os.path.join(args.outdir, "calib", "sample_%03d.npy" % i),
                rng.standard_normal((1, 3, n, n)).astype(np.float32))
    for i in range(2):
        np.save(os.path.join(args.outdir, "inputs", "input_%d.npy" % i),
                rng.standard_normal((1, 3, n, n)).astype(np.float32))


main()
