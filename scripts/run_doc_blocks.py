#!/usr/bin/env python3
"""run_doc_blocks.py - run the runnable code blocks of the users' guides.

    run_doc_blocks.py --prefix PREFIX [--venv DIR] [--keep] GUIDE.md...
    run_doc_blocks.py --list GUIDE.md...

A block is runnable when its fence says so:

    ```sh runnable                      always run
    ```sh runnable requires=llvm        run only if `quill compile -o x.o`
                                        works (the LLVM target is built);
                                        otherwise reported SKIPPED
    ```sh runnable requires=tflite      run only if a Python with the TFLite
                                        interpreter exists (scripts/pyenv.sh);
                                        otherwise SKIPPED

Other blocks (```sh, ```c, ...) are shown to the reader and never run.

The blocks of one guide run in order, each with `bash -e -o pipefail`, in
one fresh temporary directory per guide (so a block sees the files the
blocks before it wrote), with this environment:

    QUILL_SRC      the repository root (examples/, the digits model)
    QUILL_PREFIX   the installed package (`cmake --install`): headers,
                   libquill.so, quill.pc, QuillConfig.cmake, the tools
    PATH           $QUILL_PREFIX/bin, then /usr/local/bin:/usr/bin:/bin
                   (so `python3` is the system one, with torch, onnx, numpy)
    PKG_CONFIG_PATH  $QUILL_PREFIX/lib/pkgconfig
    TFLITE_PYTHON  a Python with tflite_runtime (requires=tflite blocks)

A block that exits non-zero fails the run: its source and output are
printed and the exit status is 1. A summary line per guide counts the
blocks run and skipped. ctest's docs.guides runs every guide (with the
package installed by install.setup). --keep leaves the directories,
--verbose prints every block's output, --list only lists the blocks.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^```(\w+)\s+runnable\b(.*)$")
KNOWN_REQUIRES = {"llvm", "tflite"}


def extract(path):
    """[(line, lang, {requires}, source)] of the runnable blocks."""
    blocks, cur = [], None
    for n, line in enumerate(open(path), 1):
        if cur is None:
            m = FENCE.match(line.rstrip("\n"))
            if m:
                req = set()
                for word in m.group(2).split():
                    k, _, v = word.partition("=")
                    if k != "requires" or not v:
                        sys.exit(f"{path}:{n}: unknown block option {word!r}")
                    req |= set(v.split(","))
                if req - KNOWN_REQUIRES:
                    sys.exit(f"{path}:{n}: unknown requirement "
                             f"{sorted(req - KNOWN_REQUIRES)}")
                if m.group(1) != "sh":
                    sys.exit(f"{path}:{n}: only sh blocks can be runnable")
                cur = (n, m.group(1), req, [])
            elif line.startswith("```") and "runnable" in line:
                sys.exit(f"{path}:{n}: malformed runnable fence {line!r}")
        elif line.startswith("```"):
            blocks.append((cur[0], cur[1], cur[2], "".join(cur[3])))
            cur = None
        else:
            cur[3].append(line)
    if cur is not None:
        sys.exit(f"{path}:{cur[0]}: unterminated block")
    return blocks


def llvm_available(env, tmp):
    """None if `quill compile -o x.o` works, else the reason it does not."""
    qir = os.path.join(tmp, "probe.qir")
    with open(qir, "w") as f:
        f.write("func @probe(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
                "  %y = relu %x : tensor<4xf32>\n  return %y\n}\n")
    p = subprocess.run(["quill", "compile", qir, "-o",
                        os.path.join(tmp, "probe.o")], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if p.returncode == 0:
        return None
    if "not built" in p.stdout:
        return "the LLVM target is not built"
    return None  # built but failing: run the block and let it fail


def tflite_python(src, venv):
    """A Python with tflite_runtime, or None."""
    env = dict(os.environ)
    if venv:
        env["QUILL_VENV"] = os.path.abspath(venv)
    p = subprocess.run([os.path.join(src, "scripts", "pyenv.sh")], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    py = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
    return py if p.returncode == 0 and os.path.exists(py) else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("guides", nargs="+")
    ap.add_argument("--prefix", help="the installed package")
    ap.add_argument("--src", default=os.path.dirname(
        os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--venv", help="venv for scripts/pyenv.sh")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="print every block's output")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    all_blocks = [(g, extract(g)) for g in a.guides]
    if a.list:
        for g, blocks in all_blocks:
            for line, _, req, src in blocks:
                tag = f" requires={','.join(sorted(req))}" if req else ""
                print(f"{g}:{line}{tag}: {src.splitlines()[0] if src else ''}")
        return 0
    if not a.prefix or not os.path.exists(
            os.path.join(a.prefix, "bin", "quill")):
        sys.exit("run_doc_blocks: --prefix must be an installed Quill")
    prefix, src = os.path.abspath(a.prefix), os.path.abspath(a.src)
    env = {k: v for k, v in os.environ.items()
           if k in ("HOME", "LANG", "LC_ALL", "TERM", "TMPDIR", "USER",
                    "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS")}
    env.update(QUILL_SRC=src, QUILL_PREFIX=prefix,
               PATH=os.pathsep.join([os.path.join(prefix, "bin"),
                                     "/usr/local/bin", "/usr/bin", "/bin"]),
               PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
    probe_dir = tempfile.mkdtemp(prefix="quill-doc-probe-")
    why_not = {"llvm": llvm_available(env, probe_dir)}
    shutil.rmtree(probe_dir, ignore_errors=True)
    if any("tflite" in req for _, bl in all_blocks for _, _, req, _ in bl):
        py = tflite_python(src, a.venv)
        if py:
            env["TFLITE_PYTHON"] = py
        why_not["tflite"] = None if py else \
            "no Python with tflite_runtime (scripts/pyenv.sh failed)"
    failed = 0
    for guide, blocks in all_blocks:
        work = tempfile.mkdtemp(prefix="quill-doc-")
        ran = skipped = 0
        for line, _, req, source in blocks:
            reasons = [why_not[r] for r in sorted(req) if why_not.get(r)]
            if reasons:
                print(f"{guide}:{line}: SKIPPED ({'; '.join(reasons)})")
                skipped += 1
                continue
            p = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", source],
                               cwd=work, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            if p.returncode != 0:
                print(f"{guide}:{line}: FAILED (exit {p.returncode}) in "
                      f"{work}\n--- block ---\n{source}--- output ---\n"
                      f"{p.stdout}")
                failed += 1
                break
            ran += 1
            if a.verbose:
                print(f"{guide}:{line}: ok\n{p.stdout}", end="")
        print(f"{guide}: {ran} of {len(blocks)} runnable blocks run, "
              f"{skipped} skipped{'' if not failed else ', FAILED'}")
        if not a.keep and not failed:
            shutil.rmtree(work, ignore_errors=True)
        if failed:
            break
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
