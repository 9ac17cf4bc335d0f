"""Check .tflite files written by Quill against the TFLite interpreter.

Needs tflite_runtime and the `tflite` reader package: run it with the venv
python from scripts/pyenv.sh.

  tflite_check.py compare DIR QUILL [--samples N] [--json OUT] [--slack S]
      For each model of DIR/manifest.txt (make_models.py): load
      DIR/<name>.tflite with the interpreter from bytes (which runs the
      FlatBuffers verifier), make random inputs (int8: uniform over
      [-128, 127]; float: normal * 2; seeded), run Quill's reference
      interpreter (`QUILL run DIR/<name>.qir`) and TFLite with each op
      resolver (AUTO: optimized kernels + the XNNPACK delegate;
      NODELEGATE: optimized kernels; REF: reference kernels), and compare:
      int8 outputs in steps (LSB), float outputs relative to max(1, |ref|).
      Layouts come from the model's "quill" metadata. Fails when a
      difference exceeds the manifest's bound (plus S steps).

  tflite_check.py dataset DIR QUILL DATA.npy [--labels LABELS.npy]
      For DIR/digits_f32, DIR/digits_qdq, DIR/digits_int8 and
      DIR/digits_i16x8 (tflite-int16x8) (.qir and .tflite; those present): run every
      sample of DATA (leading dimension) through Quill and TFLite (all
      resolvers); float models: relative difference; models whose output
      is a DEQUANTIZE: difference in steps of its input's scale; with
      labels, the accuracy of each. Bounds: 1e-5 (float), 4 steps (QDQ:
      Quill's reference form computes each layer in float and rounds,
      TFLite's int8 kernels in fixed point), 0 steps for the integer models
      against TFLite's reference kernels (4 for the optimized ones).

  tflite_check.py armnn DIR QUILL [--json OUT]
      Load every model of DIR/manifest.txt (and DIR/../digits/*.tflite)
      with Arm NN's TFLite parser (Debian python3-pyarmnn), run it on the
      CpuRef backend and compare with Quill as `compare` does. Reports,
      never fails: Arm NN 20.08 rejects some valid models and rounds its
      own way; it is a second consumer, not the oracle.

  tflite_check.py run MODEL.tflite [INPUT.npy...] [--output OUT.npy...]
      Load and run one model (inputs in Quill's layout), write outputs.

  tflite_check.py schema SCHEMA_H
      Compare the constants of targets/tflite/schema.h with the `tflite`
      package (flatc-generated from the published schema.fbs): builtin
      operator codes, BuiltinOptions union indices, tensor types, and the
      field ids of every table field schema.h names (read from the
      vtable offsets in the generated accessors).

Prints one line per check and a summary; exits 1 on any failure.
"""
import argparse
import inspect
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

RESOLVERS = ("AUTO", "NODELEGATE", "REF")


def interpreter_module():
    """tflite_runtime (2.14), else ai_edge_litert (its successor)."""
    try:
        import tflite_runtime.interpreter as m
    except ImportError:
        import ai_edge_litert.interpreter as m
    return m


def runtime_name():
    m = interpreter_module()
    if m.__name__.startswith("tflite_runtime"):
        import tflite_runtime
        return "tflite-runtime " + tflite_runtime.__version__
    from importlib.metadata import version
    return "ai-edge-litert " + version("ai-edge-litert")


def interpreter(data, resolver):
    m = interpreter_module()
    Interpreter, OpResolverType = m.Interpreter, m.OpResolverType
    kind = {"AUTO": OpResolverType.AUTO,
            "NODELEGATE": OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
            "REF": OpResolverType.BUILTIN_REF}[resolver]
    it = Interpreter(model_content=data, experimental_op_resolver_type=kind)
    it.allocate_tensors()
    return it


def layouts(data):
    """{tensor name: perm} from the "quill" metadata."""
    import tflite
    m = tflite.Model.GetRootAsModel(data, 0)
    out = {}
    for i in range(m.MetadataLength()):
        md = m.Metadata(i)
        if md.Name() != b"quill":
            continue
        text = m.Buffers(md.Buffer()).DataAsNumpy().tobytes().decode()
        for line in text.splitlines()[1:]:
            kind, name, _, perm = line.split(" ")
            out[name] = [] if perm == "-" else [int(p) for p in perm.split(",")]
    return out


def run_tflite(data, resolver, inputs):
    """inputs: Quill-layout arrays in graph input order; returns outputs in
    Quill layout."""
    it = interpreter(data, resolver)
    perms = layouts(data)
    for d, x in zip(it.get_input_details(), inputs):
        p = perms.get(d["name"], list(range(x.ndim)))
        it.set_tensor(d["index"], np.ascontiguousarray(x.transpose(p) if p else x))
    it.invoke()
    outs = []
    for d in it.get_output_details():
        y = it.get_tensor(d["index"])
        p = perms.get(d["name"], list(range(y.ndim)))
        outs.append(y.transpose(np.argsort(p)) if p else y)
    return outs


def make_inputs(data, rng):
    it = interpreter(data, "REF")
    perms = layouts(data)
    xs = []
    for d in it.get_input_details():
        shape = list(d["shape"])
        p = perms.get(d["name"], list(range(len(shape))))
        logical = [0] * len(shape)
        for i, a in enumerate(p):
            logical[a] = shape[i]
        if d["dtype"] == np.int8:
            xs.append(rng.integers(-128, 128, size=logical).astype(np.int8))
        else:
            xs.append((rng.standard_normal(logical) * 2).astype(d["dtype"]))
    return xs


def run_quill(quill, qir, inputs, tmp):
    cmd = [quill, "run", qir]
    for i, x in enumerate(inputs):
        f = os.path.join(tmp, "in%d.npy" % i)
        np.save(f, x)
        cmd += ["--input", f]
    n_out = len(re.findall(r"^  return (.*)$", open(qir).read(), re.M)[0].split(","))
    outs = [os.path.join(tmp, "out%d.npy" % i) for i in range(n_out)]
    for f in outs:
        cmd += ["--output", f]
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True)
    if p.returncode != 0:
        m = re.search(r"error: (op '\w+' is not supported by target 'reference'.*)",
                      p.stderr)
        if m:
            raise MissingKernel("Quill's reference interpreter: " + m.group(1))
        raise RuntimeError("quill run failed: " + p.stderr.strip())
    return [np.load(f) for f in outs]


class MissingKernel(Exception):
    """The reference interpreter has no kernel for an op of the model."""


def difference(a, b):
    """Largest difference: int outputs in steps, floats relative."""
    if a.shape != b.shape:
        return float("inf")
    if np.issubdtype(a.dtype, np.integer):
        return float(np.abs(a.astype(np.int64) - b.astype(np.int64)).max())
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    return float((np.abs(a - b) / np.maximum(1.0, np.abs(b))).max())


def cmd_compare(args):
    rows = []
    bad = 0
    print("runtime: %s" % runtime_name())
    with open(os.path.join(args.dir, "manifest.txt")) as f:
        manifest = [l.split(" ", 4) for l in f.read().splitlines() if l]
    with tempfile.TemporaryDirectory() as tmp:
        for name, bound, bound_opt, _, what in manifest:
            path = os.path.join(args.dir, name + ".tflite")
            data = open(path, "rb").read()
            rng = np.random.default_rng(7)
            row = {"model": name, "what": what, "bound": float(bound),
                   "bound_opt": float(bound_opt)}
            try:
                worst = {r: 0.0 for r in RESOLVERS}
                for _ in range(args.samples):
                    xs = make_inputs(data, rng)
                    ref = run_quill(args.quill, os.path.join(args.dir, name + ".qir"),
                                    xs, tmp)
                    got = {}
                    step = output_step(data)  # a DEQUANTIZE output: steps

                    def diff(g, e):
                        if step and g.dtype == np.float32:
                            return round(float(np.abs(g.astype(np.float64) - e)
                                               .max()) / step, 3)
                        return difference(g, e)
                    for r in RESOLVERS:
                        got[r] = run_tflite(data, r, xs)
                        d = max(diff(g, e) for g, e in zip(got[r], ref))
                        worst[r] = max(worst[r], d)
                    # TFLite against itself: reference vs optimized kernels
                    d = max(diff(g, e) for g, e in zip(got["NODELEGATE"],
                                                      got["REF"]))
                    worst["TFL"] = max(worst.get("TFL", 0.0), d)
                row.update(worst)
                is_float = ("f32" in name or name.startswith("dequantize")) \
                    and not output_step(data)
                # *_f32exact: a float result equal bit for bit with the
                # reference kernels (bound 0, not 1e-5 relative)
                exact = name.endswith("_f32exact")
                limit = float(bound) if exact else 1e-5 if is_float \
                    else float(bound) + args.slack
                limit_opt = 1e-5 if is_float else float(bound_opt) + args.slack
                ok = worst["REF"] <= limit and worst["NODELEGATE"] <= limit_opt \
                    and worst["AUTO"] <= limit_opt
                row["ok"] = ok
            except MissingKernel as e:
                row["skip"] = str(e)
                ok = True
            except Exception as e:  # noqa: BLE001 - reported per model
                row["error"] = str(e).splitlines()[0][:200]
                ok = False
            bad += not ok
            rows.append(row)
            if "skip" in row:
                print("skip %-22s %s" % (name, row["skip"]))
            elif "error" in row:
                print("FAIL %-22s %s" % (name, row["error"]))
            else:
                fmt = "%.2g" if "f32" in name or name.startswith("dequantize") \
                    else "%g"
                print("%s %-22s REF %s  NODELEGATE %s  AUTO %s  (bounds %s/%s; "
                      "TFLite ref vs opt %s)  %s" % (
                          "ok  " if ok else "FAIL", name, fmt % row["REF"],
                          fmt % row["NODELEGATE"], fmt % row["AUTO"], bound,
                          bound_opt, fmt % row["TFL"], what))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    skipped = sum("skip" in r for r in rows)
    print("%d passed, %d failed, %d skipped" % (len(rows) - bad - skipped, bad,
                                                skipped))
    return 1 if bad else 0


def output_step(data):
    """The scale of the int8 tensor a DEQUANTIZE output reads, or None."""
    import tflite
    m = tflite.Model.GetRootAsModel(data, 0)
    sg = m.Subgraphs(0)
    out = sg.Outputs(0)
    for i in range(sg.OperatorsLength()):
        op = sg.Operators(i)
        code = m.OperatorCodes(op.OpcodeIndex()).BuiltinCode()
        if op.Outputs(0) == out and code == tflite.BuiltinOperator.DEQUANTIZE:
            q = sg.Tensors(op.Inputs(0)).Quantization()
            return float(q.Scale(0))
    return None


def cmd_dataset(args):
    x = np.load(args.data)
    labels = np.load(args.labels) if args.labels else None
    bad = 0
    n_models = 0
    print("runtime: %s" % runtime_name())
    with tempfile.TemporaryDirectory() as tmp:
        for name, bound in (("digits_f32", 1e-5), ("digits_qdq", 4),
                            ("digits_int8", 0), ("digits_i16x8", 0),
                            ("digits_mixed", 0)):
            if not os.path.exists(os.path.join(args.dir, name + ".tflite")):
                continue
            data = open(os.path.join(args.dir, name + ".tflite"), "rb").read()
            qir = os.path.join(args.dir, name + ".qir")
            step = output_step(data)
            worst = {r: 0.0 for r in RESOLVERS}
            correct = {r: 0 for r in RESOLVERS + ("quill",)}
            differing = {r: 0 for r in RESOLVERS}
            for i in range(x.shape[0]):
                xi = x[i:i + 1]
                ref = run_quill(args.quill, qir, [xi], tmp)[0]
                if labels is not None:
                    correct["quill"] += int(ref.argmax() == labels[i])
                for r in RESOLVERS:
                    got = run_tflite(data, r, [xi])[0]
                    if step:
                        d = float(np.abs(got.astype(np.float64) - ref).max()) / step
                        d = round(d, 3)
                    else:
                        d = difference(got, ref)
                    worst[r] = max(worst[r], d)
                    differing[r] += d > 1e-6
                    if labels is not None:
                        correct[r] += int(got.argmax() == labels[i])
            # the optimized kernels may round differently (ruy, XNNPACK):
            # one step per requantization, checked against a looser bound
            ok = worst["REF"] <= bound and all(
                worst[r] <= max(bound, 4 if step else bound) for r in RESOLVERS)
            n_models += 1
            bad += not ok
            acc = ""
            if labels is not None:
                acc = "  accuracy quill %.4f, tflite %s" % (
                    correct["quill"] / x.shape[0],
                    " ".join("%s %.4f" % (r, correct[r] / x.shape[0])
                             for r in RESOLVERS))
            unit = "steps" if step else "relative"
            print("%s %s: %d samples, max difference (%s) %s; samples "
                  "differing %s (bound %g)%s" % (
                      "ok  " if ok else "FAIL", name, x.shape[0], unit,
                      " ".join("%s %g" % (r, worst[r]) for r in RESOLVERS),
                      " ".join("%s %d" % (r, differing[r]) for r in RESOLVERS),
                      bound, acc))
    print("%d passed, %d failed" % (n_models - bad, bad))
    return 1 if bad else 0


def run_armnn(path, inputs):
    """Arm NN (CpuRef) outputs in Quill layout; raises on any failure."""
    import pyarmnn as ann
    data = open(path, "rb").read()
    perms = layouts(data)
    parser = ann.ITfLiteParser()
    net = parser.CreateNetworkFromBinaryFile(path)
    runtime = ann.IRuntime(ann.CreationOptions())
    opt, msgs = ann.Optimize(net, [ann.BackendId("CpuRef")],
                             runtime.GetDeviceSpec(), ann.OptimizerOptions())
    net_id, _ = runtime.LoadNetwork(opt)
    in_names = parser.GetSubgraphInputTensorNames(0)
    out_names = parser.GetSubgraphOutputTensorNames(0)
    in_info = [parser.GetNetworkInputBindingInfo(0, n) for n in in_names]
    out_info = [parser.GetNetworkOutputBindingInfo(0, n) for n in out_names]
    phys = []
    for n, x in zip(in_names, inputs):
        p = perms.get(n)
        phys.append(np.ascontiguousarray(x.transpose(p) if p else x))
    ins = ann.make_input_tensors(in_info, phys)
    outs = ann.make_output_tensors(out_info)
    runtime.EnqueueWorkload(net_id, ins, outs)
    res = ann.workload_tensors_to_ndarray(outs)
    out = []
    for n, y in zip(out_names, res):
        p = perms.get(n)
        y = y.reshape([d for d in y.shape])
        out.append(y.transpose(np.argsort(p)) if p else y)
    return out


def run_armnn_isolated(path, inputs, tmp):
    """run_armnn in a child process: Arm NN asserts (aborts) on some
    models it does not support."""
    ins = []
    for i, x in enumerate(inputs):
        f = os.path.join(tmp, "armnn_in%d.npy" % i)
        np.save(f, x)
        ins.append(f)
    out = os.path.join(tmp, "armnn_out.npz")
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "armnn1", path,
                        out] + ins, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        lines = [l for l in p.stdout.splitlines()
                 if l.strip() and not l.startswith(("Your ArmNN", "INFO"))]
        why = lines[-1] if lines else ""
        if p.returncode < 0:
            why = "Arm NN aborted (signal %d): %s" % (-p.returncode, why)
        raise RuntimeError(why)
    z = np.load(out)
    return [z["out%d" % i] for i in range(len(z.files))]


def cmd_armnn1(args):
    outs = run_armnn(args.model, [np.load(f) for f in args.inputs])
    np.savez(args.out, **{"out%d" % i: y for i, y in enumerate(outs)})
    return 0


def cmd_armnn(args):
    import pyarmnn as ann
    print("Arm NN %s (pyarmnn), CpuRef backend" % ann.ARMNN_VERSION)
    rows = []
    with open(os.path.join(args.dir, "manifest.txt")) as f:
        manifest = [l.split(" ", 4) for l in f.read().splitlines() if l]
    counts = {"agree": 0, "differ": 0, "rejected": 0, "skipped": 0}
    with tempfile.TemporaryDirectory() as tmp:
        for name, bound, _, armnn, what in manifest:
            path = os.path.join(args.dir, name + ".tflite")
            data = open(path, "rb").read()
            rng = np.random.default_rng(7)
            row = {"model": name}
            try:
                xs = make_inputs(data, rng)
                ref = run_quill(args.quill, os.path.join(args.dir, name + ".qir"),
                                xs, tmp)
            except MissingKernel as e:
                row["status"] = "skipped: " + str(e)
                counts["skipped"] += 1
                rows.append(row)
                print("skip     %-22s %s" % (name, e))
                continue
            try:
                got = run_armnn_isolated(path, xs, tmp)
                d = max(difference(g.reshape(e.shape), e) for g, e in zip(got, ref))
                row["diff"] = d
                key = "agree" if d <= float(bound) or (
                    "f32" in name and d <= 1e-5) else "differ"
                counts[key] += 1
                row["status"] = key
                print("%-8s %-22s max difference %g (Quill vs TFLite bound %s)" % (
                    key, name, d, bound))
            except Exception as e:  # noqa: BLE001 - reported, not failed
                msg = str(e).replace("\n", " ")[:160]
                row["status"] = "rejected: " + msg
                counts["rejected"] += 1
                print("rejected %-22s %s" % (name, msg))
            rows.append(row)
    print("Arm NN: %(agree)d agree, %(differ)d differ, %(rejected)d rejected, "
          "%(skipped)d skipped (report only)" % counts)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


def cmd_run(args):
    data = open(args.model, "rb").read()
    xs = [np.load(f) for f in args.inputs]
    outs = run_tflite(data, "REF", xs)
    for f, y in zip(args.output or [], outs):
        np.save(f, y)
    for y in outs if not args.output else []:
        print(y)
    return 0


def cmd_schema(args):
    """schema.h against the flatc-generated `tflite` package."""
    import tflite
    text = open(args.schema_h).read()
    bad = 0
    checked = 0

    def check(what, mine, theirs):
        nonlocal bad, checked
        checked += 1
        if mine != theirs:
            bad += 1
            print("MISMATCH %s: schema.h %s, tflite package %s" % (what, mine, theirs))

    for name, code in re.findall(r"X\((\w+), (\d+)\)", text):
        if hasattr(tflite.BuiltinOperator, name):
            check("BuiltinOperator." + name, int(code),
                  getattr(tflite.BuiltinOperator, name))
        elif hasattr(tflite.BuiltinOptions, name):
            check("BuiltinOptions." + name, int(code),
                  getattr(tflite.BuiltinOptions, name))
        else:
            bad += 1
            print("UNKNOWN name %s" % name)
    for name, code in re.findall(r"TFL_(\w+) = (\d+)", text.split(
            "enum BuiltinOperator")[0]):
        check("TensorType." + name, int(code), getattr(tflite.TensorType, name))

    # Field ids: the generated accessor of a field reads vtable offset
    # 4 + 2 * id. Map schema.h enum prefixes to generated classes.
    tables = {
        "MODEL": "Model", "OPCODE": "OperatorCode", "SUBGRAPH": "SubGraph",
        "TENSOR": "Tensor", "QUANT": "QuantizationParameters",
        "OPERATOR": "Operator", "BUFFER": "Buffer", "METADATA": "Metadata",
        "TENSORMAP": "TensorMap", "SIGDEF": "SignatureDef",
        "CONV2D": "Conv2DOptions", "DWCONV": "DepthwiseConv2DOptions",
        "POOL": "Pool2DOptions", "FC": "FullyConnectedOptions",
        "USLSTM": "UnidirectionalSequenceLSTMOptions",
        "SOFTMAX": "SoftmaxOptions", "CONCAT": "ConcatenationOptions",
        "ADD": "AddOptions", "MUL": "MulOptions", "RESHAPE": "ReshapeOptions",
        "REDUCER": "ReducerOptions", "RESIZE_BILINEAR": "ResizeBilinearOptions",
        "RESIZE_NEAREST": "ResizeNearestNeighborOptions",
        "BMM": "BatchMatMulOptions", "LEAKY_RELU": "LeakyReluOptions",
        "GATHER": "GatherOptions", "SPLIT": "SplitOptions",
        "SQUEEZE": "SqueezeOptions", "STRIDED_SLICE": "StridedSliceOptions",
        "CAST": "CastOptions", "MIRROR_PAD": "MirrorPadOptions",
        "GELU": "GeluOptions", "TCONV": "TransposeConvOptions",
    }
    # generated accessor names for schema.h's short field names
    rename = {"FUSED_ACTIVATION": "FusedActivationFunction",
              "DILATION_W": "DilationWFactor", "DILATION_H": "DilationHFactor",
              "DEPRECATED_BUILTIN_CODE": "DeprecatedBuiltinCode",
              "BUILTIN_OPTIONS_TYPE": "BuiltinOptionsType",
              "BUILTIN_OPTIONS_2_TYPE": "BuiltinOptions2Type",
              "DETAILS_TYPE": "DetailsType", "FILTER_WIDTH": "FilterWidth",
              "FILTER_HEIGHT": "FilterHeight", "KEEP_DIMS": "KeepDims",
              "NUM_SPLITS": "NumSplits", "DIMS": "SqueezeDims",
              "IN_DATA_TYPE": "InDataType", "OUT_DATA_TYPE": "OutDataType",
              "SIGNATURE_KEY": "SignatureKey", "QUANTIZED_DIMENSION":
              "QuantizedDimension", "ALPHA": "Alpha", "APPROXIMATE": "Approximate"}
    fields = re.findall(r"TFL_([A-Z0-9_]+) = (\d+)", text)
    for full, idx in fields:
        for prefix in sorted(tables, key=len, reverse=True):
            if not full.startswith(prefix + "_"):
                continue
            cls = getattr(tflite, tables[prefix])
            field = full[len(prefix) + 1:]
            acc = rename.get(field) or "".join(
                w.capitalize() for w in field.lower().split("_"))
            fn = getattr(cls, acc, None)
            if fn is None and field.startswith("DEPRECATED"):
                break  # deprecated fields have no accessor
            if fn is None:
                bad += 1
                print("NO ACCESSOR %s.%s (%s)" % (tables[prefix], acc, full))
                break
            src = inspect.getsource(fn)
            off = int(re.search(r"Offset\((\d+)\)", src).group(1))
            check("%s.%s" % (tables[prefix], acc), int(idx), (off - 4) // 2)
            break
    # Defaults schema.h spells out (generated accessors return them).
    def default(cls, acc):
        src = inspect.getsource(getattr(getattr(tflite, cls), acc))
        return src.strip().splitlines()[-1].split("return ")[1].strip()
    for cls, acc, macro in (("OperatorCode", "Version", "TFL_OPCODE_VERSION_DEFAULT"),
                            ("Conv2DOptions", "DilationWFactor", "TFL_DILATION_DEFAULT"),
                            ("DepthwiseConv2DOptions", "DilationHFactor",
                             "TFL_DILATION_DEFAULT"),
                            ("AddOptions", "PotScaleInt16",
                             "TFL_POT_SCALE_INT16_DEFAULT")):
        mine = re.search(r"#define %s (\w+)" % macro, text).group(1)
        check("default %s.%s" % (cls, acc), mine.lower(), default(cls, acc).lower())
    print("schema.h: %d constants checked, %d mismatches" % (checked, bad))
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compare")
    c.add_argument("dir")
    c.add_argument("quill")
    c.add_argument("--samples", type=int, default=3)
    c.add_argument("--json")
    c.add_argument("--slack", type=float, default=0,
                   help="steps added to every int8 bound (another runtime)")
    d = sub.add_parser("dataset")
    d.add_argument("dir")
    d.add_argument("quill")
    d.add_argument("data")
    d.add_argument("--labels")
    a = sub.add_parser("armnn")
    a.add_argument("dir")
    a.add_argument("quill")
    a.add_argument("--json")
    a1 = sub.add_parser("armnn1")
    a1.add_argument("model")
    a1.add_argument("out")
    a1.add_argument("inputs", nargs="*")
    r = sub.add_parser("run")
    r.add_argument("model")
    r.add_argument("inputs", nargs="*")
    r.add_argument("--output", nargs="*")
    s = sub.add_parser("schema")
    s.add_argument("schema_h")
    args = ap.parse_args()
    return {"compare": cmd_compare, "run": cmd_run, "schema": cmd_schema,
            "dataset": cmd_dataset, "armnn": cmd_armnn,
            "armnn1": cmd_armnn1}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
