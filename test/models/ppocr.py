#!/usr/bin/env python3
"""ppocr.py - the pretrained part of the model zoo: PP-OCR's ONNX models.

  /usr/bin/python3 test/models/ppocr.py OUTDIR [--pip PYTHON] [NAME...]
  /usr/bin/python3 test/models/ppocr.py --text-lines N [--seed S] DIR

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

--text-lines writes a labelled recognition set for bench/ocr_accuracy.py:
DIR/x.npy (N x 3 x 48 x 320) and DIR/labels.json, one line of words and
numbers per image drawn from characters of the model's dictionary (printable
ASCII), rendered in a random DejaVu/Liberation face, dark on a light noisy
background, some blurred, resized to height 48 and padded on the right as
PaddleOCR's recognizer preprocesses (zeros after normalization).
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


LEXICON = ("the of and to in for is on that by with as at from this be or "
           "are an was have not will can all new more one page data model "
           "price total order invoice street road city north south east west "
           "January March July October Monday Friday Quill TFLite ONNX AMD "
           "Intel Xeon EPYC OCR PP-OCRv4 e-mail www.example.com info@acme.org "
           "No. Tel: Fax: ID# (approx.) [draft] {v2} 50% $19.99 A/B x=3 <ok> "
           "3.14 2026-11-26 10:45 +49 #42 1,250.00 N/A Co. Ltd. & Sons").split()


def text_line(rng):
    words = []
    for _ in range(int(rng.integers(1, 5))):
        if rng.random() < 0.3:
            words.append(str(int(rng.integers(0, 100000))))
        else:
            words.append(str(rng.choice(LEXICON)))
    return " ".join(words)


def render_line(rng, text):
    font = ImageFont.truetype(FONTS[rng.integers(len(FONTS))], 32)
    left, top, right, bottom = font.getbbox(text)
    w, h = right - left + 12, bottom - top + 12
    bg = int(rng.integers(190, 256))
    img = Image.new("L", (w, h), bg)
    ImageDraw.Draw(img).text((6 - left, 6 - top), text,
                             fill=int(rng.integers(0, 80)), font=font)
    if rng.random() < 0.4:
        img = img.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 1.2)))
    nw = min(320, max(1, int(round(48 * w / h))))
    a = np.asarray(img.resize((nw, 48), Image.BILINEAR), dtype=np.float32)
    a = np.clip(a + rng.normal(0, 5, a.shape), 0, 255)
    out = np.zeros((3, 48, 320), np.float32)
    out[:, :, :nw] = (a / 255.0 - 0.5) / 0.5
    return out


def text_lines(n, seed, out):
    import json
    rng = np.random.default_rng(seed)
    os.makedirs(out, exist_ok=True)
    labels, xs = [], []
    for _ in range(n):
        t = text_line(rng)
        labels.append(t)
        xs.append(render_line(rng, t))
    np.save(os.path.join(out, "x.npy"), np.stack(xs))
    with open(os.path.join(out, "labels.json"), "w") as f:
        json.dump(labels, f, indent=0)
    return 0


def main():
    if "--text-lines" in sys.argv:
        ap = argparse.ArgumentParser()
        ap.add_argument("--text-lines", type=int, required=True)
        ap.add_argument("--seed", type=int, default=1)
        ap.add_argument("out")
        a = ap.parse_args()
        return text_lines(a.text_lines, a.seed, a.out)
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
