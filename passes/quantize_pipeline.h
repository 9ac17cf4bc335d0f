/*
 * quantize_pipeline.h - the quantization pipeline of `quill quantize`,
 * spelled in one place and run on a module (docs/quantization.md, section
 * 4). `quill quantize`, `quill report` and the C API all go through here,
 * so they quantize identically.
 *
 *   stage PREPARE:   canonicalize, fuse-patterns, fold-batchnorm[{keep-stats
 *                    with analytic bias correction}],
 *                    [equalize{absorb-bias data max-samples
 *                    [relu6-to-relu]},] fuse-activation{backend} (no-ops
 *                    such as identity go first, so fold-batchnorm and
 *                    insert-observers see the constant weights behind them;
 *                    gelu / hard_swish / layer_norm decompositions become
 *                    one op)
 *   stage QUANTIZE:  insert-observers{backend keep-float},
 *                    calibrate{data max-samples}, [adaround{iters data
 *                    max-samples},] [bias-correction{backend data
 *                    max-samples | mode=analytic},] quantize{backend
 *                    keep-float},
 *                    canonicalize, dce
 *   stage FUSE:      fuse-qdq{backend}, dce (the integer form; without it
 *                    the result is the reference quantize/dequantize form),
 *                    then the config's plugin pipeline if it has one
 *                    (backend key `plugin.pipeline`, e.g. a vendor's
 *                    fusions into custom ops)
 *
 * PREPARE shapes the float graph the way the backend executes it; its
 * result is the float model the quantized one is compared with (op for op,
 * by location name) in `quill report`.
 *
 * The bracketed accuracy passes run when the options or, by default, the
 * backend config ask for them (docs/accuracy.md); with calibration data
 * handed over in memory, PREPARE needs it too when it equalizes.
 */
#ifndef QUILL_PASSES_QUANTIZE_PIPELINE_H
#define QUILL_PASSES_QUANTIZE_PIPELINE_H

#include "calib_data.h"
#include "pass.h"

QUILL_BEGIN_DECLS

typedef struct quill_quantize_options {
  const char *backend;    /* a shipped config name or a config file path */
  const char *keep_float; /* "a,b": ops kept float (by location name or
                             result value name), or NULL */
  const char *calib_path; /* written as calibrate{data=PATH}; NULL: the
                             calibration dataset is handed to the pass
                             manager instead (quill_quantize_module) */
  size_t max_samples;     /* calibrate on the first N samples (0: all) */
  unsigned adaround_iters; /* > 0: adaround{iters=N} after calibrate
                              (passes/adaround.c) */
  /* The accuracy passes: QUILL_ACCURACY_DEFAULT (0) does what the backend
   * config says (keys equalize, equalize_relu6, bias_correction); the
   * others override it. */
  int equalize;        /* also QUILL_ACCURACY_RELU6: on, relu6 as relu */
  int bias_correction;
  quill_strbuf *log;   /* if non-NULL (borrowed), the accuracy passes
                          append one line per thing they did */
} quill_quantize_options;

enum {
  QUILL_ACCURACY_DEFAULT = 0, /* as the backend config says */
  QUILL_ACCURACY_ON = 1,
  QUILL_ACCURACY_OFF = 2,
  QUILL_ACCURACY_RELU6 = 3, /* equalize, treating relu6 as relu */
  QUILL_ACCURACY_ANALYTIC = 4, /* bias correction from BatchNorm statistics
                                  (fold-batchnorm keeps them; no data) */
};

enum {
  QUILL_QUANTIZE_PREPARE = 1u << 0,  /* canonicalize .. fuse-activation */
  QUILL_QUANTIZE_QUANTIZE = 1u << 1, /* insert-observers .. dce */
  QUILL_QUANTIZE_FUSE = 1u << 2,     /* fuse-qdq, dce */
  QUILL_QUANTIZE_ALL = 7u,
};

/* True if `s` can be written as a pass option value (no blanks, no
 * braces, not empty). */
bool quill_quantize_option_safe(const char *s);

/* The pipeline text of the given stages (QUILL_QUANTIZE_*), as
 * `quill-opt --pass-pipeline` takes it, into *out: a new string (free with
 * quill_string_free). Loads the backend config (quill_backend_get).
 * QUILL_ERR_INVALID after an error diagnostic if an option cannot be
 * written in a pipeline (no backend; blanks or braces in backend,
 * keep_float or calib_path), if the config is invalid, or if it names a
 * plugin (`plugin.name`) that is not loaded into ctx; QUILL_ERR_NOMEM on
 * allocation failure (no diagnostic); *out is NULL on failure. */
quill_status quill_quantize_pipeline(quill_context *ctx,
                                     const quill_quantize_options *o,
                                     unsigned stages, char **out);

/* Run the given stages on m (in place). `calib` is the calibration data
 * when o->calib_path is NULL (borrowed for the call; ignored otherwise;
 * needed only with the QUANTIZE stage). `pm_opts` may be NULL (verify
 * after each pass, nothing else); with time_passes or statistics the
 * reports are printed before returning. Returns the first failing pass's
 * status after its diagnostics. The backend config is loaded (and
 * validated) by the passes through quill_backend_get. */
quill_status quill_quantize_module(quill_context *ctx, quill_module *m,
                                   const quill_quantize_options *o,
                                   unsigned stages, quill_calib_dataset *calib,
                                   const quill_pass_manager_options *pm_opts);

QUILL_END_DECLS

#endif /* QUILL_PASSES_QUANTIZE_PIPELINE_H */
