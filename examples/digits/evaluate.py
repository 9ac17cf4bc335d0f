#!/usr/bin/python3
"""Accuracy of a model on the digits test set, computed by running Quill.

    /usr/bin/python3 examples/digits/evaluate.py build/quill MODEL [options]

MODEL is anything `quill run` accepts (.onnx or .qir). For each test sample
(or batch, with --batch N for models whose batch dimension is N) the script
writes the input to a temporary .npy file and runs

    QUILL run MODEL --input in.npy --output out.npy

then reads the logits from out.npy ([batch, 10]) and takes the argmax. It
prints one line:

    accuracy: 0.9972 (359/360)

QUILL is split like a shell word list, so a stand-in runner with the same
command-line interface can be given, e.g. the onnxruntime one next to this
script (used to test this script without Quill):

    PY=$(scripts/pyenv.sh)
    /usr/bin/python3 examples/digits/evaluate.py \
        "$PY examples/digits/ort_run.py" examples/digits/model.onnx

Options: --data DIR (test_x.npy/test_y.npy, default: this directory),
--limit N (first N samples), --batch N, --save-logits FILE (all logits as
one [N,10] .npy), --ref-logits FILE (also report agreement with, and the
largest absolute difference from, logits saved earlier).
Exit status: 0 on success, 1 if a run fails (its stderr is shown).
"""
import argparse
import os
import shlex
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def run_one(cmd, model, x, tmp):
    """Run the tool on one batch x; return its output array."""
    inp = os.path.join(tmp, "in.npy")
    out = os.path.join(tmp, "out.npy")
    np.save(inp, np.ascontiguousarray(x, dtype=np.float32))
    if os.path.exists(out):
        os.remove(out)
    argv = cmd + ["run", model, "--input", inp, "--output", out]
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if p.returncode != 0:
        sys.stderr.write(f"evaluate: '{shlex.join(argv)}' exited with "
                         f"{p.returncode}\n{p.stderr}")
        return None
    if not os.path.exists(out):
        sys.stderr.write(f"evaluate: '{shlex.join(argv)}' wrote no {out}\n")
        return None
    return np.load(out)


def main():
    ap = argparse.ArgumentParser(
        description="Digits test-set accuracy through `quill run`.")
    ap.add_argument("quill", help="the quill binary (or a stand-in command)")
    ap.add_argument("model", help="model file (.onnx or .qir)")
    ap.add_argument("--data", default=HERE)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--save-logits")
    ap.add_argument("--ref-logits")
    args = ap.parse_args()

    x = np.load(os.path.join(args.data, "test_x.npy"))
    y = np.load(os.path.join(args.data, "test_y.npy"))
    if args.limit > 0:
        x, y = x[:args.limit], y[:args.limit]
    if args.batch < 1 or len(x) % args.batch:
        sys.exit(f"evaluate: --batch {args.batch} must divide the "
                 f"{len(x)} samples")
    cmd = shlex.split(args.quill)

    logits = []
    with tempfile.TemporaryDirectory(prefix="quill-eval-") as tmp:
        for i in range(0, len(x), args.batch):
            out = run_one(cmd, args.model, x[i:i + args.batch], tmp)
            if out is None:
                return 1
            out = np.asarray(out, dtype=np.float64)
            if out.ndim < 1 or out.size != args.batch * 10:
                sys.stderr.write(f"evaluate: sample {i}: expected "
                                 f"{args.batch}x10 logits, got shape "
                                 f"{out.shape}\n")
                return 1
            logits.append(out.reshape(args.batch, 10))
    logits = np.concatenate(logits)
    pred = logits.argmax(1)
    correct = int((pred == y).sum())
    print(f"accuracy: {correct / len(y):.4f} ({correct}/{len(y)})")
    if args.save_logits:
        np.save(args.save_logits, logits.astype(np.float32))
    if args.ref_logits:
        ref = np.load(args.ref_logits)[:len(y)]
        agree = float((pred == ref.argmax(1)).mean())
        print(f"agreement with {args.ref_logits}: {agree:.4f}; "
              f"max |dlogit| {np.abs(logits - ref).max():.6g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
