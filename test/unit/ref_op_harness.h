/*
 * ref_op_harness.h - the one-op harness of the reference kernels' unit
 * tests (test_ref_qkernels*.c, test_ref_qops*.c, test_ref_gemm.c): a
 * one-op .qir function parsed (and verified, unless setup_ex is told not
 * to), its graph arguments allocated zeroed and bound to the op's operands
 * (run.in), the op's outputs allocated (run.out, run.nout); the context's
 * diagnostics are captured into run.diag for the failure messages;
 * run_free releases everything. The tests evaluate the op themselves
 * (quill_ref_eval_op). xorshift64 and xorshift_in are the random tests'
 * generator, each test file with its own state and seed.
 */
#ifndef QUILL_TEST_UNIT_REF_OP_HARNESS_H
#define QUILL_TEST_UNIT_REF_OP_HARNESS_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "targets/reference/ref.h"

/* xorshift64 of the state *s (never 0), and a draw from [lo, hi]. */
static inline uint64_t xorshift64(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}
static inline int64_t xorshift_in(uint64_t *s, int64_t lo, int64_t hi) {
  return lo + (int64_t)(xorshift64(s) % (uint64_t)(hi - lo + 1));
}

typedef struct run {
  quill_context *ctx;
  quill_module *m;
  quill_op *op;
  quill_tensor args[4];
  unsigned nargs;
  quill_tensor in[4];   /* the op's operands (views of args) */
  quill_tensor out[3];
  unsigned nout;
  quill_status st;
  char diag[512];
} run;

static void capture(void *ud, quill_loc loc, quill_diag_severity sev,
                    const char *msg) {
  (void)loc;
  (void)sev;
  run *r = ud;
  snprintf(r->diag, sizeof r->diag, "%s", msg);
}

static void run_free(run *r) {
  for (unsigned i = 0; i < r->nout; i++)
    quill_tensor_free(r->ctx, &r->out[i]);
  for (unsigned i = 0; i < r->nargs; i++)
    quill_tensor_free(r->ctx, &r->args[i]);
  if (r->m)
    quill_module_destroy(r->m);
  quill_context_destroy(r->ctx);
  memset(r, 0, sizeof *r);
}

/* Parse and (if `verify`) verify src, allocate zeroed graph arguments and
 * the outputs of its first op. False (with a message) if the harness
 * fails. */
static bool setup_ex(run *r, const char *src, bool verify) {
  memset(r, 0, sizeof *r);
  r->ctx = quill_context_create(NULL, NULL);
  quill_diag_set_handler(r->ctx, capture, r);
  r->m = quill_parse_module(r->ctx, src, strlen(src), "test.qir", 0);
  if (!r->m || (verify && quill_verify_module(r->m) != QUILL_OK)) {
    fprintf(stderr, "invalid test IR: %s\n%s\n", r->diag, src);
    return false;
  }
  quill_graph *g = quill_module_graph(r->m, 0);
  QUILL_GRAPH_FOREACH(g, op) {
    r->op = op;
    break;
  }
  r->nargs = quill_graph_num_args(g);
  for (unsigned i = 0; i < r->nargs; i++)
    if (quill_tensor_alloc(r->ctx, quill_value_type(quill_graph_arg(g, i)),
                           &r->args[i]))
      return false;
  for (unsigned j = 0; j < quill_op_num_operands(r->op); j++)
    for (unsigned i = 0; i < r->nargs; i++)
      if (quill_op_operand(r->op, j) == quill_graph_arg(g, i))
        r->in[j] = r->args[i];
  r->nout = quill_op_num_results(r->op);
  if (quill_ref_outputs_alloc(r->ctx, r->op, r->out)) {
    r->nout = 0;
    return false;
  }
  return true;
}

static bool setup(run *r, const char *src) { return setup_ex(r, src, true); }

#endif /* QUILL_TEST_UNIT_REF_OP_HARNESS_H */
