/*
 * quantize.c - quill_quantize: the `quill quantize` pipeline in one call,
 * on top of quill_quantize_module (passes/quantize_pipeline.c, where the
 * pipeline is spelled).
 *
 *   backend --quill_backend_get--> validated config (errors first)
 *   data | calib_path --> calibrate{data=PATH} when the path can be written
 *                         into the pipeline, else a dataset loaded here
 *   quill_quantize_module(QUILL_QUANTIZE_ALL)
 */
#include <string.h>

#include "quill/quill.h"

quill_status quill_quantize(quill_context *ctx, quill_module *m,
                            const char *backend, quill_calib_dataset *data,
                            const quill_quantize_options *opts) {
  quill_quantize_options o;
  memset(&o, 0, sizeof o);
  if (opts)
    o = *opts;
  if (!backend || (o.backend && strcmp(o.backend, backend) != 0))
    return quill_error(ctx, quill_loc_unknown(),
                       "quill_quantize: %s", backend ? "two different backends"
                                                     : "no backend");
  o.backend = backend;
  if (!data && !o.calib_path)
    return quill_error(ctx, quill_loc_unknown(),
                       "quill_quantize: no calibration data (a dataset or "
                       "opts->calib_path)");
  if (!quill_module_num_graphs(m))
    return quill_error(ctx, quill_loc_unknown(), "the model has no function");
  if (!quill_backend_get(ctx, backend))
    return QUILL_ERR_INVALID;
  quill_calib_dataset *own = NULL;
  if (data) {
    o.calib_path = NULL; /* the dataset goes to the pass manager */
  } else if (!quill_quantize_option_safe(o.calib_path)) {
    own = quill_calib_dataset_create(ctx, quill_module_graph(m, 0));
    if (!own)
      return QUILL_ERR_INVALID;
    quill_calib_dataset_set_max_samples(own, o.max_samples);
    quill_status st = quill_calib_dataset_load(own, o.calib_path);
    if (st) {
      quill_calib_dataset_destroy(own);
      return st;
    }
    data = own;
    o.calib_path = NULL;
  }
  quill_status st =
      quill_quantize_module(ctx, m, &o, QUILL_QUANTIZE_ALL, data, NULL);
  quill_calib_dataset_destroy(own);
  return st;
}
