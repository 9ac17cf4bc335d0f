/*
 * quill/quantize.h - quantization: backend configs (backends/backend.h),
 * calibration datasets from files or memory (passes/calib_data.h), the
 * quantization pipeline of `quill quantize` spelled once and run by stages
 * (passes/quantize_pipeline.h), per-op quantization reports
 * (passes/quant_report.h), the per-op sensitivity analysis behind `quill
 * quantize --sensitivity` (passes/sensitivity.h), and quill_quantize, the
 * whole thing in one call.
 *
 *   quill_calib_dataset *ds = quill_calib_dataset_create(ctx, graph);
 *   quill_calib_dataset_add(ds, &tensor, 1, NULL);     ... per sample
 *   st = quill_quantize(ctx, module, "tflite-int8", ds, NULL);
 *   quill_calib_dataset_destroy(ds);
 *
 * For the reference (QDQ) form, which ONNX export writes, run the stages
 * without FUSE: quill_quantize_module(ctx, module, &opts,
 * QUILL_QUANTIZE_PREPARE | QUILL_QUANTIZE_QUANTIZE, ds, NULL).
 */
#ifndef QUILL_API_QUANTIZE_H
#define QUILL_API_QUANTIZE_H

#include "ir.h"
#include "passes.h"
#include "backends/backend.h"
#include "passes/calib_data.h"
#include "passes/quantize_pipeline.h"
#include "passes/quant_report.h"
#include "passes/sensitivity.h"

QUILL_BEGIN_DECLS

/* Quantize module m in place for `backend` (a shipped config name such as
 * "tflite-int8", or a JSON file path) to integer ops: every stage of the
 * `quill quantize` pipeline (QUILL_QUANTIZE_ALL). Calibration data: `data`
 * (borrowed for the call; a dataset made for m's first graph), or, when
 * data is NULL, opts->calib_path (any path passes/calib_data.h loads; one
 * that cannot be written into the pipeline text is loaded here). opts may
 * be NULL; when given, its keep_float and max_samples apply and its
 * backend must be NULL or equal `backend`. The backend config is loaded
 * and validated first. Returns QUILL_OK, or a status after diagnostics (bad
 * config, no or unfitting data, a pass error); on failure the module may
 * be partly transformed: destroy it. */
quill_status quill_quantize(quill_context *ctx, quill_module *m,
                            const char *backend, quill_calib_dataset *data,
                            const quill_quantize_options *opts);

QUILL_END_DECLS

#endif /* QUILL_API_QUANTIZE_H */
