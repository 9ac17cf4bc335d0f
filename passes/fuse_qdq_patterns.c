/*
 * fuse_qdq_patterns.c - the rewrite patterns of `fuse-qdq` (the pass and
 * the helpers are in fuse_qdq.c, the matching helpers in fuse_qdq_match.h,
 * the table and row patterns in fuse_qdq_tables.c). Most are rooted at the
 * reference form's `quantize`; "DQ(x)" below is `dequantize %x`, and the
 * float op's result must have the quantize as its only use.
 *
 *   pattern      reference form                     integer form
 *   conv         Q(conv2d(DQ x, DQ w [, b]))         qconv2d x, w [, b:i32]
 *   gemm         Q(gemm(DQ a, DQ w [, c]))           qmatmul a, w' [, c:i32]
 *                (trans_a 0, alpha 1, beta 1; trans_b: w' = w^T, constant)
 *   matmul       Q(matmul(DQ a, DQ b)) and           qmatmul a, b [, c:i32]
 *                Q(add(matmul(DQ a, DQ b), c const))
 *   add, mul     Q(add(DQ a, DQ b))                  qadd / qmul a, b
 *   lut, softmax, layer_norm: fuse_qdq_tables.c
 *   passthrough  Q(maxpool/reshape/..(DQ x))         op x [+ requantize]
 *   avgpool      Q(avgpool(DQ x))                    avgpool x [+ requantize]
 *                Q(global_avgpool(DQ x))             global_avgpool x (a
 *                                                    requantizing mean)
 *   concat       Q(concat(DQ x1, .., DQ xn))         concat(requantize xi)
 *   requantize   Q(DQ x)                             requantize x (or x;
 *                                                    with tflite rounding
 *                                                    not 8 -> 16 bits)
 *   float-output conv2d/gemm/matmul(DQ x, DQ w)      qconv2d/qmatmul -> i32,
 *                whose result is not quantized       scast, dequantize
 *
 * A fused `activation` (relu/clip) becomes act_min/act_max; biases become
 * int32 at scale s_x*s_w[c] (quill_fqdq_bias_i32). qconv2d/qmatmul get
 * `accumulator = "i64"` when the worst-case sum may leave int32
 * (quill_fqdq_acc_bound: 16-bit operands, or very long 8-bit sums); an
 * i32-result (float-output) op that would need it stays unfused. Every pattern computes
 * all it needs (attributes, constants as attrs) before touching the IR.
 */
#include <math.h>
#include <string.h>

#include "passes/fuse_qdq_match.h"

/* Attributes of a requantize from xe to ye (fixed point only between
 * per-tensor types; otherwise the float DQ -> Q path). */
static bool requant_attrs(const fqdq *f, quill_fqdq_attrs *l,
                          quill_rounding r, const quill_type *xe,
                          const quill_type *ye, const char **why) {
  if (quill_type_quant_axis_of(xe) >= 0 || quill_type_quant_axis_of(ye) >= 0) {
    quill_fqdq_attrs_set_str(l, "rounding", quill_rounding_name(r));
    return true;
  }
  double real = quill_requant_multiplier(scale0(xe), scale0(ye));
  return quill_fqdq_requant_attrs(f, l, r, &real, 1, why);
}

/* ---- conv2d, gemm, matmul ------------------------------------------------ */

/* An integer conv/matmul being built. */
typedef struct linear {
  quill_opcode opc;           /* QCONV2D or QMATMUL */
  quill_op *fop;              /* the float op (conv2d, gemm, matmul, add) */
  quill_value *x, *w;         /* quantized operands */
  const quill_attr *w_attr;   /* a new (transposed) weight constant, or NULL */
  const quill_value *bias;    /* the float op's bias operand, or NULL */
  quill_op *act;              /* the op carrying the fused activation */
  quill_loc loc;
} linear;

/* The weight scales (w per tensor, or along its channel axis `axis` with
 * nch parameters); false if they do not fit. */
static bool linear_scales(quill_type *we, size_t nch, int32_t axis,
                          const double **s_w, size_t *n_w) {
  int32_t a = quill_type_quant_axis_of(we);
  *s_w = quill_type_quant_scales(we);
  *n_w = quill_type_quant_num_params(we);
  return a < 0 ? *n_w == 1 : a == axis && *n_w == nch;
}

/* Emit the integer op for l: requantized to the quantize q's type, or
 * (q NULL) as an i32 accumulator, scast to per-channel scales s_x*s_w[c]
 * and dequantized to the float op's result type. `root` is replaced. */
static quill_match_result emit_linear(const quill_pattern *p,
                                      quill_rewriter *rw, quill_op *root,
                                      const quill_op *q, const linear *l,
                                      int32_t w_axis, int32_t y_axis) {
  fqdq *f = state(p);
  quill_context *ctx = quill_rewriter_context(rw);
  quill_type *ft = quill_value_type(quill_op_result(root, 0));
  quill_type *xe = quill_fqdq_qelem(l->x);
  quill_type *we = l->w_attr ? quill_type_elem(quill_attr_dense_type(l->w_attr))
                             : quill_fqdq_qelem(l->w);
  quill_type *rt = quill_value_type(quill_op_result(l->fop, 0));
  unsigned rank = quill_type_rank(rt);
  if ((unsigned)y_axis >= rank || quill_type_dim(rt, (unsigned)y_axis) < 1)
    return quill_rewriter_fail(rw, root, "the output channel count is not "
                                         "static");
  size_t nch = (size_t)quill_type_dim(rt, (unsigned)y_axis);
  const double *s_w;
  size_t n_w;
  if (!linear_scales(we, nch, w_axis, &s_w, &n_w))
    return quill_rewriter_fail(rw, root, "the weights are not quantized per "
                                         "tensor or per output channel");
  double s_x = scale0(xe);
  const char *why = NULL;
  const quill_attr *battr =
      l->bias ? quill_fqdq_bias_i32(ctx, l->bias, s_x, s_w, n_w, nch, &why)
              : NULL;
  if (l->bias && !battr)
    return why ? quill_rewriter_fail(rw, root, "%s", why) : oom(rw, root);
  if (battr && q && !(battr = quill_fqdq_bias_drop_dead(
                          ctx, battr, s_x, s_w, n_w,
                          scale0(quill_fqdq_qelem(quill_op_result(q, 0))))))
    return oom(rw, root);
  /* int32 accumulation only where the worst case provably fits */
  quill_type *wt = l->w_attr ? quill_attr_dense_type(l->w_attr)
                             : quill_value_type(l->w);
  const quill_attr *wc = l->w_attr ? l->w_attr : quill_value_constant(l->w);
  bool wide = quill_fqdq_acc_bound(xe, wt, wc, l->opc == QUILL_OP_QCONV2D,
                                   battr) > (double)INT32_MAX;
  /* TFLite's 16x8 kernels (16-bit activations) always sum in int64 and
   * requantize through the int64 MultiplyByQuantizedMultiplier (its 16-bit
   * multiplier), whatever the sum's size: with TFLite's numerics, a 16-bit
   * x takes the i64 accumulator and its requantization too. */
  if (q && f->fixed && quill_fqdq_rounding(f, q) == QUILL_ROUND_TFLITE &&
      quill_type_bit_width(xe) == 16)
    wide = true;
  if (wide && !q)
    return quill_rewriter_fail(rw, root, "the worst-case accumulator does not "
                                         "fit in int32 and the result would "
                                         "be the raw i32 accumulator");

  quill_fqdq_attrs attrs;
  quill_fqdq_attrs_init(&attrs, ctx);
  if (l->opc == QUILL_OP_QCONV2D)
    quill_fqdq_attrs_copy(&attrs, l->fop, NULL);
  double *reals = quill_alloc(ctx, n_w * sizeof *reals);
  double *accs = quill_alloc(ctx, n_w * sizeof *accs);
  int64_t *zeros = quill_calloc(ctx, n_w, sizeof *zeros);
  quill_type *yt = NULL, *acc_q = NULL;
  bool ok = reals && accs && zeros;
  if (ok && q) { /* requantized result */
    quill_type *ye = quill_fqdq_qelem(quill_op_result(q, 0));
    for (size_t c = 0; c < n_w; c++) {
      reals[c] = quill_product_multiplier(s_x, s_w[c], scale0(ye));
      /* Below 2^-32 the requantization of an int32 accumulator is 0 for
       * every value it can hold (|acc * real| < 2^31 * 2^-32 = 1/2): the
       * channel is the output zero point, as TFLite's QuantizeMultiplier
       * makes it (shift < -31: multiplier 0, shift 0). PP-OCRv4 rec has
       * such channels (weights near 1e-38): they kept the whole op float,
       * which TFLite computes in int8 (1 step off, 255 at the output). */
      if (!wide && reals[c] < 0x1p-32)
        reals[c] = 0.0;
    }
    ok = quill_fqdq_requant_attrs(f, &attrs, quill_fqdq_rounding(f, q), reals,
                                  n_w, &why) &&
         quill_fqdq_act_attrs(&attrs, l->act, q, ye, &why);
    yt = quill_value_type(quill_op_result(q, 0));
  } else if (ok) { /* i32 accumulator, then the accumulator's scales */
    quill_type *i32 = quill_type_scalar(ctx, QUILL_TYPE_I32);
    for (size_t c = 0; c < n_w; c++)
      accs[c] = s_x * s_w[c];
    acc_q = n_w == 1
                ? quill_type_quant(ctx, i32, quill_type_elem(ft), accs[0], 0,
                                   INT32_MIN, INT32_MAX)
                : quill_type_quant_axis(ctx, i32, quill_type_elem(ft), y_axis,
                                        n_w, accs, zeros, INT32_MIN,
                                        INT32_MAX);
    yt = quill_type_with_elem(ctx, ft, i32);
    acc_q = acc_q ? quill_type_with_elem(ctx, ft, acc_q) : NULL;
    ok = yt && acc_q;
    if (!ok)
      why = "the accumulator's quantized type is invalid";
  }
  if (wide)
    quill_fqdq_attrs_set_str(&attrs, "accumulator", "i64");
  if (reals)
    quill_free(ctx, reals, n_w * sizeof *reals);
  if (accs)
    quill_free(ctx, accs, n_w * sizeof *accs);
  if (zeros)
    quill_free(ctx, zeros, n_w * sizeof *zeros);
  if (!ok || !quill_fqdq_attrs_ok(&attrs)) {
    quill_fqdq_attrs_free(&attrs);
    return why ? quill_rewriter_fail(rw, root, "%s", why) : oom(rw, root);
  }
  /* float output: the fused activation runs after the dequantize */
  const char *act = NULL;
  quill_fqdq_attrs act_attrs;
  quill_fqdq_attrs_init(&act_attrs, ctx);
  if (!q && quill_op_attr(l->act, "activation")) {
    act = str_attr(l->act, "activation", "");
    if (strcmp(act, "clip") == 0) {
      quill_fqdq_attrs_set(&act_attrs, "min", quill_op_attr(l->act,
                                                             "activation_min"));
      quill_fqdq_attrs_set(&act_attrs, "max", quill_op_attr(l->act,
                                                             "activation_max"));
    } else if (strcmp(act, "relu") != 0)
      act_attrs.failed = true;
  }
  if (!quill_fqdq_attrs_ok(&act_attrs)) {
    quill_fqdq_attrs_free(&attrs);
    quill_fqdq_attrs_free(&act_attrs);
    return quill_rewriter_fail(rw, root, "unsupported fused activation");
  }

  /* commit */
  quill_value *ops[3] = {l->x, l->w, NULL};
  unsigned n = 2;
  if (l->w_attr && !(ops[1] = quill_rewriter_create_constant(rw, l->w_attr,
                                                              l->loc)))
    goto nomem;
  if (battr && !(ops[n++] = quill_rewriter_create_constant(rw, battr, l->loc)))
    goto nomem;
  quill_value *res = emit(rw, l->opc, n, ops, yt, &attrs, l->loc);
  if (res && !q) {
    res = emit(rw, QUILL_OP_SCAST, 1, &res, acc_q, NULL, l->loc);
    res = res ? emit(rw, QUILL_OP_DEQUANTIZE, 1, &res, ft, NULL, l->loc) : NULL;
    if (res && act)
      res = emit(rw, strcmp(act, "relu") == 0 ? QUILL_OP_RELU : QUILL_OP_CLIP,
                 1, &res, ft, &act_attrs, l->loc);
  }
  if (!res)
    goto nomem;
  quill_fqdq_attrs_free(&attrs);
  quill_fqdq_attrs_free(&act_attrs);
  f->wide += wide;
  return finish(p, rw, root, res, quill_op_opcode(l->fop));
nomem:
  quill_fqdq_attrs_free(&attrs);
  quill_fqdq_attrs_free(&act_attrs);
  return oom(rw, root);
}

/* conv2d(DQ x, DQ w [, bias]) -> l; NULL reason on success. */
static const char *match_conv_operands(quill_op *c, linear *l) {
  memset(l, 0, sizeof *l);
  l->opc = QUILL_OP_QCONV2D;
  l->fop = l->act = c;
  l->loc = quill_op_loc(c);
  l->x = quill_fqdq_dq_source(quill_op_operand(c, 0));
  l->w = quill_fqdq_dq_source(quill_op_operand(c, 1));
  if (!l->x || !quill_fqdq_per_tensor(l->x))
    return "the input is not dequantized from a per-tensor quantized value";
  if (!l->w)
    return "the weight is not dequantized";
  if (quill_op_num_operands(c) > 2)
    l->bias = quill_op_operand(c, 2);
  return NULL;
}

/* Transpose a quantized [N, K] constant into [K, N]; per-axis params along
 * axis 0 move to axis 1. NULL on failure. */
static const quill_attr *transpose_weight(quill_context *ctx,
                                          const quill_attr *w) {
  quill_type *t = quill_attr_dense_type(w), *e = quill_type_elem(t);
  if (quill_type_rank(t) != 2 || !quill_type_is_quant(e) ||
      quill_type_quant_axis_of(e) > 0)
    return NULL;
  int64_t n = quill_type_dim(t, 0), k = quill_type_dim(t, 1);
  quill_type *ne = e;
  if (quill_type_quant_axis_of(e) == 0)
    ne = quill_type_quant_axis(ctx, quill_type_quant_storage(e),
                               quill_type_quant_expressed(e), 1,
                               quill_type_quant_num_params(e),
                               quill_type_quant_scales(e),
                               quill_type_quant_zero_points(e),
                               quill_type_quant_qmin(e),
                               quill_type_quant_qmax(e));
  int64_t dims[2] = {k, n};
  quill_type *nt = ne ? quill_type_tensor(ctx, ne, 2, dims) : NULL;
  size_t eb = quill_type_elem_bytes(e), size = quill_attr_dense_size(w);
  char *buf = nt ? quill_alloc(ctx, size ? size : 1) : NULL;
  if (!buf)
    return NULL;
  const char *src = quill_attr_dense_data(w);
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < k; j++)
      memcpy(buf + (size_t)(j * n + i) * eb, src + (size_t)(i * k + j) * eb,
             eb);
  const quill_attr *a = quill_attr_dense(ctx, nt, buf, size);
  quill_free(ctx, buf, size ? size : 1);
  return a;
}

/* gemm(DQ a, DQ w [, c]) -> l (qmatmul a, w'); NULL reason on success. */
static const char *match_gemm_operands(quill_context *ctx, quill_op *g,
                                       linear *l) {
  memset(l, 0, sizeof *l);
  l->opc = QUILL_OP_QMATMUL;
  l->fop = l->act = g;
  l->loc = quill_op_loc(g);
  if (quill_op_attr_int(g, "trans_a", 0) != 0)
    return "trans_a is set";
  if (quill_op_attr_float(g, "alpha", 1.0) != 1.0)
    return "alpha is not 1";
  if (quill_op_num_operands(g) > 2 &&
      quill_op_attr_float(g, "beta", 1.0) != 1.0)
    return "beta is not 1";
  l->x = quill_fqdq_dq_source(quill_op_operand(g, 0));
  l->w = quill_fqdq_dq_source(quill_op_operand(g, 1));
  if (!l->x || !quill_fqdq_per_tensor(l->x))
    return "the input is not dequantized from a per-tensor quantized value";
  if (!l->w)
    return "the weight is not dequantized";
  const quill_attr *tb = quill_op_attr(g, "trans_b");
  bool trans = tb && (quill_attr_kind_of(tb) == QUILL_ATTR_BOOL
                          ? quill_attr_bool_value(tb)
                          : quill_attr_kind_of(tb) == QUILL_ATTR_INT &&
                                quill_attr_int_value(tb) != 0);
  if (trans) {
    const quill_attr *wc = quill_value_constant(l->w);
    if (!wc)
      return "trans_b with a weight that is not a constant";
    if (!(l->w_attr = transpose_weight(ctx, wc)))
      return "the weight cannot be transposed (per-axis along axis 1?)";
  }
  if (quill_op_num_operands(g) > 2) {
    quill_type *ct = quill_value_type(quill_op_operand(g, 2));
    if (quill_type_rank(ct) == 2 && quill_type_dim(ct, 0) != 1)
      return "C varies along M";
    l->bias = quill_op_operand(g, 2);
  }
  return NULL;
}

/* matmul(DQ a, DQ b) -> l; NULL reason on success. */
static const char *match_matmul_operands(quill_op *m, linear *l) {
  memset(l, 0, sizeof *l);
  l->opc = QUILL_OP_QMATMUL;
  l->fop = l->act = m;
  l->loc = quill_op_loc(m);
  l->x = quill_fqdq_dq_source(quill_op_operand(m, 0));
  l->w = quill_fqdq_dq_source(quill_op_operand(m, 1));
  if (!l->x || !quill_fqdq_per_tensor(l->x) || !l->w)
    return "the operands are not dequantized (a per tensor)";
  if (quill_type_rank(quill_value_type(l->w)) < 2)
    return "b is 1-D";
  return NULL;
}

static int32_t last_axis(const quill_value *v) {
  return (int32_t)quill_type_rank(quill_value_type(v)) - 1;
}

static const bool conv_ops[QUILL_OP_COUNT] = {[QUILL_OP_CONV2D] = true};
static const bool gemm_ops[QUILL_OP_COUNT] = {[QUILL_OP_GEMM] = true};
static const bool matmul_ops[QUILL_OP_COUNT] = {[QUILL_OP_MATMUL] = true,
                                                [QUILL_OP_ADD] = true};

static quill_match_result match_conv(const quill_pattern *p,
                                     quill_rewriter *rw, quill_op *q) {
  quill_op *c = producer(state(p), q, conv_ops);
  if (!c)
    return no_producer(rw, q, conv_ops);
  if (!quill_fqdq_per_tensor(quill_op_result(q, 0)))
    return quill_rewriter_fail(rw, q, "the result is not quantized per "
                                      "tensor");
  linear l;
  const char *why = match_conv_operands(c, &l);
  if (why)
    return quill_rewriter_fail(rw, q, "%s", why);
  return emit_linear(p, rw, q, q, &l, 0, 1);
}

static quill_match_result match_gemm(const quill_pattern *p,
                                     quill_rewriter *rw, quill_op *q) {
  quill_op *g = producer(state(p), q, gemm_ops);
  if (!g)
    return no_producer(rw, q, gemm_ops);
  if (!quill_fqdq_per_tensor(quill_op_result(q, 0)))
    return quill_rewriter_fail(rw, q, "the result is not quantized per "
                                      "tensor");
  linear l;
  const char *why = match_gemm_operands(quill_rewriter_context(rw), g, &l);
  if (why)
    return quill_rewriter_fail(rw, q, "%s", why);
  return emit_linear(p, rw, q, q, &l, 1, 1);
}

/* Q(matmul(DQ a, DQ b)) or Q(add(matmul(DQ a, DQ b), bias)). */
static quill_match_result match_matmul(const quill_pattern *p,
                                       quill_rewriter *rw, quill_op *q) {
  quill_op *op = producer(state(p), q, matmul_ops);
  if (!op)
    return no_producer(rw, q, matmul_ops);
  if (!quill_fqdq_per_tensor(quill_op_result(q, 0)))
    return quill_rewriter_fail(rw, q, "the result is not quantized per "
                                      "tensor");
  quill_op *m = op;
  const quill_value *bias = NULL;
  if (quill_op_opcode(op) == QUILL_OP_ADD) {
    unsigned mi = 2;
    for (unsigned i = 0; i < 2 && mi == 2; i++) {
      quill_op *d = quill_value_def(quill_op_operand(op, i));
      if (d && quill_op_opcode(d) == QUILL_OP_MATMUL &&
          quill_fqdq_only_use(quill_op_operand(op, i), op))
        mi = i;
    }
    if (mi == 2)
      return quill_rewriter_fail(rw, q, "the add does not take a matmul used "
                                        "only there");
    m = quill_value_def(quill_op_operand(op, mi));
    bias = quill_op_operand(op, 1 - mi);
    if (quill_op_attr(m, "activation"))
      return quill_rewriter_fail(rw, q, "the matmul has a fused activation "
                                        "before the add");
    quill_type *bt = quill_value_type(bias);
    for (unsigned d = 0; d + 1 < quill_type_rank(bt); d++)
      if (quill_type_dim(bt, d) != 1)
        return quill_rewriter_fail(rw, q, "the added bias varies along more "
                                          "than the last axis");
    if (quill_value_type(quill_op_result(op, 0)) !=
        quill_value_type(quill_op_result(m, 0)))
      return quill_rewriter_fail(rw, q, "the add broadcasts the matmul "
                                        "result");
  }
  linear l;
  const char *why = match_matmul_operands(m, &l);
  if (why)
    return quill_rewriter_fail(rw, q, "%s", why);
  l.bias = bias;
  l.act = op;
  l.fop = m;
  int32_t ya = last_axis(quill_op_result(m, 0));
  return emit_linear(p, rw, q, q, &l, last_axis(l.w), ya);
}

/* conv2d / gemm / matmul with dequantized inputs and a float result that
 * is not quantized (PPQ's academic scheme): i32 accumulator, scast,
 * dequantize. */
static quill_match_result match_float_output(const quill_pattern *p,
                                             quill_rewriter *rw,
                                             quill_op *op) {
  if (stays_float(state(p), op))
    return quill_rewriter_fail(rw, op, "the op is kept float");
  quill_value *r = quill_op_result(op, 0);
  quill_op *user = quill_value_has_one_use(r)
                       ? quill_use_user(quill_value_first_use(r))
                       : NULL;
  if (user && quill_op_opcode(user) == QUILL_OP_QUANTIZE)
    return quill_rewriter_fail(rw, op, "the result is quantized (the "
                                       "quantize's patterns apply)");
  /* matmul -> add -> quantize is the matmul pattern's (bias add) */
  quill_value *ur = user && quill_op_opcode(user) == QUILL_OP_ADD
                        ? quill_op_result(user, 0)
                        : NULL;
  if (ur && quill_op_opcode(op) == QUILL_OP_MATMUL &&
      quill_value_has_one_use(ur) &&
      quill_op_opcode(quill_use_user(quill_value_first_use(ur))) ==
          QUILL_OP_QUANTIZE)
    return quill_rewriter_fail(rw, op, "the result is biased and quantized "
                                       "(the matmul pattern applies)");
  if (!quill_type_is_float(quill_type_elem(quill_value_type(r))))
    return quill_rewriter_fail(rw, op, "the result is not float");
  linear l;
  const char *why;
  quill_opcode o = quill_op_opcode(op);
  int32_t w_axis = 0, y_axis = 1;
  if (o == QUILL_OP_CONV2D)
    why = match_conv_operands(op, &l);
  else if (o == QUILL_OP_GEMM) {
    why = match_gemm_operands(quill_rewriter_context(rw), op, &l);
    w_axis = 1;
  } else {
    why = match_matmul_operands(op, &l);
    if (!why) {
      w_axis = last_axis(l.w);
      y_axis = last_axis(r);
    }
  }
  if (why)
    return quill_rewriter_fail(rw, op, "%s", why);
  return emit_linear(p, rw, op, NULL, &l, w_axis, y_axis);
}

/* ---- add, mul ------------------------------------------------------------ */

static const bool binary_ops[QUILL_OP_COUNT] = {[QUILL_OP_ADD] = true,
                                                [QUILL_OP_MUL] = true};

static quill_match_result match_binary(const quill_pattern *p,
                                       quill_rewriter *rw, quill_op *q) {
  fqdq *f = state(p);
  quill_context *ctx = quill_rewriter_context(rw);
  quill_op *op = producer(state(p), q, binary_ops);
  if (!op)
    return no_producer(rw, q, binary_ops);
  quill_value *a = quill_fqdq_dq_source(quill_op_operand(op, 0));
  quill_value *b = quill_fqdq_dq_source(quill_op_operand(op, 1));
  quill_value *y = quill_op_result(q, 0);
  if (!a || !b || !quill_fqdq_per_tensor(a) || !quill_fqdq_per_tensor(b) ||
      !quill_fqdq_per_tensor(y))
    return quill_rewriter_fail(rw, q, "the operands or the result are not "
                                      "quantized per tensor");
  quill_type *ae = quill_fqdq_qelem(a), *be = quill_fqdq_qelem(b);
  quill_type *ye = quill_fqdq_qelem(y);
  unsigned bits = quill_type_bit_width(quill_type_quant_storage(ae));
  unsigned bb = quill_type_bit_width(quill_type_quant_storage(be));
  bits = bb > bits ? bb : bits;
  if (bits > 16)
    return quill_rewriter_fail(rw, q, "operands wider than 16 bits");
  bool add = quill_op_opcode(op) == QUILL_OP_ADD;
  quill_rounding r = quill_fqdq_rounding(f, q);
  const char *why = NULL;
  quill_fqdq_attrs attrs;
  quill_fqdq_attrs_init(&attrs, ctx);
  bool ok = true;
  if (add) {
    quill_fqdq_attrs_set_str(&attrs, "rounding", quill_rounding_name(r));
    quill_qadd_params ap;
    int ls = quill_qadd_left_shift(bits);
    if (f->fixed && !quill_qadd_params_compute(scale0(ae), scale0(be),
                                               scale0(ye), ls, &ap)) {
      ok = false;
      why = "a qadd multiplier is out of the fixed-point range";
    } else if (f->fixed) {
      int64_t m[3], s[3];
      for (int i = 0; i < 3; i++) {
        m[i] = ap.multiplier[i];
        s[i] = ap.shift[i];
      }
      quill_fqdq_attrs_set(&attrs, "multiplier",
                           quill_attr_int_list(ctx, 3, m));
      quill_fqdq_attrs_set(&attrs, "shift", quill_attr_int_list(ctx, 3, s));
      quill_fqdq_attrs_set_int(&attrs, "left_shift", ls);
    }
  } else {
    /* TFLite's MUL computes s_a * s_b / s_y in f32 (tflite rounding);
     * the f64 quotient was one step off on 82 of 401408 int16 products of
     * EfficientNet-B0's first SiLU */
    double real = r == QUILL_ROUND_TFLITE
                      ? quill_mul_multiplier_f32(scale0(ae), scale0(be),
                                                 scale0(ye))
                      : quill_product_multiplier(scale0(ae), scale0(be),
                                                 scale0(ye));
    ok = quill_fqdq_requant_attrs(f, &attrs, r, &real, 1, &why);
  }
  ok = ok && quill_fqdq_act_attrs(&attrs, op, q, ye, &why);
  if (!ok || !quill_fqdq_attrs_ok(&attrs)) {
    quill_fqdq_attrs_free(&attrs);
    return why ? quill_rewriter_fail(rw, q, "%s", why) : oom(rw, q);
  }
  quill_value *ops[2] = {a, b};
  quill_value *res = emit(rw, add ? QUILL_OP_QADD : QUILL_OP_QMUL, 2, ops,
                          quill_value_type(y), &attrs, quill_op_loc(op));
  quill_fqdq_attrs_free(&attrs);
  if (!res)
    return oom(rw, q);
  return finish(p, rw, q, res, quill_op_opcode(op));
}

/* ---- ops that move or average stored values ------------------------------ */

static const bool passthrough_ops[QUILL_OP_COUNT] = {
    [QUILL_OP_MAXPOOL] = true,   [QUILL_OP_GLOBAL_MAXPOOL] = true,
    [QUILL_OP_RESHAPE] = true,   [QUILL_OP_FLATTEN] = true,
    [QUILL_OP_TRANSPOSE] = true, [QUILL_OP_SQUEEZE] = true,
    [QUILL_OP_UNSQUEEZE] = true, [QUILL_OP_SLICE] = true,
    [QUILL_OP_PAD] = true,       [QUILL_OP_GATHER] = true,
    [QUILL_OP_IDENTITY] = true,  [QUILL_OP_RESIZE] = true,
    [QUILL_OP_AVGPOOL] = true,   [QUILL_OP_GLOBAL_AVGPOOL] = true,
};

/* Q(op(DQ x)) -> op on x, then requantize if the types differ. */
static quill_match_result match_passthrough(const quill_pattern *p,
                                            quill_rewriter *rw, quill_op *q) {
  fqdq *f = state(p);
  quill_context *ctx = quill_rewriter_context(rw);
  quill_op *op = producer(state(p), q, passthrough_ops);
  if (!op)
    return no_producer(rw, q, passthrough_ops);
  quill_opcode o = quill_op_opcode(op);
  quill_value *x = quill_fqdq_dq_source(quill_op_operand(op, 0));
  quill_value *y = quill_op_result(q, 0);
  if (!x || !quill_fqdq_per_tensor(x))
    return quill_rewriter_fail(rw, q, "the operand is not dequantized from a "
                                      "per-tensor quantized value");
  if (o == QUILL_OP_PAD && quill_op_attr_float(op, "value", 0.0) != 0.0)
    return quill_rewriter_fail(rw, q, "pad with a nonzero value");
  if (o == QUILL_OP_RESIZE && strcmp(str_attr(op, "mode", "nearest"),
                                     "nearest") != 0)
    return quill_rewriter_fail(rw, q, "resize not in nearest mode");
  quill_type *xe = quill_fqdq_qelem(x), *ye = quill_fqdq_qelem(y);
  bool avg = o == QUILL_OP_AVGPOOL || o == QUILL_OP_GLOBAL_AVGPOOL;
  quill_rounding r = quill_fqdq_rounding(f, q);
  quill_fqdq_attrs attrs, rq;
  quill_fqdq_attrs_init(&attrs, ctx);
  quill_fqdq_attrs_init(&rq, ctx);
  quill_fqdq_attrs_copy(&attrs, op, NULL);
  if (avg)
    quill_fqdq_attrs_set_str(&attrs, "rounding", quill_rounding_name(r));
  const char *why = NULL;
  /* global_avgpool requantizes itself (one rounding): the mean's multiplier
   * is s_x / (n * s_y), n the plane size; under tflite rounding the one
   * TFLite's MEAN derives (quill_mean_multiplier) */
  bool mean = o == QUILL_OP_GLOBAL_AVGPOOL && xe != ye &&
              quill_fqdq_per_tensor(y);
  bool ok = true;
  if (mean) {
    quill_type *xt = quill_value_type(x);
    double n = 1;
    for (unsigned d = 2; d < quill_type_rank(xt); d++)
      n *= (double)quill_type_dim(xt, d);
    double real = quill_requant_multiplier(scale0(xe), scale0(ye));
    if (r == QUILL_ROUND_TFLITE && f->fixed) {
      int32_t m;
      int sh;
      ok = n >= 1 && quill_mean_multiplier(real, (int64_t)n, &m, &sh);
      if (ok) {
        quill_fqdq_attrs_set_str(&attrs, "rounding", quill_rounding_name(r));
        quill_fqdq_attrs_set(&attrs, "multiplier",
                             quill_attr_int_list(ctx, 1, &(int64_t){m}));
        quill_fqdq_attrs_set(&attrs, "shift",
                             quill_attr_int_list(ctx, 1, &(int64_t){sh}));
      } else
        why = "a requantization multiplier is out of the fixed-point range";
    } else {
      real /= n;
      ok = n >= 1 && quill_fqdq_requant_attrs(f, &attrs, r, &real, 1, &why);
    }
  } else if (xe != ye)
    ok = requant_attrs(f, &rq, r, xe, ye, &why);
  quill_type *ft = quill_value_type(quill_op_result(op, 0));
  quill_type *mt = mean ? quill_value_type(y)
                        : quill_type_with_elem(ctx, ft, xe);
  if (!ok || !mt || !quill_fqdq_attrs_ok(&attrs) || !quill_fqdq_attrs_ok(&rq)) {
    quill_fqdq_attrs_free(&attrs);
    quill_fqdq_attrs_free(&rq);
    return why ? quill_rewriter_fail(rw, q, "%s", why) : oom(rw, q);
  }
  unsigned n = quill_op_num_operands(op);
  quill_value *ops[2] = {x, n > 1 ? quill_op_operand(op, 1) : NULL};
  quill_value *res = emit(rw, o, n, ops, mt, &attrs, quill_op_loc(op));
  if (res && xe != ye && !mean)
    res = emit(rw, QUILL_OP_REQUANTIZE, 1, &res, quill_value_type(y), &rq,
               quill_op_loc(q));
  quill_fqdq_attrs_free(&attrs);
  quill_fqdq_attrs_free(&rq);
  if (!res)
    return oom(rw, q);
  return finish(p, rw, q, res, o);
}

/* Q(concat(DQ x1, ..)) -> concat(x1 or requantize(x1), ..). */
static const bool concat_ops[QUILL_OP_COUNT] = {[QUILL_OP_CONCAT] = true};

static quill_match_result match_concat(const quill_pattern *p,
                                       quill_rewriter *rw, quill_op *q) {
  fqdq *f = state(p);
  quill_context *ctx = quill_rewriter_context(rw);
  quill_op *op = producer(state(p), q, concat_ops);
  if (!op)
    return no_producer(rw, q, concat_ops);
  quill_value *y = quill_op_result(q, 0);
  quill_type *ye = quill_fqdq_qelem(y);
  if (!quill_fqdq_per_tensor(y))
    return quill_rewriter_fail(rw, q, "the result is not quantized per "
                                      "tensor");
  unsigned n = quill_op_num_operands(op);
  for (unsigned i = 0; i < n; i++) {
    quill_value *x = quill_fqdq_dq_source(quill_op_operand(op, i));
    if (!x || !quill_fqdq_per_tensor(x))
      return quill_rewriter_fail(rw, q, "operand #%u is not dequantized from "
                                        "a per-tensor quantized value",
                                 i);
  }
  /* One requantization (attributes only, fixed point or float) serves
   * every operand of a given type; compute them all before committing. */
  quill_value **ops = quill_alloc(ctx, n * sizeof *ops);
  quill_fqdq_attrs *rq = quill_calloc(ctx, n, sizeof *rq);
  quill_fqdq_attrs attrs;
  quill_fqdq_attrs_init(&attrs, ctx);
  quill_fqdq_attrs_copy(&attrs, op, NULL);
  quill_rounding r = quill_fqdq_rounding(f, q);
  const char *why = NULL;
  bool ok = ops && rq;
  for (unsigned i = 0; ok && i < n; i++) {
    ops[i] = quill_fqdq_dq_source(quill_op_operand(op, i));
    quill_fqdq_attrs_init(&rq[i], ctx);
    quill_type *xe = quill_fqdq_qelem(ops[i]);
    ok = xe == ye || (requant_attrs(f, &rq[i], r, xe, ye, &why) &&
                      quill_fqdq_attrs_ok(&rq[i]));
  }
  ok = ok && quill_fqdq_attrs_ok(&attrs);
  quill_value *res = NULL;
  for (unsigned i = 0; ok && i < n; i++) {
    if (quill_fqdq_qelem(ops[i]) == ye)
      continue;
    quill_type *t = quill_type_with_elem(ctx, quill_value_type(ops[i]), ye);
    ops[i] = t ? emit(rw, QUILL_OP_REQUANTIZE, 1, &ops[i], t, &rq[i],
                      quill_op_loc(op))
               : NULL;
    ok = ops[i] != NULL;
  }
  if (ok)
    res = emit(rw, QUILL_OP_CONCAT, n, ops, quill_value_type(y), &attrs,
               quill_op_loc(op));
  for (unsigned i = 0; rq && i < n; i++)
    quill_fqdq_attrs_free(&rq[i]);
  quill_fqdq_attrs_free(&attrs);
  if (ops)
    quill_free(ctx, ops, n * sizeof *ops);
  if (rq)
    quill_free(ctx, rq, n * sizeof *rq);
  if (!res)
    return why ? quill_rewriter_fail(rw, q, "%s", why) : oom(rw, q);
  return finish(p, rw, q, res, QUILL_OP_CONCAT);
}

/* Q(DQ x) -> requantize x, or x itself when the types are equal. */
static quill_match_result match_requantize(const quill_pattern *p,
                                           quill_rewriter *rw, quill_op *q) {
  fqdq *f = state(p);
  quill_value *x = quill_fqdq_dq_source(quill_op_operand(q, 0));
  quill_value *y = quill_op_result(q, 0);
  if (!x)
    return QUILL_MATCH_FAILURE; /* not this pattern's case: no log */
  if (quill_value_type(x) == quill_value_type(y)) {
    quill_rewriter_replace_op(rw, q, &x);
    state(p)->fused[QUILL_OP_QUANTIZE]++;
    return QUILL_MATCH_SUCCESS;
  }
  /* TFLite's QUANTIZE requantizes int16 -> int8 but not int8 -> int16
   * (quantize.cc, 2.14): with its numerics the mixed-precision boundary
   * stays DEQUANTIZE + QUANTIZE through float, which TFLite runs */
  if (quill_fqdq_rounding(f, q) == QUILL_ROUND_TFLITE &&
      quill_type_bit_width(quill_fqdq_qelem(x)) == 8 &&
      quill_type_bit_width(quill_fqdq_qelem(y)) == 16)
    return quill_rewriter_fail(rw, q, "TFLite has no int8 -> int16 "
                                      "requantization: kept as dequantize "
                                      "+ quantize");
  quill_fqdq_attrs rq;
  quill_fqdq_attrs_init(&rq, quill_rewriter_context(rw));
  const char *why = NULL;
  bool ok = requant_attrs(f, &rq, quill_fqdq_rounding(f, q),
                          quill_fqdq_qelem(x), quill_fqdq_qelem(y), &why);
  quill_value *res = ok && quill_fqdq_attrs_ok(&rq)
                         ? emit(rw, QUILL_OP_REQUANTIZE, 1, &x,
                                quill_value_type(y), &rq, quill_op_loc(q))
                         : NULL;
  quill_fqdq_attrs_free(&rq);
  if (!res)
    return why ? quill_rewriter_fail(rw, q, "%s", why) : oom(rw, q);
  return finish(p, rw, q, res, QUILL_OP_QUANTIZE);
}

/* ---- the set ------------------------------------------------------------- */

quill_status quill_fqdq_populate(quill_pattern_set *set, quill_fqdq *f) {
  static const struct {
    const char *name;
    int root;
    quill_match_result (*fn)(const quill_pattern *, quill_rewriter *,
                             quill_op *);
  } rows[] = {
      {"qdq-conv2d", QUILL_OP_QUANTIZE, match_conv},
      {"qdq-gemm", QUILL_OP_QUANTIZE, match_gemm},
      {"qdq-matmul", QUILL_OP_QUANTIZE, match_matmul},
      {"qdq-add-mul", QUILL_OP_QUANTIZE, match_binary},
      {"qdq-lut", QUILL_OP_QUANTIZE, quill_fqdq_match_lut},
      {"qdq-layer-norm", QUILL_OP_QUANTIZE, quill_fqdq_match_layer_norm},
      {"qdq-lstm", QUILL_OP_QUANTIZE, quill_fqdq_match_lstm},
      {"qdq-softmax", QUILL_OP_QUANTIZE, quill_fqdq_match_softmax},
      {"qdq-passthrough", QUILL_OP_QUANTIZE, match_passthrough},
      {"qdq-concat", QUILL_OP_QUANTIZE, match_concat},
      {"qdq-requantize", QUILL_OP_QUANTIZE, match_requantize},
      {"float-output-conv2d", QUILL_OP_CONV2D, match_float_output},
      {"float-output-gemm", QUILL_OP_GEMM, match_float_output},
      {"float-output-matmul", QUILL_OP_MATMUL, match_float_output},
  };
  enum { N = sizeof rows / sizeof rows[0] };
  _Static_assert(N <= QUILL_FQDQ_MAX_PATTERNS, "grow quill_fqdq.patterns");
  /* The patterns live in the state (with the data pointer back to it), so
   * they outlive the set. */
  for (unsigned i = 0; i < N; i++) {
    f->patterns[i] = (quill_pattern){rows[i].name, rows[i].root, 1,
                                     rows[i].fn, f};
    quill_status st = quill_pattern_set_add(set, &f->patterns[i]);
    if (st)
      return st;
  }
  return QUILL_OK;
}
