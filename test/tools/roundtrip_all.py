#!/usr/bin/env python3
"""Check that every .qir file under the given roots round-trips exactly.

For each file, each `// -----` chunk that is meant to be valid (it has no
expected-* directive) is printed by quill-opt (out1), out1 is printed again
(out2), and out1 must equal out2 byte for byte; quill-opt's own
--verify-roundtrip must pass too. Chunks that expect diagnostics are
skipped. Prints the counts and exits non-zero on any failure.

usage: roundtrip_all.py QUILL_OPT ROOT...
"""
import os
import re
import subprocess
import sys
import tempfile

SEP = re.compile(r"^\s*// -----.*$", re.M)


def run(tool, args, text):
    return subprocess.run([tool] + args, input=text.encode(),
                          capture_output=True, timeout=60)


def main():
    tool, roots = sys.argv[1], sys.argv[2:]
    files = []
    for root in roots:
        for d, _, names in os.walk(root):
            if "Inputs" in d.split(os.sep):
                continue
            files += [os.path.join(d, n) for n in names if n.endswith(".qir")]
    passed = failed = skipped = 0
    for path in sorted(files):
        text = open(path, encoding="utf-8", errors="replace").read()
        for i, chunk in enumerate(SEP.split(text)):
            if "expected-" in chunk or "func" not in chunk:
                skipped += 1
                continue
            where = f"{path} chunk {i}"
            r1 = run(tool, ["-"], chunk)
            if r1.returncode != 0:
                print(f"FAIL {where}: does not parse/verify:\n{r1.stderr.decode()}")
                failed += 1
                continue
            r2 = run(tool, ["-"], r1.stdout.decode())
            r3 = run(tool, ["-", "--verify-roundtrip"], chunk)
            if r2.returncode != 0 or r2.stdout != r1.stdout:
                print(f"FAIL {where}: print -> parse -> print differs")
                failed += 1
            elif r3.returncode != 0:
                print(f"FAIL {where}: --verify-roundtrip: {r3.stderr.decode()}")
                failed += 1
            else:
                passed += 1
    print(f"roundtrip: {passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
