/*
 * bias_correction.c - the `bias-correction` pass: empirical bias
 * correction (Nagel et al. 2019, "Data-Free Quantization", section 4.2;
 * the "empirical" variant with calibration data).
 *
 * Quantizing a layer's weight W to W_q = W + dW shifts the expected
 * output of every output channel o by
 *
 *   E[y_q - y]_o = sum over the elements i of channel o: dW_i * E[x_c(i)]
 *
 * (x_c: input channel c of element i; for a conv the sum runs over the
 * kernel taps too, with the mean over the whole input plane: exact for a
 * 1x1 conv and a gemm, while a wider kernel's taps see the border less
 * often and zero padding lowers the mean there). The pass subtracts that shift from the float bias before the
 * `quantize` pass turns it into the int32 bias at s_x * s_w, so the mean
 * output error of each channel is zero on the calibration data:
 *
 *   %wq = fake_quant %w {quant = Q}           (calibrated: the weight's
 *   %y  = conv2d %xq, %wq, %b                  integer values are fixed)
 *     ==>
 *   %y  = conv2d %xq, %wq, %b'    b' = b - dW . E[x]
 *
 * It runs after `calibrate` and before `quantize`, on the graph with its
 * calibrated fake_quants: dW is exactly what `quantize` will store
 * (quill_quantize_value with the backend's rounding, backend=NAME,
 * default half_even) and E[x] is measured on the layer's own input in the
 * quantized model's arithmetic (the graph runs in the reference
 * interpreter with every fake_quant quantizing, so upstream quantization
 * error is part of the mean). Data: data=PATH [max-samples=N] or the pass
 * input "calibration-data", as for `calibrate`.
 *
 * Layers: conv2d and gemm (not trans_a) whose operand 1 is a calibrated
 * fake_quant of a float constant and whose bias, if any, is a float
 * constant; a layer without a bias gets one. Statistics: num-corrected.
 * Per layer, the largest and the mean |shift| relative to the largest
 * |bias| go to the debug channel "bias-correction" and, when the pass input
 * "accuracy-log" is a quill_strbuf *, one line each into it (`quill
 * report` prints them).
 */
#include <math.h>
#include <string.h>

#include "backends/backend.h"
#include "ir/quant.h"
#include "passes/layer_data.h"


/* The fake_quant under op's weight operand, or NULL. */
static quill_op *weight_fq(const quill_op *op) {
  quill_op *fq = quill_value_def(quill_op_operand(op, 1));
  if (!fq || quill_op_opcode(fq) != QUILL_OP_FAKE_QUANT || !quill_fake_quant_type(fq))
    return NULL;
  return fq;
}

/* The op's location name (ONNX node, .qir loc("...")), else its result's
 * name, else its mnemonic. */
static const char *op_label(const quill_op *op) {
  quill_loc l = quill_op_loc(op);
  const char *n = l.name ? l.name : quill_value_name(quill_op_result(op, 0));
  return n ? n : quill_op_name(op);
}

/* dW = W_q - W in place of L->w (the layer's float weights). */
static void weight_error(quill_layer *L, quill_type *q, quill_rounding rnd) {
  const double *sc = quill_type_quant_scales(q);
  const int64_t *zp = quill_type_quant_zero_points(q);
  size_t np = quill_type_quant_num_params(q), inner = 1;
  int32_t axis = quill_type_quant_axis_of(q);
  quill_type *wt = quill_value_type(L->w_value);
  for (unsigned d = axis < 0 ? quill_type_rank(wt) : (unsigned)axis + 1;
       d < quill_type_rank(wt); d++)
    inner *= (size_t)quill_type_dim(wt, d);
  bool f64 = quill_type_kind_of(quill_type_elem(wt)) == QUILL_TYPE_F64;
  int64_t qmin = quill_type_quant_qmin(q), qmax = quill_type_quant_qmax(q);
  for (size_t i = 0; i < L->nw; i++) {
    size_t c = np == 1 ? 0 : (i / inner) % np;
    int64_t v = quill_quantize_value(L->w[i], sc[c], zp[c], qmin, qmax, f64,
                                     rnd);
    L->w[i] = quill_dequantize_value(v, sc[c], zp[c], f64) - L->w[i];
  }
}

typedef struct bc_run {
  quill_pass_state *ps;
  quill_context *ctx;
  quill_rounding rounding;
  quill_layer *layers;
  size_t n, cap;
  uint64_t corrected;
} bc_run;

static quill_status find_layers(bc_run *r, quill_graph *g) {
  QUILL_GRAPH_FOREACH(g, op) {
    quill_opcode opc = quill_op_opcode(op);
    if (opc != QUILL_OP_CONV2D && opc != QUILL_OP_GEMM)
      continue;
    quill_op *fq = weight_fq(op);
    if (!fq) {
      quill_pass_debug(r->ps, "'%s': the weight is not a calibrated "
                       "fake_quant", op_label(op));
      continue;
    }
    if (opc == QUILL_OP_GEMM && quill_op_attr_int(op, "trans_a", 0)) {
      quill_pass_debug(r->ps, "'%s': trans_a", op_label(op));
      continue;
    }
    if (r->n == r->cap) {
      size_t nc = r->cap ? 2 * r->cap : 16;
      quill_layer *nl = quill_realloc(r->ctx, r->layers, r->cap * sizeof *nl,
                                      nc * sizeof *nl);
      if (!nl)
        return QUILL_ERR_NOMEM;
      r->layers = nl;
      r->cap = nc;
    }
    const char *why = quill_layer_read(r->ctx, op, quill_op_operand(fq, 0),
                                       &r->layers[r->n]);
    if (why && strcmp(why, "out of memory") == 0)
      return QUILL_ERR_NOMEM;
    if (why) {
      quill_pass_debug(r->ps, "'%s': %s", op_label(op), why);
      continue;
    }
    quill_type *xt = quill_value_type(quill_op_operand(op, 0));
    if (quill_type_rank(xt) < 2 ||
        quill_type_dim(xt, 1) != r->layers[r->n].in_ch) {
      quill_pass_debug(r->ps, "'%s': input channels are not axis 1",
                       op_label(op));
      quill_layer_free(r->ctx, &r->layers[r->n]);
      continue;
    }
    r->n++;
  }
  return QUILL_OK;
}

/* Correct one layer from its input's channel means. */
static quill_status correct(bc_run *r, quill_layer *L, const double *mean) {
  quill_context *ctx = r->ctx;
  weight_error(L, quill_fake_quant_type(weight_fq(L->op)), r->rounding);
  size_t c = (size_t)L->out_ch;
  double *shift = quill_calloc(ctx, c, sizeof *shift);
  if (!shift || !quill_layer_ensure_bias(ctx, L)) {
    if (shift)
      quill_free(ctx, shift, c * sizeof *shift);
    return QUILL_ERR_NOMEM;
  }
  for (size_t i = 0; i < L->nw; i++)
    shift[quill_layer_out_ch(L, i)] += L->w[i] * mean[quill_layer_in_ch(L, i)];
  double bmax = 0.0, smax = 0.0, ssum = 0.0;
  for (size_t j = 0; j < L->nb; j++) {
    double b = fabs(L->b[j] * L->bias_mul);
    bmax = b > bmax ? b : bmax;
  }
  for (size_t o = 0; o < c; o++) {
    double s = fabs(shift[o]);
    smax = s > smax ? s : smax;
    ssum += s;
  }
  for (size_t j = 0; j < L->nb; j++)
    L->b[j] -= shift[j % c] / L->bias_mul;
  quill_free(ctx, shift, c * sizeof *shift);
  quill_pass_debug(r->ps, "'%s': %zu channels, |shift| max %.4g mean %.4g "
                   "(largest |bias| %.4g)", op_label(L->op), c, smax,
                   ssum / (double)c, bmax);
  quill_strbuf *log = quill_pass_input(r->ps, "accuracy-log");
  if (log)
    quill_strbuf_printf(log, "bias-correction: %s: %zu channels, bias shift "
                        "|max| %.4g, mean |shift| %.4g (largest |bias| "
                        "before %.4g)\n", op_label(L->op), c, smax,
                        ssum / (double)c, bmax);
  r->corrected++;
  return quill_layer_write(ctx, L, false, true);
}

static quill_status correct_graph(bc_run *r, quill_graph *g) {
  quill_context *ctx = r->ctx;
  quill_status st = find_layers(r, g);
  if (st || !r->n)
    return st;
  quill_value **xs = quill_alloc(ctx, r->n * sizeof *xs);
  quill_chan_stats *stats = quill_calloc(ctx, r->n, sizeof *stats);
  if (!xs || !stats)
    st = QUILL_ERR_NOMEM;
  for (size_t i = 0; !st && i < r->n; i++)
    xs[i] = quill_op_operand(r->layers[i].op, 0);
  if (!st)
    st = quill_chan_stats_collect(r->ps, "bias-correction", g, r->n, xs,
                                  stats);
  for (size_t i = 0; !st && i < r->n; i++)
    st = correct(r, &r->layers[i], stats[i].mean);
  if (stats) {
    quill_chan_stats_free(ctx, stats, r->n); /* no-op after a failed collect */
    quill_free(ctx, stats, r->n * sizeof *stats);
  }
  if (xs)
    quill_free(ctx, xs, r->n * sizeof *xs);
  return st;
}

static quill_status run(quill_pass_state *ps, quill_module *m) {
  quill_context *ctx = quill_pass_context(ps);
  const char *name = quill_pass_option(ps, "backend");
  const quill_backend *b = NULL;
  if (name && !(b = quill_backend_get(ctx, name)))
    return QUILL_ERR_INVALID;
  quill_status st = QUILL_OK;
  uint64_t corrected = 0;
  /* The entry graph (the module's first), as `calibrate` observes it. */
  if (quill_module_num_graphs(m)) {
    bc_run r = {ps, ctx, b ? quill_backend_rounding(b) : QUILL_ROUND_HALF_EVEN,
                NULL, 0, 0, 0};
    st = correct_graph(&r, quill_module_graph(m, 0));
    corrected = r.corrected;
    for (size_t i = 0; i < r.n; i++)
      quill_layer_free(ctx, &r.layers[i]);
    if (r.layers)
      quill_free(ctx, r.layers, r.cap * sizeof *r.layers);
  }
  if (corrected)
    quill_pass_stat_add(ps, "num-corrected", corrected);
  else if (!st)
    quill_pass_mark_unchanged(ps);
  return st;
}

const quill_pass quill_pass_bias_correction = {
    .name = "bias-correction",
    .summary = "Correct conv/gemm biases for the mean error of their "
               "quantized weights on calibration data",
    .run = run,
    .requires = 0,
    .establishes = 0,
    .preserves = 0,
    .options = "backend=NAME data=PATH max-samples=N",
};
