#!/usr/bin/env python3
"""export_torch.py - the torchvision part of the model zoo, as float ONNX.

  /usr/bin/python3 test/models/export_torch.py OUTDIR [--size S] [--keep-bn] NAME...

For each NAME (a torchvision 0.14 architecture, or `transformer`: a
torch.nn.TransformerEncoder of 2 layers, d 256, 4 heads, sequence 64, or
`bert_base`: a BERT-base-like one, 12 layers, d 768, 12 heads, FFN 3072,
GELU, sequence 128; not in the zoo's table, for bench/peers.py; or
`crnn`: a CRNN-like text recognizer, three conv-BN-ReLU-pool stages on a
1x3x32x100 image, the height averaged away, one nn.LSTM (64 -> 48) over
the 25 columns and a linear head of 37 classes per column)
writes OUTDIR/NAME/model.onnx (opset 13, batch 1), OUTDIR/NAME/calib/
(8 calibration samples, s0.npy..s7.npy) and OUTDIR/NAME/eval/ (4 held-out
samples). Runs with Debian's python3-torch (1.13).

No pretrained weights can be downloaded here, so the weights are random
(fixed seed) and every BatchNorm's statistics are re-estimated: running
statistics reset, cumulative averaging (momentum None), 6 batches of 8
random images in train mode. Without that, deep random networks shrink
their activations towards zero (googlenet to about 1e-13) and int8
numbers mean nothing. Image inputs are N(0,1), the statistics of
normalized photos; --size sets H = W (vit_b_16 needs 224).

The exporter folds each BatchNorm into its conv (eval mode); --keep-bn
exports them as BatchNormalization nodes (TrainingMode.PRESERVE on the
eval-mode model: the same function, the same weights and samples), for
what needs the statistics, as `--bias-correction=analytic`.
"""
import argparse
import os
import sys

import numpy as np
import torch
import torchvision

ENCODERS = {
    "transformer": dict(d_model=256, nhead=4, dim_feedforward=1024, layers=2,
                        seq=64, activation="relu"),
    "bert_base": dict(d_model=768, nhead=12, dim_feedforward=3072, layers=12,
                      seq=128, activation="gelu"),
}


class CRNN(torch.nn.Module):
    """conv backbone + nn.LSTM head (the shape of PP-OCR's and CRNN's
    recognizers, small): [1, 3, 32, 100] -> [25, 1, 37]."""

    def __init__(self):
        super().__init__()
        layers, cin = [], 3
        for cout, pool in ((16, (2, 2)), (32, (2, 2)), (64, (2, 1))):
            layers += [torch.nn.Conv2d(cin, cout, 3, padding=1),
                       torch.nn.BatchNorm2d(cout), torch.nn.ReLU(),
                       torch.nn.MaxPool2d(pool, pool)]
            cin = cout
        self.backbone = torch.nn.Sequential(*layers)
        self.lstm = torch.nn.LSTM(64, 48)
        self.head = torch.nn.Linear(48, 37)

    def forward(self, x):
        f = self.backbone(x).mean(dim=2)   # [1, 64, 25]
        y, _ = self.lstm(f.permute(2, 0, 1))  # [25, 1, 48]
        return self.head(y)


def build(name):
    if name == "crnn":
        return CRNN()
    if name in ENCODERS:
        t = ENCODERS[name]
        layer = torch.nn.TransformerEncoderLayer(
            t["d_model"], t["nhead"], t["dim_feedforward"], dropout=0.0,
            activation=t["activation"], batch_first=True)
        enc = torch.nn.TransformerEncoder(layer, t["layers"])
        if name != "transformer":  # (the zoo's encoder stays as it was)
            # the layers are deep copies of one layer: draw each one's
            # weights anew, or the exporter folds them into one set (a
            # 12-layer model with the weights of one, all in cache)
            for m in enc.modules():
                if isinstance(m, torch.nn.MultiheadAttention):
                    m._reset_parameters()
                elif isinstance(m, torch.nn.Linear) and m.bias is not None:
                    torch.nn.init.normal_(m.bias, std=0.02)
                    torch.nn.init.xavier_uniform_(m.weight)
        return enc
    kwargs = {}
    if name in ("googlenet", "inception_v3"):
        kwargs = dict(aux_logits=False, init_weights=True)
    m = getattr(torchvision.models, name)(**kwargs)
    if name.startswith("vit_"):
        # torchvision zero-initializes the ViT head: with random weights the
        # output would be the zero bias whatever the input
        torch.nn.init.normal_(m.heads.head.weight, std=0.01)
    return m


def input_shape(name, size):
    if name == "crnn":
        return [1, 3, 32, 100]
    if name in ENCODERS:
        return [1, ENCODERS[name]["seq"], ENCODERS[name]["d_model"]]
    return [1, 3, size, size]


def reestimate_bn(model, shape):
    bns = [m for m in model.modules()
           if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
    model.train()
    with torch.no_grad():
        for _ in range(6):
            model(torch.randn([8] + shape[1:]))


def export(name, out, size, keep_bn=False):
    torch.manual_seed(0)
    np.random.seed(0)
    model = build(name)
    shape = input_shape(name, size)
    reestimate_bn(model, shape)
    model.eval()
    d = os.path.join(out, name)
    os.makedirs(os.path.join(d, "calib"), exist_ok=True)
    os.makedirs(os.path.join(d, "eval"), exist_ok=True)
    path = os.path.join(d, "model.onnx")
    # grad on: keeps TransformerEncoder off its fused inference fast path,
    # which has no ONNX export
    torch.onnx.export(model, torch.randn(shape), path, opset_version=13,
                      input_names=["input"], output_names=["output"],
                      do_constant_folding=True,
                      training=(torch.onnx.TrainingMode.PRESERVE if keep_bn
                                else torch.onnx.TrainingMode.EVAL))
    g = torch.Generator().manual_seed(1)
    for i in range(8):
        np.save(os.path.join(d, "calib", "s%d.npy" % i),
                torch.randn(shape, generator=g).numpy().astype(np.float32))
    for i in range(4):
        np.save(os.path.join(d, "eval", "e%d.npy" % i),
                torch.randn(shape, generator=g).numpy().astype(np.float32))
    print("exported %s %s" % (name, "x".join(map(str, shape))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("names", nargs="+")
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--keep-bn", action="store_true",
                    help="BatchNormalization nodes kept (not folded)")
    a = ap.parse_args()
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    for n in a.names:
        size = 224 if n == "vit_b_16" else a.size
        try:
            export(n, a.out, size, a.keep_bn)
        except Exception as e:  # noqa: BLE001 - reported, the others go on
            print("export of %s failed: %s" % (n, e), file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
