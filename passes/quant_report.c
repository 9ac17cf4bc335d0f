/*
 * quant_report.c - build and measure the quantization report (see
 * quant_report.h; formats in quant_report_write.c and _html.c).
 *
 *   m ──copy──> F = PREPARE(m)          (float, ops as the backend runs them)
 *   m ──copy──> Q = ALL(m)              (exactly what `quill quantize` does)
 *
 * Rows, in F's program order:
 *   inputs     F's graph arguments; x_q is Q's `quantize` of the argument
 *   ops        F's ops (not constants), matched with Q's "compute" ops
 *              (not constants, casts or the return) by key and occurrence:
 *              the k-th F op keyed K is the k-th Q compute op keyed K. The
 *              key is the location name, else the first result's value
 *              name (both interned, so compared as pointers). x_q is the
 *              Q op's result when it is quantized (an integer op), else
 *              the `quantize` every use of it goes through (QDQ), else
 *              the float result itself (kept-float ops).
 *   fused      ops of m whose key F lacks (folded by fold-batchnorm, fused
 *              by fuse-activation or fuse-patterns, removed by
 *              canonicalize); placed after the row of the op they went
 *              into: for batch_norm, relu and clip the producer (operand
 *              0 up to an op F has), for the others the consumer their
 *              results reach (fuse-patterns keeps a chain's last op),
 *              else the producer.
 *
 * Measuring: for each sample, F runs with an observer that copies each
 * row's output (as doubles) into the row's buffer; then Q runs with an
 * observer that reads each tracked result through its quant type and adds
 * (x, x_q) to the row's SQNR sums. Op ids index the row maps.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "ir/dot.h"
#include "passes/quant_report.h"
#include "passes/quant_report_impl.h"

/* ---- SQNR ------------------------------------------------------------------ */

void quill_sqnr_add(quill_sqnr *s, const double *x, const double *xq,
                    size_t n) {
  double sig = 0, noise = 0;
  for (size_t i = 0; i < n; i++) {
    double d = x[i] - xq[i];
    sig += x[i] * x[i];
    noise += d * d;
  }
  s->signal += sig;
  s->noise += noise;
  s->count += n;
}

double quill_sqnr_db(const quill_sqnr *s) {
  if (s->noise == 0)
    return INFINITY;
  if (s->signal == 0)
    return -INFINITY;
  return 10.0 * log10(s->signal / s->noise);
}

const char *quill_report_status_name(quill_report_status s) {
  static const char *const names[] = {
      [QUILL_REPORT_QUANTIZED] = "quantized",
      [QUILL_REPORT_FLOAT] = "float",
      [QUILL_REPORT_FUSED] = "fused",
      [QUILL_REPORT_MISSING] = "missing",
  };
  return names[s];
}

/* ---- key maps: interned name -> items in insertion order ----------------------- */

typedef struct keymap {
  quill_context *ctx;
  const char **key;
  int32_t *head, *tail; /* first / last item of each key */
  size_t cap, count;
  int32_t *next;        /* per item: the next item of the same key */
  size_t items_cap;
} keymap;

static size_t key_hash(const char *k, size_t cap) {
  return (size_t)(((uint64_t)(uintptr_t)k * 0x9E3779B97F4A7C15ull) >> 17) &
         (cap - 1);
}

static void keymap_free(keymap *m) {
  quill_free(m->ctx, m->key, m->cap * sizeof *m->key);
  quill_free(m->ctx, m->head, m->cap * sizeof *m->head);
  quill_free(m->ctx, m->tail, m->cap * sizeof *m->tail);
  quill_free(m->ctx, m->next, m->items_cap * sizeof *m->next);
}

/* A map for up to n items (keys <= n). */
static quill_status keymap_init(keymap *m, quill_context *ctx, size_t n) {
  memset(m, 0, sizeof *m);
  m->ctx = ctx;
  m->cap = 16;
  while (m->cap < 2 * n + 2)
    m->cap *= 2;
  m->items_cap = n + 1;
  m->key = quill_calloc(ctx, m->cap, sizeof *m->key);
  m->head = quill_calloc(ctx, m->cap, sizeof *m->head);
  m->tail = quill_calloc(ctx, m->cap, sizeof *m->tail);
  m->next = quill_calloc(ctx, m->items_cap, sizeof *m->next);
  if (!m->key || !m->head || !m->tail || !m->next) {
    keymap_free(m);
    return QUILL_ERR_NOMEM;
  }
  return QUILL_OK;
}

static size_t keymap_slot(const keymap *m, const char *k) {
  size_t i = key_hash(k, m->cap);
  while (m->key[i] && m->key[i] != k)
    i = (i + 1) & (m->cap - 1);
  return i;
}

/* Add item (0 <= item < n, increasing) under k; returns how many items
 * had key k before (the occurrence index). */
static size_t keymap_add(keymap *m, const char *k, int32_t item) {
  size_t i = keymap_slot(m, k), occ = 0;
  m->next[item] = -1;
  if (!m->key[i]) {
    m->key[i] = k;
    m->head[i] = item;
  } else {
    for (int32_t it = m->head[i]; it >= 0; it = m->next[it])
      occ++;
    m->next[m->tail[i]] = item;
  }
  m->tail[i] = item;
  return occ;
}

/* The item of occurrence `occ` under k, or -1. */
static int32_t keymap_nth(const keymap *m, const char *k, size_t occ) {
  size_t i = keymap_slot(m, k);
  if (!m->key[i])
    return -1;
  int32_t it = m->head[i];
  while (it >= 0 && occ--)
    it = m->next[it];
  return it;
}

/* ---- helpers --------------------------------------------------------------------- */

static const char *op_key(quill_context *ctx, const quill_op *op) {
  if (quill_op_loc(op).name)
    return quill_op_loc(op).name;
  const char *vn = quill_op_num_results(op)
                       ? quill_value_name(quill_op_result(op, 0))
                       : NULL;
  return vn ? quill_ident_get(ctx, vn) : NULL;
}

static bool is_row_op(const quill_op *op) {
  return !quill_op_has_flag(op, QUILL_OPF_CONSTANT) &&
         !quill_op_has_flag(op, QUILL_OPF_TERMINATOR);
}

static bool is_compute_op(const quill_op *op) {
  quill_op_qclass c = quill_op_quant_class(op);
  return c == QUILL_OP_QCLASS_FLOAT || c == QUILL_OP_QCLASS_QUANTIZED;
}

static quill_type *elem_of(const quill_value *v) {
  quill_type *t = quill_value_type(v);
  return t && quill_type_is_tensor(t) ? quill_type_elem(t) : t;
}

static quill_type *quant_elem(const quill_value *v) {
  quill_type *e = elem_of(v);
  return e && quill_type_is_quant(e) ? e : NULL;
}

void quill_report_tensor_to_real(const quill_tensor *t, double *out) {
  size_t n = quill_tensor_num_elements(t);
  const quill_type *e = quill_type_elem(t->type);
  if (!quill_type_is_quant(e)) {
    if (quill_type_kind_of(e) == QUILL_TYPE_F32) {
      const float *p = t->data;
      for (size_t i = 0; i < n; i++)
        out[i] = p[i];
    } else {
      for (size_t i = 0; i < n; i++)
        out[i] = quill_tensor_get_f64(t, i);
    }
    return;
  }
  const double *s = quill_type_quant_scales(e);
  const int64_t *zp = quill_type_quant_zero_points(e);
  int32_t axis = quill_type_quant_axis_of(e);
  size_t inner = 1, dim = 1;
  if (axis >= 0 && (unsigned)axis < quill_type_rank(t->type)) {
    dim = (size_t)quill_type_dim(t->type, (unsigned)axis);
    for (unsigned d = (unsigned)axis + 1; d < quill_type_rank(t->type); d++)
      inner *= (size_t)quill_type_dim(t->type, d);
  }
  for (size_t i = 0; i < n; i++) {
    size_t c = axis >= 0 && dim ? (i / inner) % dim : 0;
    out[i] = (double)(quill_tensor_get_i64(t, i) - zp[c]) * s[c];
  }
}

/* Round-trip a module through its text: an exact copy (file locations
 * kept). NULL after diagnostics or on allocation failure. */
quill_module *quill_report_clone_module(quill_context *ctx,
                                        const quill_module *m) {
  quill_strbuf sb;
  quill_strbuf_init(&sb, ctx);
  quill_print_options po = {.print_locs = true};
  quill_print_module(m, &sb, &po);
  quill_module *c = quill_strbuf_failed(&sb)
                        ? NULL
                        : quill_parse_module(ctx, quill_strbuf_str(&sb), sb.len,
                                             "<report copy>", 0);
  quill_strbuf_free(&sb);
  return c;
}

/* ---- report object ----------------------------------------------------------------- */

static quill_status grow_rows(quill_quant_report *r) {
  if (r->nrows < r->cap)
    return QUILL_OK;
  size_t nc = r->cap ? 2 * r->cap : 32;
  report_entry *e = quill_realloc(r->ctx, r->rows, r->cap * sizeof *e,
                                  nc * sizeof *e);
  if (!e)
    return QUILL_ERR_NOMEM;
  r->rows = e;
  r->cap = nc;
  return QUILL_OK;
}

static report_entry *new_row(quill_quant_report *r) {
  if (grow_rows(r))
    return NULL;
  report_entry *e = &r->rows[r->nrows++];
  memset(e, 0, sizeof *e);
  e->arg = -1;
  return e;
}

void quill_quant_report_destroy(quill_quant_report *r) {
  if (!r)
    return;
  quill_context *ctx = r->ctx;
  for (size_t i = 0; i < r->nrows; i++)
    quill_free(ctx, r->rows[i].buf, r->rows[i].buf_n * sizeof(double));
  quill_free(ctx, r->rows, r->cap * sizeof *r->rows);
  if (r->outs)
    quill_free(ctx, r->outs, (r->nouts + 1) * sizeof *r->outs);
  quill_free(ctx, r->fmap, r->fmap_n * sizeof *r->fmap);
  quill_free(ctx, r->qmap, r->qmap_n * sizeof *r->qmap);
  quill_free(ctx, r->qrow, r->qmap_n * sizeof *r->qrow);
  quill_free(ctx, r->scratch, r->scratch_n * sizeof *r->scratch);
  quill_free(ctx, r->keep, r->num_keep_cap * sizeof *r->keep);
  quill_string_free(ctx, r->keep_text);
  quill_strbuf_free(&r->accuracy_log);
  if (r->flt)
    quill_module_destroy(r->flt);
  if (r->qnt)
    quill_module_destroy(r->qnt);
  quill_free(ctx, r, sizeof *r);
}

size_t quill_quant_report_num_rows(const quill_quant_report *r) {
  return r->nrows;
}
const quill_report_row *quill_quant_report_row(const quill_quant_report *r,
                                               size_t i) {
  return i < r->nrows ? &r->rows[i].row : NULL;
}
size_t quill_quant_report_num_outputs(const quill_quant_report *r) {
  return r->nouts;
}
const quill_report_output *
quill_quant_report_output(const quill_quant_report *r, size_t i) {
  return i < r->nouts ? &r->outs[i] : NULL;
}
const quill_report_accuracy *
quill_quant_report_accuracy(const quill_quant_report *r) {
  return &r->acc;
}
size_t quill_quant_report_num_samples(const quill_quant_report *r) {
  return r->samples;
}
const char *quill_quant_report_backend(const quill_quant_report *r) {
  return quill_backend_name(r->b);
}
const char *quill_quant_report_keep_float(const quill_quant_report *r) {
  return r->keep_float;
}
const char *quill_quant_report_accuracy_log(const quill_quant_report *r) {
  return quill_strbuf_str(&r->accuracy_log);
}
quill_module *quill_quant_report_quantized(const quill_quant_report *r) {
  return r->qnt;
}

/* Split keep-float at commas (names interned, compared as pointers). */
static quill_status parse_keep(quill_quant_report *r, const char *kf) {
  if (!kf || !*kf)
    return QUILL_OK;
  r->keep_float = quill_ident_get(r->ctx, kf);
  size_t n = 1;
  for (const char *p = kf; *p; p++)
    n += *p == ',';
  r->keep_text = quill_strdup(r->ctx, kf);
  r->keep = quill_calloc(r->ctx, n, sizeof *r->keep);
  if (!r->keep_text || !r->keep || !r->keep_float)
    return QUILL_ERR_NOMEM;
  r->num_keep_cap = n;
  for (char *s = r->keep_text, *e;; s = e + 1) {
    e = strchr(s, ',');
    if (e)
      *e = 0;
    if (*s && !(r->keep[r->num_keep++] = quill_ident_get(r->ctx, s)))
      return QUILL_ERR_NOMEM;
    if (!e)
      break;
  }
  return QUILL_OK;
}

/* As insert-observers decides: the loc name or the first result's name. */
static bool kept_by_user(const quill_quant_report *r, const quill_op *op) {
  const char *ln = quill_op_loc(op).name;
  const char *vn = quill_op_num_results(op)
                       ? quill_value_name(quill_op_result(op, 0))
                       : NULL;
  for (size_t i = 0; i < r->num_keep; i++)
    if ((ln && !strcmp(ln, r->keep[i])) || (vn && !strcmp(vn, r->keep[i])))
      return true;
  return false;
}

/* ---- rows --------------------------------------------------------------------------- */

static void classify_input(report_entry *e, const quill_graph *qg) {
  quill_value *a = quill_graph_arg(qg, (unsigned)e->arg);
  for (quill_use *u = quill_value_first_use(a); u; u = quill_use_next(u)) {
    quill_op *user = quill_use_user(u);
    if (quill_op_opcode(user) == QUILL_OP_QUANTIZE) {
      e->track = user;
      e->row.output_quant = quant_elem(quill_op_result(user, 0));
      e->row.status = QUILL_REPORT_QUANTIZED;
      e->row.reason = "graph input";
      return;
    }
  }
  e->row.status = QUILL_REPORT_FLOAT;
  e->row.reason = "graph input read by float ops only";
}

/* The quantized constant behind operand i of a Q op (through a
 * dequantize), or NULL. */
static const quill_op *quant_constant(const quill_op *qop, unsigned i) {
  const quill_op *d = quill_value_def(quill_op_operand(qop, i));
  if (d && quill_op_opcode(d) == QUILL_OP_DEQUANTIZE)
    d = quill_value_def(quill_op_operand(d, 0));
  if (!d || !quill_op_has_flag(d, QUILL_OPF_CONSTANT))
    return NULL;
  quill_type *q = quant_elem(quill_op_result(d, 0));
  if (!q || quill_type_kind_of(quill_type_quant_storage(q)) == QUILL_TYPE_I32)
    return NULL;
  return d;
}

/* The weight: the first quantized non-i32 constant operand; its SQNR
 * against F's constant in the same operand slot. */
static quill_status classify_weight(quill_quant_report *r, report_entry *e) {
  const quill_op *fop = e->fop, *qop = e->qop;
  for (unsigned i = 1; i < quill_op_num_operands(qop); i++) {
    const quill_op *qc = quant_constant(qop, i);
    if (!qc)
      continue;
    e->row.weight_quant = quant_elem(quill_op_result(qc, 0));
    const quill_attr *qa = quill_op_attr(qc, "value");
    const quill_attr *fa = i < quill_op_num_operands(fop)
                               ? quill_value_constant(quill_op_operand(fop, i))
                               : NULL;
    if (!qa || !fa || quill_attr_kind_of(qa) != QUILL_ATTR_DENSE)
      return QUILL_OK;
    quill_tensor ft = quill_tensor_from_attr(fa),
                 qt = quill_tensor_from_attr(qa);
    size_t n = quill_tensor_num_elements(&ft);
    if (n != quill_tensor_num_elements(&qt) ||
        !quill_type_is_float(quill_type_elem(ft.type)))
      return QUILL_OK;
    double *x = quill_calloc(r->ctx, n ? n : 1, sizeof *x);
    double *xq = quill_calloc(r->ctx, n ? n : 1, sizeof *xq);
    if (x && xq) {
      quill_report_tensor_to_real(&ft, x);
      quill_report_tensor_to_real(&qt, xq);
      quill_sqnr_add(&e->row.weight_sqnr, x, xq, n);
    }
    quill_free(r->ctx, x, (n ? n : 1) * sizeof *x);
    quill_free(r->ctx, xq, (n ? n : 1) * sizeof *xq);
    return x && xq ? QUILL_OK : QUILL_ERR_NOMEM;
  }
  return QUILL_OK;
}

/* Count the values of the op's int32 bias (a constant operand, through a
 * dequantize or not, whose storage is i32) at the int32 bounds, where
 * `quantize` saturated them; the reason gets a note. */
static quill_status classify_bias(quill_quant_report *r, report_entry *e) {
  const quill_op *qop = e->qop;
  for (unsigned i = 2; i < quill_op_num_operands(qop); i++) {
    const quill_op *d = quill_value_def(quill_op_operand(qop, i));
    if (d && quill_op_opcode(d) == QUILL_OP_DEQUANTIZE)
      d = quill_value_def(quill_op_operand(d, 0));
    quill_type *q = d && quill_op_has_flag(d, QUILL_OPF_CONSTANT)
                        ? quant_elem(quill_op_result(d, 0))
                        : NULL;
    const quill_attr *a = q ? quill_op_attr(d, "value") : NULL;
    if (!a || quill_attr_kind_of(a) != QUILL_ATTR_DENSE ||
        quill_type_kind_of(quill_type_quant_storage(q)) != QUILL_TYPE_I32)
      continue;
    quill_tensor t = quill_tensor_from_attr(a);
    size_t n = quill_tensor_num_elements(&t), bad = 0;
    for (size_t k = 0; k < n; k++) {
      int64_t v = quill_tensor_get_i64(&t, k);
      bad += v == INT32_MIN || v == INT32_MAX;
    }
    if (!bad)
      return QUILL_OK;
    e->row.bias_saturated = bad;
    quill_strbuf sb;
    quill_strbuf_init(&sb, r->ctx);
    quill_strbuf_printf(&sb,
                        "%s; int32 bias saturated in %zu of %zu values "
                        "(input or weight scale too small)",
                        e->row.reason ? e->row.reason : "", bad, n);
    const char *s = quill_strbuf_failed(&sb)
                        ? NULL
                        : quill_ident_get(r->ctx, quill_strbuf_str(&sb));
    quill_strbuf_free(&sb);
    if (!s)
      return QUILL_ERR_NOMEM;
    e->row.reason = s;
    return QUILL_OK;
  }
  return QUILL_OK;
}

/* {keep_float = true} on op: the ONNX importer's mark on the ops of an
 * unrolled recurrent node (backend rnn_float), or insert-observers' on the
 * ops it kept float. */
static bool marked_float(const quill_op *op) {
  const quill_attr *a = quill_op_attr(op, "keep_float");
  return a && quill_attr_kind_of(a) == QUILL_ATTR_BOOL &&
         quill_attr_bool_value(a);
}

/* Kept float by one of the config's overrides (insert-observers' rule). */
static bool kept_by_config(const quill_quant_report *r, const quill_op *op) {
  return quill_backend_quantizes(r->b, quill_op_opcode(op)) &&
         quill_backend_op_quant(r->b, op).keep_float;
}

/* "keep_float by the config's overrides[i]", with the row length when the
 * override selects by it (interned; a static phrase without memory). */
static const char *override_reason(const quill_quant_report *r,
                                   const quill_op *op) {
  int i = quill_backend_op_quant(r->b, op).override;
  int64_t lim = quill_backend_override_row_limit(r->b, (unsigned)i);
  quill_strbuf sb;
  quill_strbuf_init(&sb, r->ctx);
  quill_strbuf_printf(&sb, "keep_float by the config's overrides[%d]", i);
  if (lim)
    quill_strbuf_printf(&sb, " (row of %lld > %lld)",
                        (long long)quill_op_row_length(op), (long long)lim);
  const char *s = quill_strbuf_failed(&sb)
                      ? NULL
                      : quill_ident_get(r->ctx, quill_strbuf_str(&sb));
  quill_strbuf_free(&sb);
  return s ? s : "keep_float by the config's overrides";
}

static const char *float_reason(const quill_quant_report *r,
                                const quill_op *fop, const quill_op *qop) {
  quill_opcode opc = quill_op_opcode(fop);
  if (kept_by_user(r, fop))
    return "keep-float by user";
  if (kept_by_config(r, fop))
    return override_reason(r, fop);
  if (marked_float(fop))
    return "part of a recurrent node (rnn_float in config)";
  if (marked_float(qop) && quill_backend_shares_params(r->b, opc))
    return "shares params, between float ops (no quantized reader)";
  if (quill_backend_keeps_float(r->b, opc))
    return "float_ops in config";
  if (!quill_backend_quantizes(r->b, opc))
    return "not in the backend's quantize_ops";
  return "not a float op";
}

static const char *quant_reason(const quill_quant_report *r,
                                const quill_op *fop) {
  quill_opcode opc = quill_op_opcode(fop);
  if (!quill_backend_quantizes(r->b, opc))
    return "reads quantized values";
  if (quill_backend_fixed_params(r->b, opc).present)
    return "in quantize_ops, fixed output params";
  if (quill_backend_shares_params(r->b, opc))
    return "in quantize_ops, shares its input's params";
  if (!quill_backend_quantizes_outputs(r->b))
    return "in quantize_ops, float output (quantize_outputs: false)";
  return "in quantize_ops";
}

/* Quantized as insert-observers decides (backend quantize_ops, a float
 * result, not kept float by the user), or an integer op (quantized types:
 * after fuse-qdq). The QDQ form alone cannot tell a weightless kept-float
 * op between quantized ops from a quantized one. */
static bool is_quantized(const quill_quant_report *r, const quill_op *fop,
                         const quill_op *qop) {
  if (quill_op_has_quant_types(qop))
    return true;
  quill_type *e = quill_op_num_results(fop) ? elem_of(quill_op_result(fop, 0))
                                            : NULL;
  return quill_backend_quantizes(r->b, quill_op_opcode(fop)) && e &&
         quill_type_is_float(e) && !kept_by_user(r, fop) &&
         !kept_by_config(r, fop) && !marked_float(fop) && !marked_float(qop);
}

static quill_status classify_op(quill_quant_report *r, report_entry *e) {
  const quill_op *fop = e->fop, *qop = e->qop;
  const quill_attr *act = quill_op_attr(fop, "activation");
  if (act && quill_attr_kind_of(act) == QUILL_ATTR_STRING)
    e->row.activation = quill_attr_string_value(act, NULL);
  if (!qop) {
    e->row.status = QUILL_REPORT_MISSING;
    e->row.reason = "no op of this name in the quantized model";
    return QUILL_OK;
  }
  e->track = qop;
  if (!is_quantized(r, fop, qop)) {
    e->row.status = QUILL_REPORT_FLOAT;
    e->row.reason = float_reason(r, fop, qop);
    return QUILL_OK;
  }
  e->row.status = QUILL_REPORT_QUANTIZED;
  e->row.reason = quant_reason(r, fop);
  if (quill_op_num_results(qop)) {
    /* x_q: an integer result as it is, else the quantize that every use
     * goes through (QDQ), else the float result (quantize_outputs off). */
    quill_value *y = quill_op_result(qop, 0);
    e->row.output_quant = quant_elem(y);
    const quill_op *q = NULL;
    bool all_q = quill_value_has_uses(y) && !e->row.output_quant;
    for (quill_use *u = quill_value_first_use(y); u && all_q;
         u = quill_use_next(u)) {
      all_q = quill_op_opcode(quill_use_user(u)) == QUILL_OP_QUANTIZE;
      if (!q)
        q = quill_use_user(u);
    }
    if (all_q && q) {
      e->track = q;
      e->row.output_quant = quant_elem(quill_op_result(q, 0));
    }
  }
  quill_status st = classify_weight(r, e);
  return st ? st : classify_bias(r, e);
}

/* The row of the first op F has that op's results reach through ops F
 * lacks (depth-first over the users, at most `depth` ops deep), or -1. */
static int32_t consumer_row(quill_quant_report *r, const keymap *fk,
                            const quill_op *op, unsigned depth) {
  if (!depth)
    return -1;
  for (unsigned i = 0; i < quill_op_num_results(op); i++)
    for (quill_use *u = quill_value_first_use(quill_op_result(op, i)); u;
         u = quill_use_next(u)) {
      const quill_op *user = quill_use_user(u);
      const char *k = is_row_op(user) ? op_key(r->ctx, user) : NULL;
      if (!k)
        continue;
      int32_t row = keymap_nth(fk, k, 0);
      if (row < 0)
        row = consumer_row(r, fk, user, depth - 1);
      if (row >= 0)
        return row;
    }
  return -1;
}

/* The rows of ops m has and F lacks, after the op they went into. */
static quill_status add_fused_rows(quill_quant_report *r, const quill_graph *og,
                                   const keymap *fk) {
  size_t sub = 1;
  QUILL_GRAPH_FOREACH(og, op) {
    const char *k = is_row_op(op) ? op_key(r->ctx, op) : NULL;
    if (!k || keymap_nth(fk, k, 0) >= 0)
      continue;
    const quill_op *d = op;
    int32_t into = -1;
    bool down = false;
    /* fuse-patterns folds a chain into its last op (the consumer): follow
     * single uses down to an op F has; batch_norm and activations went
     * into their producer (operand 0 up). */
    quill_opcode opc = quill_op_opcode(op);
    if (opc != QUILL_OP_BATCH_NORM && opc != QUILL_OP_RELU &&
        opc != QUILL_OP_CLIP && quill_op_num_results(op)) {
      into = consumer_row(r, fk, op, 16);
      down = into >= 0;
    }
    while (into < 0 && d && quill_op_num_operands(d) &&
           (d = quill_value_def(quill_op_operand(d, 0))) && is_row_op(d)) {
      const char *dk = op_key(r->ctx, d);
      if (dk)
        into = keymap_nth(fk, dk, 0);
    }
    report_entry *e = new_row(r);
    if (!e)
      return QUILL_ERR_NOMEM;
    e->row.name = k;
    e->row.opcode = quill_op_name(op);
    e->row.status = QUILL_REPORT_FUSED;
    e->sub = sub++;
    if (into < 0) {
      e->anchor = SIZE_MAX;
      e->row.reason = "removed before quantization (canonicalize, "
                      "fuse-patterns, fold-batchnorm, fuse-activation)";
      continue;
    }
    const report_entry *p = &r->rows[into];
    e->anchor = p->anchor;
    e->row.fused_into = p->row.name;
    quill_strbuf sb;
    quill_strbuf_init(&sb, r->ctx);
    if (down)
      quill_strbuf_printf(&sb, "fused into %s %s", p->row.opcode,
                          p->row.name);
    else
      quill_strbuf_printf(&sb, "%s into producer %s",
                          opc == QUILL_OP_BATCH_NORM ? "folded" : "fused",
                          p->row.name);
    e->row.reason = quill_strbuf_failed(&sb)
                        ? NULL
                        : quill_ident_get(r->ctx, quill_strbuf_str(&sb));
    quill_strbuf_free(&sb);
    if (!e->row.reason)
      return QUILL_ERR_NOMEM;
  }
  return QUILL_OK;
}

static int entry_cmp(const void *a, const void *b) {
  const report_entry *x = a, *y = b;
  if (x->anchor != y->anchor)
    return x->anchor < y->anchor ? -1 : 1;
  return x->sub < y->sub ? -1 : x->sub > y->sub;
}

static size_t max_op_id(const quill_graph *g) {
  size_t m = 0;
  QUILL_GRAPH_FOREACH(g, op) {
    if ((size_t)quill_op_id(op) + 1 > m)
      m = (size_t)quill_op_id(op) + 1;
  }
  return m;
}

/* Op id -> row maps, after the rows are in their final order. */
static quill_status build_maps(quill_quant_report *r, const quill_graph *fg,
                               const quill_graph *qg) {
  r->fmap_n = max_op_id(fg);
  r->qmap_n = max_op_id(qg);
  r->fmap = quill_alloc(r->ctx, (r->fmap_n ? r->fmap_n : 1) * sizeof *r->fmap);
  r->qmap = quill_alloc(r->ctx, (r->qmap_n ? r->qmap_n : 1) * sizeof *r->qmap);
  r->qrow = quill_alloc(r->ctx, (r->qmap_n ? r->qmap_n : 1) * sizeof *r->qrow);
  r->fmap_n = r->fmap_n ? r->fmap_n : 1;
  r->qmap_n = r->qmap_n ? r->qmap_n : 1;
  if (!r->fmap || !r->qmap || !r->qrow)
    return QUILL_ERR_NOMEM;
  for (size_t i = 0; i < r->fmap_n; i++)
    r->fmap[i] = -1;
  for (size_t i = 0; i < r->qmap_n; i++)
    r->qmap[i] = r->qrow[i] = -1;
  for (size_t i = 0; i < r->nrows; i++) {
    report_entry *e = &r->rows[i];
    if (e->fop)
      r->fmap[quill_op_id(e->fop)] = (int32_t)i;
    if (e->track)
      r->qmap[quill_op_id(e->track)] = (int32_t)i;
    if (e->qop)
      r->qrow[quill_op_id(e->qop)] = (int32_t)i;
  }
  return QUILL_OK;
}

static quill_status build_rows(quill_quant_report *r, const quill_graph *og,
                               const quill_graph *fg, const quill_graph *qg) {
  keymap qk, fk;
  size_t nq = quill_graph_num_ops(qg), nf = quill_graph_num_ops(fg);
  const quill_op **qops = quill_calloc(r->ctx, nq + 1, sizeof *qops);
  if (!qops)
    return QUILL_ERR_NOMEM;
  quill_status st = keymap_init(&qk, r->ctx, nq);
  if (st) {
    quill_free(r->ctx, qops, (nq + 1) * sizeof *qops);
    return st;
  }
  if ((st = keymap_init(&fk, r->ctx, nf + quill_graph_num_args(fg)))) {
    keymap_free(&qk);
    quill_free(r->ctx, qops, (nq + 1) * sizeof *qops);
    return st;
  }
  int32_t nqops = 0;
  QUILL_GRAPH_FOREACH(qg, op) {
    const char *k = is_compute_op(op) ? op_key(r->ctx, op) : NULL;
    if (k) {
      qops[nqops] = op;
      keymap_add(&qk, k, nqops++);
    }
  }
  for (unsigned i = 0; i < quill_graph_num_args(fg) && !st; i++) {
    report_entry *e = new_row(r);
    if (!e) {
      st = QUILL_ERR_NOMEM;
      break;
    }
    const char *n = quill_value_name(quill_graph_arg(fg, i));
    e->arg = (int)i;
    e->sub = i;
    e->row.opcode = "input";
    e->row.name = n ? quill_ident_get(r->ctx, n) : NULL;
    if (!e->row.name) {
      char buf[32];
      snprintf(buf, sizeof buf, "input%u", i);
      e->row.name = quill_ident_get(r->ctx, buf);
    }
    if (!e->row.name)
      st = QUILL_ERR_NOMEM;
    else
      classify_input(e, qg);
  }
  size_t pos = 1;
  QUILL_GRAPH_FOREACH(fg, op) {
    if (st || !is_row_op(op))
      continue;
    const char *k = op_key(r->ctx, op);
    size_t idx = r->nrows;
    report_entry *e = new_row(r);
    if (!e) {
      st = QUILL_ERR_NOMEM;
      break;
    }
    e->fop = op;
    e->anchor = pos++;
    e->row.opcode = quill_op_name(op);
    e->row.name = k ? k : quill_op_name(op);
    if (k) {
      size_t occ = keymap_add(&fk, k, (int32_t)idx);
      int32_t qi = keymap_nth(&qk, k, occ);
      e->qop = qi >= 0 ? qops[qi] : NULL;
    }
    st = classify_op(r, e);
  }
  if (!st)
    st = add_fused_rows(r, og, &fk);
  keymap_free(&qk);
  keymap_free(&fk);
  quill_free(r->ctx, qops, (nq + 1) * sizeof *qops);
  if (st)
    return st;
  qsort(r->rows, r->nrows, sizeof *r->rows, entry_cmp);
  return build_maps(r, fg, qg);
}

/* ---- create ------------------------------------------------------------------------- */

quill_status quill_quant_report_create(quill_context *ctx,
                                       const quill_module *m,
                                       const quill_quantize_options *o,
                                       quill_calib_dataset *calib,
                                       quill_quant_report **out) {
  *out = NULL;
  if (!quill_module_num_graphs(m))
    return quill_error(ctx, quill_loc_unknown(),
                       "report: the model has no function");
  if (!calib)
    return quill_error(ctx, quill_loc_unknown(),
                       "report: no calibration samples");
  quill_quant_report *r = quill_calloc(ctx, 1, sizeof *r);
  if (!r)
    return QUILL_ERR_NOMEM;
  r->ctx = ctx;
  quill_strbuf_init(&r->accuracy_log, ctx);
  quill_status st = QUILL_OK;
  if (!(r->b = quill_backend_get(ctx, o->backend)) ||
      !(r->backend_opt = quill_ident_get(ctx, o->backend)))
    st = QUILL_ERR_INVALID;
  if (!st)
    st = parse_keep(r, o->keep_float);
  if (!st && (!(r->flt = quill_report_clone_module(ctx, m)) ||
              !(r->qnt = quill_report_clone_module(ctx, m))))
    st = quill_diag_error_count(ctx) ? QUILL_ERR_INVALID : QUILL_ERR_NOMEM;
  if (!st)
    st = quill_quantize_module(ctx, r->flt, o, QUILL_QUANTIZE_PREPARE, calib,
                               NULL); /* equalize may need the data */
  quill_quantize_options qo = *o;
  qo.log = &r->accuracy_log; /* what the accuracy passes did, once */
  if (!st)
    /* the reference form: float ops between quantize/dequantize keep the
     * float model's ops and locations one to one (the integer form differs
     * by at most one step of requantization rounding) */
    st = quill_quantize_module(ctx, r->qnt, &qo,
                               QUILL_QUANTIZE_PREPARE | QUILL_QUANTIZE_QUANTIZE,
                               calib, NULL);
  if (!st)
    st = build_rows(r, quill_module_graph(m, 0), quill_module_graph(r->flt, 0),
                    quill_module_graph(r->qnt, 0));
  if (!st)
    st = quill_report_measure(r, calib);
  if (st) {
    quill_quant_report_destroy(r);
    return st;
  }
  *out = r;
  return QUILL_OK;
}

/* ---- the graph picture ------------------------------------------------------------ */

typedef struct note_ctx {
  const quill_quant_report *r;
  quill_strbuf sb;
} note_ctx;

static const char *graph_note(void *ud, const quill_op *op) {
  note_ctx *n = ud;
  const quill_quant_report *r = n->r;
  size_t id = quill_op_id(op);
  if (id >= r->qmap_n || r->qrow[id] < 0)
    return NULL;
  const quill_report_row *row = &r->rows[r->qrow[id]].row;
  if (!row->sqnr.count)
    return NULL;
  quill_strbuf_clear(&n->sb);
  quill_strbuf_puts(&n->sb, "SQNR ");
  quill_report_put_db(&n->sb, &row->sqnr);
  quill_strbuf_puts(&n->sb, " dB");
  return quill_strbuf_str(&n->sb);
}

/* Colours from the rows: a row's Q op is quantized or float as the row
 * says; other ops (casts, constants) as the graph alone says. */
static quill_op_qclass graph_class(void *ud, const quill_op *op) {
  note_ctx *n = ud;
  const quill_quant_report *r = n->r;
  size_t id = quill_op_id(op);
  quill_op_qclass c = quill_op_quant_class(op);
  if (id >= r->qmap_n || r->qrow[id] < 0 ||
      (c != QUILL_OP_QCLASS_FLOAT && c != QUILL_OP_QCLASS_QUANTIZED))
    return c;
  return r->rows[r->qrow[id]].row.status == QUILL_REPORT_QUANTIZED
             ? QUILL_OP_QCLASS_QUANTIZED
             : QUILL_OP_QCLASS_FLOAT;
}

quill_status quill_quant_report_write_graph(const quill_quant_report *r,
                                            const char *path,
                                            const char *dot_program) {
  note_ctx n = {.r = r};
  quill_strbuf_init(&n.sb, r->ctx);
  quill_dot_options o = {
      .note = graph_note,
      .note_ud = &n,
      .classify = graph_class,
      .dot_program = dot_program};
  quill_status st = quill_dot_write_file(r->qnt, path, &o);
  quill_strbuf_free(&n.sb);
  return st;
}
