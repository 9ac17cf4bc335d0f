"""Find the first tensor where TFLite and Quill's interpreter part ways.

Needs tflite_runtime and the `tflite` reader package: run it with the venv
python from scripts/pyenv.sh.

  tflite_bisect.py MODEL.qir INPUT.npy [--quill Q] [--translate T]
                   [--resolver REF|NODELEGATE] [--all] [--keep DIR]

MODEL.qir is a quantized model (`quill quantize --backend tflite-int8`),
INPUT.npy its input in Quill's layout. The script

  1. names every numbered value (%63 -> %v63), so that each TFLite tensor
     the exporter makes for a value carries the value's name;
  2. makes every quantized non-constant value a graph output (float
     values are left alone so that QDQ patterns still fold; graph outputs are
     never overwritten: experimental_preserve_all_tensors alone still
     showed stale data in some tensors after later ops ran);
  3. runs that model in `quill run`, and exports it (`quill-translate
     --export-tflite`) and runs it in the TFLite interpreter with the
     chosen kernels;
  4. compares the tensors of equal name in program order (NHWC tensors
     are transposed back), integers in steps (LSB), floats relative to
     max(1, |quill|) (differing: by more than 1e-6), and prints one line
     per value; the first differing value is marked FIRST (with --all every value is listed, otherwise
     the listing stops a few values after it).

Values without a tensor of their own (folded QDQ patterns, aliases) are
skipped. Exits 1 if some value differs, 0 if every compared value is equal.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tflite_check  # noqa: E402

DEF = re.compile(r"^  (%[\w.\-]+(?:, %[\w.\-]+)*) = (\w+)(.*)$")


def split_top(s):
    """Splits s at the commas outside <>, {}, () and []."""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "<{([":
            depth += 1
        elif ch in ">})]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def result_types(rest):
    """The result types of an op line's text after the opcode."""
    rest = re.sub(r' loc\("[^"]*"\)$', "", rest)
    depth = 0
    cut = -1
    for i, ch in enumerate(rest):  # the last " : " at depth 0
        if ch in "<{([":
            depth += 1
        elif ch in ">})]":
            depth -= 1
        elif depth == 0 and rest.startswith(" : ", i):
            cut = i
    return split_top(rest[cut + 3:]) if cut >= 0 else []


def instrument(text):
    """(named module text, dump module text, [(value, opcode, type)])."""
    text = re.sub(r"%(\d+)\b", r"%v\1", text)
    lines = text.splitlines()
    values = []
    consts = set()
    func = None
    for i, line in enumerate(lines):
        if line.startswith("func @"):
            if func is not None:
                break  # the first function only
            func = i
            continue
        m = DEF.match(line)
        if not m:
            continue
        names = [n.strip() for n in m.group(1).split(",")]
        operands = re.findall(r"%[\w.\-]+", re.split(r" \{| : ", m.group(3))[0])
        if m.group(2) == "constant" or all(o in consts for o in operands):
            consts.update(names)  # weights: folded into their users
            continue
        types = result_types(m.group(3))
        if len(types) != len(names):
            continue
        # only quantized values: a float value made an output would stop
        # the QDQ pattern around it from folding into an int8 builtin
        values += [(n, m.group(2), t) for n, t in zip(names, types)
                   if "!quant." in t]
    dump = list(lines)
    for i in range(func + 1, len(dump)):
        if dump[i].startswith("  return"):
            ret = dump[i]
            break
    # -> (all types) and return every value
    head = dump[func]
    sig = re.match(r"^(func @[\w.\-]+\(.*\)) -> (.*) \{$", head)
    dump[func] = "%s -> (%s) {" % (sig.group(1), ", ".join(t for _, _, t in values))
    dump[dump.index(ret)] = "  return " + ", ".join(n for n, _, _ in values)
    end = dump.index("}", func)
    return text, "\n".join(dump[:end + 1]) + "\n", values


def tflite_tensors(data, resolver, x):
    """{name: array} of every tensor after one run on x (Quill layout)."""
    m = tflite_check.interpreter_module()
    kind = {"NODELEGATE": m.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
            "REF": m.OpResolverType.BUILTIN_REF}[resolver]
    it = m.Interpreter(model_content=data, experimental_op_resolver_type=kind,
                       experimental_preserve_all_tensors=True)
    it.allocate_tensors()
    perms = tflite_check.layouts(data)
    d = it.get_input_details()[0]
    p = perms.get(d["name"], [])
    it.set_tensor(d["index"], np.ascontiguousarray(x.transpose(p) if p else x))
    it.invoke()
    out = {}
    for t in it.get_tensor_details():
        try:
            out[t["name"]] = it.get_tensor(t["index"])
        except ValueError:  # a tensor without data
            pass
    return out


def to_logical(y, shape):
    """y in Quill's logical shape (NHWC -> NCHW), or None."""
    if tuple(y.shape) == tuple(shape):
        return y
    if y.ndim == 4 and tuple(y.transpose(0, 3, 1, 2).shape) == tuple(shape):
        return y.transpose(0, 3, 1, 2)
    return None


def compare(mine, theirs):
    if np.issubdtype(mine.dtype, np.integer):
        d = np.abs(mine.astype(np.int64) - theirs.astype(np.int64))
        return float(d.max()), int((d != 0).sum())
    d = np.abs(mine.astype(np.float64) - theirs) / np.maximum(1.0, np.abs(mine))
    return float(d.max()), int((d > 1e-6).sum())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("qir")
    ap.add_argument("input")
    here = os.path.dirname(os.path.abspath(__file__))
    build = os.path.join(here, "..", "..", "..", "..", "build")
    ap.add_argument("--quill", default=os.path.join(build, "quill"))
    ap.add_argument("--translate", default=os.path.join(build, "quill-translate"))
    ap.add_argument("--resolver", default="REF", choices=("REF", "NODELEGATE"))
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--keep", help="keep the instrumented models in this directory")
    a = ap.parse_args()
    _, dump, values = instrument(open(a.qir).read())
    tmp_ctx = tempfile.TemporaryDirectory()
    tmp = a.keep or tmp_ctx.name
    os.makedirs(tmp, exist_ok=True)
    dump_qir = os.path.join(tmp, "dump.qir")
    tfl = os.path.join(tmp, "dump.tflite")
    open(dump_qir, "w").write(dump)
    subprocess.run([a.translate, dump_qir, "--export-tflite", tfl], check=True)
    x = np.load(a.input)
    cmd = [a.quill, "run", dump_qir, "--input", a.input]
    files = []
    for i, _ in enumerate(values):
        files.append(os.path.join(tmp, "q%d.npy" % i))
        cmd += ["--output", files[-1]]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    theirs = tflite_tensors(open(tfl, "rb").read(), a.resolver, x)
    first = None
    shown_after = 0
    print("%-44s %-12s %-18s %10s %9s" % ("value", "op", "shape", "max diff",
                                          "differ"))
    for (name, opc, _), f in zip(values, files):
        mine = np.load(f)
        t = theirs.get(name[1:])
        if t is None:
            continue
        t = to_logical(t, mine.shape)
        if t is None:
            print("%-44s %-12s layout differs" % (name, opc))
            continue
        worst, n = compare(mine, t)
        mark = ""
        if n > 0 and first is None:
            first = name
            mark = "  <- FIRST"
        print("%-44s %-12s %-18s %10g %9d%s" % (
            name[:44], opc, "x".join(map(str, mine.shape)), worst, n, mark))
        if first is not None and not a.all:
            shown_after += 1
            if shown_after > 6:
                break
    print("first differing value: %s" % (first or "none"))
    return 1 if first else 0


if __name__ == "__main__":
    sys.exit(main())
