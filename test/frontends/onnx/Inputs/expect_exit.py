"""Run a command and check its exit status.

Usage: expect_exit.py STATUS COMMAND [ARG]...

Runs COMMAND, copies its stderr and then its stdout to our stdout (so a
RUN line can FileCheck the diagnostics), and exits 0 if COMMAND exited with
STATUS, else 1 (with a message). Unlike lit's `not`, this pins the exact
status: quill-translate must exit 1 on bad input, not crash or exit 2.
"""
import subprocess
import sys


def main():
    want = int(sys.argv[1])
    p = subprocess.run(sys.argv[2:], capture_output=True, text=True,
                       errors="replace")
    sys.stdout.write(p.stderr)
    sys.stdout.write(p.stdout)
    if p.returncode != want:
        print("expect_exit.py: expected exit status %d, got %d"
              % (want, p.returncode))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
