/*
 * fmath_ir.c - ir/fmath_body.inc instantiated as LLVM IR: the f32 exp,
 * tanh and erf of the numerics contract, one IR instruction per QF_* step
 * (fadd/fsub/fmul/fdiv without fast-math flags, so LLVM never fuses or
 * reorders them; floor, fabs and copysign intrinsics; selects), which is
 * the sequence ir/fmath.c runs in C: compiled code gives the reference
 * interpreter's bits. There are no calls: inside a cg_map loop the loop
 * vectorizer turns the whole body into vector code (vrndscaleps for the
 * floor, vpslld/vpaddd for the power of two).
 */
#include "targets/llvm/cg.h"

#include <math.h>

static LLVMValueRef sel(cg *c, LLVMRealPredicate p, LLVMValueRef a,
                        LLVMValueRef b, LLVMValueRef t, LLVMValueRef f) {
  return LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, p, a, b, ""), t, f, "");
}

static LLVMValueRef intr1(cg *c, const char *name, LLVMValueRef a) {
  LLVMTypeRef t = LLVMTypeOf(a);
  return cg_intrinsic(c, name, &t, 1, &a, 1);
}

/* 2^n for an integral f32 n in [-126, 127]: the exponent field n + 127. */
static LLVMValueRef pow2(cg *c, LLVMValueRef n) {
  LLVMValueRef i = LLVMBuildFPToSI(c->b, n, c->t_i32, "");
  i = LLVMBuildShl(c->b, LLVMBuildAdd(c->b, i, cg_i32c(c, 127), ""),
                   cg_i32c(c, 23), "");
  return LLVMBuildBitCast(c->b, i, c->t_f32, "");
}

#define QF_T LLVMValueRef
#define QF_CTX cg *c
#define QF_FN(name) ir_##name
#define QF_CALL(name, x) ir_##name(c, x)
#define QF_C(v) cg_f32c(c, (double)(v))
#define QF_ADD(p, q) LLVMBuildFAdd(c->b, p, q, "")
#define QF_SUB(p, q) LLVMBuildFSub(c->b, p, q, "")
#define QF_MUL(p, q) LLVMBuildFMul(c->b, p, q, "")
#define QF_DIV(p, q) LLVMBuildFDiv(c->b, p, q, "")
#define QF_FLOOR(p) intr1(c, "llvm.floor", p)
#define QF_ABS(p) intr1(c, "llvm.fabs", p)
#define QF_COPYSIGN(m, s)                                                      \
  cg_intrinsic(c, "llvm.copysign", (LLVMTypeRef[]){c->t_f32}, 1,             \
               (LLVMValueRef[]){m, s}, 2)
#define QF_LT(p, q, t, f) sel(c, LLVMRealOLT, p, q, t, f)
#define QF_GT(p, q, t, f) sel(c, LLVMRealOGT, p, q, t, f)
#define QF_NAN(x, r) sel(c, LLVMRealUNO, x, x, x, r)
#define QF_POW2(n) pow2(c, n)
#include "ir/fmath_body.inc"

LLVMValueRef cg_fexp(cg *c, LLVMValueRef x) { return ir_exp(c, x); }
LLVMValueRef cg_ftanh(cg *c, LLVMValueRef x) { return ir_tanh(c, x); }
LLVMValueRef cg_ferf(cg *c, LLVMValueRef x) { return ir_erf(c, x); }
