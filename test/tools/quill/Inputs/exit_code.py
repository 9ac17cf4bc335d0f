"""Run a command, pass its stderr and stdout through (in that order, both
to stdout) and end with a line `exit code: N`; always exit 0, so that lit
tests can FileCheck the exact exit code.

Usage: /usr/bin/python3 exit_code.py CMD ARGS...
"""
import subprocess
import sys

p = subprocess.run(sys.argv[1:], capture_output=True, text=True)
sys.stdout.write(p.stderr)
sys.stdout.write(p.stdout)
print("exit code: %d" % p.returncode)
