/*
 * quantize.c - quill_quantize: the quantization pipeline of
 * `quill quantize`, spelled once (quill_quantize_pipeline) and run in one
 * call on a module and a calibration dataset.
 *
 *   [before,] fold-batchnorm, fuse-activation{backend=B},
 *   insert-observers{backend=B [keep-float=K]},
 *   calibrate[{data=PATH max-samples=N}],
 *   quantize{backend=B [keep-float=K]}, canonicalize, dce
 *   [, fuse-qdq{backend=B}, dce]            (integer form)
 *   [, after]
 *
 * The calibration data goes into the pipeline as calibrate{data=PATH} when
 * the caller has a path that can be written there (no blanks or braces);
 * otherwise the dataset (the caller's, or one loaded here from the path)
 * is handed to the pass manager as the input "calibration-data".
 */
#include <string.h>

#include "quill/quill.h"

void quill_quantize_options_init(quill_quantize_options *o) {
  memset(o, 0, sizeof *o);
  o->form = QUILL_QUANTIZE_INTEGER;
}

/* Can `s` be written as a pass option value? */
static bool option_safe(const char *s) { return !strpbrk(s, " \t\n{}"); }

quill_status quill_quantize_pipeline(quill_context *ctx,
                                     const quill_quantize_options *o,
                                     bool inline_data, char **out) {
  *out = NULL;
  const char *b = o->backend;
  if (!b || !*b)
    return quill_error(ctx, quill_loc_unknown(),
                       "quantization needs a backend config");
  quill_strbuf sb;
  quill_strbuf_init(&sb, ctx);
  if (o->before && *o->before)
    quill_strbuf_printf(&sb, "%s,", o->before);
  const char *keep = o->keep_float ? o->keep_float : "";
  const char *ksep = o->keep_float ? " keep-float=" : "";
  quill_strbuf_printf(&sb,
                      "fold-batchnorm,"
                      "fuse-activation{backend=%s},"
                      "insert-observers{backend=%s%s%s},",
                      b, b, ksep, keep);
  if (inline_data && o->calib_path && o->max_samples)
    quill_strbuf_printf(&sb, "calibrate{data=%s max-samples=%zu}",
                        o->calib_path, o->max_samples);
  else if (inline_data && o->calib_path)
    quill_strbuf_printf(&sb, "calibrate{data=%s}", o->calib_path);
  else if (o->max_samples)
    quill_strbuf_printf(&sb, "calibrate{max-samples=%zu}", o->max_samples);
  else
    quill_strbuf_puts(&sb, "calibrate");
  quill_strbuf_printf(&sb, ",quantize{backend=%s%s%s},canonicalize,dce", b,
                      ksep, keep);
  if (o->form == QUILL_QUANTIZE_INTEGER)
    quill_strbuf_printf(&sb, ",fuse-qdq{backend=%s},dce", b);
  if (o->after && *o->after)
    quill_strbuf_printf(&sb, ",%s", o->after);
  quill_status st = QUILL_OK;
  if (quill_strbuf_failed(&sb) || !(*out = quill_strdup(ctx,
                                                        quill_strbuf_str(&sb))))
    st = QUILL_ERR_NOMEM;
  quill_strbuf_free(&sb);
  return st;
}

quill_status quill_quantize(quill_module *m, const quill_quantize_options *o,
                            quill_calib_dataset *data) {
  quill_context *ctx = quill_module_context(m);
  if (!o || !o->backend)
    return quill_error(ctx, quill_loc_unknown(),
                       "quantization needs a backend config");
  if (!data && !o->calib_path)
    return quill_error(ctx, quill_loc_unknown(),
                       "quantization needs calibration data (a dataset or "
                       "a path)");
  if (!quill_module_num_graphs(m))
    return quill_error(ctx, quill_loc_unknown(), "the model has no function");
  if (!quill_backend_get(ctx, o->backend))
    return QUILL_ERR_INVALID;
  bool inline_data = !data && option_safe(o->calib_path);
  char *pipeline = NULL;
  quill_status st = quill_quantize_pipeline(ctx, o, inline_data, &pipeline);
  quill_pass_manager *pm = NULL;
  quill_calib_dataset *own = NULL;
  if (!st && !(pm = quill_pass_manager_create(ctx)))
    st = QUILL_ERR_NOMEM;
  if (!st)
    st = quill_pass_manager_parse_pipeline(pm, pipeline);
  if (!st && !data && !inline_data) {
    own = quill_calib_dataset_create(ctx, quill_module_graph(m, 0));
    st = own ? QUILL_OK : QUILL_ERR_INVALID;
    if (!st) {
      quill_calib_dataset_set_max_samples(own, o->max_samples);
      st = quill_calib_dataset_load(own, o->calib_path);
    }
    data = own;
  }
  if (!st && data)
    st = quill_pass_manager_set_input(pm, "calibration-data", data);
  if (!st) {
    quill_pass_manager_options po;
    memset(&po, 0, sizeof po);
    po.verify_each = true;
    if (o->pass_options)
      po = *o->pass_options;
    quill_pass_manager_set_options(pm, &po);
    st = quill_pass_manager_run(pm, m);
    if (po.time_passes || po.statistics)
      quill_pass_manager_report(pm);
  }
  quill_pass_manager_destroy(pm);
  quill_calib_dataset_destroy(own);
  quill_string_free(ctx, pipeline);
  return st;
}
