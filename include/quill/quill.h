/*
 * quill.h - the Quill C API: everything, in one include.
 *
 *   #include <quill/quill.h>       cc app.c $(pkg-config --cflags --libs quill)
 *                                  or find_package(Quill) + Quill::quill
 *
 * Topic headers (each may be included alone):
 *
 *   quill/ir.h         contexts, diagnostics, types, attributes, modules,
 *                      graphs, ops, printing, parsing, verification
 *   quill/passes.h     the pass manager, rewrite patterns, run-time pass
 *                      and pattern registration, pass plugins
 *   quill/plugin.h     what a pass plugin includes (QUILL_PLUGIN)
 *   quill/frontends.h  loading models (.onnx, .qir), ONNX import, .npy and
 *                      TensorProto tensors
 *   quill/quantize.h   backend configs, calibration datasets (files or
 *                      memory), quill_quantize (the `quill quantize`
 *                      pipeline)
 *   quill/run.h        host tensors and the reference interpreter
 *   quill/compile.h    ONNX export, object code and TFLite FlatBuffers, in
 *                      memory or to files
 *
 * Conventions of every function (docs/c-api.md lists them all):
 *   - Handles are opaque pointers. A quill_context owns everything made in
 *     it (types, attributes, backend configs, registered passes, loaded
 *     plugins, diagnostics state) and is used by one thread at a time; a
 *     quill_module owns its graphs, a graph its ops and values.
 *   - Every _create has a _destroy; functions returning memory say how to
 *     free it (quill_free(ctx, p, size), quill_string_free, ..._destroy).
 *   - Fallible calls return a quill_status (QUILL_OK == 0) or NULL, after
 *     reporting a located diagnostic through the context's handler
 *     (quill_diag_set_handler; the default prints to stderr). Nothing
 *     aborts or exits on bad input.
 *
 * The library's exported symbols are exactly the declarations of the
 * public headers (include/quill/public-headers.txt).
 */
#ifndef QUILL_QUILL_H
#define QUILL_QUILL_H

/* The version of these headers. Also the version of the package and of
 * libquill.so (its SONAME carries the major number); CMake reads it from
 * here. */
#define QUILL_VERSION_MAJOR 0
#define QUILL_VERSION_MINOR 1
#define QUILL_VERSION_PATCH 0

#include "ir.h"
#include "passes.h"
#include "plugin.h"
#include "frontends.h"
#include "quantize.h"
#include "run.h"
#include "compile.h"

QUILL_BEGIN_DECLS

/* The library's version at run time, "MAJOR.MINOR.PATCH" (static string),
 * to compare with the QUILL_VERSION_* a program was compiled against. */
const char *quill_version(void);

QUILL_END_DECLS

#endif /* QUILL_QUILL_H */
