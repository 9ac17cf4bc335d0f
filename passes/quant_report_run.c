/*
 * quant_report_run.c - the report's measurements: the samples through the
 * float model F and the quantized model Q (reference interpreter).
 *
 *   per sample:  inputs -> buffers of the input rows
 *                F run, observer: row output  -> row buffer (doubles)
 *                Q run, observer: tracked value read through its quant
 *                                 type, (buffer, value) -> row SQNR sums
 *                F outputs vs Q outputs -> output SQNR sums
 *
 * Accuracy runs both models on labelled samples and compares the arg-max
 * of the first output's rows.
 */
#include <string.h>

#include "passes/quant_report_impl.h"

/* Make *buf hold n doubles (reallocated only when the size changes). */
static quill_status fit(quill_context *ctx, double **buf, size_t *cap,
                        size_t n) {
  if (*buf && *cap == n)
    return QUILL_OK;
  quill_free(ctx, *buf, *cap * sizeof **buf);
  *cap = 0;
  *buf = quill_calloc(ctx, n ? n : 1, sizeof **buf);
  if (!*buf)
    return QUILL_ERR_NOMEM;
  *cap = n ? n : 1;
  return QUILL_OK;
}

static quill_status f_observe(void *ud, const quill_op *op,
                              const quill_tensor *res, unsigned nres) {
  quill_quant_report *r = ud;
  size_t id = quill_op_id(op);
  if (!nres || id >= r->fmap_n || r->fmap[id] < 0)
    return QUILL_OK;
  report_entry *e = &r->rows[r->fmap[id]];
  size_t n = quill_tensor_num_elements(&res[0]);
  quill_status st = fit(r->ctx, &e->buf, &e->buf_n, n);
  if (!st)
    quill_report_tensor_to_real(&res[0], e->buf);
  return st;
}

static quill_status q_observe(void *ud, const quill_op *op,
                              const quill_tensor *res, unsigned nres) {
  quill_quant_report *r = ud;
  size_t id = quill_op_id(op);
  if (!nres || id >= r->qmap_n || r->qmap[id] < 0)
    return QUILL_OK;
  report_entry *e = &r->rows[r->qmap[id]];
  size_t n = quill_tensor_num_elements(&res[0]);
  if (!e->buf || (e->buf_n != n && !(n == 0 && e->buf_n == 1))) {
    e->mismatch = true;
    return QUILL_OK;
  }
  quill_status st = fit(r->ctx, &r->scratch, &r->scratch_n, n);
  if (st)
    return st;
  quill_report_tensor_to_real(&res[0], r->scratch);
  quill_sqnr_add(&e->row.sqnr, e->buf, r->scratch, n);
  return QUILL_OK;
}

/* The outputs: names from F's return, sums zeroed. */
static quill_status init_outputs(quill_quant_report *r, const quill_graph *fg,
                                 const quill_graph *qg) {
  unsigned n = quill_graph_num_results(fg);
  if (quill_graph_num_results(qg) != n)
    return quill_error(r->ctx, quill_graph_loc(qg),
                       "report: the quantized model has %u outputs, the "
                       "float model %u",
                       quill_graph_num_results(qg), n);
  r->outs = quill_calloc(r->ctx, n + 1, sizeof *r->outs);
  if (!r->outs)
    return QUILL_ERR_NOMEM;
  const quill_op *ret = quill_graph_return(fg);
  for (unsigned i = 0; i < n; i++) {
    const char *vn = ret && i < quill_op_num_operands(ret)
                         ? quill_value_name(quill_op_operand(ret, i))
                         : NULL;
    char buf[32];
    if (!vn) {
      snprintf(buf, sizeof buf, "output%u", i);
      vn = buf;
    }
    if (!(r->outs[i].name = quill_ident_get(r->ctx, vn)))
      return QUILL_ERR_NOMEM;
  }
  r->nouts = n;
  return QUILL_OK;
}

/* Both models on one sample; outputs into fo / qo (caller frees). */
static quill_status run_both(quill_quant_report *r, const quill_tensor *in,
                             quill_tensor *fo, quill_tensor *qo, bool observe) {
  const quill_graph *fg = quill_module_graph(r->flt, 0);
  const quill_graph *qg = quill_module_graph(r->qnt, 0);
  unsigned nin = quill_graph_num_args(fg), nout = quill_graph_num_results(fg);
  quill_status st = quill_ref_run_observed(r->ctx, fg, in, nin, fo, nout,
                                           observe ? f_observe : NULL, r);
  if (!st)
    st = quill_ref_run_observed(r->ctx, qg, in, nin, qo, nout,
                                observe ? q_observe : NULL, r);
  return st;
}

/* (a, b) of equal size as reals: into the two scratch buffers given. */
static quill_status to_reals(quill_context *ctx, const quill_tensor *a,
                             const quill_tensor *b, double **x, size_t *xn,
                             double **y, size_t *yn, size_t *n) {
  *n = quill_tensor_num_elements(a);
  if (quill_tensor_num_elements(b) != *n)
    return QUILL_ERR_INVALID;
  quill_status st = fit(ctx, x, xn, *n);
  if (!st)
    st = fit(ctx, y, yn, *n);
  if (!st) {
    quill_report_tensor_to_real(a, *x);
    quill_report_tensor_to_real(b, *y);
  }
  return st;
}

quill_status quill_report_measure(quill_quant_report *r,
                                  const quill_calib_dataset *calib) {
  quill_context *ctx = r->ctx;
  const quill_graph *fg = quill_module_graph(r->flt, 0);
  const quill_graph *qg = quill_module_graph(r->qnt, 0);
  quill_status st = quill_calib_dataset_check_graph(calib, fg);
  if (!st)
    st = init_outputs(r, fg, qg);
  unsigned nout = quill_graph_num_results(fg);
  quill_tensor *fo = quill_calloc(ctx, nout + 1, sizeof *fo);
  quill_tensor *qo = quill_calloc(ctx, nout + 1, sizeof *qo);
  double *x = NULL, *y = NULL;
  size_t xn = 0, yn = 0;
  if (!st && (!fo || !qo))
    st = QUILL_ERR_NOMEM;
  size_t ns = st ? 0 : quill_calib_dataset_size(calib);
  for (size_t s = 0; s < ns && !st; s++) {
    const quill_tensor *in = quill_calib_dataset_sample(calib, s);
    for (size_t i = 0; i < r->nrows && !st; i++) {
      report_entry *e = &r->rows[i];
      if (e->arg < 0)
        continue;
      const quill_tensor *t = &in[e->arg];
      st = fit(ctx, &e->buf, &e->buf_n, quill_tensor_num_elements(t));
      if (!st)
        quill_report_tensor_to_real(t, e->buf);
    }
    if (!st)
      st = run_both(r, in, fo, qo, true);
    for (size_t i = 0; i < r->nrows && !st; i++) {
      report_entry *e = &r->rows[i];
      if (e->arg >= 0 && !e->track)
        quill_sqnr_add(&e->row.sqnr, e->buf, e->buf,
                       quill_tensor_num_elements(&in[e->arg]));
    }
    for (unsigned o = 0; o < nout && !st; o++) {
      size_t n;
      quill_status ts = to_reals(ctx, &fo[o], &qo[o], &x, &xn, &y, &yn, &n);
      if (ts == QUILL_ERR_INVALID)
        st = quill_error(ctx, quill_graph_loc(qg),
                         "report: output %u has %zu elements in the float "
                         "model and %zu in the quantized one",
                         o, quill_tensor_num_elements(&fo[o]),
                         quill_tensor_num_elements(&qo[o]));
      else if (ts)
        st = ts;
      else
        quill_sqnr_add(&r->outs[o].sqnr, x, y, n);
    }
    quill_ref_tensors_free(ctx, fo, nout);
    quill_ref_tensors_free(ctx, qo, nout);
    r->samples = s + 1;
  }
  for (size_t i = 0; i < r->nrows; i++)
    if (r->rows[i].mismatch)
      memset(&r->rows[i].row.sqnr, 0, sizeof r->rows[i].row.sqnr);
  quill_free(ctx, x, xn * sizeof *x);
  quill_free(ctx, y, yn * sizeof *y);
  quill_free(ctx, fo, (nout + 1) * sizeof *fo);
  quill_free(ctx, qo, (nout + 1) * sizeof *qo);
  return st;
}

/* ---- accuracy ------------------------------------------------------------------ */

size_t quill_report_argmax(const double *v, size_t n) {
  size_t best = 0;
  for (size_t i = 1; i < n; i++)
    if (v[i] > v[best])
      best = i;
  return best;
}

quill_status quill_quant_report_eval_accuracy(quill_quant_report *r,
                                              const quill_calib_dataset *xs,
                                              const quill_tensor *labels) {
  quill_context *ctx = r->ctx;
  const quill_graph *fg = quill_module_graph(r->flt, 0);
  quill_status st = quill_calib_dataset_check_graph(xs, fg);
  if (st)
    return st;
  unsigned nout = quill_graph_num_results(fg);
  const quill_type *t0 = nout ? quill_graph_result_type(fg, 0) : NULL;
  if (!t0 || !quill_type_is_tensor(t0) || !quill_type_has_static_shape(t0) ||
      quill_type_num_elements(t0) < 1)
    return quill_error(ctx, quill_graph_loc(fg),
                       "report: accuracy needs a statically shaped first "
                       "output");
  unsigned rank = quill_type_rank(t0);
  size_t classes = rank ? (size_t)quill_type_dim(t0, rank - 1) : 1;
  size_t per = (size_t)quill_type_num_elements(t0) / (classes ? classes : 1);
  size_t ns = quill_calib_dataset_size(xs);
  size_t nl = quill_tensor_num_elements(labels);
  if (!quill_type_is_integer(quill_type_elem(labels->type)))
    return quill_error(ctx, quill_loc_unknown(),
                       "report: labels must be integers, got %s",
                       quill_type_scalar_name(
                           quill_tensor_elem_kind(labels)));
  if (nl != ns * per)
    return quill_error(ctx, quill_loc_unknown(),
                       "report: %zu labels for %zu rows (%zu samples x %zu "
                       "rows of the first output)",
                       nl, ns * per, ns, per);
  quill_tensor *fo = quill_calloc(ctx, nout, sizeof *fo);
  quill_tensor *qo = quill_calloc(ctx, nout, sizeof *qo);
  double *x = NULL, *y = NULL;
  size_t xn = 0, yn = 0, n;
  quill_report_accuracy acc = {0};
  if (!fo || !qo)
    st = QUILL_ERR_NOMEM;
  for (size_t s = 0; s < ns && !st; s++) {
    st = run_both(r, quill_calib_dataset_sample(xs, s), fo, qo, false);
    if (!st)
      st = to_reals(ctx, &fo[0], &qo[0], &x, &xn, &y, &yn, &n);
    if (st == QUILL_ERR_INVALID)
      st = quill_error(ctx, quill_loc_unknown(),
                       "report: the first output differs in size between "
                       "the float and the quantized model");
    for (size_t k = 0; k < per && !st; k++) {
      size_t pf = quill_report_argmax(x + k * classes, classes);
      size_t pq = quill_report_argmax(y + k * classes, classes);
      int64_t want = quill_tensor_get_i64(labels, s * per + k);
      acc.float_correct += (int64_t)pf == want;
      acc.quant_correct += (int64_t)pq == want;
      acc.agree += pf == pq;
      acc.count++;
    }
    quill_ref_tensors_free(ctx, fo, nout);
    quill_ref_tensors_free(ctx, qo, nout);
  }
  if (!st)
    r->acc = acc;
  quill_free(ctx, x, xn * sizeof *x);
  quill_free(ctx, y, yn * sizeof *y);
  quill_free(ctx, fo, nout * sizeof *fo);
  quill_free(ctx, qo, nout * sizeof *qo);
  return st;
}
