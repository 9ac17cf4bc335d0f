#!/usr/bin/python3
"""ONNX backend conformance for `quill run` (the reference interpreter).

Walks the ONNX test data (Debian's libonnx-testdata):

    DATA/{node,pytorch-converted,pytorch-operator,simple}/<test>/
        model.onnx
        test_data_set_0/input_N.pb, output_N.pb

runs `quill run model.onnx --input input_0.pb ... --output out_0.npy ...`
(inputs and outputs bound by position) on each, and compares the outputs
with output_N.pb (floats: rtol 1e-3, atol 1e-5, NaN == NaN; integers and
bools exactly; shape and dtype must match).

Each test ends as one of
    pass          outputs match
    pass-const    the import needed constant inputs ("must be a constant");
                  rerun with --const binding every input but the first, and
                  the outputs match
    fail          wrong values, shape or dtype, a timeout, or an error that
                  is not an "unsupported" one
    skip          the importer or the reference target says an op or feature
                  is unsupported
    needs-const   the import needs constant inputs and `quill run --const`
                  is not available yet
    crash         quill died of a signal, exited with a code other than 0/1,
                  or a sanitizer reported an error

A test is a "supported-op test" if every node of its model is in the
supported op list below; the pass rate over those (pass + pass-const over
all of them) is the number CI guards. Exit status: 1 if any test crashed,
or if --min-pass-rate is given and the rate falls below it; else 0.

    /usr/bin/python3 test/conformance/onnx_node_tests.py --quill build/quill
    ... --suite node --filter 'conv' -v          # a subset, with details
"""
import argparse
import collections
import concurrent.futures
import glob
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

SUITES = ["node", "pytorch-converted", "pytorch-operator", "simple"]

SUPPORTED_OPS = set("""
Conv ConvTranspose Gemm MatMul BatchNormalization Relu LeakyRelu PRelu Clip
Sigmoid Tanh HardSigmoid HardSwish Erf Gelu Add Sub Mul Div Pow Sqrt Exp Log
Neg Abs Reciprocal Min Max MaxPool AveragePool GlobalAveragePool
GlobalMaxPool Concat Split Slice Reshape Flatten Transpose Squeeze Unsqueeze
Softmax LogSoftmax Pad Resize Upsample Identity Dropout Constant Shape Gather
Cast ConstantOfShape Range Expand ReduceMean ReduceSum ReduceMax ReduceMin
LayerNormalization Where Equal Less Greater QuantizeLinear DequantizeLinear
QLinearConv QLinearMatMul ConvInteger MatMulInteger DynamicQuantizeLinear
LSTM GRU RNN
""".split())

RTOL, ATOL = 1e-3, 1e-5
TIMEOUT = 120  # seconds per quill run

# "unsupported ONNX ops: X", "... is not supported", "only 2-D convolutions
# ... are supported", "uses opset 6; supported opsets are 7 to 17", "input
# 'x' is not a tensor" (sequences, optionals)
UNSUPPORTED_RE = re.compile(r"unsupported|not supported|only .* supported|"
                            r"supported opsets|is not a tensor")
# a sanitizer report (ASan/LSan/UBSan builds) is a crash whatever the exit code
SANITIZER_RE = re.compile(r"ERROR: (Address|Leak|Memory|Thread)Sanitizer|"
                          r"runtime error: ")
NEEDS_CONST_RE = re.compile(r"must be (a )?constants?")
CONST_INPUT_RE = re.compile(r"input #\d+ \('([^']*)'\) must be a constant")
NO_CONST_FLAG_RE = re.compile(r"--const needs the frontend's binding support")


def model_info(path):
    """(op types of every node incl. subgraphs, graph input names that are
    not initializers) of an ONNX model."""
    m = onnx.load(path, load_external_data=False)
    ops = []

    def walk(g):
        for n in g.node:
            ops.append(n.op_type if n.domain in ("", "ai.onnx")
                       else n.domain + "." + n.op_type)
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
                for sg in a.graphs:
                    walk(sg)

    walk(m.graph)
    inits = {i.name for i in m.graph.initializer}
    inputs = [i.name for i in m.graph.input if i.name not in inits]
    return ops, inputs


def numbered(d, prefix):
    files = glob.glob(os.path.join(d, prefix + "_*.pb"))
    key = lambda f: int(re.search(r"_(\d+)\.pb$", f).group(1))
    return sorted(files, key=key)


def first_error(stderr):
    for line in stderr.splitlines():
        if SANITIZER_RE.search(line):
            return line.strip()
    for line in stderr.splitlines():
        if "error:" in line:
            return line.strip()
    lines = [l for l in stderr.splitlines() if l.strip()]
    return lines[0].strip() if lines else "(no message)"


def cause(reason):
    """A reason with the test-specific parts (paths, names, numbers) masked,
    so that equal causes group together."""
    c = re.sub(r"^.*?: error: ", "", reason)
    c = re.sub(r"'[^']*'", "'_'", c)
    c = re.sub(r"\([^()]*\d[^()]*\)", "(_)", c)
    c = re.sub(r"\d+", "N", c)
    return c[:110]


def compare(got_file, want_file):
    """None if the tensors agree, else a one-line reason."""
    t = onnx.TensorProto()
    with open(want_file, "rb") as f:
        t.ParseFromString(f.read())
    want = numpy_helper.to_array(t)
    if not os.path.exists(got_file):
        return "output not written"
    got = np.load(got_file)
    if got.shape != want.shape:
        return "shape %s, want %s" % (got.shape, want.shape)
    if got.dtype != want.dtype:
        return "dtype %s, want %s" % (got.dtype, want.dtype)
    if want.dtype.kind == "f":
        ok = np.isclose(got, want, rtol=RTOL, atol=ATOL, equal_nan=True)
        if not ok.all():
            g64, w64 = got.astype(np.float64), want.astype(np.float64)
            with np.errstate(invalid="ignore"):
                err = np.abs(g64 - w64)
            idx = np.unravel_index(np.nanargmax(np.where(ok, 0, err)
                                                if err.size else err),
                                   err.shape)
            return ("%d/%d values differ, worst at %s: got %.6g, want %.6g"
                    % ((~ok).sum(), ok.size, tuple(int(i) for i in idx),
                       g64[idx], w64[idx]))
    else:
        if not np.array_equal(got, want):
            bad = got != want
            idx = np.unravel_index(np.argmax(bad), bad.shape)
            return ("%d/%d values differ, first at %s: got %s, want %s"
                    % (bad.sum(), bad.size, tuple(int(i) for i in idx),
                       got[idx], want[idx]))
    return None


def run_quill(quill, cmd_args, timeout):
    try:
        p = subprocess.run([quill, "run"] + cmd_args, capture_output=True,
                           text=True, errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timeout after %ds" % timeout
    return p.returncode, p.stderr


def run_test(quill, suite, tdir, timeout):
    """Returns a dict: suite, name, status, reason, ops."""
    name = os.path.basename(tdir.rstrip("/"))
    res = {"suite": suite, "name": name, "ops": [], "reason": ""}
    model = os.path.join(tdir, "model.onnx")
    data = os.path.join(tdir, "test_data_set_0")
    try:
        ops, graph_inputs = model_info(model)
    except Exception as e:  # an unreadable model is the data's problem
        res.update(status="skip", reason="onnx cannot load the model: %s" % e)
        return res
    res["ops"] = ops
    ins, outs = numbered(data, "input"), numbered(data, "output")
    if not os.path.isdir(data) or not outs:
        res.update(status="skip", reason="no test data")
        return res
    with tempfile.TemporaryDirectory(prefix="quill-conf-") as tmp:
        out_files = [os.path.join(tmp, "out_%d.npy" % i)
                     for i in range(len(outs))]
        base = [model]
        outargs = []
        for f in out_files:
            outargs += ["--output", f]
        args = list(base)
        for f in ins:
            args += ["--input", f]
        rc, err = run_quill(quill, args + outargs, timeout)
        const_run = False
        if rc == 1 and NEEDS_CONST_RE.search(err):
            # bind every input but the first, and any input the importer
            # names, as an import-time constant
            const_run = True
            named = set(CONST_INPUT_RE.findall(err))
            args = list(base)
            for i, f in enumerate(ins):
                if i >= len(graph_inputs) or (
                        i == 0 and graph_inputs[0] not in named):
                    args += ["--input", f]
                else:
                    args += ["--const", "%s=%s" % (graph_inputs[i], f)]
            rc, err = run_quill(quill, args + outargs, timeout)
            if rc == 1 and NO_CONST_FLAG_RE.search(err):
                res.update(status="needs-const",
                           reason="import needs constant inputs")
                return res
        if rc is None:
            res.update(status="fail", reason=err)
            return res
        if rc not in (0, 1) or SANITIZER_RE.search(err):
            sig = (" (signal %d)" % -rc) if rc < 0 else ""
            res.update(status="crash",
                       reason="exit code %d%s: %s" % (rc, sig,
                                                      first_error(err)))
            return res
        if rc == 1:
            msg = first_error(err)
            if UNSUPPORTED_RE.search(err):
                res.update(status="skip", reason=msg)
            else:
                res.update(status="fail", reason=msg)
            return res
        if len(out_files) != len(outs):
            res.update(status="fail", reason="output count differs")
            return res
        for i, (g, w) in enumerate(zip(out_files, outs)):
            why = compare(g, w)
            if why:
                res.update(status="fail", reason="output %d: %s" % (i, why))
                return res
        res.update(status="pass-const" if const_run else "pass")
        return res


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quill", default=os.path.join(here, "..", "..",
                                                    "build", "quill"))
    ap.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    ap.add_argument("--suite", action="append", choices=SUITES,
                    help="run only these suites (repeatable)")
    ap.add_argument("--filter", help="regex on test names")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=TIMEOUT)
    ap.add_argument("--min-pass-rate", type=float,
                    help="fail if the pass rate over supported-op tests "
                         "(percent) is below this")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="also list skipped tests with their reasons")
    ap.add_argument("--no-op-summary", action="store_true")
    a = ap.parse_args()

    quill = os.path.abspath(a.quill)
    if not os.access(quill, os.X_OK):
        print("onnx_node_tests: no quill executable at %s" % quill)
        return 2
    suites = a.suite or SUITES
    work = []
    for s in suites:
        for d in sorted(glob.glob(os.path.join(a.data, s, "*", ""))):
            if a.filter and not re.search(a.filter, os.path.basename(
                    d.rstrip("/"))):
                continue
            if os.path.exists(os.path.join(d, "model.onnx")):
                work.append((s, d))

    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        futs = [ex.submit(run_test, quill, s, d, a.timeout) for s, d in work]
        for f in futs:
            results.append(f.result())

    statuses = ["pass", "pass-const", "fail", "skip", "needs-const", "crash"]
    print("== ONNX conformance of `quill run` (%d tests)" % len(results))
    for s in suites:
        rs = [r for r in results if r["suite"] == s]
        c = collections.Counter(r["status"] for r in rs)
        print("%-18s %4d tests: %s" % (s, len(rs), ", ".join(
            "%d %s" % (c[k], k) for k in statuses)))

    sup = [r for r in results if r["ops"] and
           all(op in SUPPORTED_OPS for op in r["ops"])]
    sup_pass = sum(r["status"] in ("pass", "pass-const") for r in sup)
    rate = 100.0 * sup_pass / len(sup) if sup else 100.0
    c = collections.Counter(r["status"] for r in sup)
    print("supported-op tests %4d: %s" % (len(sup), ", ".join(
        "%d %s" % (c[k], k) for k in statuses)))
    print("pass rate over supported-op tests: %.1f%% (%d/%d)"
          % (rate, sup_pass, len(sup)))

    def listing(title, rows):
        if not rows:
            return
        print("\n== %s (%d)" % (title, len(rows)))
        for r in sorted(rows, key=lambda r: (r["suite"], r["name"])):
            mark = "" if r in sup else "  [outside the supported op list]"
            print("  %s/%s: %s%s" % (r["suite"], r["name"], r["reason"], mark))

    listing("crashes", [r for r in results if r["status"] == "crash"])
    listing("failures", [r for r in results if r["status"] == "fail"])
    listing("passed with constant-bound inputs",
            [r for r in results if r["status"] == "pass-const"])
    if a.verbose:
        listing("skipped", [r for r in results if r["status"] == "skip"])
        listing("needing constant inputs",
                [r for r in results if r["status"] == "needs-const"])
    else:
        sk = [r for r in sup if r["status"] in ("skip", "needs-const")]
        listing("skipped supported-op tests (skip or needs-const)", sk)

    if not a.no_op_summary and "node" in suites:
        print("\n== per-op summary, node suite (a test counts for every op "
              "in its model)")
        per = collections.defaultdict(collections.Counter)
        for r in results:
            if r["suite"] != "node":
                continue
            for op in sorted(set(r["ops"])):
                per[op][r["status"]] += 1
        print("  %-28s %5s %5s %5s %5s %5s %5s" % (
            "op", "pass", "const", "fail", "skip", "ncnst", "crash"))
        for op in sorted(per):
            k = per[op]
            mark = "" if op in SUPPORTED_OPS else "  *"
            print("  %-28s %5d %5d %5d %5d %5d %5d%s" % (
                op, k["pass"], k["pass-const"], k["fail"], k["skip"],
                k["needs-const"], k["crash"], mark))
        print("  (* = outside the supported op list)")

    if not a.no_op_summary:
        print("\n== supported-op tests not passing, grouped by cause")
        causes = collections.Counter(
            (r["status"], cause(r["reason"])) for r in sup
            if r["status"] not in ("pass", "pass-const"))
        for (st, c), n in sorted(causes.items(), key=lambda kv: -kv[1]):
            print("  %4d %-11s %s" % (n, st, c))

    crashed = sum(r["status"] == "crash" for r in results)
    bad = crashed > 0
    if a.min_pass_rate is not None and rate < a.min_pass_rate:
        print("\nFAIL: pass rate %.1f%% is below the threshold %.1f%%"
              % (rate, a.min_pass_rate))
        bad = True
    if crashed:
        print("\nFAIL: %d test(s) crashed" % crashed)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
