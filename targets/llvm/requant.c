/*
 * requant.c - the requantization epilogue of the integer kernels, as LLVM
 * IR on scalars or vectors of i32 accumulators, bit-exact with ir/quant.c
 * (docs/quantization.md section 3):
 *
 *   q = clamp(zp + R(acc), lo, hi),  lo = max(qmin, act_min),
 *                                    hi = min(qmax, act_max)
 *
 *   fixed point, single rounding  prod = acc * m (i64);  n = 31 - shift
 *     n >= 1: prod / 2^n rounded with the policy's tie rule:
 *       half_up    (prod + 2^(n-1)) >> n
 *       half_away  (prod + 2^(n-1) - [prod < 0]) >> n
 *       half_even  q = prod >> n, rem = prod - (q << n),
 *                  q + (rem > half | (rem == half & q odd))
 *     n <= 0: clamp(prod, +-(INT64_MAX >> -n)) << -n
 *   fixed point, tflite (gemmlowp)
 *     x = sat32(acc << max(shift, 0));  h = SRDHM(x, m);
 *     RoundingDivideByPOT(h, max(-shift, 0))
 *   float  v = (f32)acc * scale (one fmul, no contraction); round(v) per
 *     policy (roundeven / round / floor-based half up); clamped as float
 *
 * 64-bit accumulators (qconv2d/qmatmul with accumulator = "i64", scalar
 * i64 acc, cg_requant_apply_i64): the float path converts the i64 to f32;
 * fixed point is quill_requant_fixed64, i.e. the single-rounding core on
 * x = clamp(acc, +-2^47) with the 16-bit multiplier m16 and n = 15 - shift
 * (tflite: ties up).
 *
 * Per-channel parameters are loaded from private globals at the lanes'
 * channel index; per-tensor parameters are constants, so LLVM folds the
 * shifts. The final clamp runs in i32 when every bound fits comfortably
 * (8/16-bit storage) and in i64 otherwise.
 */
#include <math.h>
#include <string.h>

#include "targets/llvm/cg.h"

static const char *str_attr(const quill_op *op, const char *name,
                            const char *dflt) {
  const quill_attr *a = quill_op_attr(op, name);
  if (!a || quill_attr_kind_of(a) != QUILL_ATTR_STRING)
    return dflt;
  return quill_attr_string_value(a, NULL);
}

quill_status cg_requant_init(cg *c, const quill_op *op, double in_scale,
                             const double *w_scales, size_t nw, size_t nch,
                             cg_requant *rq) {
  memset(rq, 0, sizeof *rq);
  quill_type *ye = quill_type_elem(quill_value_type(quill_op_result(op, 0)));
  if (!quill_type_is_quant(ye)) {
    rq->raw = true;
    return QUILL_OK;
  }
  if (!quill_rounding_parse(str_attr(op, "rounding", "half_even"), &rq->r))
    return cg_op_error(c, "unknown 'rounding'");
  rq->zp = quill_type_quant_zero_points(ye)[0];
  rq->lo = quill_type_quant_qmin(ye);
  rq->hi = quill_type_quant_qmax(ye);
  const quill_attr *amin = quill_op_attr(op, "act_min");
  const quill_attr *amax = quill_op_attr(op, "act_max");
  if (amin && quill_attr_kind_of(amin) == QUILL_ATTR_INT &&
      quill_attr_int_value(amin) > rq->lo)
    rq->lo = quill_attr_int_value(amin);
  if (amax && quill_attr_kind_of(amax) == QUILL_ATTR_INT &&
      quill_attr_int_value(amax) < rq->hi)
    rq->hi = quill_attr_int_value(amax);
  if (quill_op_attr(op, "multiplier")) {
    int64_t nm = quill_op_attr_ints(op, "multiplier", NULL, 0);
    int64_t ns = quill_op_attr_ints(op, "shift", NULL, 0);
    if (nm < 1 || nm != ns || (nm != 1 && (size_t)nm != nch))
      return cg_op_error(c, "'multiplier' and 'shift' must be int lists of 1 "
                            "or one-per-channel elements");
    rq->fixed = true;
    rq->n = (size_t)nm;
    int64_t *tmp = quill_alloc(c->ctx, rq->n * sizeof(int64_t));
    rq->mult = quill_alloc(c->ctx, rq->n * sizeof(int32_t));
    rq->shift = quill_alloc(c->ctx, rq->n * sizeof(int32_t));
    if (!tmp || !rq->mult || !rq->shift) {
      quill_free(c->ctx, tmp, rq->n * sizeof(int64_t));
      return QUILL_ERR_NOMEM;
    }
    quill_op_attr_ints(op, "multiplier", tmp, rq->n);
    for (size_t i = 0; i < rq->n; i++)
      rq->mult[i] = (int32_t)tmp[i];
    quill_op_attr_ints(op, "shift", tmp, rq->n);
    for (size_t i = 0; i < rq->n; i++)
      rq->shift[i] = (int32_t)tmp[i];
    quill_free(c->ctx, tmp, rq->n * sizeof(int64_t));
    for (size_t i = 0; i < rq->n; i++)
      if (rq->mult[i] < 0 || rq->shift[i] < -31 || rq->shift[i] > 62)
        return cg_op_error(c, "'multiplier' or 'shift' out of range");
    return QUILL_OK;
  }
  rq->n = nw;
  rq->scale = quill_alloc(c->ctx, nw * sizeof(float));
  if (!rq->scale)
    return QUILL_ERR_NOMEM;
  double s_y = quill_type_quant_scales(ye)[0];
  for (size_t i = 0; i < nw; i++)
    rq->scale[i] = quill_requant_scale_f32(in_scale, w_scales[i], s_y);
  return QUILL_OK;
}

void cg_requant_free(cg *c, cg_requant *rq) {
  cg_epi_free(c, rq->epi);
  quill_free(c->ctx, rq->mult, rq->n * sizeof(int32_t));
  quill_free(c->ctx, rq->shift, rq->n * sizeof(int32_t));
  quill_free(c->ctx, rq->scale, rq->n * sizeof(float));
  memset(rq, 0, sizeof *rq);
}

int64_t cg_requant_eval(const cg_requant *rq, size_t ch, int32_t acc) {
  if (rq->raw)
    return acc;
  size_t p = rq->n == 1 ? 0 : ch;
  int64_t v = rq->fixed
                  ? quill_requant_fixed(acc, rq->mult[p], rq->shift[p], rq->r)
                  : quill_requant_float(acc, rq->scale[p], rq->r);
  if (v >= rq->hi - rq->zp)
    return rq->hi;
  if (v <= rq->lo - rq->zp)
    return rq->lo;
  return v + rq->zp;
}

/* ---- IR ---------------------------------------------------------------- */

static unsigned lanes(LLVMValueRef v) {
  LLVMTypeRef t = LLVMTypeOf(v);
  return LLVMGetTypeKind(t) == LLVMVectorTypeKind ? LLVMGetVectorSize(t) : 1;
}

/* Parameter lanes: a constant for per-tensor params, else a load from the
 * per-channel global at ch (consecutive lanes or one splatted value). */
static LLVMValueRef param(cg *c, LLVMValueRef *g, const void *data,
                          size_t esize, LLVMTypeRef et, size_t n, size_t pad,
                          int64_t k, double kf, LLVMValueRef ch, bool vec_ch,
                          unsigned w) {
  if (n == 1) {
    LLVMValueRef s = LLVMGetTypeKind(et) == LLVMFloatTypeKind
                         ? LLVMConstReal(et, kf)
                         : LLVMConstInt(et, (unsigned long long)k, 1);
    return cg_splat(c, s, w);
  }
  if (!*g) { /* padded past the last channel for full-vector loads */
    size_t bytes = (n + pad) * esize;
    unsigned char *buf = quill_alloc(c->ctx, bytes);
    if (!buf) {
      c->status = QUILL_ERR_NOMEM;
      return LLVMGetUndef(cg_vec(et, w));
    }
    memcpy(buf, data, n * esize);
    for (size_t i = n; i < n + pad; i++)
      memcpy(buf + i * esize, (const unsigned char *)data + (n - 1) * esize,
             esize);
    *g = cg_const_global(c, "rq", buf, bytes);
    quill_free(c->ctx, buf, bytes);
  }
  LLVMValueRef p = cg_gep(c, et, *g, ch);
  if (vec_ch && w > 1)
    return cg_load(c, LLVMVectorType(et, w), p, (unsigned)esize);
  return cg_splat(c, cg_load(c, et, p, (unsigned)esize), w);
}

LLVMValueRef cg_round(cg *c, LLVMValueRef v, quill_rounding r) {
  LLVMTypeRef t = LLVMTypeOf(v);
  switch (r) {
  case QUILL_ROUND_HALF_EVEN:
    return cg_intrinsic(c, "llvm.roundeven", &t, 1, &v, 1);
  case QUILL_ROUND_HALF_UP: {
    LLVMValueRef x = cg_intrinsic(c, "llvm.floor", &t, 1, &v, 1);
    LLVMValueRef d = LLVMBuildFSub(c->b, v, x, "");
    LLVMValueRef half = LLVMConstReal(LLVMGetTypeKind(t) == LLVMVectorTypeKind
                                          ? LLVMGetElementType(t)
                                          : t,
                                      0.5);
    LLVMValueRef one = LLVMConstReal(LLVMTypeOf(half), 1.0);
    unsigned w = LLVMGetTypeKind(t) == LLVMVectorTypeKind
                     ? LLVMGetVectorSize(t) : 1;
    LLVMValueRef ge = LLVMBuildFCmp(c->b, LLVMRealOGE, d,
                                    cg_splat(c, half, w), "");
    return LLVMBuildSelect(c->b, ge,
                           LLVMBuildFAdd(c->b, x, cg_splat(c, one, w), ""), x,
                           "");
  }
  default:
    return cg_intrinsic(c, "llvm.round", &t, 1, &v, 1);
  }
}

static bool narrow_bounds(const cg_requant *rq) {
  int64_t lim = INT64_C(1) << 30;
  return rq->lo - rq->zp > -lim && rq->hi - rq->zp < lim && rq->zp > -lim &&
         rq->zp < lim;
}

/* ---- fixed point on i64 lanes --------------------------------------------
 *
 * Both fixed-point policies need 64-bit products. A <W x i32> vector is
 * processed as its even and odd lanes, each sign-extended in place inside
 * <W/2 x i64> (shl/ashr by 32: the form x86 turns into vpmuldq), so no
 * lane shuffles are needed; the core computes the clamped result (which
 * fits in i32) and the halves are merged back. */

typedef struct fx {
  const cg_requant *rq;
  bool any_left, any_right;
} fx;

typedef LLVMValueRef (*fx_core)(cg *c, const fx *f, LLVMValueRef x,
                                LLVMValueRef m, LLVMValueRef sh);

static LLVMValueRef clamp64(cg *c, const cg_requant *rq, LLVMValueRef v) {
  if (rq->noclamp)
    return v; /* truncated to i32 by the caller: modulo 2^32 */
  LLVMTypeRef t = LLVMTypeOf(v);
  v = cg_max_s(c, v, cg_intc(t, rq->lo - rq->zp));
  return cg_min_s(c, v, cg_intc(t, rq->hi - rq->zp));
}

static LLVMValueRef even_lanes(cg *c, LLVMValueRef v64) {
  LLVMValueRef k = cg_intc(LLVMTypeOf(v64), 32);
  return LLVMBuildAShr(c->b, LLVMBuildShl(c->b, v64, k, ""), k, "");
}

static LLVMValueRef map_i64(cg *c, const fx *f, fx_core core, LLVMValueRef acc,
                            LLVMValueRef m, LLVMValueRef sh) {
  unsigned w = lanes(acc);
  if (w < 4 || w % 2) {
    LLVMTypeRef i64 = cg_vec(c->t_i64, w);
    LLVMValueRef r = core(c, f, LLVMBuildSExt(c->b, acc, i64, ""),
                          LLVMBuildSExt(c->b, m, i64, ""),
                          LLVMBuildSExt(c->b, sh, i64, ""));
    return LLVMBuildTrunc(c->b, r, cg_vec(c->t_i32, w), "");
  }
  LLVMTypeRef h = LLVMVectorType(c->t_i64, w / 2);
  LLVMValueRef k32 = cg_intc(h, 32);
  LLVMValueRef a = LLVMBuildBitCast(c->b, acc, h, "");
  LLVMValueRef mm = LLVMBuildBitCast(c->b, m, h, "");
  LLVMValueRef ss = LLVMBuildBitCast(c->b, sh, h, "");
  LLVMValueRef re = core(c, f, even_lanes(c, a), even_lanes(c, mm),
                         even_lanes(c, ss));
  LLVMValueRef ro = core(c, f, LLVMBuildAShr(c->b, a, k32, ""),
                         LLVMBuildAShr(c->b, mm, k32, ""),
                         LLVMBuildAShr(c->b, ss, k32, ""));
  LLVMValueRef lo = LLVMBuildAnd(c->b, re, cg_intc(h, 0xffffffffll), "");
  LLVMValueRef r = LLVMBuildOr(c->b, lo, LLVMBuildShl(c->b, ro, k32, ""), "");
  return LLVMBuildBitCast(c->b, r, cg_vec(c->t_i32, w), "");
}

/* Single rounding: prod = x * m, n = 31 - shift; see the file header. */
static LLVMValueRef single_core(cg *c, const fx *f, LLVMValueRef x,
                                LLVMValueRef m, LLVMValueRef sh) {
  const cg_requant *rq = f->rq;
  LLVMTypeRef t = LLVMTypeOf(x);
  LLVMValueRef prod = LLVMBuildMul(c->b, x, m, "");
  LLVMValueRef n = LLVMBuildSub(c->b, cg_intc(t, 31), sh, "n");
  LLVMValueRef res = NULL;
  if (f->any_right) {
    LLVMValueRef nn = f->any_left ? cg_max_s(c, n, cg_intc(t, 1)) : n;
    LLVMValueRef half = LLVMBuildShl(
        c->b, cg_intc(t, 1), LLVMBuildSub(c->b, nn, cg_intc(t, 1), ""), "");
    switch (rq->r) {
    case QUILL_ROUND_HALF_UP:
      res = LLVMBuildAShr(c->b, LLVMBuildAdd(c->b, prod, half, ""), nn, "");
      break;
    case QUILL_ROUND_HALF_EVEN: {
      LLVMValueRef q = LLVMBuildAShr(c->b, prod, nn, "");
      LLVMValueRef rem =
          LLVMBuildSub(c->b, prod, LLVMBuildShl(c->b, q, nn, ""), "");
      LLVMValueRef gt = LLVMBuildICmp(c->b, LLVMIntSGT, rem, half, "");
      LLVMValueRef eq = LLVMBuildICmp(c->b, LLVMIntEQ, rem, half, "");
      LLVMValueRef odd = LLVMBuildICmp(
          c->b, LLVMIntNE, LLVMBuildAnd(c->b, q, cg_intc(t, 1), ""),
          cg_intc(t, 0), "");
      LLVMValueRef up =
          LLVMBuildOr(c->b, gt, LLVMBuildAnd(c->b, eq, odd, ""), "");
      res = LLVMBuildAdd(c->b, q, LLVMBuildZExt(c->b, up, t, ""), "");
      break;
    }
    default: /* half away from zero: (prod + half - [prod < 0]) >> n */
      res = LLVMBuildAShr(
          c->b,
          LLVMBuildAdd(c->b, LLVMBuildAdd(c->b, prod, half, ""),
                       LLVMBuildAShr(c->b, prod, cg_intc(t, 63), ""),
                       ""),
          nn, "");
      break;
    }
  }
  if (f->any_left) { /* n <= 0: clamp(prod, +-(INT64_MAX >> -n)) << -n */
    LLVMValueRef k = LLVMBuildNeg(c->b, cg_min_s(c, n, cg_intc(t, 0)), "");
    LLVMValueRef lim = LLVMBuildAShr(c->b, cg_intc(t, INT64_MAX), k, "");
    LLVMValueRef p = cg_min_s(c, cg_max_s(c, prod, LLVMBuildNeg(c->b, lim, "")),
                              lim);
    LLVMValueRef l = LLVMBuildShl(c->b, p, k, "");
    res = res ? LLVMBuildSelect(c->b,
                                LLVMBuildICmp(c->b, LLVMIntSLE, n,
                                              cg_intc(t, 0), ""),
                                l, res, "")
              : l;
  }
  return clamp64(c, rq, res);
}

/* gemmlowp: x = sat32(acc << left); SRDHM(x, m) = (x*m + 2^30) >> 31 for
 * m >= 0 (the nudge and the truncating division by 2^31 together are a
 * floor of x*m + 2^30 for either sign); RoundingDivideByPOT(h, e) =
 * (h + 2^(e-1) - [h < 0]) >> e for e >= 1. */
static LLVMValueRef tflite_core(cg *c, const fx *f, LLVMValueRef x,
                                LLVMValueRef m, LLVMValueRef sh) {
  LLVMTypeRef t = LLVMTypeOf(x);
  if (f->any_left) {
    /* left <= 32 suffices: any nonzero x saturates from 32 on */
    LLVMValueRef left = cg_min_s(c, cg_max_s(c, sh, cg_intc(t, 0)),
                                 cg_intc(t, 32));
    x = LLVMBuildShl(c->b, x, left, "");
    x = cg_max_s(c, x, cg_intc(t, INT32_MIN));
    x = cg_min_s(c, x, cg_intc(t, INT32_MAX));
  }
  LLVMValueRef h = LLVMBuildAShr(
      c->b, LLVMBuildAdd(c->b, LLVMBuildMul(c->b, x, m, ""),
                         cg_intc(t, INT64_C(1) << 30), ""),
      cg_intc(t, 31), "");
  if (f->any_right) {
    LLVMValueRef e = LLVMBuildNeg(c->b, cg_min_s(c, sh, cg_intc(t, 0)), "");
    LLVMValueRef half = LLVMBuildAShr(c->b, LLVMBuildShl(c->b, cg_intc(t, 1),
                                                         e, ""),
                                      cg_intc(t, 1), "");
    /* [h < 0] only matters when e >= 1 (e == 0: identity) */
    LLVMValueRef neg = LLVMBuildAShr(c->b, h, cg_intc(t, 63), "");
    if (f->any_left)
      neg = LLVMBuildSelect(c->b,
                            LLVMBuildICmp(c->b, LLVMIntEQ, e, cg_intc(t, 0), ""),
                            cg_intc(t, 0), neg, "");
    else {
      bool some_zero = false;
      for (size_t i = 0; i < f->rq->n; i++)
        some_zero |= f->rq->shift[i] == 0;
      if (some_zero)
        neg = LLVMBuildSelect(
            c->b, LLVMBuildICmp(c->b, LLVMIntEQ, e, cg_intc(t, 0), ""),
            cg_intc(t, 0), neg, "");
    }
    h = LLVMBuildAShr(
        c->b, LLVMBuildAdd(c->b, LLVMBuildAdd(c->b, h, half, ""), neg, ""), e,
        "");
  }
  return clamp64(c, f->rq, h);
}

static LLVMValueRef fixed_path(cg *c, cg_requant *rq, LLVMValueRef acc,
                               LLVMValueRef ch, bool vec_ch) {
  unsigned w = lanes(acc);
  LLVMValueRef m = param(c, &rq->g_mult, rq->mult, 4, c->t_i32, rq->n, rq->pad,
                         rq->mult[0], 0, ch, vec_ch, w);
  LLVMValueRef sh = param(c, &rq->g_shift, rq->shift, 4, c->t_i32, rq->n,
                          rq->pad, rq->shift[0], 0, ch, vec_ch, w);
  fx f = {rq, false, false};
  bool tfl = rq->r == QUILL_ROUND_TFLITE;
  for (size_t i = 0; i < rq->n; i++) {
    if (tfl) {
      f.any_left |= rq->shift[i] > 0;
      f.any_right |= rq->shift[i] < 0;
    } else if (31 - rq->shift[i] <= 0) {
      f.any_left = true;
    } else {
      f.any_right = true;
    }
  }
  LLVMValueRef r = map_i64(c, &f, tfl ? tflite_core : single_core, acc, m, sh);
  return LLVMBuildAdd(c->b, r, cg_intc(LLVMTypeOf(r), rq->zp), "");
}

static LLVMValueRef float_path(cg *c, cg_requant *rq, LLVMValueRef acc,
                               LLVMValueRef ch, bool vec_ch) {
  unsigned w = lanes(acc);
  LLVMTypeRef f32 = cg_vec(c->t_f32, w);
  LLVMValueRef s = param(c, &rq->g_scale, rq->scale, 4, c->t_f32, rq->n, rq->pad, 0,
                         rq->scale[0], ch, vec_ch, w);
  LLVMValueRef v = LLVMBuildFMul(c->b, LLVMBuildSIToFP(c->b, acc, f32, ""), s,
                                 "");
  bool finite = true;
  for (size_t i = 0; i < rq->n; i++)
    finite &= isfinite(rq->scale[i]) != 0;
  int64_t lim = INT64_C(1) << 24;
  if (rq->r == QUILL_ROUND_HALF_EVEN && finite && rq->lo - rq->zp > -lim &&
      rq->hi - rq->zp < lim && rq->zp > -lim && rq->zp < lim) {
    /* clamping to integer bounds commutes with rounding: clamp, then one
     * round-to-nearest-even conversion (vcvtps2dq / frintx+fcvtzs) */
    LLVMValueRef lo = cg_splat(c, cg_f32c(c, (double)(rq->lo - rq->zp)), w);
    LLVMValueRef hi = cg_splat(c, cg_f32c(c, (double)(rq->hi - rq->zp)), w);
    v = cg_fclamp(c, v, lo, hi);
    LLVMTypeRef ov[2] = {cg_vec(c->t_i32, w), f32};
    LLVMValueRef i = cg_intrinsic(c, "llvm.lrint", ov, 2, &v, 1);
    return LLVMBuildAdd(c->b, i, cg_intc(cg_vec(c->t_i32, w), rq->zp), "");
  }
  LLVMValueRef r = cg_round(c, v, rq->r);
  if (!finite) /* quill_round(NaN) is 0 */
    r = LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, LLVMRealUNO, r, r, ""),
                        LLVMConstNull(f32), r, "");
  if (narrow_bounds(rq)) {
    r = cg_fclamp(c, r, cg_splat(c, cg_f32c(c, (double)(rq->lo - rq->zp)), w),
                  cg_splat(c, cg_f32c(c, (double)(rq->hi - rq->zp)), w));
    LLVMValueRef i = LLVMBuildFPToSI(c->b, r, cg_vec(c->t_i32, w), "");
    return LLVMBuildAdd(c->b, i, cg_intc(cg_vec(c->t_i32, w), rq->zp), "");
  }
  /* Wide storage: clamp in double, convert to i64. */
  LLVMTypeRef f64 = cg_vec(c->t_f64, w);
  LLVMValueRef d = LLVMBuildFPExt(c->b, r, f64, "");
  LLVMValueRef lo = cg_splat(c, cg_f64c(c, (double)(rq->lo - rq->zp)), w);
  LLVMValueRef hi = cg_splat(c, cg_f64c(c, (double)(rq->hi - rq->zp)), w);
  d = cg_fclamp(c, d, lo, hi);
  LLVMValueRef i = LLVMBuildFPToSI(c->b, d, cg_vec(c->t_i64, w), "");
  i = LLVMBuildAdd(c->b, i, cg_intc(cg_vec(c->t_i64, w), rq->zp), "");
  return LLVMBuildTrunc(c->b, i, cg_vec(c->t_i32, w), "");
}

LLVMValueRef cg_requant_apply(cg *c, cg_requant *rq, LLVMValueRef acc,
                              LLVMValueRef ch, bool lanes_are_channels) {
  if (rq->raw)
    return acc;
  if (!ch)
    ch = cg_i64c(c, 0);
  LLVMValueRef r = rq->fixed ? fixed_path(c, rq, acc, ch, lanes_are_channels)
                             : float_path(c, rq, acc, ch, lanes_are_channels);
  return rq->epi ? cg_epi_apply(c, rq, r, ch, lanes_are_channels) : r;
}

void cg_requant_bound(cg_requant *rq, const int32_t *wc, const int32_t *bias,
                      int64_t M, int64_t K) {
  rq->bounded = false;
  if (rq->raw || rq->fixed || !rq->scale)
    return;
  for (int64_t m = 0; m < M; m++) {
    double s = 0;
    for (int64_t k = 0; k < K; k++)
      s += fabs((double)wc[m * K + k]);
    double b = (bias ? fabs((double)bias[m]) : 0.0) + 255.0 * s;
    double sc = fabs((double)rq->scale[rq->n == 1 ? 0 : (size_t)m]);
    if (!(b < 2147483648.0 && b * sc < 1073741824.0))
      return;
  }
  rq->bounded = true;
}

/* Whether the float path's half-even fast form holds (no fused ops). */
static bool half_even_fast(const cg_requant *rq) {
  int64_t lim = INT64_C(1) << 24;
  bool finite = !rq->raw && !rq->fixed;
  for (size_t i = 0; finite && i < rq->n; i++)
    finite = isfinite(rq->scale[i]) != 0;
  return finite && !rq->epi && rq->r == QUILL_ROUND_HALF_EVEN &&
         rq->lo - rq->zp > -lim && rq->hi - rq->zp < lim && rq->zp > -lim &&
         rq->zp < lim;
}

/* acc's f32 times the scale of its lanes' channels (the float path's
 * first step). */
static LLVMValueRef scaled(cg *c, cg_requant *rq, LLVMValueRef acc,
                           LLVMValueRef ch, bool lanes_are_channels) {
  unsigned w = lanes(acc);
  LLVMValueRef s =
      param(c, &rq->g_scale, rq->scale, 4, c->t_f32, rq->n, rq->pad, 0,
            rq->scale[0], ch ? ch : cg_i64c(c, 0), lanes_are_channels, w);
  return LLVMBuildFMul(
      c->b, LLVMBuildSIToFP(c->b, acc, cg_vec(c->t_f32, w), ""), s, "");
}

LLVMValueRef cg_requant_apply_f(cg *c, cg_requant *rq, LLVMValueRef acc,
                                LLVMValueRef ch, bool lanes_are_channels) {
  if (!half_even_fast(rq))
    return NULL;
  unsigned w = lanes(acc);
  LLVMValueRef v = scaled(c, rq, acc, ch, lanes_are_channels);
  LLVMValueRef lo = cg_splat(c, cg_f32c(c, (double)(rq->lo - rq->zp)), w);
  LLVMValueRef hi = cg_splat(c, cg_f32c(c, (double)(rq->hi - rq->zp)), w);
  v = cg_fclamp(c, v, lo, hi);
  /* below 2^24 in magnitude: rounding in f32 is the integer's f32 */
  return cg_round(c, v, QUILL_ROUND_HALF_EVEN);
}

LLVMValueRef cg_requant_apply_sat(cg *c, cg_requant *rq, LLVMValueRef acc,
                                  LLVMValueRef ch, bool lanes_are_channels,
                                  int64_t smin, int64_t smax) {
  if (!half_even_fast(rq) || rq->lo < smin || rq->hi > smax)
    return NULL;
  unsigned w = lanes(acc);
  LLVMValueRef v = scaled(c, rq, acc, ch, lanes_are_channels);
  /* the upper bound unless |v| < 2^30 is known (cg_requant_bound): v >=
   * 2^31 would convert to INT_MIN, which the packs would take for the
   * lowest value; below, INT_MIN + zp stays the lowest unless zp < 0 */
  if (rq->hi < smax || !rq->bounded) {
    LLVMValueRef hi = cg_splat(c, cg_f32c(c, (double)(rq->hi - rq->zp)), w);
    v = LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, LLVMRealOGT, v, hi, ""), hi,
                        v, "");
  }
  if (rq->lo > smin || (rq->zp < 0 && !rq->bounded)) {
    LLVMValueRef lo = cg_splat(c, cg_f32c(c, (double)(rq->lo - rq->zp)), w);
    v = LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, LLVMRealOLT, v, lo, ""), lo,
                        v, "");
  }
  LLVMTypeRef ov[2] = {cg_vec(c->t_i32, w), cg_vec(c->t_f32, w)};
  LLVMValueRef i = cg_intrinsic(c, "llvm.lrint", ov, 2, &v, 1);
  return rq->zp ? LLVMBuildAdd(c->b, i, cg_intc(cg_vec(c->t_i32, w), rq->zp), "")
                : i;
}

LLVMValueRef cg_requant_apply_i64(cg *c, cg_requant *rq, LLVMValueRef acc,
                                  LLVMValueRef ch) {
  if (!ch)
    ch = cg_i64c(c, 0);
  if (rq->raw) /* fuse-qdq never makes this; the verifier refuses it */
    return LLVMBuildTrunc(c->b, acc, c->t_i32, "");
  if (!rq->fixed)
    return float_path(c, rq, acc, ch, false);
  LLVMTypeRef t = c->t_i64;
  LLVMValueRef m = LLVMBuildSExt(
      c->b, param(c, &rq->g_mult, rq->mult, 4, c->t_i32, rq->n, rq->pad,
                  rq->mult[0], 0, ch, false, 1), t, "");
  LLVMValueRef sh = LLVMBuildSExt(
      c->b, param(c, &rq->g_shift, rq->shift, 4, c->t_i32, rq->n, rq->pad,
                  rq->shift[0], 0, ch, false, 1), t, "");
  /* m16 = m < 0x7fff0000 ? (m + 2^15) >> 16 : 0x7fff */
  LLVMValueRef m16 = LLVMBuildSelect(
      c->b, LLVMBuildICmp(c->b, LLVMIntSLT, m, cg_intc(t, 0x7fff0000), ""),
      LLVMBuildAShr(c->b, LLVMBuildAdd(c->b, m, cg_intc(t, 1 << 15), ""),
                    cg_intc(t, 16), ""),
      cg_intc(t, 0x7fff), "");
  LLVMValueRef x = cg_max_s(c, acc, cg_intc(t, -(INT64_C(1) << 47)));
  x = cg_min_s(c, x, cg_intc(t, (INT64_C(1) << 47) - 1));
  /* single_core's n = 31 - sh' is 15 - shift for sh' = shift + 16 */
  cg_requant r16 = *rq;
  if (r16.r == QUILL_ROUND_TFLITE)
    r16.r = QUILL_ROUND_HALF_UP;
  fx f = {&r16, false, false};
  for (size_t i = 0; i < rq->n; i++) {
    if (15 - rq->shift[i] <= 0)
      f.any_left = true;
    else
      f.any_right = true;
  }
  LLVMValueRef r = single_core(c, &f, x, m16,
                               LLVMBuildAdd(c->b, sh, cg_intc(t, 16), ""));
  r = LLVMBuildAdd(c->b, r, cg_intc(t, rq->zp), "");
  return LLVMBuildTrunc(c->b, r, c->t_i32, "");
}
