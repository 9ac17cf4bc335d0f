/*
 * conv_dot_plan.c - the plan of a dot-product convolution kernel
 * (conv_dot.c): which instruction kind a conv's ISA path and weights
 * allow (VNNI, UBSW with or without correction steps, WD, MUL, SDOT,
 * SMMLA), and the tile shape (channel vectors x pixels) with the lowest
 * estimated cost for the registers the kind leaves free (for a K-blocked
 * conv also the mixed tiles that replace a latency-bound remainder tile);
 * then the weights packed in the order the tiles consume them, the bias
 * with the panel's zero point folded in, and the split of a task index
 * into (n, group, channel tile, pixel chunk).
 */
#include <string.h>

#include "targets/llvm/conv_dot_impl.h"

/* UBSW with correction steps while at most this share of the steps need
 * one (a correction step costs about a main step, vpmaddwd on i16 about
 * 1.3 of them at the peak plus a panel of twice the bytes; measured on
 * ResNet-18's 3x3 convs: 10-22% corrections 1.1-1.37x faster than WD,
 * 24-30% 1.03-1.06x, within the noise) */
#define UBSW_MAX_CORR 0.3

/* vpdpbusd's latency in issue slots (Intel since Ice Lake: 5 cycles, 2 a
 * cycle): a tile of fewer accumulators waits on them */
#define VNNI_LAT_SLOTS 10.0

static bool weights_fit(const cg_dot_args *a, int64_t lo, int64_t hi) {
  const cg_conv_geom *g = &a->g;
  size_t n = (size_t)(g->M * g->Cg * g->KH * g->KW);
  for (size_t i = 0; i < n; i++)
    if (a->wc[i] < lo || a->wc[i] > hi)
      return false;
  return true;
}

/* The estimated cost of a tile of P pixels and o channel vectors: per
 * kernel step max(o*P dot products, o + 1.5P loads, the latency floor
 * lat), plus an epilogue per output vector and, for a tile that may
 * straddle rows, its pixel offsets. */
static double tile_cost(unsigned o, unsigned P, int64_t ksteps, double lat,
                        bool straddle) {
  double d = (double)o * P, l = o + 1.5 * P;
  double step = d > l ? d : l;
  if (step < lat)
    step = lat;
  return (double)ksteps * step + 4.0 * d + (straddle ? 1.5 * P : 0.0);
}

/* Choose the kind and the tile shape; false if no dot kernel fits. */
bool cg_dot_plan(cg *c, const cg_dot_args *a, dot_plan *p) {
  memset(p, 0, sizeof *p);
  const cg_target *t = c->tgt;
  quill_type *xs = cg_storage(a->x.elem);
  unsigned xbits = quill_type_bit_width(xs);
  if (xbits != 8 || !a->wc || (a->y.dims[1] > 1 && a->y.strides[1] != 1))
    return false;
  if (quill_type_kind_of(cg_storage(a->y.elem)) != QUILL_TYPE_I32 &&
      quill_type_bit_width(cg_storage(a->y.elem)) > 16)
    return false;
  bool s8w = weights_fit(a, -128, 127);
  switch (t->isa) {
  case QUILL_LLVM_ISA_AMX:
  case QUILL_LLVM_ISA_AVX512_VNNI:
  case QUILL_LLVM_ISA_AVX_VNNI:
    if (s8w) {
      p->kind = DOT_VNNI;
      break;
    }
    if (!t->avx2)
      return false;
    p->kind = DOT_WD;
    break;
  case QUILL_LLVM_ISA_AVX2: {
    bool rw = a->g.G == 1 && a->g.dw == 1 && a->g.KW > 1 && a->g.Cg % 4 != 0;
    p->kind = s8w && cg_ubsw_safe(a, rw) ? DOT_UBSW : DOT_WD;
    if (p->kind == DOT_WD && s8w && !rw &&
        cg_ubsw_corr_share(a, 8) <= UBSW_MAX_CORR) {
      p->kind = DOT_UBSW;
      p->corr = true;
    }
    break;
  }
  case QUILL_LLVM_ISA_NEON_DOT:
    p->kind = s8w ? DOT_SDOT : DOT_MUL;
    break;
  case QUILL_LLVM_ISA_NEON_I8MM:
    p->kind = s8w ? DOT_SMMLA : DOT_MUL;
    break;
  default:
    p->kind = DOT_MUL;
    break;
  }
  if (!weights_fit(a, -32768, 32767))
    return false;
  bool zmm = t->isa == QUILL_LLVM_ISA_AVX512_VNNI ||
             t->isa == QUILL_LLVM_ISA_AMX ||
             (p->kind == DOT_MUL && t->avx512f && t->avx512bw);
  p->VL = zmm ? 16 : (t->x86 && (t->avx2 || p->kind != DOT_MUL)) ? 8 : 4;
  p->nreg = zmm || t->aarch64 ? 32 : 16;
  p->kg = p->kind == DOT_MUL     ? 1
          : p->kind == DOT_WD    ? 2
          : p->kind == DOT_SMMLA ? 8
                                 : 4;
  p->s8panel = p->kind == DOT_SDOT || p->kind == DOT_SMMLA;
  p->u8panel = p->kind == DOT_VNNI || p->kind == DOT_UBSW || p->s8panel;
  /* tile shape: the (channel vectors, pixels) pair with the lowest
   * estimated cost (tile_cost: dot products and loads issue about twice
   * per cycle), summed over every channel tile (lanes past the last
   * channel are computed too) and every pixel tile including the
   * remainder tile. */
  int64_t Mg = a->g.Mg;
  int64_t nvec = cg_ceil_div(Mg, p->VL);
  int64_t npix = a->g.OH * a->g.OW;
  /* Row windows: with one group, no horizontal dilation and channels that
   * do not fill whole kg groups (the first conv: C = 3), a window row
   * x[r][c0..c0+KW)[0..Cg) is KW*Cg contiguous panel elements, consumed
   * in kg-element steps with no per-pixel channel padding. */
  p->rowwin = a->g.G == 1 && a->g.dw == 1 && a->g.KW > 1 &&
              a->g.Cg % p->kg != 0;
  p->KWk = p->rowwin ? 1 : a->g.KW;
  int64_t ksteps = p->rowwin
                       ? a->g.KH * cg_ceil_div(a->g.KW * a->g.Cg, p->kg)
                       : a->g.KH * a->g.KW * cg_ceil_div(a->g.Cg, p->kg);
  unsigned maxo = p->nreg == 16 ? 2 : 4;
  /* registers besides accumulators and weights: the broadcast; UBSW
   * also the ones and its i16 product, WD its product (vpmaddwd and
   * vpmaddubsw write a new register, vpdpbusd the accumulator). Without
   * them, 16 ymm registers (AVX2) spilled accumulators on every step. */
  unsigned spare = p->kind == DOT_UBSW ? 3 : p->kind == DOT_WD ? 2 : 1;
  double best = -1;
  /* widest tiles first; another shape must be clearly cheaper (measured:
   * at equal estimates, more channel vectors per tile run faster) */
  for (unsigned o = maxo; o >= 1; o--) {
    if (o > nvec)
      continue;
    /* SMMLA: 2 weight registers per vector, one x per pixel pair, even
     * pixel counts; SDOT: one x register per pixel (indexed sdot) */
    unsigned pmax = p->kind == DOT_SMMLA
                        ? (p->nreg - 2 * o - 1) * 2 / (2 * o + 1)
                    : p->kind == DOT_SDOT ? (p->nreg - o) / (o + 1)
                                          : (p->nreg - o - spare) / o;
    if (pmax > 12)
      pmax = 12;
    for (unsigned q = pmax; q >= 1; q--) {
      if (p->kind == DOT_SMMLA && q % 2)
        continue;
      int64_t full = npix / q, rem = npix % q;
      /* a tile that may straddle rows computes each pixel's offsets
       * (a division by OW) on entry */
      double tile = tile_cost(o, q, ksteps, 0.0,
                              npix > a->g.OW && a->g.OW % q);
      double rt = rem ? tile_cost(o, (unsigned)rem, ksteps, 0.0, false) : 0;
      double cost = (double)cg_ceil_div(nvec, o) * ((double)full * tile + rt);
      if (best < 0 || cost < best * 0.97) {
        best = cost;
        p->OCB = o;
        p->PIX = q;
      }
    }
  }
  p->TW = (int64_t)p->OCB * p->VL;
  p->ntiles = cg_ceil_div(Mg, p->TW);
  if (p->rowwin) {
    p->Cgp = a->g.Cg;
    p->C4 = cg_ceil_div(a->g.KW * a->g.Cg, p->kg);
  } else {
    p->Cgp = cg_ceil_div(a->g.Cg, p->kg) * p->kg;
    p->C4 = p->Cgp / p->kg;
  }
  return true;
}

bool cg_dot_applies(cg *c, const cg_dot_args *a) {
  dot_plan p;
  return cg_dot_plan(c, a, &p);
}

/* ---- packing --------------------------------------------------------------- */

int32_t cg_dot_weight(const cg_dot_args *a, bool rowwin, int64_t gr,
                      int64_t mg, int64_t i, int64_t j, int64_t ci) {
  const cg_conv_geom *g = &a->g;
  if (rowwin) { /* element ci of the window row: (kw, c) */
    if (ci >= g->KW * g->Cg)
      return 0;
    j = ci / g->Cg;
    ci %= g->Cg;
  }
  if (mg >= g->Mg || ci >= g->Cg)
    return 0;
  int64_t K = g->Cg * g->KH * g->KW;
  return a->wc[(gr * g->Mg + mg) * K + (ci * g->KH + i) * g->KW + j];
}

/* Mixed tiles: with R = npix % PIX pixels left over, the last PIX - R
 * tiles take PIX - 1 pixels each instead of one tile taking R. A VNNI
 * tile of few accumulators is bound by vpdpbusd's latency: ResNet-18's
 * 512-channel 3x3 convs at 7x7 (49 pixels) ran 8 tiles of 6 and one of
 * 1 (4 accumulators in zmm, 2 in ymm); as 4 tiles of 6 and 5 of 5 every
 * tile keeps 20 (10) in flight: 3.5% (3%) faster. Same tile count, so
 * the chunks and tasks do not change. Only with K blocking, where a
 * tap's weights stay in L1 across the pixel tiles: a conv whose tiles
 * stream their weights from L2 (GoogLeNet's 7x7 convs) reads them at a
 * higher rate in smaller tiles and ran 3-8% slower. */
void cg_dot_mixed_tiles(const cg_dot_args *a, dot_plan *p) {
  p->nbig = 0;
  int64_t R = p->npix % p->PIX, full = p->npix / p->PIX;
  int64_t small = p->PIX - R;
  if (p->kind != DOT_VNNI || R == 0 || p->PIX < 3 || full < small)
    return;
  int64_t ksteps = a->g.KH * p->KWk * p->C4;
  bool st = p->npix > a->g.OW;
  double big = tile_cost(p->OCB, p->PIX, ksteps, VNNI_LAT_SLOTS, false);
  double rem = (double)full * big +
               tile_cost(p->OCB, (unsigned)R, ksteps, VNNI_LAT_SLOTS, st);
  double mix = (double)(full + 1 - small) * big +
               (double)small * tile_cost(p->OCB, p->PIX - 1, ksteps,
                                         VNNI_LAT_SLOTS, st);
  if (mix < rem * 0.98)
    p->nbig = full + 1 - small;
}

LLVMValueRef cg_dot_pack_weights(cg *c, const cg_dot_args *a,
                                 const dot_plan *p) {
  const cg_conv_geom *g = &a->g;
  size_t esz = p->u8panel ? 1 : 2;
  size_t per_tile = (size_t)(g->KH * p->KWk * p->C4 * p->TW * p->kg);
  size_t n = (size_t)(g->G * p->ntiles) * per_tile;
  unsigned char *buf = quill_calloc(c->ctx, n ? n : 1, esz);
  if (!buf) {
    c->status = QUILL_ERR_NOMEM;
    return NULL;
  }
  size_t e = 0;
  for (int64_t gr = 0; gr < g->G; gr++)
    for (int64_t tile = 0; tile < p->ntiles; tile++)
      for (int64_t i = 0; i < g->KH; i++)
        for (int64_t j0 = 0; j0 < p->KWk; j0++)
          for (int64_t c4 = 0; c4 < p->C4; c4++)
            for (int64_t lane = 0; lane < p->TW; lane++)
              for (unsigned q = 0; q < p->kg; q++, e++) {
                int32_t v = cg_dot_weight(a, p->rowwin, gr, tile * p->TW + lane,
                                          i, j0, c4 * p->kg + q);
                if (esz == 1)
                  buf[e] = (unsigned char)(int8_t)v;
                else {
                  int16_t h = (int16_t)v;
                  memcpy(buf + 2 * e, &h, 2);
                }
              }
  LLVMValueRef gl = cg_const_global(c, "wpack", buf, n * esz);
  quill_free(c->ctx, buf, (n ? n : 1) * esz);
  return gl;
}

bool cg_conv_chunk_outer(int64_t weight_bytes) {
  /* small next to a core's L2 (1-2 MiB on today's x86 and Arm servers):
   * MobileNetV2's 1x1 convs (up to 410 KiB), not ResNet-18's last 3x3s */
  return weight_bytes <= (int64_t)512 * 1024;
}

void cg_conv_task(cg *c, LLVMValueRef t, int64_t G, int64_t ntiles,
                  int64_t nchunks, bool chunk_outer, LLVMValueRef *n,
                  LLVMValueRef *gr, LLVMValueRef *tile, LLVMValueRef *chunk) {
  if (!chunk_outer) {
    *chunk = LLVMBuildURem(c->b, t, cg_i64c(c, nchunks), "chunk");
    t = LLVMBuildUDiv(c->b, t, cg_i64c(c, nchunks), "");
  }
  *tile = LLVMBuildURem(c->b, t, cg_i64c(c, ntiles), "tile");
  t = LLVMBuildUDiv(c->b, t, cg_i64c(c, ntiles), "");
  *gr = LLVMBuildURem(c->b, t, cg_i64c(c, G), "g");
  t = LLVMBuildUDiv(c->b, t, cg_i64c(c, G), "");
  if (chunk_outer) {
    *chunk = LLVMBuildURem(c->b, t, cg_i64c(c, nchunks), "chunk");
    t = LLVMBuildUDiv(c->b, t, cg_i64c(c, nchunks), "");
  }
  *n = t;
}

LLVMValueRef cg_dot_bias(cg *c, const cg_dot_args *a, int64_t zpu,
                         int64_t pad) {
  const cg_conv_geom *g = &a->g;
  size_t n = (size_t)(g->M + pad);
  uint32_t *b = quill_calloc(c->ctx, n, sizeof *b);
  if (!b) {
    c->status = QUILL_ERR_NOMEM;
    return NULL;
  }
  int64_t K = g->Cg * g->KH * g->KW;
  for (int64_t m = 0; m < g->M; m++) {
    uint32_t s = 0;
    for (int64_t k = 0; k < K; k++)
      s += (uint32_t)a->wc[m * K + k];
    b[m] = (a->bias ? (uint32_t)a->bias[m] : 0u) - (uint32_t)zpu * s;
  }
  LLVMValueRef gl = cg_const_global(c, "biasp", b, n * sizeof *b);
  quill_free(c->ctx, b, n * sizeof *b);
  return gl;
}
