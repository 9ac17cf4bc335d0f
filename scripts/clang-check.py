#!/usr/bin/env python3
"""clang-check.py - every C file of a GCC build compiled again by clang-19
with -fsyntax-only and the same flags (-Wall -Wextra -Werror ...).

CI's fuzzing build uses clang, whose -Wextra differs from GCC's (it rejects
positional struct initializers that stop before the last field, implicit
int -> float conversions that change the value, ...); this check finds
such errors in the test step, minutes before the fuzzing step would.

    clang-check.py BUILD_DIR [--jobs N]

Reads BUILD_DIR/compile_commands.json (CMAKE_EXPORT_COMPILE_COMMANDS).
Exit 0 when every file compiles, 1 with clang's messages otherwise, 77
(skipped) when clang-19 is not installed.
"""
import argparse
import concurrent.futures
import json
import os
import shlex
import shutil
import subprocess
import sys

CLANG = "clang-19"


def clang_args(command):
    """The compile command with clang and -fsyntax-only instead of -c/-o."""
    argv = shlex.split(command)
    out = [CLANG, "-fsyntax-only"]
    skip = False
    for a in argv[1:]:
        if skip:
            skip = False
        elif a in ("-o", "-MT", "-MF"):
            skip = True
        elif a in ("-c", "-MD"):
            pass
        else:
            out.append(a)
    return out


def check(entry):
    r = subprocess.run(clang_args(entry["command"]), cwd=entry["directory"],
                       capture_output=True, text=True)
    return entry["file"], r.returncode, r.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    if shutil.which(CLANG) is None:
        print(f"{CLANG} not installed: skipped")
        return 77
    with open(os.path.join(args.build, "compile_commands.json")) as f:
        entries = [e for e in json.load(f) if e["file"].endswith(".c")]
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for name, rc, err in pool.map(check, entries):
            if rc != 0:
                failed += 1
                sys.stdout.write(f"== {name}\n{err}")
    print(f"{len(entries) - failed} of {len(entries)} files compile with {CLANG}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
