/*
 * fuse_qdq_match.h - the small helpers every fuse-qdq pattern file uses
 * (fuse_qdq_patterns.c, fuse_qdq_tables.c): the shared state, finding the
 * float op under a quantize, finishing a rewrite, building one-result ops.
 * Static inline: each is a few lines, and neither file exports them.
 */
#ifndef QUILL_PASSES_FUSE_QDQ_MATCH_H
#define QUILL_PASSES_FUSE_QDQ_MATCH_H

#include "passes/fuse_qdq.h"

typedef quill_fqdq fqdq;

static inline fqdq *state(const quill_pattern *p) { return (fqdq *)p->data; }

/* Kept float by the user (insert-observers marks it `keep_float`). */
static inline bool kept_float(const quill_op *op) {
  const quill_attr *k = quill_op_attr(op, "keep_float");
  return k && quill_attr_kind_of(k) == QUILL_ATTR_BOOL &&
         quill_attr_bool_value(k);
}

/* Whether op must stay float: kept float by the user, or of an opcode the
 * backend keeps float. In the reference form such an op can sit between a
 * dequantize and a quantize like a quantized one; only this tells them
 * apart. */
static inline bool stays_float(const fqdq *f, const quill_op *op) {
  if (kept_float(op))
    return true;
  return f->backend && quill_backend_keeps_float(f->backend, quill_op_opcode(op));
}

/* The float op producing the quantize q's operand, if it has one of the
 * opcodes in `ok` (an opcode-indexed table), one result, q as its only
 * user, and does not stay float; else NULL. */
static inline quill_op *producer(const fqdq *f, const quill_op *q, const bool *ok) {
  quill_value *x = quill_op_operand(q, 0);
  quill_op *p = quill_value_def(x);
  if (!p || !ok[quill_op_opcode(p)] || quill_op_num_results(p) != 1 ||
      !quill_fqdq_only_use(x, q) || stays_float(f, p))
    return NULL;
  return p;
}

/* The failure when producer() found nothing: silent if the operand's op is
 * of another kind (the pattern is not about it), logged if it has other
 * uses. */
static inline quill_match_result no_producer(quill_rewriter *rw, const quill_op *q,
                                      const bool *ok) {
  quill_op *p = quill_value_def(quill_op_operand(q, 0));
  if (!p || !ok[quill_op_opcode(p)])
    return QUILL_MATCH_FAILURE;
  const quill_attr *k = quill_op_attr(p, "keep_float");
  if (k)
    return quill_rewriter_fail(rw, q, "the '%s' op is kept float",
                               quill_op_name(p));
  return quill_rewriter_fail(rw, q, "the '%s' result has other uses",
                             quill_op_name(p));
}

/* Replace the root by res (which takes the root's value name) and count a
 * rewrite of `counted`. */
static inline quill_match_result finish(const quill_pattern *p, quill_rewriter *rw,
                                 quill_op *root, quill_value *res,
                                 quill_opcode counted) {
  const char *name = quill_value_name(quill_op_result(root, 0));
  if (name)
    (void)quill_value_set_name(res, name); /* cosmetic */
  quill_rewriter_replace_op(rw, root, &res);
  state(p)->fused[counted]++;
  return QUILL_MATCH_SUCCESS;
}

static inline quill_match_result oom(quill_rewriter *rw, quill_op *op) {
  quill_error(quill_rewriter_context(rw), quill_op_loc(op),
              "out of memory in fuse-qdq");
  return QUILL_MATCH_ERROR;
}

/* A string attribute, dflt if absent or not a string. */
static inline const char *str_attr(const quill_op *op, const char *name,
                            const char *dflt) {
  const quill_attr *a = quill_op_attr(op, name);
  return a && quill_attr_kind_of(a) == QUILL_ATTR_STRING
             ? quill_attr_string_value(a, NULL)
             : dflt;
}

static inline double scale0(const quill_type *qelem) {
  return quill_type_quant_scales(qelem)[0];
}

/* Create a one-result op and return its result (NULL on failure). */
static inline quill_value *emit(quill_rewriter *rw, quill_opcode opc, unsigned n,
                         quill_value *const *ops, quill_type *t,
                         const quill_fqdq_attrs *l, quill_loc loc) {
  quill_op *op = quill_rewriter_create_op(rw, opc, n, ops, 1, &t,
                                          l ? l->n : 0, l ? l->v : NULL, loc);
  return op ? quill_op_result(op, 0) : NULL;
}

/* The patterns of fuse_qdq_tables.c (lut, integer softmax, layer_norm),
 * for the set in fuse_qdq_patterns.c. */
quill_match_result quill_fqdq_match_lut(const quill_pattern *p,
                                        quill_rewriter *rw, quill_op *q);
quill_match_result quill_fqdq_match_softmax(const quill_pattern *p,
                                            quill_rewriter *rw, quill_op *q);
quill_match_result quill_fqdq_match_layer_norm(const quill_pattern *p,
                                               quill_rewriter *rw,
                                               quill_op *q);
/* fuse_qdq_lstm.c: TFLite's integer LSTM (qlstm). */
quill_match_result quill_fqdq_match_lstm(const quill_pattern *p,
                                         quill_rewriter *rw, quill_op *q);

#endif
