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
