/*
 * test_fmath.c - accuracy of the numerics contract's f32 exp, tanh and erf
 * (ir/fmath.h) against glibc's expf, tanhf and erff: every 4099th f32 bit
 * pattern (about a million inputs over all magnitudes, both signs) plus a
 * dense sweep of [-10, 10], in ulp of libm's result (denormal results in
 * units of the smallest denormal). Bounds: exp 1 ulp, tanh 2, erf 1 (the
 * measured maxima, rounded up past the 1.001 of ties at the denormal
 * boundary); special values exactly. That the LLVM target emits the same
 * bits is test_llvm_ops' float_transcendental cases.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "ir/fmath.h"

static double ulps(float got, float want) {
  if (isnan(want))
    return isnan(got) ? 0 : 1e9;
  if (got == want)
    return 0;
  if (isinf(want) || isinf(got))
    return 1e9;
  double u = (double)nextafterf(fabsf(want), INFINITY) - (double)fabsf(want);
  return fabs((double)got - (double)want) / u;
}

typedef float (*f1)(float);
static float lexp(float x) { return expf(x); }
static float ltanh(float x) { return tanhf(x); }
static float lerf(float x) { return erff(x); }

static void sweep(const char *name, f1 mine, f1 ref, double bound) {
  double worst = 0;
  float wx = 0;
  for (uint64_t b = 0; b < 0x100000000ull; b += 4099) {
    uint32_t u = (uint32_t)b;
    float x;
    memcpy(&x, &u, sizeof x);
    double e = ulps(mine(x), ref(x));
    if (e > worst) {
      worst = e;
      wx = x;
    }
  }
  for (int i = -1000000; i <= 1000000; i++) {
    float x = (float)i * 1e-5f;
    double e = ulps(mine(x), ref(x));
    if (e > worst) {
      worst = e;
      wx = x;
    }
  }
  printf("test_fmath: %s max %.3f ulp (at %.9g)\n", name, worst, wx);
  CHECK(worst <= bound);
}

int main(void) {
  sweep("exp", quill_fexp, lexp, 1.01);
  sweep("tanh", quill_ftanh, ltanh, 2.01);
  sweep("erf", quill_ferf, lerf, 1.01);
  CHECK(quill_fexp(0.0f) == 1.0f);
  CHECK(quill_fexp(1.0f) == expf(1.0f));
  CHECK(isinf(quill_fexp(89.0f)) && quill_fexp(-200.0f) == 0.0f);
  CHECK(quill_fexp(-INFINITY) == 0.0f && isinf(quill_fexp(INFINITY)));
  CHECK(isnan(quill_fexp(NAN)) && isnan(quill_ftanh(NAN)) &&
        isnan(quill_ferf(NAN)));
  CHECK(quill_ftanh(0.0f) == 0.0f && quill_ftanh(30.0f) == 1.0f &&
        quill_ftanh(-30.0f) == -1.0f);
  CHECK(quill_ferf(0.0f) == 0.0f && quill_ferf(5.0f) == 1.0f &&
        quill_ferf(-5.0f) == -1.0f && quill_ferf(0.5f) == erff(0.5f));
  printf("test_fmath: %d checks, %d failures\n", checks, failures);
  return failures != 0;
}
