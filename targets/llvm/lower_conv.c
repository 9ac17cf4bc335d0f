/*
 * lower_conv.c - qconv2d: the geometry shared with the float conv, the
 * kernel-path choice, and the portable kernels.
 *
 * Every path computes, per output element (n, m, oh, ow) with group g =
 * m / Mg, the int32 sum modulo 2^32 (docs/quantization.md section 3)
 *
 *   acc = b[m] + sum_{c<Cg, i<kh, j<kw} (x[n, g*Cg+c, ih, iw] - zp_x) *
 *                                        (w[m, c, i, j] - zp_w[m])
 *
 * over the taps inside the image (padding contributes nothing), then
 * requantizes it (requant.c). i32 arithmetic wraps, which is exactly the
 * contract's modulo 2^32, so no path needs wider integers, except an op
 * with accumulator = "i64" (fuse-qdq: the worst case may leave int32): it
 * always takes the portable loops, summing sign-extended terms in i64, and
 * requantizes with cg_requant_apply_i64.
 *
 * Paths (chosen per op):
 *   - dot kernels (conv_dot.c): 8-bit activations, constant weights whose
 *     centered values fit the instruction's operand type and a constant
 *     bias, on the target's ISA (vpdpbusd zmm/ymm, vpmaddubsw/vpmaddwd, or
 *     plain LLVM vectors);
 *   - a depthwise 1x1 conv of 8-bit values (a folded BatchNorm) on the
 *     x86 paths: conv_cmap.c, a per-channel map of bytes fitted at compile
 *     time to integer arithmetic, where every channel fits;
 *   - the depthwise kernels for group == C with one output channel per
 *     group, vectorized over channels: conv_dw4.c (vpdpbusd over four
 *     kernel rows, zmm VNNI paths, f32 half_even to 8 bits) where it
 *     applies, else conv_dw.c;
 *   - portable loops (here), for everything else: any storage, runtime
 *     weights or bias. Constant weights are pre-centered into an i32 table
 *     laid out so the innermost loop runs over contiguous output channels:
 *
 *       grouped:   wc[g][i][j][c][mg]   acc[mg] += xv * wc[...][mg]
 *       Cg == 1:   wc[i][j][m]          acc[m]  += x[.., m/Mg, ..] * wc[..][m]
 *                  (depthwise: contiguous channels of NHWC input)
 */
#include <string.h>

#include "ir/shape.h"
#include "targets/llvm/conv.h"

/* ---- geometry -------------------------------------------------------------- */

quill_status cg_conv_geom_init(cg *c, const quill_op *op, cg_conv_geom *g) {
  quill_type *xt = quill_value_type(quill_op_operand(op, 0));
  quill_type *wt = quill_value_type(quill_op_operand(op, 1));
  quill_type *yt = quill_value_type(quill_op_result(op, 0));
  if (quill_type_rank(xt) != 4 || quill_type_rank(wt) != 4 ||
      quill_type_rank(yt) != 4)
    return cg_op_error(c, "operands and result must be 4-D");
  quill_window w;
  if (!quill_window_of_conv(op, xt, wt, false, &w))
    return cg_op_error(c, "invalid strides, dilations, pads or group");
  quill_shape xs, ws, os;
  quill_shape_of(xt, &xs);
  quill_shape_of(wt, &ws);
  if (!quill_shape_conv(&xs, &ws, &w, &os, NULL))
    return cg_op_error(c, "operand shapes do not fit");
  for (unsigned d = 0; d < 4; d++)
    if (os.dims[d] != quill_type_dim(yt, d))
      return cg_op_error(c, "result shape does not match the operands");
  g->N = xs.dims[0];
  g->C = xs.dims[1];
  g->H = xs.dims[2];
  g->W = xs.dims[3];
  g->M = os.dims[1];
  g->OH = os.dims[2];
  g->OW = os.dims[3];
  g->KH = ws.dims[2];
  g->KW = ws.dims[3];
  g->G = w.group;
  if (g->C % g->G || g->M % g->G)
    return cg_op_error(c, "channels are not divisible by 'group'");
  g->Cg = g->C / g->G;
  g->Mg = g->M / g->G;
  g->sh = w.strides[0];
  g->sw = w.strides[1];
  g->dh = w.dilations[0];
  g->dw = w.dilations[1];
  g->pt = w.pads[0];
  g->pl = w.pads[1];
  return QUILL_OK;
}

/* Weight bytes per ns streamed from L2/L3 or memory by one core. */
#define WEIGHT_BYTES_PER_NS 20.0

void cg_conv_work(cg *c, const cg_conv_geom *g, double macs_per_ns,
                  double ns_per_output) {
  double outs = (double)(g->N * g->M * g->OH * g->OW);
  double k = (double)(g->Cg * g->KH * g->KW);
  cg_stage_work(c, outs * k / macs_per_ns + outs * ns_per_output +
                       (double)g->M * k / WEIGHT_BYTES_PER_NS);
}

/* ---- operands ----------------------------------------------------------------- */

CG_SUPPORTS(cg_supports_qconv2d) {
  quill_type *xe = quill_type_elem(quill_value_type(quill_op_operand(op, 0)));
  quill_type *we = quill_type_elem(quill_value_type(quill_op_operand(op, 1)));
  if (!quill_type_is_quant(xe) || !quill_type_is_quant(we))
    return "non-quantized operands";
  if (quill_type_quant_axis_of(xe) >= 0 || quill_type_quant_axis_of(we) > 0)
    return "per-axis x, or w quantized along an axis other than 0";
  return NULL;
}

quill_status cg_qlinear_init(cg *c, const quill_op *op, size_t nch,
                             cg_qlinear *q) {
  memset(q, 0, sizeof *q);
  const quill_value *xv = quill_op_operand(op, 0), *wv = quill_op_operand(op, 1);
  quill_type *xe = quill_type_elem(quill_value_type(xv));
  quill_type *we = quill_type_elem(quill_value_type(wv));
  q->zpx = quill_type_quant_zero_points(xe)[0];
  q->nw = quill_type_quant_num_params(we);
  q->zpw = quill_type_quant_zero_points(we);
  q->wconst = quill_value_constant(wv);
  q->wide = quill_op_acc_i64(op);
  if (quill_op_num_operands(op) > 2) {
    const quill_value *bv = quill_op_operand(op, 2);
    q->has_bias = true;
    q->bconst = quill_value_constant(bv);
    if (quill_type_num_elements(quill_value_type(bv)) != (int64_t)nch)
      return cg_op_error(c, "bias must have one element per output channel");
  }
  return cg_requant_init(c, op, quill_type_quant_scales(xe)[0],
                         quill_type_quant_scales(we), q->nw, nch, &q->rq);
}

void cg_qlinear_free(cg *c, cg_qlinear *q) { cg_requant_free(c, &q->rq); }

int32_t cg_qlinear_bias(const cg_qlinear *q, size_t m) {
  return q->bconst ? (int32_t)quill_attr_dense_get_i64(q->bconst, m) : 0;
}

LLVMTypeRef cg_qlinear_acc_type(cg *c, const cg_qlinear *q) {
  return q->wide ? c->t_i64 : c->t_i32;
}

LLVMValueRef cg_qlinear_acc_term(cg *c, const cg_qlinear *q, LLVMValueRef v) {
  return q->wide ? LLVMBuildSExt(c->b, v, c->t_i64, "") : v;
}

LLVMValueRef cg_qlinear_acc_requant(cg *c, cg_qlinear *q, LLVMValueRef acc,
                                    LLVMValueRef ch) {
  return q->wide ? cg_requant_apply_i64(c, &q->rq, acc, ch)
                 : cg_requant_apply(c, &q->rq, acc, ch, false);
}

/* Store requantized (or raw) i32 lanes v into y at ptr. */
void cg_store_result(cg *c, const quill_type *ye, LLVMValueRef v,
                     LLVMValueRef ptr) {
  cg_store_int(c, ye, v, ptr);
}

/* ---- the portable kernel --------------------------------------------------------- */

/* *p += x * w in the accumulator type act (i32, or i64 for a wide
 * accumulator), asz bytes. */
static void acc_add(cg *c, LLVMTypeRef act, LLVMValueRef p, unsigned asz,
                    const cg_qlinear *q, LLVMValueRef xv, LLVMValueRef wv) {
  cg_store(c, LLVMBuildAdd(c->b, cg_load(c, act, p, asz),
                           LLVMBuildMul(c->b, cg_qlinear_acc_term(c, q, xv),
                                        cg_qlinear_acc_term(c, q, wv), ""),
                           ""),
           p, asz);
}

/* Load x[n, ch, ih, iw] - zp_x as i32. */
static LLVMValueRef load_x(cg *c, const cg_view *x, LLVMValueRef xb,
                           LLVMValueRef n, LLVMValueRef ch, LLVMValueRef ih,
                           LLVMValueRef iw, int64_t zpx) {
  LLVMValueRef off = LLVMBuildMul(c->b, n, cg_i64c(c, x->strides[0]), "");
  off = LLVMBuildAdd(c->b, off,
                     LLVMBuildMul(c->b, ch, cg_i64c(c, x->strides[1]), ""), "");
  off = LLVMBuildAdd(c->b, off,
                     LLVMBuildMul(c->b, ih, cg_i64c(c, x->strides[2]), ""), "");
  off = LLVMBuildAdd(c->b, off,
                     LLVMBuildMul(c->b, iw, cg_i64c(c, x->strides[3]), ""), "");
  LLVMValueRef p = cg_gep(c, cg_elem_type(c, x->elem), xb, off);
  LLVMValueRef v = cg_load_int(c, x->elem, p, c->t_i32);
  return LLVMBuildSub(c->b, v, cg_i32c(c, zpx), "");
}

/* 0 <= v < lim */
static LLVMValueRef in_range(cg *c, LLVMValueRef v, int64_t lim) {
  return LLVMBuildICmp(c->b, LLVMIntULT, v, cg_i64c(c, lim), "");
}

/* Centered constant weights in the portable layouts (see the header). */
static LLVMValueRef pack_portable(cg *c, const cg_conv_geom *g,
                                  const cg_qlinear *q) {
  size_t n = (size_t)(g->M * g->Cg * g->KH * g->KW);
  int32_t *t = quill_alloc(c->ctx, (n ? n : 1) * sizeof *t);
  if (!t) {
    c->status = QUILL_ERR_NOMEM;
    return NULL;
  }
  size_t kk = (size_t)(g->Cg * g->KH * g->KW);
  for (int64_t m = 0; m < g->M; m++) {
    int64_t zw = q->zpw[q->nw == 1 ? 0 : m];
    int64_t gr = m / g->Mg, mg = m % g->Mg;
    for (int64_t ci = 0; ci < g->Cg; ci++)
      for (int64_t i = 0; i < g->KH; i++)
        for (int64_t j = 0; j < g->KW; j++) {
          size_t src = (size_t)m * kk + (size_t)((ci * g->KH + i) * g->KW + j);
          int64_t v = quill_attr_dense_get_i64(q->wconst, src) - zw;
          size_t dst;
          if (g->Cg == 1)
            dst = (size_t)((i * g->KW + j) * g->M + m);
          else
            dst = (size_t)((((gr * g->KH + i) * g->KW + j) * g->Cg + ci) *
                               g->Mg + mg);
          t[dst] = (int32_t)(uint32_t)v;
        }
  }
  LLVMValueRef gl = cg_const_global(c, "wc", t, n * sizeof *t);
  quill_free(c->ctx, t, (n ? n : 1) * sizeof *t);
  return gl;
}

static LLVMValueRef bias_global(cg *c, const cg_qlinear *q, int64_t M) {
  int32_t *t = quill_alloc(c->ctx, (size_t)(M ? M : 1) * sizeof *t);
  if (!t) {
    c->status = QUILL_ERR_NOMEM;
    return NULL;
  }
  for (int64_t m = 0; m < M; m++)
    t[m] = cg_qlinear_bias(q, (size_t)m);
  LLVMValueRef gl = cg_const_global(c, "bias", t, (size_t)M * sizeof *t);
  quill_free(c->ctx, t, (size_t)(M ? M : 1) * sizeof *t);
  return gl;
}

/* Weight (centered) for output channel m, input channel ci of its group,
 * tap (i, j): from the packed table or loaded at run time. */
typedef struct wsrc {
  LLVMValueRef table;  /* packed constant, or NULL */
  cg_view view;        /* runtime weights */
  LLVMValueRef base, zp_table;
} wsrc;

static LLVMValueRef weight(cg *c, const cg_conv_geom *g, const wsrc *ws,
                           const cg_qlinear *q, LLVMValueRef m, LLVMValueRef ci,
                           LLVMValueRef i, LLVMValueRef j) {
  if (ws->table) {
    LLVMValueRef idx;
    if (g->Cg == 1) {
      idx = LLVMBuildAdd(
          c->b,
          LLVMBuildMul(c->b,
                       LLVMBuildAdd(c->b,
                                    LLVMBuildMul(c->b, i, cg_i64c(c, g->KW), ""),
                                    j, ""),
                       cg_i64c(c, g->M), ""),
          m, "");
    } else {
      LLVMValueRef gr = LLVMBuildUDiv(c->b, m, cg_i64c(c, g->Mg), "");
      LLVMValueRef mg = LLVMBuildURem(c->b, m, cg_i64c(c, g->Mg), "");
      idx = LLVMBuildMul(c->b, gr, cg_i64c(c, g->KH), "");
      idx = LLVMBuildMul(c->b, LLVMBuildAdd(c->b, idx, i, ""),
                         cg_i64c(c, g->KW), "");
      idx = LLVMBuildMul(c->b, LLVMBuildAdd(c->b, idx, j, ""),
                         cg_i64c(c, g->Cg), "");
      idx = LLVMBuildMul(c->b, LLVMBuildAdd(c->b, idx, ci, ""),
                         cg_i64c(c, g->Mg), "");
      idx = LLVMBuildAdd(c->b, idx, mg, "");
    }
    return cg_load(c, c->t_i32, cg_gep(c, c->t_i32, ws->table, idx), 4);
  }
  const cg_view *w = &ws->view;
  LLVMValueRef off = LLVMBuildMul(c->b, m, cg_i64c(c, w->strides[0]), "");
  off = LLVMBuildAdd(c->b, off,
                     LLVMBuildMul(c->b, ci, cg_i64c(c, w->strides[1]), ""), "");
  off = LLVMBuildAdd(c->b, off,
                     LLVMBuildMul(c->b, i, cg_i64c(c, w->strides[2]), ""), "");
  off = LLVMBuildAdd(c->b, off,
                     LLVMBuildMul(c->b, j, cg_i64c(c, w->strides[3]), ""), "");
  LLVMValueRef v = cg_load_int(c, w->elem,
                               cg_gep(c, cg_elem_type(c, w->elem), ws->base,
                                      off),
                               c->t_i32);
  LLVMValueRef zp = q->nw == 1
      ? cg_i32c(c, q->zpw[0])
      : cg_load(c, c->t_i32, cg_gep(c, c->t_i32, ws->zp_table, m), 4);
  return LLVMBuildSub(c->b, v, zp, "");
}

static LLVMValueRef bias_value(cg *c, const cg_qlinear *q, LLVMValueRef btab,
                               const cg_view *bview, LLVMValueRef bbase,
                               LLVMValueRef m) {
  if (!q->has_bias)
    return cg_i32c(c, 0);
  if (btab)
    return cg_load(c, c->t_i32, cg_gep(c, c->t_i32, btab, m), 4);
  LLVMValueRef off = LLVMBuildMul(c->b, m, cg_i64c(c, bview->strides[0]), "");
  return cg_load_int(c, bview->elem,
                     cg_gep(c, cg_elem_type(c, bview->elem), bbase, off),
                     c->t_i32);
}

quill_status cg_conv_portable(cg *c, const quill_op *op, const cg_conv_geom *g,
                              cg_qlinear *q) {
  cg_view x = cg_value_view(c, quill_op_operand(op, 0));
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  cg_view bview;
  memset(&bview, 0, sizeof bview);
  wsrc ws;
  memset(&ws, 0, sizeof ws);
  LLVMValueRef btab = NULL;
  if (q->wconst) {
    ws.table = pack_portable(c, g, q);
  } else {
    ws.view = cg_value_view(c, quill_op_operand(op, 1));
    if (q->nw > 1) {
      int32_t *z = quill_alloc(c->ctx, q->nw * sizeof *z);
      if (!z)
        return QUILL_ERR_NOMEM;
      for (size_t i = 0; i < q->nw; i++)
        z[i] = (int32_t)q->zpw[i];
      ws.zp_table = cg_const_global(c, "zpw", z, q->nw * sizeof *z);
      quill_free(c->ctx, z, q->nw * sizeof *z);
    }
  }
  if (q->has_bias && q->bconst)
    btab = bias_global(c, q, g->M);
  else if (q->has_bias)
    bview = cg_value_view(c, quill_op_operand(op, 2));
  if (c->status)
    return c->status;
  /* acc[] holds Mg (grouped) or M (Cg == 1) sums of one output pixel. */
  int64_t nacc = g->Cg == 1 ? g->M : g->Mg;
  cg_stage_begin(c, "qconv2d.portable", g->N * g->OH);
  cg_stage_work(c, (double)(g->N * g->M * g->OH * g->OW) *
                       (double)(g->Cg * g->KH * g->KW) / 4.0);
  LLVMValueRef xb = cg_view_base(c, &x), yb = cg_view_base(c, &y);
  if (!ws.table)
    ws.base = cg_view_base(c, &ws.view);
  LLVMValueRef bbase = q->has_bias && !btab ? cg_view_base(c, &bview) : NULL;
  LLVMTypeRef act = cg_qlinear_acc_type(c, q);
  unsigned asz = q->wide ? 8 : 4;
  LLVMTypeRef at = LLVMArrayType2(act, (uint64_t)nacc);
  LLVMValueRef acc = cg_var(c, at, "acc");
  LLVMTypeRef yet = cg_elem_type(c, y.elem);
  cg_loop lt, low, lg, li, lj, lc, lm;
  cg_loop_begin(c, &lt, c->t0, c->t1, 1);
  LLVMValueRef n = LLVMBuildUDiv(c->b, lt.i, cg_i64c(c, g->OH), "n");
  LLVMValueRef oh = LLVMBuildURem(c->b, lt.i, cg_i64c(c, g->OH), "oh");
  cg_for(c, &low, 0, g->OW, 1);
  LLVMValueRef ow = low.i;
  int64_t ngroups = g->Cg == 1 ? 1 : g->G;
  cg_for(c, &lg, 0, ngroups, 1);
  LLVMValueRef m0 = LLVMBuildMul(c->b, lg.i, cg_i64c(c, nacc), "m0");
  /* acc = bias */
  cg_for(c, &lm, 0, nacc, 1);
  LLVMValueRef m = LLVMBuildAdd(c->b, m0, lm.i, "");
  cg_store(c, cg_qlinear_acc_term(c, q, bias_value(c, q, btab, &bview, bbase,
                                                   m)),
           cg_gep(c, act, acc, lm.i), asz);
  cg_loop_end(c, &lm);
  cg_for(c, &li, 0, g->KH, 1);
  LLVMValueRef ih = LLVMBuildAdd(
      c->b, LLVMBuildMul(c->b, oh, cg_i64c(c, g->sh), ""),
      cg_i64c(c, 0), "");
  ih = LLVMBuildAdd(c->b, ih,
                    LLVMBuildSub(c->b,
                                 LLVMBuildMul(c->b, li.i, cg_i64c(c, g->dh), ""),
                                 cg_i64c(c, g->pt), ""),
                    "ih");
  cg_if fi;
  cg_if_begin(c, &fi, in_range(c, ih, g->H));
  cg_for(c, &lj, 0, g->KW, 1);
  LLVMValueRef iw = LLVMBuildAdd(
      c->b, LLVMBuildMul(c->b, ow, cg_i64c(c, g->sw), ""),
      LLVMBuildSub(c->b, LLVMBuildMul(c->b, lj.i, cg_i64c(c, g->dw), ""),
                   cg_i64c(c, g->pl), ""),
      "iw");
  cg_if fj;
  cg_if_begin(c, &fj, in_range(c, iw, g->W));
  if (g->Cg == 1) {
    /* every output channel m reads input channel m / Mg */
    cg_for(c, &lm, 0, nacc, 1);
    LLVMValueRef ch = g->Mg == 1
        ? lm.i
        : LLVMBuildUDiv(c->b, lm.i, cg_i64c(c, g->Mg), "");
    LLVMValueRef xv = load_x(c, &x, xb, n, ch, ih, iw, q->zpx);
    LLVMValueRef wv = weight(c, g, &ws, q, lm.i, cg_i64c(c, 0), li.i, lj.i);
    LLVMValueRef p = cg_gep(c, act, acc, lm.i);
    acc_add(c, act, p, asz, q, xv, wv);
    cg_loop_end(c, &lm);
  } else {
    cg_for(c, &lc, 0, g->Cg, 1);
    LLVMValueRef ch = LLVMBuildAdd(
        c->b, LLVMBuildMul(c->b, lg.i, cg_i64c(c, g->Cg), ""), lc.i, "");
    LLVMValueRef xv = load_x(c, &x, xb, n, ch, ih, iw, q->zpx);
    cg_for(c, &lm, 0, nacc, 1);
    LLVMValueRef mm = LLVMBuildAdd(c->b, m0, lm.i, "");
    LLVMValueRef wv = weight(c, g, &ws, q, mm, lc.i, li.i, lj.i);
    LLVMValueRef p = cg_gep(c, act, acc, lm.i);
    acc_add(c, act, p, asz, q, xv, wv);
    cg_loop_end(c, &lm);
    cg_loop_end(c, &lc);
  }
  cg_if_end(c, &fj);
  cg_loop_end(c, &lj);
  cg_if_end(c, &fi);
  cg_loop_end(c, &li);
  /* requantize and store */
  cg_for(c, &lm, 0, nacc, 1);
  LLVMValueRef mm = LLVMBuildAdd(c->b, m0, lm.i, "");
  LLVMValueRef a = cg_load(c, act, cg_gep(c, act, acc, lm.i), asz);
  LLVMValueRef v = cg_qlinear_acc_requant(c, q, a, mm);
  LLVMValueRef off = LLVMBuildMul(c->b, n, cg_i64c(c, y.strides[0]), "");
  off = LLVMBuildAdd(c->b, off,
                     LLVMBuildMul(c->b, mm, cg_i64c(c, y.strides[1]), ""), "");
  off = LLVMBuildAdd(c->b, off,
                     LLVMBuildMul(c->b, oh, cg_i64c(c, y.strides[2]), ""), "");
  off = LLVMBuildAdd(c->b, off,
                     LLVMBuildMul(c->b, ow, cg_i64c(c, y.strides[3]), ""), "");
  cg_store_result(c, y.elem, v, cg_gep(c, yet, yb, off));
  cg_loop_end(c, &lm);
  cg_loop_end(c, &lg);
  cg_loop_end(c, &low);
  cg_loop_end(c, &lt);
  cg_stage_end(c);
  return c->status;
}

/* The dot kernels' arguments for a qconv2d with constant weights and a
 * constant (or no) bias; false (nothing allocated) otherwise. */
static bool dot_args(cg *c, const quill_op *op, const cg_conv_geom *g,
                     cg_qlinear *q, cg_dot_args *a) {
  if (!q->wconst || (q->has_bias && !q->bconst))
    return false;
  memset(a, 0, sizeof *a);
  a->g = *g;
  a->x = cg_value_view(c, quill_op_operand(op, 0));
  a->y = cg_value_view(c, quill_op_result(op, 0));
  a->zpx = q->zpx;
  a->rq = &q->rq;
  a->xv = cg_val(c, quill_op_operand(op, 0));
  size_t K = (size_t)(g->Cg * g->KH * g->KW), n = (size_t)g->M * K;
  int32_t *wc = quill_alloc(c->ctx, (n ? n : 1) * sizeof *wc);
  int32_t *b = q->has_bias ? quill_alloc(c->ctx, (size_t)g->M * sizeof *b)
                           : NULL;
  if (!wc || (q->has_bias && !b)) {
    quill_free(c->ctx, wc, (n ? n : 1) * sizeof *wc);
    quill_free(c->ctx, b, (size_t)g->M * sizeof *b);
    c->status = QUILL_ERR_NOMEM;
    return false;
  }
  for (size_t e = 0; e < n; e++)
    wc[e] = (int32_t)(uint32_t)(quill_attr_dense_get_i64(q->wconst, e) -
                                q->zpw[q->nw == 1 ? 0 : e / K]);
  for (int64_t m = 0; b && m < g->M; m++)
    b[m] = cg_qlinear_bias(q, (size_t)m);
  a->wc = wc;
  a->bias = b;
  return true;
}

static void dot_args_free(cg *c, cg_dot_args *a) {
  size_t n = (size_t)(a->g.M * a->g.Cg * a->g.KH * a->g.KW);
  quill_free(c->ctx, (void *)a->wc, (n ? n : 1) * sizeof *a->wc);
  if (a->bias)
    quill_free(c->ctx, (void *)a->bias, (size_t)a->g.M * sizeof *a->bias);
}

CG_LOWER(cg_lower_qconv2d) {
  cg_conv_geom g;
  quill_status st = cg_conv_geom_init(c, op, &g);
  if (st)
    return st;
  cg_qlinear q;
  if ((st = cg_qlinear_init(c, op, (size_t)g.M, &q))) {
    cg_qlinear_free(c, &q);
    return st;
  }
  cg_dot_args a;
  cg_conv_add fa;
  bool fused = false; /* the residual qadd in the dot kernel's epilogue */
  if (g.N * g.M * g.OH * g.OW == 0) {
    st = QUILL_OK;
  } else if (q.wide) {
    st = cg_conv_portable(c, op, &g, &q);
  } else if (dot_args(c, op, &g, &q, &a)) {
    if (!q.rq.raw && cg_conv_add_init(c, op, &fa) && !cg_dw_applies(c, &a) &&
        cg_dot_applies(c, &a)) {
      cg_view y = a.y;
      a.y = fa.y;
      a.add = &fa;
      fused = cg_dot_applies(c, &a);
      if (!fused) {
        a.y = y;
        a.add = NULL;
      }
    }
    if (fused)
      st = cg_dot_emit(c, &a);
    else if (!cg_cmap_try(c, &a, &st))
      st = cg_dw4_applies(c, &a) ? cg_dw4_emit(c, &a)
         : cg_dw_applies(c, &a)  ? cg_dw_emit(c, &a)
         : cg_dot_applies(c, &a) ? cg_dot_emit(c, &a)
                                 : cg_conv_portable(c, op, &g, &q);
    dot_args_free(c, &a);
  } else {
    st = c->status ? c->status : cg_conv_portable(c, op, &g, &q);
  }
  cg_qlinear_free(c, &q);
  /* a fused qadd the epilogue did not take: its own stage, right here */
  const quill_op *add = cg_fused_qadd(c, op);
  if (!st && add && !fused) {
    const quill_op *self = c->op;
    c->op = add;
    st = cg_qbinary_emit(c, add);
    c->op = self;
  }
  return st;
}
