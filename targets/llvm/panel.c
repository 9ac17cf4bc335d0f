/*
 * panel.c - the input panel of the integer conv kernels (conv_dot.c,
 * conv_dw.c): the activation in NHWC with the spatial padding materialized
 * and each group's channels rounded up, in the value domain the kernel
 * multiplies in.
 *
 *   panel[n][r][col][g][c]   r < Hp, col < Wp, c < Cgp
 *     = T(x[n, g*Cg + c, r - pad_top, col - pad_left])  inside the image
 *     = pad value                                       elsewhere
 *
 *   u8 domain:  T(x) = x (u8 storage) or x ^ 0x80 = x + 128 (i8 storage);
 *               pad value zpu = zp_x (+ 128): (pad - zpu) contributes 0
 *   s8 domain:  T(x) = x (i8 storage) or x ^ 0x80 = x - 128 (u8 storage);
 *               pad value zpu = zp_x (- 128) (the AArch64 sdot/smmla
 *               kernels multiply s8 by s8)
 *   i16 domain: T(x) = x - zp_x; pad value 0
 *
 * When x already is exactly that (u8 or s8, NHWC with its channels
 * contiguous and its pixels evenly spaced (s_col may exceed the channels:
 * the first channels of a wider concat), no padding needed, channels not
 * rounded), or when memplan.c stored x inside a
 * buffer whose halo holds the zero point (its producer writes the
 * interior, a fill stage the border: a padded conv reads the whole buffer,
 * an unpadded one the interior, its rows the buffer's width apart), the
 * kernel reads x in place and no stage is emitted. The copy loop runs with channels innermost, which is
 * contiguous for NHWC inputs (the common case inside a network).
 */
#include <string.h>

#include "targets/llvm/conv.h"

/* x is NHWC with its channels contiguous and its pixels evenly spaced,
 * maybe further apart than its channels (the first channels of a wider
 * concat, memplan.c): the kernels step pixels by s_col. */
static bool nhwc_pixels(const cg_view *x) {
  int64_t C = x->dims[1], H = x->dims[2], W = x->dims[3];
  int64_t sc = W > 1 ? x->strides[3] : C;
  int64_t sr = H > 1 ? x->strides[2] : W * sc;
  return (C == 1 || x->strides[1] == 1) && sc >= C && sr == W * sc &&
         (x->dims[0] == 1 || x->strides[0] == H * sr);
}

/* x is the interior of a haloed buffer (memplan.c) whose border holds the
 * zero point and covers this conv's pads: read the whole buffer in place. */
static bool in_halo(const cg_conv_geom *g, const cg_view *x,
                    const cg_value *xv, bool u8, int64_t Cgp, cg_panel *p) {
  if (p->s8 && !quill_type_is_signed(cg_storage(x->elem)))
    return false;
  if (!xv || !xv->haloed || !u8 || Cgp != g->Cg || g->G != 1 ||
      x->offset != xv->view.offset || x->slot != xv->view.slot ||
      memcmp(x->strides, xv->view.strides, 4 * sizeof(int64_t)) ||
      xv->halo[0] != g->pt || xv->halo[1] != g->pl)
    return false;
  int64_t Hp = g->H + xv->halo[0] + xv->halo[2];
  int64_t Wp = g->W + xv->halo[1] + xv->halo[3];
  if ((g->OH - 1) * g->sh + (g->KH - 1) * g->dh + 1 > Hp ||
      (g->OW - 1) * g->sw + (g->KW - 1) * g->dw + 1 > Wp)
    return false;
  p->Hp = Hp;
  p->Wp = Wp;
  p->s_col = g->C;
  p->s_row = Wp * g->C;
  p->s_n = Hp * Wp * g->C;
  p->base = *x;
  p->base.offset = 0;
  return true;
}

/* x is the interior of a haloed buffer and the conv has no pads (a
 * strided ResNet block's 1x1 downsample, beside the block's padded 3x3
 * conv): read the interior in place, its rows the buffer's width Wp
 * apart. The columns past W are the halo's: a tile of a stride-1 conv
 * that spans rows computes them and stores nothing there. */
static bool halo_interior(const cg_conv_geom *g, const cg_view *x,
                          const cg_value *xv, bool u8, bool s8,
                          int64_t Cgp, cg_panel *p) {
  if (!xv || !xv->haloed || !u8 || s8 || Cgp != g->Cg || g->G != 1 ||
      quill_type_is_signed(cg_storage(x->elem)) || g->pt || g->pl ||
      x->offset != xv->view.offset || x->slot != xv->view.slot ||
      memcmp(x->strides, xv->view.strides, 4 * sizeof(int64_t)))
    return false;
  int64_t Wp = g->W + xv->halo[1] + xv->halo[3];
  if ((g->OH - 1) * g->sh + (g->KH - 1) * g->dh + 1 > g->H ||
      (g->OW - 1) * g->sw + (g->KW - 1) * g->dw + 1 > g->W ||
      x->strides[2] != Wp * g->C)
    return false;
  p->Hp = g->H;
  p->Wp = Wp;
  p->s_col = g->C;
  p->s_row = Wp * g->C;
  p->s_n = x->strides[0];
  p->base = *x;
  return true;
}

static void plan(cg *c, const cg_conv_geom *g, const cg_view *x,
                 const cg_value *xv, bool u8, bool s8, int64_t Cgp,
                 int64_t zpx, cg_panel *p, bool copy) {
  memset(p, 0, sizeof *p);
  bool signed_x = quill_type_is_signed(cg_storage(x->elem));
  p->u8 = u8 || s8;
  p->s8 = s8;
  u8 = p->u8;
  p->G = g->G;
  p->Cg = g->Cg;
  p->Cgp = Cgp;
  p->zpu = s8 ? zpx - (signed_x ? 0 : 128)
           : u8 ? zpx + (signed_x ? 128 : 0)
                : 0;
  p->zpx = zpx;
  int64_t hneed = (g->OH - 1) * g->sh + (g->KH - 1) * g->dh + 1;
  int64_t wneed = (g->OW - 1) * g->sw + (g->KW - 1) * g->dw + 1;
  bool direct = !copy && u8 && signed_x == s8 && nhwc_pixels(x) &&
                g->pt == 0 &&
                g->pl == 0 && hneed <= g->H && wneed <= g->W &&
                Cgp == g->Cg && x->offset == 0;
  p->slot = -1;
  p->base = *x;
  if (in_halo(g, x, xv, u8, Cgp, p) ||
      (!copy && halo_interior(g, x, xv, u8, s8, Cgp, p)))
    return;
  if (direct) {
    p->Hp = g->H;
    p->Wp = g->W;
    p->s_col = g->W > 1 ? x->strides[3] : g->C;
    p->s_row = g->H > 1 ? x->strides[2] : g->W * p->s_col;
    p->s_n = g->N > 1 ? x->strides[0] : g->H * p->s_row;
    return;
  }
  int64_t h1 = g->H + g->pt, w1 = g->W + g->pl;
  p->Hp = hneed > h1 ? hneed : h1;
  p->Wp = wneed > w1 ? wneed : w1;
  p->s_col = g->G * Cgp;
  p->s_row = p->Wp * p->s_col;
  p->s_n = p->Hp * p->s_row;
  /* + 64: kernels may load a full vector at the last element */
  size_t bytes = (size_t)(g->N * p->s_n) * (u8 ? 1 : 2) + 64;
  p->slot = cg_workspace(c, bytes);
}

void cg_panel_plan(cg *c, const cg_conv_geom *g, const cg_view *x,
                   const cg_value *xv, bool u8, int64_t Cgp, int64_t zpx,
                   cg_panel *p, bool copy) {
  plan(c, g, x, xv, u8, false, Cgp, zpx, p, copy);
}

void cg_panel_plan_s8(cg *c, const cg_conv_geom *g, const cg_view *x,
                      const cg_value *xv, int64_t Cgp, int64_t zpx,
                      cg_panel *p, bool copy) {
  plan(c, g, x, xv, false, true, Cgp, zpx, p, copy);
}

LLVMValueRef cg_panel_base(cg *c, const cg_panel *p, const cg_view *x) {
  (void)x;
  return p->slot >= 0 ? cg_slot_ptr(c, p->slot) : cg_view_base(c, &p->base);
}

void cg_panel_emit(cg *c, const cg_conv_geom *g, const cg_view *x,
                   const cg_panel *p) {
  if (p->slot < 0)
    return;
  LLVMTypeRef pt = p->u8 ? c->t_i8 : c->t_i16;
  unsigned pe = p->u8 ? 1 : 2;
  cg_stage_begin(c, "panel", g->N * p->Hp);
  LLVMValueRef xb = cg_view_base(c, x), pb = cg_slot_ptr(c, p->slot);
  LLVMTypeRef xt = cg_elem_type(c, x->elem);
  bool flip = p->u8 && quill_type_is_signed(cg_storage(x->elem)) != p->s8;
  LLVMValueRef padv = p->u8 ? cg_i8c(c, p->zpu) : cg_i16c(c, 0);
  cg_loop lt, lw, lg, lc;
  cg_loop_begin(c, &lt, c->t0, c->t1, 1);
  LLVMValueRef n = LLVMBuildUDiv(c->b, lt.i, cg_i64c(c, p->Hp), "");
  LLVMValueRef r = LLVMBuildURem(c->b, lt.i, cg_i64c(c, p->Hp), "");
  LLVMValueRef ih = LLVMBuildSub(c->b, r, cg_i64c(c, g->pt), "");
  LLVMValueRef hin = LLVMBuildICmp(c->b, LLVMIntULT, ih, cg_i64c(c, g->H), "");
  LLVMValueRef rowp = LLVMBuildAdd(
      c->b, LLVMBuildMul(c->b, n, cg_i64c(c, p->s_n), ""),
      LLVMBuildMul(c->b, r, cg_i64c(c, p->s_row), ""), "");
  cg_for(c, &lw, 0, p->Wp, 1);
  LLVMValueRef iw = LLVMBuildSub(c->b, lw.i, cg_i64c(c, g->pl), "");
  LLVMValueRef inside = LLVMBuildAnd(
      c->b, hin, LLVMBuildICmp(c->b, LLVMIntULT, iw, cg_i64c(c, g->W), ""), "");
  LLVMValueRef colp = LLVMBuildAdd(
      c->b, rowp, LLVMBuildMul(c->b, lw.i, cg_i64c(c, p->s_col), ""), "");
  cg_if fi;
  cg_if_begin(c, &fi, inside);
  cg_for(c, &lg, 0, p->G, 1);
  LLVMValueRef gp = LLVMBuildAdd(
      c->b, colp, LLVMBuildMul(c->b, lg.i, cg_i64c(c, p->Cgp), ""), "");
  LLVMValueRef xoff = LLVMBuildAdd(
      c->b,
      LLVMBuildAdd(c->b, LLVMBuildMul(c->b, n, cg_i64c(c, x->strides[0]), ""),
                   LLVMBuildMul(c->b, ih, cg_i64c(c, x->strides[2]), ""), ""),
      LLVMBuildMul(c->b, iw, cg_i64c(c, x->strides[3]), ""), "");
  xoff = LLVMBuildAdd(
      c->b, xoff,
      LLVMBuildMul(c->b, lg.i, cg_i64c(c, p->Cg * x->strides[1]), ""), "");
  cg_for(c, &lc, 0, p->Cg, 1);
  LLVMValueRef xv = cg_load(
      c, xt,
      cg_gep(c, xt, xb,
             LLVMBuildAdd(c->b, xoff,
                          LLVMBuildMul(c->b, lc.i, cg_i64c(c, x->strides[1]), ""),
                          "")),
      1);
  LLVMValueRef v;
  if (p->u8)
    v = flip ? LLVMBuildXor(c->b, xv, cg_i8c(c, 0x80), "") : xv;
  else
    v = LLVMBuildSub(c->b, cg_widen_int(c, x->elem, xv, c->t_i16),
                     cg_i16c(c, p->zpx), "");
  cg_store(c, v, cg_gep(c, pt, pb, LLVMBuildAdd(c->b, gp, lc.i, "")), pe);
  cg_loop_end(c, &lc);
  if (p->Cgp > p->Cg) { /* channel padding: the weights are 0 there */
    cg_for(c, &lc, p->Cg, p->Cgp, 1);
    cg_store(c, padv, cg_gep(c, pt, pb, LLVMBuildAdd(c->b, gp, lc.i, "")), pe);
    cg_loop_end(c, &lc);
  }
  cg_loop_end(c, &lg);
  cg_if_else(c, &fi);
  cg_for(c, &lc, 0, p->G * p->Cgp, 1);
  cg_store(c, padv, cg_gep(c, pt, pb, LLVMBuildAdd(c->b, colp, lc.i, "")), pe);
  cg_loop_end(c, &lc);
  cg_if_end(c, &fi);
  cg_loop_end(c, &lw);
  cg_loop_end(c, &lt);
  cg_stage_end(c);
}
