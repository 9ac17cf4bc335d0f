/*
 * fmath.c - ir/fmath_body.inc instantiated on C floats: every QF_* step is
 * a call of a one-operation inline function, so no compiler contracts a
 * multiply and an add into an FMA (contraction works on one expression)
 * and the sequence is exactly the one the LLVM target emits.
 */
#include "ir/fmath.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline float add(float a, float b) { return a + b; }
static inline float sub(float a, float b) { return a - b; }
static inline float mul(float a, float b) { return a * b; }
static inline float divf_(float a, float b) { return a / b; }
static inline float lt(float a, float b, float t, float f) {
  return a < b ? t : f;
}
static inline float gt(float a, float b, float t, float f) {
  return a > b ? t : f;
}
static inline float pow2(float n) {
  uint32_t bits = (uint32_t)((int32_t)n + 127) << 23;
  float r;
  memcpy(&r, &bits, sizeof r);
  return r;
}

#define QF_T float
#define QF_CTX int qf_unused
#define QF_FN(name) f_##name
#define QF_CALL(name, x) f_##name(0, x)
#define QF_C(v) (v)
#define QF_ADD(a, b) add(a, b)
#define QF_SUB(a, b) sub(a, b)
#define QF_MUL(a, b) mul(a, b)
#define QF_DIV(a, b) divf_(a, b)
#define QF_FLOOR(a) floorf(a)
#define QF_ABS(a) fabsf(a)
#define QF_COPYSIGN(m, s) copysignf(m, s)
#define QF_LT(a, b, t, f) lt(a, b, t, f)
#define QF_GT(a, b, t, f) gt(a, b, t, f)
#define QF_NAN(x, r) (isnan(x) ? (x) : (r))
#define QF_POW2(n) pow2(n)
#include "ir/fmath_body.inc"

float quill_fexp(float x) { return f_exp(0, x); }
float quill_ftanh(float x) { return f_tanh(0, x); }
float quill_ferf(float x) { return f_erf(0, x); }
