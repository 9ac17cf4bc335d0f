# lit configuration for Quill, in the manner of MLIR's: .qir (and .test)
# files are tests; Inputs/ folders hold auxiliary files; the Quill tools and
# LLVM's FileCheck/not/count/split-file are put on PATH.
import os
import lit.formats

config.name = "Quill"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".qir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.quill_obj_root, "test")

config.environment["FILECHECK_OPTS"] = "-enable-var-scope"
for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

path = os.pathsep.join([config.quill_tools_dir, config.llvm_tools_dir,
                        config.environment.get("PATH", os.environ["PATH"])])
config.environment["PATH"] = path
config.substitutions.append(("%quill_src", config.quill_src_root))
config.substitutions.append(("%python", config.python_executable))
# the build directory (bench programs: bench-stage-profile, ...)
config.substitutions.append(("%quill_bin", config.quill_tools_dir))

# Graphviz's `dot` (Debian graphviz) renders --view-graph=*.svg; tests that
# need it say `REQUIRES: dot`.
import shutil
if shutil.which("dot"):
    config.available_features.add("dot")

# Debian's python3-torch (scripts/setup.sh installs it) makes small ONNX
# models in some tests, run by /usr/bin/python3; they say REQUIRES: torch.
if os.path.isdir("/usr/lib/python3/dist-packages/torch"):
    config.available_features.add("torch")

# The example plugins exist once ctest's install.plugins has run (lit runs
# after it under ctest); tests that load them say REQUIRES: plugins.
config.substitutions.append(("%plugins", config.quill_plugins_dir))
config.substitutions.append(("%bad_plugins", config.quill_bad_plugins_dir))
if os.path.exists(os.path.join(config.quill_plugins_dir, "libcount_ops.so")):
    config.available_features.add("plugins")

# The example vendor backend's plugin (examples/backends/acme-npu/, built by
# ctest's install.backend); tests that load it say REQUIRES: acme.
config.substitutions.append(("%acme", config.quill_acme_dir))
if os.path.exists(os.path.join(config.quill_acme_dir, "libacme_npu.so")):
    config.available_features.add("acme")

# The instruction paths this host can run, as the library answers
# (quill_llvm_isa_paths, the compiler's own source of truth): tests that
# run a forced path's JIT say REQUIRES: jit-avx2 (jit-avx-vnni, ...).
# Machines differ; a test never assumes the host has a path. Asked in a
# process of its own: a sanitizer build's library cannot load into lit's
# (then no path is listed and such tests are unsupported there).
import subprocess
import sys
_probe = r"""
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.quill_context_create.restype = ctypes.c_void_p
lib.quill_llvm_isa_name.restype = ctypes.c_char_p
ctx = ctypes.c_void_p(lib.quill_context_create(None, None))
opts = ctypes.create_string_buffer(4096)  # quill_llvm_options, set by init
lib.quill_llvm_options_init(opts)
paths = ctypes.c_uint(0)
if lib.quill_llvm_isa_paths(ctx, opts, ctypes.byref(paths), None) == 0:
    print(" ".join(lib.quill_llvm_isa_name(i).decode() for i in range(32)
                   if paths.value & (1 << i)))
lib.quill_context_destroy(ctx)
"""
try:
    _out = subprocess.run(
        [sys.executable, "-c", _probe,
         os.path.join(config.quill_tools_dir, "libquill.so.0")],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        timeout=60).stdout
    for _name in _out.split():
        config.available_features.add("jit-" + _name)
except (OSError, subprocess.SubprocessError):
    pass
