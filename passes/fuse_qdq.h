/*
 * fuse_qdq.h - private to the fuse-qdq pass (passes/fuse_qdq.c, the pass and
 * its helpers; passes/fuse_qdq_patterns.c and fuse_qdq_tables.c, the
 * patterns).
 *
 * The patterns share one quill_fqdq state (through quill_pattern.data):
 * the backend's numerics and the per-opcode rewrite counts the pass turns
 * into statistics. The helpers below only read the IR or build attributes
 * (uniqued in the context, which does not mutate any graph), so a pattern
 * may call them while matching and commit afterwards.
 */
#ifndef QUILL_PASSES_FUSE_QDQ_H
#define QUILL_PASSES_FUSE_QDQ_H

#include "backends/backend.h"
#include "ir/quant.h"
#include "passes/rewriter.h"

#define QUILL_FQDQ_MAX_PATTERNS 16

typedef struct quill_fqdq {
  const quill_backend *backend;   /* NULL: ONNX semantics */
  bool fixed;                     /* fixed-point requantization */
  uint64_t fused[QUILL_OP_COUNT]; /* rewrites, by the float op replaced */
  uint64_t wide;                  /* of which with an int64 accumulator */
  quill_pattern patterns[QUILL_FQDQ_MAX_PATTERNS]; /* the set's patterns */
} quill_fqdq;

/* Add the patterns (they keep `f`, which must outlive the set). */
quill_status quill_fqdq_populate(quill_pattern_set *set, quill_fqdq *f);

/* ---- reading the reference form ------------------------------------------ */

/* If v is the result of a dequantize, the dequantize's (quantized) operand;
 * else NULL. */
quill_value *quill_fqdq_dq_source(const quill_value *v);
/* The quantized element type of v's tensor type, or NULL. */
quill_type *quill_fqdq_qelem(const quill_value *v);
/* v is quantized per tensor (one scale, one zero point). */
bool quill_fqdq_per_tensor(const quill_value *v);
/* The rounding of the rewritten ops: the backend's, else the `rounding` of
 * the reference form's quantize op q (default half_even). */
quill_rounding quill_fqdq_rounding(const quill_fqdq *f, const quill_op *q);
/* The `rounding` attribute of a quantize op (default half_even). */
quill_rounding quill_fqdq_op_rounding(const quill_op *q);
/* v has exactly one use, by `user`. */
bool quill_fqdq_only_use(const quill_value *v, const quill_op *user);

/* ---- building attributes ------------------------------------------------- */

/* A growing list of named attributes (allocation failures are remembered
 * and reported by quill_fqdq_attrs_ok). */
typedef struct quill_fqdq_attrs {
  quill_context *ctx;
  quill_named_attr *v;
  unsigned n, cap;
  bool failed;
} quill_fqdq_attrs;

void quill_fqdq_attrs_init(quill_fqdq_attrs *l, quill_context *ctx);
void quill_fqdq_attrs_free(quill_fqdq_attrs *l);
bool quill_fqdq_attrs_ok(const quill_fqdq_attrs *l);
/* Set (or replace) one attribute; NULL `a` marks a failure. */
void quill_fqdq_attrs_set(quill_fqdq_attrs *l, const char *name,
                          const quill_attr *a);
void quill_fqdq_attrs_set_int(quill_fqdq_attrs *l, const char *name,
                              int64_t v);
void quill_fqdq_attrs_set_str(quill_fqdq_attrs *l, const char *name,
                              const char *s);
/* Copy op's attributes except the fused-activation ones (activation,
 * activation_min, activation_max) and, if non-NULL, `skip`. */
void quill_fqdq_attrs_copy(quill_fqdq_attrs *l, const quill_op *op,
                           const char *skip);

/* Requantization attributes for n real multipliers (one per channel, or
 * the three of qadd): rounding, and in fixed-point mode multiplier/shift
 * (quill_quantize_multiplier; a real of 0, which callers pass for a
 * channel whose result always rounds to 0, gives multiplier 0, shift 0).
 * False (with *why) if one does not decompose. */
bool quill_fqdq_requant_attrs(const quill_fqdq *f, quill_fqdq_attrs *l,
                              quill_rounding r, const double *reals,
                              size_t n, const char **why);
/* act_min / act_max from the fused activation of `fop` (relu: the stored
 * value of 0.0; clip: of activation_min / activation_max), quantized to
 * the result type `yelem` the way the reference form's quantize op `q`
 * does it (so clamp(Q(v)) == Q(clip(v))). Only bounds tighter than the
 * type's range are set. False (with *why) for an unknown activation. */
bool quill_fqdq_act_attrs(quill_fqdq_attrs *l, const quill_op *fop,
                          const quill_op *q, const quill_type *yelem,
                          const char **why);

/* ---- constants ----------------------------------------------------------- */

/* The int32 bias of an integer conv/matmul with nch output channels whose
 * accumulator has scale s_x * s_w[c] (s_w: n_w scales, 1 or nch), as a
 * dense tensor<nch x i32> attr. `bias` is the float op's bias operand:
 *   - dequantize of an i32 constant with zero point 0 and scales equal to
 *     s_x * s_w[c] (relative 1e-6, the f32 product ONNX tools compute):
 *     its integers, unchanged;
 *   - a float constant, or dequantize of any other quantized constant:
 *     its (dequantized) values quantized with round half to even to
 *     scale s_x * s_w[c] (computed in f64).
 * It must have nch elements (or one, broadcast). NULL with *why if the
 * bias is of another form or a value does not fit in int32. */
const quill_attr *quill_fqdq_bias_i32(quill_context *ctx,
                                      const quill_value *bias, double s_x,
                                      const double *s_w, size_t n_w,
                                      size_t nch, const char **why);

/* `bias` (a dense tensor<nch x i32> attr) with the values of the channels
 * whose requantization multiplier s_x * s_w[c] / s_y is below 2^-32 set to
 * 0: such a channel's result is the output zero point whatever its int32
 * accumulator holds, and a bias saturated at that scale (weights near
 * 1e-38) would only make the worst-case sum leave int32. Returns bias
 * itself when nothing changes, NULL on allocation failure. */
const quill_attr *quill_fqdq_bias_drop_dead(quill_context *ctx,
                                            const quill_attr *bias,
                                            double s_x, const double *s_w,
                                            size_t n_w, double s_y);

/* ---- accumulator width --------------------------------------------------- */

/* The largest |accumulator| an integer conv/matmul can reach, as a double
 * (exact below 2^53, which covers every int32 decision):
 *
 *   max over output channels c of
 *     |bias[c]| + sum_k |w[k, c] - zp_w[c]| * max|x - zp_x|
 *
 * with x anywhere in its storage range (xe: its quantized element type),
 * the actual weights when `w` is a constant (else K times their storage
 * range), wt the weights' type. conv: wt is [O, Cg, kh, kw], channel axis
 * 0; otherwise wt is [.., K, N] with channels on the last axis and each
 * batch matrix a separate sum. bias: the dense i32 bias or NULL. +inf if
 * the weight shape is not static. */
double quill_fqdq_acc_bound(const quill_type *xe, const quill_type *wt,
                            const quill_attr *w, bool conv,
                            const quill_attr *bias);

#endif /* QUILL_PASSES_FUSE_QDQ_H */
