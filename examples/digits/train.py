#!/usr/bin/python3
"""Train Quill's bundled example model: a small residual CNN on the 8x8 digits.

Data: scikit-learn's copy of the UCI optical digits (1797 images, 8x8,
pixel values 0..16, shipped by Debian's python3-sklearn). Each image is
upsampled to 16x16 (bilinear, align_corners=False) so that convolutions and
pooling have room, scaled to [0, 1] and normalized with fixed constants
(MEAN, STD below). One fixed permutation (numpy RandomState(0)) splits it:

    test   360 images   -> test_x.npy [360,1,16,16] f32, test_y.npy [360] i64
    calib  100 images   -> calib/sample_NNN.npy, each [1,1,16,16] f32
    train 1337 images   (not written)

The network exercises what Quill's quantizer handles (conv + BatchNorm +
ReLU, max and average pooling, a residual add, a depthwise conv, global
average pooling, a linear layer):

    x [1,1,16,16]
    conv3x3(1->16) bn relu            16x16
    maxpool 2x2                        8x8
    +-- conv3x3(16->16) bn relu
    |   conv3x3(16->16) bn
    +-- add, relu                      8x8
    conv3x3(16->32) bn relu            8x8
    avgpool 2x2                        4x4
    dwconv3x3(32, groups=32) bn relu   4x4
    global avgpool, flatten           32
    linear(32->10)                    logits [1,10]

Training is deterministic (fixed seeds, deterministic algorithms, one
thread) and takes a few seconds on one core. The model is exported in eval
mode with torch.onnx.export, opset 13, static batch 1, input "input",
output "logits". TrainingMode.PRESERVE keeps the BatchNormalization nodes
(EVAL mode would fuse them into the convs, and Quill's fold-batchnorm pass
is what should do that).

Usage: /usr/bin/python3 examples/digits/train.py [--out DIR] [--epochs N]
"""
import argparse
import gzip
import os
import sys
import time
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

DIGITS_CSV = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"
SEED = 0
N_TEST = 360
N_CALIB = 100
SIZE = 16
MEAN = 0.3  # rounded mean of the upsampled training pixels in [0, 1]
STD = 0.32   # rounded standard deviation of the same


def load_digits(path=DIGITS_CSV):
    """Return (images [N,8,8] float32 in 0..16, labels [N] int64)."""
    with gzip.open(path, "rt") as f:
        data = np.loadtxt(f, delimiter=",", dtype=np.float64)
    x = data[:, :64].reshape(-1, 8, 8).astype(np.float32)
    y = data[:, 64].astype(np.int64)
    return x, y


def preprocess(x8):
    """[N,8,8] 0..16 -> [N,1,16,16] float32, normalized."""
    t = torch.from_numpy(x8 / 16.0).unsqueeze(1)
    t = F.interpolate(t, size=(SIZE, SIZE), mode="bilinear",
                      align_corners=False)
    return ((t - MEAN) / STD).numpy().astype(np.float32)


def split(n):
    """Deterministic split of range(n): (train, calib, test) index arrays."""
    perm = np.random.RandomState(SEED).permutation(n)
    test = np.sort(perm[:N_TEST])
    calib = perm[N_TEST:N_TEST + N_CALIB]
    train = perm[N_TEST + N_CALIB:]
    return train, calib, test


def conv_bn(cin, cout, groups=1):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1, groups=groups, bias=False),
        nn.BatchNorm2d(cout))


class DigitsNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = conv_bn(1, 16)
        self.pool1 = nn.MaxPool2d(2)
        self.res_a = conv_bn(16, 16)
        self.res_b = conv_bn(16, 16)
        self.conv3 = conv_bn(16, 32)
        # The conv before this BN keeps its bias, to test folding with one.
        self.conv3[0] = nn.Conv2d(16, 32, 3, padding=1, bias=True)
        # count_include_pad=False: torch 1.13 would otherwise export a no-op Pad.
        self.pool2 = nn.AvgPool2d(2, count_include_pad=False)
        self.dw = conv_bn(32, 32, groups=32)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = self.pool1(F.relu(self.stem(x)))
        r = F.relu(self.res_a(x))
        x = F.relu(self.res_b(r) + x)
        x = self.pool2(F.relu(self.conv3(x)))
        x = F.relu(self.dw(x))
        x = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
        return self.fc(x)


def accuracy(model, x, y):
    model.eval()
    with torch.no_grad():
        pred = model(torch.from_numpy(x)).argmax(1).numpy()
    return float((pred == y).mean())


def train(model, x, y, epochs, batch=64):
    opt = torch.optim.Adam(model.parameters(), lr=3e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs)
    gen = torch.Generator().manual_seed(SEED)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    for ep in range(epochs):
        model.train()
        perm = torch.randperm(len(xt), generator=gen)
        total = 0.0
        for i in range(0, len(xt), batch):
            idx = perm[i:i + batch]
            opt.zero_grad()
            loss = F.cross_entropy(model(xt[idx]), yt[idx])
            loss.backward()
            opt.step()
            total += float(loss) * len(idx)
        sched.step()
        if ep % 5 == 4 or ep == epochs - 1:
            print(f"epoch {ep + 1:3d}  loss {total / len(xt):.4f}",
                  file=sys.stderr)


def export(model, path):
    model.eval()
    dummy = torch.zeros(1, 1, SIZE, SIZE)
    with warnings.catch_warnings():
        # PRESERVE + constant folding warns for models in training mode;
        # this one is in eval mode.
        warnings.simplefilter("ignore", UserWarning)
        torch.onnx.export(model, dummy, path, opset_version=13,
                          input_names=["input"], output_names=["logits"],
                          training=torch.onnx.TrainingMode.PRESERVE,
                          do_constant_folding=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--epochs", type=int, default=30)
    args = ap.parse_args()

    torch.manual_seed(SEED)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)

    x8, y = load_digits()
    x = preprocess(x8)
    tr, ca, te = split(len(y))
    print(f"train {len(tr)}  calib {len(ca)}  test {len(te)}  "
          f"(train pixel mean {x8[tr].mean() / 16:.3f})", file=sys.stderr)

    model = DigitsNet()
    t0 = time.time()
    train(model, x[tr], y[tr], args.epochs)
    print(f"trained in {time.time() - t0:.1f} s", file=sys.stderr)

    acc = accuracy(model, x[te], y[te])
    print(f"torch float accuracy: {acc:.4f} "
          f"({round(acc * len(te))}/{len(te)})")

    os.makedirs(os.path.join(args.out, "calib"), exist_ok=True)
    export(model, os.path.join(args.out, "model.onnx"))
    np.save(os.path.join(args.out, "test_x.npy"), x[te])
    np.save(os.path.join(args.out, "test_y.npy"), y[te])
    for i, j in enumerate(ca):
        np.save(os.path.join(args.out, "calib", f"sample_{i:03d}.npy"),
                x[j:j + 1])


if __name__ == "__main__":
    main()
