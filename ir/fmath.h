/*
 * fmath.h - f32 exp, tanh and erf of the numerics contract: the exact
 * operation sequence of ir/fmath_body.inc, which the LLVM target emits
 * too (targets/llvm/fmath_ir.c), so the reference interpreter and compiled
 * code give the same bits. Within a couple of ulp of glibc's expf, tanhf
 * and erff (docs/numerics.md); NaN in, NaN out; pure functions.
 */
#ifndef QUILL_IR_FMATH_H
#define QUILL_IR_FMATH_H

float quill_fexp(float x);
float quill_ftanh(float x);
float quill_ferf(float x);

#endif /* QUILL_IR_FMATH_H */
