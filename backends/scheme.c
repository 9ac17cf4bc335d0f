/*
 * scheme.c - the scheme arithmetic of docs/quantization.md section 2: a
 * calibrated range [lo, hi] -> scale and zero point, and observer names.
 *
 * All in f64. The range is first widened to include 0, so that 0.0 is
 * exactly representable (zero padding, relu outputs):
 *
 *   asymmetric     scale = (hi - lo) / (qmax - qmin)
 *                  zp    = clamp(round_half_even(qmin - lo / scale), qmin,
 * qmax) symmetric      scale = 2 * max(-lo, hi) / (qmax - qmin),  zp = 0
 *   power_of_two   scale = 2^ceil(log2(scale)), zp recomputed
 *   degenerate     (all data zero, or scale < FLT_MIN) scale = 1.0, zp as
 *                  above
 *
 * The formulas are evaluated literally (so other implementations of the
 * doc get the same bits); only when hi - lo or 2 * amax overflows are they
 * rearranged (hi/n - lo/n, amax/n * 2). A scale below the smallest
 * normal float32 (FLT_MIN, ~1.18e-38) is treated as degenerate: the
 * kernels and the TFLite/ONNX exports use scales in float32, where it
 * would be 0 or denormal (calibration data of 1e-44 did that). This is
 * onnxruntime's rule (quant_utils.compute_scale_zp: scale < float32 tiny
 * -> scale 1.0), so an all-zero or denormal weight channel quantizes to 0.
 * One that cannot be represented (a power-of-two rounding beyond 2^1023)
 * is an error.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "backends/backend.h"

static const char *const observer_names[] = {
    [QUILL_OBSERVER_MINMAX] = "minmax",
    [QUILL_OBSERVER_EMA_MINMAX] = "ema_minmax",
    [QUILL_OBSERVER_PERCENTILE] = "percentile",
    [QUILL_OBSERVER_KL] = "kl",
    [QUILL_OBSERVER_MSE] = "mse",
};

bool quill_observer_parse(const char *name, quill_observer_kind *out) {
  for (unsigned i = 0; i < sizeof observer_names / sizeof observer_names[0];
       i++)
    if (strcmp(name, observer_names[i]) == 0) {
      *out = (quill_observer_kind)i;
      return true;
    }
  return false;
}

const char *quill_observer_name(quill_observer_kind k) {
  if ((unsigned)k >= sizeof observer_names / sizeof observer_names[0])
    return "?";
  return observer_names[k];
}

/* The zero point that maps 0.0 for range low end lo (<= 0). */
static int64_t asym_zero_point(const quill_quant_scheme *s, double lo,
                               double scale) {
  int64_t zp = quill_round((double)s->qmin - lo / scale, QUILL_ROUND_HALF_EVEN);
  return quill_clamp_i64(zp, s->qmin, s->qmax);
}

quill_status quill_quant_params_from_range(const quill_quant_scheme *s,
                                           double lo, double hi, double *scale,
                                           int64_t *zero_point,
                                           bool *degenerate) {
  if (!isfinite(lo) || !isfinite(hi) || s->qmax <= s->qmin)
    return QUILL_ERR_INVALID;
  if (lo > 0.0)
    lo = 0.0;
  if (hi < 0.0)
    hi = 0.0;
  double n = (double)(s->qmax - s->qmin);
  double sc;
  if (s->symmetric) {
    double amax = -lo > hi ? -lo : hi;
    sc = 2.0 * amax / n;
    if (isinf(sc)) /* 2 * amax overflowed */
      sc = amax / n * 2.0;
  } else {
    sc = (hi - lo) / n;
    if (isinf(sc)) /* hi - lo overflowed */
      sc = hi / n - lo / n;
  }
  bool degen = !(sc >= FLT_MIN); /* zero range, or 0/denormal in f32 */
  if (degen)
    sc = 1.0;
  if (s->power_of_two && !degen) {
    int e;
    double m = frexp(sc, &e); /* sc = m * 2^e, m in [0.5, 1): exact */
    double p = m == 0.5 ? sc : ldexp(1.0, e);
    if (!isfinite(p))
      return QUILL_ERR_INVALID;
    sc = p;
  }
  *scale = sc;
  *zero_point = s->symmetric ? 0 : asym_zero_point(s, degen ? 0.0 : lo, sc);
  if (degenerate)
    *degenerate = degen;
  return QUILL_OK;
}
