"""Export a tiny PyTorch model whose activations and normalization torch.onnx
(opset 13) writes as decompositions: GELU (exact: Div/Erf/Add/Mul/Mul;
tanh: Mul/Add/Tanh/...), Hardswish (HardSigmoid + Mul), SiLU (Sigmoid +
Mul) and nn.LayerNorm (ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add),
plus calibration and test inputs (fuse-patterns-torch.test).

Usage: /usr/bin/python3 torch_patterns.py OUTDIR
Writes OUTDIR/m.onnx (input x: 1x4x16), OUTDIR/calib.npy (8 samples) and
OUTDIR/x.npy (one sample). Random weights, fixed seed.
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 16)
        self.ln = nn.LayerNorm(16)
        self.fc2 = nn.Linear(16, 16)
        self.fc3 = nn.Linear(16, 16)
        with torch.no_grad():
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        h = self.ln(self.fc1(x))
        a = nn.functional.gelu(h)
        b = nn.functional.gelu(self.fc2(a), approximate="tanh")
        c = nn.functional.hardswish(self.fc3(b))
        return nn.functional.silu(c) + a


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    m = Block().eval()
    x = torch.randn(1, 4, 16)
    torch.onnx.export(m, x, os.path.join(out, "m.onnx"), opset_version=13,
                      input_names=["x"], output_names=["y"])
    rng = np.random.default_rng(0)
    np.save(os.path.join(out, "calib.npy"),
            rng.standard_normal((8, 4, 16)).astype(np.float32))
    np.save(os.path.join(out, "x.npy"),
            rng.standard_normal((1, 4, 16)).astype(np.float32))


if __name__ == "__main__":
    main()
