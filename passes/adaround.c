/*
 * adaround.c - the `adaround` pass: choose each weight's rounding (down or
 * up) so a layer's output on calibration data moves least, instead of
 * rounding every weight to nearest (Nagel et al. 2020, "Up or Down?
 * Adaptive Rounding for Post-Training Quantization").
 *
 * Runs between calibrate and quantize: each weight fake_quant already
 * holds its quant type (scale s, zero point z per output channel), which
 * stays. For every conv2d (group 1), gemm (transA 0) and matmul (2-D
 * constant B) whose weight is such a fake_quant of a constant:
 *
 *   1. inputs: the samples run through the graph (reference interpreter;
 *      fake_quants quantize as calibrated, so upstream layers are seen as
 *      quantized); `patches` input vectors x (conv: receptive fields with
 *      the zero padding, im2col order c, i, j; gemm/matmul: rows) are drawn
 *      at random per layer, spread evenly over the samples
 *   2. per layer, W (cout x k) and targets T = W x: with F = floor(W / s),
 *      the soft weight W~ = s (clamp(F + z + h(V), qmin, qmax) - z), h the
 *      rectified sigmoid clip(sigmoid(V) (zeta - gamma) + gamma, 0, 1),
 *      zeta 1.1, gamma -0.1, V started where h equals W / s - F; minimize
 *        mean((W~ x - T)^2) / mean(T^2) + lambda mean(1 - |2h - 1|^beta)
 *      with Adam (lr 0.01) over `iters` steps of `batch` patches; the
 *      regularizer is off for the first 20% of the steps, then beta
 *      anneals linearly from 20 to 2, pushing every h to 0 or 1. The
 *      gradient is closed form: dL/dW~ = 2 (W~ x - T) x^T / (n mean T^2)
 *   3. q = clamp(F + z + [h >= 0.5], qmin, qmax); if the layer's relative
 *      error on all its patches is not below nearest rounding's, nearest
 *      stays. The weight constant is replaced by s (q - z), which the
 *      quantize pass maps back to exactly q; the new constant keeps the
 *      float weights as its attribute `adaround_float`, from which
 *      bias-correction measures the weight error (quantize drops it).
 *
 * Deterministic for a seed (its own generator per layer, no global
 * state). Options: iters=N (default 1000; 2000 does better), batch=N (256), patches=N
 * (1024), lambda=X (0.1), seed=N (0), data=PATH and max-samples=N as
 * calibrate takes them (else the manager input "calibration-data"). A
 * progress bar goes to stderr when it is a terminal. Statistics:
 * num-layers (rounded adaptively), num-kept-nearest. The error before and
 * after per layer: --debug-only=adaround.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "passes/calib_data.h"
#include "ir/quant.h"
#include "passes/pass.h"
#include "targets/reference/ref.h"

#define ZETA 1.1
#define GAMMA (-0.1)

typedef struct layer {
  quill_op *op, *wfq;
  const quill_op *src; /* producer of the input, NULL: graph argument */
  unsigned arg;
  bool conv, wt;       /* conv2d; weight stored k x cout (transposed) */
  int64_t kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, cin;
  size_t cout, k;
  float *w;            /* cout x k */
  double *s;           /* per output channel */
  int64_t *z, qmin, qmax;
  float *x;            /* np x k patches */
  size_t np, cap, want;
  uint64_t rng;
} layer;

typedef struct adarun {
  quill_pass_state *ps;
  quill_context *ctx;
  layer *l;
  size_t n;
  size_t per_sample;
  quill_status st;
} adarun;

/* ---- random numbers (xorshift64*) ------------------------------------------------ */

static uint64_t rnd(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * UINT64_C(2685821657736338717);
}

static size_t rnd_below(uint64_t *s, size_t n) {
  return n ? (size_t)(rnd(s) % n) : 0;
}

/* ---- finding the layers ----------------------------------------------------------- */


static int64_t attr_at(const quill_op *op, const char *name, unsigned i,
                       int64_t dflt) {
  const quill_attr *a = quill_op_attr(op, name);
  if (!a || quill_attr_kind_of(a) != QUILL_ATTR_LIST ||
      i >= quill_attr_list_size(a))
    return dflt;
  const quill_attr *e = quill_attr_list_elem(a, i);
  return quill_attr_kind_of(e) == QUILL_ATTR_INT ? quill_attr_int_value(e)
                                                 : dflt;
}

/* Fill l from op if it is a layer AdaRound handles; false otherwise. */
static bool layer_of(adarun *r, quill_op *op, layer *l) {
  quill_opcode opc = quill_op_opcode(op);
  if ((opc != QUILL_OP_CONV2D && opc != QUILL_OP_GEMM &&
       opc != QUILL_OP_MATMUL) ||
      quill_op_num_operands(op) < 2)
    return false;
  quill_op *fq = quill_value_def(quill_op_operand(op, 1));
  if (!fq || quill_op_opcode(fq) != QUILL_OP_FAKE_QUANT ||
      !quill_value_constant(quill_op_operand(fq, 0)))
    return false;
  quill_type *qe = quill_fake_quant_type(fq);
  quill_type *wt = quill_value_type(quill_op_operand(fq, 0));
  quill_type *xt = quill_value_type(quill_op_operand(op, 0));
  if (!qe || quill_type_rank(wt) < 2 ||
      quill_type_kind_of(quill_type_elem(wt)) != QUILL_TYPE_F32 ||
      quill_type_kind_of(quill_type_elem(xt)) != QUILL_TYPE_F32)
    return false;
  memset(l, 0, sizeof *l);
  l->op = op;
  l->wfq = fq;
  int axis; /* the output-channel axis of the weight */
  if (opc == QUILL_OP_CONV2D) {
    if (quill_op_attr_int(op, "group", 1) != 1 || quill_type_rank(wt) != 4 ||
        quill_type_rank(xt) != 4)
      return false;
    l->conv = true;
    l->cout = (size_t)quill_type_dim(wt, 0);
    l->cin = quill_type_dim(wt, 1);
    l->kh = quill_type_dim(wt, 2);
    l->kw = quill_type_dim(wt, 3);
    l->k = (size_t)(l->cin * l->kh * l->kw);
    l->sh = attr_at(op, "strides", 0, 1);
    l->sw = attr_at(op, "strides", 1, 1);
    l->pt = attr_at(op, "pads", 0, 0);
    l->pl = attr_at(op, "pads", 1, 0);
    l->pb = attr_at(op, "pads", 2, l->pt);
    l->pr = attr_at(op, "pads", 3, l->pl);
    l->dh = attr_at(op, "dilations", 0, 1);
    l->dw = attr_at(op, "dilations", 1, 1);
    axis = 0;
  } else {
    if (quill_type_rank(wt) != 2 ||
        (opc == QUILL_OP_GEMM && quill_op_attr_int(op, "trans_a", 0)))
      return false;
    l->wt = opc == QUILL_OP_MATMUL || !quill_op_attr_int(op, "trans_b", 0);
    l->cout = (size_t)quill_type_dim(wt, l->wt ? 1 : 0);
    l->k = (size_t)quill_type_dim(wt, l->wt ? 0 : 1);
    axis = l->wt ? 1 : 0;
    if (quill_type_dim(xt, quill_type_rank(xt) - 1) != (int64_t)l->k)
      return false;
  }
  int32_t qa = quill_type_quant_axis_of(qe);
  if (qa >= 0 && qa != axis)
    return false;
  (void)r;
  return l->cout > 0 && l->k > 0;
}

/* Weights, scales and zero points into l (NOMEM only). */
static quill_status load_weights(adarun *r, layer *l) {
  quill_context *ctx = r->ctx;
  quill_type *qe = quill_fake_quant_type(l->wfq);
  quill_tensor w = quill_tensor_from_attr(
      quill_value_constant(quill_op_operand(l->wfq, 0)));
  l->w = quill_calloc(ctx, l->cout * l->k, sizeof *l->w);
  l->s = quill_calloc(ctx, l->cout, sizeof *l->s);
  l->z = quill_calloc(ctx, l->cout, sizeof *l->z);
  if (!l->w || !l->s || !l->z)
    return QUILL_ERR_NOMEM;
  for (size_t c = 0; c < l->cout; c++)
    for (size_t i = 0; i < l->k; i++)
      l->w[c * l->k + i] = (float)quill_tensor_get_f64(
          &w, l->wt ? i * l->cout + c : c * l->k + i);
  size_t np = quill_type_quant_num_params(qe);
  for (size_t c = 0; c < l->cout; c++) {
    l->s[c] = quill_type_quant_scales(qe)[np == 1 ? 0 : c];
    l->z[c] = quill_type_quant_zero_points(qe)[np == 1 ? 0 : c];
  }
  l->qmin = quill_type_quant_qmin(qe);
  l->qmax = quill_type_quant_qmax(qe);
  return QUILL_OK;
}

/* ---- collecting inputs ------------------------------------------------------------ */

static quill_status grow(adarun *r, layer *l, size_t more) {
  if (l->np + more <= l->cap)
    return QUILL_OK;
  size_t cap = l->np + more;
  float *x = quill_calloc(r->ctx, cap * l->k, sizeof *x);
  if (!x)
    return QUILL_ERR_NOMEM;
  if (l->x)
    memcpy(x, l->x, l->np * l->k * sizeof *x);
  quill_free(r->ctx, l->x, l->cap * l->k * sizeof *x);
  l->x = x;
  l->cap = cap;
  return QUILL_OK;
}

/* Draw up to `count` input vectors of layer l from its input tensor t. */
static quill_status take(adarun *r, layer *l, const quill_tensor *t,
                         size_t count) {
  if (count > l->want - l->np)
    count = l->want - l->np;
  quill_status st = grow(r, l, count);
  if (st)
    return st;
  quill_type *tt = t->type;
  unsigned rank = quill_type_rank(tt);
  for (size_t n = 0; n < count; n++) {
    float *p = &l->x[(l->np++) * l->k];
    if (!l->conv) {
      size_t rows = quill_tensor_num_elements(t) / l->k;
      size_t row = rnd_below(&l->rng, rows);
      for (size_t i = 0; i < l->k; i++)
        p[i] = (float)quill_tensor_get_f64(t, row * l->k + i);
      continue;
    }
    int64_t nb = quill_type_dim(tt, 0), h = quill_type_dim(tt, rank - 2),
            w = quill_type_dim(tt, rank - 1);
    int64_t ho = (h + l->pt + l->pb - l->dh * (l->kh - 1) - 1) / l->sh + 1;
    int64_t wo = (w + l->pl + l->pr - l->dw * (l->kw - 1) - 1) / l->sw + 1;
    if (ho < 1)
      ho = 1;
    if (wo < 1)
      wo = 1;
    int64_t b = (int64_t)rnd_below(&l->rng, (size_t)nb);
    int64_t oy = (int64_t)rnd_below(&l->rng, (size_t)ho);
    int64_t ox = (int64_t)rnd_below(&l->rng, (size_t)wo);
    size_t i = 0;
    for (int64_t c = 0; c < l->cin; c++)
      for (int64_t ky = 0; ky < l->kh; ky++)
        for (int64_t kx = 0; kx < l->kw; kx++, i++) {
          int64_t y = oy * l->sh - l->pt + ky * l->dh;
          int64_t x = ox * l->sw - l->pl + kx * l->dw;
          p[i] = y < 0 || y >= h || x < 0 || x >= w
                     ? 0.0f
                     : (float)quill_tensor_get_f64(
                           t, (size_t)(((b * l->cin + c) * h + y) * w + x));
        }
  }
  return QUILL_OK;
}

static quill_status on_op(void *ud, const quill_op *op,
                          const quill_tensor *res, unsigned nres) {
  adarun *r = ud;
  for (size_t i = 0; nres && i < r->n; i++)
    if (r->l[i].src == op) {
      quill_status st = take(r, &r->l[i], &res[0], r->per_sample);
      if (st)
        return st;
    }
  return QUILL_OK;
}

/* ---- the optimization ------------------------------------------------------------- */

static double hsig(double v) {
  double h = (1.0 / (1.0 + exp(-v))) * (ZETA - GAMMA) + GAMMA;
  return h < 0 ? 0 : h > 1 ? 1 : h;
}

/* Relative error of the weights wq on all patches against T. */
static double rel_error(const layer *l, const float *wq, const float *t) {
  double num = 0, den = 0;
  for (size_t p = 0; p < l->np; p++)
    for (size_t c = 0; c < l->cout; c++) {
      double y = 0;
      const float *x = &l->x[p * l->k], *w = &wq[c * l->k];
      for (size_t i = 0; i < l->k; i++)
        y += (double)w[i] * x[i];
      double e = y - t[p * l->cout + c];
      num += e * e;
      den += (double)t[p * l->cout + c] * t[p * l->cout + c];
    }
  return den > 0 ? num / den : 0;
}

/* Dequantized weights for rounding offsets h (continuous or 0/1). */
static void soft_weights(const layer *l, const float *fl, const double *h,
                         float *out) {
  for (size_t c = 0; c < l->cout; c++)
    for (size_t i = 0; i < l->k; i++) {
      size_t j = c * l->k + i;
      double q = fl[j] + (double)l->z[c] + h[j];
      q = q < l->qmin ? l->qmin : q > l->qmax ? l->qmax : q;
      out[j] = (float)(l->s[c] * (q - (double)l->z[c]));
    }
}

typedef struct opt_opts {
  int64_t iters, batch;
  double lambda;
} opt_opts;

/* Optimize l's rounding; writes the chosen dequantized weights to wout.
 * *before / *after: relative errors of nearest and of the result. */
static quill_status optimize(adarun *r, layer *l, const opt_opts *o,
                             float *wout, double *before, double *after) {
  quill_context *ctx = r->ctx;
  size_t nw = l->cout * l->k, B = (size_t)o->batch;
  float *fl = quill_calloc(ctx, nw, sizeof *fl);
  double *v = quill_calloc(ctx, nw * 5, sizeof *v);
  float *t = quill_calloc(ctx, l->np * l->cout, sizeof *t);
  float *ws = quill_calloc(ctx, nw, sizeof *ws);
  float *e = quill_calloc(ctx, B * l->cout, sizeof *e);
  size_t *idx = quill_calloc(ctx, B, sizeof *idx);
  quill_status st = fl && v && t && ws && e && idx ? QUILL_OK : QUILL_ERR_NOMEM;
  double *h = v + nw, *m = v + 2 * nw, *s2 = v + 3 * nw, *g = v + 4 * nw;
  double tnorm = 0;
  for (size_t j = 0; !st && j < nw; j++) {
    size_t c = j / l->k;
    double u = l->w[j] / l->s[c];
    fl[j] = (float)floor(u);
    double p = ((u - floor(u)) - GAMMA) / (ZETA - GAMMA);
    p = p < 1e-4 ? 1e-4 : p > 1 - 1e-4 ? 1 - 1e-4 : p;
    v[j] = log(p / (1 - p));
  }
  for (size_t p = 0; !st && p < l->np; p++)
    for (size_t c = 0; c < l->cout; c++) {
      double y = 0;
      for (size_t i = 0; i < l->k; i++)
        y += (double)l->w[c * l->k + i] * l->x[p * l->k + i];
      t[p * l->cout + c] = (float)y;
      tnorm += y * y;
    }
  tnorm = tnorm / (double)(l->np * l->cout);
  if (!st) { /* nearest rounding: h = [rest >= 0.5] */
    for (size_t j = 0; j < nw; j++)
      h[j] = l->w[j] / l->s[j / l->k] - fl[j] >= 0.5 ? 1.0 : 0.0;
    soft_weights(l, fl, h, wout);
    *before = rel_error(l, wout, t);
  }
  int64_t warm = o->iters / 5;
  for (int64_t it = 0; !st && tnorm > 0 && it < o->iters; it++) {
    for (size_t j = 0; j < nw; j++)
      h[j] = hsig(v[j]);
    soft_weights(l, fl, h, ws);
    for (size_t b = 0; b < B; b++)
      idx[b] = rnd_below(&l->rng, l->np);
    for (size_t b = 0; b < B; b++) {
      const float *x = &l->x[idx[b] * l->k];
      for (size_t c = 0; c < l->cout; c++) {
        const float *w = &ws[c * l->k];
        float y = 0;
        for (size_t i = 0; i < l->k; i++)
          y += w[i] * x[i];
        e[b * l->cout + c] = y - t[idx[b] * l->cout + c];
      }
    }
    double scale = 2.0 / ((double)B * (double)l->cout * tnorm);
    memset(g, 0, nw * sizeof *g);
    for (size_t b = 0; b < B; b++) {
      const float *x = &l->x[idx[b] * l->k];
      for (size_t c = 0; c < l->cout; c++) {
        double ec = e[b * l->cout + c] * scale;
        double *gc = &g[c * l->k];
        for (size_t i = 0; i < l->k; i++)
          gc[i] += ec * x[i];
      }
    }
    double beta = it < warm ? 0
                            : 20.0 - 18.0 * (double)(it - warm) /
                                         (double)(o->iters - warm > 1
                                                      ? o->iters - warm - 1
                                                      : 1);
    double lr = 0.01, b1 = 0.9, b2 = 0.999;
    double c1 = 1 - pow(b1, (double)(it + 1)), c2 = 1 - pow(b2, (double)(it + 1));
    for (size_t j = 0; j < nw; j++) {
      size_t c = j / l->k;
      double sg = 1.0 / (1.0 + exp(-v[j]));
      double raw = sg * (ZETA - GAMMA) + GAMMA;
      double dh = raw > 0 && raw < 1 ? sg * (1 - sg) * (ZETA - GAMMA) : 0;
      double q = fl[j] + (double)l->z[c] + h[j];
      double grad = q > l->qmin && q < l->qmax ? g[j] * l->s[c] : 0;
      if (beta > 0) {
        double a = 2 * h[j] - 1;
        double sgn = a > 0 ? 1 : a < 0 ? -1 : 0;
        grad += o->lambda / (double)nw * (-beta) *
                pow(fabs(a), beta - 1) * sgn * 2;
      }
      grad *= dh;
      m[j] = b1 * m[j] + (1 - b1) * grad;
      s2[j] = b2 * s2[j] + (1 - b2) * grad * grad;
      v[j] -= lr * (m[j] / c1) / (sqrt(s2[j] / c2) + 1e-8);
    }
  }
  if (!st) {
    for (size_t j = 0; j < nw; j++)
      h[j] = hsig(v[j]) >= 0.5 ? 1.0 : 0.0;
    soft_weights(l, fl, h, ws);
    *after = rel_error(l, ws, t);
    if (*after < *before)
      memcpy(wout, ws, nw * sizeof *ws);
  }
  quill_free(ctx, fl, nw * sizeof *fl);
  quill_free(ctx, v, nw * 5 * sizeof *v);
  quill_free(ctx, t, l->np * l->cout * sizeof *t);
  quill_free(ctx, ws, nw * sizeof *ws);
  quill_free(ctx, e, B * l->cout * sizeof *e);
  quill_free(ctx, idx, B * sizeof *idx);
  return st;
}

/* Replace the weight constant of l by the dequantized weights wq. */
static quill_status set_weights(adarun *r, layer *l, const float *wq) {
  quill_context *ctx = r->ctx;
  quill_value *old = quill_op_operand(l->wfq, 0);
  quill_type *ty = quill_value_type(old);
  quill_tensor t;
  if (quill_tensor_alloc(ctx, ty, &t))
    return QUILL_ERR_NOMEM;
  for (size_t c = 0; c < l->cout; c++)
    for (size_t i = 0; i < l->k; i++)
      ((float *)t.data)[l->wt ? i * l->cout + c : c * l->k + i] =
          wq[c * l->k + i];
  const quill_attr *dense = quill_tensor_to_attr(ctx, &t);
  quill_tensor_free(ctx, &t);
  /* The float weights ride along as `adaround_float` (the first float
   * weights if the constant was rounded before): bias-correction measures
   * dW = W_q - W against them, not against the grid values. */
  const quill_attr *fw = quill_op_attr(quill_value_def(old), "adaround_float");
  quill_named_attr na[2] = {
      {quill_ident_get(ctx, "value"), dense},
      {quill_ident_get(ctx, "adaround_float"),
       fw ? fw : quill_value_constant(old)}};
  quill_op *k = dense && na[0].name && na[1].name && na[1].attr
                    ? quill_op_create(quill_op_graph(l->wfq), QUILL_OP_CONSTANT,
                                      0, NULL, 1, &ty, 2, na,
                                      quill_op_loc(quill_value_def(old)))
                    : NULL;
  if (!k)
    return QUILL_ERR_NOMEM;
  quill_op_insert_before(l->wfq, k);
  quill_op_set_operand(l->wfq, 0, quill_op_result(k, 0));
  return QUILL_OK;
}

/* ---- the pass ------------------------------------------------------------------------ */

static void progress(size_t done, size_t total) {
  enum { WIDTH = 30 };
  char bar[WIDTH + 1];
  size_t fill = total ? done * WIDTH / total : WIDTH;
  for (size_t i = 0; i < WIDTH; i++)
    bar[i] = i < fill ? '#' : '.';
  bar[WIDTH] = '\0';
  fprintf(stderr, "\radaround: [%s] %zu/%zu layers", bar, done, total);
  fflush(stderr);
}

static quill_status options(adarun *r, opt_opts *o, int64_t *patches,
                            int64_t *seed, int64_t *max) {
  quill_pass_state *ps = r->ps;
  quill_status st = QUILL_OK;
  o->iters = quill_pass_option_int(ps, "iters", 1000, &st);
  o->batch = quill_pass_option_int(ps, "batch", 256, &st);
  *patches = quill_pass_option_int(ps, "patches", 1024, &st);
  *seed = quill_pass_option_int(ps, "seed", 0, &st);
  *max = quill_pass_option_int(ps, "max-samples", 0, &st);
  const char *lam = quill_pass_option(ps, "lambda");
  o->lambda = 0.1;
  if (lam) {
    char *end = NULL;
    o->lambda = strtod(lam, &end);
    if (end == lam || *end || !(o->lambda >= 0) || !isfinite(o->lambda))
      return quill_error(r->ctx, quill_loc_unknown(),
                         "adaround: lambda must be a number >= 0, got '%s'",
                         lam);
  }
  if (st)
    return st;
  if (o->iters < 0 || o->iters > 1000000 || o->batch < 1 ||
      o->batch > 65536 || *patches < 1 || *patches > (1 << 20) || *max < 0)
    return quill_error(r->ctx, quill_loc_unknown(),
                       "adaround: iters must be in [0, 10^6], batch in "
                       "[1, 65536], patches in [1, 2^20], max-samples >= 0");
  return QUILL_OK;
}

static void free_layers(adarun *r) {
  for (size_t i = 0; i < r->n; i++) {
    layer *l = &r->l[i];
    quill_free(r->ctx, l->w, l->cout * l->k * sizeof *l->w);
    quill_free(r->ctx, l->s, l->cout * sizeof *l->s);
    quill_free(r->ctx, l->z, l->cout * sizeof *l->z);
    quill_free(r->ctx, l->x, l->cap * l->k * sizeof *l->x);
  }
  quill_free(r->ctx, r->l, r->n * sizeof *r->l);
}

static quill_status run(quill_pass_state *ps, quill_module *m) {
  adarun r = {.ps = ps, .ctx = quill_pass_context(ps)};
  quill_context *ctx = r.ctx;
  opt_opts o;
  int64_t patches, seed, max;
  quill_status st = options(&r, &o, &patches, &seed, &max);
  if (st || !quill_module_num_graphs(m))
    return st;
  quill_graph *g = quill_module_graph(m, 0);
  size_t cap = 0;
  QUILL_GRAPH_FOREACH(g, op) { cap++; }
  r.l = quill_calloc(ctx, cap ? cap : 1, sizeof *r.l);
  if (!r.l)
    return QUILL_ERR_NOMEM;
  QUILL_GRAPH_FOREACH(g, op) {
    layer *l = &r.l[r.n];
    if (!layer_of(&r, op, l))
      continue;
    quill_value *x = quill_op_operand(op, 0);
    l->src = quill_value_is_arg(x) ? NULL : quill_value_def(x);
    for (unsigned a = 0; !l->src && a < quill_graph_num_args(g); a++)
      if (quill_graph_arg(g, a) == x)
        l->arg = a;
    l->want = (size_t)patches;
    l->rng = (uint64_t)seed * UINT64_C(0x9E3779B97F4A7C15) + r.n + 1;
    r.n++;
    if ((st = load_weights(&r, l)))
      break;
  }
  if (!st && !r.n) {
    free_layers(&r);
    quill_pass_mark_unchanged(ps);
    return QUILL_OK;
  }
  /* the data: data=PATH or the manager's calibration-data */
  quill_calib_dataset *owned = NULL;
  const quill_calib_dataset *ds = NULL;
  const char *path = quill_pass_option(ps, "data");
  if (!st && path && *path) {
    owned = quill_calib_dataset_create(ctx, g);
    st = owned ? QUILL_OK : QUILL_ERR_INVALID;
    if (!st) {
      quill_calib_dataset_set_max_samples(owned, (size_t)max);
      st = quill_calib_dataset_load(owned, path);
    }
    ds = owned;
  } else if (!st) {
    ds = quill_pass_input(ps, "calibration-data");
    st = ds ? quill_calib_dataset_check_graph(ds, g)
            : quill_error(ctx, quill_op_loc(r.l[0].op),
                          "adaround: no calibration data (give data=PATH, "
                          "or a dataset as the pass input "
                          "'calibration-data')");
  }
  size_t ns = ds ? quill_calib_dataset_size(ds) : 0;
  if (max > 0 && (size_t)max < ns)
    ns = (size_t)max;
  if (!st && !ns)
    st = quill_error(ctx, quill_graph_loc(g),
                     "adaround: the calibration dataset is empty");
  r.per_sample = ns ? ((size_t)patches + ns - 1) / ns : 0;
  unsigned nout = quill_graph_num_results(g);
  quill_tensor *out = quill_calloc(ctx, nout ? nout : 1, sizeof *out);
  if (!st && !out)
    st = QUILL_ERR_NOMEM;
  for (size_t i = 0; !st && i < ns; i++) {
    const quill_tensor *in = quill_calib_dataset_sample(ds, i);
    for (size_t k = 0; !st && k < r.n; k++)
      if (!r.l[k].src)
        st = take(&r, &r.l[k], &in[r.l[k].arg], r.per_sample);
    if (!st)
      st = quill_ref_run_observed(ctx, g, in,
                                  quill_calib_dataset_num_inputs(ds), out,
                                  nout, on_op, &r);
    quill_ref_tensors_free(ctx, out, nout);
  }
  quill_free(ctx, out, (nout ? nout : 1) * sizeof *out);
  quill_calib_dataset_destroy(owned);
  bool bar = isatty(STDERR_FILENO);
  uint64_t done = 0, kept = 0;
  for (size_t k = 0; !st && k < r.n; k++) {
    layer *l = &r.l[k];
    float *wq = quill_calloc(ctx, l->cout * l->k, sizeof *wq);
    double before = 0, after = 0;
    st = wq && l->np ? optimize(&r, l, &o, wq, &before, &after)
                     : (wq ? QUILL_OK : QUILL_ERR_NOMEM);
    if (!st && l->np)
      st = set_weights(&r, l, wq);
    if (!st && l->np) {
      done++;
      kept += !(after < before);
      quill_pass_debug(ps, "'%s': relative output error %.4g nearest, %.4g "
                           "adaround%s (%zu patches)",
                       quill_op_loc(l->op).name ? quill_op_loc(l->op).name
                                                : quill_op_name(l->op),
                       before, after, after < before ? "" : ": kept nearest",
                       l->np);
    }
    quill_free(ctx, wq, l->cout * l->k * sizeof *wq);
    if (bar)
      progress(k + 1, r.n);
  }
  if (bar)
    fputs("\r\033[K", stderr);
  free_layers(&r);
  if (st)
    return st;
  quill_pass_stat_add(ps, "num-layers", done);
  if (kept)
    quill_pass_stat_add(ps, "num-kept-nearest", kept);
  return QUILL_OK;
}

const quill_pass quill_pass_adaround = {
    .name = "adaround",
    .summary = "Choose each weight's rounding (up or down) to keep the "
               "layer's output on calibration data (AdaRound)",
    .run = run,
    .requires = 0,
    .establishes = 0,
    .preserves = QUILL_PROP_ALL,
    .options = "iters=N batch=N patches=N lambda=X seed=N data=PATH "
               "max-samples=N",
};
