/*
 * quant_report_compiled.c - the report's "compiled" column: the model a
 * target compiles (the reference form plus the FUSE stage: integer ops)
 * run beside the reference form, so that a lowering that loses accuracy
 * (an int32 accumulator that overflows, a different rounding) shows up.
 *
 *   Q (reference form) --copy--> FUSE stage = L (what `quill compile` builds)
 *   per calibration sample: y = Q(x) on the interpreter, y_c = run(x)
 *   per output: SQNR(y, y_c) and the count of elements with y != y_c
 *   with --eval/--labels: the compiled model's accuracy
 *
 * The runner comes from the caller (the tool: the LLVM JIT), since libquill
 * links no code generator; when there is none, the column carries the
 * reason (quill_quant_report_compiled_unavailable).
 */
#include <string.h>

#include "passes/quant_report_impl.h"
#include "targets/reference/ref.h"

quill_status quill_quant_report_lowered(const quill_quant_report *r,
                                        quill_module **out) {
  *out = quill_report_clone_module(r->ctx, r->qnt);
  if (!*out)
    return quill_diag_error_count(r->ctx) ? QUILL_ERR_INVALID
                                          : QUILL_ERR_NOMEM;
  quill_quantize_options o = {.backend = r->backend_opt,
                              .keep_float = r->keep_float};
  quill_status st = quill_quantize_module(r->ctx, *out, &o,
                                          QUILL_QUANTIZE_FUSE, NULL, NULL);
  if (st) {
    quill_module_destroy(*out);
    *out = NULL;
  }
  return st;
}

void quill_quant_report_compiled_unavailable(quill_quant_report *r,
                                             const char *why) {
  r->compiled = false;
  r->compiled_why = quill_ident_get(r->ctx, why);
}

const char *quill_quant_report_compiled_note(const quill_quant_report *r) {
  return r->compiled_why;
}

/* Grow a double buffer to n. */
static quill_status fit(quill_context *ctx, double **buf, size_t *cap,
                        size_t n) {
  if (n <= *cap)
    return QUILL_OK;
  double *b = quill_realloc(ctx, *buf, *cap * sizeof *b, n * sizeof *b);
  if (!b)
    return QUILL_ERR_NOMEM;
  *buf = b;
  *cap = n;
  return QUILL_OK;
}

/* One sample through Q and the runner; outputs as reals in x (Q) and y
 * (compiled), n elements per output in ns[o]. */
typedef struct pair {
  quill_tensor *qo, *co;
  double *x, *y;
  size_t xn, yn;
} pair;

static quill_status run_pair(quill_quant_report *r, const quill_tensor *in,
                             quill_report_run_fn run, void *ud, pair *p,
                             unsigned o, size_t *n) {
  const quill_graph *qg = quill_module_graph(r->qnt, 0);
  unsigned nin = quill_graph_num_args(qg), nout = quill_graph_num_results(qg);
  quill_status st = QUILL_OK;
  if (o == 0) { /* run once per sample, at the first output */
    st = quill_ref_run(r->ctx, qg, in, nin, p->qo, nout);
    if (!st)
      st = run(ud, in, nin, p->co, nout);
  }
  if (st)
    return st;
  *n = quill_tensor_num_elements(&p->qo[o]);
  if (quill_tensor_num_elements(&p->co[o]) != *n)
    return quill_error(r->ctx, quill_graph_loc(qg),
                       "report: output %u has %zu elements in the reference "
                       "form and %zu in the compiled model",
                       o, *n, quill_tensor_num_elements(&p->co[o]));
  if ((st = fit(r->ctx, &p->x, &p->xn, *n)) ||
      (st = fit(r->ctx, &p->y, &p->yn, *n)))
    return st;
  quill_report_tensor_to_real(&p->qo[o], p->x);
  quill_report_tensor_to_real(&p->co[o], p->y);
  return QUILL_OK;
}

quill_status quill_quant_report_measure_compiled(
    quill_quant_report *r, const quill_calib_dataset *calib,
    const quill_calib_dataset *xs, const quill_tensor *labels,
    quill_report_run_fn run, void *ud) {
  quill_context *ctx = r->ctx;
  const quill_graph *qg = quill_module_graph(r->qnt, 0);
  unsigned nout = quill_graph_num_results(qg);
  pair p;
  memset(&p, 0, sizeof p);
  p.qo = quill_calloc(ctx, nout + 1, sizeof *p.qo);
  p.co = quill_calloc(ctx, nout + 1, sizeof *p.co);
  quill_status st = p.qo && p.co ? QUILL_OK : QUILL_ERR_NOMEM;
  if (!st)
    st = quill_calib_dataset_check_graph(calib, qg);
  for (unsigned o = 0; o < r->nouts; o++) {
    memset(&r->outs[o].compiled, 0, sizeof r->outs[o].compiled);
    r->outs[o].compiled_diff = 0;
  }
  size_t ns = st ? 0 : quill_calib_dataset_size(calib);
  for (size_t s = 0; s < ns && !st; s++) {
    const quill_tensor *in = quill_calib_dataset_sample(calib, s);
    for (unsigned o = 0; o < nout && o < r->nouts && !st; o++) {
      size_t n = 0;
      st = run_pair(r, in, run, ud, &p, o, &n);
      if (st)
        break;
      quill_sqnr_add(&r->outs[o].compiled, p.x, p.y, n);
      for (size_t i = 0; i < n; i++)
        r->outs[o].compiled_diff += memcmp(&p.x[i], &p.y[i], sizeof p.x[i]) != 0;
    }
    quill_ref_tensors_free(ctx, p.qo, nout);
    quill_ref_tensors_free(ctx, p.co, nout);
  }
  /* accuracy: the rows eval_accuracy counted, arg-maxed the same way */
  size_t nx = !st && xs && labels && r->acc.count ? quill_calib_dataset_size(xs)
                                                  : 0;
  size_t per = nx ? r->acc.count / nx : 0, correct = 0;
  for (size_t s = 0; s < nx && !st; s++) {
    size_t n = 0;
    st = run_pair(r, quill_calib_dataset_sample(xs, s), run, ud, &p, 0, &n);
    size_t classes = per ? n / per : 0;
    for (size_t k = 0; k < per && classes && !st; k++)
      correct += (int64_t)quill_report_argmax(p.y + k * classes, classes) ==
                 quill_tensor_get_i64(labels, s * per + k);
    quill_ref_tensors_free(ctx, p.qo, nout);
    quill_ref_tensors_free(ctx, p.co, nout);
  }
  if (!st && nx) {
    r->acc.compiled = true;
    r->acc.compiled_correct = correct;
  }
  if (!st) {
    r->compiled = true;
    r->compiled_why = NULL;
  }
  quill_free(ctx, p.x, p.xn * sizeof *p.x);
  quill_free(ctx, p.y, p.yn * sizeof *p.y);
  quill_free(ctx, p.qo, (nout + 1) * sizeof *p.qo);
  quill_free(ctx, p.co, (nout + 1) * sizeof *p.co);
  return st;
}
