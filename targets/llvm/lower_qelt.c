/*
 * lower_qelt.c - the quantized elementwise integer ops qadd, qmul (numpy
 * broadcasting) and lut, bit-exact with targets/reference/
 * kernels_qelementwise.c (docs/quantization.md section 3). With
 * da = a - zp_a, db = b - zp_b and the result clamped to
 * [max(qmin, act_min), min(qmax, act_max)] after adding zp_y:
 *
 *   qadd fixed   v = R_y(R_a(da << L) + R_b(db << L))   the sum in i32
 *   qadd float   v = round_r((f32(da)*s_a + f32(db)*s_b) / s_y)   in f32
 *   qmul fixed   v = R(sat32(da * db))
 *   qmul float   v = round_r((f32(da)*s_a) * (f32(db)*s_b) / s_y)  in f32
 *   lut          y = table[x - storage_min]
 *
 * Each R is the fixed-point requantization of requant.c with one
 * per-tensor multiplier and shift; the inner ones (qadd's R_a, R_b) skip the
 * clamp and wrap to i32 like the reference's int32 sum. Everything is one
 * cg_map over broadcast views, so LLVM vectorizes the contiguous cases.
 * The float form of qadd also runs on vectors inside a conv's epilogue
 * (cg_qadd_vec, fuse_add.c), with the same operations per lane.
 */
#include <math.h>
#include <string.h>

#include "targets/llvm/cg.h"

typedef struct qp {
  double scale;
  int64_t zp, qmin, qmax;
  unsigned bits;
} qp;

static bool qp_of(const quill_type *e, qp *p) {
  if (!quill_type_is_quant(e) || quill_type_quant_axis_of(e) >= 0)
    return false;
  p->scale = quill_type_quant_scales(e)[0];
  p->zp = quill_type_quant_zero_points(e)[0];
  p->qmin = quill_type_quant_qmin(e);
  p->qmax = quill_type_quant_qmax(e);
  p->bits = quill_type_bit_width(quill_type_quant_storage(e));
  return true;
}

CG_SUPPORTS(cg_supports_qbinary) {
  qp p;
  for (unsigned i = 0; i < 2; i++)
    if (!qp_of(quill_type_elem(quill_value_type(quill_op_operand(op, i))), &p))
      return "operands not quantized per tensor";
  if (!qp_of(quill_type_elem(quill_value_type(quill_op_result(op, 0))), &p))
    return "result not quantized per tensor";
  return NULL;
}

typedef struct qbin {
  bool add, fixed, f64;
  bool narrow; /* float form in i32/f32 (qbin_f32) */
  quill_rounding r;
  qp a, b, y;
  const quill_type *ae, *be;
  int64_t lo, hi;
  int left;              /* qadd's left shift */
  bool recip;            /* float form: x * (1/s_y) gives x / s_y's bits */
  float inv_y;           /* (float)(1 / (float)s_y) */
  cg_requant ra, rb, ry; /* fixed point: per-tensor requantizations */
} qbin;

/* A per-tensor fixed-point requantization with multiplier m and shift s. */
static bool one_fixed(cg *c, cg_requant *rq, int64_t m, int64_t s,
                      quill_rounding r, bool noclamp, int64_t zp, int64_t lo,
                      int64_t hi) {
  memset(rq, 0, sizeof *rq);
  rq->fixed = true;
  rq->r = r;
  rq->n = 1;
  rq->noclamp = noclamp;
  rq->zp = noclamp ? 0 : zp;
  rq->lo = lo;
  rq->hi = hi;
  rq->mult = quill_alloc(c->ctx, sizeof(int32_t));
  rq->shift = quill_alloc(c->ctx, sizeof(int32_t));
  if (!rq->mult || !rq->shift) {
    c->status = QUILL_ERR_NOMEM;
    return false;
  }
  rq->mult[0] = (int32_t)m;
  rq->shift[0] = (int32_t)s;
  return m >= 0 && m <= INT32_MAX && s >= -31 && s <= 62;
}

/* The float form's quotient round_r((f(da)*s_a + f(db)*s_b) / s_y) (or
 * the product) of the differences da, db (w lanes; 1: scalars) with the
 * arithmetic in `ft`, as the reference does it (no contraction), NaN as 0. */
static LLVMValueRef qbin_quotient_d(cg *c, const qbin *k, LLVMValueRef da,
                                    LLVMValueRef db, LLVMTypeRef ft,
                                    unsigned w) {
  bool f64 = ft == c->t_f64;
  LLVMTypeRef fv = w > 1 ? LLVMVectorType(ft, w) : ft;
  LLVMValueRef fa = LLVMBuildFMul(
      c->b, LLVMBuildSIToFP(c->b, da, fv, ""),
      cg_splat(c, LLVMConstReal(ft, f64 ? k->a.scale : (float)k->a.scale), w),
      "");
  LLVMValueRef fb = LLVMBuildFMul(
      c->b, LLVMBuildSIToFP(c->b, db, fv, ""),
      cg_splat(c, LLVMConstReal(ft, f64 ? k->b.scale : (float)k->b.scale), w),
      "");
  LLVMValueRef x = k->add ? LLVMBuildFAdd(c->b, fa, fb, "")
                          : LLVMBuildFMul(c->b, fa, fb, "");
  LLVMValueRef q =
      k->recip
          ? LLVMBuildFMul(c->b, x, cg_splat(c, LLVMConstReal(ft, k->inv_y), w),
                          "")
          : LLVMBuildFDiv(c->b, x,
                          cg_splat(c,
                                   LLVMConstReal(ft, f64 ? k->y.scale
                                                         : (float)k->y.scale),
                                   w),
                          "");
  q = cg_round(c, q, k->r);
  return LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, LLVMRealUNO, q, q, ""),
                         cg_splat(c, LLVMConstReal(ft, 0.0), w), q, "");
}

/* qbin_quotient_d of the operands in[0], in[1] widened to `it`. */
static LLVMValueRef qbin_quotient(cg *c, const qbin *k, LLVMValueRef *in,
                                  LLVMTypeRef it, LLVMTypeRef ft) {
  LLVMValueRef da =
      LLVMBuildSub(c->b, cg_widen_int(c, k->ae, in[0], it),
                   LLVMConstInt(it, (unsigned long long)k->a.zp, 1), "");
  LLVMValueRef db =
      LLVMBuildSub(c->b, cg_widen_int(c, k->be, in[1], it),
                   LLVMConstInt(it, (unsigned long long)k->b.zp, 1), "");
  return qbin_quotient_d(c, k, da, db, ft, 1);
}

/* Operands of at most 16 bits and f32 scales (k->narrow): i32 and f32
 * only, so LLVM vectorizes it 16 lanes wide. The rounded quotient is
 * clamped in f32, which is exact: the bounds are integers below 2^24 and
 * the quotient an integer (or infinite). a and b are the operands'
 * values in i32 (w lanes). */
static LLVMValueRef qbin_f32_ab(cg *c, const qbin *k, LLVMValueRef a,
                                LLVMValueRef b, unsigned w) {
  LLVMValueRef da = LLVMBuildSub(c->b, a, cg_splat(c, cg_i32c(c, k->a.zp), w),
                                 "");
  LLVMValueRef db = LLVMBuildSub(c->b, b, cg_splat(c, cg_i32c(c, k->b.zp), w),
                                 "");
  LLVMValueRef q = qbin_quotient_d(c, k, da, db, c->t_f32, w);
  LLVMValueRef lo = cg_splat(c, cg_f32c(c, (double)(k->lo - k->y.zp)), w);
  LLVMValueRef hi = cg_splat(c, cg_f32c(c, (double)(k->hi - k->y.zp)), w);
  LLVMTypeRef iv = w > 1 ? LLVMVectorType(c->t_i32, w) : c->t_i32;
  return LLVMBuildAdd(c->b, LLVMBuildFPToSI(c->b, cg_fclamp(c, q, lo, hi), iv, ""),
                      cg_splat(c, cg_i32c(c, k->y.zp), w), "");
}

static LLVMValueRef qbin_f32(cg *c, qbin *k, LLVMValueRef *in) {
  return qbin_f32_ab(c, k, cg_widen_int(c, k->ae, in[0], c->t_i32),
                     cg_widen_int(c, k->be, in[1], c->t_i32), 1);
}

static LLVMValueRef qbin_fn(cg *c, void *ud, LLVMValueRef *in) {
  qbin *k = ud;
  if (!k->fixed) {
    /* float: the reference form's f32 (or f64) arithmetic, then quantize */
    if (k->narrow)
      return qbin_f32(c, k, in);
    LLVMValueRef q =
        qbin_quotient(c, k, in, c->t_i64, k->f64 ? c->t_f64 : c->t_f32);
    LLVMValueRef d = k->f64 ? q : LLVMBuildFPExt(c->b, q, c->t_f64, "");
    LLVMValueRef lo = cg_f64c(c, (double)(k->lo - k->y.zp));
    LLVMValueRef hi = cg_f64c(c, (double)(k->hi - k->y.zp));
    return LLVMBuildAdd(
        c->b, LLVMBuildFPToSI(c->b, cg_fclamp(c, d, lo, hi), c->t_i64, ""),
        cg_i64c(c, k->y.zp), "");
  }
  LLVMValueRef da = LLVMBuildSub(c->b, cg_widen_int(c, k->ae, in[0], c->t_i64),
                                 cg_i64c(c, k->a.zp), "");
  LLVMValueRef db = LLVMBuildSub(c->b, cg_widen_int(c, k->be, in[1], c->t_i64),
                                 cg_i64c(c, k->b.zp), "");
  /* fixed point */
  LLVMValueRef v;
  if (k->add) {
    LLVMValueRef sa = LLVMBuildTrunc(
        c->b, LLVMBuildShl(c->b, da, cg_i64c(c, k->left), ""), c->t_i32, "");
    LLVMValueRef sb = LLVMBuildTrunc(
        c->b, LLVMBuildShl(c->b, db, cg_i64c(c, k->left), ""), c->t_i32, "");
    LLVMValueRef ra = cg_requant_apply(c, &k->ra, sa, NULL, false);
    LLVMValueRef rb = cg_requant_apply(c, &k->rb, sb, NULL, false);
    v = LLVMBuildAdd(c->b, ra, rb, ""); /* wraps like int32 */
  } else {
    LLVMValueRef p = LLVMBuildMul(c->b, da, db, "");
    p = cg_max_s(c, p, cg_i64c(c, INT32_MIN));
    p = cg_min_s(c, p, cg_i64c(c, INT32_MAX));
    v = LLVMBuildTrunc(c->b, p, c->t_i32, "");
  }
  return cg_requant_apply(c, &k->ry, v, NULL, false);
}

static const char *str_attr(const quill_op *op, const char *name,
                            const char *dflt) {
  const quill_attr *a = quill_op_attr(op, name);
  return a && quill_attr_kind_of(a) == QUILL_ATTR_STRING
             ? quill_attr_string_value(a, NULL)
             : dflt;
}

/* cg_round's rounding of an f32, in C. */
static float round_f(float v, quill_rounding r) {
  switch (r) {
  case QUILL_ROUND_HALF_EVEN:
    return nearbyintf(v); /* the default mode: to nearest, ties to even */
  case QUILL_ROUND_HALF_UP: {
    float x = floorf(v);
    float d = v - x;
    return d >= 0.5f ? x + 1.0f : x;
  }
  default:
    return roundf(v);
  }
}

/* The float form's result in C: x / s_y (or x * inv_y), rounded, NaN as
 * 0, clamped (the f32 operations of qbin_quotient_d and qbin_f32_ab). */
static float result_f(const qbin *k, int64_t a, int64_t b, bool recip) {
  float fa = (float)(int32_t)(a - k->a.zp) * (float)k->a.scale;
  float fb = (float)(int32_t)(b - k->b.zp) * (float)k->b.scale;
  float x = k->add ? fa + fb : fa * fb;
  float q = round_f(recip ? x * k->inv_y : x / (float)k->y.scale, k->r);
  if (q != q)
    q = 0.0f;
  float lo = (float)(k->lo - k->y.zp), hi = (float)(k->hi - k->y.zp);
  return q < lo ? lo : q > hi ? hi : q;
}

/* Whether dividing by s_y can be a multiplication by its reciprocal
 * (about 4x cheaper; the division bounded ResNet's qadd stages and
 * residual epilogues): the 8-bit float form has at most 65536 operand
 * pairs, so every pair is tried and the two must give the same result
 * for all of them (the rounding and the clamp hide the last bit of the
 * quotient almost always; where they do not, the division stays). */
static bool recip_exact(qbin *k) {
  if (k->fixed || !k->narrow || k->a.bits > 8 || k->b.bits > 8)
    return false;
  k->inv_y = 1.0f / (float)k->y.scale;
  if (!isfinite(k->inv_y) || k->inv_y == 0.0f)
    return false;
  quill_type *sa = cg_storage(k->ae), *sb = cg_storage(k->be);
  for (int64_t a = quill_type_int_min(sa); a <= quill_type_int_max(sa); a++)
    for (int64_t b = quill_type_int_min(sb); b <= quill_type_int_max(sb); b++)
      if (result_f(k, a, b, false) != result_f(k, a, b, true))
        return false;
  return true;
}

/* k's parameters from the op and its operand and result element types;
 * false if they are not quantized per tensor or the rounding is unknown. */
static bool qbin_params(const quill_op *op, const quill_type *ae,
                        const quill_type *be, const quill_type *ye, qbin *k) {
  memset(k, 0, sizeof *k);
  k->add = quill_op_opcode(op) == QUILL_OP_QADD;
  k->ae = ae;
  k->be = be;
  if (!qp_of(ae, &k->a) || !qp_of(be, &k->b) || !qp_of(ye, &k->y) ||
      !quill_rounding_parse(str_attr(op, "rounding", "half_even"), &k->r))
    return false;
  k->f64 =
      quill_type_kind_of(quill_type_quant_expressed(ye)) == QUILL_TYPE_F64;
  k->lo = quill_op_attr_int(op, "act_min", k->y.qmin);
  k->hi = quill_op_attr_int(op, "act_max", k->y.qmax);
  k->lo = k->lo > k->y.qmin ? k->lo : k->y.qmin;
  k->hi = k->hi < k->y.qmax ? k->hi : k->y.qmax;
  k->fixed = quill_op_attr(op, "multiplier") != NULL;
  int64_t lim = INT64_C(1) << 24;
  k->narrow = !k->fixed && !k->f64 && k->a.bits <= 16 && k->b.bits <= 16 &&
              k->y.bits <= 16 && k->lo - k->y.zp > -lim &&
              k->hi - k->y.zp < lim && k->y.zp > -lim && k->y.zp < lim;
  return true;
}

static const quill_type *elem_of(const quill_value *v) {
  return quill_type_elem(quill_value_type(v));
}

bool cg_qadd_vec_form(const quill_op *op) {
  qbin k;
  return quill_op_opcode(op) == QUILL_OP_QADD &&
         qbin_params(op, elem_of(quill_op_operand(op, 0)),
                     elem_of(quill_op_operand(op, 1)),
                     elem_of(quill_op_result(op, 0)), &k) &&
         k.narrow;
}

bool cg_qadd_recip(const quill_op *op, float *inv_y) {
  qbin k;
  if (!qbin_params(op, elem_of(quill_op_operand(op, 0)),
                   elem_of(quill_op_operand(op, 1)),
                   elem_of(quill_op_result(op, 0)), &k) ||
      !recip_exact(&k))
    return false;
  *inv_y = k.inv_y;
  return true;
}

LLVMValueRef cg_qadd_vec(cg *c, const quill_op *op, bool recip, float inv_y,
                         LLVMValueRef a, LLVMValueRef b) {
  qbin k;
  qbin_params(op, elem_of(quill_op_operand(op, 0)),
              elem_of(quill_op_operand(op, 1)), elem_of(quill_op_result(op, 0)),
              &k);
  k.recip = recip;
  k.inv_y = inv_y;
  return qbin_f32_ab(c, &k, a, b, LLVMGetVectorSize(LLVMTypeOf(a)));
}

LLVMValueRef cg_qadd_vec_sat(cg *c, const quill_op *op, bool recip,
                             float inv_y, unsigned conv_operand,
                             int64_t conv_zp, LLVMValueRef dconv,
                             LLVMValueRef other, int64_t smin, int64_t smax) {
  qbin k;
  if (!qbin_params(op, elem_of(quill_op_operand(op, 0)),
                   elem_of(quill_op_operand(op, 1)),
                   elem_of(quill_op_result(op, 0)), &k) ||
      !k.add || !k.narrow)
    return NULL;
  const qp *pc = conv_operand == 0 ? &k.a : &k.b;
  const qp *po = conv_operand == 0 ? &k.b : &k.a;
  float sc = (float)pc->scale, so = (float)po->scale;
  float sy = (float)k.y.scale;
  double iq = recip ? (double)inv_y : 1.0 / (double)sy;
  /* operands of at most 16 bits: |differences| <= 2^16, so the quotient
   * is finite (no NaN to make 0) and converts without overflow */
  double bound = (65536.0 * fabs(sc) + 65536.0 * fabs(so)) * fabs(iq) * 1.01;
  if (pc->zp != conv_zp || !isfinite(sc) || !isfinite(so) || !isfinite(iq) ||
      !(bound < 1073741824.0))
    return NULL;
  unsigned w = LLVMGetVectorSize(LLVMTypeOf(other));
  LLVMTypeRef fv = LLVMVectorType(c->t_f32, w);
  LLVMValueRef d_o =
      LLVMBuildSub(c->b, other, cg_splat(c, cg_i32c(c, po->zp), w), "");
  LLVMValueRef fo = LLVMBuildFMul(c->b, LLVMBuildSIToFP(c->b, d_o, fv, ""),
                                  cg_splat(c, cg_f32c(c, so), w), "");
  LLVMValueRef fc = LLVMBuildFMul(c->b, dconv, cg_splat(c, cg_f32c(c, sc), w),
                                  "");
  LLVMValueRef x = LLVMBuildFAdd(c->b, fc, fo, ""); /* commutes exactly */
  LLVMValueRef q =
      recip ? LLVMBuildFMul(c->b, x, cg_splat(c, cg_f32c(c, inv_y), w), "")
            : LLVMBuildFDiv(c->b, x, cg_splat(c, cg_f32c(c, sy), w), "");
  LLVMTypeRef iv = LLVMVectorType(c->t_i32, w);
  LLVMValueRef zy = cg_splat(c, cg_i32c(c, k.y.zp), w);
  if (k.r == QUILL_ROUND_HALF_EVEN && k.lo <= smin && k.hi >= smax) {
    /* the caller's saturation to [smin, smax] is the clamp */
    LLVMTypeRef ov[2] = {iv, fv};
    return LLVMBuildAdd(c->b, cg_intrinsic(c, "llvm.lrint", ov, 2, &q, 1), zy,
                        "");
  }
  LLVMValueRef lo = cg_splat(c, cg_f32c(c, (double)(k.lo - k.y.zp)), w);
  LLVMValueRef hi = cg_splat(c, cg_f32c(c, (double)(k.hi - k.y.zp)), w);
  return LLVMBuildAdd(
      c->b, LLVMBuildFPToSI(c->b, cg_fclamp(c, cg_round(c, q, k.r), lo, hi), iv, ""),
      zy, "");
}

CG_LOWER(cg_lower_qbinary) {
  if (cg_epi_is_fused(op))
    return QUILL_OK; /* computed in a qmatmul's epilogue (fuse_epi.c) */
  if (cg_qadd_is_fused(c, op))
    return QUILL_OK; /* emitted with the conv that produces an operand */
  return cg_qbinary_emit(c, op);
}

quill_status cg_qbinary_emit(cg *c, const quill_op *op) {
  qbin k;
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  cg_view ins[2];
  for (unsigned i = 0; i < 2; i++) {
    cg_view v = cg_value_view(c, quill_op_operand(op, i));
    ins[i] = cg_view_broadcast(&v, y.rank, y.dims);
  }
  if (!qbin_params(op, ins[0].elem, ins[1].elem, y.elem, &k)) {
    if (!qp_of(ins[0].elem, &k.a) || !qp_of(ins[1].elem, &k.b) ||
        !qp_of(y.elem, &k.y))
      return cg_op_error(c, "expects per-tensor quantized operands and result");
    return cg_op_error(c, "unknown 'rounding'");
  }
  k.recip = recip_exact(&k);
  quill_status st = QUILL_OK;
  if (k.fixed) {
    size_t n = k.add ? 3 : 1;
    int64_t m[3], s[3];
    if (quill_op_attr_ints(op, "multiplier", m, 3) != (int64_t)n ||
        quill_op_attr_ints(op, "shift", s, 3) != (int64_t)n)
      return cg_op_error(c, "'multiplier' and 'shift' must be int lists of "
                            "the op's length");
    bool ok;
    if (k.add) {
      unsigned bits = k.a.bits > k.b.bits ? k.a.bits : k.b.bits;
      k.left =
          (int)quill_op_attr_int(op, "left_shift", quill_qadd_left_shift(bits));
      ok = k.left >= 0 && k.left <= 31 - (int)bits &&
           one_fixed(c, &k.ra, m[0], s[0], k.r, true, 0, 0, 0) &&
           one_fixed(c, &k.rb, m[1], s[1], k.r, true, 0, 0, 0) &&
           one_fixed(c, &k.ry, m[2], s[2], k.r, false, k.y.zp, k.lo, k.hi);
    } else {
      ok = one_fixed(c, &k.ry, m[0], s[0], k.r, false, k.y.zp, k.lo, k.hi);
    }
    if (!ok)
      st = c->status ? c->status
                     : cg_op_error(c, "'multiplier', 'shift' or 'left_shift' "
                                      "out of range");
  }
  if (!st)
    cg_map(c, quill_op_name(op), &y, 2, ins, qbin_fn, &k);
  cg_requant_free(c, &k.ra);
  cg_requant_free(c, &k.rb);
  cg_requant_free(c, &k.ry);
  return st ? st : c->status;
}

/* ---- lut -------------------------------------------------------------------
 */

typedef struct lutctx {
  const quill_type *xe;
  LLVMValueRef table;
  LLVMTypeRef yt;
  int64_t base;
  unsigned yb;
} lutctx;

static LLVMValueRef lut_fn(cg *c, void *ud, LLVMValueRef *in) {
  lutctx *k = ud;
  LLVMValueRef i = LLVMBuildSub(c->b, cg_widen_int(c, k->xe, in[0], c->t_i64),
                                cg_i64c(c, k->base), "");
  return cg_load(c, k->yt, cg_gep(c, k->yt, k->table, i), k->yb);
}

/* The zmm form: x and y 8-bit, dense and of one layout, on the zmm VNNI
 * paths of a CPU with AVX512-VBMI. 64 bytes per step: i = x - base
 * (x ^ 0x80 for i8 storage), two vpermi2b over the table's halves of 128
 * entries (their low 7 bits of i), the half chosen by i's bit 7; one task
 * per 4 KB, the last vector masked. The scalar form's per-byte loads ran
 * at 2.4 GB/s (EfficientNet-B0's SiLU tables: 4.9 of its 10.5 ms). */
bool cg_lut_zmm_applies(cg *c, const cg_view *y, const cg_view *x) {
  const cg_target *t = c->tgt;
  if (!t->x86 || !t->avx512vbmi ||
      (t->isa != QUILL_LLVM_ISA_AVX512_VNNI && t->isa != QUILL_LLVM_ISA_AMX))
    return false;
  if (quill_type_bit_width(quill_type_quant_storage(x->elem)) != 8 ||
      quill_type_elem_bytes(y->elem) != 1 || x->rank != y->rank)
    return false;
  /* the same strides, dense in some dimension order (NHWC too) */
  bool used[QUILL_MAX_RANK] = {false};
  int64_t s = 1;
  for (unsigned d = 0; d < x->rank; d++) {
    if (x->dims[d] != y->dims[d] ||
        (x->dims[d] > 1 && x->strides[d] != y->strides[d]))
      return false;
    used[d] = x->dims[d] == 1;
  }
  for (unsigned k = 0; k < x->rank; k++) {
    unsigned best = QUILL_MAX_RANK;
    for (unsigned d = 0; d < x->rank; d++)
      if (!used[d] && x->strides[d] == s)
        best = d;
    if (best == QUILL_MAX_RANK)
      break;
    used[best] = true;
    s *= x->dims[best];
  }
  for (unsigned d = 0; d < x->rank; d++)
    if (!used[d])
      return false;
  return true;
}

static void lut_zmm(cg *c, const char *name, cg_view *y, cg_view *x,
                    LLVMValueRef table) {
  enum { TASK = 4096 };
  int64_t n = 1;
  for (unsigned d = 0; d < y->rank; d++)
    n *= y->dims[d];
  bool sx = quill_type_is_signed(quill_type_quant_storage(x->elem));
  cg_stage_begin(c, name, (n + TASK - 1) / TASK);
  cg_stage_work(c, (double)n * 0.01);
  LLVMTypeRef b64 = LLVMVectorType(c->t_i8, 64);
  LLVMValueRef xb = cg_view_base(c, x), yb = cg_view_base(c, y);
  LLVMValueRef tab[4];
  for (int h = 0; h < 4; h++)
    tab[h] = cg_load(c, b64, cg_gep8(c, table, cg_i64c(c, 64 * h)), 1);
  cg_loop lt, li;
  cg_loop_begin(c, &lt, c->t0, c->t1, 1);
  LLVMValueRef lo = LLVMBuildMul(c->b, lt.i, cg_i64c(c, TASK), "");
  LLVMValueRef hi = cg_min_s(
      c, LLVMBuildAdd(c->b, lo, cg_i64c(c, TASK), ""), cg_i64c(c, n));
  cg_loop_begin(c, &li, lo, hi, 64);
  /* lanes below hi - i: the bits of (1 << left) - 1, all at 64 or more */
  LLVMValueRef left = LLVMBuildSub(c->b, hi, li.i, "");
  LLVMValueRef bits = LLVMBuildSelect(
      c->b, LLVMBuildICmp(c->b, LLVMIntSGE, left, cg_i64c(c, 64), ""),
      cg_i64c(c, -1),
      LLVMBuildSub(c->b, LLVMBuildShl(c->b, cg_i64c(c, 1), left, ""),
                   cg_i64c(c, 1), ""),
      "");
  LLVMValueRef mask = LLVMBuildBitCast(
      c->b, bits, LLVMVectorType(LLVMInt1TypeInContext(c->lc), 64), "");
  LLVMTypeRef ov[2] = {b64, c->t_ptr};
  LLVMValueRef v = cg_intrinsic(
      c, "llvm.masked.load", ov, 2,
      (LLVMValueRef[]){cg_gep8(c, xb, li.i), cg_i32c(c, 1), mask,
                       LLVMConstNull(b64)},
      4);
  if (sx)
    v = LLVMBuildXor(c->b, v, cg_intc(b64, 0x80), "");
  LLVMValueRef r0 = cg_intrinsic(c, "llvm.x86.avx512.vpermi2var.qi.512", NULL,
                                 0, (LLVMValueRef[]){tab[0], v, tab[1]}, 3);
  LLVMValueRef r1 = cg_intrinsic(c, "llvm.x86.avx512.vpermi2var.qi.512", NULL,
                                 0, (LLVMValueRef[]){tab[2], v, tab[3]}, 3);
  LLVMValueRef top = LLVMBuildICmp(c->b, LLVMIntSLT, v, LLVMConstNull(b64), "");
  LLVMValueRef r = LLVMBuildSelect(c->b, top, r1, r0, "");
  cg_intrinsic(c, "llvm.masked.store", ov, 2,
               (LLVMValueRef[]){r, cg_gep8(c, yb, li.i), cg_i32c(c, 1), mask},
               4);
  cg_loop_end(c, &li);
  cg_loop_end(c, &lt);
  cg_stage_end(c);
}

void cg_lut_map(cg *c, const char *name, cg_view *y, cg_view *x,
                LLVMValueRef table) {
  if (cg_lut_zmm_applies(c, y, x)) {
    lut_zmm(c, name, y, x, table);
    return;
  }
  lutctx k;
  k.xe = x->elem;
  k.table = table;
  k.yt = cg_elem_type(c, y->elem);
  k.base = quill_type_int_min(quill_type_quant_storage(x->elem));
  k.yb = (unsigned)quill_type_elem_bytes(y->elem);
  /* the table holds the result's storage values: widen them as such */
  cg_map(c, name, y, 1, x, lut_fn, &k);
}

CG_LOWER(cg_lower_lut) {
  if (cg_epi_is_fused(op))
    return QUILL_OK; /* computed in a qmatmul's epilogue (fuse_epi.c) */
  cg_view x = cg_value_view(c, quill_op_operand(op, 0));
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  const quill_attr *t = quill_op_attr(op, "table");
  if (!quill_type_is_quant(x.elem) || !t ||
      quill_attr_kind_of(t) != QUILL_ATTR_DENSE)
    return cg_op_error(c, "expects a quantized operand and a dense 'table'");
  quill_type *st = quill_type_quant_storage(x.elem);
  unsigned bits = quill_type_bit_width(st);
  int64_t entries = bits <= 16 ? INT64_C(1) << bits : 0;
  quill_type *te = quill_type_elem(quill_attr_dense_type(t));
  if (!entries ||
      quill_type_num_elements(quill_attr_dense_type(t)) != entries ||
      quill_type_elem_bytes(te) != quill_type_elem_bytes(y.elem))
    return cg_op_error(c, "'table' must have one entry per operand value");
  cg_lut_map(c, "lut", &y, &x,
             cg_const_global(c, "lut", quill_attr_dense_data(t),
                             quill_attr_dense_size(t)));
  return c->status;
}
