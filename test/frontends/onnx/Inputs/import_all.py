"""Import every ONNX model under the given directories with quill-translate.

Usage: import_all.py QUILL_TRANSLATE DIR...

Each DIR/*/model.onnx is imported. Outcomes:
  imported  exit 0 (the importer verified the IR)
  skipped   exit 1 with a diagnostic saying the model uses something Quill
            does not support (an op, a data type, a non-constant shape input)
  failed    exit 1 for any other reason (listed)
  crashed   any other exit status or a signal (listed; must be 0)
Prints the counts and exits non-zero only on crashes or timeouts. Needs no
onnx module (any Python 3 works).
"""
import glob
import os
import subprocess
import sys

SKIP_MARKERS = (
    "unsupported ONNX ops",
    "unsupported data type",
    "unsupported element type",
    "unsupported target type",
    "must be a constant",
    "is not supported",
    "are not supported",
    "not supported",
    "uses opset",
    "is not a tensor",
    "only 2-D convolutions",
)


def main():
    tool, dirs = sys.argv[1], sys.argv[2:]
    models = []
    for d in dirs:
        models += sorted(glob.glob(os.path.join(d, "*", "model.onnx")))
    imported, skipped, failed, crashed = 0, 0, [], []
    for m in models:
        name = os.path.basename(os.path.dirname(m))
        try:
            p = subprocess.run([tool, "--import-onnx", m], capture_output=True,
                               text=True, errors="replace", timeout=120)
        except subprocess.TimeoutExpired:
            crashed.append((name, "timeout"))
            continue
        if p.returncode == 0:
            imported += 1
        elif p.returncode == 1 and any(k in p.stderr for k in SKIP_MARKERS):
            skipped += 1
        elif p.returncode == 1:
            failed.append((name, p.stderr.strip().splitlines()[0]
                           if p.stderr.strip() else "(no message)"))
        else:
            crashed.append((name, "exit status %d" % p.returncode))
    for name, why in failed:
        print("FAILED %s: %s" % (name, why))
    for name, why in crashed:
        print("CRASHED %s: %s" % (name, why))
    print("models: %d imported: %d skipped: %d failed: %d crashed: %d"
          % (len(models), imported, skipped, len(failed), len(crashed)))
    return 1 if crashed or not models else 0


if __name__ == "__main__":
    sys.exit(main())
