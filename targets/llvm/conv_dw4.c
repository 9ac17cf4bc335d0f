/*
 * conv_dw4.c - depthwise qconv2d on the zmm VNNI paths (avx512-vnni, amx)
 * with vpdpbusd over four kernel rows at once: conv_dw.c's kernel spends a
 * widening shuffle and a vpmaddwd + vpaddd per 16 channels and tap; here
 * one vpdpbusd does 16 channels x 4 taps (u8 x s8, exact in i32).
 *
 * A zmm holds four 16-channel slots (128-bit lanes). Each slot is one
 * group of 16 channels of one strip of the output row: with C a multiple
 * of 64 a block is 64 consecutive channels of the whole row (one load, one
 * store); otherwise the row is cut into S strips (S = 4 / gcd(groups, 4))
 * and the 4 * k slots (strip, group) fill the blocks, loaded and stored
 * 16 bytes per slot. For kernel rows r0..r3 (a row group; missing rows
 * are zero) of input column col, four in-lane unpacks build the quads
 *
 *   A = unpacklo_bw(r0, r1)  B = unpackhi_bw(r0, r1)   (C, D: r2, r3)
 *   Q0 = unpacklo_wd(A, C)   Q1 = unpackhi_wd(A, C)   Q2, Q3: B, D
 *
 * dword t of slot L of Qm = (r0, r1, r2, r3) of the slot's channel
 * 4m + t, and acc_m += vpdpbusd(Qm(col), W[rg][j][m]) for every kernel
 * column j (bias', weights and scales are laid out in that permuted
 * order at compile time). Loop over the output pixels o of a strip:
 * input column o*sw + j*dw; the columns the next pixel shares (stride <
 * kernel span) are carried from one iteration to the next, so each
 * column's quads are built once.
 *
 * Epilogue (f32 requantization, half_even, 8-bit result): f = (f32)acc *
 * scale, vcvtps2dq (round to nearest even: the reference's quill_round of
 * the f32 product), + zp, then packssdw (acc0, acc1), (acc2, acc3) and
 * packuswb / packsswb: the saturating packs are the clamp to the storage
 * range and put the channels back in order (slot L, channels 0..15);
 * act_min/act_max clamp the bytes. Exact when |acc| * scale < 2^30 for
 * every input, which cg_dw4_applies checks per channel from the weights
 * and bias' (else conv_dw.c's kernel runs), as it checks the weights fit
 * s8.
 */
#include <math.h>
#include <string.h>

#include "targets/llvm/conv.h"

enum { SLOT = 16, NSLOT = 4, MAXB = 24 };

/* The u8-domain zero point of x (panel.c). */
static int64_t zpu_of(const cg_dot_args *a) {
  return a->zpx + (quill_type_is_signed(cg_storage(a->x.elem)) ? 128 : 0);
}

/* bias'[ch] = bias - zpu * sum(w), modulo 2^32 (as conv_dw.c). */
static int32_t bias_u8(const cg_dot_args *a, int64_t ch, int64_t zpu) {
  int64_t taps = a->g.KH * a->g.KW;
  uint32_t sum = 0;
  for (int64_t t = 0; t < taps; t++)
    sum += (uint32_t)a->wc[ch * taps + t];
  uint32_t b = (a->bias ? (uint32_t)a->bias[ch] : 0u) - (uint32_t)zpu * sum;
  return (int32_t)b;
}

static int64_t strips_of(int64_t ng) {
  int64_t gcd = ng % 4 == 0 ? 4 : ng % 2 == 0 ? 2 : 1;
  return 4 / gcd;
}

bool cg_dw4_applies(cg *c, const cg_dot_args *a) {
  const cg_target *t = c->tgt;
  const cg_conv_geom *g = &a->g;
  const cg_requant *rq = a->rq;
  if (!t->x86 || !t->avx512bw || !t->avx512vnni ||
      (t->isa != QUILL_LLVM_ISA_AVX512_VNNI && t->isa != QUILL_LLVM_ISA_AMX))
    return false;
  if (!cg_dw_applies(c, a) || a->add || rq->raw || rq->fixed || rq->epi ||
      rq->r != QUILL_ROUND_HALF_EVEN)
    return false;
  quill_type *ys = cg_storage(a->y.elem);
  if (quill_type_bit_width(ys) != 8 || rq->lo < (quill_type_is_signed(ys)
                                                     ? -128 : 0) ||
      rq->hi > (quill_type_is_signed(ys) ? 127 : 255))
    return false;
  int64_t ng = cg_ceil_div(g->C, SLOT);
  if (g->KH > 16 || (g->KW - 1) * g->dw + 1 > 64)
    return false;
  if (ng % 4 && ng * strips_of(ng) / 4 > MAXB)
    return false;
  int64_t taps = g->KH * g->KW, zpu = zpu_of(a);
  for (int64_t ch = 0; ch < g->C; ch++) {
    int64_t sumabs = 0;
    for (int64_t k = 0; k < taps; k++) {
      int32_t w = a->wc[ch * taps + k];
      if (w < -128 || w > 127)
        return false;
      sumabs += w < 0 ? -w : w;
    }
    float s = rq->scale[rq->n == 1 ? 0 : ch];
    double bound = fabs((double)bias_u8(a, ch, zpu)) + 255.0 * (double)sumabs;
    if (!isfinite(s) || bound >= 2147483647.0 ||
        bound * fabs((double)s) * 1.001 >= 1073741824.0)
      return false;
  }
  return true;
}

/* ---- emission -------------------------------------------------------------- */

typedef struct dw4 {
  const cg_dot_args *a;
  cg_panel pn;
  int64_t C, NG, S, L, RG, NB, span; /* span: (KW - 1) * dw + 1 columns */
  bool whole;                         /* blocks of 64 consecutive channels */
  LLVMTypeRef b64, i32v, f32v;
  LLVMValueRef panel, yb, xrow[64], yrow;
  LLVMValueRef wg, bg, sg; /* weight, bias', scale tables */
} dw4;

/* Slot k of block b: strip s, channel group gi. */
static void slot_of(const dw4 *d, int64_t b, int k, int64_t *s, int64_t *gi) {
  int64_t i = b * NSLOT + k;
  *s = i / d->NG;
  *gi = i % d->NG;
}

static int64_t strip_start(const dw4 *d, int64_t s) {
  int64_t p = s * d->L, last = d->a->g.OW - d->L;
  return p < last ? p : last;
}

static LLVMValueRef mask_const(cg *c, const int *m, unsigned n) {
  LLVMValueRef v[64];
  for (unsigned i = 0; i < n; i++)
    v[i] = m[i] < 0 ? LLVMGetUndef(c->t_i32) : cg_i32c(c, m[i]);
  return LLVMConstVector(v, n);
}

/* Bytes [off, off + 16 * n) of the 64-byte vector v get part (16n bytes). */
static LLVMValueRef place(cg *c, LLVMValueRef v, LLVMValueRef part,
                          unsigned off, unsigned n) {
  unsigned len = 16 * n;
  int m[64];
  if (len == 64)
    return part;
  for (unsigned i = 0; i < 64; i++)
    m[i] = i < len ? (int)i : -1;
  LLVMValueRef wide = LLVMBuildShuffleVector(
      c->b, part, LLVMGetUndef(LLVMTypeOf(part)), mask_const(c, m, 64), "");
  if (!v)
    return wide;
  for (unsigned i = 0; i < 64; i++)
    m[i] = i >= off && i < off + len ? (int)(64 + i - off) : (int)i;
  return LLVMBuildShuffleVector(c->b, v, wide, mask_const(c, m, 64), "");
}

/* Kernel row i (i >= KH: zero) at input column col (an i64 relative to
 * the slots' strip starts) for block b (a constant index, or the block
 * loop's value `bv` when whole). */
static LLVMValueRef load_row(cg *c, const dw4 *d, int64_t i, int64_t b,
                             LLVMValueRef bv, LLVMValueRef col) {
  const cg_conv_geom *g = &d->a->g;
  if (i >= g->KH)
    return LLVMConstNull(d->b64);
  LLVMValueRef base = LLVMBuildAdd(
      c->b, d->xrow[i], LLVMBuildMul(c->b, col, cg_i64c(c, d->pn.s_col), ""),
      "");
  if (d->whole)
    return cg_load(c, d->b64,
                   cg_gep8(c, d->panel,
                           LLVMBuildAdd(c->b, base,
                                        LLVMBuildMul(c->b, bv, cg_i64c(c, 64),
                                                     ""),
                                        "")),
                   1);
  LLVMValueRef v = NULL;
  for (int k = 0; k < NSLOT;) {
    int64_t s, gi, s2, g2;
    slot_of(d, b, k, &s, &gi);
    int n = 1;
    while (k + n < NSLOT) {
      slot_of(d, b, k + n, &s2, &g2);
      if (s2 != s || g2 != gi + n)
        break;
      n++;
    }
    int64_t off = strip_start(d, s) * g->sw * d->pn.s_col + gi * SLOT;
    LLVMValueRef p = cg_gep8(c, d->panel,
                             LLVMBuildAdd(c->b, base, cg_i64c(c, off), ""));
    LLVMValueRef part =
        cg_load(c, LLVMVectorType(c->t_i8, (unsigned)(16 * n)), p, 1);
    v = place(c, v, part, (unsigned)(16 * k), (unsigned)n);
    k += n;
  }
  return v;
}

/* In-lane unpack of a and b viewed as `ew`-bit elements (8 or 16), low or
 * high half of each 128-bit lane; bytes in, bytes out. */
static LLVMValueRef unpack(cg *c, const dw4 *d, LLVMValueRef a, LLVMValueRef b,
                           unsigned ew, bool hi) {
  unsigned n = 512 / ew, per = n / 4; /* elements, per 128-bit lane */
  LLVMTypeRef vt = LLVMVectorType(ew == 8 ? c->t_i8 : c->t_i16, n);
  int m[64];
  for (unsigned l = 0; l < 4; l++)
    for (unsigned i = 0; i < per / 2; i++) {
      unsigned src = l * per + i + (hi ? per / 2 : 0);
      m[l * per + 2 * i] = (int)src;
      m[l * per + 2 * i + 1] = (int)(n + src);
    }
  LLVMValueRef r = LLVMBuildShuffleVector(
      c->b, LLVMBuildBitCast(c->b, a, vt, ""), LLVMBuildBitCast(c->b, b, vt, ""),
      mask_const(c, m, n), "");
  return LLVMBuildBitCast(c->b, r, d->b64, "");
}

/* The quads Q0..Q3 (<16 x i32>) of row group rg at column col. */
static void build_quads(cg *c, const dw4 *d, int64_t rg, int64_t b,
                        LLVMValueRef bv, LLVMValueRef col, LLVMValueRef *q) {
  LLVMValueRef r[4];
  for (int k = 0; k < 4; k++)
    r[k] = load_row(c, d, rg * 4 + k, b, bv, col);
  LLVMValueRef A = unpack(c, d, r[0], r[1], 8, false);
  LLVMValueRef B = unpack(c, d, r[0], r[1], 8, true);
  LLVMValueRef Cc = unpack(c, d, r[2], r[3], 8, false);
  LLVMValueRef D = unpack(c, d, r[2], r[3], 8, true);
  LLVMValueRef qb[4] = {unpack(c, d, A, Cc, 16, false),
                        unpack(c, d, A, Cc, 16, true),
                        unpack(c, d, B, D, 16, false),
                        unpack(c, d, B, D, 16, true)};
  for (int m = 0; m < 4; m++)
    q[m] = LLVMBuildBitCast(c->b, qb[m], d->i32v, "");
}

/* Requantize acc[0..3] and store output pixel o of block b. */
static void epilogue(cg *c, const dw4 *d, int64_t b, LLVMValueRef bv,
                     LLVMValueRef o, LLVMValueRef *acc, LLVMValueRef tab) {
  const cg_requant *rq = d->a->rq;
  const cg_view *y = &d->a->y;
  bool sy = quill_type_is_signed(cg_storage(y->elem));
  LLVMValueRef iv[4];
  LLVMTypeRef ov[2] = {d->i32v, d->f32v};
  for (int m = 0; m < 4; m++) {
    LLVMValueRef s = cg_load(
        c, d->f32v, cg_gep(c, d->f32v, d->sg,
                           LLVMBuildAdd(c->b, tab, cg_i64c(c, m), "")),
        64);
    LLVMValueRef f = LLVMBuildFMul(
        c->b, LLVMBuildSIToFP(c->b, acc[m], d->f32v, ""), s, "");
    LLVMValueRef r = cg_intrinsic(c, "llvm.lrint", ov, 2, &f, 1);
    iv[m] = LLVMBuildAdd(c->b, r, cg_intc(d->i32v, rq->zp), "");
  }
  LLVMValueRef p01 = cg_intrinsic(c, "llvm.x86.avx512.packssdw.512", NULL, 0,
                                  (LLVMValueRef[]){iv[0], iv[1]}, 2);
  LLVMValueRef p23 = cg_intrinsic(c, "llvm.x86.avx512.packssdw.512", NULL, 0,
                                  (LLVMValueRef[]){iv[2], iv[3]}, 2);
  LLVMValueRef v = cg_intrinsic(
      c, sy ? "llvm.x86.avx512.packsswb.512" : "llvm.x86.avx512.packuswb.512",
      NULL, 0, (LLVMValueRef[]){p01, p23}, 2);
  int64_t smin = sy ? -128 : 0, smax = sy ? 127 : 255;
  LLVMTypeRef bt = d->b64;
  if (rq->lo > smin)
    v = cg_intrinsic(c, sy ? "llvm.smax" : "llvm.umax", &bt, 1,
                     (LLVMValueRef[]){v, cg_intc(d->b64, rq->lo)}, 2);
  if (rq->hi < smax)
    v = cg_intrinsic(c, sy ? "llvm.smin" : "llvm.umin", &bt, 1,
                     (LLVMValueRef[]){v, cg_intc(d->b64, rq->hi)}, 2);
  LLVMValueRef base = LLVMBuildAdd(
      c->b, d->yrow, LLVMBuildMul(c->b, o, cg_i64c(c, y->strides[3]), ""), "");
  if (d->whole) {
    cg_store(c, v, cg_gep8(c, d->yb, LLVMBuildAdd(c->b, base,
                                                  LLVMBuildMul(c->b, bv,
                                                               cg_i64c(c, 64),
                                                               ""),
                                                  "")),
             1);
    return;
  }
  LLVMTypeRef x16 = LLVMVectorType(c->t_i8, SLOT);
  for (int k = 0; k < NSLOT; k++) {
    int64_t s, gi;
    slot_of(d, b, k, &s, &gi);
    int m[16];
    for (int i = 0; i < 16; i++)
      m[i] = 16 * k + i;
    LLVMValueRef part = LLVMBuildShuffleVector(c->b, v, LLVMGetUndef(d->b64),
                                               mask_const(c, m, 16), "");
    int64_t off = strip_start(d, s) * y->strides[3] + gi * SLOT;
    LLVMValueRef p = cg_gep8(c, d->yb,
                             LLVMBuildAdd(c->b, base, cg_i64c(c, off), ""));
    int64_t valid = d->C - gi * SLOT;
    if (valid >= SLOT) {
      cg_store(c, part, p, 1);
      continue;
    }
    LLVMValueRef lm[16];
    for (int i = 0; i < 16; i++)
      lm[i] = LLVMConstInt(LLVMInt1TypeInContext(c->lc), i < valid, 0);
    LLVMTypeRef ovs[2] = {x16, c->t_ptr};
    cg_intrinsic(c, "llvm.masked.store", ovs, 2,
                 (LLVMValueRef[]){part, p, cg_i32c(c, 1),
                                  LLVMConstVector(lm, 16)},
                 4);
  }
}

/* One block: the loop over the strip's output pixels. */
static void emit_block(cg *c, const dw4 *d, int64_t b, LLVMValueRef bv) {
  const cg_conv_geom *g = &d->a->g;
  int64_t sw = g->sw, dwl = g->dw, span = d->span, KW = g->KW, RG = d->RG;
  /* table index of the block's first vector (weights: RG * KW * 4) */
  LLVMValueRef bi = bv ? bv : cg_i64c(c, b);
  LLVMValueRef tab = LLVMBuildMul(c->b, bi, cg_i64c(c, 4), "");
  LLVMValueRef wtab = LLVMBuildMul(c->b, bi, cg_i64c(c, RG * KW * 4), "");
  LLVMValueRef bias[4];
  for (int m = 0; m < 4; m++)
    bias[m] = cg_load(c, d->i32v,
                      cg_gep(c, d->i32v, d->bg,
                             LLVMBuildAdd(c->b, tab, cg_i64c(c, m), "")),
                      64);
  /* window slots t = j * dw; carried from the previous pixel when slot
   * t + sw is a tap column too */
  bool carried[64] = {false};
  LLVMValueRef var[64][4 * 4]; /* [t][rg * 4 + m] */
  for (int64_t j = 0; j < KW; j++) {
    int64_t t = j * dwl;
    carried[t] = t + sw < span && (t + sw) % dwl == 0;
    if (!carried[t])
      continue;
    for (int64_t k = 0; k < RG * 4; k++)
      var[t][k] = cg_var(c, d->i32v, "dwq");
    for (int64_t rg = 0; rg < RG; rg++) {
      LLVMValueRef q[4];
      build_quads(c, d, rg, b, bv, cg_i64c(c, t), q);
      for (int m = 0; m < 4; m++)
        cg_store(c, q[m], var[t][rg * 4 + m], 64);
    }
  }
  cg_loop lo;
  cg_for(c, &lo, 0, d->L, 1);
  LLVMValueRef col0 = LLVMBuildMul(c->b, lo.i, cg_i64c(c, sw), "");
  LLVMValueRef cur[64][4 * 4];
  LLVMValueRef acc[4] = {bias[0], bias[1], bias[2], bias[3]};
  for (int64_t j = 0; j < KW; j++) {
    int64_t t = j * dwl;
    for (int64_t rg = 0; rg < RG; rg++) {
      if (carried[t])
        for (int m = 0; m < 4; m++)
          cur[t][rg * 4 + m] = cg_load(c, d->i32v, var[t][rg * 4 + m], 64);
      else
        build_quads(c, d, rg, b, bv,
                    LLVMBuildAdd(c->b, col0, cg_i64c(c, t), ""),
                    &cur[t][rg * 4]);
      for (int m = 0; m < 4; m++) {
        LLVMValueRef wi = LLVMBuildAdd(
            c->b, wtab, cg_i64c(c, (rg * KW + j) * 4 + m), "");
        LLVMValueRef w = cg_load(c, d->i32v, cg_gep(c, d->i32v, d->wg, wi), 64);
        acc[m] = cg_intrinsic(c, "llvm.x86.avx512.vpdpbusd.512", NULL, 0,
                              (LLVMValueRef[]){acc[m], cur[t][rg * 4 + m], w},
                              3);
      }
    }
  }
  epilogue(c, d, b, bv, lo.i, acc, tab);
  for (int64_t j = 0; j < KW; j++) {
    int64_t t = j * dwl;
    if (carried[t])
      for (int64_t k = 0; k < RG * 4; k++)
        cg_store(c, cur[t + sw][k], var[t][k], 64);
  }
  cg_loop_end(c, &lo);
}

quill_status cg_dw4_emit(cg *c, const cg_dot_args *a) {
  const cg_conv_geom *g = &a->g;
  const cg_requant *rq = a->rq;
  dw4 d;
  memset(&d, 0, sizeof d);
  d.a = a;
  d.C = g->C;
  d.NG = cg_ceil_div(g->C, SLOT);
  d.whole = d.NG % 4 == 0 && g->C % SLOT == 0;
  d.S = d.whole ? 1 : strips_of(d.NG);
  d.L = cg_ceil_div(g->OW, d.S);
  d.RG = cg_ceil_div(g->KH, 4);
  d.NB = d.NG * d.S / NSLOT;
  d.span = (g->KW - 1) * g->dw + 1;
  d.b64 = LLVMVectorType(c->t_i8, 64);
  d.i32v = LLVMVectorType(c->t_i32, 16);
  d.f32v = LLVMVectorType(c->t_f32, 16);
  cg_conv_geom pg = *g;
  pg.G = 1;
  pg.Cg = g->C;
  cg_panel_plan(c, &pg, &a->x, a->xv, true, d.NG * SLOT, a->zpx, &d.pn, false);
  cg_panel_emit(c, &pg, &a->x, &d.pn);
  /* tables: weights [NB][RG][KW][4][64 bytes], bias' and scale [NB][4][16] */
  size_t nw = (size_t)(d.NB * d.RG * g->KW * 4 * 64);
  size_t nb = (size_t)(d.NB * 4 * 16);
  int8_t *wt = quill_calloc(c->ctx, nw, 1);
  int32_t *bt = quill_calloc(c->ctx, nb, sizeof *bt);
  float *st = quill_calloc(c->ctx, nb, sizeof *st);
  if (!wt || !bt || !st) {
    quill_free(c->ctx, wt, nw);
    quill_free(c->ctx, bt, nb * sizeof *bt);
    quill_free(c->ctx, st, nb * sizeof *st);
    return QUILL_ERR_NOMEM;
  }
  int64_t taps = g->KH * g->KW, zpu = d.pn.zpu;
  for (int64_t b = 0; b < d.NB; b++)
    for (int k = 0; k < NSLOT; k++) {
      int64_t s, gi;
      slot_of(&d, b, k, &s, &gi);
      for (int m = 0; m < 4; m++)
        for (int t = 0; t < 4; t++) {
          int64_t ch = gi * SLOT + m * 4 + t;
          size_t lane = (size_t)((b * 4 + m) * 16 + k * 4 + t);
          if (ch >= g->C)
            continue;
          bt[lane] = bias_u8(a, ch, zpu);
          st[lane] = rq->scale[rq->n == 1 ? 0 : ch];
          for (int64_t rg = 0; rg < d.RG; rg++)
            for (int64_t j = 0; j < g->KW; j++)
              for (int r = 0; r < 4; r++) {
                int64_t i = rg * 4 + r;
                if (i >= g->KH)
                  continue;
                size_t at = (size_t)((((b * d.RG + rg) * g->KW + j) * 4 + m) *
                                     64) +
                            (size_t)(k * 16 + t * 4 + r);
                wt[at] = (int8_t)a->wc[ch * taps + i * g->KW + j];
              }
        }
    }
  d.wg = cg_const_global(c, "dw4w", wt, nw);
  d.bg = cg_const_global(c, "dw4b", bt, nb * sizeof *bt);
  d.sg = cg_const_global(c, "dw4s", st, nb * sizeof *st);
  quill_free(c->ctx, wt, nw);
  quill_free(c->ctx, bt, nb * sizeof *bt);
  quill_free(c->ctx, st, nb * sizeof *st);

  cg_stage_begin(c, "dwconv", g->N * g->OH);
  cg_stage_work(c, (double)(g->N * g->M * g->OH * g->OW * g->KH * g->KW) /
                       40.0);
  d.panel = cg_panel_base(c, &d.pn, &a->x);
  d.yb = cg_view_base(c, &a->y);
  cg_loop lt;
  cg_loop_begin(c, &lt, c->t0, c->t1, 1);
  LLVMValueRef n = LLVMBuildUDiv(c->b, lt.i, cg_i64c(c, g->OH), "n");
  LLVMValueRef oh = LLVMBuildURem(c->b, lt.i, cg_i64c(c, g->OH), "oh");
  LLVMValueRef x0 = LLVMBuildAdd(
      c->b, LLVMBuildMul(c->b, n, cg_i64c(c, d.pn.s_n), ""),
      LLVMBuildMul(c->b, oh, cg_i64c(c, g->sh * d.pn.s_row), ""), "");
  for (int64_t i = 0; i < g->KH; i++)
    d.xrow[i] = LLVMBuildAdd(c->b, x0, cg_i64c(c, i * g->dh * d.pn.s_row), "");
  d.yrow = LLVMBuildAdd(
      c->b, LLVMBuildMul(c->b, n, cg_i64c(c, a->y.strides[0]), ""),
      LLVMBuildMul(c->b, oh, cg_i64c(c, a->y.strides[2]), ""), "");
  if (d.whole) {
    cg_loop lb;
    cg_for(c, &lb, 0, d.NB, 1);
    emit_block(c, &d, 0, lb.i);
    cg_loop_end(c, &lb);
  } else {
    for (int64_t b = 0; b < d.NB; b++)
      emit_block(c, &d, b, NULL);
  }
  cg_loop_end(c, &lt);
  cg_stage_end(c);
  return c->status;
}
