/*
 * quill/frontends.h - loading models and tensors: quill_model_load (ONNX
 * protobuf or textual IR, by file or from memory), the ONNX importer and
 * its options (frontends/onnx/onnx.h), ONNX TensorProto files
 * (frontends/onnx/tensor_file.h) and NumPy .npy files
 * (frontends/npy/npy.h).
 */
#ifndef QUILL_API_FRONTENDS_H
#define QUILL_API_FRONTENDS_H

#include "ir.h"
#include "frontends/onnx/onnx.h"
#include "frontends/onnx/tensor_file.h"
#include "frontends/npy/npy.h"

QUILL_BEGIN_DECLS

typedef enum quill_model_format {
  QUILL_MODEL_AUTO = 0, /* textual IR if the name ends in ".qir", else ONNX */
  QUILL_MODEL_ONNX,     /* an ONNX ModelProto */
  QUILL_MODEL_QIR,      /* Quill's textual IR (docs/textual-ir.md) */
} quill_model_format;

typedef struct quill_model_options {
  quill_model_format format;      /* default QUILL_MODEL_AUTO */
  const quill_onnx_options *onnx; /* ONNX import options (input shapes,
                                     bindings, external data directory);
                                     NULL: defaults. Borrowed for the call. */
} quill_model_options;

/* Load a model from the file at `path`: an ONNX model (imported; see
 * frontends/onnx/onnx.h) or textual IR (parsed). Either way the module is
 * verified. opts may be NULL (defaults). Returns a new module, to be
 * destroyed with quill_module_destroy(), or NULL after error diagnostics
 * (unreadable file: located at the path; bad model: at the offending node
 * or line) or on allocation failure. */
quill_module *quill_model_load(quill_context *ctx, const char *path,
                               const quill_model_options *opts);

/* Load a model from `len` bytes at `data` (not retained; need not be
 * NUL-terminated). `name` names the model in diagnostics and, with
 * QUILL_MODEL_AUTO, picks the format by its extension (NULL: "<buffer>",
 * ONNX); relative external-data paths of an ONNX model resolve against
 * opts->onnx->base_dir (NULL: the current directory). Same ownership and
 * failure behaviour as quill_model_load(). */
quill_module *quill_model_load_buffer(quill_context *ctx, const void *data,
                                      size_t len, const char *name,
                                      const quill_model_options *opts);

QUILL_END_DECLS

#endif /* QUILL_API_FRONTENDS_H */
