/*
 * conv_arm.c - the AArch64 instructions behind conv_dot.c's two Arm kinds
 * (the neon-dot and neon-i8mm paths of isa.c). conv_dot.c keeps the tile
 * loops, the packing and the epilogue; this file builds the steps.
 *
 *   path       instruction            kg  MACs/instr  per step
 *   neon-dot   sdot v.4s, v.16b, v.16b  4      16      acc[p][v] += dot4(x, w)
 *   neon-i8mm  smmla v.4s, v.16b, v.16b 8      32      2 pixels x 2 channels
 *
 * Both multiply s8 by s8 (plain sdot/smmla exist on every CPU with the
 * feature; usdot/usmmla would need i8mm for the dot path too), so the
 * input panel is panel.c's s8 domain: x (i8 storage) or x ^ 0x80 = x - 128
 * (u8 storage), with zpu = zp_x (- 128) folded into the bias exactly as
 * the u8 domain of the x86 vpdpbusd path folds its own:
 *
 *   sum (x - zp_x) wc = sum (x - 128) wc - (zp_x - 128) sum wc
 *
 * Products of two s8 values summed four (sdot) or eight (smmla) at a time
 * into i32 cannot saturate or round, so every sum equals the reference
 * interpreter's modulo 2^32 (as every other path's).
 *
 * smmla takes two 2x8 s8 matrices X (rows: pixels) and W (rows: output
 * channels) and adds X * W^T, a 2x2 i32 tile, to its accumulator:
 *
 *   acc = [x0.w0, x0.w1, x1.w0, x1.w1]
 *
 * The packed weights of conv_dot.c with kg = 8 ([TW lanes][8]) are
 * already W for channel pairs (0,1), (2,3), ... of a vector; a pixel
 * pair's X is two 8-byte loads. conv_dot.c keeps the tile's accumulators
 * as (pixel pair, channel pair) tiles while it sums and turns them into
 * per-pixel channel vectors before requantizing:
 *
 *   tiles  a = [p0c0 p0c1 p1c0 p1c1]   b = [p0c2 p0c3 p1c2 p1c3]
 *   pixels p0 = [a0 a1 b0 b1]          p1 = [a2 a3 b2 b3]
 */
#include "targets/llvm/conv.h"

static LLVMValueRef bytes16(cg *c, LLVMValueRef v) {
  return LLVMBuildBitCast(c->b, v, LLVMVectorType(c->t_i8, 16), "");
}

static LLVMValueRef call4(cg *c, const char *name, LLVMValueRef acc,
                          LLVMValueRef a, LLVMValueRef b) {
  LLVMTypeRef over[2] = {LLVMVectorType(c->t_i32, 4),
                         LLVMVectorType(c->t_i8, 16)};
  return cg_intrinsic(c, name, over, 2,
                      (LLVMValueRef[]){acc, bytes16(c, a), bytes16(c, b)}, 3);
}

LLVMValueRef cg_arm_sdot(cg *c, LLVMValueRef acc, LLVMValueRef a,
                         LLVMValueRef b) {
  return call4(c, "llvm.aarch64.neon.sdot", acc, a, b);
}

LLVMValueRef cg_arm_smmla(cg *c, LLVMValueRef acc, LLVMValueRef x,
                          LLVMValueRef w) {
  return call4(c, "llvm.aarch64.neon.smmla", acc, x, w);
}

LLVMValueRef cg_arm_load_pair(cg *c, LLVMValueRef p0, LLVMValueRef p1) {
  LLVMTypeRef v2 = LLVMVectorType(c->t_i64, 2);
  LLVMValueRef lo = cg_load(c, c->t_i64, p0, 1);
  LLVMValueRef hi = cg_load(c, c->t_i64, p1, 1);
  LLVMValueRef v = LLVMBuildInsertElement(c->b, LLVMGetUndef(v2), lo,
                                          cg_i32c(c, 0), "");
  v = LLVMBuildInsertElement(c->b, v, hi, cg_i32c(c, 1), "");
  return bytes16(c, v);
}

static LLVMValueRef shuffle(cg *c, LLVMValueRef a, LLVMValueRef b,
                            const int idx[4]) {
  LLVMValueRef m[4];
  for (int i = 0; i < 4; i++)
    m[i] = cg_i32c(c, idx[i]);
  return LLVMBuildShuffleVector(c->b, a, b, LLVMConstVector(m, 4), "");
}

void cg_arm_mmla_to_pixels(cg *c, LLVMValueRef a, LLVMValueRef b,
                           LLVMValueRef *px0, LLVMValueRef *px1) {
  /* zip1 / zip2 of the 64-bit halves */
  *px0 = shuffle(c, a, b, (const int[4]){0, 1, 4, 5});
  *px1 = shuffle(c, a, b, (const int[4]){2, 3, 6, 7});
}

void cg_arm_bias_to_mmla(cg *c, LLVMValueRef bias, LLVMValueRef *ta,
                         LLVMValueRef *tb) {
  *ta = shuffle(c, bias, bias, (const int[4]){0, 1, 0, 1});
  *tb = shuffle(c, bias, bias, (const int[4]){2, 3, 2, 3});
}
