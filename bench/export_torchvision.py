#!/usr/bin/env python3
"""export_torchvision.py - the float models of the LLVM target's benchmarks.

  /usr/bin/python3 bench/export_torchvision.py resnet18|mobilenet_v2 OUTDIR

Writes OUTDIR/NAME.onnx (opset 13, input [1,3,224,224]), OUTDIR/calib_NAME/
(8 random calibration samples) and OUTDIR/input_NAME.npy. No pretrained
weights can be downloaded here: the weights are random, and the BatchNorm
statistics are re-estimated on random batches first (else activations
shrink towards zero and int8 timings mean little). Deterministic (seed 0).
"""
import os
import sys

import numpy as np
import torch
import torchvision


def build(name):
    """torchvision's `name` with random weights (seed 0) and its BatchNorm
    statistics re-estimated on random batches, in eval mode: the net every
    benchmark of bench/ exports or runs (run.py, peers.py's PyTorch peer,
    compile_time.py)."""
    torch.manual_seed(0)
    m = getattr(torchvision.models, name)()
    if any(isinstance(x, torch.nn.modules.batchnorm._BatchNorm)
           for x in m.modules()):
        m.train()
        with torch.no_grad():
            for _ in range(10):
                m(torch.randn(8, 3, 224, 224))
    return m.eval()


def main():
    name, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    m = build(name)
    torch.onnx.export(m, torch.randn(1, 3, 224, 224),
                      os.path.join(out, name + ".onnx"), opset_version=13,
                      input_names=["input"], output_names=["output"])
    cal = os.path.join(out, "calib_" + name)
    os.makedirs(cal, exist_ok=True)
    for i in range(8):
        np.save(os.path.join(cal, "s%d.npy" % i),
                torch.randn(1, 3, 224, 224).numpy().astype(np.float32))
    np.save(os.path.join(out, "input_%s.npy" % name),
            torch.randn(1, 3, 224, 224).numpy().astype(np.float32))


if __name__ == "__main__":
    main()
