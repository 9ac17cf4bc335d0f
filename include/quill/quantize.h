/*
 * quill/quantize.h - quantization: backend configs (backends/backend.h),
 * calibration datasets from files or memory (passes/calib_data.h), and
 * quill_quantize, the pipeline of `quill quantize` in one call.
 *
 *   quill_calib_dataset *ds = quill_calib_dataset_create(ctx, graph);
 *   quill_calib_dataset_add(ds, &tensor, 1, NULL);      ... per sample
 *   quill_quantize_options o;
 *   quill_quantize_options_init(&o);
 *   o.backend = "tflite-int8";
 *   quill_status st = quill_quantize(module, &o, ds);   module is rewritten
 *   quill_calib_dataset_destroy(ds);
 */
#ifndef QUILL_API_QUANTIZE_H
#define QUILL_API_QUANTIZE_H

#include "ir.h"
#include "passes.h"
#include "backends/backend.h"
#include "passes/calib_data.h"

QUILL_BEGIN_DECLS

/* What quantization produces (docs/quantization.md). */
typedef enum quill_quantize_form {
  /* Integer ops (qconv2d, qmatmul, qadd, ... from fuse-qdq): what the
   * object-code and TFLite targets compile. */
  QUILL_QUANTIZE_INTEGER = 0,
  /* The reference QDQ form (float ops between dequantize and quantize,
   * integer weights, int32 biases): what ONNX QDQ export writes. */
  QUILL_QUANTIZE_REFERENCE,
} quill_quantize_form;

typedef struct quill_quantize_options {
  /* The backend config: a shipped name ("tflite-int8"; see
   * quill_backend_shipped_name) or a JSON file path. Required. May not
   * contain blanks or braces (it is written into the pipeline text). */
  const char *backend;
  quill_quantize_form form; /* default QUILL_QUANTIZE_INTEGER */
  /* Calibration data on disk (passes/calib_data.h: a directory, an .npy
   * file, a .txt list; "a,b" joins several), used when quill_quantize gets
   * no dataset. NULL: a dataset must be given. */
  const char *calib_path;
  size_t max_samples;     /* calibrate on the first N samples (0: all) */
  /* Ops to keep float, by location name or result value name, comma
   * separated (no blanks or braces), or NULL. */
  const char *keep_float;
  /* Extra pipelines (e.g. plugin passes), run before quantization on the
   * float model and after it on the quantized one, or NULL. */
  const char *before;
  const char *after;
  /* Pass manager options (IR dumps, timing, statistics and where they go);
   * NULL: verify after each pass, nothing else. With time_passes or
   * statistics set, quill_quantize prints the reports when it is done. */
  const quill_pass_manager_options *pass_options;
} quill_quantize_options;

/* Set the defaults above (everything 0/NULL: integer form). */
void quill_quantize_options_init(quill_quantize_options *o);

/* The pass pipeline quill_quantize runs for these options, spelled in
 * this one place (`quill quantize --print-pipeline` prints it; running it
 * with `quill-opt --pass-pipeline=...` reproduces a quantization). With
 * inline_data the calibration path is the option calibrate{data=PATH};
 * otherwise calibrate reads the pass-manager input "calibration-data".
 * On success *out gets a new string: free it with quill_string_free(ctx,
 * *out). QUILL_ERR_INVALID with a diagnostic if o->backend is missing;
 * QUILL_ERR_NOMEM. */
quill_status quill_quantize_pipeline(quill_context *ctx,
                                     const quill_quantize_options *o,
                                     bool inline_data, char **out);

/* Quantize module m in place for o->backend, calibrating its first graph
 * on `data` (borrowed, a dataset made for that graph; may be NULL when
 * o->calib_path is set) and return QUILL_OK. This loads and validates the
 * backend config, builds quill_quantize_pipeline() and runs it with a pass
 * manager that verifies after each pass. On failure (bad config, no or
 * unfitting data, a pass error; diagnostics emitted) the module may be
 * left partly transformed: destroy it. */
quill_status quill_quantize(quill_module *m, const quill_quantize_options *o,
                            quill_calib_dataset *data);

QUILL_END_DECLS

#endif /* QUILL_API_QUANTIZE_H */
