#!/usr/bin/env python3
"""mca-loop.py - llvm-mca's estimate of the Arm kernels' inner loop.

Finds, in an AArch64 assembly file from `quill compile --emit=asm`, the
innermost loop (a label up to the backward branch to it, with no other
label inside) that holds the most multiply-accumulates (16 per sdot, 32
per smmla on 128-bit vectors, 4 per smlal/smlal2 on .4s: the depthwise
kernel), runs llvm-mca-19 on it for the
given CPU and prints cycles per iteration and MACs per cycle:

  build/quill compile test/targets/llvm/Inputs/qconv_big.qir -o big.s \\
      --emit=asm --target aarch64-linux-gnu --mcpu cortex-a76
  scripts/mca-loop.py big.s cortex-a76 [neoverse-n1 ...]

docs/llvm-target.md lists the numbers against each core's peak.
"""
import re
import subprocess
import sys

LABEL = re.compile(r'^(\.?[A-Za-z0-9_$.]+):')
ITER = 300


def loops(lines):
    for i, l in enumerate(lines):
        m = LABEL.match(l)
        if not m:
            continue
        back = re.compile(r'^(b\.\w+|b|cbnz|cbz)\s+(\w+,\s*)?' +
                          re.escape(m.group(1)) + r'$')
        for j in range(i + 1, len(lines)):
            if LABEL.match(lines[j]):
                break  # another block first: not an innermost loop
            if back.match(lines[j].strip()):
                yield m.group(1), [x for x in lines[i + 1:j + 1]
                                   if x.strip() and
                                   not x.strip().startswith(('.', '//'))]
                break


def macs(body):
    """Multiply-accumulates of 128-bit sdot (16), smmla (32) and the
    depthwise kernel's widening smlal/smlal2 on .4s (4)."""
    n = 0
    for x in body:
        if re.match(r'\s*sdot\b', x):
            n += 16
        elif re.match(r'\s*smmla\b', x):
            n += 32
        elif re.match(r'\s*[su]mlal2?\s+v\d+\.4s', x):
            n += 4
    return n


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    lines = open(sys.argv[1]).read().split('\n')
    found = list(loops(lines))
    if not found or not max(macs(b) for _, b in found):
        sys.exit('mca-loop: no loop with sdot/smmla/smlal in ' + sys.argv[1])
    name, body = max(found, key=lambda lb: macs(lb[1]))
    m = macs(body)
    for cpu in sys.argv[2:]:
        out = subprocess.run(
            ['llvm-mca-19', '-mtriple=aarch64', '-mcpu=' + cpu,
             '-iterations=%d' % ITER], input='\n'.join(body) + '\n',
            capture_output=True, text=True, check=True).stdout
        cyc = int(re.search(r'Total Cycles:\s+(\d+)', out).group(1)) / ITER
        print('%s %s: loop %s, %d instructions, %d MACs: %.1f cycles per '
              'iteration, %.1f MAC/cycle' % (sys.argv[1], cpu, name,
                                             len(body), m, cyc, m / cyc))


if __name__ == '__main__':
    main()
