/*
 * lower_float.c - float fallbacks for ops a model keeps in float: unary
 * math, binary arithmetic with broadcasting, clip, cast, batch_norm,
 * softmax and conv2d, all on f32 tensors.
 *
 * Elementwise ops go through cg_map and mirror the reference's scalar
 * functions (kernels_eltwise.c) operation by operation: separate fmul and
 * fadd (LLVM never contracts them: no fast-math flags); exp, tanh and erf
 * (sigmoid, gelu) are the numerics contract's polynomials (ir/fmath.h,
 * emitted inline by fmath_ir.c: no calls, vectorized), log and pow call
 * libm (the functions the reference calls), so they give the reference's
 * bits. batch_norm folds its constant parameters exactly
 * as the reference does (y = x * s + b with s, b rounded from double).
 * softmax computes in f32 in the reference's order (f32_softmax_row),
 * log_softmax in double like the reference; a softmax reading a fused
 * 8-bit dequantize (fuse_qdq.c) takes exp(x - max) from a table: both are
 * dequantized bytes, so every value it can take is computed at compile
 * time (exp_table). The float conv sums its
 * products in another order than the reference's GEMM, so it matches only
 * to rounding (relative error about K * 2^-24; tests use 1e-4).
 */
#include <math.h>
#include <string.h>

#include "ir/fmath.h"
#include "targets/llvm/conv.h"
#include "targets/reference/ref.h"

static bool f32_value(const quill_value *v) {
  quill_type *e = quill_type_elem(quill_value_type(v));
  return quill_type_kind_of(e) == QUILL_TYPE_F32;
}

CG_SUPPORTS(cg_supports_float) {
  for (unsigned i = 0; i < quill_op_num_operands(op); i++)
    if (!f32_value(quill_op_operand(op, i)))
      return "non-f32 operands";
  for (unsigned i = 0; i < quill_op_num_results(op); i++)
    if (!f32_value(quill_op_result(op, i)))
      return "non-f32 results";
  if (quill_op_opcode(op) == QUILL_OP_BATCH_NORM)
    for (unsigned i = 1; i < 5; i++)
      if (!quill_value_constant(quill_op_operand(op, i)))
        return "batch_norm with non-constant parameters";
  return NULL;
}

CG_SUPPORTS(cg_supports_unary) { return cg_supports_float(op); }
CG_SUPPORTS(cg_supports_binary) { return cg_supports_float(op); }

CG_SUPPORTS(cg_supports_cast) {
  for (unsigned i = 0; i < 2; i++) {
    const quill_value *v = i ? quill_op_result(op, 0) : quill_op_operand(op, 0);
    quill_type *e = quill_type_elem(quill_value_type(v));
    quill_type_kind k = quill_type_kind_of(e);
    if (quill_type_is_quant(e) || k == QUILL_TYPE_F16 || k == QUILL_TYPE_BF16 ||
        k == QUILL_TYPE_U64 || k == QUILL_TYPE_I4 || k == QUILL_TYPE_U4)
      return "cast of quantized, f16, bf16, u64 or 4-bit tensors";
  }
  return NULL;
}

/* ---- helpers ----------------------------------------------------------------- */

/* float f(float) from libm */
static LLVMValueRef libm1(cg *c, const char *name, LLVMValueRef x) {
  LLVMTypeRef t = LLVMTypeOf(x);
  c->libm = true;
  return cg_call_extern(c, name, LLVMFunctionType(t, &t, 1, 0), &x, 1);
}

static LLVMValueRef libm2(cg *c, const char *name, LLVMValueRef a,
                          LLVMValueRef b) {
  LLVMTypeRef t[2] = {LLVMTypeOf(a), LLVMTypeOf(a)};
  c->libm = true;
  return cg_call_extern(c, name, LLVMFunctionType(t[0], t, 2, 0),
                        (LLVMValueRef[]){a, b}, 2);
}

static LLVMValueRef fsel_lt(cg *c, LLVMValueRef a, LLVMValueRef b,
                            LLVMValueRef t, LLVMValueRef f) {
  return LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, LLVMRealOLT, a, b, ""), t, f,
                         "");
}

LLVMValueRef cg_float_activation(cg *c, const quill_op *op, LLVMValueRef v) {
  const quill_attr *a = quill_op_attr(op, "activation");
  if (!a || quill_attr_kind_of(a) != QUILL_ATTR_STRING)
    return v;
  const char *act = quill_attr_string_value(a, NULL);
  LLVMValueRef zero = LLVMConstReal(LLVMTypeOf(v), 0.0);
  if (!strcmp(act, "relu")) /* v > 0 ? v : 0 */
    return LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, LLVMRealOGT, v, zero, ""),
                           v, zero, "");
  float lo = (float)quill_op_attr_number(op, "activation_min", -INFINITY);
  float hi = (float)quill_op_attr_number(op, "activation_max", INFINITY);
  LLVMValueRef l = cg_f32c(c, lo), h = cg_f32c(c, hi);
  v = fsel_lt(c, v, l, l, v);
  return LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, LLVMRealOGT, v, h, ""), h, v,
                         "");
}

/* ---- unary ---------------------------------------------------------------------- */

typedef struct uctx {
  quill_opcode opc;
  float alpha, beta;
  bool tanh_approx;
} uctx;

static LLVMValueRef hsig(cg *c, const uctx *u, LLVMValueRef x) {
  LLVMValueRef v = LLVMBuildFAdd(
      c->b, LLVMBuildFMul(c->b, cg_f32c(c, u->alpha), x, ""),
      cg_f32c(c, u->beta), "");
  LLVMTypeRef t = c->t_f32;
  v = cg_intrinsic(c, "llvm.minnum", &t, 1,
                   (LLVMValueRef[]){cg_f32c(c, 1.0), v}, 2);
  return cg_intrinsic(c, "llvm.maxnum", &t, 1,
                      (LLVMValueRef[]){cg_f32c(c, 0.0), v}, 2);
}

static LLVMValueRef unary_fn(cg *c, void *ud, LLVMValueRef *in) {
  const uctx *u = ud;
  LLVMValueRef x = in[0];
  LLVMTypeRef t = c->t_f32;
  LLVMValueRef zero = cg_f32c(c, 0.0), one = cg_f32c(c, 1.0);
  switch (u->opc) {
  case QUILL_OP_RELU:
    return LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, LLVMRealOGT, x, zero, ""),
                           x, zero, "");
  case QUILL_OP_LEAKY_RELU:
    return fsel_lt(c, x, zero,
                   LLVMBuildFMul(c->b, cg_f32c(c, u->alpha), x, ""), x);
  case QUILL_OP_SIGMOID:
    return LLVMBuildFDiv(
        c->b, one,
        LLVMBuildFAdd(c->b, one, cg_fexp(c, LLVMBuildFNeg(c->b, x, "")),
                      ""),
        "");
  case QUILL_OP_TANH:
    return cg_ftanh(c, x);
  case QUILL_OP_HARD_SIGMOID:
    return hsig(c, u, x);
  case QUILL_OP_HARD_SWISH:
    return LLVMBuildFMul(c->b, x, hsig(c, u, x), "");
  case QUILL_OP_GELU: {
    LLVMValueRef half_x = LLVMBuildFMul(c->b, cg_f32c(c, 0.5), x, "");
    LLVMValueRef inner;
    if (u->tanh_approx) {
      LLVMValueRef x3 = LLVMBuildFMul(
          c->b, LLVMBuildFMul(c->b, LLVMBuildFMul(c->b, cg_f32c(c, 0.044715f),
                                                  x, ""),
                              x, ""),
          x, "");
      inner = cg_ftanh(c,
                    LLVMBuildFMul(c->b, cg_f32c(c, 0.7978845608028654f),
                                  LLVMBuildFAdd(c->b, x, x3, ""), ""));
    } else {
      inner = cg_ferf(c,
                    LLVMBuildFMul(c->b, x, cg_f32c(c, 0.70710678118654752f),
                                  ""));
    }
    return LLVMBuildFMul(c->b, half_x, LLVMBuildFAdd(c->b, one, inner, ""), "");
  }
  case QUILL_OP_ERF:
    return cg_ferf(c, x);
  case QUILL_OP_SQRT:
    return cg_intrinsic(c, "llvm.sqrt", &t, 1, &x, 1);
  case QUILL_OP_EXP:
    return cg_fexp(c, x);
  case QUILL_OP_LOG:
    return libm1(c, "logf", x);
  case QUILL_OP_NEG:
    return LLVMBuildFNeg(c->b, x, "");
  case QUILL_OP_ABS:
    return cg_intrinsic(c, "llvm.fabs", &t, 1, &x, 1);
  case QUILL_OP_RECIPROCAL:
    return LLVMBuildFDiv(c->b, one, x, "");
  case QUILL_OP_FLOOR:
    return cg_intrinsic(c, "llvm.floor", &t, 1, &x, 1);
  case QUILL_OP_CEIL:
    return cg_intrinsic(c, "llvm.ceil", &t, 1, &x, 1);
  default:
    c->status = QUILL_ERR_INTERNAL;
    return x;
  }
}

CG_LOWER(cg_lower_unary) {
  static const double alpha[QUILL_OP_COUNT] = {
      [QUILL_OP_LEAKY_RELU] = 0.01, [QUILL_OP_HARD_SIGMOID] = 0.2,
      [QUILL_OP_HARD_SWISH] = 1.0 / 6.0};
  static const double beta[QUILL_OP_COUNT] = {[QUILL_OP_HARD_SIGMOID] = 0.5,
                                              [QUILL_OP_HARD_SWISH] = 0.5};
  uctx u;
  u.opc = quill_op_opcode(op);
  u.alpha = (float)quill_op_attr_number(op, "alpha", alpha[u.opc]);
  u.beta = (float)quill_op_attr_number(op, "beta", beta[u.opc]);
  const quill_attr *ap = quill_op_attr(op, "approximate");
  u.tanh_approx = ap && quill_attr_kind_of(ap) == QUILL_ATTR_STRING &&
                  !strcmp(quill_attr_string_value(ap, NULL), "tanh");
  cg_view x = cg_value_view(c, quill_op_operand(op, 0));
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  cg_map(c, quill_op_name(op), &y, 1, &x, unary_fn, &u);
  return QUILL_OK;
}

/* ---- clip ---------------------------------------------------------------------- */

typedef struct clipctx {
  float lo, hi;
} clipctx;

static LLVMValueRef clip_fn(cg *c, void *ud, LLVMValueRef *in) {
  const clipctx *k = ud;
  LLVMValueRef l = cg_f32c(c, k->lo), h = cg_f32c(c, k->hi), v = in[0];
  v = fsel_lt(c, v, l, l, v);
  return LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, LLVMRealOGT, v, h, ""), h, v,
                         "");
}

static bool clip_bound(const quill_op *op, unsigned idx, const char *name,
                       double dflt, double *out) {
  if (quill_op_num_operands(op) > idx) {
    const quill_attr *a = quill_value_constant(quill_op_operand(op, idx));
    if (!a || quill_type_num_elements(quill_attr_dense_type(a)) != 1)
      return false;
    *out = quill_attr_dense_get_f64(a, 0);
    return true;
  }
  *out = quill_op_attr_number(op, name, dflt);
  return true;
}

CG_LOWER(cg_lower_clip) {
  double lo, hi;
  if (!clip_bound(op, 1, "min", -INFINITY, &lo) ||
      !clip_bound(op, 2, "max", INFINITY, &hi))
    return cg_op_error(c, "clip bounds must be constant one-element tensors");
  clipctx k = {(float)lo, (float)hi};
  cg_view x = cg_value_view(c, quill_op_operand(op, 0));
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  cg_map(c, "clip", &y, 1, &x, clip_fn, &k);
  return QUILL_OK;
}

/* ---- cast ------------------------------------------------------------------------- */

typedef struct castctx {
  const quill_type *xe, *ye;
} castctx;

static LLVMValueRef cast_fn(cg *c, void *ud, LLVMValueRef *in) {
  const castctx *k = ud;
  bool xf = quill_type_is_float(k->xe), yf = quill_type_is_float(k->ye);
  LLVMTypeRef yt = cg_elem_type(c, k->ye);
  quill_type_kind yk = quill_type_kind_of(k->ye);
  if (xf && yf)
    return LLVMBuildFPCast(c->b, in[0], yt, "");
  if (!xf && !yf) /* wrap (bool: nonzero) */
    return cg_widen_int(c, k->xe, in[0], c->t_i64);
  if (!xf) { /* int -> float, rounding */
    LLVMValueRef v = cg_widen_int(c, k->xe, in[0], c->t_i64);
    return quill_type_kind_of(k->xe) == QUILL_TYPE_U32
               ? LLVMBuildUIToFP(c->b, v, yt, "")
               : LLVMBuildSIToFP(c->b, v, yt, "");
  }
  /* float -> int: truncate toward zero, saturate, NaN -> 0; bool: != 0 */
  LLVMValueRef x = in[0];
  LLVMValueRef d = LLVMTypeOf(x) == c->t_f64
                       ? x
                       : LLVMBuildFPExt(c->b, x, c->t_f64, "");
  if (yk == QUILL_TYPE_BOOL)
    return LLVMBuildZExt(c->b,
                         LLVMBuildFCmp(c->b, LLVMRealUNE, d, cg_f64c(c, 0.0), ""),
                         c->t_i64, "");
  int64_t lo = quill_type_int_min(k->ye), hi = quill_type_int_max(k->ye);
  LLVMValueRef lt = LLVMBuildFCmp(c->b, LLVMRealOLE, d, cg_f64c(c, (double)lo), "");
  LLVMValueRef gt = LLVMBuildFCmp(c->b, LLVMRealOGE, d, cg_f64c(c, (double)hi), "");
  LLVMValueRef nan = LLVMBuildFCmp(c->b, LLVMRealUNO, d, d, "");
  LLVMValueRef safe = LLVMBuildSelect(
      c->b, LLVMBuildOr(c->b, LLVMBuildOr(c->b, lt, gt, ""), nan, ""),
      cg_f64c(c, 0.0), d, "");
  LLVMValueRef v = LLVMBuildFPToSI(c->b, safe, c->t_i64, "");
  v = LLVMBuildSelect(c->b, lt, cg_i64c(c, lo), v, "");
  return LLVMBuildSelect(c->b, gt, cg_i64c(c, hi), v, "");
}

CG_LOWER(cg_lower_cast) {
  cg_view x = cg_value_view(c, quill_op_operand(op, 0));
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  castctx k = {x.elem, y.elem};
  cg_map(c, "cast", &y, 1, &x, cast_fn, &k);
  return QUILL_OK;
}

/* ---- binary --------------------------------------------------------------------- */

typedef struct bctx {
  quill_opcode opc;
  const quill_op *op;
} bctx;

static LLVMValueRef binary_fn(cg *c, void *ud, LLVMValueRef *in) {
  const bctx *k = ud;
  LLVMValueRef a = in[0], b = in[1], r;
  switch (k->opc) {
  case QUILL_OP_ADD: r = LLVMBuildFAdd(c->b, a, b, ""); break;
  case QUILL_OP_SUB: r = LLVMBuildFSub(c->b, a, b, ""); break;
  case QUILL_OP_MUL: r = LLVMBuildFMul(c->b, a, b, ""); break;
  case QUILL_OP_DIV: r = LLVMBuildFDiv(c->b, a, b, ""); break;
  case QUILL_OP_POW: r = libm2(c, "powf", a, b); break;
  case QUILL_OP_MAX:
  case QUILL_OP_MIN: { /* NaN-propagating, as numpy.maximum */
    LLVMTypeRef t = c->t_f32;
    r = cg_intrinsic(c, k->opc == QUILL_OP_MAX ? "llvm.maximum" : "llvm.minimum",
                     &t, 1, (LLVMValueRef[]){a, b}, 2);
    /* llvm.maximum orders -0 < +0; the reference's a > b ? a : b keeps b on
     * ties: equal values differ only in the sign of zero. */
    LLVMValueRef eq = LLVMBuildFCmp(c->b, LLVMRealOEQ, a, b, "");
    r = LLVMBuildSelect(c->b, eq, b, r, "");
    break;
  }
  case QUILL_OP_PRELU:
    r = fsel_lt(c, a, cg_f32c(c, 0.0), LLVMBuildFMul(c->b, a, b, ""), a);
    break;
  default:
    c->status = QUILL_ERR_INTERNAL;
    return a;
  }
  return cg_float_activation(c, k->op, r);
}

CG_LOWER(cg_lower_binary) {
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  cg_view ins[2];
  for (unsigned i = 0; i < 2; i++) {
    cg_view v = cg_value_view(c, quill_op_operand(op, i));
    ins[i] = cg_view_broadcast(&v, y.rank, y.dims);
  }
  bctx k = {quill_op_opcode(op), op};
  cg_map(c, quill_op_name(op), &y, 2, ins, binary_fn, &k);
  return QUILL_OK;
}

/* ---- batch_norm ----------------------------------------------------------------- */

static LLVMValueRef bn_fn(cg *c, void *ud, LLVMValueRef *in) {
  (void)ud;
  return LLVMBuildFAdd(c->b, LLVMBuildFMul(c->b, in[0], in[1], ""), in[2], "");
}

CG_LOWER(cg_lower_batch_norm) {
  cg_view x = cg_value_view(c, quill_op_operand(op, 0));
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  if (x.rank < 2)
    return cg_op_error(c, "operand must be [N, C, ...]");
  int64_t C = x.dims[1];
  const quill_attr *p[5];
  for (unsigned i = 1; i < 5; i++) {
    p[i] = quill_value_constant(quill_op_operand(op, i));
    if (quill_type_num_elements(quill_attr_dense_type(p[i])) != C)
      return cg_op_error(c, "scale, bias, mean and var must have C elements");
  }
  double eps = quill_op_attr_number(op, "epsilon", 1e-5);
  float *sb = quill_alloc(c->ctx, (size_t)(C > 0 ? 2 * C : 1) * sizeof *sb);
  if (!sb)
    return QUILL_ERR_NOMEM;
  for (int64_t ch = 0; ch < C; ch++) {
    double s = quill_attr_dense_get_f64(p[1], (size_t)ch) /
               sqrt(quill_attr_dense_get_f64(p[4], (size_t)ch) + eps);
    double b = quill_attr_dense_get_f64(p[2], (size_t)ch) -
               quill_attr_dense_get_f64(p[3], (size_t)ch) * s;
    sb[ch] = (float)s;
    sb[C + ch] = (float)b;
  }
  cg_view ins[3] = {x, x, x};
  for (unsigned i = 1; i < 3; i++) {
    memset(&ins[i], 0, sizeof ins[i]);
    ins[i].slot = -1;
    ins[i].global = cg_const_global(c, "bn", sb + (i - 1) * C,
                                    (size_t)C * sizeof *sb);
    ins[i].elem = quill_type_scalar(c->ctx, QUILL_TYPE_F32);
    ins[i].rank = y.rank;
    memcpy(ins[i].dims, y.dims, sizeof y.dims);
    ins[i].strides[1] = 1;
  }
  quill_free(c->ctx, sb, (size_t)(C > 0 ? 2 * C : 1) * sizeof *sb);
  cg_map(c, "batch_norm", &y, 3, ins, bn_fn, NULL);
  return QUILL_OK;
}

/* ---- softmax ------------------------------------------------------------------------ */

/* One step of the f32 softmax's second pass: e = exp(x[k] - m) (the
 * numerics contract's exp; with an exp table `row`, row[x[k] - storage
 * min], the same value) stored to y[k] (or erow[k] when the result is
 * quantized) and added to lane l's partial sum. */
static void sm_step(cg *c, const cg_view *x, const cg_view *y, unsigned ax,
                    LLVMValueRef xb, LLVMValueRef yb, LLVMValueRef ox,
                    LLVMValueRef oy, LLVMValueRef m, LLVMValueRef part,
                    LLVMValueRef erow, LLVMValueRef row, LLVMValueRef k,
                    LLVMValueRef l) {
  LLVMValueRef xo = LLVMBuildAdd(
      c->b, ox, LLVMBuildMul(c->b, k, cg_i64c(c, x->strides[ax]), ""), "");
  LLVMValueRef e;
  if (row) {
    LLVMTypeRef st = cg_elem_type(c, x->elem);
    LLVMValueRef q = cg_widen_int(
        c, x->elem, cg_load(c, st, cg_gep(c, st, xb, xo), 1), c->t_i64);
    q = LLVMBuildSub(
        c->b, q,
        cg_i64c(c, quill_type_int_min(quill_type_quant_storage(x->elem))), "");
    e = cg_load(c, c->t_f32, cg_gep(c, c->t_f32, row, q), 4);
  } else {
    LLVMValueRef v = cg_load_f32_dq(c, x, xb, xo);
    e = cg_fexp(c, LLVMBuildFSub(c->b, v, m, ""));
  }
  if (erow) {
    cg_store(c, e, cg_gep(c, c->t_f32, erow, k), 4);
  } else {
    LLVMValueRef yo = LLVMBuildAdd(
        c->b, oy, LLVMBuildMul(c->b, k, cg_i64c(c, y->strides[ax]), ""), "");
    cg_store(c, e, cg_gep(c, c->t_f32, yb, yo), 4);
  }
  LLVMValueRef pp = cg_gep(c, c->t_f32, part, l);
  cg_store(c, LLVMBuildFAdd(c->b, cg_load(c, c->t_f32, pp, 4), e, ""), pp, 4);
}

/* For a softmax whose input is a fused dequantize of 8-bit values (scale
 * > 0, f32), exp(x - max) for every pair (max, x) of those values:
 * tab[(qmax - min) * 256 + (q - min)] = quill_fexp(d[q] - d[qmax]) with d
 * the dequantize op's own results (the reference kernel, run at compile
 * time on all 256 bytes), f32 arithmetic as the loop's. NULL otherwise. */
static LLVMValueRef exp_table(cg *c, const quill_op *op, const cg_view *x) {
  const quill_op *dq = quill_value_def(quill_op_operand(op, 0));
  if (!quill_type_is_quant(x->elem) || !dq ||
      quill_op_opcode(dq) != QUILL_OP_DEQUANTIZE ||
      quill_type_quant_axis_of(x->elem) >= 0 ||
      quill_type_bit_width(quill_type_quant_storage(x->elem)) != 8 ||
      !(quill_type_quant_scales(x->elem)[0] > 0) ||
      quill_type_kind_of(quill_type_elem(quill_value_type(
          quill_op_result(dq, 0)))) != QUILL_TYPE_F32)
    return NULL;
  quill_context *ctx = c->ctx;
  int64_t n = 256, lo = quill_type_int_min(quill_type_quant_storage(x->elem));
  quill_type *it = quill_type_tensor(ctx, (quill_type *)x->elem, 1, &n);
  quill_type *ot = quill_type_tensor(
      ctx, quill_type_scalar(ctx, QUILL_TYPE_F32), 1, &n);
  quill_tensor in, out;
  memset(&out, 0, sizeof out);
  if (!it || !ot || quill_tensor_alloc(ctx, it, &in))
    return NULL;
  for (int64_t i = 0; i < n; i++)
    quill_tensor_set_i64(&in, (size_t)i, lo + i);
  float *tab = NULL;
  if (!quill_tensor_alloc(ctx, ot, &out) &&
      !quill_ref_eval_op(ctx, dq, &in, &out) &&
      (tab = quill_alloc(ctx, 256 * 256 * sizeof *tab))) {
    const float *d = out.data;
    for (int qm = 0; qm < 256; qm++)
      for (int q = 0; q < 256; q++)
        tab[qm * 256 + q] = quill_fexp(d[q] - d[qm]);
  }
  quill_tensor_free(ctx, &in);
  quill_tensor_free(ctx, &out);
  if (!tab)
    return NULL; /* the loop computes exp itself */
  LLVMValueRef g = cg_const_global(c, "smexp", tab, 256 * 256 * sizeof *tab);
  quill_free(ctx, tab, 256 * 256 * sizeof *tab);
  return g;
}

/* The f32 softmax of one row, kernels_norm.c's order exactly: m = max
 * (v > m ? v : m in order), e[k] = exp(x[k] - m) written to y with 16
 * partial sums (lane k % 16, in order: the 16-lane loop vectorizes), the
 * partials summed as a tree (lane l += lane l + w, w = 8, 4, 2, 1), then
 * y[k] = e[k] / sum. Two passes over x, two over y (in cache). */
static void f32_softmax_row(cg *c, const cg_view *x, const cg_view *y,
                            unsigned ax, int64_t len, LLVMValueRef xb,
                            LLVMValueRef yb, LLVMValueRef ox, LLVMValueRef oy,
                            const cg_fused_out *fo, LLVMValueRef tab) {
  LLVMValueRef mxv = cg_var(c, c->t_f32, "max");
  /* a quantized result: the exponentials wait in a row on the stack */
  LLVMValueRef erow =
      fo->q ? cg_var(c, LLVMArrayType2(c->t_f32, (uint64_t)len), "erow")
            : NULL;
  LLVMValueRef part = cg_var(c, LLVMArrayType2(c->t_f32, 16), "part");
  cg_store(c, cg_f32c(c, -INFINITY), mxv, 4);
  cg_loop lk, ll;
  LLVMValueRef m, row = NULL;
  if (quill_type_is_quant(x->elem) &&
      quill_type_quant_scales(x->elem)[0] > 0) {
    /* a fused dequantize (fuse_qdq.c): (float)(q - zp) * s is monotone in
     * q for s > 0, so the max of the dequantized row is the dequantized
     * max of the integers (a vectorizable integer max) */
    LLVMTypeRef st = cg_elem_type(c, x->elem);
    LLVMValueRef mq = cg_var(c, c->t_i32, "qmax");
    cg_store(c, cg_i32c(c, INT32_MIN), mq, 4);
    cg_for(c, &lk, 0, len, 1);
    LLVMValueRef xo = LLVMBuildAdd(
        c->b, ox, LLVMBuildMul(c->b, lk.i, cg_i64c(c, x->strides[ax]), ""),
        "");
    LLVMValueRef q = cg_widen_int(
        c, x->elem, cg_load(c, st, cg_gep(c, st, xb, xo), 1), c->t_i32);
    cg_store(c, cg_max_s(c, cg_load(c, c->t_i32, mq, 4), q), mq, 4);
    cg_loop_end(c, &lk);
    LLVMValueRef qm = cg_load(c, c->t_i32, mq, 4);
    m = cg_dequantize_elem(c, x->elem, LLVMBuildTrunc(c->b, qm, st, ""));
    if (tab) /* the table's row of this maximum */
      row = cg_gep(
          c, c->t_f32, tab,
          LLVMBuildMul(
              c->b,
              LLVMBuildSub(c->b, LLVMBuildSExt(c->b, qm, c->t_i64, ""),
                           cg_i64c(c, quill_type_int_min(
                                          quill_type_quant_storage(x->elem))),
                           ""),
              cg_i64c(c, 256), ""));
  } else {
    cg_for(c, &lk, 0, len, 1);
    LLVMValueRef xo = LLVMBuildAdd(
        c->b, ox, LLVMBuildMul(c->b, lk.i, cg_i64c(c, x->strides[ax]), ""),
        "");
    LLVMValueRef v = cg_load_f32_dq(c, x, xb, xo);
    m = cg_load(c, c->t_f32, mxv, 4);
    cg_store(c, fsel_lt(c, m, v, v, m), mxv, 4);
    cg_loop_end(c, &lk);
    m = cg_load(c, c->t_f32, mxv, 4);
  }
  for (int l = 0; l < 16; l++)
    cg_store(c, cg_f32c(c, 0.0), cg_gep(c, c->t_f32, part, cg_i64c(c, l)), 4);
  int64_t nb = len / 16, tail = len % 16;
  cg_for(c, &lk, 0, nb, 1);
  cg_for(c, &ll, 0, 16, 1);
  sm_step(c, x, y, ax, xb, yb, ox, oy, m, part, erow, row,
          LLVMBuildAdd(c->b, LLVMBuildMul(c->b, lk.i, cg_i64c(c, 16), ""),
                       ll.i, ""),
          ll.i);
  cg_loop_end_vectorized(c, &ll, 16);
  cg_loop_end(c, &lk);
  if (tail) {
    cg_for(c, &ll, 0, tail, 1);
    sm_step(c, x, y, ax, xb, yb, ox, oy, m, part, erow, row,
            LLVMBuildAdd(c->b, cg_i64c(c, nb * 16), ll.i, ""), ll.i);
    cg_loop_end(c, &ll);
  }
  LLVMValueRef sum = cg_tree_sum(c, c->t_f32, part, 16);
  cg_for(c, &lk, 0, len, 1);
  LLVMValueRef yo = LLVMBuildAdd(
      c->b, oy, LLVMBuildMul(c->b, lk.i, cg_i64c(c, y->strides[ax]), ""), "");
  LLVMValueRef ep = erow ? cg_gep(c, c->t_f32, erow, lk.i)
                         : cg_gep(c, c->t_f32, yb, yo);
  cg_fused_store(c, fo, LLVMBuildFDiv(c->b, cg_load(c, c->t_f32, ep, 4), sum, ""),
                 yb, yo);
  cg_loop_end(c, &lk);
}

/* Per row along the axis: f32 softmax as f32_softmax_row; log_softmax in
 * double: max, sum of exp(x - max), x - max - log(sum). */
CG_LOWER(cg_lower_softmax) {
  if (cg_softmax_is_integer(op))
    return cg_lower_softmax_int(c, op);
  cg_view x = cg_value_view(c, quill_op_operand(op, 0));
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  cg_fused_out fo;
  quill_status fst = cg_fused_out_init(c, op, &fo);
  if (fst)
    return fst;
  if (fo.q)
    y = fo.view; /* store into the fused quantize's result (fuse_qdq.c) */
  unsigned r = x.rank, ax;
  quill_status ast = cg_op_axis(c, r, &ax);
  if (ast)
    return ast;
  bool logsm = quill_op_opcode(op) == QUILL_OP_LOG_SOFTMAX;
  int64_t len = x.dims[ax], rows = cg_row_count(&x, ax);
  if (rows * len == 0)
    return QUILL_OK;
  LLVMValueRef tab = logsm ? NULL : exp_table(c, op, &x);
  /* rows are enumerated over the other dims in logical order */
  cg_stage_begin(c, quill_op_name(op), rows);
  LLVMValueRef xb = cg_view_base(c, &x), yb = cg_view_base(c, &y);
  cg_loop lt, lk;
  cg_loop_begin(c, &lt, c->t0, c->t1, 1);
  LLVMValueRef ox, oy;
  cg_row_offsets(c, lt.i, &x, &y, ax, &ox, &oy);
  if (!logsm) {
    f32_softmax_row(c, &x, &y, ax, len, xb, yb, ox, oy, &fo, tab);
    cg_loop_end(c, &lt);
    cg_stage_end(c);
    return c->status;
  }
  LLVMValueRef mxv = cg_var(c, c->t_f64, "max"), sumv = cg_var(c, c->t_f64, "sum");
  cg_store(c, cg_f64c(c, -INFINITY), mxv, 8);
  cg_store(c, cg_f64c(c, 0.0), sumv, 8);
#define XAT(k)                                                                 \
  LLVMBuildFPExt(c->b,                                                         \
                 cg_load(c, c->t_f32,                                          \
                         cg_gep(c, c->t_f32, xb,                               \
                                LLVMBuildAdd(c->b, ox,                         \
                                             LLVMBuildMul(c->b, k,             \
                                                          cg_i64c(c, x.strides[ax]), \
                                                          ""),                 \
                                             "")),                             \
                         4),                                                   \
                 c->t_f64, "")
  cg_for(c, &lk, 0, len, 1);
  {
    LLVMValueRef v = XAT(lk.i), m = cg_load(c, c->t_f64, mxv, 8);
    cg_store(c, LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, LLVMRealOGT, v, m, ""),
                                v, m, ""),
             mxv, 8);
  }
  cg_loop_end(c, &lk);
  LLVMValueRef m = cg_load(c, c->t_f64, mxv, 8);
  cg_for(c, &lk, 0, len, 1);
  {
    LLVMValueRef e = libm1(c, "exp", LLVMBuildFSub(c->b, XAT(lk.i), m, ""));
    cg_store(c, LLVMBuildFAdd(c->b, cg_load(c, c->t_f64, sumv, 8), e, ""), sumv,
             8);
  }
  cg_loop_end(c, &lk);
  LLVMValueRef sum = cg_load(c, c->t_f64, sumv, 8);
  LLVMValueRef lsum = logsm ? libm1(c, "log", sum) : NULL;
  cg_for(c, &lk, 0, len, 1);
  {
    LLVMValueRef v = LLVMBuildFSub(c->b, XAT(lk.i), m, "");
    LLVMValueRef o = logsm ? LLVMBuildFSub(c->b, v, lsum, "")
                           : LLVMBuildFDiv(c->b, libm1(c, "exp", v), sum, "");
    LLVMValueRef yo = LLVMBuildAdd(
        c->b, oy, LLVMBuildMul(c->b, lk.i, cg_i64c(c, y.strides[ax]), ""), "");
    cg_store(c, LLVMBuildFPTrunc(c->b, o, c->t_f32, ""),
             cg_gep(c, c->t_f32, yb, yo), 4);
  }
  cg_loop_end(c, &lk);
#undef XAT
  cg_loop_end(c, &lt);
  cg_stage_end(c);
  return c->status;
}

/* ---- conv2d ---------------------------------------------------------------------- */

void cg_float_conv_store(cg *c, const quill_op *op, LLVMValueRef acc,
                         int64_t M, const cg_view *bv, LLVMValueRef bb,
                         const cg_view *y, LLVMValueRef yb, LLVMValueRef n,
                         LLVMValueRef oh, LLVMValueRef ow) {
  cg_loop lm;
  cg_for(c, &lm, 0, M, 1);
  LLVMValueRef s = cg_load(c, c->t_f32, cg_gep(c, c->t_f32, acc, lm.i), 4);
  if (bv)
    s = LLVMBuildFAdd(
        c->b, s,
        cg_load(c, c->t_f32,
                cg_gep(c, c->t_f32, bb,
                       LLVMBuildMul(c->b, lm.i, cg_i64c(c, bv->strides[0]), "")),
                4),
        "");
  s = cg_float_activation(c, op, s);
  LLVMValueRef idx[4] = {n, lm.i, oh, ow}, yo = cg_i64c(c, 0);
  for (unsigned d = 0; d < 4; d++)
    yo = LLVMBuildAdd(
        c->b, yo, LLVMBuildMul(c->b, idx[d], cg_i64c(c, y->strides[d]), ""),
        "");
  cg_store(c, s, cg_gep(c, c->t_f32, yb, yo), 4);
  cg_loop_end(c, &lm);
}

/* Direct convolution, output channels innermost (contiguous in NHWC):
 *   acc[m] = sum over taps inside the image, channels of the group;
 *   y = acc + bias, then the fused activation. */
CG_LOWER(cg_lower_conv2d) {
  cg_conv_geom g;
  quill_status st = cg_conv_geom_init(c, op, &g);
  if (st)
    return st;
  cg_view x = cg_value_view(c, quill_op_operand(op, 0));
  cg_view w = cg_value_view(c, quill_op_operand(op, 1));
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  bool has_b = quill_op_num_operands(op) > 2;
  cg_view bv = has_b ? cg_value_view(c, quill_op_operand(op, 2)) : y;
  if (g.N * g.M * g.OH * g.OW == 0)
    return QUILL_OK;
  cg_stage_begin(c, "conv2d", g.N * g.OH);
  LLVMValueRef xb = cg_view_base(c, &x), wb = cg_view_base(c, &w),
               yb = cg_view_base(c, &y);
  LLVMValueRef bb = has_b ? cg_view_base(c, &bv) : NULL;
  LLVMValueRef acc = cg_var(c, LLVMArrayType2(c->t_f32, (uint64_t)g.M), "acc");
  cg_loop lt, low, lm, li, lj, lc;
  cg_loop_begin(c, &lt, c->t0, c->t1, 1);
  LLVMValueRef n = LLVMBuildUDiv(c->b, lt.i, cg_i64c(c, g.OH), "");
  LLVMValueRef oh = LLVMBuildURem(c->b, lt.i, cg_i64c(c, g.OH), "");
  cg_for(c, &low, 0, g.OW, 1);
  cg_for(c, &lm, 0, g.M, 1);
  cg_store(c, cg_f32c(c, 0.0), cg_gep(c, c->t_f32, acc, lm.i), 4);
  cg_loop_end(c, &lm);
  cg_for(c, &li, 0, g.KH, 1);
  LLVMValueRef ih = LLVMBuildSub(
      c->b, LLVMBuildAdd(c->b, LLVMBuildMul(c->b, oh, cg_i64c(c, g.sh), ""),
                         LLVMBuildMul(c->b, li.i, cg_i64c(c, g.dh), ""), ""),
      cg_i64c(c, g.pt), "");
  cg_if fi;
  cg_if_begin(c, &fi, LLVMBuildICmp(c->b, LLVMIntULT, ih, cg_i64c(c, g.H), ""));
  cg_for(c, &lj, 0, g.KW, 1);
  LLVMValueRef iw = LLVMBuildSub(
      c->b, LLVMBuildAdd(c->b, LLVMBuildMul(c->b, low.i, cg_i64c(c, g.sw), ""),
                         LLVMBuildMul(c->b, lj.i, cg_i64c(c, g.dw), ""), ""),
      cg_i64c(c, g.pl), "");
  cg_if fj;
  cg_if_begin(c, &fj, LLVMBuildICmp(c->b, LLVMIntULT, iw, cg_i64c(c, g.W), ""));
  cg_for(c, &lc, 0, g.Cg, 1);
  cg_for(c, &lm, 0, g.M, 1);
  LLVMValueRef gr = LLVMBuildUDiv(c->b, lm.i, cg_i64c(c, g.Mg), "");
  LLVMValueRef ch = LLVMBuildAdd(
      c->b, LLVMBuildMul(c->b, gr, cg_i64c(c, g.Cg), ""), lc.i, "");
  LLVMValueRef xo = LLVMBuildMul(c->b, n, cg_i64c(c, x.strides[0]), "");
  xo = LLVMBuildAdd(c->b, xo, LLVMBuildMul(c->b, ch, cg_i64c(c, x.strides[1]), ""), "");
  xo = LLVMBuildAdd(c->b, xo, LLVMBuildMul(c->b, ih, cg_i64c(c, x.strides[2]), ""), "");
  xo = LLVMBuildAdd(c->b, xo, LLVMBuildMul(c->b, iw, cg_i64c(c, x.strides[3]), ""), "");
  LLVMValueRef wo = LLVMBuildMul(c->b, lm.i, cg_i64c(c, w.strides[0]), "");
  wo = LLVMBuildAdd(c->b, wo, LLVMBuildMul(c->b, lc.i, cg_i64c(c, w.strides[1]), ""), "");
  wo = LLVMBuildAdd(c->b, wo, LLVMBuildMul(c->b, li.i, cg_i64c(c, w.strides[2]), ""), "");
  wo = LLVMBuildAdd(c->b, wo, LLVMBuildMul(c->b, lj.i, cg_i64c(c, w.strides[3]), ""), "");
  LLVMValueRef xv = cg_load(c, c->t_f32, cg_gep(c, c->t_f32, xb, xo), 4);
  LLVMValueRef wv = cg_load(c, c->t_f32, cg_gep(c, c->t_f32, wb, wo), 4);
  LLVMValueRef p = cg_gep(c, c->t_f32, acc, lm.i);
  cg_store(c, LLVMBuildFAdd(c->b, cg_load(c, c->t_f32, p, 4),
                            LLVMBuildFMul(c->b, xv, wv, ""), ""),
           p, 4);
  cg_loop_end(c, &lm);
  cg_loop_end(c, &lc);
  cg_if_end(c, &fj);
  cg_loop_end(c, &lj);
  cg_if_end(c, &fi);
  cg_loop_end(c, &li);
  cg_float_conv_store(c, op, acc, g.M, has_b ? &bv : NULL, bb, &y, yb, n, oh,
                      low.i);
  cg_loop_end(c, &low);
  cg_loop_end(c, &lt);
  cg_stage_end(c);
  return c->status;
}
