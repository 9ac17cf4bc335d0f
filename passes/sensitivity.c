/*
 * sensitivity.c - per-op sensitivity analysis and the keep-float choice
 * for a target SQNR (sensitivity.h has the method).
 *
 * Every measurement is a quill_quant_report_create() with its own
 * keep-float list (the report quantizes a copy of the model as `quill
 * quantize` does and runs the calibration samples through the float and
 * the quantized model); only the first output's SQNR is kept. The ranked
 * ops are the report rows of quantized ops, less those that only move data
 * or were fused into a producer; "only op k quantized" keeps every other
 * quantized row float.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "passes/sensitivity.h"

struct quill_sensitivity {
  quill_context *ctx;
  quill_sensitivity_op *ops;
  size_t nops, cap_ops;
  double sqnr_all, sqnr_chosen, target;
  size_t nchosen;
  char *keep_float; /* the user's list plus the chosen ops */
  bool has_target, met;
};

/* Ops that round nothing of their own (their output takes their input's
 * parameters, or they are fused activations). */
static bool moves_data(const char *opc) {
  static const char *const names[] = {
      "reshape", "flatten", "squeeze", "unsqueeze", "transpose", "identity",
      "split",   "slice",   "pad",     "maxpool",   "global_maxpool",
      "relu",    "clip",    "resize",  "gather",    "concat",
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!strcmp(opc, names[i]))
      return true;
  return false;
}

/* The output SQNR of the model quantized with keep-float `keep`. */
static quill_status measure(quill_context *ctx, const quill_module *m,
                            const quill_quantize_options *o, const char *keep,
                            quill_calib_dataset *calib, double *db) {
  quill_quantize_options q = *o;
  q.keep_float = keep && *keep ? keep : NULL;
  q.calib_path = NULL;
  quill_quant_report *r;
  quill_status st = quill_quant_report_create(ctx, m, &q, calib, &r);
  if (st)
    return st;
  *db = quill_quant_report_num_outputs(r)
            ? quill_sqnr_db(&quill_quant_report_output(r, 0)->sqnr)
            : INFINITY;
  quill_quant_report_destroy(r);
  return QUILL_OK;
}

/* sb = user's list, then names[0..n) (comma separated). */
static void join(quill_strbuf *sb, const char *user, const char *const *names,
                 size_t n) {
  quill_strbuf_clear(sb);
  if (user && *user)
    quill_strbuf_puts(sb, user);
  for (size_t i = 0; i < n; i++) {
    if (quill_strbuf_str(sb)[0])
      quill_strbuf_putc(sb, ',');
    quill_strbuf_puts(sb, names[i]);
  }
}

static int by_sqnr(const void *a, const void *b) {
  double x = ((const quill_sensitivity_op *)a)->sqnr_db;
  double y = ((const quill_sensitivity_op *)b)->sqnr_db;
  return x < y ? -1 : x > y ? 1 : 0;
}

quill_status quill_sensitivity_run(quill_context *ctx, const quill_module *m,
                                   const quill_quantize_options *o,
                                   quill_calib_dataset *calib,
                                   double target_db,
                                   void (*progress)(void *ud, size_t done,
                                                    size_t total),
                                   void *ud, quill_sensitivity **out) {
  *out = NULL;
  quill_sensitivity *s = quill_calloc(ctx, 1, sizeof *s);
  if (!s)
    return QUILL_ERR_NOMEM;
  s->ctx = ctx;
  s->target = target_db;
  s->has_target = target_db > -INFINITY;
  quill_quantize_options base = *o;
  base.calib_path = NULL;
  quill_quant_report *r;
  quill_status st = quill_quant_report_create(ctx, m, &base, calib, &r);
  if (st) {
    quill_sensitivity_destroy(s);
    return st;
  }
  s->sqnr_all = quill_quant_report_num_outputs(r)
                    ? quill_sqnr_db(&quill_quant_report_output(r, 0)->sqnr)
                    : INFINITY;
  /* every quantized row (kept float in turn), and the ranked ones */
  size_t nrows = quill_quant_report_num_rows(r), nq = 0;
  const char **quant = quill_calloc(ctx, nrows ? nrows : 1, sizeof *quant);
  s->ops = quill_calloc(ctx, nrows ? nrows : 1, sizeof *s->ops);
  s->cap_ops = s->ops ? (nrows ? nrows : 1) : 0;
  if (!quant || !s->ops)
    st = QUILL_ERR_NOMEM;
  for (size_t i = 0; !st && i < nrows; i++) {
    const quill_report_row *row = quill_quant_report_row(r, i);
    if (row->status != QUILL_REPORT_QUANTIZED || !strcmp(row->opcode, "input"))
      continue;
    quant[nq++] = row->name;
    if (!moves_data(row->opcode))
      s->ops[s->nops++] = (quill_sensitivity_op){row->name, row->opcode, 0};
  }
  quill_quant_report_destroy(r);
  size_t total = s->nops + (s->has_target ? s->nops : 0), done = 0;
  quill_strbuf keep;
  quill_strbuf_init(&keep, ctx);
  const char **others = quill_calloc(ctx, nq ? nq : 1, sizeof *others);
  if (!others)
    st = QUILL_ERR_NOMEM;
  for (size_t k = 0; !st && k < s->nops; k++) {
    size_t n = 0;
    for (size_t i = 0; i < nq; i++)
      if (strcmp(quant[i], s->ops[k].name))
        others[n++] = quant[i];
    join(&keep, o->keep_float, others, n);
    st = quill_strbuf_failed(&keep) ? QUILL_ERR_NOMEM
                                    : measure(ctx, m, o, quill_strbuf_str(&keep),
                                              calib, &s->ops[k].sqnr_db);
    if (progress)
      progress(ud, ++done, total);
  }
  if (!st)
    qsort(s->ops, s->nops, sizeof *s->ops, by_sqnr);
  /* the fewest worst-ranked ops kept float that reach the target */
  s->sqnr_chosen = s->sqnr_all;
  s->met = !s->has_target || s->sqnr_all >= target_db;
  for (size_t k = 0; !st && !s->met && k < s->nops; k++) {
    for (size_t i = 0; i <= k; i++)
      others[i] = s->ops[i].name;
    join(&keep, o->keep_float, others, k + 1);
    st = quill_strbuf_failed(&keep) ? QUILL_ERR_NOMEM
                                    : measure(ctx, m, o, quill_strbuf_str(&keep),
                                              calib, &s->sqnr_chosen);
    s->nchosen = k + 1;
    s->met = s->sqnr_chosen >= target_db;
    if (progress)
      progress(ud, ++done, total);
  }
  if (!st) {
    if (!s->nchosen)
      join(&keep, o->keep_float, NULL, 0);
    s->keep_float = quill_strdup(ctx, quill_strbuf_str(&keep));
    if (!s->keep_float || quill_strbuf_failed(&keep))
      st = QUILL_ERR_NOMEM;
  }
  quill_strbuf_free(&keep);
  quill_free(ctx, others, (nq ? nq : 1) * sizeof *others);
  quill_free(ctx, quant, (nrows ? nrows : 1) * sizeof *quant);
  if (st) {
    quill_sensitivity_destroy(s);
    return st;
  }
  *out = s;
  return QUILL_OK;
}

void quill_sensitivity_destroy(quill_sensitivity *s) {
  if (!s)
    return;
  quill_context *ctx = s->ctx;
  quill_free(ctx, s->ops, s->cap_ops * sizeof *s->ops);
  quill_string_free(ctx, s->keep_float);
  quill_free(ctx, s, sizeof *s);
}

size_t quill_sensitivity_num_ops(const quill_sensitivity *s) {
  return s->nops;
}

const quill_sensitivity_op *quill_sensitivity_op_at(const quill_sensitivity *s,
                                                    size_t i) {
  return i < s->nops ? &s->ops[i] : NULL;
}

double quill_sensitivity_sqnr_all(const quill_sensitivity *s) {
  return s->sqnr_all;
}

size_t quill_sensitivity_num_chosen(const quill_sensitivity *s) {
  return s->nchosen;
}

const char *quill_sensitivity_keep_float(const quill_sensitivity *s) {
  return s->keep_float ? s->keep_float : "";
}

double quill_sensitivity_sqnr_chosen(const quill_sensitivity *s) {
  return s->sqnr_chosen;
}

bool quill_sensitivity_target_met(const quill_sensitivity *s) {
  return s->met;
}

void quill_sensitivity_print(const quill_sensitivity *s, quill_strbuf *sb) {
  quill_strbuf_printf(sb, "sensitivity: output SQNR (dB) with only that op "
                          "quantized, worst first\n");
  quill_strbuf_printf(sb, "  %4s  %-40s %-16s %8s\n", "rank", "op", "kind",
                      "SQNR");
  for (size_t i = 0; i < s->nops; i++)
    quill_strbuf_printf(sb, "  %4zu  %-40s %-16s %8.2f\n", i + 1,
                        s->ops[i].name, s->ops[i].opcode, s->ops[i].sqnr_db);
  quill_strbuf_printf(sb, "all quantized: %.2f dB\n", s->sqnr_all);
  if (!s->has_target)
    return;
  if (!s->nchosen)
    quill_strbuf_printf(sb, "target %.2f dB: met with every op quantized\n",
                        s->target);
  else
    quill_strbuf_printf(sb, "target %.2f dB: %s with the %zu worst op%s kept "
                            "float: %.2f dB (--keep-float %s)\n",
                        s->target, s->met ? "met" : "NOT met", s->nchosen,
                        s->nchosen == 1 ? "" : "s", s->sqnr_chosen,
                        s->keep_float);
}
