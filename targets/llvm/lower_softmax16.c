/*
 * lower_softmax16.c - softmax in TFLite's int16 form (tflite-int16x8: i16
 * operand and result with zero point 0, the result at 1/32768) and in its
 * int8 form (the last section: cg_lower_softmax_i8), the
 * integer algorithm of ir/tfl_int16.c in portable scalar loops, with the
 * parameters and both 513-entry tables computed at compile time by the
 * same helper the reference interpreter calls (quill_tfl16_softmax_init),
 * so compiled code and `quill run` give the same bits.
 *
 * One task per row (the other dims, in logical order); per row:
 *
 *   mx  = max x[k]
 *   e_k = LUTLookup(exp_lut, sat16(MBQM(x[k] - mx) + 32767))   -> y[k]
 *   sum = sum e_k                                   (Q16.15, int32)
 *   lz  = clz(sum); inv = LUTLookup(recip_lut,
 *         sat16((((i64)sum << (lz - 1)) + 2^13 >> 14) - 3 * 2^15))
 *   y[k] = clamp((e_k * inv + 2^(30 - lz)) >> (31 - lz), 0, 32767)
 *
 * MBQM is TFLite's MultiplyByQuantizedMultiplier (cg_requant_apply with
 * the tflite rounding); LUTLookup interpolates 128 inputs per segment.
 */
#include "targets/llvm/cg.h"

#include "ir/tfl_int16.h"
#include "ir/tfl_int8.h"

/* TFLite's LUTLookup of an i32 value in [-32768, 32767]: i32 result. */
static LLVMValueRef lut_lookup(cg *c, LLVMValueRef lut, LLVMValueRef v) {
  LLVMValueRef idx = LLVMBuildAdd(
      c->b, LLVMBuildAShr(c->b, v, cg_i32c(c, 7), ""), cg_i32c(c, 256), "");
  idx = LLVMBuildSExt(c->b, idx, c->t_i64, "");
  LLVMValueRef off = LLVMBuildAnd(c->b, v, cg_i32c(c, 0x7f), "");
  LLVMValueRef base = LLVMBuildSExt(
      c->b, cg_load(c, c->t_i16, cg_gep(c, c->t_i16, lut, idx), 2), c->t_i32,
      "");
  LLVMValueRef next = LLVMBuildSExt(
      c->b,
      cg_load(c, c->t_i16,
              cg_gep(c, c->t_i16, lut,
                     LLVMBuildAdd(c->b, idx, cg_i64c(c, 1), "")),
              2),
      c->t_i32, "");
  LLVMValueRef slope = LLVMBuildSub(c->b, next, base, "");
  LLVMValueRef d = LLVMBuildAShr(
      c->b,
      LLVMBuildAdd(c->b, LLVMBuildMul(c->b, slope, off, ""), cg_i32c(c, 64),
                   ""),
      cg_i32c(c, 7), "");
  /* the int16 result of base + delta */
  LLVMValueRef r = LLVMBuildTrunc(c->b, LLVMBuildAdd(c->b, base, d, ""),
                                  c->t_i16, "");
  return LLVMBuildSExt(c->b, r, c->t_i32, "");
}

static LLVMValueRef sat16(cg *c, LLVMValueRef v) {
  return cg_min_s(c, cg_max_s(c, v, cg_i32c(c, -32768)), cg_i32c(c, 32767));
}

CG_SUPPORTS(cg_supports_softmax) {
  const quill_type *xe =
      quill_type_elem(quill_value_type(quill_op_operand(op, 0)));
  const quill_type *ye =
      quill_type_elem(quill_value_type(quill_op_result(op, 0)));
  if (quill_op_opcode(op) == QUILL_OP_SOFTMAX &&
      (quill_tfl16_types(xe, ye) || quill_tfl8_softmax_types(xe, ye)))
    return NULL;
  return cg_supports_float(op);
}

bool cg_softmax_is_integer(const quill_op *op) {
  return quill_type_is_quant(
      quill_type_elem(quill_value_type(quill_op_operand(op, 0))));
}

CG_LOWER(cg_lower_softmax_int) {
  if (quill_tfl8_softmax_types(
          quill_type_elem(quill_value_type(quill_op_operand(op, 0))),
          quill_type_elem(quill_value_type(quill_op_result(op, 0)))))
    return cg_lower_softmax_i8(c, op);
  cg_view x = cg_value_view(c, quill_op_operand(op, 0));
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  unsigned r = x.rank, ax;
  quill_status ast = cg_op_axis(c, r, &ax);
  if (ast)
    return ast;
  quill_tfl16_softmax p;
  if (!quill_tfl16_softmax_init(&p, quill_type_quant_scales(x.elem)[0], 1.0))
    return cg_op_error(c, "the input scale has no int16 softmax rescale");
  int64_t len = x.dims[ax], rows = cg_row_count(&x, ax);
  if (rows * len == 0)
    return QUILL_OK;
  LLVMValueRef exp_lut = cg_const_global(c, "sm16_exp", p.exp_lut,
                                         sizeof p.exp_lut);
  LLVMValueRef rcp_lut = cg_const_global(c, "sm16_rcp", p.recip_lut,
                                         sizeof p.recip_lut);
  int32_t mult = p.multiplier, shift = p.shift;
  cg_requant rq = {.raw = false, .r = QUILL_ROUND_TFLITE, .fixed = true,
                   .n = 1, .mult = &mult, .shift = &shift, .scale = NULL,
                   .zp = 0, .lo = INT32_MIN, .hi = INT32_MAX, .g_mult = NULL,
                   .g_shift = NULL, .g_scale = NULL, .pad = 0,
                   .noclamp = false, .epi = NULL};
  cg_stage_begin(c, quill_op_name(op), rows);
  LLVMValueRef xb = cg_view_base(c, &x), yb = cg_view_base(c, &y);
  cg_loop lt, lk;
  cg_loop_begin(c, &lt, c->t0, c->t1, 1);
  LLVMValueRef ox, oy;
  cg_row_offsets(c, lt.i, &x, &y, ax, &ox, &oy);
#define AT(base, o, s, k)                                                      \
  cg_gep(c, c->t_i16, base,                                                    \
         LLVMBuildAdd(c->b, o, LLVMBuildMul(c->b, k, cg_i64c(c, s), ""), ""))
  LLVMValueRef mxv = cg_var(c, c->t_i32, "max"), sumv = cg_var(c, c->t_i32, "sum");
  cg_store(c, cg_i32c(c, -32768), mxv, 4);
  cg_store(c, cg_i32c(c, 0), sumv, 4);
  cg_for(c, &lk, 0, len, 1);
  {
    LLVMValueRef v = LLVMBuildSExt(
        c->b, cg_load(c, c->t_i16, AT(xb, ox, x.strides[ax], lk.i), 2),
        c->t_i32, "");
    cg_store(c, cg_max_s(c, v, cg_load(c, c->t_i32, mxv, 4)), mxv, 4);
  }
  cg_loop_end(c, &lk);
  LLVMValueRef mx = cg_load(c, c->t_i32, mxv, 4);
  cg_for(c, &lk, 0, len, 1);
  {
    LLVMValueRef v = LLVMBuildSExt(
        c->b, cg_load(c, c->t_i16, AT(xb, ox, x.strides[ax], lk.i), 2),
        c->t_i32, "");
    LLVMValueRef s = cg_requant_apply(c, &rq, LLVMBuildSub(c->b, v, mx, ""),
                                      NULL, false);
    LLVMValueRef e = lut_lookup(
        c, exp_lut, sat16(c, LLVMBuildAdd(c->b, s, cg_i32c(c, 32767), "")));
    cg_store(c, LLVMBuildTrunc(c->b, e, c->t_i16, ""),
             AT(yb, oy, y.strides[ax], lk.i), 2);
    cg_store(c, LLVMBuildAdd(c->b, cg_load(c, c->t_i32, sumv, 4), e, ""), sumv,
             4);
  }
  cg_loop_end(c, &lk);
  LLVMValueRef sum = cg_load(c, c->t_i32, sumv, 4);
  LLVMTypeRef ov = c->t_i32;
  LLVMValueRef cargs[2] = {sum, LLVMConstInt(c->t_i1, 0, 0)};
  LLVMValueRef lz = cg_intrinsic(c, "llvm.ctlz", &ov, 1, cargs, 2);
  LLVMValueRef lz64 = LLVMBuildZExt(c->b, lz, c->t_i64, "");
  LLVMValueRef sh = LLVMBuildShl(c->b, LLVMBuildSExt(c->b, sum, c->t_i64, ""),
                                 LLVMBuildSub(c->b, lz64, cg_i64c(c, 1), ""),
                                 "");
  sh = LLVMBuildAShr(c->b, LLVMBuildAdd(c->b, sh, cg_i64c(c, 1 << 13), ""),
                     cg_i64c(c, 14), "");
  sh = LLVMBuildSub(c->b, sh, cg_i64c(c, (1 << 15) + (1 << 16)), "");
  sh = cg_min_s(c, cg_max_s(c, sh, cg_i64c(c, -32768)), cg_i64c(c, 32767));
  LLVMValueRef inv = LLVMBuildSExt(
      c->b, lut_lookup(c, rcp_lut, LLVMBuildTrunc(c->b, sh, c->t_i32, "")),
      c->t_i64, "");
  LLVMValueRef rs = LLVMBuildSub(c->b, cg_i64c(c, 31), lz64, "");
  LLVMValueRef rnd = LLVMBuildShl(
      c->b, cg_i64c(c, 1), LLVMBuildSub(c->b, rs, cg_i64c(c, 1), ""), "");
  cg_for(c, &lk, 0, len, 1);
  {
    LLVMValueRef ptr = AT(yb, oy, y.strides[ax], lk.i);
    LLVMValueRef e = LLVMBuildSExt(c->b, cg_load(c, c->t_i16, ptr, 2), c->t_i64,
                                   "");
    LLVMValueRef v = LLVMBuildAShr(
        c->b, LLVMBuildAdd(c->b, LLVMBuildMul(c->b, e, inv, ""), rnd, ""), rs,
        "");
    v = cg_min_s(c, cg_max_s(c, v, cg_i64c(c, 0)), cg_i64c(c, 32767));
    cg_store(c, LLVMBuildTrunc(c->b, v, c->t_i16, ""), ptr, 2);
  }
  cg_loop_end(c, &lk);
#undef AT
  cg_loop_end(c, &lt);
  cg_stage_end(c);
  return c->status;
}

/* ---- int8 ------------------------------------------------------------------
 *
 * Softmax in TFLite's int8 form (tflite-int8: i8
 * operand, i8 result at 1/256 with zero point -128), the integer algorithm
 * of ir/tfl_int16.c in portable scalar loops. The parameters and the two
 * 256-entry tables (exp of each difference to the row maximum in Q0.31,
 * and its Q12.19 term of the sum) are computed at compile time by the
 * helper the reference interpreter calls (quill_tfl8_softmax_init), so
 * compiled code and `quill run` give the same bits.
 *
 * One task per row (the other dims, in logical order); per row:
 *
 *   mx   = max x[k]
 *   sum  = sum exp_acc[mx - x[k]]                      (int32, wrapping)
 *   lz   = ctlz(sum); nbou = 12 - lz
 *   f    = (u32)((u64)sum << lz) - 2^31                (Q0.31)
 *   half = (f + 2^31 - 1 + sign) / 2;  r = 48/17 - 32/17 * half  (Q2.29)
 *   3 x  r += sat(SRDHM(r, 2^29 - SRDHM(half, r)) << 2)
 *   inv  = sat(r << 1)                                 (1 / (1 + f), Q0.31)
 *   y[k] = clamp(RDBPOT(SRDHM(inv, exp[mx - x[k]]), nbou + 23) - 128)
 *
 * SRDHM is gemmlowp's SaturatingRoundingDoublingHighMul, (a * b + 2^30)
 * >> 31 in i64 (the nudge and truncation of gemmlowp are this floor for
 * either sign; requant.c), RDBPOT its RoundingDivideByPOT, here in i64 so
 * that shifts of 32 and more are exact (ir/tfl_int16.c says why).
 */

/* SRDHM of two i32 values: i32 (INT32_MAX for INT32_MIN * INT32_MIN). */
static LLVMValueRef srdhm(cg *c, LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef p = LLVMBuildMul(c->b, LLVMBuildSExt(c->b, a, c->t_i64, ""),
                                LLVMBuildSExt(c->b, b, c->t_i64, ""), "");
  p = LLVMBuildAShr(c->b, LLVMBuildAdd(c->b, p, cg_i64c(c, INT64_C(1) << 30),
                                       ""),
                    cg_i64c(c, 31), "");
  /* only INT32_MIN^2 leaves the i32 range: 2^31 -> INT32_MAX */
  p = cg_min_s(c, p, cg_i64c(c, INT32_MAX));
  return LLVMBuildTrunc(c->b, p, c->t_i32, "");
}

/* SaturatingRoundingMultiplyByPOT<e>, e > 0: a saturating left shift. */
static LLVMValueRef mul_pot_sat(cg *c, LLVMValueRef x, int e) {
  LLVMValueRef w = LLVMBuildShl(c->b, LLVMBuildSExt(c->b, x, c->t_i64, ""),
                                cg_i64c(c, e), "");
  w = cg_min_s(c, cg_max_s(c, w, cg_i64c(c, INT32_MIN)), cg_i64c(c, INT32_MAX));
  return LLVMBuildTrunc(c->b, w, c->t_i32, "");
}

/* 1 / (1 + f) for f in Q0.31 (gemmlowp's one_over_one_plus_x_for_x_in_0_1;
 * i32 adds wrap as the kernel's do). */
static LLVMValueRef one_over_one_plus(cg *c, LLVMValueRef f) {
  LLVMValueRef s = LLVMBuildAdd(c->b, LLVMBuildSExt(c->b, f, c->t_i64, ""),
                                cg_i64c(c, INT32_MAX), "");
  LLVMValueRef sign = LLVMBuildSelect(
      c->b, LLVMBuildICmp(c->b, LLVMIntSGE, s, cg_i64c(c, 0), ""),
      cg_i64c(c, 1), cg_i64c(c, -1), "");
  LLVMValueRef half = LLVMBuildTrunc(
      c->b, LLVMBuildSDiv(c->b, LLVMBuildAdd(c->b, s, sign, ""), cg_i64c(c, 2),
                          ""),
      c->t_i32, "");
  LLVMValueRef x = LLVMBuildAdd(c->b, cg_i32c(c, 1515870810),
                                srdhm(c, half, cg_i32c(c, -1010580540)), "");
  for (int i = 0; i < 3; i++) {
    LLVMValueRef om = LLVMBuildSub(c->b, cg_i32c(c, 1 << 29),
                                   srdhm(c, half, x), "");
    x = LLVMBuildAdd(c->b, x, mul_pot_sat(c, srdhm(c, x, om), 2), "");
  }
  return mul_pot_sat(c, x, 1);
}

CG_LOWER(cg_lower_softmax_i8) {
  cg_view x = cg_value_view(c, quill_op_operand(op, 0));
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  unsigned r = x.rank, ax;
  quill_status ast = cg_op_axis(c, r, &ax);
  if (ast)
    return ast;
  quill_tfl8_softmax p;
  if (!quill_tfl8_softmax_init(&p, quill_type_quant_scales(x.elem)[0], 1.0))
    return cg_op_error(c, "the input scale is too small for TFLite's int8 "
                          "softmax rescale");
  int64_t len = x.dims[ax], rows = cg_row_count(&x, ax);
  if (rows * len == 0)
    return QUILL_OK;
  LLVMValueRef exp_t = cg_const_global(c, "sm8_exp", p.exp, sizeof p.exp);
  LLVMValueRef acc_t = cg_const_global(c, "sm8_acc", p.exp_acc,
                                       sizeof p.exp_acc);
  cg_stage_begin(c, quill_op_name(op), rows);
  LLVMValueRef xb = cg_view_base(c, &x), yb = cg_view_base(c, &y);
  cg_loop lt, lk;
  cg_loop_begin(c, &lt, c->t0, c->t1, 1);
  LLVMValueRef ox, oy;
  cg_row_offsets(c, lt.i, &x, &y, ax, &ox, &oy);
#define AT(base, o, s, k)                                                      \
  cg_gep(c, c->t_i8, base,                                                     \
         LLVMBuildAdd(c->b, o, LLVMBuildMul(c->b, k, cg_i64c(c, s), ""), ""))
#define LOADX(k)                                                               \
  LLVMBuildSExt(c->b, cg_load(c, c->t_i8, AT(xb, ox, x.strides[ax], k), 1),    \
                c->t_i32, "")
  /* the table entry of x[k]: index mx - x[k] in [0, 255] */
#define ENTRY(tab, mx, k)                                                      \
  cg_load(c, c->t_i32,                                                         \
          cg_gep(c, c->t_i32, tab,                                             \
                 LLVMBuildZExt(c->b, LLVMBuildSub(c->b, mx, LOADX(k), ""),     \
                               c->t_i64, "")),                                 \
          4)
  LLVMValueRef mxv = cg_var(c, c->t_i32, "max");
  LLVMValueRef sumv = cg_var(c, c->t_i32, "sum");
  cg_store(c, cg_i32c(c, -128), mxv, 4);
  cg_store(c, cg_i32c(c, 0), sumv, 4);
  cg_for(c, &lk, 0, len, 1);
  cg_store(c, cg_max_s(c, LOADX(lk.i), cg_load(c, c->t_i32, mxv, 4)), mxv, 4);
  cg_loop_end(c, &lk);
  LLVMValueRef mx = cg_load(c, c->t_i32, mxv, 4);
  cg_for(c, &lk, 0, len, 1);
  cg_store(c, LLVMBuildAdd(c->b, cg_load(c, c->t_i32, sumv, 4),
                           ENTRY(acc_t, mx, lk.i), ""),
           sumv, 4);
  cg_loop_end(c, &lk);
  /* GetReciprocal: normalise the Q12.19 sum, 1 / (1 + f) */
  LLVMValueRef sum = cg_load(c, c->t_i32, sumv, 4);
  LLVMTypeRef ov = c->t_i32;
  LLVMValueRef cargs[2] = {sum, LLVMConstInt(c->t_i1, 0, 0)};
  LLVMValueRef lz = cg_intrinsic(c, "llvm.ctlz", &ov, 1, cargs, 2);
  LLVMValueRef f = LLVMBuildShl(c->b, LLVMBuildZExt(c->b, sum, c->t_i64, ""),
                                LLVMBuildZExt(c->b, lz, c->t_i64, ""), "");
  f = LLVMBuildSub(c->b, LLVMBuildTrunc(c->b, f, c->t_i32, ""),
                   cg_i32c(c, INT32_MIN), "");
  LLVMValueRef inv = one_over_one_plus(c, f);
  /* the final shift nbou + 23 = 35 - lz, in [3, 35] */
  LLVMValueRef k = LLVMBuildSub(c->b, cg_i64c(c, 35),
                                LLVMBuildZExt(c->b, lz, c->t_i64, ""), "");
  LLVMValueRef mask = LLVMBuildSub(
      c->b, LLVMBuildShl(c->b, cg_i64c(c, 1), k, ""), cg_i64c(c, 1), "");
  LLVMValueRef thr = LLVMBuildAShr(c->b, mask, cg_i64c(c, 1), "");
  cg_for(c, &lk, 0, len, 1);
  {
    LLVMValueRef v = LLVMBuildSExt(c->b, srdhm(c, inv, ENTRY(exp_t, mx, lk.i)),
                                   c->t_i64, "");
    LLVMValueRef t = LLVMBuildAdd(
        c->b, thr,
        LLVMBuildZExt(c->b,
                      LLVMBuildICmp(c->b, LLVMIntSLT, v, cg_i64c(c, 0), ""),
                      c->t_i64, ""),
        "");
    LLVMValueRef up = LLVMBuildZExt(
        c->b,
        LLVMBuildICmp(c->b, LLVMIntSGT, LLVMBuildAnd(c->b, v, mask, ""), t, ""),
        c->t_i64, "");
    LLVMValueRef q = LLVMBuildAdd(c->b, LLVMBuildAShr(c->b, v, k, ""), up, "");
    q = LLVMBuildAdd(c->b, q, cg_i64c(c, QUILL_TFL8_OUT_ZP), "");
    q = cg_min_s(c, cg_max_s(c, q, cg_i64c(c, -128)), cg_i64c(c, 127));
    cg_store(c, LLVMBuildTrunc(c->b, q, c->t_i8, ""),
             AT(yb, oy, y.strides[ax], lk.i), 1);
  }
  cg_loop_end(c, &lk);
#undef ENTRY
#undef LOADX
#undef AT
  cg_loop_end(c, &lt);
  cg_stage_end(c);
  return c->status;
}
