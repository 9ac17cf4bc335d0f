/*
 * test_qlstm.c - qlstm's fixed-point functions (ir/qlstm.c): gemmlowp's
 * 16-bit logistic and tanh against the real functions over every input
 * (within gemmlowp's own accuracy), a few exact values, and the symmetry the
 * LLVM target's half-size tables rely on (quill_qlstm_half_table,
 * targets/llvm/lower_qlstm.c): f(a) rebuilt from the table of |a| equals
 * f(a) for all 65536 inputs, the logistic and the tanh of 0..6 integer
 * bits.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ir/qlstm.h"

static int passed, failed;

#define CHECK(cond)                                                           \
  do {                                                                        \
    if (cond)                                                                 \
      passed++;                                                               \
    else {                                                                    \
      failed++;                                                               \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__,        \
              #cond);                                                         \
    }                                                                         \
  } while (0)

/* f(a) for every a from the half table, against f itself. */
static void test_half_table(bool logistic, int ibits) {
  int16_t *t = malloc(QUILL_QLSTM_HALF_TABLE * sizeof *t);
  quill_qlstm_half_table(logistic, ibits, t);
  int bad = 0;
  for (int32_t a = -32768; a < 32768; a++) {
    int32_t m = a < 0 ? -a : a;
    int32_t got = a >= 0 ? t[m] : logistic ? 32767 - t[m] : -t[m];
    int32_t want = logistic ? quill_qlstm_sigmoid((int16_t)a)
                            : quill_qlstm_tanh((int16_t)a, ibits);
    bad += got != want;
  }
  if (bad)
    fprintf(stderr, "%s ibits %d: %d inputs differ\n",
            logistic ? "logistic" : "tanh", ibits, bad);
  CHECK(bad == 0);
  free(t);
}

/* The largest |f(a) - real f| in units of 2^-15 over every input. */
static double worst_error(bool logistic, int ibits) {
  double worst = 0.0;
  for (int32_t a = -32768; a < 32768; a++) {
    double x = ldexp((double)a, -(15 - (logistic ? 3 : ibits)));
    double want = logistic ? 1.0 / (1.0 + exp(-x)) : tanh(x);
    double got = ldexp(logistic ? quill_qlstm_sigmoid((int16_t)a)
                                : quill_qlstm_tanh((int16_t)a, ibits),
                       -15);
    worst = fmax(worst, fabs(got - want) * 32768.0);
  }
  return worst;
}

int main(void) {
  test_half_table(true, 3);
  for (int ib = 0; ib <= 6; ib++)
    test_half_table(false, ib);
  /* exact values: logistic(0) = 1/2, tanh(0) = 0, the ends */
  CHECK(quill_qlstm_sigmoid(0) == 16384);
  CHECK(quill_qlstm_tanh(0, 3) == 0);
  CHECK(quill_qlstm_sigmoid(INT16_MAX) == 32756);
  CHECK(quill_qlstm_sigmoid(INT16_MIN) == 11);
  CHECK(quill_qlstm_tanh(INT16_MAX, 3) == 32767);
  CHECK(quill_qlstm_tanh(INT16_MIN, 3) == -32767);
  /* gemmlowp's 16-bit accuracy (its int16 constants and Newton steps):
   * within 6.4 steps of 2^-15 of the real logistic, 12.1 of tanh, over
   * every input (as TFLite's optimized int16 LOGISTIC / TANH, which run
   * the same functions: ir/tfl_int16.h) */
  double el = worst_error(true, 3);
  CHECK(el < 6.5);
  for (int ib = 0; ib <= 6; ib++) {
    double et = worst_error(false, ib);
    if (!(et < 12.1))
      fprintf(stderr, "tanh ibits %d: worst error %.2f steps\n", ib, et);
    CHECK(et < 12.1);
  }
  printf("test_qlstm: %d checks, %d failures (logistic worst %.2f steps)\n",
         passed + failed, failed, el);
  return failed != 0;
}
