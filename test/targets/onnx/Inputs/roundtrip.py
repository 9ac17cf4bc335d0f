"""Round-trip ONNX models through Quill: import -> export -> import again.

Usage: roundtrip.py QUILL_TRANSLATE OUTDIR MODEL_OR_DIR...

Each argument is a model file or a directory of <test>/model.onnx (ONNX's
node tests). For every model that imports (quill-translate exits 0):
  1. import it: IR A
  2. import it and export it (--export-onnx) to OUTDIR/<name>.onnx
  3. check the exported model with onnx.checker (full_check) when the onnx
     module is available
  4. import the exported model: IR B, which must equal A
Node names are unique in ONNX, so an op sharing its location with an
earlier op (one ONNX node imported as several ops) is exported as
"name#2"; locations are compared with that suffix removed.

Prints one line per problem and the counts; exits 1 if any model that
imports fails to export, fails the checker or does not round-trip.
"""
import glob
import os
import re
import subprocess
import sys

try:
    import onnx
except ImportError:  # the checker step is skipped
    onnx = None

LOC_SUFFIX = re.compile(r'(loc\("(?:[^"\\]|\\.)*?)#\d+"\)')


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True,
                          errors="replace", timeout=300)


def first_line(s):
    s = s.strip()
    return s.splitlines()[0] if s else "(no message)"


def main():
    tool, outdir, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.makedirs(outdir, exist_ok=True)
    models = []
    for a in args:
        if os.path.isdir(a):
            models += sorted(glob.glob(os.path.join(a, "*", "model.onnx")))
        else:
            models.append(a)
    counts = dict(imported=0, identical=0, different=0, export_failed=0,
                  checker_failed=0)
    for m in models:
        name = (os.path.basename(os.path.dirname(m))
                if os.path.basename(m) == "model.onnx"
                else os.path.splitext(os.path.basename(m))[0])
        a = run([tool, "--import-onnx", m])
        if a.returncode != 0:
            continue
        counts["imported"] += 1
        out = os.path.join(outdir, name + ".onnx")
        e = run([tool, "--import-onnx", m, "--export-onnx", out])
        if e.returncode != 0:
            counts["export_failed"] += 1
            print("EXPORT FAILED %s: %s" % (name, first_line(e.stderr)))
            continue
        if onnx is not None:
            try:
                onnx.checker.check_model(onnx.load(out), full_check=True)
            except Exception as ex:  # noqa: BLE001 - report any failure
                counts["checker_failed"] += 1
                print("CHECKER FAILED %s: %s" % (name, first_line(str(ex))))
                continue
        b = run([tool, "--import-onnx", out])
        if b.returncode != 0:
            counts["different"] += 1
            print("REIMPORT FAILED %s: %s" % (name, first_line(b.stderr)))
            continue
        if a.stdout == LOC_SUFFIX.sub(r'\1")', b.stdout):
            counts["identical"] += 1
        else:
            counts["different"] += 1
            print("DIFFERENT %s" % name)
            al, bl = a.stdout.splitlines(), b.stdout.splitlines()
            for x, y in zip(al, bl):
                if x != LOC_SUFFIX.sub(r'\1")', y):
                    print("  - " + x.strip()[:200])
                    print("  + " + y.strip()[:200])
                    break
    print("models: %d imported: %d exported: %d identical: %d different: %d "
          "export-failed: %d checker-failed: %d"
          % (len(models), counts["imported"],
             counts["imported"] - counts["export_failed"],
             counts["identical"], counts["different"],
             counts["export_failed"], counts["checker_failed"]))
    bad = counts["different"] + counts["export_failed"] + counts["checker_failed"]
    return 1 if bad or not models else 0


if __name__ == "__main__":
    sys.exit(main())
