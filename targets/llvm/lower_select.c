/*
 * lower_select.c - comparisons (equal, less, greater) and where, with
 * numpy broadcasting, on any non-quantized element type the reference
 * computes them for; and the f32 conv_transpose2d.
 *
 * Both are one cg_map each over the result's dims, every operand view
 * broadcast to them (cg_view_broadcast), so transposed, sliced and NHWC
 * operands are read in place through their strides.
 *
 *   equal/less/greater  out[i] = a[i'] OP b[i'] as a bool (0 or 1 byte).
 *                       The operands have one element type (the verifier
 *                       asks for it), compared as the reference does
 *                       (kernels_eltwise.c): f32 and f64 with ordered
 *                       compares (false when either side is NaN; an f32
 *                       compare equals the reference's compare of the
 *                       values widened to double), integers and bool
 *                       widened to i64 by their storage type (signed or
 *                       zero-extended, i4/u4 as the reference reads them,
 *                       bool as 0/1), u64 compared unsigned.
 *   where               out[i] = cond[i'] != 0 ? x[i''] : y[i'''], the
 *                       selected element moved as stored (floats of any
 *                       width, integers, quantized storage). cg_map stores
 *                       integers with cg_store_int: the values the
 *                       reference copies are kept (a bool or 4-bit byte is
 *                       stored in its canonical form).
 *
 * Not handled (the supports functions say so by name): quantized or
 * f16/bf16 comparison operands (the reference rejects quantized ones;
 * f16/bf16 would need half-precision conversions the JIT does not link).
 *
 * conv_transpose2d (f32 x, weights IOHW, optional bias; any strides,
 * pads, dilations, output_padding, group, auto_pad) is a direct gather
 * loop, one task per output row: each output position sums, over the
 * kernel taps whose source lands on a whole input position ((o + pad -
 * k*d) divisible by the stride and inside the input), the group's
 * channels times the tap's weights. The reference scatters through a
 * GEMM instead, so results match to rounding (about K * 2^-24).
 */
#include <string.h>

#include "ir/shape.h"
#include "targets/llvm/cg.h"

/* ---- supports ------------------------------------------------------------ */

static quill_type *operand_elem(const quill_op *op, unsigned i) {
  return quill_type_elem(quill_value_type(quill_op_operand(op, i)));
}

CG_SUPPORTS(cg_supports_compare) {
  for (unsigned i = 0; i < 2; i++) {
    quill_type *e = operand_elem(op, i);
    if (quill_type_is_quant(e))
      return "quantized operands";
    quill_type_kind k = quill_type_kind_of(e);
    if (k == QUILL_TYPE_F16 || k == QUILL_TYPE_BF16)
      return "f16 or bf16 operands";
  }
  if (operand_elem(op, 0) != operand_elem(op, 1))
    return "operands of different element types";
  return NULL;
}

CG_SUPPORTS(cg_supports_where) {
  quill_type *ce = operand_elem(op, 0);
  if (quill_type_is_quant(ce) || quill_type_kind_of(ce) != QUILL_TYPE_BOOL)
    return "a non-bool condition";
  quill_type *re = quill_type_elem(quill_value_type(quill_op_result(op, 0)));
  if (operand_elem(op, 1) != re || operand_elem(op, 2) != re)
    return "values and result of different element types";
  return NULL;
}

/* ---- comparisons --------------------------------------------------------- */

typedef struct cmpctx {
  quill_opcode opc;
  const quill_type *elem; /* both operands' element type */
} cmpctx;

static LLVMValueRef compare_fn(cg *c, void *ud, LLVMValueRef *in) {
  const cmpctx *k = ud;
  quill_type_kind kind = quill_type_kind_of(k->elem);
  LLVMValueRef r;
  if (kind == QUILL_TYPE_F32 || kind == QUILL_TYPE_F64) {
    /* ordered: false when either side is NaN, as the reference's
     * unordered result 2 */
    LLVMRealPredicate p = k->opc == QUILL_OP_EQUAL  ? LLVMRealOEQ
                          : k->opc == QUILL_OP_LESS ? LLVMRealOLT
                                                    : LLVMRealOGT;
    r = LLVMBuildFCmp(c->b, p, in[0], in[1], "");
  } else {
    bool u = kind == QUILL_TYPE_U64;
    LLVMIntPredicate p = k->opc == QUILL_OP_EQUAL  ? LLVMIntEQ
                         : k->opc == QUILL_OP_LESS ? (u ? LLVMIntULT
                                                        : LLVMIntSLT)
                                                   : (u ? LLVMIntUGT
                                                        : LLVMIntSGT);
    LLVMValueRef a = cg_widen_int(c, k->elem, in[0], c->t_i64);
    LLVMValueRef b = cg_widen_int(c, k->elem, in[1], c->t_i64);
    r = LLVMBuildICmp(c->b, p, a, b, "");
  }
  return LLVMBuildZExt(c->b, r, c->t_i8, "");
}

CG_LOWER(cg_lower_compare) {
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  cg_view ins[2];
  for (unsigned i = 0; i < 2; i++) {
    cg_view v = cg_value_view(c, quill_op_operand(op, i));
    ins[i] = cg_view_broadcast(&v, y.rank, y.dims);
  }
  cmpctx k = {quill_op_opcode(op), ins[0].elem};
  if (quill_type_is_quant(k.elem) || ins[1].elem != k.elem)
    return cg_op_error(c, "'%s' needs two non-quantized operands of one "
                          "element type", quill_op_name(op));
  cg_map(c, quill_op_name(op), &y, 2, ins, compare_fn, &k);
  return QUILL_OK;
}

/* ---- where --------------------------------------------------------------- */

static LLVMValueRef where_fn(cg *c, void *ud, LLVMValueRef *in) {
  (void)ud;
  LLVMValueRef cond = in[0];
  LLVMValueRef take_x = LLVMBuildICmp(c->b, LLVMIntNE, cond,
                                      LLVMConstNull(LLVMTypeOf(cond)), "");
  return LLVMBuildSelect(c->b, take_x, in[1], in[2], "");
}

CG_LOWER(cg_lower_where) {
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  cg_view ins[3];
  for (unsigned i = 0; i < 3; i++) {
    cg_view v = cg_value_view(c, quill_op_operand(op, i));
    ins[i] = cg_view_broadcast(&v, y.rank, y.dims);
  }
  if (quill_type_kind_of(cg_storage(ins[0].elem)) != QUILL_TYPE_BOOL ||
      ins[1].elem != y.elem || ins[2].elem != y.elem)
    return cg_op_error(c, "'where' needs a bool condition and values of the "
                          "result's element type");
  cg_map(c, "where", &y, 3, ins, where_fn, NULL);
  return QUILL_OK;
}

/* ---- conv_transpose2d ---------------------------------------------------- */

/* The geometry of an f32 conv_transpose2d: x [N, C, H, W], weights IOHW
 * [C, Mg, KH, KW], y [N, M, OH, OW], read from the attributes as the
 * reference's quill_ref_conv_setup does (auto_pad resolved). */
typedef struct tgeom {
  int64_t N, C, H, W, M, OH, OW, KH, KW, group, Cg, Mg;
  int64_t sh, sw, dh, dw, pt, pl;
} tgeom;

static quill_status tgeom_init(cg *c, const quill_op *op, tgeom *g) {
  const quill_type *xt = quill_value_type(quill_op_operand(op, 0));
  const quill_type *wt = quill_value_type(quill_op_operand(op, 1));
  const quill_type *yt = quill_value_type(quill_op_result(op, 0));
  if (quill_type_rank(xt) != 4 || quill_type_rank(wt) != 4 ||
      quill_type_rank(yt) != 4)
    return cg_op_error(c, "conv_transpose2d operands must be 4-D");
  quill_window w;
  if (!quill_window_of_conv(op, xt, wt, true, &w))
    return cg_op_error(c, "invalid strides, dilations, pads or group");
  quill_shape xs, ws, os;
  quill_shape_of(xt, &xs);
  quill_shape_of(wt, &ws);
  if (!quill_shape_conv_transpose(&xs, &ws, &w, &os, NULL))
    return cg_op_error(c, "conv_transpose2d operand shapes do not fit");
  for (unsigned d = 0; d < 4; d++)
    if (os.dims[d] != quill_type_dim(yt, d))
      return cg_op_error(c, "result shape does not match the operands");
  *g = (tgeom){.N = xs.dims[0], .C = xs.dims[1], .H = xs.dims[2],
               .W = xs.dims[3], .M = os.dims[1], .OH = os.dims[2],
               .OW = os.dims[3], .KH = ws.dims[2], .KW = ws.dims[3],
               .group = w.group, .sh = w.strides[0], .sw = w.strides[1],
               .dh = w.dilations[0], .dw = w.dilations[1], .pt = w.pads[0],
               .pl = w.pads[1]};
  if (g->C % g->group || g->M % g->group)
    return cg_op_error(c, "channels are not divisible by 'group'");
  g->Cg = g->C / g->group;
  g->Mg = g->M / g->group;
  if (quill_op_num_operands(op) > 2 &&
      quill_type_num_elements(quill_value_type(quill_op_operand(op, 2))) !=
          g->M)
    return cg_op_error(c, "bias must have one element per output channel");
  if (quill_op_num_operands(op) > 2 &&
      quill_type_rank(quill_value_type(quill_op_operand(op, 2))) != 1)
    return cg_op_error(c, "bias must be 1-D");
  return QUILL_OK;
}

/* The input position t / s of output position o (o + pad - k * d = t) and
 * whether it exists: t >= 0, s divides t, t / s < n. */
static LLVMValueRef tap_source(cg *c, LLVMValueRef o, LLVMValueRef k,
                               int64_t pad, int64_t d, int64_t s, int64_t n,
                               LLVMValueRef *ok) {
  LLVMValueRef t = LLVMBuildSub(
      c->b, LLVMBuildAdd(c->b, o, cg_i64c(c, pad), ""),
      LLVMBuildMul(c->b, k, cg_i64c(c, d), ""), "");
  LLVMValueRef q = s == 1 ? t : LLVMBuildSDiv(c->b, t, cg_i64c(c, s), "");
  LLVMValueRef v = LLVMBuildAnd(
      c->b, LLVMBuildICmp(c->b, LLVMIntSGE, t, cg_i64c(c, 0), ""),
      LLVMBuildICmp(c->b, LLVMIntSLT, q, cg_i64c(c, n), ""), "");
  if (s != 1)
    v = LLVMBuildAnd(
        c->b, v,
        LLVMBuildICmp(c->b, LLVMIntEQ,
                      LLVMBuildSRem(c->b, t, cg_i64c(c, s), ""),
                      cg_i64c(c, 0), ""),
        "");
  *ok = v;
  return q;
}

/* base + sum idx[d] * strides[d] (f32 elements) */
static LLVMValueRef at4(cg *c, LLVMValueRef base, const cg_view *v,
                        LLVMValueRef i0, LLVMValueRef i1, LLVMValueRef i2,
                        LLVMValueRef i3) {
  LLVMValueRef idx[4] = {i0, i1, i2, i3}, o = cg_i64c(c, 0);
  for (unsigned d = 0; d < 4; d++)
    if (v->strides[d])
      o = LLVMBuildAdd(
          c->b, o, LLVMBuildMul(c->b, idx[d], cg_i64c(c, v->strides[d]), ""),
          "");
  return cg_gep(c, c->t_f32, base, o);
}

/* Gather form, one task per output row (n, oh):
 *   y[n, m, oh, ow] = bias[m] + sum over taps (i, j) whose source
 *     (h, w) = ((oh + pt - i*dh) / sh, (ow + pl - j*dw) / sw) is a whole
 *     input position, of sum over the group's channels c of
 *     x[n, c, h, w] * wt[c, m - g*Mg, i, j],
 * the channel sum per tap formed first and the taps added in (i, j)
 * order, as the reference's GEMM + col2im adds them (its GEMM sums the
 * channels in its own order: equal to rounding). */
CG_LOWER(cg_lower_conv_transpose2d) {
  tgeom g = {0};
  quill_status st = tgeom_init(c, op, &g);
  if (st)
    return st;
  cg_view x = cg_value_view(c, quill_op_operand(op, 0));
  cg_view w = cg_value_view(c, quill_op_operand(op, 1));
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  bool has_b = quill_op_num_operands(op) > 2;
  cg_view bv = has_b ? cg_value_view(c, quill_op_operand(op, 2)) : y;
  if (g.N * g.M * g.OH * g.OW == 0)
    return QUILL_OK;
  cg_stage_begin(c, "conv_transpose2d", g.N * g.OH);
  cg_stage_work(c, 1.0 * (double)(g.N * g.M * g.OH * g.OW) *
                       (double)(g.KH * g.KW * (g.Cg > 0 ? g.Cg : 1)));
  LLVMValueRef xb = cg_view_base(c, &x), wb = cg_view_base(c, &w),
               yb = cg_view_base(c, &y);
  LLVMValueRef bb = has_b ? cg_view_base(c, &bv) : NULL;
  LLVMValueRef acc = cg_var(c, LLVMArrayType2(c->t_f32, (uint64_t)g.M), "acc");
  LLVMValueRef sum = cg_var(c, c->t_f32, "sum");
  cg_loop lt, low, lm, li, lj, lc;
  cg_loop_begin(c, &lt, c->t0, c->t1, 1);
  LLVMValueRef n = LLVMBuildUDiv(c->b, lt.i, cg_i64c(c, g.OH), "");
  LLVMValueRef oh = LLVMBuildURem(c->b, lt.i, cg_i64c(c, g.OH), "");
  cg_for(c, &low, 0, g.OW, 1);
  cg_for(c, &lm, 0, g.M, 1);
  cg_store(c, cg_f32c(c, 0.0), cg_gep(c, c->t_f32, acc, lm.i), 4);
  cg_loop_end(c, &lm);
  cg_for(c, &li, 0, g.KH, 1);
  LLVMValueRef hok, h = tap_source(c, oh, li.i, g.pt, g.dh, g.sh, g.H, &hok);
  cg_if fi;
  cg_if_begin(c, &fi, hok);
  cg_for(c, &lj, 0, g.KW, 1);
  LLVMValueRef wok,
      iw = tap_source(c, low.i, lj.i, g.pl, g.dw, g.sw, g.W, &wok);
  cg_if fj;
  cg_if_begin(c, &fj, wok);
  cg_for(c, &lm, 0, g.M, 1);
  LLVMValueRef gr = LLVMBuildUDiv(c->b, lm.i, cg_i64c(c, g.Mg), "");
  LLVMValueRef ml = LLVMBuildSub(
      c->b, lm.i, LLVMBuildMul(c->b, gr, cg_i64c(c, g.Mg), ""), "");
  LLVMValueRef c0 = LLVMBuildMul(c->b, gr, cg_i64c(c, g.Cg), "");
  cg_store(c, cg_f32c(c, 0.0), sum, 4);
  cg_for(c, &lc, 0, g.Cg, 1);
  LLVMValueRef ch = LLVMBuildAdd(c->b, c0, lc.i, "");
  LLVMValueRef xv = cg_load(c, c->t_f32, at4(c, xb, &x, n, ch, h, iw), 4);
  LLVMValueRef wv =
      cg_load(c, c->t_f32, at4(c, wb, &w, ch, ml, li.i, lj.i), 4);
  cg_store(c, LLVMBuildFAdd(c->b, cg_load(c, c->t_f32, sum, 4),
                            LLVMBuildFMul(c->b, xv, wv, ""), ""),
           sum, 4);
  cg_loop_end(c, &lc);
  LLVMValueRef p = cg_gep(c, c->t_f32, acc, lm.i);
  cg_store(c, LLVMBuildFAdd(c->b, cg_load(c, c->t_f32, p, 4),
                            cg_load(c, c->t_f32, sum, 4), ""),
           p, 4);
  cg_loop_end(c, &lm);
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
