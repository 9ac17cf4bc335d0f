/*
 * fold_batchnorm.c - the `fold-batchnorm` pass: fold inference-mode
 * batch_norm into the convolution or gemm that produces its input, or turn
 * it into a per-channel mul + add.
 *
 * batch_norm computes, per channel c (axis 1 of its NC... input),
 *
 *   y = (x - mean[c]) * s[c] + beta[c],   s[c] = gamma[c] / sqrt(var[c] + eps)
 *
 * 1. Folding (pattern "fold-batchnorm-into-producer", benefit 2):
 *
 *      %w = constant      %b = constant (optional)
 *      %p = conv2d %x, %w, %b {...}          %p' = conv2d %x, %w', %b' {...}
 *      %y = batch_norm %p, %g, %bt, %m, %v   ==>   (%y replaced by %p')
 *
 *    W'[i] = W[i] * s[ch(i)],  b'[c] = (b[c] - mean[c]) * s[c] + beta[c]
 *    (b = 0 when the producer has no bias). ch(i) is the output channel of
 *    weight element i, which depends on the producer (table `producers`):
 *
 *      conv2d            W [O, C/g, kh, kw]      ch = i0 (any group)
 *      conv_transpose2d  W [C, O/g, kh, kw]      ch = (i0 / (C/g)) * (O/g) + i1
 *      gemm trans_b=1    B [N, K]                ch = i0
 *      gemm trans_b=0    B [K, N]                ch = i1
 *
 *    For gemm y = alpha*A*B + beta*C, the new C' = (beta*C - mean)*s + bt,
 *    shape [N] (or [M, N] when C varies along M), and the new gemm gets
 *    beta = 1; alpha stays.
 *
 *    It applies when the producer is one of those ops, its result has no
 *    other use, its weight (and bias, if any) and the four batch_norm
 *    parameters are float constants of one element type, and the weight's
 *    channel count matches the batch_norm's. The folded constants are
 *    computed in f64 and stored in the weight's element type (round to
 *    nearest even). The new op takes the batch_norm result's name and the
 *    producer's location; the old producer and constants die.
 *
 * 2. Fallback (pattern "batchnorm-to-mul-add", benefit 1): a batch_norm
 *    with constant parameters that cannot fold (producer has other uses,
 *    input is a graph argument or comes from another op, weights not
 *    constant) becomes
 *
 *      %s = constant [C, 1, 1]     %t = constant [C, 1, 1]   (t = beta - mean*s)
 *      %0 = mul %x, %s
 *      %y = add %0, %t
 *
 *    (the constants have shape [C] followed by rank-2 ones, so they
 *    broadcast over N, C, spatial dims). On a 4-D (NCHW) input the same
 *    pattern makes it a 1x1 depthwise conv instead, the same function:
 *
 *      %w = constant [C, 1, 1, 1] = s     %t = constant [C]
 *      %y = conv2d %x, %w, %t {group = C}
 *
 *    Quantized, mul + add round twice (the mul's result gets a scale of
 *    its own) and a following relu fuses only into the add; the conv is
 *    one op with one rounding, its one weight per channel is exact in
 *    per-channel int8 (q = +-qmax), t becomes its int32 bias and a relu
 *    or clip after it fuses as after any conv. DenseNet's pre-activation
 *    batch_norms (after every concat) are such (docs/accuracy.md).
 *
 * 3. Affine folding (patterns "fold-mul-into-producer" and
 *    "fold-add-into-producer", benefit 2): a mul or add of such a producer's
 *    result (one use) and a float constant that is a scalar or varies only
 *    along the channel axis (axis 1 of the result: [C], [C,1,1],
 *    [1,C,1,1], [1] ...) is a batch_norm with mean 0 and, for mul, s = the
 *    constant, beta = 0, for add, s = 1, beta = the constant; it folds the
 *    same way (W' = W s, b' = b s + beta). Models carry such ops where
 *    training had a learnable scale and shift after a layer (PP-LCNetV3's
 *    "learnable affine blocks", layer scales, batch_norm exported as
 *    Mul/Add): folded, the quantized model rounds once at the conv's
 *    output instead of again after each of them. The result's type must be
 *    the producer's (the constant does not broadcast it wider).
 *
 * Option keep-stats=true (set by the quantize pipeline for analytic bias
 * correction, passes/bias_correction.c): a batch_norm folded by pattern 1
 * leaves its output's distribution on the new op as two f64 [C]
 * attributes, bn_beta = beta and bn_std = |gamma|: on data with the
 * statistics the batch_norm was trained on, its output channel c is
 * N(beta[c], gamma[c]^2). A later affine fold into that op drops them (the
 * distribution changed); bias-correction removes them once read.
 *
 * A batch_norm with non-constant parameters, or with var + eps <= 0 or a
 * non-finite s, is left alone. Statistics: num-folded, num-affine-folded,
 * num-mul-add, num-depthwise. Match failures are logged on the "fold-batchnorm" debug
 * channel.
 */
#include <math.h>
#include <string.h>

#include "passes/pass.h"
#include "passes/rewriter.h"
#include "targets/reference/ref.h"

typedef struct fold_stats {
  uint64_t folded, affine, mul_add, depthwise;
  bool keep_stats; /* option keep-stats: bn_beta / bn_std on folded ops */
} fold_stats;

/* ---- batch_norm parameters --------------------------------------------- */

/* s[c] and t[c] = beta[c] - mean[c] * s[c], plus mean and beta, in f64. */
typedef struct bn_params {
  quill_context *ctx;
  size_t c;
  double *s, *mean, *beta; /* each c entries, one allocation */
} bn_params;

static void bn_params_free(bn_params *p) {
  if (p->s)
    quill_free(p->ctx, p->s, 3 * p->c * sizeof *p->s);
  p->s = NULL;
}

/* A non-quantized float constant operand, else NULL. */
static const quill_attr *float_constant(const quill_value *v) {
  const quill_attr *a = quill_value_constant(v);
  if (!a)
    return NULL;
  quill_type *e = quill_type_elem(quill_attr_dense_type(a));
  return quill_type_is_float(e) ? a : NULL;
}

/* Read the batch_norm's parameters. On failure returns a static reason and
 * leaves p without allocation. */
static const char *bn_params_read(quill_context *ctx, const quill_op *bn,
                                  bn_params *p) {
  memset(p, 0, sizeof *p);
  p->ctx = ctx;
  const quill_attr *a[4];
  for (unsigned i = 0; i < 4; i++)
    if (!(a[i] = float_constant(quill_op_operand(bn, i + 1))))
      return "a scale/bias/mean/var operand is not a float constant";
  quill_type *t0 = quill_attr_dense_type(a[0]);
  if (quill_type_rank(t0) != 1)
    return "parameters are not 1-D";
  size_t c = (size_t)quill_type_dim(t0, 0);
  for (unsigned i = 1; i < 4; i++)
    if (quill_attr_dense_type(a[i]) != t0)
      return "parameters differ in type";
  if (c == 0)
    return "no channels";
  double eps = quill_op_attr_float(bn, "epsilon", 1e-5);
  double *buf = quill_alloc(ctx, 3 * c * sizeof *buf);
  if (!buf)
    return "out of memory";
  p->c = c;
  p->s = buf;
  p->mean = buf + c;
  p->beta = buf + 2 * c;
  for (size_t k = 0; k < c; k++) {
    double gamma = quill_attr_dense_get_f64(a[0], k);
    double var = quill_attr_dense_get_f64(a[3], k) + eps;
    p->beta[k] = quill_attr_dense_get_f64(a[1], k);
    p->mean[k] = quill_attr_dense_get_f64(a[2], k);
    p->s[k] = gamma / sqrt(var);
    if (!(var > 0) || !isfinite(p->s[k]) || !isfinite(p->mean[k]) ||
        !isfinite(p->beta[k])) {
      bn_params_free(p);
      return "var + epsilon is not positive or a parameter is not finite";
    }
  }
  return NULL;
}

/* The parameters of `op` (a mul or add with the constant c as one operand)
 * as a batch_norm over `channels` channels of axis 1 of its result: mean
 * 0; mul: s = c, beta = 0; add: s = 1, beta = c. c must be a float
 * scalar or vary along that axis only. On failure returns a static reason
 * and leaves p without allocation. */
static const char *affine_params_read(quill_context *ctx, const quill_op *op,
                                      const quill_attr *c, size_t channels,
                                      bn_params *p) {
  memset(p, 0, sizeof *p);
  p->ctx = ctx;
  quill_type *ct = quill_attr_dense_type(c);
  quill_type *rt = quill_value_type(quill_op_result(op, 0));
  unsigned cr = quill_type_rank(ct), rr = quill_type_rank(rt);
  if (cr > rr || rr < 2)
    return "the constant has a higher rank than the result";
  size_t n = (size_t)quill_type_num_elements(ct);
  for (unsigned d = 0; d < cr; d++) {
    int64_t dim = quill_type_dim(ct, d);
    bool chan = rr - cr + d == 1;
    if (dim != 1 && !(chan && dim == (int64_t)channels))
      return "the constant varies along an axis other than the channels";
  }
  if (n != 1 && n != channels)
    return "the constant is neither a scalar nor per channel";
  if (channels == 0)
    return "no channels";
  double *buf = quill_alloc(ctx, 3 * channels * sizeof *buf);
  if (!buf)
    return "out of memory";
  p->c = channels;
  p->s = buf;
  p->mean = buf + channels;
  p->beta = buf + 2 * channels;
  bool mul = quill_op_opcode(op) == QUILL_OP_MUL;
  for (size_t k = 0; k < channels; k++) {
    double v = quill_attr_dense_get_f64(c, n == 1 ? 0 : k);
    p->s[k] = mul ? v : 1.0;
    p->beta[k] = mul ? 0.0 : v;
    p->mean[k] = 0.0;
    if (!isfinite(v)) {
      bn_params_free(p);
      return "the constant is not finite";
    }
  }
  return NULL;
}

/* ---- constants ------------------------------------------------------------ */

/* A dense attr of `type` whose element i is vals[i] (NULL on failure). */
static const quill_attr *dense_from_f64(quill_context *ctx, quill_type *type,
                                        const double *vals) {
  quill_tensor t;
  if (quill_tensor_alloc(ctx, type, &t) != QUILL_OK)
    return NULL;
  size_t n = quill_tensor_num_elements(&t);
  for (size_t i = 0; i < n; i++)
    quill_tensor_set_f64(&t, i, vals[i]);
  const quill_attr *a = quill_tensor_to_attr(ctx, &t);
  quill_tensor_free(ctx, &t);
  return a;
}

static quill_type *tensor_type(quill_context *ctx, quill_type *elem,
                               unsigned rank, const int64_t *dims) {
  return quill_type_tensor(ctx, elem, rank, dims);
}

/* ---- producers: where the output channel of a weight element is ---------- */

/* ch(i) = (i / outer_div / grp_div) * grp_mul + (i / inner) % mod */
typedef struct chan_map {
  int64_t channels;
  int64_t inner, mod;
  int64_t outer_div, grp_div, grp_mul;
} chan_map;

static int64_t chan_of(const chan_map *m, int64_t i) {
  return (i / m->outer_div / m->grp_div) * m->grp_mul + (i / m->inner) % m->mod;
}

typedef const char *(*chan_map_fn)(const quill_op *op, const quill_type *w,
                                   chan_map *m);

static void map_rows(const quill_type *w, chan_map *m) {
  int64_t inner = 1;
  for (unsigned d = 1; d < quill_type_rank(w); d++)
    inner *= quill_type_dim(w, d);
  *m = (chan_map){quill_type_dim(w, 0), inner, quill_type_dim(w, 0), 1, 1, 0};
}

/* conv2d: W [O, C/g, kh, kw], channel = axis 0 for every group count. */
static const char *conv2d_map(const quill_op *op, const quill_type *w,
                              chan_map *m) {
  (void)op;
  if (quill_type_rank(w) != 4)
    return "weight is not 4-D";
  map_rows(w, m);
  return NULL;
}

/* conv_transpose2d: W [C, O/g, kh, kw]; group k owns input channels
 * [k*C/g, (k+1)*C/g) and output channels [k*O/g, (k+1)*O/g). */
static const char *conv_transpose2d_map(const quill_op *op,
                                        const quill_type *w, chan_map *m) {
  if (quill_type_rank(w) != 4)
    return "weight is not 4-D";
  int64_t g = quill_op_attr_int(op, "group", 1);
  int64_t cin = quill_type_dim(w, 0), og = quill_type_dim(w, 1);
  int64_t k = quill_type_dim(w, 2) * quill_type_dim(w, 3);
  if (g <= 0 || cin % g)
    return "group does not divide the input channels";
  *m = (chan_map){g * og, k, og, og * k, cin / g, og};
  return NULL;
}

/* gemm: B [N, K] with trans_b, else [K, N]. */
static const char *gemm_map(const quill_op *op, const quill_type *w,
                            chan_map *m) {
  if (quill_type_rank(w) != 2)
    return "B is not 2-D";
  const quill_attr *tb = quill_op_attr(op, "trans_b");
  bool trans = tb && (quill_attr_kind_of(tb) == QUILL_ATTR_BOOL
                          ? quill_attr_bool_value(tb)
                          : quill_attr_kind_of(tb) == QUILL_ATTR_INT &&
                                quill_attr_int_value(tb) != 0);
  if (trans)
    map_rows(w, m);
  else
    *m = (chan_map){quill_type_dim(w, 1), 1, quill_type_dim(w, 1), 1, 1, 0};
  return NULL;
}

/* The ops batch_norm folds into, indexed by opcode. */
static const chan_map_fn producers[QUILL_OP_COUNT] = {
    [QUILL_OP_CONV2D] = conv2d_map,
    [QUILL_OP_CONV_TRANSPOSE2D] = conv_transpose2d_map,
    [QUILL_OP_GEMM] = gemm_map,
};

/* ---- the new bias ------------------------------------------------------- */

/* The folded bias (b - mean) * s + beta of a conv: shape [C]; b from the
 * optional constant bias attr. */
static double *conv_bias(quill_context *ctx, const bn_params *p,
                         const quill_attr *b, size_t *n) {
  double *v = quill_alloc(ctx, p->c * sizeof *v);
  if (!v)
    return NULL;
  for (size_t c = 0; c < p->c; c++) {
    double old = b ? quill_attr_dense_get_f64(b, c) : 0.0;
    v[c] = (old - p->mean[c]) * p->s[c] + p->beta[c];
  }
  *n = p->c;
  return v;
}

/* The folded C' = (beta_g*C - mean) * s + beta of a gemm with result
 * [M, N]: shape [N] if C does not vary along M, else [M, N] (*rows = M). */
static double *gemm_bias(quill_context *ctx, const quill_op *gemm,
                         const bn_params *p, const quill_attr *cattr,
                         int64_t *rows, size_t *n) {
  quill_type *rt = quill_value_type(quill_op_result(gemm, 0));
  double beta_g = quill_op_attr_float(gemm, "beta", 1.0);
  int64_t d0 = 1, d1 = 1; /* C's dims, right-aligned to [M, N] */
  if (cattr) {
    quill_type *ct = quill_attr_dense_type(cattr);
    unsigned r = quill_type_rank(ct);
    if (r >= 1)
      d1 = quill_type_dim(ct, r - 1);
    if (r == 2)
      d0 = quill_type_dim(ct, 0);
  }
  *rows = d0 == 1 ? 1 : quill_type_dim(rt, 0);
  if (*rows < 1)
    return NULL; /* checked by the caller: M is static when C varies */
  size_t cnt = (size_t)*rows * p->c;
  double *v = quill_alloc(ctx, cnt * sizeof *v);
  if (!v)
    return NULL;
  for (int64_t m = 0; m < *rows; m++)
    for (size_t c = 0; c < p->c; c++) {
      double old = 0.0;
      if (cattr)
        old = beta_g * quill_attr_dense_get_f64(
                           cattr, (size_t)((d0 == 1 ? 0 : m) * d1 +
                                           (d1 == 1 ? 0 : (int64_t)c)));
      v[(size_t)m * p->c + c] = (old - p->mean[c]) * p->s[c] + p->beta[c];
    }
  *n = cnt;
  return v;
}

/* The batch_norm's output distribution as bn_beta = beta and bn_std =
 * |gamma| (f64 [C], option keep-stats) into a[0], a[1]; false: no memory. */
static bool bn_stats_attrs(quill_context *ctx, const quill_op *bn,
                           const bn_params *p, const quill_attr *a[2]) {
  const quill_attr *gamma = float_constant(quill_op_operand(bn, 1));
  int64_t c = (int64_t)p->c;
  quill_type *t = tensor_type(ctx, quill_type_scalar(ctx, QUILL_TYPE_F64), 1,
                              &c);
  double *sd = quill_alloc(ctx, p->c * sizeof *sd);
  if (!t || !sd || !gamma) {
    if (sd)
      quill_free(ctx, sd, p->c * sizeof *sd);
    return false;
  }
  for (size_t k = 0; k < p->c; k++)
    sd[k] = fabs(quill_attr_dense_get_f64(gamma, k));
  a[0] = dense_from_f64(ctx, t, p->beta);
  a[1] = dense_from_f64(ctx, t, sd);
  quill_free(ctx, sd, p->c * sizeof *sd);
  return a[0] && a[1];
}

/* ---- pattern 1: fold into the producer ------------------------------------ */

/* Pattern 1 (root batch_norm) and 3 (root mul or add): the op's
 * parameters folded into the conv/gemm producing its input x. */
static quill_match_result match_fold(const quill_pattern *pat,
                                     quill_rewriter *rw, quill_op *bn) {
  quill_context *ctx = quill_rewriter_context(rw);
  bool affine = quill_op_opcode(bn) != QUILL_OP_BATCH_NORM;
  quill_value *x = quill_op_operand(bn, 0);
  const quill_attr *konst = NULL; /* affine: the constant operand */
  if (affine) {
    if (quill_op_num_operands(bn) != 2)
      return quill_rewriter_fail(rw, bn, "not a binary op");
    unsigned ci = float_constant(quill_op_operand(bn, 1)) ? 1 : 0;
    konst = float_constant(quill_op_operand(bn, ci));
    x = quill_op_operand(bn, 1 - ci);
    if (!konst || quill_value_constant(x))
      return quill_rewriter_fail(rw, bn, "not one float constant operand");
    if (quill_value_type(x) != quill_value_type(quill_op_result(bn, 0)))
      return quill_rewriter_fail(rw, bn, "the constant broadcasts the result "
                                         "wider");
  }
  quill_op *prod = quill_value_def(x);
  if (!prod)
    return quill_rewriter_fail(rw, bn, "input is a graph argument");
  quill_opcode opc = quill_op_opcode(prod);
  if (!producers[opc])
    return quill_rewriter_fail(rw, bn, "input comes from '%s', not a conv or "
                                       "gemm", quill_op_name(prod));
  if (!quill_value_has_one_use(x))
    return quill_rewriter_fail(rw, bn, "the producer's result has other uses");
  unsigned nops = quill_op_num_operands(prod);
  const quill_attr *w = float_constant(quill_op_operand(prod, 1));
  const quill_attr *b = nops > 2 ? float_constant(quill_op_operand(prod, 2))
                                 : NULL;
  if (!w || (nops > 2 && !b))
    return quill_rewriter_fail(rw, bn, "the producer's weight or bias is not "
                                       "a float constant");
  quill_type *wt = quill_attr_dense_type(w);
  quill_type *we = quill_type_elem(wt);
  quill_type *xe = quill_type_elem(quill_value_type(x));
  if (we != xe || (b && quill_type_elem(quill_attr_dense_type(b)) != we))
    return quill_rewriter_fail(rw, bn, "weight, bias and result element types "
                                       "differ");
  chan_map map;
  const char *why = producers[opc](prod, wt, &map);
  if (why)
    return quill_rewriter_fail(rw, bn, "%s", why);
  if (opc == QUILL_OP_GEMM && b) {
    quill_type *ct = quill_attr_dense_type(b);
    quill_type *pt = quill_value_type(x);
    if (quill_type_rank(ct) == 2 && quill_type_dim(ct, 0) != 1 &&
        quill_type_dim(pt, 0) < 1)
      return quill_rewriter_fail(rw, bn, "C varies along a dynamic M");
  }
  bn_params p;
  if ((why = affine ? affine_params_read(ctx, bn, konst, (size_t)map.channels,
                                         &p)
                    : bn_params_read(ctx, bn, &p)))
    return quill_rewriter_fail(rw, bn, "%s", why);
  quill_type *pe = affine ? quill_type_elem(quill_attr_dense_type(konst))
                          : quill_type_elem(quill_value_type(
                                quill_op_operand(bn, 1)));
  if (map.channels != (int64_t)p.c || pe != we) {
    bn_params_free(&p);
    return quill_rewriter_fail(rw, bn, "channel count or parameter type does "
                                       "not match the producer's weight");
  }

  /* Compute every new constant before touching the IR. */
  const quill_attr *wattr = NULL, *battr = NULL;
  size_t nw = (size_t)quill_type_num_elements(wt), nb = 0;
  int64_t rows = 1;
  double *wv = quill_alloc(ctx, (nw ? nw : 1) * sizeof *wv);
  double *bv = opc == QUILL_OP_GEMM ? gemm_bias(ctx, prod, &p, b, &rows, &nb)
                                    : conv_bias(ctx, &p, b, &nb);
  if (wv && bv) {
    for (size_t i = 0; i < nw; i++)
      wv[i] = quill_attr_dense_get_f64(w, i) * p.s[chan_of(&map, (int64_t)i)];
    int64_t bdims[2] = {rows, (int64_t)p.c};
    bool two_d = opc == QUILL_OP_GEMM && rows != 1;
    quill_type *bt = tensor_type(ctx, we, two_d ? 2 : 1, bdims + !two_d);
    wattr = dense_from_f64(ctx, wt, wv);
    battr = bt ? dense_from_f64(ctx, bt, bv) : NULL;
  }
  quill_free(ctx, wv, (nw ? nw : 1) * sizeof *wv);
  if (bv)
    quill_free(ctx, bv, nb * sizeof *bv);
  bool keep = !affine && ((fold_stats *)pat->data)->keep_stats;
  const quill_attr *sattr[2] = {NULL, NULL};
  if (keep && wattr && battr && !bn_stats_attrs(ctx, bn, &p, sattr))
    wattr = NULL; /* out of memory */
  bn_params_free(&p);
  unsigned na = quill_op_num_attrs(prod);
  quill_named_attr *attrs = quill_alloc(ctx, (na + 3) * sizeof *attrs);
  quill_ident beta_name = quill_ident_get(ctx, "beta");
  quill_ident sname[2] = {quill_ident_get(ctx, "bn_beta"),
                          quill_ident_get(ctx, "bn_std")};
  const quill_attr *one = quill_attr_float(ctx, 1.0);
  if (!wattr || !battr || !attrs || !beta_name || !one || !sname[0] ||
      !sname[1]) {
    if (attrs)
      quill_free(ctx, attrs, (na + 3) * sizeof *attrs);
    return quill_rewriter_fail(rw, bn, "out of memory");
  }
  /* Same attributes; a gemm gets beta = 1 (beta is now inside C'); the
   * producer's own bn_beta / bn_std (an earlier fold) are stale. */
  unsigned n = 0;
  bool has_beta = false;
  for (unsigned i = 0; i < na; i++) {
    attrs[n] = quill_op_attr_at(prod, i);
    if (attrs[n].name == sname[0] || attrs[n].name == sname[1])
      continue;
    if (opc == QUILL_OP_GEMM && attrs[n].name == beta_name) {
      attrs[n].attr = one;
      has_beta = true;
    }
    n++;
  }
  if (opc == QUILL_OP_GEMM && !has_beta)
    attrs[n++] = (quill_named_attr){beta_name, one};
  for (unsigned k = 0; keep && k < 2; k++)
    attrs[n++] = (quill_named_attr){sname[k], sattr[k]};

  /* Commit. */
  quill_loc loc = quill_op_loc(prod);
  quill_value *ops[3] = {quill_op_operand(prod, 0),
                         quill_rewriter_create_constant(rw, wattr, loc),
                         quill_rewriter_create_constant(rw, battr, loc)};
  quill_type *rt = quill_value_type(quill_op_result(bn, 0));
  quill_op *nop = ops[1] && ops[2]
                      ? quill_rewriter_create_op(rw, opc, 3, ops, 1, &rt, n,
                                                 attrs, loc)
                      : NULL;
  quill_free(ctx, attrs, (na + 3) * sizeof *attrs);
  if (!nop)
    return quill_rewriter_fail(rw, bn, "out of memory"); /* dead constants
                                                           are cleaned up */
  quill_value *res = quill_op_result(nop, 0);
  const char *name = quill_value_name(quill_op_result(bn, 0));
  if (!name)
    name = quill_value_name(x);
  if (name)
    (void)quill_value_set_name(res, name); /* a name is only cosmetic */
  quill_rewriter_replace_op(rw, bn, &res);
  quill_rewriter_erase_op(rw, prod);
  if (affine)
    ((fold_stats *)pat->data)->affine++;
  else
    ((fold_stats *)pat->data)->folded++;
  return QUILL_MATCH_SUCCESS;
}

/* ---- pattern 2: mul + add, or a 1x1 depthwise conv ----------------------- */

/* bn's uses go to res, which takes bn's result name. */
static void replace_named(quill_rewriter *rw, quill_op *bn, quill_value *res) {
  const char *name = quill_value_name(quill_op_result(bn, 0));
  if (name)
    (void)quill_value_set_name(res, name);
  quill_rewriter_replace_op(rw, bn, &res);
}

/* Pattern 2's conv form: bn replaced by conv2d x, w (sa), t (ta) {group}. */
static quill_match_result depthwise(quill_rewriter *rw, quill_op *bn,
                                    quill_value *x, const quill_attr *sa,
                                    const quill_attr *ta, int64_t channels,
                                    fold_stats *stats) {
  quill_context *ctx = quill_rewriter_context(rw);
  quill_loc loc = quill_op_loc(bn);
  quill_type *rt = quill_value_type(quill_op_result(bn, 0));
  quill_named_attr group = {quill_ident_get(ctx, "group"),
                            quill_attr_int(ctx, channels)};
  quill_value *w = quill_rewriter_create_constant(rw, sa, loc);
  quill_value *b = quill_rewriter_create_constant(rw, ta, loc);
  quill_value *ops[3] = {x, w, b};
  quill_op *conv = w && b && group.name && group.attr
                       ? quill_rewriter_create_op(rw, QUILL_OP_CONV2D, 3, ops,
                                                  1, &rt, 1, &group, loc)
                       : NULL;
  if (!conv)
    return quill_rewriter_fail(rw, bn, "out of memory");
  replace_named(rw, bn, quill_op_result(conv, 0));
  stats->depthwise++;
  return QUILL_MATCH_SUCCESS;
}

static quill_match_result match_mul_add(const quill_pattern *pat,
                                        quill_rewriter *rw, quill_op *bn) {
  quill_context *ctx = quill_rewriter_context(rw);
  quill_value *x = quill_op_operand(bn, 0);
  quill_type *rt = quill_value_type(quill_op_result(bn, 0));
  quill_type *xe = quill_type_elem(quill_value_type(x));
  unsigned rank = quill_type_rank(quill_value_type(x));
  bn_params p;
  const char *why = bn_params_read(ctx, bn, &p);
  if (why)
    return quill_rewriter_fail(rw, bn, "%s", why);
  bool conv = rank == 4;
  int64_t dims[QUILL_MAX_RANK];
  dims[0] = (int64_t)p.c;
  for (unsigned d = 1; d + 1 < rank + conv; d++)
    dims[d] = 1;
  /* mul + add: both [C, 1, ...] (rank - 1); conv: w [C, 1, 1, 1], t [C] */
  quill_type *ct = tensor_type(ctx, xe, conv ? 4 : rank - 1, dims);
  quill_type *tt = conv ? tensor_type(ctx, xe, 1, dims) : ct;
  const quill_attr *sa = NULL, *ta = NULL;
  double *t = quill_alloc(ctx, p.c * sizeof *t);
  if (t && ct && tt) {
    for (size_t c = 0; c < p.c; c++)
      t[c] = p.beta[c] - p.mean[c] * p.s[c];
    sa = dense_from_f64(ctx, ct, p.s);
    ta = dense_from_f64(ctx, tt, t);
  }
  if (t)
    quill_free(ctx, t, p.c * sizeof *t);
  int64_t channels = (int64_t)p.c;
  bn_params_free(&p);
  if (!sa || !ta)
    return quill_rewriter_fail(rw, bn, "out of memory");

  quill_loc loc = quill_op_loc(bn);
  if (conv)
    return depthwise(rw, bn, x, sa, ta, channels, (fold_stats *)pat->data);
  quill_value *s = quill_rewriter_create_constant(rw, sa, loc);
  quill_value *sh = quill_rewriter_create_constant(rw, ta, loc);
  quill_value *mops[2] = {x, s};
  quill_op *mul = s && sh ? quill_rewriter_create_op(rw, QUILL_OP_MUL, 2, mops,
                                                     1, &rt, 0, NULL, loc)
                          : NULL;
  quill_value *aops[2] = {mul ? quill_op_result(mul, 0) : NULL, sh};
  quill_op *add = mul ? quill_rewriter_create_op(rw, QUILL_OP_ADD, 2, aops, 1,
                                                 &rt, 0, NULL, loc)
                      : NULL;
  if (!add)
    return quill_rewriter_fail(rw, bn, "out of memory");
  replace_named(rw, bn, quill_op_result(add, 0));
  ((fold_stats *)pat->data)->mul_add++;
  return QUILL_MATCH_SUCCESS;
}

/* ---- the pass ------------------------------------------------------------- */

static quill_status run(quill_pass_state *ps, quill_module *m) {
  quill_context *ctx = quill_pass_context(ps);
  const char *ks = quill_pass_option(ps, "keep-stats");
  fold_stats stats = {0, 0, 0, 0, ks && strcmp(ks, "true") == 0};
  /* The patterns count their rewrites into `stats` through `data`. */
  const quill_pattern patterns[] = {
      {"fold-batchnorm-into-producer", QUILL_OP_BATCH_NORM, 2, match_fold,
       &stats},
      {"batchnorm-to-mul-add", QUILL_OP_BATCH_NORM, 1, match_mul_add, &stats},
      {"fold-mul-into-producer", QUILL_OP_MUL, 2, match_fold, &stats},
      {"fold-add-into-producer", QUILL_OP_ADD, 2, match_fold, &stats},
  };
  quill_pattern_set *set = quill_pattern_set_create(ctx);
  if (!set)
    return QUILL_ERR_NOMEM;
  quill_status st = QUILL_OK;
  for (size_t i = 0; !st && i < sizeof patterns / sizeof patterns[0]; i++)
    st = quill_pattern_set_add(set, &patterns[i]);
  quill_greedy_config cfg = {10, true, "fold-batchnorm"};
  if (!st)
    st = quill_apply_patterns_module(m, set, &cfg, NULL, NULL);
  quill_pattern_set_destroy(set);
  if (stats.folded)
    quill_pass_stat_add(ps, "num-folded", stats.folded);
  if (stats.affine)
    quill_pass_stat_add(ps, "num-affine-folded", stats.affine);
  if (stats.mul_add)
    quill_pass_stat_add(ps, "num-mul-add", stats.mul_add);
  if (stats.depthwise)
    quill_pass_stat_add(ps, "num-depthwise", stats.depthwise);
  if (!st && !stats.folded && !stats.affine && !stats.mul_add &&
      !stats.depthwise)
    quill_pass_mark_unchanged(ps);
  return st;
}

const quill_pass quill_pass_fold_batchnorm = {
    .name = "fold-batchnorm",
    .summary = "Fold batch_norm (and constant per-channel mul/add) into the "
               "conv/gemm before it, else batch_norm into mul + add (or a "
               "1x1 depthwise conv)",
    .run = run,
    .requires = 0,
    .establishes = 0,
    .preserves = 0,
    .options = "keep-stats=true|false",
};
