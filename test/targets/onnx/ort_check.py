"""Run ONNX models exported by Quill in onnxruntime and compare outputs.

Needs onnxruntime: run it with the venv python from scripts/pyenv.sh.
Every model runs twice, with onnxruntime's graph optimizations enabled
(QDQ groups fused into QLinearConv & co.) and disabled (every node as
written), and both runs are checked.

  ort_check.py compare REF.onnx TEST.onnx --input NAME=FILE.npy...
               [--atol X | --exact]
      Run both models on the inputs (a leading dimension that is a multiple
      of the model's batch size is split into samples) and compare TEST's
      outputs with REF's: max |difference| <= atol, or bit-equal (--exact).

  ort_check.py expect MODEL.onnx --input FILE... --expect FILE...
               [--atol X]
      Run MODEL on the inputs (in graph-input order; .npy or TensorProto
      .pb files) and compare the outputs with the expected arrays: equal,
      or for float outputs within atol when given.

  ort_check.py run MODEL.onnx [--seed N]
      Load MODEL and run it on random inputs (as random-inputs makes them)
      with and without graph optimizations; the two runs must agree
      (integers exactly, floats within 1e-5).

  ort_check.py random-inputs MODEL.onnx OUTDIR [--seed N]
      Write OUTDIR/input_<i>.pb for each graph input: floats uniform in
      [-2, 2), integers uniform in [0, 3), bools random.

  ort_check.py nodetests QUILL_TRANSLATE NODE_DIR OUTDIR
      For each ONNX node test NODE_DIR/<test>/ that Quill imports: export
      it, run the exported model on test_data_set_0 and compare with the
      expected outputs (rtol 1e-3, atol 1e-5, as ONNX's backend tests; NaN
      equals NaN). When onnxruntime cannot run the original model either,
      or its own run of the original misses the expected outputs, the
      exported model is compared with onnxruntime's run of the original
      instead (or skipped).

Prints one line per check and a summary; exits 1 on any failure.
"""
import argparse
import glob
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

LEVELS = (("opt", ort.GraphOptimizationLevel.ORT_ENABLE_ALL),
          ("noopt", ort.GraphOptimizationLevel.ORT_DISABLE_ALL))


def session(path, level):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.log_severity_level = 3
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def samples(sess, arrays):
    """Split inputs along a leading dimension that exceeds the model's."""
    ins = sess.get_inputs()
    n = 1
    first = ins[0].shape[0] if ins and ins[0].shape else None
    arr0 = arrays[ins[0].name] if ins else None
    if (isinstance(first, int) and first > 0 and arr0 is not None
            and arr0.ndim == len(ins[0].shape) and arr0.shape[0] > first
            and arr0.shape[0] % first == 0):
        n = arr0.shape[0] // first
        for i in range(n):
            yield {k: v[i * first:(i + 1) * first] for k, v in arrays.items()}
        return
    yield arrays


def cmd_compare(args):
    arrays = {}
    for spec in args.input:
        name, path = spec.split("=", 1)
        arrays[name] = np.load(path)
    ok = True
    for label, level in LEVELS:
        ref, test = session(args.ref, level), session(args.test, level)
        worst, differ, count, nsamples = 0.0, 0, 0, 0
        for feed in samples(ref, arrays):
            nsamples += 1
            for a, b in zip(ref.run(None, feed), test.run(None, feed)):
                if a.shape != b.shape or a.dtype != b.dtype:
                    print("FAIL %s: output %s%s vs %s%s" % (
                        label, a.dtype, a.shape, b.dtype, b.shape))
                    return 1
                d = np.abs(a.astype(np.float64) - b.astype(np.float64))
                worst = max(worst, float(d.max()) if d.size else 0.0)
                differ += int((a != b).sum())
                count += a.size
        good = differ == 0 if args.exact else worst <= args.atol
        ok = ok and good
        print("%s %s: %d samples, %d output elements, max |diff| %.3g, "
              "%d elements differ (%s)" % (
                  "ok" if good else "FAIL", label, nsamples, count, worst,
                  differ, "exact" if args.exact else "atol %g" % args.atol))
    return 0 if ok else 1


def load_array(path):
    if path.endswith(".pb"):
        return numpy_helper.to_array(onnx.load_tensor(path))
    return np.load(path)


def random_feed(sess, seed):
    rng = np.random.default_rng(seed)
    types = {"tensor(float)": np.float32, "tensor(double)": np.float64,
             "tensor(int64)": np.int64, "tensor(int32)": np.int32,
             "tensor(int8)": np.int8, "tensor(uint8)": np.uint8,
             "tensor(bool)": np.bool_}
    feed = {}
    for i in sess.get_inputs():
        dt = types[i.type]
        if dt in (np.float32, np.float64):
            a = rng.uniform(-2, 2, size=i.shape).astype(dt)
        elif dt is np.bool_:
            a = rng.integers(0, 2, size=i.shape).astype(dt)
        else:
            a = rng.integers(0, 3, size=i.shape).astype(dt)
        feed[i.name] = a
    return feed


def cmd_random_inputs(args):
    os.makedirs(args.outdir, exist_ok=True)
    sess = session(args.model, LEVELS[1][1])
    feed = random_feed(sess, args.seed)
    for k, i in enumerate(sess.get_inputs()):
        t = numpy_helper.from_array(feed[i.name], i.name)
        with open(os.path.join(args.outdir, "input_%d.pb" % k), "wb") as f:
            f.write(t.SerializeToString())
    return 0


def cmd_run(args):
    runs = []
    for label, level in LEVELS:
        sess = session(args.model, level)
        runs.append(sess.run(None, random_feed(sess, args.seed)))
    ok = len(runs[0]) == len(runs[1])
    for k, (a, b) in enumerate(zip(*runs)):
        good = a.shape == b.shape and a.dtype == b.dtype and (
            np.allclose(a, b, rtol=0, atol=1e-5) if a.dtype.kind == "f"
            else np.array_equal(a, b))
        ok = ok and good
        print("%s %s output %d: %s%s, optimized and unoptimized runs %s" % (
            "ok" if good else "FAIL", os.path.basename(args.model), k,
            a.dtype, list(a.shape), "agree" if good else "differ"))
    return 0 if ok else 1


def cmd_expect(args):
    ok = True
    for label, level in LEVELS:
        sess = session(args.model, level)
        feed = {i.name: load_array(p) for i, p in zip(sess.get_inputs(),
                                                      args.input)}
        outs = sess.run(None, feed)
        if len(outs) != len(args.expect):
            print("FAIL %s: %d outputs, %d expected" % (
                label, len(outs), len(args.expect)))
            return 1
        for k, (o, path) in enumerate(zip(outs, args.expect)):
            e = load_array(path)
            same = o.dtype == e.dtype and o.shape == e.shape
            flt = o.dtype.kind == "f"
            if same:
                d = np.abs(o.astype(np.float64) - e.astype(np.float64))
                worst = float(d.max()) if d.size else 0.0
                tol = args.atol if flt else 0.0
                good = worst <= tol
                what = ("equal" if worst == 0 else
                        "max |diff| %.3g (atol %g)" % (worst, tol)
                        if good or flt else
                        "%d of %d elements differ, max %g" % (
                            int((d > 0).sum()), d.size, worst))
            else:
                good = False
                what = "expected %s%s" % (e.dtype, list(e.shape))
            ok = ok and good
            print("%s %s %s output %d: %s%s, %s" % (
                "ok" if good else "FAIL", os.path.basename(args.model), label,
                k, o.dtype, list(o.shape), what))
    return 0 if ok else 1


def close(a, b):
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind in "fc":
        return bool(np.allclose(a, b, rtol=1e-3, atol=1e-5, equal_nan=True))
    return bool(np.array_equal(a, b))


def run_model(path, feed, level):
    sess = session(path, level)
    names = [i.name for i in sess.get_inputs()]
    return sess.run(None, {n: feed[n] for n in names if n in feed})


def cmd_nodetests(args):
    os.makedirs(args.outdir, exist_ok=True)
    counts = dict(exported=0, passed=0, vs_original=0, skipped=0, failed=0)
    for model in sorted(glob.glob(os.path.join(args.node_dir, "*",
                                               "model.onnx"))):
        test_dir = os.path.dirname(model)
        name = os.path.basename(test_dir)
        out = os.path.join(args.outdir, name + ".onnx")
        p = subprocess.run([args.tool, "--import-onnx", model, "--export-onnx",
                            out], capture_output=True, text=True,
                           errors="replace")
        if p.returncode != 0:
            continue
        counts["exported"] += 1
        data = os.path.join(test_dir, "test_data_set_0")
        mp = onnx.load(model)
        feed = {}
        for k, vi in enumerate(
                [i for i in mp.graph.input
                 if i.name not in {t.name for t in mp.graph.initializer}]):
            path = os.path.join(data, "input_%d.pb" % k)
            if os.path.exists(path):
                feed[vi.name] = numpy_helper.to_array(
                    onnx.load_tensor(path))
        expected = [numpy_helper.to_array(onnx.load_tensor(f))
                    for f in sorted(glob.glob(os.path.join(data,
                                                           "output_*.pb")))]
        verdict = "passed"
        for label, level in LEVELS:
            try:
                got = run_model(out, feed, level)
            except Exception as ex:  # noqa: BLE001 - ORT raises many kinds
                got, err = None, str(ex).splitlines()[0][:150]
            if got is not None and len(got) == len(expected) and all(
                    close(g, e) for g, e in zip(got, expected)):
                continue
            # Fall back to onnxruntime's own run of the original model.
            try:
                orig = run_model(model, feed, level)
            except Exception:  # noqa: BLE001
                orig = None
            orig_ok = orig is not None and len(orig) == len(expected) and all(
                close(o, e) for o, e in zip(orig, expected))
            if orig is None or (got is None and not orig_ok):
                verdict = "skipped" if verdict != "failed" else verdict
                print("SKIP %s %s: onnxruntime cannot run the original "
                      "model correctly either" % (name, label))
                continue
            if got is not None and not orig_ok and len(got) == len(orig) and \
                    all(close(g, o) for g, o in zip(got, orig)):
                if verdict == "passed":
                    verdict = "vs_original"
                continue
            verdict = "failed"
            print("FAIL %s %s: %s" % (
                name, label, err if got is None else
                "outputs differ from the expected ones"))
        counts[verdict] += 1
    print("node tests exported: %d passed: %d matched-original: %d "
          "skipped: %d failed: %d" % (
              counts["exported"], counts["passed"], counts["vs_original"],
              counts["skipped"], counts["failed"]))
    return 1 if counts["failed"] or not counts["exported"] else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compare")
    c.add_argument("ref")
    c.add_argument("test")
    c.add_argument("--input", action="append", default=[])
    c.add_argument("--atol", type=float, default=0.0)
    c.add_argument("--exact", action="store_true")
    e = sub.add_parser("expect")
    e.add_argument("model")
    e.add_argument("--input", action="append", default=[])
    e.add_argument("--expect", action="append", default=[])
    e.add_argument("--atol", type=float, default=0.0)
    u = sub.add_parser("run")
    u.add_argument("model")
    u.add_argument("--seed", type=int, default=1)
    r = sub.add_parser("random-inputs")
    r.add_argument("model")
    r.add_argument("outdir")
    r.add_argument("--seed", type=int, default=1)
    n = sub.add_parser("nodetests")
    n.add_argument("tool")
    n.add_argument("node_dir")
    n.add_argument("outdir")
    args = ap.parse_args()
    return {"compare": cmd_compare, "expect": cmd_expect,
            "random-inputs": cmd_random_inputs, "run": cmd_run,
            "nodetests": cmd_nodetests}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
