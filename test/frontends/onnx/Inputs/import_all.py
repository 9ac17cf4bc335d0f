"""Import every ONNX model under the given directories with quill-translate.

Usage: import_all.py [--bind] [-v] QUILL_TRANSLATE DIR...

Each DIR/*/model.onnx is imported. Outcomes:
  imported  exit 0 (the importer verified the IR)
  bound     (--bind only) exit 0 once the graph inputs the importer needs
            as constants ("input ... ('w') must be a constant") are bound
            to test_data_set_0's tensors with --const, as a conformance
            runner does
  skipped   exit 1 with a diagnostic saying the model uses something Quill
            does not support (an op, a data type, a non-constant shape input)
  failed    exit 1 for any other reason (listed)
  crashed   any other exit status or a signal (listed; must be 0)
With -v, every model that is not imported is listed with its first error.
Prints the counts and exits non-zero only on crashes or timeouts. Needs no
onnx module (any Python 3 works).
"""
import glob
import os
import re
import subprocess
import sys

NEEDS_CONST = re.compile(r"'([^']*)'\) must be a constant")


def graph_input_names(model):
    """Names of the model's graph inputs in order, read from the protobuf
    without the onnx module: ModelProto.graph (7) -> GraphProto.input (11)
    -> ValueInfoProto.name (1); initializers (5) are skipped."""
    def fields(buf):
        i = 0
        while i < len(buf):
            key, i = varint(buf, i)
            num, wt = key >> 3, key & 7
            if wt == 0:
                _, i = varint(buf, i)
                yield num, None
            elif wt == 1:
                i += 8
            elif wt == 5:
                i += 4
            elif wt == 2:
                n, i = varint(buf, i)
                yield num, buf[i:i + n]
                i += n
            else:
                return

    def varint(buf, i):
        r = shift = 0
        while True:
            b = buf[i]
            i += 1
            r |= (b & 0x7f) << shift
            shift += 7
            if b < 0x80:
                return r, i

    with open(model, "rb") as f:
        data = f.read()
    names, inits = [], set()
    for num, g in fields(data):
        if num != 7 or g is None:
            continue
        for gnum, v in fields(g):
            if gnum == 11:
                for vnum, nm in fields(v):
                    if vnum == 1:
                        names.append(nm.decode("utf-8", "replace"))
            elif gnum == 5:
                for tnum, nm in fields(v):
                    if tnum == 8:
                        inits.add(nm.decode("utf-8", "replace"))
    return [n for n in names if n not in inits]


def run(tool, model, consts):
    args = [tool, "--import-onnx", model]
    for name, path in consts.items():
        args += ["--const", "%s=%s" % (name, path)]
    return subprocess.run(args, capture_output=True, text=True,
                          errors="replace", timeout=120)

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
    "only 1-D and 2-D convolutions",
)


def main():
    argv = sys.argv[1:]
    bind = "--bind" in argv
    verbose = "-v" in argv
    argv = [a for a in argv if a not in ("--bind", "-v")]
    tool, dirs = argv[0], argv[1:]
    models = []
    for d in dirs:
        models += sorted(glob.glob(os.path.join(d, "*", "model.onnx")))
    imported, bound, skipped, failed, crashed = 0, 0, 0, [], []
    for m in models:
        name = os.path.basename(os.path.dirname(m))
        consts = {}
        try:
            p = run(tool, m, consts)
            while bind and p.returncode == 1:
                need = NEEDS_CONST.search(p.stderr)
                inputs = graph_input_names(m)
                if not need or need.group(1) not in inputs or \
                        need.group(1) in consts:
                    break
                pb = os.path.join(os.path.dirname(m), "test_data_set_0",
                                  "input_%d.pb" % inputs.index(need.group(1)))
                if not os.path.exists(pb):
                    break
                consts[need.group(1)] = pb
                p = run(tool, m, consts)
        except subprocess.TimeoutExpired:
            crashed.append((name, "timeout"))
            continue
        lines = p.stderr.strip().splitlines()
        errors = [ln for ln in lines if ": error: " in ln] or lines or [""]
        if p.returncode == 1 and verbose:
            print("NOT IMPORTED %s: %s" % (name, errors[0]))
        if p.returncode == 0 and consts:
            bound += 1
        elif p.returncode == 0:
            imported += 1
        elif p.returncode == 1 and any(k in p.stderr for k in SKIP_MARKERS):
            skipped += 1
        elif p.returncode == 1:
            failed.append((name, errors[0] or "(no message)"))
        else:
            crashed.append((name, "exit status %d" % p.returncode))
    for name, why in failed:
        print("FAILED %s: %s" % (name, why))
    for name, why in crashed:
        print("CRASHED %s: %s" % (name, why))
    if bind:
        print("models: %d imported: %d bound: %d skipped: %d failed: %d "
              "crashed: %d" % (len(models), imported, bound, skipped,
                               len(failed), len(crashed)))
    else:
        print("models: %d imported: %d skipped: %d failed: %d crashed: %d"
              % (len(models), imported, skipped, len(failed), len(crashed)))
    return 1 if crashed or not models else 0


if __name__ == "__main__":
    sys.exit(main())
