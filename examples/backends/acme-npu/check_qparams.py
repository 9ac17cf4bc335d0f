#!/usr/bin/python3
"""Validate an ACME NPU quantization parameter file against its model.

    /usr/bin/python3 check_qparams.py MODEL.qir MODEL.qparams.json

The JSON file is what the plugin's exporter `acme-qparams` writes
(qparams.c); MODEL.qir the quantized model it was written from. Checks:

  * the header: format "acme-npu-qparams", version 1, the graph's name;
  * every entry: int8, 8 bits, zero point 0 (acme-npu.json quantizes
    symmetrically), a power-of-two scale, [qmin, qmax] = [-128, 127] for
    activations and [-127, 127] (narrow range) for weights, and
    min/max = (qmin - zp) * scale, (qmax - zp) * scale;
  * activations: one entry per quantized op result of the .qir, matched by
    the op's location name and mnemonic, with the scale and zero point of
    that op's result type;
  * params: one entry per quantized constant, per channel (one scale per
    element of the quantized axis: a conv weight's output channels, axis
    0; a matmul weight's columns, axis 1), matching a constant of the
    .qir with that axis and those scales.

Prints "OK: N activations, M params (K custom ops)" or the first problems
and exits 1. Standard library only.
"""
import json
import math
import re
import sys

OP_LINE = re.compile(r'^\s*%(\S+) = (\w+) .* : (.*) loc\("([^"]*)"\)\s*$')
QUANT = re.compile(r'!quant\.uniform<(\w+)(?:<(-?\d+):(-?\d+)>)?:f32'
                   r'(?::(\d+))?, (\{[^}]*\}|[^>]*)>')
SHAPE = re.compile(r'tensor<((?:\d+x)*)')


def pow2(s):
    return s > 0 and math.frexp(s)[0] == 0.5


def parse_qir(path):
    """[(mnemonic, loc, quant or None, dims)] for every op line."""
    ops = []
    for line in open(path):
        m = OP_LINE.match(line)
        if not m:
            continue
        _, op, types, loc = m.groups()
        q = QUANT.search(types)
        dims = [int(d) for d in SHAPE.search(types).group(1).split("x") if d]
        quant = None
        if q:
            storage, lo, hi, axis, params = q.groups()
            if params.startswith("{"):
                pairs = [p.split(":") for p in params[1:-1].split(",")]
                scales = [float(s) for s, _ in pairs]
                zps = [int(z) for _, z in pairs]
            else:
                s, _, z = params.partition(":")
                scales, zps = [float(s)], [int(z or 0)]
            quant = {"storage": storage, "axis": axis, "scales": scales,
                     "zps": zps, "range": (lo, hi)}
        ops.append((op, loc, quant, dims))
    return ops


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    qir, js = sys.argv[1:]
    doc = json.load(open(js))
    errors = []

    def check(cond, msg):
        if not cond:
            errors.append(msg)

    check(doc.get("format") == "acme-npu-qparams", "format")
    check(doc.get("version") == 1, "version")
    graph = re.search(r"^func @(\w+)", open(qir).read(), re.M)
    check(graph and doc.get("graph") == graph.group(1), "graph name")

    def check_entry(name, e, qmin):
        check(e["dtype"] == "int8" and e["bits"] == 8, f"{name}: not int8")
        check((e["qmin"], e["qmax"]) == (qmin, 127), f"{name}: range")
        scales = e["scale"] if isinstance(e["scale"], list) else [e["scale"]]
        zps = e["zero_point"] if isinstance(e["zero_point"], list) \
            else [e["zero_point"]]
        mins = e["min"] if isinstance(e["min"], list) else [e["min"]]
        maxs = e["max"] if isinstance(e["max"], list) else [e["max"]]
        for s, z, lo, hi in zip(scales, zps, mins, maxs):
            check(pow2(s), f"{name}: scale {s} is not a power of two")
            check(z == 0, f"{name}: zero point {z} (symmetric expected)")
            check(lo == (qmin - z) * s and hi == (127 - z) * s,
                  f"{name}: min/max {lo}/{hi} do not match scale {s}")
        return scales, zps

    ops = parse_qir(qir)
    results = [(op, loc, q) for op, loc, q, _ in ops
               if op != "constant" and q is not None]
    consts = [(q, dims) for op, _, q, dims in ops
              if op == "constant" and q is not None]
    acts = doc.get("activations", {})
    check(len(acts) == len(results),
          f"{len(acts)} activations, the model has {len(results)} "
          f"quantized results")
    for name, e in acts.items():
        scales, zps = check_entry(name, e, -128)
        base = name.split("#")[0]
        match = [q for op, loc, q in results if loc == base and op == e["op"]]
        check(match, f"{name}: no {e['op']} op at loc {base!r} in {qir}")
        check(any(q["scales"] == scales and q["zps"] == zps for q in match),
              f"{name}: scale/zero point differ from the model's")
    params = doc.get("params", {})
    check(len(params) == len(consts),
          f"{len(params)} params, the model has {len(consts)} quantized "
          f"constants")
    for name, e in params.items():
        scales, _ = check_entry(name, e, -127)
        axis = e.get("axis")
        check(axis is not None, f"{name}: not per channel")
        check(any(q["axis"] is not None and int(q["axis"]) == axis and
                  len(scales) == dims[axis] and q["scales"] == scales
                  for q, dims in consts),
              f"{name}: no quantized constant of the model has axis {axis} "
              f"and these {len(scales)} scales")
    customs = sum(1 for e in acts.values() if e["op"] == "custom")
    if errors:
        print("\n".join(errors[:20]))
        sys.exit(1)
    print(f"OK: {len(acts)} activations, {len(params)} params "
          f"({customs} custom ops)")


if __name__ == "__main__":
    main()
