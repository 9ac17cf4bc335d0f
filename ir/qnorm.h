/*
 * qnorm.h - the integer arithmetic of `qlayer_norm`, defined once.
 *
 * qlayer_norm %x, %g, %b {axis, epsilon_q = E, shift = G, bias_shift = F}
 * normalizes each row of N = prod(dims[axis..]) stored values of x (zero
 * point zx) with integers only (docs/numerics.md, "Integer layer_norm"):
 *
 *   xi  = x[i] - zx                          exact, |xi| < 2^16
 *   S   = sum xi,  Q = sum xi^2              int64, exact (any order)
 *   V   = N*Q - S^2 + E                      N^2 (var + eps/s_x^2), int64
 *   row (V > 0): b = bit length of V, k = (62 - b) / 2, W = V << 2k,
 *        R = floor(sqrt(W)) in [2^30, 2^31), m = floor(2^61 / R),
 *        s = 37 - k;                         (V = 0: m = 0, s = 37)
 *   z   = (d * m + 2^(s-1)) >> s,  d = N*xi - S
 *                                            (x - mean) / sqrt(var + eps)
 *                                            in Q24, rounded half up
 *   acc = z * g[i] + (b[i] << (24 + G - F))
 *   y   = clamp(zy + ((acc + 2^(23+G)) >> (24+G)), qmin, qmax)
 *
 * g[i] = round(gamma[i] / s_y * 2^G) and b[i] = round(beta[i] / s_y * 2^F)
 * are int32, folded by fuse-qdq (quill_qnorm_fold; the functions are in
 * ir/quant.c). All arithmetic is in 64 bits, two's complement modulo
 * 2^64 (the LLVM target's i64; the folded constants keep every sum below
 * 2^62), shifts arithmetic. Rows of at most QUILL_QNORM_MAX_ROW elements
 * keep |z| below 2^31.
 */
#ifndef QUILL_IR_QNORM_H
#define QUILL_IR_QNORM_H

#include <stddef.h>

#include "types_fwd.h"

#define QUILL_QNORM_MAX_ROW 16383  /* N: sqrt(N - 1) * 2^24 < 2^31 */
#define QUILL_QNORM_Z_BITS 24      /* the normalized value's fraction bits */
#define QUILL_QNORM_MAX_EPS (INT64_C(1) << 60) /* epsilon_q <= 2^60 */

/* floor(sqrt(w)), exact for every uint64 (bitwise, digit by digit). */
uint64_t quill_isqrt_u64(uint64_t w);

/* The row's multiplier m and shift s from V = N*Q - S^2 + E >= 0 (the
 * header comment). */
void quill_qnorm_row(int64_t v, int64_t *m, int *s);

/* The result of one element: d = N*xi - S, the row's m and s, the folded
 * g and b, shift G, bias_shift F, the output zero point and range. */
int64_t quill_qnorm_elem(int64_t d, int64_t m, int s, int64_t g, int64_t b,
                         int G, int F, int64_t zy, int64_t qmin,
                         int64_t qmax);

/* The folded constants of a layer_norm over rows of n elements between a
 * dequantize (scale sx) and a quantize (scale sy): gamma and beta (n
 * values each; beta NULL: 0) become g and b (int32 values), G and F, and
 * E = round(eps * n^2 / sx^2). False (and *why) if they do not fit: a row
 * longer than QUILL_QNORM_MAX_ROW, E above 2^60, or gamma / sy so large
 * that G would be negative. */
bool quill_qnorm_fold(size_t n, double eps, double sx, double sy,
                      const double *gamma, const double *beta, int32_t *g,
                      int32_t *b, int *G, int *F, int64_t *E,
                      const char **why);


#endif /* QUILL_IR_QNORM_H */
