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
 * kernel taps too, each tap with the mean of what it reads over the
 * output positions, zero padding included: on a small plane, a 3x3
 * kernel's outer rows read mostly padding; the plane's mean for every tap
 * over-corrected there, by 3x on a plane one row high). The pass subtracts
 * that shift from the float bias before the
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
 * default half_even; after adaround, W is the float weight it keeps on
 * the constant as `adaround_float`, so the correction covers the rounding
 * it chose) and E[x] is measured on the layer's own input in the
 * quantized model's arithmetic (the graph runs in the reference
 * interpreter with every fake_quant quantizing, so upstream quantization
 * error is part of the mean). Data: data=PATH [max-samples=N] or the pass
 * input "calibration-data", as for `calibrate`.
 *
 * Option mode=analytic (`--bias-correction=analytic`): E[x] without data,
 * from BatchNorm statistics (the paper's variant). fold-batchnorm with
 * keep-stats=true leaves each folded batch_norm's output distribution on
 * its conv/gemm (bn_beta = beta, bn_std = |gamma|: channel c is
 * N(beta[c], gamma[c]^2)); a layer whose input is such an op's result,
 * through its fused relu/clip, separate relu/clip/identity ops, the
 * activation fake_quant (whose range clips too) and average pools (a
 * global one and a flatten into a gemm too: they keep the mean), gets per
 * input channel
 * the mean of the clipped normal (phi, Phi: standard normal pdf and cdf,
 * a = (lo - mu) / sd, b = (hi - mu) / sd):
 *
 *   E[clip(z, lo, hi)] = lo Phi(a) + hi (1 - Phi(b))
 *                        + mu (Phi(b) - Phi(a)) + sd (phi(a) - phi(b))
 *
 * (relu: gamma phi(-beta/gamma) + beta (1 - Phi(-beta/gamma))). The
 * correction is then the empirical one's. Layers whose input is anything
 * else (a max pool, an add, a graph input) are left as they are. The pass
 * removes bn_beta / bn_std from every op in either mode.
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

/* dW = W_q - W in place of L->w (the layer's float weights). After
 * adaround, L->w holds grid values and W is the constant's
 * `adaround_float` attribute: the weights before rounding. */
static void weight_error(quill_layer *L, quill_type *q, quill_rounding rnd) {
  quill_op *k = quill_value_def(L->w_value);
  const quill_attr *orig = k ? quill_op_attr(k, "adaround_float") : NULL;
  if (orig && (size_t)quill_type_num_elements(quill_attr_dense_type(orig)) !=
                  L->nw)
    orig = NULL;
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
    L->w[i] = quill_dequantize_value(v, sc[c], zp[c], f64) -
              (orig ? quill_attr_dense_get_f64(orig, i) : L->w[i]);
  }
}

/* ---- analytic E[x] from BatchNorm statistics ------------------------------ */

static double std_normal_pdf(double t) {
  return isinf(t) ? 0.0 : exp(-0.5 * t * t) / sqrt(2.0 * 3.14159265358979323846);
}

static double std_normal_cdf(double t) { return 0.5 * erfc(-t / sqrt(2.0)); }

/* E[clip(z, lo, hi)] for z ~ N(mu, sd^2); lo, hi may be infinite. */
static double clipped_normal_mean(double mu, double sd, double lo, double hi) {
  if (!(sd > 0.0))
    return mu < lo ? lo : mu > hi ? hi : mu;
  double a = (lo - mu) / sd, b = (hi - mu) / sd;
  double pa = std_normal_cdf(a), pb = std_normal_cdf(b);
  return (isinf(lo) ? 0.0 : lo * pa) + (isinf(hi) ? 0.0 : hi * (1.0 - pb)) +
         mu * (pb - pa) + sd * (std_normal_pdf(a) - std_normal_pdf(b));
}

/* [lo, hi] narrowed to [l, h]; false if they do not meet. */
static bool narrow(double *lo, double *hi, double l, double h) {
  *lo = l > *lo ? l : *lo;
  *hi = h < *hi ? h : *hi;
  return *lo <= *hi;
}

/* The clip an op applies to its input: relu, clip {min, max} (constant
 * bound operands too), identity, a per-tensor activation fake_quant (its
 * representable range). False if op is none of these. */
static bool op_clip(const quill_op *op, double *lo, double *hi) {
  switch (quill_op_opcode(op)) {
  case QUILL_OP_IDENTITY:
    return true;
  case QUILL_OP_RELU:
    return narrow(lo, hi, 0.0, INFINITY);
  case QUILL_OP_CLIP: {
    double b[2] = {quill_op_attr_number(op, "min", -INFINITY),
                   quill_op_attr_number(op, "max", INFINITY)};
    for (unsigned i = 1; i < quill_op_num_operands(op) && i < 3; i++) {
      const quill_attr *c = quill_value_constant(quill_op_operand(op, i));
      if (!c || quill_type_num_elements(quill_attr_dense_type(c)) != 1)
        return false;
      b[i - 1] = quill_attr_dense_get_f64(c, 0);
    }
    return narrow(lo, hi, b[0], b[1]);
  }
  case QUILL_OP_FAKE_QUANT: {
    quill_type *q = quill_fake_quant_type(op);
    if (!q)
      return true; /* not calibrated: no clip */
    if (quill_type_quant_num_params(q) != 1)
      return false;
    double sc = quill_type_quant_scales(q)[0];
    double zp = (double)quill_type_quant_zero_points(q)[0];
    return narrow(lo, hi, ((double)quill_type_quant_qmin(q) - zp) * sc,
                  ((double)quill_type_quant_qmax(q) - zp) * sc);
  }
  default:
    return false;
  }
}

/* An op that keeps each channel's mean: avgpool, global_avgpool, and a
 * flatten/reshape/squeeze of [N, C, 1, ...] to [N, C] (channel = feature). */
static bool keeps_mean(const quill_op *op) {
  quill_opcode opc = quill_op_opcode(op);
  if (opc == QUILL_OP_AVGPOOL || opc == QUILL_OP_GLOBAL_AVGPOOL)
    return true;
  if (opc != QUILL_OP_FLATTEN && opc != QUILL_OP_RESHAPE &&
      opc != QUILL_OP_SQUEEZE)
    return false;
  quill_type *in = quill_value_type(quill_op_operand(op, 0));
  quill_type *out = quill_value_type(quill_op_result(op, 0));
  return quill_type_rank(in) >= 2 && quill_type_rank(out) == 2 &&
         quill_type_dim(in, 0) == quill_type_dim(out, 0) &&
         quill_type_dim(in, 1) == quill_type_dim(out, 1) &&
         quill_type_num_elements(in) == quill_type_num_elements(out);
}

/* E[x] per channel (ch of them, into mean) of a layer input x from the
 * BatchNorm statistics on the conv/gemm that produces it (see the header
 * comment). Through a mean-keeping op (keeps_mean) the clips met so far
 * act on averages, not on the normal values: they are dropped (the
 * average of clipped values is rarely clipped again). Returns NULL, else
 * why not. */
static const char *analytic_mean(quill_value *x, int64_t ch, double *mean) {
  double lo = -INFINITY, hi = INFINITY;
  quill_op *d = quill_value_def(x);
  while (d && quill_op_opcode(d) != QUILL_OP_CONV2D &&
         quill_op_opcode(d) != QUILL_OP_GEMM) {
    if (keeps_mean(d)) {
      lo = -INFINITY;
      hi = INFINITY;
    } else if (!op_clip(d, &lo, &hi)) {
      return "the input does not come from a conv/gemm through clips and "
             "average pools";
    }
    d = quill_value_def(quill_op_operand(d, 0));
  }
  if (!d)
    return "the input does not come from a conv/gemm";
  const quill_attr *beta = quill_op_attr(d, "bn_beta");
  const quill_attr *sd = quill_op_attr(d, "bn_std");
  if (!beta || !sd || quill_attr_kind_of(beta) != QUILL_ATTR_DENSE ||
      quill_attr_kind_of(sd) != QUILL_ATTR_DENSE)
    return "its producer has no BatchNorm statistics (bn_beta, bn_std)";
  if (quill_type_num_elements(quill_attr_dense_type(beta)) != ch ||
      quill_type_num_elements(quill_attr_dense_type(sd)) != ch)
    return "BatchNorm statistics of another channel count";
  const quill_attr *act = quill_op_attr(d, "activation");
  const char *kind = act && quill_attr_kind_of(act) == QUILL_ATTR_STRING
                         ? quill_attr_string_value(act, NULL)
                         : NULL;
  if (kind && strcmp(kind, "relu") == 0 && !narrow(&lo, &hi, 0.0, INFINITY))
    return "empty clip range";
  if (kind && strcmp(kind, "clip") == 0 &&
      !narrow(&lo, &hi, quill_op_attr_number(d, "activation_min", -INFINITY),
              quill_op_attr_number(d, "activation_max", INFINITY)))
    return "empty clip range";
  if (kind && strcmp(kind, "relu") != 0 && strcmp(kind, "clip") != 0)
    return "the producer's fused activation is not relu or clip";
  for (int64_t c = 0; c < ch; c++)
    mean[c] = clipped_normal_mean(quill_attr_dense_get_f64(beta, (size_t)c),
                                  quill_attr_dense_get_f64(sd, (size_t)c), lo,
                                  hi);
  return NULL;
}

/* Remove the BatchNorm statistics fold-batchnorm{keep-stats} left. */
static quill_status drop_stats(quill_graph *g, bool *changed) {
  QUILL_GRAPH_FOREACH(g, op) {
    for (unsigned k = 0; k < 2; k++) {
      const char *n = k ? "bn_std" : "bn_beta";
      if (!quill_op_attr(op, n))
        continue;
      quill_status st = quill_op_set_attr(op, n, NULL);
      if (st)
        return st;
      *changed = true;
    }
  }
  return QUILL_OK;
}

typedef struct bc_run {
  quill_pass_state *ps;
  quill_context *ctx;
  bool analytic; /* mode=analytic: E[x] from BatchNorm statistics */
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

/* Correct one layer from its input's channel means, or for a conv2d from
 * what each kernel tap of each channel reads on average (tap_mean, NULL:
 * the channel mean for every tap). */
static quill_status correct(bc_run *r, quill_layer *L, const double *mean,
                            const double *tap_mean) {
  quill_context *ctx = r->ctx;
  weight_error(L, quill_fake_quant_type(weight_fq(L->op)), r->rounding);
  size_t c = (size_t)L->out_ch;
  double *shift = quill_calloc(ctx, c, sizeof *shift);
  if (!shift || !quill_layer_ensure_bias(ctx, L)) {
    if (shift)
      quill_free(ctx, shift, c * sizeof *shift);
    return QUILL_ERR_NOMEM;
  }
  for (size_t i = 0; i < L->nw; i++) {
    int64_t ci = quill_layer_in_ch(L, i);
    double x = tap_mean ? tap_mean[(size_t)ci * (size_t)L->kk +
                                   i % (size_t)L->kk]
                        : mean[ci];
    shift[quill_layer_out_ch(L, i)] += L->w[i] * x;
  }
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
    quill_strbuf_printf(log, "bias-correction%s: %s: %zu channels, bias shift "
                        "|max| %.4g, mean |shift| %.4g (largest |bias| "
                        "before %.4g)\n", r->analytic ? " (analytic)" : "",
                        op_label(L->op), c, smax, ssum / (double)c, bmax);
  r->corrected++;
  return quill_layer_write(ctx, L, false, true);
}

/* mode=analytic: each layer whose E[x] the statistics give. */
static quill_status correct_analytic(bc_run *r) {
  quill_status st = QUILL_OK;
  for (size_t i = 0; !st && i < r->n; i++) {
    quill_layer *L = &r->layers[i];
    double *mean = quill_alloc(r->ctx, (size_t)L->in_ch * sizeof *mean);
    if (!mean)
      return QUILL_ERR_NOMEM;
    const char *why =
        analytic_mean(quill_op_operand(L->op, 0), L->in_ch, mean);
    if (why)
      quill_pass_debug(r->ps, "'%s': %s", op_label(L->op), why);
    else
      st = correct(r, L, mean, NULL);
    quill_free(r->ctx, mean, (size_t)L->in_ch * sizeof *mean);
  }
  return st;
}

static quill_status correct_graph(bc_run *r, quill_graph *g) {
  quill_context *ctx = r->ctx;
  quill_status st = find_layers(r, g);
  if (st || !r->n)
    return st;
  if (r->analytic)
    return correct_analytic(r);
  quill_value **xs = quill_alloc(ctx, r->n * sizeof *xs);
  const quill_op **convs = quill_alloc(ctx, r->n * sizeof *convs);
  quill_chan_stats *stats = quill_calloc(ctx, r->n, sizeof *stats);
  if (!xs || !convs || !stats)
    st = QUILL_ERR_NOMEM;
  for (size_t i = 0; !st && i < r->n; i++) {
    xs[i] = quill_op_operand(r->layers[i].op, 0);
    convs[i] = r->layers[i].op;
  }
  if (!st)
    st = quill_chan_stats_collect(r->ps, "bias-correction", g, r->n, xs,
                                  convs, stats);
  for (size_t i = 0; !st && i < r->n; i++)
    st = correct(r, &r->layers[i], stats[i].mean,
                 stats[i].taps == (size_t)r->layers[i].kk ? stats[i].tap_mean
                                                          : NULL);
  if (convs)
    quill_free(ctx, convs, r->n * sizeof *convs);
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
  const char *mode = quill_pass_option(ps, "mode");
  if (mode && strcmp(mode, "analytic") != 0 && strcmp(mode, "empirical") != 0)
    return quill_error(ctx, quill_loc_unknown(),
                       "bias-correction: mode '%s' is not 'empirical' or "
                       "'analytic'", mode);
  quill_status st = QUILL_OK;
  uint64_t corrected = 0;
  bool changed = false;
  /* The entry graph (the module's first), as `calibrate` observes it. */
  if (quill_module_num_graphs(m)) {
    bc_run r = {ps, ctx, mode && strcmp(mode, "analytic") == 0,
                b ? quill_backend_rounding(b) : QUILL_ROUND_HALF_EVEN,
                NULL, 0, 0, 0};
    st = correct_graph(&r, quill_module_graph(m, 0));
    corrected = r.corrected;
    for (size_t i = 0; i < r.n; i++)
      quill_layer_free(ctx, &r.layers[i]);
    if (r.layers)
      quill_free(ctx, r.layers, r.cap * sizeof *r.layers);
  }
  for (unsigned gi = 0; !st && gi < quill_module_num_graphs(m); gi++)
    st = drop_stats(quill_module_graph(m, gi), &changed);
  if (corrected)
    quill_pass_stat_add(ps, "num-corrected", corrected);
  else if (!st && !changed)
    quill_pass_mark_unchanged(ps);
  return st;
}

const quill_pass quill_pass_bias_correction = {
    .name = "bias-correction",
    .summary = "Correct conv/gemm biases for the mean error of their "
               "quantized weights",
    .run = run,
    .requires = 0,
    .establishes = 0,
    .preserves = 0,
    .options = "backend=NAME mode=empirical|analytic data=PATH "
               "max-samples=N",
};
