/*
 * sensitivity.c - per-op sensitivity analysis and the int16 / keep-float
 * choice for a target SQNR (sensitivity.h has the method).
 *
 * Every measurement is a quill_quant_report_create() with its own backend
 * and keep-float list (the report quantizes a copy of the model as `quill
 * quantize` does and runs the calibration samples through the float and
 * the quantized model); only the first output's SQNR is kept. The ranked
 * ops are the report rows of quantized ops, less those that only move data
 * or were fused into a producer; "only op k quantized" keeps every other
 * quantized row float. An op raised to int16 is one `overrides` entry
 * matching its kind and its name (a glob with the name's special
 * characters escaped), in a config derived from the user's
 * (quill_backend_derive):
 *
 *   {"match": {"op": ["conv2d"], "name": "/stem/stem.0/Conv"},
 *    "activation": {"dtype": "i16", "symmetric": true}}
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "passes/sensitivity.h"

struct quill_sensitivity {
  quill_context *ctx;
  quill_sensitivity_op *ops;
  size_t nops, cap_ops;
  double sqnr_all, sqnr_chosen, target;
  size_t nchosen;
  char *keep_float; /* the user's list plus the float ops */
  char *overrides;  /* the int16 overrides, a JSON array, or "" */
  const char *backend; /* o->backend or the derived config's name */
  bool has_target, met, float_only;
};

const char *quill_precision_name(quill_precision p) {
  return p == QUILL_PRECISION_INT16   ? "int16"
         : p == QUILL_PRECISION_FLOAT ? "float"
                                      : "int8";
}

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

/* Whether backend b can run op kind `opc` with int16 activations through
 * an override: its activations are 8-bit, the op has no fixed params
 * (written for the 8-bit scheme) and the backend has a 16-bit kernel. */
static bool int16_allowed(const quill_backend *b, const char *opc) {
  quill_opcode o;
  quill_type_kind k = quill_backend_activation(b)->storage;
  return quill_opcode_lookup(opc, strlen(opc), &o) &&
         (k == QUILL_TYPE_I8 || k == QUILL_TYPE_U8) &&
         !quill_backend_fixed_params(b, o).present &&
         quill_backend_runs_i16(b, o);
}

/* The output SQNR of the model quantized with `backend` and keep-float
 * `keep`. */
static quill_status measure(quill_context *ctx, const quill_module *m,
                            const quill_quantize_options *o,
                            const char *backend, const char *keep,
                            quill_calib_dataset *calib, double *db) {
  quill_quantize_options q = *o;
  q.backend = backend;
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

/* name as a glob matching only itself, inside a JSON string. */
static void put_glob_json(quill_strbuf *sb, const char *name) {
  for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
    if (*p == '*' || *p == '?' || *p == '[' || *p == ']' || *p == '\\')
      quill_strbuf_puts(sb, "\\\\");
    if (*p == '"' || *p == '\\')
      quill_strbuf_putc(sb, '\\');
    if (*p < 0x20)
      quill_strbuf_printf(sb, "\\u%04x", *p);
    else
      quill_strbuf_putc(sb, (char)*p);
  }
}

/* The keep-float list (keep) and int16 overrides (ovr, a JSON array or "")
 * of the current choices. */
static void describe(const quill_sensitivity *s, const char *user,
                     quill_strbuf *keep, quill_strbuf *ovr) {
  quill_strbuf_clear(keep);
  quill_strbuf_clear(ovr);
  if (user && *user)
    quill_strbuf_puts(keep, user);
  for (size_t i = 0; i < s->nops; i++) {
    const quill_sensitivity_op *op = &s->ops[i];
    if (op->choice == QUILL_PRECISION_FLOAT) {
      if (quill_strbuf_str(keep)[0])
        quill_strbuf_putc(keep, ',');
      quill_strbuf_puts(keep, op->name);
    } else if (op->choice == QUILL_PRECISION_INT16) {
      quill_strbuf_puts(ovr, quill_strbuf_str(ovr)[0] ? ", " : "[");
      quill_strbuf_printf(ovr, "{\"match\": {\"op\": [\"%s\"], \"name\": \"",
                          op->opcode);
      put_glob_json(ovr, op->name);
      quill_strbuf_puts(ovr, "\"}, \"activation\": {\"dtype\": \"i16\", "
                             "\"symmetric\": true}}");
    }
  }
  if (quill_strbuf_str(ovr)[0])
    quill_strbuf_putc(ovr, ']');
}

/* Choices: the k worst ops raised, int16 where allowed except the first
 * f int16-able ones (in rank order), which are float like the others. */
static void choose(quill_sensitivity *s, size_t k, size_t f) {
  size_t seen = 0;
  for (size_t i = 0; i < s->nops; i++) {
    quill_sensitivity_op *op = &s->ops[i];
    if (i >= k)
      op->choice = QUILL_PRECISION_INT8;
    else if (!op->int16_ok || seen++ < f)
      op->choice = QUILL_PRECISION_FLOAT;
    else
      op->choice = QUILL_PRECISION_INT16;
  }
  s->nchosen = k;
}

/* The backend of the current choices into s->backend, and (db non-NULL)
 * the model's SQNR with them. */
static quill_status measure_choice(quill_sensitivity *s, const quill_module *m,
                                   const quill_quantize_options *o,
                                   quill_calib_dataset *calib,
                                   quill_strbuf *keep, quill_strbuf *ovr,
                                   double *db) {
  describe(s, o->keep_float, keep, ovr);
  if (quill_strbuf_failed(keep) || quill_strbuf_failed(ovr))
    return QUILL_ERR_NOMEM;
  const char *ovs = quill_strbuf_str(ovr);
  s->backend = *ovs ? quill_backend_derive(s->ctx, o->backend, ovs)
                    : o->backend;
  if (!s->backend)
    return QUILL_ERR_INVALID;
  return db ? measure(s->ctx, m, o, s->backend, quill_strbuf_str(keep), calib,
                      db)
            : QUILL_OK;
}

typedef struct search {
  quill_sensitivity *s;
  const quill_module *m;
  const quill_quantize_options *o;
  quill_calib_dataset *calib;
  quill_strbuf *keep, *ovr;
  void (*progress)(void *ud, size_t done, size_t total);
  void *ud;
  size_t done, total;
} search;

/* The SQNR with choose(k, f). */
static quill_status try_choice(search *x, size_t k, size_t f, double *db) {
  choose(x->s, k, f);
  quill_status st =
      measure_choice(x->s, x->m, x->o, x->calib, x->keep, x->ovr, db);
  if (x->progress)
    x->progress(x->ud, ++x->done, x->total);
  return st;
}

/* The smallest v in (lo, hi] whose choice meets the target, given that hi
 * meets it (its SQNR *db_hi) and lo does not: a bisection, the SQNR taken
 * to grow with v (more ops raised). `k_of_v` true: v is k (f = f0), else v
 * is f (k = k0). Leaves *v_out and its SQNR in *db_out. */
static quill_status bisect(search *x, bool k_of_v, size_t k0, size_t f0,
                           size_t lo, size_t hi, double db_hi, size_t *v_out,
                           double *db_out) {
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    double db;
    quill_status st = try_choice(x, k_of_v ? mid : k0, k_of_v ? f0 : mid, &db);
    if (st)
      return st;
    if (db >= x->s->target) {
      hi = mid;
      db_hi = db;
    } else {
      lo = mid;
    }
  }
  *v_out = hi;
  *db_out = db_hi;
  return QUILL_OK;
}

static int by_sqnr(const void *a, const void *b) {
  double x = ((const quill_sensitivity_op *)a)->sqnr_db;
  double y = ((const quill_sensitivity_op *)b)->sqnr_db;
  return x < y ? -1 : x > y ? 1 : 0;
}

quill_status quill_sensitivity_run(quill_context *ctx, const quill_module *m,
                                   const quill_quantize_options *o,
                                   quill_calib_dataset *calib,
                                   double target_db, bool float_only,
                                   void (*progress)(void *ud, size_t done,
                                                    size_t total),
                                   void *ud, quill_sensitivity **out) {
  *out = NULL;
  const quill_backend *b = quill_backend_get(ctx, o->backend);
  if (!b)
    return QUILL_ERR_INVALID;
  quill_sensitivity *s = quill_calloc(ctx, 1, sizeof *s);
  if (!s)
    return QUILL_ERR_NOMEM;
  s->ctx = ctx;
  s->target = target_db;
  s->has_target = target_db > -INFINITY;
  s->float_only = float_only;
  s->backend = o->backend;
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
      s->ops[s->nops++] = (quill_sensitivity_op){
          row->name, row->opcode, 0, !float_only && int16_allowed(b, row->opcode),
          QUILL_PRECISION_INT8};
  }
  quill_quant_report_destroy(r);
  size_t total = s->nops + (s->has_target ? 2 : 0), done = 0;
  quill_strbuf keep, ovr;
  quill_strbuf_init(&keep, ctx);
  quill_strbuf_init(&ovr, ctx);
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
                                    : measure(ctx, m, o, o->backend,
                                              quill_strbuf_str(&keep), calib,
                                              &s->ops[k].sqnr_db);
    if (progress)
      progress(ud, ++done, total);
  }
  if (!st)
    qsort(s->ops, s->nops, sizeof *s->ops, by_sqnr);
  /* the fewest worst-ranked ops raised (int16 where allowed, else float)
   * that reach the target; if all of them do not, the fewest int16 ones
   * made float in rank order (both by bisection: ~log2 n measurements) */
  s->sqnr_chosen = s->sqnr_all;
  s->met = !s->has_target || s->sqnr_all >= target_db;
  size_t n16 = 0;
  for (size_t k = 0; k < s->nops; k++)
    n16 += s->ops[k].int16_ok;
  search x = {s, m, o, calib, &keep, &ovr, progress, ud, done, 0};
  for (size_t v = s->nops; v > 1; v = (v + 1) / 2)
    x.total++;
  x.total = done + 2 * (x.total + 1);
  double db_all = 0.0, db = 0.0;
  size_t v = 0;
  if (!st && !s->met && s->nops)
    st = try_choice(&x, s->nops, 0, &db_all);
  if (!st && !s->met && s->nops && db_all >= target_db) {
    st = bisect(&x, true, 0, 0, 0, s->nops, db_all, &v, &db);
    choose(s, v, 0);
    s->met = true;
    s->sqnr_chosen = db;
  } else if (!st && !s->met && s->nops && n16 &&
             !(st = try_choice(&x, s->nops, n16, &db)) && db >= target_db) {
    st = bisect(&x, false, s->nops, 0, 0, n16, db, &v, &db);
    choose(s, s->nops, v);
    s->met = true;
    s->sqnr_chosen = db;
  } else if (!st && !s->met && s->nops) { /* not met: all raised, float */
    choose(s, s->nops, n16);
    s->sqnr_chosen = n16 ? db : db_all;
  }
  if (!st && s->nchosen)
    st = measure_choice(s, m, o, calib, &keep, &ovr, NULL);
  if (!st) {
    describe(s, o->keep_float, &keep, &ovr);
    s->keep_float = quill_strdup(ctx, quill_strbuf_str(&keep));
    s->overrides = quill_strdup(ctx, quill_strbuf_str(&ovr));
    if (!s->keep_float || !s->overrides || quill_strbuf_failed(&keep) ||
        quill_strbuf_failed(&ovr))
      st = QUILL_ERR_NOMEM;
  }
  quill_strbuf_free(&keep);
  quill_strbuf_free(&ovr);
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
  quill_string_free(ctx, s->overrides);
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

size_t quill_sensitivity_num_int16(const quill_sensitivity *s) {
  size_t n = 0;
  for (size_t i = 0; i < s->nops; i++)
    n += s->ops[i].choice == QUILL_PRECISION_INT16;
  return n;
}

const char *quill_sensitivity_keep_float(const quill_sensitivity *s) {
  return s->keep_float ? s->keep_float : "";
}

const char *quill_sensitivity_backend(const quill_sensitivity *s) {
  return s->backend;
}

const char *quill_sensitivity_overrides(const quill_sensitivity *s) {
  return s->overrides ? s->overrides : "";
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
  quill_strbuf_printf(sb, "  %4s  %-40s %-16s %8s  %s\n", "rank", "op",
                      "kind", "SQNR", s->has_target ? "choice" : "int16");
  for (size_t i = 0; i < s->nops; i++) {
    const quill_sensitivity_op *op = &s->ops[i];
    const char *last = s->has_target ? quill_precision_name(op->choice)
                       : op->int16_ok ? "yes"
                                      : "no";
    quill_strbuf_printf(sb, "  %4zu  %-40s %-16s %8.2f  %s\n", i + 1,
                        op->name, op->opcode, op->sqnr_db, last);
  }
  quill_strbuf_printf(sb, "all quantized: %.2f dB\n", s->sqnr_all);
  if (!s->has_target)
    return;
  size_t n16 = quill_sensitivity_num_int16(s);
  if (!s->nchosen)
    quill_strbuf_printf(sb, "target %.2f dB: met with every op quantized\n",
                        s->target);
  else if (s->float_only || !n16)
    quill_strbuf_printf(sb, "target %.2f dB: %s with the %zu worst op%s kept "
                            "float: %.2f dB (--keep-float %s)\n",
                        s->target, s->met ? "met" : "NOT met", s->nchosen,
                        s->nchosen == 1 ? "" : "s", s->sqnr_chosen,
                        s->keep_float);
  else
    quill_strbuf_printf(sb, "target %.2f dB: %s with the %zu worst op%s "
                            "raised, %zu to int16 and %zu kept float: %.2f dB "
                            "(--override '%s'%s%s)\n",
                        s->target, s->met ? "met" : "NOT met", s->nchosen,
                        s->nchosen == 1 ? "" : "s", n16, s->nchosen - n16,
                        s->sqnr_chosen, s->overrides,
                        *s->keep_float ? " --keep-float " : "", s->keep_float);
}
