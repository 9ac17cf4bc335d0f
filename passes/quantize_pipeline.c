/*
 * quantize_pipeline.c - the quantization pipeline text (the one place it is
 * spelled) and a runner around the pass manager. See quantize_pipeline.h.
 *
 * The calibration data goes in as calibrate{data=PATH} when a path is
 * given (the caller checked it can be written there); otherwise the caller
 * hands a loaded dataset over, and it reaches `calibrate` (and the
 * accuracy passes, equalize and bias-correction, which take the same
 * data= and max-samples= options) as the pass-manager input
 * "calibration-data".
 */
#include <string.h>

#include "backends/backend.h"
#include "passes/plugin.h"
#include "passes/quantize_pipeline.h"

bool quill_quantize_option_safe(const char *s) {
  return s && *s && !strpbrk(s, " \t\n\r{}");
}

static bool check_option(quill_context *ctx, const char *what,
                         const char *v) {
  if (!v || quill_quantize_option_safe(v))
    return true;
  quill_error(ctx, quill_loc_unknown(),
              "quantize pipeline: %s '%s' cannot be written as a pass option "
              "(no blanks or braces)",
              what, v);
  return false;
}

/* A config with a `plugin` needs that plugin loaded into ctx. */
static quill_status check_plugin(quill_context *ctx, const quill_backend *b) {
  const char *need = quill_backend_plugin(b);
  if (!need)
    return QUILL_OK;
  for (unsigned i = 0; i < quill_plugin_num_loaded(ctx); ++i)
    if (strcmp(quill_plugin_loaded_info(ctx, i)->name, need) == 0)
      return QUILL_OK;
  return quill_error(ctx, quill_loc_unknown(),
                     "backend config '%s' needs the plugin '%s': load it "
                     "(--load-pass-plugin=PATH, quill_plugin_load)",
                     quill_backend_name(b), need);
}

/* " data=PATH max-samples=N" as far as given, into sb. */
static void data_options(quill_strbuf *sb, const quill_quantize_options *o) {
  if (o->calib_path)
    quill_strbuf_printf(sb, " data=%s", o->calib_path);
  if (o->max_samples)
    quill_strbuf_printf(sb, " max-samples=%zu", o->max_samples);
}

quill_status quill_quantize_pipeline(quill_context *ctx,
                                     const quill_quantize_options *o,
                                     unsigned stages, char **out) {
  *out = NULL;
  if (!o->backend || !*o->backend)
    return quill_error(ctx, quill_loc_unknown(),
                       "quantize pipeline: no backend");
  if (!check_option(ctx, "backend", o->backend) ||
      !check_option(ctx, "keep-float", o->keep_float) ||
      !check_option(ctx, "calibration path", o->calib_path))
    return QUILL_ERR_INVALID;
  const quill_backend *cfg = quill_backend_get(ctx, o->backend);
  if (!cfg)
    return QUILL_ERR_INVALID;
  quill_status st = check_plugin(ctx, cfg);
  if (st)
    return st;
  const char *b = o->backend;
  bool keep = o->keep_float && *o->keep_float;
  quill_strbuf sb;
  quill_strbuf_init(&sb, ctx);
  bool eq = o->equalize ? o->equalize != QUILL_ACCURACY_OFF
                        : quill_backend_equalize(cfg);
  bool relu6 = o->equalize ? o->equalize == QUILL_ACCURACY_RELU6
                           : quill_backend_equalize_relu6(cfg);
  bool bc = o->bias_correction ? o->bias_correction == QUILL_ACCURACY_ON ||
                                     o->bias_correction ==
                                         QUILL_ACCURACY_ANALYTIC
                               : quill_backend_bias_correction(cfg);
  bool analytic = o->bias_correction
                      ? o->bias_correction == QUILL_ACCURACY_ANALYTIC
                      : bc && quill_backend_bias_correction_analytic(cfg);
  if (analytic && eq) {
    quill_strbuf_free(&sb);
    return quill_error(ctx, quill_loc_unknown(),
                       "quantize pipeline: analytic bias correction reads the "
                       "BatchNorm statistics of the channels that equalize "
                       "rescales and absorbs biases from: use one of them, or "
                       "the empirical bias correction with equalize");
  }
  if (stages & QUILL_QUANTIZE_PREPARE) {
    quill_strbuf_printf(&sb, "canonicalize,fuse-patterns,fold-batchnorm%s,",
                        analytic ? "{keep-stats=true}" : "");
    if (eq) {
      quill_strbuf_printf(&sb, "equalize{absorb-bias=true%s",
                          relu6 ? " relu6-to-relu=true" : "");
      data_options(&sb, o);
      quill_strbuf_puts(&sb, "},");
    }
    quill_strbuf_printf(&sb, "fuse-activation{backend=%s}", b);
  }
  if (stages & QUILL_QUANTIZE_QUANTIZE) {
    if (sb.len)
      quill_strbuf_putc(&sb, ',');
    quill_strbuf_printf(&sb, "insert-observers{backend=%s%s%s},", b,
                        keep ? " keep-float=" : "", keep ? o->keep_float : "");
    if (o->calib_path && o->max_samples)
      quill_strbuf_printf(&sb, "calibrate{data=%s max-samples=%zu}",
                          o->calib_path, o->max_samples);
    else if (o->calib_path)
      quill_strbuf_printf(&sb, "calibrate{data=%s}", o->calib_path);
    else if (o->max_samples)
      quill_strbuf_printf(&sb, "calibrate{max-samples=%zu}", o->max_samples);
    else
      quill_strbuf_puts(&sb, "calibrate");
    if (o->adaround_iters) {
      quill_strbuf_printf(&sb, ",adaround{iters=%u", o->adaround_iters);
      data_options(&sb, o);
      quill_strbuf_putc(&sb, '}');
    }
    if (bc && analytic) {
      quill_strbuf_printf(&sb, ",bias-correction{backend=%s mode=analytic}",
                          b);
    } else if (bc) {
      quill_strbuf_printf(&sb, ",bias-correction{backend=%s", b);
      data_options(&sb, o);
      quill_strbuf_putc(&sb, '}');
    }
    quill_strbuf_printf(&sb, ",quantize{backend=%s%s%s},canonicalize,dce", b,
                        keep ? " keep-float=" : "", keep ? o->keep_float : "");
  }
  if (stages & QUILL_QUANTIZE_FUSE) {
    quill_strbuf_printf(&sb, "%sfuse-qdq{backend=%s},dce", sb.len ? "," : "",
                        b);
    if (quill_backend_plugin_pipeline(cfg))
      quill_strbuf_printf(&sb, ",%s", quill_backend_plugin_pipeline(cfg));
  }
  if (!quill_strbuf_failed(&sb))
    *out = quill_strdup(ctx, quill_strbuf_str(&sb));
  quill_strbuf_free(&sb);
  return *out ? QUILL_OK : QUILL_ERR_NOMEM;
}

quill_status quill_quantize_module(quill_context *ctx, quill_module *m,
                                   const quill_quantize_options *o,
                                   unsigned stages, quill_calib_dataset *calib,
                                   const quill_pass_manager_options *pm_opts) {
  char *text = NULL;
  quill_status st = quill_quantize_pipeline(ctx, o, stages, &text);
  if (st)
    return st;
  quill_pass_manager *pm = quill_pass_manager_create(ctx);
  st = pm ? quill_pass_manager_parse_pipeline(pm, text) : QUILL_ERR_NOMEM;
  if (!st && !o->calib_path && calib)
    st = quill_pass_manager_set_input(pm, "calibration-data", calib);
  if (!st && o->log)
    st = quill_pass_manager_set_input(pm, "accuracy-log", o->log);
  if (!st) {
    quill_pass_manager_options po;
    memset(&po, 0, sizeof po);
    po.verify_each = true;
    if (pm_opts)
      po = *pm_opts;
    quill_pass_manager_set_options(pm, &po);
    st = quill_pass_manager_run(pm, m);
    if (po.time_passes || po.statistics)
      quill_pass_manager_report(pm);
  }
  quill_pass_manager_destroy(pm);
  quill_string_free(ctx, text);
  return st;
}
