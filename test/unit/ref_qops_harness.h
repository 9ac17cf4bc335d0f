/*
 * ref_qops_harness.h - shared by test_ref_qops.c and test_ref_qops_pool.c:
 * ref_op_harness.h's one-op harness (setup), the op evaluated with
 * quill_ref_eval_op; EXPECT1/EXPECT2 fill
 * one or two arguments from value lists (V(...)), evaluate, and compare
 * output 0 element for element with the expected values (one check each,
 * check.h; the failing case's line is printed). policies[] names the
 * rounding policies in quill_rounding's order.
 */
#ifndef QUILL_TEST_UNIT_REF_QOPS_HARNESS_H
#define QUILL_TEST_UNIT_REF_QOPS_HARNESS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/qnorm.h"
#include "ir/quant.h"
#include "targets/reference/ref.h"
#include "test/unit/check.h"
#include "test/unit/ref_op_harness.h"

/* ---- harness: a one-op function, arguments filled, the op evaluated ------ */

static void set_values(quill_tensor *t, const double *v, size_t n) {
  for (size_t i = 0; i < n && i < quill_tensor_num_elements(t); i++)
    quill_tensor_set_f64(t, i, v[i]);
}

#define V(...) ((const double[]){__VA_ARGS__})
#define N(a) (sizeof(a) / sizeof(double))

/* Run src with argument values a (and b); compare output 0 with want. */
static void expect(const char *src, const double *a, size_t na,
                   const double *b, size_t nb, const double *want, size_t nw,
                   int line) {
  run r;
  bool ok = setup(&r, src);
  if (ok) {
    set_values(&r.args[0], a, na);
    if (r.nargs > 1)
      set_values(&r.args[1], b, nb);
    r.st = quill_ref_eval_op(r.ctx, r.op, r.in, r.out);
    ok = r.st == QUILL_OK && quill_tensor_num_elements(&r.out[0]) == nw;
    if (!ok)
      fprintf(stderr, "  status %d, diag '%s'\n", (int)r.st, r.diag);
    for (size_t i = 0; ok && i < nw; i++) {
      double got = quill_tensor_get_f64(&r.out[0], i);
      if (got != want[i]) {
        fprintf(stderr, "  element %zu: got %g, want %g\n", i, got, want[i]);
        ok = false;
      }
    }
  }
  if (!ok)
    fprintf(stderr, "  (case at line %d)\n", line);
  CHECK(ok);
  run_free(&r);
}
#define EXPECT1(src, a, want)                                                 \
  expect(src, a, N(a), NULL, 0, want, N(want), __LINE__)
#define EXPECT2(src, a, b, want)                                              \
  expect(src, a, N(a), b, N(b), want, N(want), __LINE__)

static const char *const policies[] = {"half_even", "half_away", "half_up",
                                       "tflite"};

#endif /* QUILL_TEST_UNIT_REF_QOPS_HARNESS_H */
