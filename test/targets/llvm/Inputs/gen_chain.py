"""gen_chain.py N [HW] - a chain of N float elementwise ops as textual IR (for
long-chain.test): neg, add of one of five constants, sub of another,
mul by one of five constants near 1, in turn, on a [1,16,HW,HW] tensor
(HW = 8 by default). Many stages have the same
code (the LLVM target shares them); the graph is far bigger than one chunk
of the entry function."""
import sys

n = int(sys.argv[1])
hw = int(sys.argv[2]) if len(sys.argv) > 2 else 8
t = "tensor<1x16x%dx%dxf32>" % (hw, hw)
c = "tensor<1x16x1x1xf32>"
out = ["func @chain(%%x: %s) -> %s {" % (t, t)]
for k in range(5):
    vals = ", ".join("%.3f" % ((k + 1) * 0.01 * (1 if j % 2 else -1) + j * 1e-3)
                     for j in range(16))
    out.append("  %%a%d = constant {value = dense<[%s]> : %s} : %s"
               % (k, vals, c, c))
    vals = ", ".join("%.4f" % (0.98 + 0.01 * k + j * 1e-4) for j in range(16))
    out.append("  %%m%d = constant {value = dense<[%s]> : %s} : %s"
               % (k, vals, c, c))
prev = "%x"
for i in range(n):
    kind = i % 4
    if kind == 0:
        out.append("  %%v%d = neg %s : %s" % (i, prev, t))
    elif kind == 1:
        out.append("  %%v%d = add %s, %%a%d : %s" % (i, prev, (i // 4) % 5, t))
    elif kind == 2:
        out.append("  %%v%d = sub %s, %%a%d : %s" % (i, prev, (i // 4 + 2) % 5,
                                                    t))
    else:
        out.append("  %%v%d = mul %s, %%m%d : %s" % (i, prev, (i // 4) % 5, t))
    prev = "%%v%d" % i
out += ["  return %s" % prev, "}", ""]
sys.stdout.write("\n".join(out))
