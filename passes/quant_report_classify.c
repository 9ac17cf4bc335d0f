/*
 * quant_report_classify.c - each report row's status and reason: why an
 * op is quantized or kept float (the user's keep-float list, the config's
 * overrides and op lists, as insert-observers decides), which result is
 * its x_q (the integer result, or the quantize all its uses go through),
 * its weight's SQNR against the float constant, and how many of its
 * int32 bias values `quantize` saturated.
 */
#include <string.h>

#include "backends/backend.h"
#include "ir/dot.h" /* quill_op_has_quant_types */
#include "passes/quant_report_impl.h"

/* Split keep-float at commas (names interned, compared as pointers). */
quill_status quill_report_parse_keep(quill_quant_report *r, const char *kf) {
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

void quill_report_classify_input(report_entry *e, const quill_graph *qg) {
  quill_value *a = quill_graph_arg(qg, (unsigned)e->arg);
  for (quill_use *u = quill_value_first_use(a); u; u = quill_use_next(u)) {
    quill_op *user = quill_use_user(u);
    if (quill_op_opcode(user) == QUILL_OP_QUANTIZE) {
      e->track = user;
      e->row.output_quant =
          quill_report_quant_elem(quill_op_result(user, 0));
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
  quill_type *q = quill_report_quant_elem(quill_op_result(d, 0));
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
    e->row.weight_quant = quill_report_quant_elem(quill_op_result(qc, 0));
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
                        ? quill_report_quant_elem(quill_op_result(d, 0))
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
  quill_type *e = quill_op_num_results(fop)
                       ? quill_report_elem_of(quill_op_result(fop, 0))
                       : NULL;
  return quill_backend_quantizes(r->b, quill_op_opcode(fop)) && e &&
         quill_type_is_float(e) && !kept_by_user(r, fop) &&
         !kept_by_config(r, fop) && !marked_float(fop) && !marked_float(qop);
}

quill_status quill_report_classify_op(quill_quant_report *r, report_entry *e) {
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
    e->row.output_quant = quill_report_quant_elem(y);
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
      e->row.output_quant = quill_report_quant_elem(quill_op_result(q, 0));
    }
  }
  quill_status st = classify_weight(r, e);
  return st ? st : classify_bias(r, e);
}
