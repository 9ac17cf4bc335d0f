/*
 * conv_dot.c - register-blocked dot-product kernels (placeholder: the
 * portable loops handle every conv until the ISA kernels land).
 */
#include "targets/llvm/conv.h"

bool cg_conv_dot_applies(cg *c, const quill_op *op, const cg_conv_geom *g,
                         const cg_qlinear *q) {
  (void)c;
  (void)op;
  (void)g;
  (void)q;
  return false;
}

quill_status cg_conv_dot(cg *c, const quill_op *op, const cg_conv_geom *g,
                         cg_qlinear *q) {
  return cg_conv_portable(c, op, g, q);
}
