/*
 * quant_report_impl.h - the report's insides, private to
 * passes/quant_report*.c.
 */
#ifndef QUILL_PASSES_QUANT_REPORT_IMPL_H
#define QUILL_PASSES_QUANT_REPORT_IMPL_H

#include "backends/backend.h"
#include "passes/quant_report.h"

/* A row plus where its values come from. */
typedef struct report_entry {
  quill_report_row row;   /* first: what the accessors hand out */
  const quill_op *fop;    /* the float op (NULL: input or fused row) */
  const quill_op *qop;    /* the matched quantized compute op, or NULL */
  const quill_op *track;  /* Q op whose result 0 is x_q (NULL: for an
                             input, the argument itself) */
  int arg;                /* input rows: the argument index; else -1 */
  size_t anchor, sub;     /* row order: F position; 0, or 1+k when fused */
  double *buf;            /* F's output for the current sample */
  size_t buf_n;
  bool mismatch;          /* F and Q element counts differ: not measured */
} report_entry;

struct quill_quant_report {
  quill_context *ctx;
  const quill_backend *b;
  const char *backend_opt; /* interned: the backend option as given */
  const char *keep_float; /* interned, or NULL */
  const char **keep;      /* keep_float split at commas (interned) */
  size_t num_keep, num_keep_cap;
  char *keep_text;
  quill_module *flt, *qnt; /* owned: PREPARE(m), ALL(m) */
  report_entry *rows;
  size_t nrows, cap;
  quill_report_output *outs;
  size_t nouts;
  quill_report_accuracy acc;
  bool compiled;            /* the compiled column was measured */
  const char *compiled_why; /* interned: why it was not, or NULL */
  size_t samples;
  int32_t *fmap, *qmap, *qrow; /* F op id -> row tracking it; Q op id ->
                                  row whose track / qop it is (-1: none) */
  size_t fmap_n, qmap_n;
  double *scratch; /* Q-side values */
  size_t scratch_n;
  quill_strbuf accuracy_log; /* lines from equalize / bias-correction */
};

/* The element type of v (its tensor's element, or v's type itself), and
 * that element when it is a quant type, else NULL. */
static inline quill_type *quill_report_elem_of(const quill_value *v) {
  quill_type *t = quill_value_type(v);
  return t && quill_type_is_tensor(t) ? quill_type_elem(t) : t;
}
static inline quill_type *quill_report_quant_elem(const quill_value *v) {
  quill_type *e = quill_report_elem_of(v);
  return e && quill_type_is_quant(e) ? e : NULL;
}

/* Row status and reason (quant_report_classify.c): keep_float split at
 * commas into r->keep; an input row (quantized when a `quantize` reads the
 * argument in qg); an op row from its F op and matched Q op (x_q, weight
 * SQNR, saturated bias count). */
quill_status quill_report_parse_keep(quill_quant_report *r, const char *kf);
void quill_report_classify_input(report_entry *e, const quill_graph *qg);
quill_status quill_report_classify_op(quill_quant_report *r, report_entry *e);

/* A copy of m through the printer and the parser (locations kept). */
quill_module *quill_report_clone_module(quill_context *ctx,
                                        const quill_module *m);
/* argmax of v[0..n) (the first of equal maxima). */
size_t quill_report_argmax(const double *v, size_t n);

/* Read every element of t as a real number: floats as they are, quantized
 * storage through its quant type ((q - zp[c]) * scale[c]). out holds
 * num_elements doubles. */
void quill_report_tensor_to_real(const quill_tensor *t, double *out);

/* Run every sample through F and Q and fill the SQNR sums
 * (quant_report_run.c). */
quill_status quill_report_measure(quill_quant_report *r,
                                  const quill_calib_dataset *calib);

/* "35.21", "inf", "-inf" for a measured SQNR; "-" when count is 0. */
void quill_report_put_db(quill_strbuf *sb, const quill_sqnr *s);
/* "i8 0.01269:-128" / "i8 per-axis(16) 6.1e-05..0.0021", or "-". */
void quill_report_put_quant(quill_strbuf *sb, const quill_type *q);
/* The HTML page (quant_report_html.c). */
void quill_quant_report_write_html(const quill_quant_report *r,
                                   const char *model, quill_strbuf *sb);

#endif /* QUILL_PASSES_QUANT_REPORT_IMPL_H */
