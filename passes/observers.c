/*
 * observers.c - range-finding algorithms for calibration (observers.h),
 * and the observer of the float lstm's internal cell state (at the end).
 *
 * Every algorithm works per channel. Pass 1 (add_range) keeps min/max:
 *
 *   minmax      lo = min x, hi = max x over all runs
 *   ema_minmax  per run (sample) m_r, M_r; lo_1 = m_1, then
 *               lo_r = momentum * lo_{r-1} + (1 - momentum) * m_r (hi alike)
 *
 * The histogram algorithms (percentile, kl, mse) use pass 1's min/max to
 * fix a histogram of B bins, filled in pass 2 with the same data:
 *
 *   symmetric schemes   histogram of |x| over [0, amax], amax = max |x|
 *   asymmetric schemes  histogram of x over [min(lo, 0), max(hi, 0)]
 *
 * B is the observer's `bins` (kl, mse; default 2048) or 2048 (percentile).
 *
 *   percentile p  |x| histogram: amax_p = the value below which p% of the
 *                 data lies (linear inside its bin); range [max(lo,
 *                 -amax_p), min(hi, amax_p)]. Signed histogram: lo = the
 *                 (100 - p)% point, hi = the p% point.
 *   kl            TensorRT's entropy calibration (IInt8EntropyCalibrator2,
 *                 as pytorch-quantization computes it): first the bin
 *                 holding 0 takes its neighbour's count (bins[0] = bins[1];
 *                 signed histograms: the mean of both neighbours), so a
 *                 spike of exact zeros does not decide. Then for each window
 *                 of i bins, i = nq .. B: P = the window's counts with the
 *                 counts outside it added to its end bins; Q = the window's
 *                 bins grouped into nq quantization levels (bin j in level
 *                 floor(j nq / i)), each level's count spread evenly over
 *                 its non-zero bins. Pick the window with the smallest
 *                 KL(P || Q) = sum p log(p / q) over normalized P, Q (ties:
 *                 the wider; Q = 0 where P > 0 is infinite). nq = qmax + 1
 *                 for symmetric schemes (|x| levels 0..qmax), qmax - qmin +
 *                 1 otherwise.
 *   mse           for each window of i bins, i = 1 .. B, the quantization
 *                 parameters of its range (quill_quant_params_from_range,
 *                 power_of_two included) and the squared error of
 *                 quantizing every bin's mean (the histogram keeps the sum
 *                 of its values per bin), weighted by its count (values
 *                 outside the range are clipped); pick the window
 *                 with the smallest error (ties: the wider). Values
 *                 beyond a clamping point all quantize to it, so the
 *                 error of the bins past both points is a lower bound
 *                 that prefix sums give in O(1): a window whose bound
 *                 already exceeds the best error so far is skipped
 *                 without summing its B bins (the same choice, most
 *                 narrow windows never summed). Bin means, not centres:
 *                 a tensor whose largest values are one spike (a constant
 *                 channel, a saturated relu6) has them at the top bin's
 *                 right edge, so the full range quantizes them exactly;
 *                 judged by the centre half a bin lower, a window short of
 *                 the spike won and clipped it (0.5 -> 0.49975).
 *
 * Windows on an |x| histogram are [0, i bins). On a signed histogram a
 * window of i bins keeps the position of zero in proportion: it starts at
 * bin round(z (B - i) / B), z being zero's bin position, so both ends
 * shrink towards zero together (a relu output, z = 0, shrinks from above
 * only). The window's edges are the range.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "passes/observers.h"
#include "targets/reference/rnn.h"

#define PERCENTILE_BINS 2048

struct quill_observer {
  quill_context *ctx;
  quill_quant_scheme s;
  size_t nch;
  size_t runs;       /* pass-1 runs seen */
  double *mn, *mx;   /* nch: running min/max (or moving averages) */
  double *bmn, *bmx; /* nch: the current run's min/max (ema_minmax) */
  size_t bins;       /* histogram bins; 0: no histogram */
  bool abs;          /* histogram of |x| */
  double *hlo, *hw;  /* nch: histogram start and bin width (0: empty) */
  double *hist;      /* nch * bins counts */
  double *hsum;      /* mse: nch * bins sums of the values' bin positions */
};

static bool is_hist_kind(quill_observer_kind k) {
  return k == QUILL_OBSERVER_PERCENTILE || k == QUILL_OBSERVER_KL ||
         k == QUILL_OBSERVER_MSE;
}

static void free_arr(quill_context *ctx, double *p, size_t n) {
  quill_free(ctx, p, n * sizeof *p);
}

void quill_observer_destroy(quill_observer *o) {
  if (!o)
    return;
  quill_context *ctx = o->ctx;
  size_t n = o->nch;
  free_arr(ctx, o->mn, n);
  free_arr(ctx, o->mx, n);
  free_arr(ctx, o->bmn, n);
  free_arr(ctx, o->bmx, n);
  free_arr(ctx, o->hlo, n);
  free_arr(ctx, o->hw, n);
  if (o->hist)
    free_arr(ctx, o->hist, n * o->bins);
  if (o->hsum)
    free_arr(ctx, o->hsum, n * o->bins);
  quill_free(ctx, o, sizeof *o);
}

quill_observer *quill_observer_create(quill_context *ctx,
                                      const quill_quant_scheme *s,
                                      size_t channels) {
  if (channels == 0)
    channels = 1;
  quill_observer *o = quill_calloc(ctx, 1, sizeof *o);
  if (!o)
    return NULL;
  o->ctx = ctx;
  o->s = *s;
  o->nch = channels;
  o->abs = s->symmetric;
  if (is_hist_kind(s->observer.kind))
    o->bins = s->observer.kind == QUILL_OBSERVER_PERCENTILE
                  ? PERCENTILE_BINS
                  : (size_t)(s->observer.bins > 0 ? s->observer.bins : 2048);
  o->mn = quill_calloc(ctx, channels, sizeof *o->mn);
  o->mx = quill_calloc(ctx, channels, sizeof *o->mx);
  o->bmn = quill_calloc(ctx, channels, sizeof *o->bmn);
  o->bmx = quill_calloc(ctx, channels, sizeof *o->bmx);
  o->hlo = quill_calloc(ctx, channels, sizeof *o->hlo);
  o->hw = quill_calloc(ctx, channels, sizeof *o->hw);
  if (!o->mn || !o->mx || !o->bmn || !o->bmx || !o->hlo || !o->hw) {
    quill_observer_destroy(o);
    return NULL;
  }
  for (size_t c = 0; c < channels; c++) {
    o->mn[c] = INFINITY;
    o->mx[c] = -INFINITY;
  }
  return o;
}

size_t quill_observer_channels(const quill_observer *o) { return o->nch; }

bool quill_observer_needs_histogram(const quill_observer *o) {
  return o->bins > 0;
}

/* ---- pass 1 --------------------------------------------------------------------- */

/* Per-channel min/max of t, folded into mn/mx. */
static void run_minmax(const quill_observer *o, const quill_tensor *t,
                       size_t inner, double *mn, double *mx) {
  size_t n = quill_tensor_num_elements(t), nch = o->nch;
  if (!n || !inner)
    return;
  size_t outer = n / (nch * inner);
  bool f32 = quill_tensor_elem_kind(t) == QUILL_TYPE_F32;
  const float *fp = t->data;
  for (size_t u = 0; u < outer; u++)
    for (size_t c = 0; c < nch; c++) {
      size_t base = (u * nch + c) * inner;
      double lo = mn[c], hi = mx[c];
      if (f32) {
        float flo = INFINITY, fhi = -INFINITY;
        for (size_t k = 0; k < inner; k++) {
          float v = fp[base + k];
          flo = v < flo ? v : flo;
          fhi = v > fhi ? v : fhi;
        }
        lo = (double)flo < lo ? (double)flo : lo;
        hi = (double)fhi > hi ? (double)fhi : hi;
      } else {
        for (size_t k = 0; k < inner; k++) {
          double v = quill_tensor_get_f64(t, base + k);
          lo = v < lo ? v : lo;
          hi = v > hi ? v : hi;
        }
      }
      mn[c] = lo;
      mx[c] = hi;
    }
}

void quill_observer_add_range(quill_observer *o, const quill_tensor *t,
                              size_t inner) {
  if (o->s.observer.kind != QUILL_OBSERVER_EMA_MINMAX) {
    run_minmax(o, t, inner, o->mn, o->mx);
    o->runs++;
    return;
  }
  for (size_t c = 0; c < o->nch; c++) {
    o->bmn[c] = INFINITY;
    o->bmx[c] = -INFINITY;
  }
  run_minmax(o, t, inner, o->bmn, o->bmx);
  double m = o->s.observer.momentum;
  for (size_t c = 0; c < o->nch; c++) {
    if (o->bmn[c] > o->bmx[c])
      continue; /* no data in this channel */
    if (o->mn[c] > o->mx[c]) {
      o->mn[c] = o->bmn[c];
      o->mx[c] = o->bmx[c];
    } else {
      o->mn[c] = m * o->mn[c] + (1.0 - m) * o->bmn[c];
      o->mx[c] = m * o->mx[c] + (1.0 - m) * o->bmx[c];
    }
  }
  o->runs++;
}

/* ---- pass 2 --------------------------------------------------------------------- */

quill_status quill_observer_start_histogram(quill_observer *o) {
  if (!o->bins || o->hist)
    return QUILL_OK;
  o->hist = quill_calloc(o->ctx, o->nch * o->bins, sizeof *o->hist);
  if (!o->hist)
    return QUILL_ERR_NOMEM;
  if (o->s.observer.kind == QUILL_OBSERVER_MSE) {
    o->hsum = quill_calloc(o->ctx, o->nch * o->bins, sizeof *o->hsum);
    if (!o->hsum)
      return QUILL_ERR_NOMEM;
  }
  for (size_t c = 0; c < o->nch; c++) {
    double lo = o->mn[c], hi = o->mx[c];
    o->hlo[c] = o->hw[c] = 0.0;
    if (lo > hi)
      continue; /* no data */
    if (o->abs) {
      double amax = fabs(lo) > fabs(hi) ? fabs(lo) : fabs(hi);
      o->hw[c] = amax / (double)o->bins;
    } else {
      lo = lo < 0.0 ? lo : 0.0;
      hi = hi > 0.0 ? hi : 0.0;
      o->hlo[c] = lo;
      o->hw[c] = hi / (double)o->bins - lo / (double)o->bins;
    }
    if (!(o->hw[c] >= DBL_MIN) || !isfinite(o->hw[c]))
      o->hw[c] = 0.0; /* all zero: nothing to histogram */
  }
  return QUILL_OK;
}

void quill_observer_add_histogram(quill_observer *o, const quill_tensor *t,
                                  size_t inner) {
  size_t n = quill_tensor_num_elements(t), nch = o->nch, bins = o->bins;
  if (!o->hist || !n || !inner)
    return;
  size_t outer = n / (nch * inner);
  bool f32 = quill_tensor_elem_kind(t) == QUILL_TYPE_F32;
  const float *fp = t->data;
  for (size_t u = 0; u < outer; u++)
    for (size_t c = 0; c < nch; c++) {
      if (o->hw[c] == 0.0)
        continue;
      size_t base = (u * nch + c) * inner;
      double *h = o->hist + c * bins, lo = o->hlo[c], inv = 1.0 / o->hw[c];
      double *hs = o->hsum ? o->hsum + c * bins : NULL;
      double top = (double)(bins - 1);
      for (size_t k = 0; k < inner; k++) {
        double v = f32 ? (double)fp[base + k] : quill_tensor_get_f64(t, base + k);
        double u2 = ((o->abs ? fabs(v) : v) - lo) * inv;
        double b = u2 < 0.0 ? 0.0 : u2 > top ? top : floor(u2);
        h[(size_t)b] += 1.0;
        if (hs) /* the position, kept inside its bin [b, b + 1] */
          hs[(size_t)b] += u2 < b ? b : u2 > b + 1.0 ? b + 1.0 : u2;
      }
    }
}

/* ---- the histogram algorithms ----------------------------------------------------- */

typedef struct histo {
  const double *h;
  size_t bins;
  double lo, w;     /* start and bin width */
  double total;
  const double *cum; /* cum[b] = sum of h[0..b), bins + 1 entries */
  const double *cnz; /* kl: number of non-zero bins in [0, b) */
  const double *hlh; /* kl: sum of h log h over [0, b) */
  const double *pos; /* mse: bin j's mean position p_j in bins (in [j, j+1]) */
  const double *m1;  /* mse: sum of h p over [0, b) */
  const double *m2;  /* mse: sum of h p^2 over [0, b) */
} histo;

/* The value below which `q` counts lie (linear inside its bin). */
static double value_at(const histo *H, double q) {
  for (size_t b = 0; b < H->bins; b++)
    if (H->cum[b + 1] >= q && H->h[b] > 0.0) {
      double frac = (q - H->cum[b]) / H->h[b];
      frac = frac < 0.0 ? 0.0 : frac > 1.0 ? 1.0 : frac;
      return H->lo + ((double)b + frac) * H->w;
    }
  return H->lo + (double)H->bins * H->w;
}

static double xlogx(double x) { return x > 0.0 ? x * log(x) : 0.0; }

/* KL(P || Q) for the window [a, a + i) (see the header comment), in
 * O(nq) with prefix sums: with T the total count and q'_g = (level g's
 * count / its non-zero bins) / (the window's count),
 *
 *   T * KL = sum_j p_j log p_j - T log T - sum_g log q'_g * sum_{j in g} p_j
 *
 * where p_j = h_j inside the window, plus the counts left of it at j = 0
 * and right of it at j = i - 1. Level g holds bins ceil(g i / nq) ..
 * ceil((g + 1) i / nq) - 1 (bin j in level floor(j nq / i)). */
static double kl_window(const histo *H, size_t a, size_t i, size_t nq) {
  const double *h = H->h + a;
  double qtot = H->cum[a + i] - H->cum[a], T = H->total;
  double left = H->cum[a], right = T - H->cum[a + i];
  if (qtot <= 0.0 || (left > 0.0 && h[0] <= 0.0) ||
      (right > 0.0 && h[i - 1] <= 0.0))
    return INFINITY; /* Q is 0 where P is not */
  /* sum p log p: the window's h log h, the end bins corrected */
  double plp = H->hlh[a + i] - H->hlh[a];
  if (i == 1) {
    plp += xlogx(h[0] + left + right) - xlogx(h[0]);
  } else {
    plp += xlogx(h[0] + left) - xlogx(h[0]);
    plp += xlogx(h[i - 1] + right) - xlogx(h[i - 1]);
  }
  double plq = 0.0;
  for (size_t g = 0; g < nq; g++) {
    size_t js = (g * i + nq - 1) / nq, je = ((g + 1) * i + nq - 1) / nq;
    if (js >= je)
      continue;
    double sum = H->cum[a + je] - H->cum[a + js];
    double nz = H->cnz[a + je] - H->cnz[a + js];
    if (nz <= 0.0)
      continue;
    double psum = sum + (js == 0 ? left : 0.0) + (je == i ? right : 0.0);
    plq += psum * log(sum / nz / qtot);
  }
  return (plp - xlogx(T) - plq) / T;
}

/* sum of h_j (x_j - c)^2 over the bins [b0, b1), x_j = lo + p_j w,
 * from the prefix sums, less a margin far above its rounding error: a
 * lower bound of that sum. */
static double clip_sum(const histo *H, double c, size_t b0, size_t b1) {
  if (b0 >= b1)
    return 0.0;
  double t = (c - H->lo) / H->w;
  double n0 = H->cum[b1] - H->cum[b0], n1 = H->m1[b1] - H->m1[b0];
  double n2 = H->m2[b1] - H->m2[b0];
  double e = n2 - 2.0 * t * n1 + t * t * n0;
  e -= 1e-9 * (n2 + 2.0 * fabs(t) * n1 + t * t * n0);
  return e > 0.0 ? e * H->w * H->w : 0.0;
}

/* A lower bound of mse_window's error for (scale, zp): a bin beyond a
 * clamping point c = (qmax - zp) scale (or (qmin - zp) scale) quantizes to
 * c, so its error is (x - c)^2 whatever the rounding; the bins wholly
 * beyond both points (the bin at each point left out) in O(1). */
static double clip_bound(const quill_observer *o, const histo *H,
                         double scale, int64_t zp) {
  double hc = (double)(o->s.qmax - zp) * scale;
  double lc = (double)(o->s.qmin - zp) * scale;
  double B = (double)H->bins;
  double th = ceil((hc - H->lo) / H->w - 0.5) + 1.0; /* first bin >= hc */
  double tl = floor((lc - H->lo) / H->w - 0.5);      /* bins < tl: <= lc */
  size_t bh = th <= 0.0 ? 0 : th >= B ? H->bins : (size_t)th;
  size_t bl = tl <= 0.0 ? 0 : tl >= B ? H->bins : (size_t)tl;
  return clip_sum(H, hc, bh, H->bins) + clip_sum(H, lc, 0, bl);
}

/* Squared quantization error of the histogram under the params of
 * [rlo, rhi]; -1 if the scheme cannot represent the range; INFINITY when
 * clip_bound shows it above `best` (the window cannot win, so its exact
 * error is not summed: the choice is the exhaustive search's). */
static double mse_window(const quill_observer *o, const histo *H, double rlo,
                         double rhi, double best, double *last_scale,
                         int64_t *last_zp, double *last_err) {
  double scale;
  int64_t zp;
  if (quill_quant_params_from_range(&o->s, rlo, rhi, &scale, &zp, NULL))
    return -1.0;
  if (scale == *last_scale && zp == *last_zp)
    return *last_err; /* same parameters, same error (power_of_two) */
  if (clip_bound(o, H, scale, zp) > best)
    return INFINITY;
  double qmin = (double)o->s.qmin, qmax = (double)o->s.qmax, err = 0.0;
  double inv = 1.0 / scale;
  for (size_t b = 0; b < H->bins; b++) {
    if (H->h[b] <= 0.0)
      continue;
    double x = H->lo + H->pos[b] * H->w;
    double q = nearbyint(x * inv) + (double)zp;
    q = q < qmin ? qmin : q > qmax ? qmax : q;
    double d = x - (q - (double)zp) * scale;
    err += H->h[b] * d * d;
  }
  *last_scale = scale;
  *last_zp = zp;
  *last_err = err;
  return err;
}

/* Search the windows for kl or mse; the chosen range into lo/hi. */
static void search(const quill_observer *o, const histo *H, double *lo,
                   double *hi) {
  size_t B = H->bins, nq = 1;
  bool kl = o->s.observer.kind == QUILL_OBSERVER_KL;
  if (kl)
    nq = (size_t)(o->abs ? o->s.qmax + 1 : o->s.qmax - o->s.qmin + 1);
  double z = o->abs ? 0.0 : -H->lo / H->w; /* zero's bin position */
  double best = INFINITY, ls = 0.0, lerr = 0.0;
  int64_t lzp = 0;
  size_t best_a = 0, best_i = B, first = kl ? (nq < B ? nq : B) : 1;
  for (size_t i = B; i >= first; i--) { /* widest first: ties keep it */
    size_t a =
        o->abs ? 0 : (size_t)floor(z * (double)(B - i) / (double)B + 0.5);
    if (a + i > B)
      a = B - i;
    double rlo = o->abs ? -(double)i * H->w : H->lo + (double)a * H->w;
    double rhi = o->abs ? (double)i * H->w : H->lo + (double)(a + i) * H->w;
    double d = kl ? kl_window(H, a, i, nq)
                  : mse_window(o, H, rlo, rhi, best, &ls, &lzp, &lerr);
    if (d >= 0.0 && d < best) {
      best = d;
      best_a = a;
      best_i = i;
    }
    if (i == 1)
      break;
  }
  if (o->abs) {
    *lo = -(double)best_i * H->w;
    *hi = (double)best_i * H->w;
  } else {
    *lo = H->lo + (double)best_a * H->w;
    *hi = H->lo + (double)(best_a + best_i) * H->w;
  }
}

/* For kl: the bin holding 0 takes its neighbour's count (TensorRT's
 * bins[0] = bins[1]; on a signed histogram the mean of both neighbours),
 * so a spike of exact zeros (relu outputs) does not dominate P. */
static void flatten_zero_bin(const quill_observer *o, const histo *H,
                             double *h) {
  size_t B = H->bins;
  memcpy(h, H->h, B * sizeof *h);
  if (B < 2)
    return;
  if (o->abs) {
    h[0] = h[1];
    return;
  }
  double zb = floor(-H->lo / H->w);
  size_t b = zb >= (double)B ? B - 1 : (size_t)zb;
  double sum = 0.0;
  unsigned n = 0;
  if (b > 0) {
    sum += h[b - 1];
    n++;
  }
  if (b + 1 < B) {
    sum += h[b + 1];
    n++;
  }
  h[b] = sum / n;
}

void quill_observer_range(const quill_observer *o, size_t c, double *lo,
                          double *hi) {
  *lo = *hi = 0.0;
  if (c >= o->nch || o->mn[c] > o->mx[c])
    return;
  double mn = o->mn[c], mx = o->mx[c];
  *lo = mn;
  *hi = mx;
  if (!o->hist || o->hw[c] == 0.0)
    return;
  size_t B = o->bins;
  bool kl = o->s.observer.kind == QUILL_OBSERVER_KL;
  bool mse = o->s.observer.kind == QUILL_OBSERVER_MSE;
  /* cum (B + 1) and, for kl, the adjusted counts (B) and the prefix sums
   * cnz and hlh (B + 1 each), for mse the prefix sums m1 and m2 (B + 1
   * each) and the bins' mean positions (B), in one block */
  size_t len =
      (B + 1 + (kl ? 3 * B + 2 : 0) + (mse ? 3 * B + 2 : 0)) * sizeof(double);
  double *cum = quill_alloc(o->ctx, len);
  if (!cum)
    return; /* out of memory: fall back to min/max */
  histo H = {o->hist + c * B, B, o->hlo[c], o->hw[c], 0.0, cum,
             NULL, NULL, NULL, NULL, NULL};
  if (kl) {
    double *h = cum + B + 1, *cnz = h + B, *hlh = cnz + B + 1;
    flatten_zero_bin(o, &H, h);
    H.h = h;
    cnz[0] = hlh[0] = 0.0;
    for (size_t b = 0; b < B; b++) {
      cnz[b + 1] = cnz[b] + (h[b] > 0.0);
      hlh[b + 1] = hlh[b] + xlogx(h[b]);
    }
    H.cnz = cnz;
    H.hlh = hlh;
  }
  if (mse) {
    double *m1 = cum + B + 1, *m2 = m1 + B + 1, *pos = m2 + B + 1;
    const double *hs = o->hsum + c * B;
    m1[0] = m2[0] = 0.0;
    for (size_t b = 0; b < B; b++) {
      double x = H.h[b] > 0.0 ? hs[b] / H.h[b] : (double)b + 0.5;
      pos[b] = x;
      m1[b + 1] = m1[b] + H.h[b] * x;
      m2[b + 1] = m2[b] + H.h[b] * x * x;
    }
    H.pos = pos;
    H.m1 = m1;
    H.m2 = m2;
  }
  cum[0] = 0.0;
  for (size_t b = 0; b < B; b++)
    cum[b + 1] = cum[b] + H.h[b];
  H.total = cum[B];
  double rlo = mn, rhi = mx;
  if (H.total <= 0.0) {
    /* keep min/max */
  } else if (o->s.observer.kind == QUILL_OBSERVER_PERCENTILE) {
    double p = o->s.observer.percentile / 100.0;
    if (o->abs) {
      double amax = value_at(&H, p * H.total);
      rlo = -amax;
      rhi = amax;
    } else {
      rlo = value_at(&H, (1.0 - p) * H.total);
      rhi = value_at(&H, p * H.total);
    }
  } else {
    search(o, &H, &rlo, &rhi);
  }
  quill_free(o->ctx, cum, len);
  /* never outside the data */
  *lo = rlo > mn ? rlo : mn;
  *hi = rhi < mx ? rhi : mx;
  if (*lo > *hi)
    *lo = *hi;
}

/* ---- the float lstm's cell state (observers.h) ------------------------------
 *
 * The calibrate pass's observer of the float lstm's cell state: per lstm with constant w, r (and b), the largest
 * |c| of quill_ref_lstm_eval over the inputs of the calibration runs,
 * written as the lstm's attribute `cell_absmax` for fuse-qdq's qlstm.
 *
 *   calibrate's run over sample i
 *     op P reports its result v  --(v is operand 0 of lstm L)-->
 *       quill_ref_lstm_eval(L, x = v, w, r, b, y = NULL) -> max |c|
 *   end of calibration: L {cell_absmax = max over the samples}
 *
 * The lstm is evaluated a second time on each sample (once by the
 * interpreter's run, once here): the cost of one more lstm per sample.
 */

typedef struct lstm_entry {
  quill_op *op;
  double absmax;
  bool seen;
} lstm_entry;

struct quill_calib_lstm {
  quill_context *ctx;
  lstm_entry *e;
  size_t n;
};

/* Whether op is an lstm whose w, r and b are constants. */
static bool observable(const quill_op *op) {
  if (quill_op_opcode(op) != QUILL_OP_LSTM)
    return false;
  for (unsigned i = 1; i < quill_op_num_operands(op); i++)
    if (!quill_value_constant(quill_op_operand(op, i)))
      return false;
  return true;
}

quill_status quill_calib_lstm_create(quill_context *ctx, const quill_graph *g,
                                     quill_calib_lstm **out) {
  *out = NULL;
  size_t n = 0;
  QUILL_GRAPH_FOREACH(g, op) { n += observable(op); }
  if (!n)
    return QUILL_OK;
  quill_calib_lstm *cl = quill_alloc(ctx, sizeof *cl);
  lstm_entry *e = quill_calloc(ctx, n, sizeof *e);
  if (!cl || !e) {
    quill_free(ctx, cl, sizeof *cl);
    quill_free(ctx, e, n * sizeof *e);
    return QUILL_ERR_NOMEM;
  }
  cl->ctx = ctx;
  cl->e = e;
  cl->n = 0;
  QUILL_GRAPH_FOREACH(g, op) {
    if (observable(op))
      cl->e[cl->n++].op = op;
  }
  *out = cl;
  return QUILL_OK;
}

void quill_calib_lstm_destroy(quill_calib_lstm *cl) {
  if (!cl)
    return;
  quill_free(cl->ctx, cl->e, cl->n * sizeof *cl->e);
  quill_free(cl->ctx, cl, sizeof *cl);
}

static lstm_entry *entry_of(quill_calib_lstm *cl, const quill_op *op) {
  for (size_t k = 0; k < cl->n; k++)
    if (cl->e[k].op == op)
      return &cl->e[k];
  return NULL;
}

quill_status quill_calib_lstm_observe(quill_calib_lstm *cl, const quill_op *op,
                                      const quill_tensor *results,
                                      unsigned nres) {
  if (!cl)
    return QUILL_OK;
  for (unsigned i = 0; i < nres && i < quill_op_num_results(op); i++)
    for (quill_use *u = quill_value_first_use(quill_op_result(op, i)); u;
         u = quill_use_next(u)) {
      lstm_entry *e = quill_use_operand_index(u) == 0
                          ? entry_of(cl, quill_use_user(u))
                          : NULL;
      if (!e)
        continue;
      const quill_op *l = e->op;
      quill_tensor t[3];
      for (unsigned k = 1; k < quill_op_num_operands(l) && k < 4; k++)
        t[k - 1] = quill_tensor_from_attr(
            quill_value_constant(quill_op_operand(l, k)));
      double m = 0.0;
      quill_status st = quill_ref_lstm_eval(
          cl->ctx, l, &results[i], &t[0], &t[1],
          quill_op_num_operands(l) > 3 ? &t[2] : NULL, NULL, &m);
      if (st)
        return st;
      e->absmax = e->seen ? fmax(e->absmax, m) : m;
      e->seen = true;
    }
  return QUILL_OK;
}

quill_status quill_calib_lstm_finish(quill_calib_lstm *cl, uint64_t *num) {
  *num = 0;
  for (size_t k = 0; cl && k < cl->n; k++) {
    if (!cl->e[k].seen)
      continue;
    const quill_attr *a = quill_attr_float(cl->ctx, cl->e[k].absmax);
    if (!a || quill_op_set_attr(cl->e[k].op, "cell_absmax", a))
      return QUILL_ERR_NOMEM;
    (*num)++;
  }
  return QUILL_OK;
}
