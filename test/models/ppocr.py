#!/usr/bin/env python3
"""ppocr.py - the pretrained part of the model zoo: PP-OCR's ONNX models.

  /usr/bin/python3 test/models/ppocr.py OUTDIR [--pip PYTHON]

Downloads the `rapidocr-onnxruntime` 1.4.4 wheel from PyPI (pip download
--no-deps, cached in OUTDIR/.wheel), takes its three ONNX models and
writes, like export_torch.py, OUTDIR/NAME/model.onnx with 8 calibration
and 4 evaluation samples for
  ppocr_det  PP-OCRv4 detection (DBNet), 1x3x320x320 text pages
  ppocr_rec  PP-OCRv4 recognition (CTC, 6625 classes), 1x3x48x320 lines
  ppocr_cls  PP-OCR mobile v2 text direction classifier, 1x3x48x192
The inputs are text rendered with PIL in Debian's DejaVu fonts (dark text
on a light, noisy background), normalized as PaddleOCR does:
(pixel / 255 - 0.5) / 0.5, channels first. Deterministic (seed 0).
"""
import argparse
import glob
import os
import subprocess
import sys
import zipfile

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

WHEEL = "rapidocr-onnxruntime==1.4.4"
MODELS = {
    "ppocr_det": ("ch_PP-OCRv4_det_infer.onnx", (320, 320)),
    "ppocr_rec": ("ch_PP-OCRv4_rec_infer.onnx", (48, 320)),
    "ppocr_cls": ("ch_ppocr_mobile_v2.0_cls_infer.onnx", (48, 192)),
}
FONTS = sorted(glob.glob("/usr/share/fonts/truetype/dejavu/DejaVuSans*.ttf") +
               glob.glob("/usr/share/fonts/truetype/liberation*/Liberation*.ttf"))
WORDS = ("invoice total 2024 quantize model tensor layer batch 3.14159 "
         "Quill compiler kernel OCR recognition detection 42 Xeon EPYC "
         "ONNX TFLite int8 calibration sample text line 7,500.00 USD "
         "Monday street avenue 10115 Berlin www.example.org").split()


def fetch(out, pip_python):
    cache = os.path.join(out, ".wheel")
    os.makedirs(cache, exist_ok=True)
    wheels = glob.glob(os.path.join(cache, "rapidocr_onnxruntime-*.whl"))
    if not wheels:
        subprocess.run([pip_python, "-m", "pip", "download", "-q", "--no-deps",
                        WHEEL, "-d", cache], check=True)
        wheels = glob.glob(os.path.join(cache, "rapidocr_onnxruntime-*.whl"))
    return zipfile.ZipFile(wheels[0])


def text_image(rng, h, w, lines):
    bg = int(rng.integers(200, 256))
    img = Image.new("L", (w, h), bg)
    d = ImageDraw.Draw(img)
    step = h // lines
    for i in range(lines):
        size = int(step * rng.uniform(0.55, 0.8))
        font = ImageFont.truetype(FONTS[rng.integers(len(FONTS))], max(size, 8))
        words = " ".join(rng.choice(WORDS, size=int(rng.integers(2, 6))))
        x = int(rng.integers(0, max(1, w // 8)))
        d.text((x, i * step + (step - size) // 3), words,
               fill=int(rng.integers(0, 70)), font=font)
    if rng.random() < 0.5:
        img = img.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 1.0)))
    a = np.asarray(img, dtype=np.float32)
    a = a + rng.normal(0, 6, a.shape)
    a = np.clip(a, 0, 255)
    rgb = np.stack([a, a, a])  # 3 x H x W
    return ((rgb / 255.0 - 0.5) / 0.5).astype(np.float32)[None]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--pip", default=sys.executable,
                    help="the python whose pip downloads the wheel")
    ap.add_argument("names", nargs="*", default=sorted(MODELS))
    a = ap.parse_intermixed_args()
    z = fetch(a.out, a.pip)
    rng = np.random.default_rng(0)
    for name in a.names:
        member, (h, w) = MODELS[name]
        d = os.path.join(a.out, name)
        os.makedirs(os.path.join(d, "calib"), exist_ok=True)
        os.makedirs(os.path.join(d, "eval"), exist_ok=True)
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(z.read("rapidocr_onnxruntime/models/" + member))
        lines = 6 if name == "ppocr_det" else 1
        for i in range(8):
            np.save(os.path.join(d, "calib", "s%d.npy" % i), text_image(rng, h, w, lines))
        for i in range(4):
            np.save(os.path.join(d, "eval", "e%d.npy" % i), text_image(rng, h, w, lines))
        print("fetched %s 1x3x%dx%d" % (name, h, w))
    return 0


if __name__ == "__main__":
    sys.exit(main())
