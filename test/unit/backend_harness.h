/*
 * backend_harness.h - shared by test_backend.c and test_backend_errors.c:
 * the backend-config tests' context with a diagnostics handler that
 * captures every diagnostic as a "file: message" (or "file:line:col:
 * message") line in a buffer and counts the errors (new_ctx), and
 * check_scheme, which checks every field of a quantization scheme (one
 * check each, check.h).
 */
#ifndef QUILL_TEST_UNIT_BACKEND_HARNESS_H
#define QUILL_TEST_UNIT_BACKEND_HARNESS_H

#include <stdio.h>
#include <string.h>

#include "backends/backend.h"
#include "test/unit/check.h"

/* ---- diagnostics capture ----------------------------------------------------- */

typedef struct diags {
  char text[16384];
  unsigned errors;
} diags;

static void capture(void *ud, quill_loc loc, quill_diag_severity sev,
                    const char *msg) {
  diags *d = ud;
  size_t n = strlen(d->text);
  if (loc.file && loc.line)
    snprintf(d->text + n, sizeof d->text - n, "%s:%u:%u: %s\n", loc.file,
             (unsigned)loc.line, (unsigned)loc.col, msg);
  else
    snprintf(d->text + n, sizeof d->text - n, "%s: %s\n",
             loc.file ? loc.file : "-", msg);
  if (sev == QUILL_DIAG_ERROR)
    d->errors++;
}

static quill_context *new_ctx(diags *d) {
  memset(d, 0, sizeof *d);
  quill_context *ctx = quill_context_create(NULL, NULL);
  quill_diag_set_handler(ctx, capture, d);
  return ctx;
}

/* ---- schemes ------------------------------------------------------------------ */

/* Every field of s against the expected values, one check each. */
static void check_scheme(const quill_quant_scheme *s, quill_type_kind storage,
                         int bits, bool sym, bool per_channel, int64_t qmin,
                         int64_t qmax, bool pow2, quill_observer_kind obs) {
  CHECK(s->storage == storage);
  CHECK(s->bits == bits);
  CHECK(s->symmetric == sym);
  CHECK(s->per_channel == per_channel);
  CHECK(s->qmin == qmin);
  CHECK(s->qmax == qmax);
  CHECK(s->power_of_two == pow2);
  CHECK(s->observer.kind == obs);
}

#endif /* QUILL_TEST_UNIT_BACKEND_HARNESS_H */
