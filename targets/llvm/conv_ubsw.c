/*
 * conv_ubsw.c - vpmaddubsw on the avx2 path for weights some of whose
 * pairs could saturate it, exactly: the pairs split in two.
 *
 * vpmaddubsw sums two u8 x s8 products into an i16 with saturation. The
 * dot kernels (conv_dot.c) pair neighbouring input channels c, c+1 of a
 * tap; with inputs up to 255 a pair (w0, w1) can saturate when
 *
 *   255 * (max(w0, 0) + max(w1, 0)) > 32767  or
 *   255 * (min(w0, 0) + min(w1, 0)) < -32768,
 *
 * that is two same-sign weights above 128 together. Per-channel int8
 * weights (each channel's largest at +-127) have a few such pairs: 0.7-2.3%
 * of the pairs of ResNet-18's 3x3 convs, so the whole conv took vpmaddwd
 * on i16 (DOT_WD), 1.3x vpmaddubsw's cost per MAC at the peak and twice
 * its panel bytes.
 *
 * Here each unsafe pair is split, w = a + d with a = w / 2 (truncated)
 * and d = w - a, both in [-64, 64]: 255 * 128 = 32640 cannot saturate.
 * The main weights (every other pair unchanged) run the ordinary kernel;
 * the corrections d run as extra steps over the same panel bytes, only
 * for the (8-lane weight vector, tap, 4-channel group) steps where some
 * lane has an unsafe pair:
 *
 *   acc[p][v] += ubsw-dot(x[p] at off[e], dw[e])   for e in list(tile, v)
 *
 * each list entry being the group's panel offset from the pixel (tap and
 * channel) and its 8 x 4 correction bytes. The kernel runs them after the
 * taps, before the epilogue. The sums are those of the i32 dot products
 * of the original weights (no step saturates), so the results are the
 * interpreter's bit for bit. conv_dot.c takes this path when the share of
 * correction steps keeps it cheaper than vpmaddwd (UBSW_MAX_CORR, 30%):
 * ResNet-18's 3x3 convs need 10-30% (layer4 10%), its 1x1 downsample
 * convs 42-74% and keep vpmaddwd. Row-window convs (the 3-channel stem)
 * keep vpmaddwd too: their pairs straddle taps.
 */
#include <string.h>

#include "targets/llvm/conv.h"

bool cg_ubsw_pair_unsafe(int32_t w0, int32_t w1) {
  int64_t pos = (w0 > 0 ? w0 : 0) + (w1 > 0 ? w1 : 0);
  int64_t neg = (w0 < 0 ? w0 : 0) + (w1 < 0 ? w1 : 0);
  return 255 * pos > 32767 || 255 * neg < -32768;
}

/* Pair by pair as the instruction sums them: neighbouring channels, or
 * neighbouring elements of a window row (rowwin). */
bool cg_ubsw_safe(const cg_dot_args *a, bool rowwin) {
  const cg_conv_geom *g = &a->g;
  int64_t K = g->Cg * g->KH * g->KW;
  int64_t run = rowwin ? g->KW * g->Cg : g->Cg; /* elements per step run */
  int64_t outer = rowwin ? 1 : g->KW;
  for (int64_t m = 0; m < g->M; m++)
    for (int64_t i = 0; i < g->KH; i++)
      for (int64_t j0 = 0; j0 < outer; j0++)
        for (int64_t r = 0; r < run; r += 2) {
          int32_t w[2] = {0, 0};
          for (int k = 0; k < 2 && r + k < run; k++) {
            int64_t e = r + k, j = rowwin ? e / g->Cg : j0;
            int64_t ci = rowwin ? e % g->Cg : e;
            w[k] = a->wc[m * K + (ci * g->KH + i) * g->KW + j];
          }
          if (cg_ubsw_pair_unsafe(w[0], w[1]))
            return false;
        }
  return true;
}

/* Whether vector (group gr, lanes mg0..mg0+VL) has an unsafe pair in
 * channel group c4 (kg = 4 channels) of tap (i, j). */
static bool step_unsafe(const cg_dot_args *a, int64_t gr, int64_t mg0,
                        unsigned VL, int64_t i, int64_t j, int64_t c4) {
  for (unsigned l = 0; l < VL; l++)
    for (int64_t ci = 4 * c4; ci < 4 * c4 + 4; ci += 2)
      if (cg_ubsw_pair_unsafe(
              cg_dot_weight(a, false, gr, mg0 + l, i, j, ci),
              cg_dot_weight(a, false, gr, mg0 + l, i, j, ci + 1)))
        return true;
  return false;
}

double cg_ubsw_corr_share(const cg_dot_args *a, unsigned VL) {
  const cg_conv_geom *g = &a->g;
  int64_t C4 = (g->Cg + 3) / 4, nvec = (g->Mg + VL - 1) / VL;
  int64_t n = 0, all = g->G * nvec * g->KH * g->KW * C4;
  for (int64_t gr = 0; gr < g->G; gr++)
    for (int64_t v = 0; v < nvec; v++)
      for (int64_t i = 0; i < g->KH; i++)
        for (int64_t j = 0; j < g->KW; j++)
          for (int64_t c4 = 0; c4 < C4; c4++)
            n += step_unsafe(a, gr, v * VL, VL, i, j, c4);
  return all ? (double)n / (double)all : 0.0;
}

/* The main weights: wc with every unsafe pair halved (M x K, as wc). */
int32_t *cg_ubsw_main_weights(cg *c, const cg_dot_args *a) {
  const cg_conv_geom *g = &a->g;
  int64_t K = g->Cg * g->KH * g->KW;
  size_t n = (size_t)(g->M * K);
  int32_t *wa = quill_calloc(c->ctx, n ? n : 1, sizeof *wa);
  if (!wa) {
    c->status = QUILL_ERR_NOMEM;
    return NULL;
  }
  memcpy(wa, a->wc, n * sizeof *wa);
  for (int64_t m = 0; m < g->M; m++)
    for (int64_t i = 0; i < g->KH; i++)
      for (int64_t j = 0; j < g->KW; j++)
        for (int64_t ci = 0; ci + 1 < g->Cg; ci += 2) {
          int32_t *w0 = &wa[m * K + (ci * g->KH + i) * g->KW + j];
          int32_t *w1 = &wa[m * K + ((ci + 1) * g->KH + i) * g->KW + j];
          if (cg_ubsw_pair_unsafe(*w0, *w1)) {
            *w0 /= 2;
            *w1 /= 2;
          }
        }
  return wa;
}

void cg_ubsw_main_weights_free(cg *c, const cg_dot_args *a, int32_t *wa) {
  const cg_conv_geom *g = &a->g;
  size_t n = (size_t)(g->M * g->Cg * g->KH * g->KW);
  quill_free(c->ctx, wa, (n ? n : 1) * sizeof *wa);
}

/* The correction of lane weight w of an unsafe pair: w - w / 2. */
static int32_t corr(const cg_dot_args *a, int64_t gr, int64_t mg, int64_t i,
                    int64_t j, int64_t ci) {
  int64_t cp = ci ^ 1;
  int32_t w = cg_dot_weight(a, false, gr, mg, i, j, ci);
  int32_t o = cg_dot_weight(a, false, gr, mg, i, j, cp);
  return cg_ubsw_pair_unsafe(w, o) ? w - w / 2 : 0;
}

bool cg_ubsw_lists_emit(cg *c, const cg_dot_args *a, const cg_ubsw_shape *sh,
                        cg_ubsw_lists *t) {
  const cg_conv_geom *g = &a->g;
  unsigned VL = sh->VL;
  int64_t C4 = (g->Cg + 3) / 4;
  int64_t nl = g->G * sh->ntiles * sh->OCB;
  int64_t steps = g->KH * g->KW * C4;
  /* at most every step of every list */
  size_t cap = (size_t)(nl * steps);
  int32_t *start = quill_calloc(c->ctx, (size_t)nl + 1, sizeof *start);
  int32_t *off = quill_calloc(c->ctx, cap ? cap : 1, sizeof *off);
  int8_t *w = quill_calloc(c->ctx, (cap ? cap : 1) * VL * 4, 1);
  bool ok = start && off && w;
  size_t e = 0;
  for (int64_t l = 0; ok && l < nl; l++) {
    int64_t v = l % sh->OCB, tile = l / sh->OCB % sh->ntiles;
    int64_t gr = l / sh->OCB / sh->ntiles;
    int64_t mg0 = tile * sh->OCB * VL + v * VL;
    start[l] = (int32_t)e;
    for (int64_t i = 0; i < g->KH; i++)
      for (int64_t j = 0; j < g->KW; j++)
        for (int64_t c4 = 0; c4 < C4; c4++) {
          if (mg0 >= g->Mg || !step_unsafe(a, gr, mg0, VL, i, j, c4))
            continue;
          off[e] = (int32_t)(i * g->dh * sh->s_row + j * g->dw * sh->s_col +
                             c4 * 4);
          for (unsigned ln = 0; ln < VL; ln++)
            for (int q = 0; q < 4; q++)
              w[(e * VL + ln) * 4 + (size_t)q] =
                  (int8_t)corr(a, gr, mg0 + ln, i, j, 4 * c4 + q);
          e++;
        }
  }
  if (ok) {
    start[nl] = (int32_t)e;
    t->start = cg_const_global(c, "ubsw_start", start,
                               ((size_t)nl + 1) * sizeof *start);
    t->off = cg_const_global(c, "ubsw_off", off, (e ? e : 1) * sizeof *off);
    t->w = cg_const_global(c, "ubsw_w", w, (e ? e : 1) * VL * 4);
    t->entries = (int64_t)e;
  } else {
    c->status = QUILL_ERR_NOMEM;
  }
  if (start)
    quill_free(c->ctx, start, ((size_t)nl + 1) * sizeof *start);
  if (off)
    quill_free(c->ctx, off, (cap ? cap : 1) * sizeof *off);
  if (w)
    quill_free(c->ctx, w, (cap ? cap : 1) * VL * 4);
  return ok;
}
