/*
 * conv_dw.c - depthwise qconv2d (group == C, one output channel per input
 * channel), vectorized over channels: every lane is one channel, so the
 * NHWC panel row of a tap is one contiguous vector load.
 *
 *   for each row oh (a task), channel block cb (VL channels), tile of PIX
 *   pixels along the row:
 *     acc[q] = bias'[cb]
 *     for each tap (i, j):  w = wtab[i][j][cb]  (VL x i16)
 *       for q: acc[q] += zext(panel[oh*sh + i*dh][(ow0+q)*sw + j*dw][cb])
 *                        * sext(w)
 *     y[oh][ow0+q][cb] = requant(acc[q])  (masked on the channel tail)
 *
 * The product of a zero-extended byte and a sign-extended i16 is what x86
 * matches to vpmaddwd and AArch64 to widening multiply-adds, so one
 * generic IR form serves most ISA paths; on the VNNI paths the
 * multiply-add is the vpdpwssd intrinsic itself, and on AArch64 it is
 * smull (4 x i16 -> 4 x i32) on each half of 8 channels widened to i16,
 * which LLVM folds with the add into smlal / smlal2 (the generic form of
 * 8 lanes becomes tbl-based extends and mul + add there: llvm-mca puts it
 * at half the rate). The vector width VL follows the target (16 lanes with
 * AVX-512, 8 with AVX2 and AArch64, 4 otherwise). The panel is the
 * u8 domain of panel.c, with zpu * sum(taps) folded into the bias.
 */
#include <string.h>

#include "targets/llvm/conv.h"

static unsigned lanes_for(const cg_target *t) {
  if (t->isa == QUILL_LLVM_ISA_AVX512_VNNI || t->isa == QUILL_LLVM_ISA_AMX ||
      (t->avx512f && t->avx512bw))
    return 16;
  if ((t->x86 && t->avx2) || t->aarch64)
    return 8;
  return 4;
}

/* <8 x i32> x * w of <8 x i16> x, w: AArch64 smull on each half. */
static LLVMValueRef smull_8(cg *c, LLVMValueRef x, LLVMValueRef w) {
  LLVMValueRef p[2];
  for (int h = 0; h < 2; h++) {
    LLVMValueRef m[4];
    for (int l = 0; l < 4; l++)
      m[l] = cg_i32c(c, h * 4 + l);
    LLVMValueRef mask = LLVMConstVector(m, 4);
    LLVMValueRef xh = LLVMBuildShuffleVector(c->b, x, LLVMGetUndef(
                                                          LLVMTypeOf(x)),
                                             mask, "");
    LLVMValueRef wh = LLVMBuildShuffleVector(c->b, w, LLVMGetUndef(
                                                          LLVMTypeOf(w)),
                                             mask, "");
    LLVMTypeRef v4 = LLVMVectorType(c->t_i32, 4);
    p[h] = cg_intrinsic(c, "llvm.aarch64.neon.smull", &v4, 1,
                        (LLVMValueRef[]){xh, wh}, 2);
  }
  LLVMValueRef m8[8];
  for (int l = 0; l < 8; l++)
    m8[l] = cg_i32c(c, l);
  return LLVMBuildShuffleVector(c->b, p[0], p[1], LLVMConstVector(m8, 8), "");
}

bool cg_dw_applies(cg *c, const cg_dot_args *a) {
  const cg_conv_geom *g = &a->g;
  if (g->Cg != 1 || g->Mg != 1 || g->G < 2 || !a->wc)
    return false;
  if (quill_type_bit_width(cg_storage(a->x.elem)) != 8)
    return false;
  if (g->C > 1 && a->y.strides[1] != 1)
    return false;
  quill_type *ys = cg_storage(a->y.elem);
  if (quill_type_kind_of(ys) != QUILL_TYPE_I32 && quill_type_bit_width(ys) > 16)
    return false;
  size_t n = (size_t)(g->M * g->KH * g->KW);
  for (size_t i = 0; i < n; i++)
    if (a->wc[i] < -32768 || a->wc[i] > 32767)
      return false;
  (void)c;
  return true;
}

quill_status cg_dw_emit(cg *c, const cg_dot_args *a) {
  const cg_conv_geom *g = &a->g;
  unsigned VL = lanes_for(c->tgt);
  int64_t C = g->C, Cp = cg_ceil_div(C, VL) * VL, taps = g->KH * g->KW;
  /* the panel as one group of C channels */
  cg_conv_geom pg = *g;
  pg.G = 1;
  pg.Cg = C;
  cg_panel pn;
  cg_panel_plan(c, &pg, &a->x, a->xv, true, Cp, a->zpx, &pn, false);
  cg_panel_emit(c, &pg, &a->x, &pn);
  /* weights [tap][Cp] i16, bias' [Cp + VL] */
  int16_t *wt = quill_calloc(c->ctx, (size_t)(taps * Cp), sizeof *wt);
  uint32_t *bt = quill_calloc(c->ctx, (size_t)(Cp + VL), sizeof *bt);
  if (!wt || !bt) {
    quill_free(c->ctx, wt, (size_t)(taps * Cp) * sizeof *wt);
    quill_free(c->ctx, bt, (size_t)(Cp + VL) * sizeof *bt);
    return QUILL_ERR_NOMEM;
  }
  for (int64_t ch = 0; ch < C; ch++) {
    uint32_t sum = 0;
    for (int64_t t = 0; t < taps; t++) {
      int32_t w = a->wc[ch * taps + t];
      wt[t * Cp + ch] = (int16_t)w;
      sum += (uint32_t)w;
    }
    bt[ch] = (a->bias ? (uint32_t)a->bias[ch] : 0u) - (uint32_t)pn.zpu * sum;
  }
  LLVMValueRef wg = cg_const_global(c, "dww", wt,
                                    (size_t)(taps * Cp) * sizeof *wt);
  LLVMValueRef bg = cg_const_global(c, "dwb", bt, (size_t)(Cp + VL) * sizeof *bt);
  quill_free(c->ctx, wt, (size_t)(taps * Cp) * sizeof *wt);
  quill_free(c->ctx, bt, (size_t)(Cp + VL) * sizeof *bt);
  a->rq->pad = VL + 16;
  unsigned PIX = g->OW < 8 ? (unsigned)g->OW : 8;
  /* With VNNI the multiply-add is one vpdpwssd (LLVM would otherwise
   * reassociate the sums and keep vpmaddwd + vpaddd pairs). */
  const cg_target *tg = c->tgt;
  const char *dpw = NULL;
  bool zvnni = tg->isa == QUILL_LLVM_ISA_AVX512_VNNI ||
               tg->isa == QUILL_LLVM_ISA_AMX;
  if (tg->x86 && VL == 16 && tg->avx512vnni && zvnni)
    dpw = "llvm.x86.avx512.vpdpwssd.512";
  else if (tg->x86 && VL == 8 &&
           (tg->isa == QUILL_LLVM_ISA_AVX_VNNI || zvnni))
    dpw = "llvm.x86.avx512.vpdpwssd.256";
  bool smull = tg->aarch64 && VL == 8;
  unsigned R = (unsigned)(g->OW % PIX);
  int64_t nblk = Cp / VL;

  cg_stage_begin(c, "dwconv", g->N * g->OH);
  cg_stage_work(c, (double)(g->N * g->M * g->OH * g->OW * g->KH * g->KW) /
                       15.0);
  LLVMTypeRef vt = LLVMVectorType(c->t_i32, VL);
  LLVMTypeRef bvt = LLVMVectorType(c->t_i8, VL);
  LLVMTypeRef hvt = LLVMVectorType(c->t_i16, VL);
  LLVMValueRef panel = cg_panel_base(c, &pn, &a->x);
  LLVMValueRef yb = cg_view_base(c, &a->y);
  const cg_view *y = &a->y;
  bool raw = a->rq->raw;
  LLVMTypeRef yet = cg_elem_type(c, y->elem);
  LLVMTypeRef yvt = raw ? vt : LLVMVectorType(yet, VL);
  unsigned yal = raw ? 4 : (unsigned)quill_type_elem_bytes(cg_storage(y->elem));
  LLVMValueRef acc[8];
  for (unsigned q = 0; q < PIX; q++) {
    acc[q] = cg_var(c, vt, "acc");
    LLVMSetAlignment(acc[q], 64);
  }
  cg_loop lt, lb, lo, li, lj;
  cg_loop_begin(c, &lt, c->t0, c->t1, 1);
  LLVMValueRef n = LLVMBuildUDiv(c->b, lt.i, cg_i64c(c, g->OH), "n");
  LLVMValueRef oh = LLVMBuildURem(c->b, lt.i, cg_i64c(c, g->OH), "oh");
  LLVMValueRef xrow = LLVMBuildAdd(
      c->b, LLVMBuildMul(c->b, n, cg_i64c(c, pn.s_n), ""),
      LLVMBuildMul(c->b, oh, cg_i64c(c, g->sh * pn.s_row), ""), "");
  LLVMValueRef yrow = LLVMBuildAdd(
      c->b, LLVMBuildMul(c->b, n, cg_i64c(c, y->strides[0]), ""),
      LLVMBuildMul(c->b, oh, cg_i64c(c, y->strides[2]), ""), "");
  cg_for(c, &lb, 0, nblk, 1);
  LLVMValueRef ch = LLVMBuildMul(c->b, lb.i, cg_i64c(c, VL), "ch");
  LLVMValueRef left = LLVMBuildSub(c->b, cg_i64c(c, C), ch, "");
  LLVMValueRef bias = cg_load(c, vt, cg_gep(c, c->t_i32, bg, ch), 4);
  for (int pass = 0; pass < 2; pass++) {
    unsigned P = pass == 0 ? PIX : R;
    if (!P)
      continue;
    LLVMValueRef ow0;
    if (pass == 0) {
      cg_for(c, &lo, 0, g->OW - (int64_t)PIX + 1, PIX);
      ow0 = lo.i;
    } else {
      ow0 = cg_i64c(c, g->OW - R);
    }
    for (unsigned q = 0; q < P; q++)
      cg_store(c, bias, acc[q], 64);
    LLVMValueRef xbase = LLVMBuildAdd(
        c->b, LLVMBuildAdd(c->b, xrow, ch, ""),
        LLVMBuildMul(c->b, ow0, cg_i64c(c, g->sw * pn.s_col), ""), "");
    cg_for(c, &li, 0, g->KH, 1);
    cg_for(c, &lj, 0, g->KW, 1);
    LLVMValueRef tap = LLVMBuildAdd(
        c->b, LLVMBuildMul(c->b, li.i, cg_i64c(c, g->KW), ""), lj.i, "");
    LLVMValueRef w16 = cg_load(
        c, hvt,
        cg_gep(c, c->t_i16, wg,
               LLVMBuildAdd(c->b, LLVMBuildMul(c->b, tap, cg_i64c(c, Cp), ""),
                            ch, "")),
        2);
    LLVMValueRef w = LLVMBuildSExt(c->b, w16, vt, "");
    LLVMValueRef xt = LLVMBuildAdd(
        c->b, xbase,
        LLVMBuildAdd(c->b,
                     LLVMBuildMul(c->b, li.i, cg_i64c(c, g->dh * pn.s_row), ""),
                     LLVMBuildMul(c->b, lj.i, cg_i64c(c, g->dw * pn.s_col), ""),
                     ""),
        "");
    for (unsigned q = 0; q < P; q++) {
      LLVMValueRef xp = cg_gep(
          c, c->t_i8, panel,
          LLVMBuildAdd(c->b, xt, cg_i64c(c, (int64_t)q * g->sw * pn.s_col), ""));
      LLVMValueRef xb = cg_load(c, bvt, xp, 1);
      LLVMValueRef a0 = cg_load(c, vt, acc[q], 64), s;
      if (smull)
        s = LLVMBuildAdd(c->b, a0,
                         smull_8(c, LLVMBuildZExt(c->b, xb, hvt, ""), w16),
                         "");
      else if (dpw) /* lanes as i16 pairs (x, 0) . (w, sign): acc + x * w */
        s = cg_intrinsic(c, dpw, NULL, 0,
                         (LLVMValueRef[]){a0, LLVMBuildZExt(c->b, xb, vt, ""),
                                          w},
                         3);
      else {
        LLVMValueRef xv = LLVMBuildZExt(c->b, xb, vt, "");
        s = LLVMBuildAdd(c->b, a0, LLVMBuildMul(c->b, xv, w, ""), "");
      }
      cg_store(c, s, acc[q], 64);
    }
    cg_loop_end(c, &lj);
    cg_loop_end(c, &li);
    /* epilogue */
    LLVMValueRef r[8];
    for (unsigned q = 0; q < P; q++) {
      r[q] = cg_requant_apply(c, a->rq, cg_load(c, vt, acc[q], 64), ch, true);
      if (!raw)
        r[q] = LLVMBuildTrunc(c->b, r[q], yvt, "");
    }
    LLVMValueRef yo = LLVMBuildAdd(
        c->b, LLVMBuildAdd(c->b, yrow, ch, ""),
        LLVMBuildMul(c->b, ow0, cg_i64c(c, y->strides[3]), ""), "");
    cg_if fu;
    cg_if_begin(c, &fu,
                LLVMBuildICmp(c->b, LLVMIntSGE, left, cg_i64c(c, VL), ""));
    for (unsigned q = 0; q < P; q++)
      cg_store(c, r[q],
               cg_gep(c, yet, yb,
                      LLVMBuildAdd(c->b, yo,
                                   cg_i64c(c, (int64_t)q * y->strides[3]), "")),
               yal);
    cg_if_else(c, &fu);
    LLVMValueRef mask = cg_lane_mask(c, left, VL);
    LLVMTypeRef ov[2] = {yvt, c->t_ptr};
    for (unsigned q = 0; q < P; q++)
      cg_intrinsic(
          c, "llvm.masked.store", ov, 2,
          (LLVMValueRef[]){
              r[q],
              cg_gep(c, yet, yb,
                     LLVMBuildAdd(c->b, yo,
                                  cg_i64c(c, (int64_t)q * y->strides[3]), "")),
              cg_i32c(c, yal), mask},
          4);
    cg_if_end(c, &fu);
    if (pass == 0)
      cg_loop_end(c, &lo);
  }
  cg_loop_end(c, &lb);
  cg_loop_end(c, &lt);
  cg_stage_end(c);
  return c->status;
}
