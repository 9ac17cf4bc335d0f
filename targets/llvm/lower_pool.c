/*
 * lower_pool.c - maxpool, avgpool, global_maxpool and global_avgpool on
 * 4-D tensors: f32 (the reference's float semantics) and quantized storage
 * (docs/quantization.md section 3: max moves stored values; average sums
 * the stored values of the window and divides by the counted elements:
 * tflite (s +- n/2) / n, other policies zp + round_r((s - n*zp) / n)
 * exactly in integers; global_avgpool to another quant type is the
 * requantizing mean R(sum(x - zp_x))).
 *
 * Loop nest, channels innermost so NHWC inputs vectorize:
 *
 *   task (n, oh):  for ow:  acc[0..C) = init
 *                           for (i, j) in the window, inside the image:
 *                             for c: acc[c] = max/sum(acc[c], x[n,c,ih,iw])
 *                           for c: y[n,c,oh,ow] = finish(acc[c], count)
 *
 * count is the number of taps inside the image, or with count_include_pad
 * inside the padded extent, as in the reference (a ceil_mode overhang past
 * the end padding never counts). When every window lies inside the image
 * (no padding reached, no overhang: DenseNet's 2x2 transitions), count is
 * the constant KH * KW: no bounds checks, and an 8-bit average sums in i32
 * and divides by that constant (a multiply and shifts, vectorized). Float max propagates the first NaN the
 * way the reference does; float global average sums in f64.
 */
#include <math.h>
#include <string.h>

#include "ir/shape.h"
#include "targets/llvm/cg.h"

static bool is_max(const quill_op *op) {
  quill_opcode o = quill_op_opcode(op);
  return o == QUILL_OP_MAXPOOL || o == QUILL_OP_GLOBAL_MAXPOOL;
}

CG_SUPPORTS(cg_supports_pool) {
  quill_type *xt = quill_value_type(quill_op_operand(op, 0));
  quill_type *xe = quill_type_elem(xt);
  quill_type *ye = quill_type_elem(quill_value_type(quill_op_result(op, 0)));
  if (quill_type_rank(xt) != 4)
    return "pooling of other than 4-D tensors";
  if (quill_type_is_quant(xe) || quill_type_is_quant(ye)) {
    bool mean = quill_op_opcode(op) == QUILL_OP_GLOBAL_AVGPOOL &&
                quill_type_is_quant(xe) && quill_type_is_quant(ye) &&
                quill_type_quant_axis_of(ye) < 0;
    if ((xe != ye && !mean) || quill_type_quant_axis_of(xe) >= 0)
      return "quantized operand and result of different types";
    if (quill_type_bit_width(quill_type_quant_storage(xe)) > 16)
      return "quantized storage wider than 16 bits";
    return NULL;
  }
  if (quill_type_kind_of(xe) != QUILL_TYPE_F32 || xe != ye)
    return "element types other than f32 and quantized";
  return NULL;
}

typedef struct pool_geom {
  int64_t N, C, H, W, OH, OW, KH, KW, sh, sw, dh, dw, pt, pl, pb, pr;
} pool_geom;

static quill_status geom(cg *c, const quill_op *op, pool_geom *g) {
  memset(g, 0, sizeof *g);
  quill_type *xt = quill_value_type(quill_op_operand(op, 0));
  quill_type *yt = quill_value_type(quill_op_result(op, 0));
  g->N = quill_type_dim(xt, 0);
  g->C = quill_type_dim(xt, 1);
  g->H = quill_type_dim(xt, 2);
  g->W = quill_type_dim(xt, 3);
  g->OH = quill_type_dim(yt, 2);
  g->OW = quill_type_dim(yt, 3);
  quill_opcode o = quill_op_opcode(op);
  if (o == QUILL_OP_GLOBAL_AVGPOOL || o == QUILL_OP_GLOBAL_MAXPOOL) {
    g->KH = g->H;
    g->KW = g->W;
    g->sh = g->sw = g->dh = g->dw = 1;
    g->pt = g->pl = g->pb = g->pr = 0;
    return QUILL_OK;
  }
  quill_window w;
  quill_window_init(&w, 2);
  if (quill_op_attr_ints(op, "kernel_shape", w.kernel, 2) != 2)
    return cg_op_error(c, "'kernel_shape' must have 2 entries");
  int64_t v[4];
  if (quill_op_attr_ints(op, "strides", v, 4) == 2)
    memcpy(w.strides, v, 2 * sizeof *v);
  if (quill_op_attr_ints(op, "dilations", v, 4) == 2)
    memcpy(w.dilations, v, 2 * sizeof *v);
  if (quill_op_attr_ints(op, "pads", v, 4) == 4)
    memcpy(w.pads, v, 4 * sizeof *v);
  w.ceil_mode = quill_op_attr_int(op, "ceil_mode", 0) != 0;
  const quill_attr *ap = quill_op_attr(op, "auto_pad");
  const char *aps = ap && quill_attr_kind_of(ap) == QUILL_ATTR_STRING
                        ? quill_attr_string_value(ap, NULL)
                        : "NOTSET";
  if (!strcmp(aps, "SAME_UPPER") || !strcmp(aps, "SAME_LOWER"))
    quill_window_same_pads(&w, quill_type_dims(xt) + 2, w.kernel,
                           aps[5] == 'U', false);
  quill_shape xs, os;
  quill_shape_of(xt, &xs);
  if (!quill_shape_pool(&xs, &w, &os, NULL) || os.dims[2] != g->OH ||
      os.dims[3] != g->OW)
    return cg_op_error(c, "the window does not fit the operand");
  g->KH = w.kernel[0];
  g->KW = w.kernel[1];
  g->sh = w.strides[0];
  g->sw = w.strides[1];
  g->dh = w.dilations[0];
  g->dw = w.dilations[1];
  g->pt = w.pads[0];
  g->pl = w.pads[1];
  g->pb = w.pads[2];
  g->pr = w.pads[3];
  return QUILL_OK;
}

static LLVMValueRef off4(cg *c, const cg_view *v, LLVMValueRef n,
                         LLVMValueRef ch, LLVMValueRef h, LLVMValueRef w) {
  LLVMValueRef o = LLVMBuildMul(c->b, n, cg_i64c(c, v->strides[0]), "");
  o = LLVMBuildAdd(c->b, o, LLVMBuildMul(c->b, ch, cg_i64c(c, v->strides[1]), ""), "");
  o = LLVMBuildAdd(c->b, o, LLVMBuildMul(c->b, h, cg_i64c(c, v->strides[2]), ""), "");
  return LLVMBuildAdd(c->b, o, LLVMBuildMul(c->b, w, cg_i64c(c, v->strides[3]), ""), "");
}

/* quill_div_round(num, n, r) for n > 0, on i64 or i32. */
static LLVMValueRef div_round(cg *c, LLVMValueRef num, LLVMValueRef n,
                              quill_rounding r) {
  LLVMTypeRef t = LLVMTypeOf(num);
  LLVMValueRef zero = LLVMConstInt(t, 0, 0), one = LLVMConstInt(t, 1, 0);
  if (r == QUILL_ROUND_TFLITE) { /* num > 0 ? (num + n/2)/n : (num - n/2)/n */
    LLVMValueRef h = LLVMBuildSDiv(c->b, n, LLVMConstInt(t, 2, 0), "");
    LLVMValueRef pos = LLVMBuildICmp(c->b, LLVMIntSGT, num, zero, "");
    LLVMValueRef m = LLVMBuildSelect(c->b, pos, LLVMBuildAdd(c->b, num, h, ""),
                                     LLVMBuildSub(c->b, num, h, ""), "");
    return LLVMBuildSDiv(c->b, m, n, "");
  }
  LLVMValueRef q = LLVMBuildSDiv(c->b, num, n, "");
  LLVMValueRef rem = LLVMBuildSRem(c->b, num, n, "");
  LLVMValueRef neg = LLVMBuildICmp(c->b, LLVMIntSLT, rem, zero, "");
  q = LLVMBuildSub(c->b, q, LLVMBuildZExt(c->b, neg, t, ""), "");
  rem = LLVMBuildSelect(c->b, neg, LLVMBuildAdd(c->b, rem, n, ""), rem, "");
  LLVMValueRef rest = LLVMBuildSub(c->b, n, rem, "");
  LLVMValueRef gt = LLVMBuildICmp(c->b, LLVMIntSGT, rem, rest, "");
  LLVMValueRef eq = LLVMBuildICmp(c->b, LLVMIntEQ, rem, rest, "");
  LLVMValueRef tie;
  switch (r) {
  case QUILL_ROUND_HALF_EVEN:
    tie = LLVMBuildTrunc(c->b, LLVMBuildAnd(c->b, q, one, ""), c->t_i1, "");
    break;
  case QUILL_ROUND_HALF_UP:
    tie = LLVMConstInt(c->t_i1, 1, 0);
    break;
  default:
    tie = LLVMBuildICmp(c->b, LLVMIntSGE, q, zero, "");
    break;
  }
  LLVMValueRef up = LLVMBuildOr(c->b, gt, LLVMBuildAnd(c->b, eq, tie, ""), "");
  return LLVMBuildAdd(c->b, q, LLVMBuildZExt(c->b, up, t, ""), "");
}

static LLVMValueRef incr(cg *c, LLVMValueRef var, LLVMValueRef cond) {
  LLVMValueRef v = cg_load(c, c->t_i64, var, 8);
  v = LLVMBuildAdd(c->b, v, LLVMBuildZExt(c->b, cond, c->t_i64, ""), "");
  cg_store(c, v, var, 8);
  return v;
}

static quill_status lower(cg *c, const quill_op *op) {
  pool_geom g;
  quill_status st = geom(c, op, &g);
  if (st)
    return st;
  cg_view x = cg_value_view(c, quill_op_operand(op, 0));
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  bool mx = is_max(op);
  bool quant = quill_type_is_quant(x.elem);
  bool global = quill_op_opcode(op) == QUILL_OP_GLOBAL_AVGPOOL ||
                quill_op_opcode(op) == QUILL_OP_GLOBAL_MAXPOOL;
  bool include_pad = quill_op_attr_int(op, "count_include_pad", 0) != 0;
  quill_rounding r = QUILL_ROUND_HALF_EVEN;
  const quill_attr *ra = quill_op_attr(op, "rounding");
  if (ra && quill_attr_kind_of(ra) == QUILL_ATTR_STRING &&
      !quill_rounding_parse(quill_attr_string_value(ra, NULL), &r))
    return cg_op_error(c, "unknown 'rounding'");
  if (g.N * g.C * g.OH * g.OW == 0)
    return QUILL_OK;
  /* global_avgpool to another quant type (or with multiplier/shift): the
   * requantizing mean of docs/quantization.md section 3 */
  bool mean = quant && !mx && global &&
              (x.elem != y.elem || quill_op_attr(op, "multiplier"));
  int64_t zpx = quant ? quill_type_quant_zero_points(x.elem)[0] : 0;
  cg_requant mrq;
  memset(&mrq, 0, sizeof mrq);
  if (mean) {
    double n = (double)(g.H * g.W);
    /* scale_f32 = (f32)s_x / ((f32)s_y * (f32)n): as s_x * w / s_y with
     * w = 1/n would round differently, set it directly */
    double one = 1.0;
    quill_status st2 = cg_requant_init(c, op, 1.0, &one, 1, 1, &mrq);
    if (st2) {
      cg_requant_free(c, &mrq);
      return st2;
    }
    if (!mrq.fixed)
      mrq.scale[0] = (float)quill_type_quant_scales(x.elem)[0] /
                     ((float)quill_type_quant_scales(y.elem)[0] * (float)n);
  }
  /* Every window inside the image (no padding reached, no ceil overhang):
   * the count is the constant KH * KW, and a quantized average sums in i32
   * and divides by that constant (a multiply and shifts), vectorized over
   * the channels. */
  bool whole = !global && g.pt == 0 && g.pl == 0 &&
               (g.OH - 1) * g.sh + (g.KH - 1) * g.dh < g.H &&
               (g.OW - 1) * g.sw + (g.KW - 1) * g.dw < g.W;
  bool avg32 = quant && !mx && !mean && whole && g.KH * g.KW <= 65536 &&
               quill_type_elem_bytes(cg_storage(x.elem)) == 1;
  /* accumulator element: i64 (quantized average; i32 when avg32), f32, or
   * f64 (float global avg); quantized max works on the stored integers */
  LLVMTypeRef at = quant && mx ? cg_elem_type(c, x.elem)
                   : avg32      ? c->t_i32
                   : quant      ? c->t_i64
                   : (!mx && global) ? c->t_f64 : c->t_f32;
  cg_stage_begin(c, quill_op_name(op), g.N * g.OH);
  LLVMValueRef xb = cg_view_base(c, &x), yb = cg_view_base(c, &y);
  LLVMValueRef acc = cg_var(c, LLVMArrayType2(at, (uint64_t)g.C), "acc");
  LLVMValueRef cnt = cg_var(c, c->t_i64, "cnt");
  LLVMValueRef cntp = cg_var(c, c->t_i64, "cntp");
  LLVMTypeRef xt = cg_elem_type(c, x.elem), yt = cg_elem_type(c, y.elem);
  unsigned eb = (unsigned)quill_type_elem_bytes(cg_storage(x.elem));
  int64_t smin = quant ? quill_type_int_min(cg_storage(x.elem)) : 0;
  cg_loop lt, low, lc, li, lj;
  cg_loop_begin(c, &lt, c->t0, c->t1, 1);
  LLVMValueRef n = LLVMBuildUDiv(c->b, lt.i, cg_i64c(c, g.OH), "n");
  LLVMValueRef oh = LLVMBuildURem(c->b, lt.i, cg_i64c(c, g.OH), "oh");
  cg_for(c, &low, 0, g.OW, 1);
  bool xsigned = quant && quill_type_is_signed(cg_storage(x.elem));
  /* the accumulator's alignment: its element size */
  unsigned aal = at == c->t_f64 || at == c->t_i64 ? 8
                 : at == c->t_i8                  ? 1
                 : at == c->t_i16                 ? 2
                                                  : 4;
  LLVMValueRef init = quant ? LLVMConstInt(at, (unsigned long long)(mx ? smin : 0), 1)
                      : mx  ? LLVMConstReal(at, -INFINITY)
                            : LLVMConstReal(at, 0.0);
  cg_for(c, &lc, 0, g.C, 1);
  cg_store(c, init, cg_gep(c, at, acc, lc.i), aal);
  cg_loop_end(c, &lc);
  cg_store(c, cg_i64c(c, 0), cnt, 8);
  cg_store(c, cg_i64c(c, 0), cntp, 8);
  cg_for(c, &li, 0, g.KH, 1);
  LLVMValueRef ih = LLVMBuildSub(
      c->b,
      LLVMBuildAdd(c->b, LLVMBuildMul(c->b, oh, cg_i64c(c, g.sh), ""),
                   LLVMBuildMul(c->b, li.i, cg_i64c(c, g.dh), ""), ""),
      cg_i64c(c, g.pt), "ih");
  cg_for(c, &lj, 0, g.KW, 1);
  LLVMValueRef iw = LLVMBuildSub(
      c->b,
      LLVMBuildAdd(c->b, LLVMBuildMul(c->b, low.i, cg_i64c(c, g.sw), ""),
                   LLVMBuildMul(c->b, lj.i, cg_i64c(c, g.dw), ""), ""),
      cg_i64c(c, g.pl), "iw");
  LLVMValueRef inside =
      whole ? LLVMConstInt(c->t_i1, 1, 0)
            : LLVMBuildAnd(
                  c->b, LLVMBuildICmp(c->b, LLVMIntULT, ih, cg_i64c(c, g.H), ""),
                  LLVMBuildICmp(c->b, LLVMIntULT, iw, cg_i64c(c, g.W), ""), "");
  LLVMValueRef padded = LLVMBuildAnd(
      c->b,
      LLVMBuildAnd(c->b,
                   LLVMBuildICmp(c->b, LLVMIntSGE, ih, cg_i64c(c, -g.pt), ""),
                   LLVMBuildICmp(c->b, LLVMIntSLT, ih, cg_i64c(c, g.H + g.pb),
                                 ""),
                   ""),
      LLVMBuildAnd(c->b,
                   LLVMBuildICmp(c->b, LLVMIntSGE, iw, cg_i64c(c, -g.pl), ""),
                   LLVMBuildICmp(c->b, LLVMIntSLT, iw, cg_i64c(c, g.W + g.pr),
                                 ""),
                   ""),
      "");
  incr(c, cntp, padded);
  cg_if fi;
  cg_if_begin(c, &fi, inside);
  incr(c, cnt, LLVMConstInt(c->t_i1, 1, 0));
  cg_for(c, &lc, 0, g.C, 1);
  LLVMValueRef xp = cg_gep(c, xt, xb, off4(c, &x, n, lc.i, ih, iw));
  LLVMValueRef ap = cg_gep(c, at, acc, lc.i);
  LLVMValueRef a = cg_load(c, at, ap, aal);
  LLVMValueRef v;
  if (quant && mx) {
    LLVMValueRef xv = cg_load_int(c, x.elem, xp, at);
    LLVMTypeRef it = LLVMTypeOf(a);
    v = xsigned ? cg_max_s(c, a, xv)
                : cg_intrinsic(c, "llvm.umax", &it, 1,
                               (LLVMValueRef[]){a, xv}, 2);
  } else if (quant) {
    LLVMValueRef xv = cg_load_int(c, x.elem, xp, at);
    v = LLVMBuildAdd(c->b, a, xv, "");
  } else {
    LLVMValueRef xv = cg_load(c, xt, xp, eb);
    if (mx) { /* acc = isnan(acc) ? acc : (xv > acc || isnan(xv) ? xv : acc) */
      LLVMValueRef take = LLVMBuildFCmp(c->b, LLVMRealUGT, xv, a, "");
      LLVMValueRef anan = LLVMBuildFCmp(c->b, LLVMRealUNO, a, a, "");
      v = LLVMBuildSelect(c->b, anan, a,
                          LLVMBuildSelect(c->b, take, xv, a, ""), "");
    } else {
      if (at != xt)
        xv = LLVMBuildFPExt(c->b, xv, at, "");
      v = LLVMBuildFAdd(c->b, a, xv, "");
    }
  }
  cg_store(c, v, ap, aal);
  cg_loop_end(c, &lc);
  cg_if_end(c, &fi);
  cg_loop_end(c, &lj);
  cg_loop_end(c, &li);
  /* finish */
  LLVMValueRef div = whole ? cg_i64c(c, g.KH * g.KW)
                           : cg_load(c, c->t_i64, include_pad ? cntp : cnt, 8);
  cg_for(c, &lc, 0, g.C, 1);
  LLVMValueRef a2 = cg_load(c, at, cg_gep(c, at, acc, lc.i), aal);
  LLVMValueRef res = a2;
  if (!mx && quant && mean) {
    /* requantizing mean: acc = sum(x - zp_x) as an int32 register */
    LLVMValueRef acc = LLVMBuildTrunc(
        c->b, LLVMBuildSub(c->b, a2, cg_i64c(c, zpx * g.H * g.W), ""),
        c->t_i32, "");
    res = cg_requant_apply(c, &mrq, acc, NULL, false);
  } else if (avg32) {
    /* every window whole: zp + round_r((s - n*zp) / n), or tflite's
     * (s +- n/2) / n, in i32 with n a constant */
    LLVMValueRef n32 = cg_i32c(c, g.KH * g.KW);
    res = r == QUILL_ROUND_TFLITE
              ? div_round(c, a2, n32, r)
              : LLVMBuildAdd(
                    c->b,
                    div_round(c,
                              LLVMBuildSub(c->b, a2,
                                           cg_i32c(c, g.KH * g.KW * zpx), ""),
                              n32, r),
                    cg_i32c(c, zpx), "");
  } else if (!mx && quant) {
    /* n counted positions; with count_include_pad every counted padding
     * position adds zp (the stored 0.0); an empty window gives zp */
    LLVMValueRef s0 = a2;
    if (include_pad)
      s0 = LLVMBuildAdd(
          c->b, s0,
          LLVMBuildMul(c->b,
                       LLVMBuildSub(c->b, cg_load(c, c->t_i64, cntp, 8),
                                    cg_load(c, c->t_i64, cnt, 8), ""),
                       cg_i64c(c, zpx), ""),
          "");
    LLVMValueRef n1 = cg_max_s(c, div, cg_i64c(c, 1));
    LLVMValueRef q = r == QUILL_ROUND_TFLITE
        ? div_round(c, s0, n1, r)
        : LLVMBuildAdd(c->b,
                       div_round(c, LLVMBuildSub(c->b, s0,
                                                 LLVMBuildMul(c->b, n1,
                                                              cg_i64c(c, zpx),
                                                              ""),
                                                 ""),
                                 n1, r),
                       cg_i64c(c, zpx), "");
    res = LLVMBuildSelect(c->b,
                          LLVMBuildICmp(c->b, LLVMIntEQ, div, cg_i64c(c, 0), ""),
                          cg_i64c(c, zpx), q, "");
  } else if (!mx) {
    LLVMValueRef d = LLVMBuildSIToFP(c->b, div, at, "");
    res = LLVMBuildFDiv(c->b, a2, d, "");
    res = LLVMBuildSelect(c->b,
                          LLVMBuildICmp(c->b, LLVMIntEQ, div, cg_i64c(c, 0), ""),
                          LLVMConstReal(at, NAN), res, "");
    if (at != yt)
      res = LLVMBuildFPTrunc(c->b, res, yt, "");
  }
  LLVMValueRef yp = cg_gep(c, yt, yb, off4(c, &y, n, lc.i, oh, low.i));
  if (quant)
    cg_store_int(c, y.elem, res, yp);
  else
    cg_store(c, res, yp, eb);
  cg_loop_end(c, &lc);
  cg_loop_end(c, &low);
  cg_loop_end(c, &lt);
  cg_stage_end(c);
  cg_requant_free(c, &mrq);
  return c->status;
}

CG_LOWER(cg_lower_pool) { return lower(c, op); }
CG_LOWER(cg_lower_global_pool) { return lower(c, op); }
