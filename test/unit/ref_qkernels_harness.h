/*
 * ref_qkernels_harness.h - shared by test_ref_qkernels.c and
 * test_ref_qkernels_random.c: ref_op_harness.h's one-op harness and eval(),
 * the op evaluated with quill_ref_eval_op into run.st.
 */
#ifndef QUILL_TEST_UNIT_REF_QKERNELS_HARNESS_H
#define QUILL_TEST_UNIT_REF_QKERNELS_HARNESS_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/quant.h"
#include "targets/reference/ref.h"
#include "test/unit/check.h"
#include "test/unit/ref_op_harness.h"

/* ---- harness ------------------------------------------------------------- */

static quill_status eval(run *r) {
  return r->st = quill_ref_eval_op(r->ctx, r->op, r->in, r->out);
}

#endif /* QUILL_TEST_UNIT_REF_QKERNELS_HARNESS_H */
