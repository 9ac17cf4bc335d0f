/*
 * conv_dot.c - the register-blocked dot-product kernels behind qconv2d and
 * qmatmul (as a 1x1 convolution over the rows of A), on every ISA path:
 *
 *   kind  instruction             kg  panel  weights     per step
 *   VNNI  vpdpbusd zmm/ymm        4   u8     s8 x4       acc += dot4(x, w)
 *   UBSW  vpmaddubsw + vpmaddwd   4   u8     s8 x4       (pairs that could
 *                                                         saturate i16 split:
 *                                                         conv_ubsw.c)
 *   WD    vpmaddwd                2   i16    i16 x2      acc += dot2(x, w)
 *   MUL   LLVM vector mul/add     1   i16    i16         acc += x * w
 *   SDOT  sdot v.4s (AArch64)     4   s8     s8 x4       acc += dot4(x, w)
 *   SMMLA smmla v.4s (AArch64)    8   s8     s8 x8       2x2 tiles (below)
 *
 * One output tile is PIX consecutive pixels of a row times OCB vectors of
 * VL output channels (PIX * OCB accumulators kept in registers). For each
 * kernel tap (i, j) and each group of kg input channels, the tile loads
 * OCB weight vectors once and broadcasts one kg-group of each pixel's
 * input:
 *
 *      acc[p][v] += broadcast(x[row, (ow0 + p)*sw + j*dw, c..c+kg)) . w[v]
 *
 * Pixels are numbered across rows (p = oh * OW + ow) so tiles stay full
 * whatever the row width; a tile whose pixels may straddle rows computes
 * each pixel's panel address on entry. The last R = (OH*OW) % PIX pixels
 * get an R-pixel tile; with K blocking, when an R-pixel tile would wait on
 * vpdpbusd's latency, the last PIX - R tiles take PIX - 1 pixels instead
 * (mixed tiles, conv_dot_plan.c).
 *
 * Input panel (panel.c): [N][Hp][Wp][G][Cgp], the input in NHWC with the
 * padding materialized and each group's channels rounded up to kg. For the
 * u8 kinds it holds x (u8 storage) or x ^ 0x80 = x + 128 (i8 storage),
 * padding filled with that domain's zero point zpu, so
 *
 *   sum (x - zp_x)(w - zp_w) = sum xu * wc - zpu * sum(wc)
 *
 * and the second term is folded into the bias at compile time (modulo 2^32
 * like everything else). For the i16 kinds the panel holds x - zp_x and
 * padding 0. A u8 NHWC input that needs no padding is read in place.
 *
 * The Arm kinds (neon-dot, neon-i8mm; instructions in conv_arm.c) read
 * panel.c's s8 domain, x - 128 for u8 storage, and fold its zpu into the
 * bias the same way. SMMLA pairs the tile's pixels: accumulator q*OCB + v
 * of an even q holds the 2x2 tiles of pixels (q, q+1) x channels 0,1 of
 * vector v, that of q + 1 channels 2,3; they become per-pixel vectors
 * before the epilogue. An odd remainder tile computes its last pixel
 * twice and stores it once.
 *
 * K blocking, for convs whose channel tile has many weights (at least
 * KBLOCK_MIN_TILE bytes: the 256- and 512-channel 3x3 convs of ResNet-18 on
 * zmm tiles of 64 channels; or KBLOCK_L1_TILE, as much as L1 holds, in a
 * conv of KBLOCK_BIG_CONV bytes or more: the 256 -> 512 and 512-channel
 * ones on ymm tiles of 16)
 * and few pixels: a task is one channel tile and all the pixels, and the
 * taps go outermost. Each pixel tile runs one tap at a time, its partial
 * sums waiting in a stack buffer between taps (bias at the first tap, the
 * epilogue after the last); a tap's weights (Cg x TW bytes, 32 KB for 512
 * channels) come from memory once and from the cache for the other pixel
 * tiles, and each pixel tile prefetches its share of the next tap's lines
 * into L2, one line per channel step (the next tile's after the last tap).
 * Run pixel chunk by pixel chunk instead, every chunk streamed the whole
 * tile again and the first waited on memory: ResNet-18's 512-channel convs
 * ran at 64-66% of the vpdpbusd peak in the model against 85% alone, 82-87%
 * with this (CPU time, loaded machine). Sums mod 2^32 do not depend on the
 * order: the bits are the same.
 *
 * The kind and tile shape are chosen, and the weights packed, by
 * conv_dot_plan.c; the epilogue (requantization, the fused qadd, the
 * stores) is conv_dot_epi.c's.
 *
 * Weights are centered (wc = w - zp_w[m]) and packed per (group, tile) in
 * the order the tile consumes them: [G][tiles][KH][KW][Cgp/kg][TW][kg].
 * Lanes past the last channel are zero; bias and requantization arrays are
 * padded so full-vector loads never leave their globals; stores of a
 * partial last vector are masked. Tasks are (n, group, channel tile, pixel
 * chunk), chunks innermost so that a thread's consecutive tasks share
 * their weights.
 */
#include <string.h>

#include "targets/llvm/conv_dot_impl.h"

#define KBLOCK_MIN_TILE (128 * 1024) /* weight bytes of a channel tile */
#define KBLOCK_MAX_ACC (64 * 1024)   /* the partial sums' stack buffer */
/* or a tile that fills L1 (32-48 KB) in a conv whose weights leave L2 */
#define KBLOCK_L1_TILE (32 * 1024)
#define KBLOCK_BIG_CONV (1024 * 1024)

/* ---- the micro-kernel ------------------------------------------------------------ */

static LLVMValueRef dot_step(cg *c, const dot_plan *p, LLVMValueRef acc,
                             LLVMValueRef xb, LLVMValueRef w) {
  unsigned VL = p->VL;
  switch (p->kind) {
  case DOT_VNNI: {
    const char *nm = VL == 16 ? "llvm.x86.avx512.vpdpbusd.512"
                              : "llvm.x86.avx512.vpdpbusd.256";
    return cg_intrinsic(c, nm, NULL, 0, (LLVMValueRef[]){acc, xb, w}, 3);
  }
  case DOT_UBSW: {
    LLVMTypeRef b32 = LLVMVectorType(c->t_i8, 4 * VL);
    LLVMValueRef t = cg_intrinsic(
        c, "llvm.x86.avx2.pmadd.ub.sw", NULL, 0,
        (LLVMValueRef[]){LLVMBuildBitCast(c->b, xb, b32, ""),
                         LLVMBuildBitCast(c->b, w, b32, "")},
        2);
    LLVMValueRef ones = cg_intc(LLVMVectorType(c->t_i16, 2 * VL), 1);
    LLVMValueRef s = cg_intrinsic(c, "llvm.x86.avx2.pmadd.wd", NULL, 0,
                                  (LLVMValueRef[]){t, ones}, 2);
    return LLVMBuildAdd(c->b, acc, s, "");
  }
  case DOT_WD: {
    LLVMTypeRef h = LLVMVectorType(c->t_i16, 2 * VL);
    const char *nm = VL == 16 ? "llvm.x86.avx512.pmaddw.d.512"
                              : "llvm.x86.avx2.pmadd.wd";
    LLVMValueRef s = cg_intrinsic(
        c, nm, NULL, 0,
        (LLVMValueRef[]){LLVMBuildBitCast(c->b, xb, h, ""),
                         LLVMBuildBitCast(c->b, w, h, "")},
        2);
    return LLVMBuildAdd(c->b, acc, s, "");
  }
  case DOT_SDOT:
    return cg_arm_sdot(c, acc, w, xb);
  default:
    return LLVMBuildAdd(c->b, acc, LLVMBuildMul(c->b, xb, w, ""), "");
  }
}

/* Element offset of pixel (oh, ow) of image n, channel chbase, in v. */
static LLVMValueRef view_offset(cg *c, const dot_kstate *s, const cg_view *v,
                                LLVMValueRef oh, LLVMValueRef ow) {
  LLVMValueRef o = LLVMBuildAdd(
      c->b, LLVMBuildMul(c->b, s->n, cg_i64c(c, v->strides[0]), ""),
      LLVMBuildMul(c->b, oh, cg_i64c(c, v->strides[2]), ""), "");
  o = LLVMBuildAdd(c->b, o,
                   LLVMBuildMul(c->b, ow, cg_i64c(c, v->strides[3]), ""), "");
  return LLVMBuildAdd(c->b, o, s->chbase, "");
}

/* Panel and output element offsets of flattened pixel p (and in a fused
 * qadd's other operand, *bo, when bo). */
static void pixel_offsets(cg *c, const dot_kstate *s, LLVMValueRef p,
                          LLVMValueRef *xo, LLVMValueRef *yo,
                          LLVMValueRef *bo) {
  const cg_conv_geom *g = &s->a->g;
  const cg_panel *pn = &s->p->pn;
  const cg_view *y = &s->a->y;
  LLVMValueRef oh = LLVMBuildUDiv(c->b, p, cg_i64c(c, g->OW), "");
  LLVMValueRef ow = LLVMBuildURem(c->b, p, cg_i64c(c, g->OW), "");
  LLVMValueRef x = LLVMBuildAdd(
      c->b, LLVMBuildMul(c->b, s->n, cg_i64c(c, pn->s_n), ""),
      LLVMBuildMul(c->b, oh, cg_i64c(c, g->sh * pn->s_row), ""), "");
  *xo = LLVMBuildAdd(c->b, x,
                     LLVMBuildMul(c->b, ow, cg_i64c(c, g->sw * pn->s_col), ""),
                     "");
  *yo = view_offset(c, s, y, oh, ow);
  if (bo)
    *bo = view_offset(c, s, &s->a->add->other, oh, ow);
}

/* Channel steps per trip of the innermost loop: the largest divisor of C4
 * not above 4 (measured: 3-5% faster than 1; with 8 or more, LLVM's
 * scheduler hoists broadcasts and spills accumulators). The avx2 kinds
 * on 16 ymm registers take 1: unrolled, LLVM hoisted the next steps'
 * broadcasts and weights and spilled accumulators on every step
 * (ResNet-18 avx2, --mcpu haswell: 1-thread CPU 33.7 -> 30.4 ms). So do
 * AVX-512 VNNI tiles of more than 8 pixels (1-3 channel vectors: 9-27
 * accumulators): unrolled, LLVM hoisted the next steps' broadcasts and
 * spilled them, a store and a reload each (GoogLeNet's 3x3 convs of 16
 * and 32 input channels ran at 42% of the vpdpbusd peak, 75% with one
 * step a trip). */
static unsigned dot_unroll(const dot_plan *p) {
  if (p->nreg == 16 && (p->kind == DOT_UBSW || p->kind == DOT_WD))
    return 1;
  if (p->kind == DOT_VNNI && p->nreg == 32 && p->PIX > 8)
    return 1;
  for (unsigned u = 4; u > 1; u--)
    if (p->C4 % u == 0)
      return u;
  return 1;
}

/* SMMLA's channel step: per pixel pair one 16-byte x (8 channels of
 * each), per vector two 16-byte weight rows (channels 0,1 and 2,3). */
static void mmla_kstep(cg *c, dot_kstate *s, unsigned P, const LLVMValueRef *xp,
                       LLVMValueRef wk, LLVMValueRef ck) {
  const dot_plan *p = s->p;
  unsigned OCB = p->OCB;
  LLVMTypeRef vt = s->vt;
  LLVMValueRef w[8];
  for (unsigned v = 0; v < 2 * OCB; v++)
    w[v] = cg_load(c, vt, cg_gep8(c, wk, cg_i64c(c, v * 16)), 4);
  for (unsigned q = 0; q + 1 < P; q += 2) {
    LLVMValueRef x2 = cg_arm_load_pair(c, cg_gep8(c, xp[q], ck),
                                       cg_gep8(c, xp[q + 1], ck));
    for (unsigned v = 0; v < OCB; v++)
      for (unsigned h = 0; h < 2; h++) {
        LLVMValueRef ap = s->acc[(q + h) * OCB + v];
        cg_store(c, cg_arm_smmla(c, cg_load(c, vt, ap, 64), x2, w[2 * v + h]),
                 ap, 64);
      }
  }
}

/* One channel step kk (kg channels of every tap pixel) of the tile. With
 * x16 (SDOT, 4 steps per trip), pixel q's 4 bytes are lane `lane` of
 * x16[q], loaded once for the trip: sdot's indexed form, one 16-byte load
 * per pixel instead of four ld1r and their address arithmetic. */
static void dot_kstep(cg *c, dot_kstate *s, unsigned P, const LLVMValueRef *xp,
                      LLVMValueRef wp, LLVMValueRef kk,
                      const LLVMValueRef *x16, unsigned lane) {
  const dot_plan *p = s->p;
  unsigned VL = p->VL, OCB = p->OCB;
  LLVMTypeRef vt = s->vt;
  int64_t pe = p->u8panel ? 1 : 2;
  int64_t wvec = cg_dot_wvec_bytes(p);
  LLVMValueRef w[4];
  LLVMValueRef wk = cg_gep8(
      c, wp, LLVMBuildMul(c->b, kk, cg_i64c(c, OCB * wvec), ""));
  if (s->pf_base) {
    int64_t lines = p->C4 * OCB * wvec / 64;
    LLVMValueRef l = cg_min_s(c, LLVMBuildAdd(c->b, s->pf_line0, kk, ""),
                              cg_i64c(c, lines - 1));
    cg_prefetch_l2(c, cg_gep8(c, s->pf_base,
                              LLVMBuildMul(c->b, l, cg_i64c(c, 64), "")));
  }
  if (p->kind == DOT_SMMLA) {
    mmla_kstep(c, s, P, xp, wk,
               LLVMBuildMul(c->b, kk, cg_i64c(c, p->kg), ""));
    return;
  }
  for (unsigned v = 0; v < OCB; v++) {
    LLVMValueRef ptr = cg_gep8(c, wk, cg_i64c(c, v * wvec));
    if (p->kind == DOT_MUL)
      w[v] = LLVMBuildSExt(
          c->b, cg_load(c, LLVMVectorType(c->t_i16, VL), ptr, 2), vt, "");
    else
      w[v] = cg_load(c, vt, ptr, 4);
  }
  LLVMValueRef ck = LLVMBuildMul(c->b, kk, cg_i64c(c, p->kg * pe), "");
  for (unsigned q = 0; q < P; q++) {
    LLVMValueRef bp = cg_gep8(c, xp[q], ck);
    if (x16) {
      LLVMValueRef m = cg_i32c(c, lane);
      LLVMValueRef xb = LLVMBuildShuffleVector(
          c->b, x16[q], LLVMGetUndef(vt),
          LLVMConstVector((LLVMValueRef[]){m, m, m, m}, 4), "");
      for (unsigned v = 0; v < OCB; v++) {
        LLVMValueRef ap = s->acc[q * OCB + v];
        cg_store(c, dot_step(c, p, cg_load(c, vt, ap, 64), xb, w[v]), ap, 64);
      }
      continue;
    }
    LLVMValueRef xs = p->kind == DOT_MUL
                          ? LLVMBuildSExt(c->b, cg_load(c, c->t_i16, bp, 1),
                                          c->t_i32, "")
                          : cg_load(c, c->t_i32, bp, 1);
    LLVMValueRef xb = cg_splat(c, xs, VL);
    for (unsigned v = 0; v < OCB; v++) {
      LLVMValueRef ap = s->acc[q * OCB + v];
      cg_store(c, dot_step(c, p, cg_load(c, vt, ap, 64), xb, w[v]), ap, 64);
    }
  }
}

/* UBSW's correction steps (conv_ubsw.c), after the taps: per vector v of
 * the tile, its list's entries, each a panel offset from the pixel and a
 * weight vector of corrections. */
static void corr_steps(cg *c, dot_kstate *s, unsigned P,
                       const LLVMValueRef *xo) {
  const dot_plan *p = s->p;
  LLVMTypeRef vt = s->vt;
  for (unsigned v = 0; v < p->OCB; v++) {
    LLVMValueRef l = LLVMBuildAdd(c->b, s->clist, cg_i64c(c, v), "");
    LLVMValueRef lo = LLVMBuildSExt(
        c->b, cg_load(c, c->t_i32, cg_gep(c, c->t_i32, p->cl.start, l), 4),
        c->t_i64, "");
    LLVMValueRef hi = LLVMBuildSExt(
        c->b,
        cg_load(c, c->t_i32,
                cg_gep(c, c->t_i32, p->cl.start,
                       LLVMBuildAdd(c->b, l, cg_i64c(c, 1), "")),
                4),
        c->t_i64, "");
    cg_loop le;
    cg_loop_begin(c, &le, lo, hi, 1);
    LLVMValueRef off = LLVMBuildSExt(
        c->b, cg_load(c, c->t_i32, cg_gep(c, c->t_i32, p->cl.off, le.i), 4),
        c->t_i64, "");
    LLVMValueRef w = cg_load(
        c, vt,
        cg_gep8(c, p->cl.w, LLVMBuildMul(c->b, le.i, cg_i64c(c, 4 * p->VL), "")),
        4);
    for (unsigned q = 0; q < P; q++) {
      LLVMValueRef xp = cg_gep8(c, s->panel, LLVMBuildAdd(c->b, xo[q], off, ""));
      LLVMValueRef xb = cg_splat(c, cg_load(c, c->t_i32, xp, 1), p->VL);
      LLVMValueRef ap = s->acc[q * p->OCB + v];
      cg_store(c, dot_step(c, p, cg_load(c, vt, ap, 64), xb, w), ap, 64);
    }
    cg_loop_end(c, &le);
  }
}

/* One tile of P pixels starting at flattened pixel p0. When the tile
 * cannot straddle rows (OW % PIX == 0), pixel q is at a constant offset
 * from pixel 0; otherwise each pixel's offsets are computed on entry.
 * SMMLA computes an odd P's last pixel twice (PC = P + 1).
 * With `tap` (K blocking), only that tap: the accumulators start from the
 * bias at tap 0 and from the partial sums in `acc_slot` after it, and go
 * back there, except after the last tap, which runs the epilogue. */
static void micro_kernel(cg *c, dot_kstate *s, unsigned P, LLVMValueRef p0,
                         LLVMValueRef tap_k, LLVMValueRef acc_slot) {
  bool mmla = s->p->kind == DOT_SMMLA;
  unsigned PC = mmla && P % 2 ? P + 1 : P;
  const cg_dot_args *a = s->a;
  const dot_plan *p = s->p;
  const cg_conv_geom *g = &a->g;
  const cg_panel *pn = &p->pn;
  unsigned VL = p->VL, OCB = p->OCB;
  LLVMTypeRef vt = s->vt;
  LLVMTypeRef pt = p->u8panel ? c->t_i8 : c->t_i16;
  int64_t wvec = cg_dot_wvec_bytes(p);
  bool inrow = g->OW % p->PIX == 0 && P == p->PIX;
  LLVMValueRef xo[12], yo[12], bo[12];
  const cg_conv_add *fa = a->add;
  for (unsigned q = 0; q < P; q++) {
    if (q > 0 && inrow) {
      xo[q] = LLVMBuildAdd(c->b, xo[0],
                           cg_i64c(c, (int64_t)q * g->sw * pn->s_col), "");
      yo[q] = LLVMBuildAdd(c->b, yo[0],
                           cg_i64c(c, (int64_t)q * a->y.strides[3]), "");
      if (fa)
        bo[q] = LLVMBuildAdd(c->b, bo[0],
                             cg_i64c(c, (int64_t)q * fa->other.strides[3]), "");
    } else {
      pixel_offsets(c, s, LLVMBuildAdd(c->b, p0, cg_i64c(c, q), ""), &xo[q],
                    &yo[q], fa ? &bo[q] : NULL);
    }
  }
  if (PC > P) {
    xo[P] = xo[P - 1];
    yo[P] = yo[P - 1];
  }
  /* acc = bias' (SMMLA: as tiles), or the partial sums of the taps before */
  cg_if fi;
  if (tap_k)
    cg_if_begin(c, &fi,
                LLVMBuildICmp(c->b, LLVMIntEQ, tap_k, cg_i64c(c, 0), ""));
  for (unsigned v = 0; v < OCB; v++) {
    LLVMValueRef bch = LLVMBuildAdd(c->b, s->chbase, cg_i64c(c, v * VL), "");
    LLVMValueRef b = cg_load(c, vt, cg_gep(c, c->t_i32, s->biasp, bch), 4);
    LLVMValueRef bt[2] = {b, b};
    if (mmla)
      cg_arm_bias_to_mmla(c, b, &bt[0], &bt[1]);
    for (unsigned q = 0; q < PC; q++)
      cg_store(c, bt[q % 2], s->acc[q * OCB + v], 64);
  }
  if (tap_k) {
    cg_if_else(c, &fi);
    for (unsigned i = 0; i < PC * OCB; i++)
      cg_store(c,
               cg_load(c, vt, cg_gep8(c, acc_slot, cg_i64c(c, 4 * VL * i)),
                       4 * VL),
               s->acc[i], 64);
    cg_if_end(c, &fi);
  }
  cg_loop li, lj, lk;
  LLVMValueRef ti, tj;
  if (tap_k) {
    ti = LLVMBuildUDiv(c->b, tap_k, cg_i64c(c, p->KWk), "");
    tj = LLVMBuildURem(c->b, tap_k, cg_i64c(c, p->KWk), "");
  } else {
    cg_for(c, &li, 0, g->KH, 1);
    cg_for(c, &lj, 0, p->KWk, 1);
    ti = li.i;
    tj = lj.i;
  }
  LLVMValueRef tapo = LLVMBuildAdd(
      c->b, LLVMBuildMul(c->b, ti, cg_i64c(c, g->dh * pn->s_row), ""),
      LLVMBuildMul(c->b, tj, cg_i64c(c, g->dw * pn->s_col), ""), "");
  LLVMValueRef xp[12];
  for (unsigned q = 0; q < PC; q++)
    xp[q] = cg_gep(c, pt, s->panel, LLVMBuildAdd(c->b, xo[q], tapo, ""));
  LLVMValueRef tap = LLVMBuildAdd(
      c->b, LLVMBuildMul(c->b, ti, cg_i64c(c, p->KWk), ""), tj, "");
  LLVMValueRef wp = cg_gep8(
      c, s->wtile, LLVMBuildMul(c->b, tap, cg_i64c(c, p->C4 * OCB * wvec), ""));
  s->pf_base = NULL;
  /* this pixel tile's share of the next tap's lines, C4 a tile from the
   * tile's index (its first pixel over PIX; the first tiles are PIX wide
   * with mixed tiles too, and later indices clamp to the last line) */
  if (tap_k) {
    s->pf_base = cg_gep8(c, wp, cg_i64c(c, p->C4 * OCB * wvec));
    s->pf_line0 = LLVMBuildMul(
        c->b,
        LLVMBuildUDiv(c->b, LLVMBuildPtrDiff2(c->b, c->t_i8, acc_slot, s->accbuf, ""),
                      cg_i64c(c, (int64_t)4 * VL * OCB * p->PIX), ""),
        cg_i64c(c, p->C4), "");
  }
  unsigned U = dot_unroll(p);
  cg_for(c, &lk, 0, p->C4, U);
  LLVMValueRef x16[12];
  bool indexed = p->kind == DOT_SDOT && U == 4;
  for (unsigned q = 0; indexed && q < PC; q++)
    x16[q] = cg_load(c, vt,
                     cg_gep8(c, xp[q],
                             LLVMBuildMul(c->b, lk.i, cg_i64c(c, p->kg), "")),
                     1);
  for (unsigned u = 0; u < U; u++)
    dot_kstep(c, s, PC, xp, wp, LLVMBuildAdd(c->b, lk.i, cg_i64c(c, u), ""),
              indexed ? x16 : NULL, u);
  cg_loop_end(c, &lk);
  s->pf_base = NULL;
  cg_if fl;
  if (tap_k) { /* not the last tap: keep the partial sums */
    cg_if_begin(c, &fl,
                LLVMBuildICmp(c->b, LLVMIntNE, tap_k,
                              cg_i64c(c, g->KH * p->KWk - 1), ""));
    for (unsigned i = 0; i < PC * OCB; i++)
      cg_store(c, cg_load(c, vt, s->acc[i], 64),
               cg_gep8(c, acc_slot, cg_i64c(c, 4 * VL * i)), 4 * VL);
    cg_if_else(c, &fl);
  } else {
    cg_loop_end(c, &lj);
    cg_loop_end(c, &li);
  }
  if (p->corr)
    corr_steps(c, s, P, xo);
  if (mmla) /* tiles -> per-pixel vectors */
    for (unsigned q = 0; q < PC; q += 2)
      for (unsigned v = 0; v < OCB; v++) {
        LLVMValueRef ap = s->acc[q * OCB + v], bp = s->acc[(q + 1) * OCB + v];
        LLVMValueRef x0, x1;
        cg_arm_mmla_to_pixels(c, cg_load(c, vt, ap, 64), cg_load(c, vt, bp, 64),
                              &x0, &x1);
        cg_store(c, x0, ap, 64);
        cg_store(c, x1, bp, 64);
      }
  cg_dot_epilogue(c, s, P, yo, bo);
  if (tap_k)
    cg_if_end(c, &fl);
}

/* Tiles of P pixels from pixel `from` while they start before `to`; with
 * K blocking (tap), each tile's partial sums at its first pixel's place
 * in accbuf. */
static void tile_loop(cg *c, dot_kstate *s, unsigned P, LLVMValueRef from,
                      LLVMValueRef to, LLVMValueRef tap) {
  const dot_plan *p = s->p;
  cg_loop lp;
  cg_loop_begin(c, &lp, from, to, P);
  LLVMValueRef sl = NULL;
  if (tap)
    sl = cg_gep8(c, s->accbuf,
                 LLVMBuildMul(c->b, LLVMBuildSub(c->b, lp.i, s->lo, ""),
                              cg_i64c(c, (int64_t)4 * p->OCB * p->VL), ""));
  micro_kernel(c, s, P, lp.i, tap, sl);
  cg_loop_end(c, &lp);
}

static void emit_compute(cg *c, const cg_dot_args *a, dot_plan *p,
                         LLVMValueRef wg, LLVMValueRef bg) {
  const cg_conv_geom *g = &a->g;
  int64_t ntasks = g->N * g->G * p->ntiles * p->nchunks;
  cg_stage_begin(c, "dot", ntasks);
  /* about half the vpdpbusd peak of one core (less with 256-bit vectors)
   * and the requantizing epilogue, measured on MobileNetV2's 1x1 convs */
  cg_conv_work(c, g,
               c->tgt->isa == QUILL_LLVM_ISA_AVX512_VNNI ||
                       c->tgt->isa == QUILL_LLVM_ISA_AMX
                   ? 250.0
                   : 120.0,
               0.12);
  dot_kstate s;
  memset(&s, 0, sizeof s);
  s.a = a;
  s.p = p;
  s.vt = LLVMVectorType(c->t_i32, p->VL);
  LLVMValueRef panel = cg_panel_base(c, &p->pn, &a->x);
  s.yb = cg_view_base(c, &a->y);
  if (a->add)
    s.ob = cg_view_base(c, &a->add->other);
  s.biasp = bg;
  for (unsigned i = 0; i < p->PIX * p->OCB; i++) {
    s.acc[i] = cg_var(c, s.vt, "acc");
    LLVMSetAlignment(s.acc[i], 64);
  }
  cg_loop lt;
  cg_loop_begin(c, &lt, c->t0, c->t1, 1);
  LLVMValueRef chunk, tile, gr;
  cg_conv_task(c, lt.i, g->G, p->ntiles, p->nchunks, p->chunk_outer, &s.n,
               &gr, &tile, &chunk);
  int64_t wvec = cg_dot_wvec_bytes(p);
  int64_t tile_bytes = g->KH * p->KWk * p->C4 * p->OCB * wvec;
  s.wtile = cg_gep8(
      c, wg,
      LLVMBuildMul(c->b,
                   LLVMBuildAdd(c->b,
                                LLVMBuildMul(c->b, gr, cg_i64c(c, p->ntiles), ""),
                                tile, ""),
                   cg_i64c(c, tile_bytes), ""));
  LLVMValueRef tch = LLVMBuildMul(c->b, tile, cg_i64c(c, p->TW), "");
  s.chbase = LLVMBuildAdd(
      c->b, LLVMBuildMul(c->b, gr, cg_i64c(c, g->Mg), ""), tch, "chbase");
  s.valid = LLVMBuildSub(c->b, cg_i64c(c, g->Mg), tch, "valid");
  if (p->corr)
    s.clist = LLVMBuildMul(
        c->b,
        LLVMBuildAdd(c->b, LLVMBuildMul(c->b, gr, cg_i64c(c, p->ntiles), ""),
                     tile, ""),
        cg_i64c(c, p->OCB), "clist");
  /* the panel pointer of this group */
  s.panel = cg_gep8(
      c, panel,
      LLVMBuildMul(c->b, gr, cg_i64c(c, p->Cgp * (p->u8panel ? 1 : 2)), ""));
  LLVMValueRef lo = LLVMBuildMul(c->b, chunk, cg_i64c(c, p->chunk), "");
  LLVMValueRef hi = cg_min_s(
      c, LLVMBuildAdd(c->b, lo, cg_i64c(c, p->chunk), ""), cg_i64c(c, p->npix));
  s.lo = lo;
  /* K blocking: one task is all the pixels, one tap at a time over all of
   * its pixel tiles, each tile's partial sums in its slot of accbuf */
  LLVMValueRef accbuf = NULL, tapk = NULL;
  int64_t slot = (int64_t)p->PIX * p->OCB * p->VL * 4;
  cg_loop ltap;
  if (p->kblock) {
    accbuf = cg_var(c, LLVMArrayType2(c->t_i8, (uint64_t)(
                           cg_ceil_div(p->npix, p->PIX) * slot)), "accbuf");
    LLVMSetAlignment(accbuf, 64);
    s.accbuf = accbuf;
    cg_for(c, &ltap, 0, g->KH * p->KWk, 1);
    tapk = ltap.i;
  }
  if (p->nbig) { /* K blocking's mixed tiles: PIX pixels, then PIX - 1 */
    LLVMValueRef split = cg_i64c(c, p->nbig * p->PIX);
    tile_loop(c, &s, p->PIX, lo, cg_min_s(c, hi, split), tapk);
    tile_loop(c, &s, p->PIX - 1, cg_max_s(c, lo, split), hi, tapk);
  } else { /* full tiles while p + PIX <= hi */
    tile_loop(c, &s, p->PIX, lo,
              LLVMBuildSub(c->b, hi, cg_i64c(c, p->PIX - 1), ""), tapk);
  }
  /* the global remainder at the end */
  unsigned R = p->nbig ? 0 : (unsigned)(p->npix % p->PIX);
  LLVMValueRef sl = NULL;
  if (R) {
    cg_if fr;
    cg_if_begin(c, &fr, LLVMBuildICmp(c->b, LLVMIntEQ, hi,
                                      cg_i64c(c, p->npix), ""));
    if (p->kblock)
      sl = cg_gep8(c, accbuf,
                   LLVMBuildMul(c->b,
                                LLVMBuildSub(c->b, cg_i64c(c, p->npix - R), lo,
                                             ""),
                                cg_i64c(c, slot / p->PIX), ""));
    micro_kernel(c, &s, R, cg_i64c(c, p->npix - R), tapk, sl);
    cg_if_end(c, &fr);
  }
  if (p->kblock)
    cg_loop_end(c, &ltap);
  cg_loop_end(c, &lt);
  cg_stage_end(c);
}

quill_status cg_dot_emit(cg *c, const cg_dot_args *a) {
  dot_plan p;
  if (!cg_dot_plan(c, a, &p))
    return QUILL_ERR_INTERNAL;
  if (p.kind == DOT_VNNI && cg_amx_applies(c, a))
    return cg_amx_emit(c, a);
  const cg_conv_geom *g = &a->g;
  /* row windows read up to kg - 1 elements past a row: never in place */
  if (p.s8panel)
    cg_panel_plan_s8(c, g, &a->x, p.rowwin ? NULL : a->xv, p.Cgp, a->zpx,
                     &p.pn, p.rowwin);
  else
    cg_panel_plan(c, g, &a->x, p.rowwin ? NULL : a->xv, p.u8panel, p.Cgp,
                  a->zpx, &p.pn, p.rowwin);
  cg_panel_emit(c, g, &a->x, &p.pn);
  /* pixel chunks: about 8 per (image, group, tile), multiples of PIX */
  p.npix = g->OH * g->OW;
  int64_t tiles = cg_ceil_div(p.npix, p.PIX);
  int64_t per = cg_ceil_div(tiles, 8);
  p.chunk = per * p.PIX;
  p.nchunks = cg_ceil_div(p.npix, p.chunk);
  p.chunk_outer = cg_conv_chunk_outer(g->G * p.ntiles * g->KH * p.KWk *
                                      p.C4 * p.OCB * cg_dot_wvec_bytes(&p));
  /* K blocking (x86): a channel tile's weights too many to stay near the
   * core between runs (ResNet-18's 256- and 512-channel 3x3 convs: 147-295
   * KB a tile, 11.7 MB for the model) for few pixels (196, 49): one task
   * takes all the pixels and the taps go outermost (see the header). A
   * tile of 32-128 KB only when the conv's weights do not stay in L2
   * either: on 16-channel ymm tiles (avx-vnni) ResNet-18's 512-channel
   * 3x3 convs (74 KB a tile, 2.4 MB) went from 69% to 80-82% of the
   * vpdpbusd ymm peak, its 256 -> 512 3x3/2 conv (36 KB, 1.2 MB) from 66%
   * to 77%; its 128 -> 256 conv on zmm tiles (74 KB, 295 KB in all) lost
   * 6 points. */
  int64_t wtile = g->KH * p.KWk * p.C4 * (int64_t)p.OCB * cg_dot_wvec_bytes(&p);
  int64_t wconv = g->G * p.ntiles * wtile;
  int64_t accb = tiles * p.PIX * p.OCB * p.VL * 4;
  if (c->tgt->x86 && p.kind != DOT_SMMLA && g->KH * p.KWk > 1 &&
      (wtile >= KBLOCK_MIN_TILE ||
       (wtile >= KBLOCK_L1_TILE && wconv >= KBLOCK_BIG_CONV)) &&
      accb <= KBLOCK_MAX_ACC) {
    p.kblock = true;
    p.chunk = p.npix;
    p.nchunks = 1;
    cg_dot_mixed_tiles(a, &p);
  }
  a->rq->pad = (size_t)p.TW + 16;
  cg_requant_bound(a->rq, a->wc, a->bias, g->M, g->Cg * g->KH * g->KW);
  LLVMValueRef wg;
  if (p.corr) { /* pack the main weights; the corrections as lists */
    int32_t *wa = cg_ubsw_main_weights(c, a);
    if (!wa)
      return c->status;
    cg_dot_args am = *a;
    am.wc = wa;
    wg = cg_dot_pack_weights(c, &am, &p);
    cg_ubsw_main_weights_free(c, a, wa);
    cg_ubsw_shape sh = {.VL = p.VL, .OCB = p.OCB, .ntiles = p.ntiles,
                        .s_row = p.pn.s_row, .s_col = p.pn.s_col};
    if (!cg_ubsw_lists_emit(c, a, &sh, &p.cl))
      return c->status;
  } else {
    wg = cg_dot_pack_weights(c, a, &p);
  }
  LLVMValueRef bg = cg_dot_bias(c, a, p.u8panel ? p.pn.zpu : 0, p.TW);
  if (c->status)
    return c->status;
  emit_compute(c, a, &p, wg, bg);
  return c->status;
}
