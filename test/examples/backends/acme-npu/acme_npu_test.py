#!/usr/bin/python3
"""ctest examples.acme-npu: the example vendor backend end to end.

    acme_npu_test.py --quill build/quill --src . --plugin libacme_npu.so \
                     --work DIR

The plugin (examples/backends/acme-npu/) was built out of tree against the
installed package by ctest's install.backend. Steps, each checked:

 1. quantize examples/digits with acme-npu.json and the plugin, exporting
    the parameter file in the same run: the config's plugin pipeline
    (acme-fuse) fused the residual block into one
    custom {name = "acme.conv_add_relu"} and no qadd is left;
 2. quantize with the same config minus its "plugin" key: the unfused
    integer model (qconv2d + qadd);
 3. run both with `quill run` on the 360 test images: the logits are
    equal bit for bit (the custom op's evaluator computes qconv2d + qadd
    exactly), and both models are as accurate;
 4. the parameter file passes check_qparams.py against the fused model,
    and `quill export acme-qparams` writes the same file;
 5. without the plugin: quantizing with the config is refused (it names
    the plugin), and running the fused model reports the custom op.

Prints a summary line; exit 1 on the first failure.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np


def run(argv, expect_ok=True):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if expect_ok and p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(argv)} exited {p.returncode}\n{p.stderr}")
    if not expect_ok and p.returncode == 0:
        sys.exit(f"FAIL: {' '.join(argv)} succeeded but should fail")
    return p


def check(cond, msg):
    if not cond:
        sys.exit("FAIL: " + msg)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quill", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    q, plug = a.quill, "--load-pass-plugin=" + a.plugin
    acme = os.path.join(a.src, "examples/backends/acme-npu")
    digits = os.path.join(a.src, "examples/digits")
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    w = lambda f: os.path.join(a.work, f)
    config = os.path.join(acme, "acme-npu.json")
    model = os.path.join(digits, "model.onnx")
    calib = os.path.join(digits, "calib")

    # 1. fused
    run([q, "quantize", model, "--backend", config, "--calib", calib, plug,
         "-o", w("fused.qir"), "--export=acme-qparams:" + w("qparams.json")])
    fused = open(w("fused.qir")).read()
    n_custom = len(re.findall(r'= custom .*\{name = "acme\.conv_add_relu"',
                              fused))
    check(n_custom == 1, f"{n_custom} acme.conv_add_relu ops, expected 1")
    check(" qadd " not in fused, "a qadd is left in the fused model")

    # 2. unfused: the same config without its plugin
    cfg = json.load(open(config))
    del cfg["plugin"]
    json.dump(cfg, open(w("acme-npu-noplugin.json"), "w"))
    run([q, "quantize", model, "--backend", w("acme-npu-noplugin.json"),
         "--calib", calib, "-o", w("unfused.qir")])
    unfused = open(w("unfused.qir")).read()
    check(" qadd " in unfused and "custom" not in unfused,
          "the model without the plugin is not the unfused integer model")

    # 3. equal outputs on the test set
    x = np.load(os.path.join(digits, "test_x.npy"))
    y = np.load(os.path.join(digits, "test_y.npy"))
    correct = [0, 0]
    for i in range(len(x)):
        np.save(w("x.npy"), x[i:i + 1])
        run([q, "run", w("fused.qir"), "--input", w("x.npy"), "--output",
             w("f.npy"), plug])
        run([q, "run", w("unfused.qir"), "--input", w("x.npy"), "--output",
             w("u.npy")])
        f, u = np.load(w("f.npy")), np.load(w("u.npy"))
        check(f.dtype == u.dtype and np.array_equal(f, u),
              f"image {i}: fused {f} != unfused {u}")
        correct[0] += int(f.argmax() == y[i])
        correct[1] += int(u.argmax() == y[i])
    check(correct[0] == correct[1] and correct[0] >= 0.95 * len(x),
          f"accuracy fused {correct[0]}, unfused {correct[1]} of {len(x)}")

    # 4. the parameter file
    p = run(["/usr/bin/python3", os.path.join(acme, "check_qparams.py"),
             w("fused.qir"), w("qparams.json")])
    check("(1 custom ops)" in p.stdout, "check_qparams: " + p.stdout)
    qparams = p.stdout.strip()
    run([q, "export", "acme-qparams", w("fused.qir"), "-o",
         w("qparams2.json"), plug])
    check(open(w("qparams.json")).read() == open(w("qparams2.json")).read(),
          "quill export and quill quantize --export differ")

    # 5. without the plugin
    p = run([q, "quantize", model, "--backend", config, "--calib", calib,
             "-o", w("x.qir")], expect_ok=False)
    check("needs the plugin 'acme-npu'" in p.stderr, p.stderr)
    p = run([q, "run", w("fused.qir"), "--input", w("x.npy")],
            expect_ok=False)
    check("op 'custom' is not supported by target 'reference' (no custom op "
          "of this name is registered" in p.stderr, p.stderr)

    print(f"acme-npu: 1 fused op; {len(x)} images bit-exact with the unfused "
          f"model; accuracy {correct[0]}/{len(x)}; qparams {qparams}")


if __name__ == "__main__":
    main()
