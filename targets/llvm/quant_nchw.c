/*
 * quant_nchw.c - the model input's quantize on the x86 paths: a float
 * NCHW tensor of C = 1..4 channels quantized per tensor (half_even) to 8
 * bits stored channel-last (NHWC, possibly inside a conv's halo), 16
 * pixels a step on the zmm paths (avx512-vnni, amx), 8 on the ymm ones
 * (avx2, avx-vnni), bit-exact with targets/reference/kernels_quant.c:
 *
 *   q = clamp(round_half_even((float)x / (float)s) + zp, qmin, qmax),
 *   NaN -> zp, +-inf clamped.
 *
 * A step loads 16 floats from each of the C planes and per vector:
 *
 *   x = vfixupimmps(x)          NaN -> +0 (every other class as is)
 *   x = vrangeps(x, B)          sign(x) min(|x|, B), B = s 2^13 (without
 *                               AVX512-DQ: vmaxps, vminps)
 *   q0 = x r                    r = RN(1/s), computed here in float
 *   e = fma(-q0, s, x)          the remainder, exact
 *   q = fma(e, r, q0)           = RN(x / s) (Markstein)
 *   i = vcvtps2dq {rn-sae}(q)   round half to even
 *
 * then narrows and interleaves the C vectors: vpackssdw (one per pair of
 * channels), vpaddsw of zp, vpackuswb / vpacksswb (saturation is the
 * clamp to the storage range; a narrower [qmin, qmax] is one byte
 * max / min more), and one vpermb (AVX512-VBMI) that puts pixel p's
 * channel c at byte C p + c, or without VBMI a vpshufb that does so
 * inside each 128-bit lane and a vpermd that joins the lanes' 4 C bytes.
 * The 16 C bytes go out in one store (masked for C = 3); a tail of fewer
 * than 16 pixels uses masked loads and a masked store.
 *
 * The ymm form (AVX2) does the same 8 pixels a step with what AVX2 has:
 * NaN -> 0 as vcmpordps + vandps, the clamp as vmaxps + vminps, the
 * rounding as vroundps + vcvttps2dq (not the MXCSR's mode), the 128-bit
 * lanes' packs, vpshufb and vpermd, and 8 C bytes stored.
 *
 * Why the arithmetic is exact: with r = RN(1/s) and q0 = RN(x r) within
 * an ulp of x / s, e = x - q0 s is representable and the fma gives it
 * exactly, and RN(q0 + e r) is the correctly rounded quotient (Markstein),
 * as long as nothing under- or overflows. The clamp to |x| <= B keeps
 * q0 finite (|q| <= 2^13, beyond every 8-bit range from any zero point,
 * so the clamped x saturates as x did); 2^-60 <= s <= 2^60 keeps every
 * intermediate normal wherever |x / s| >= 2^-30, and where it is smaller
 * both quotients round to 0. With |q| <= 2^13 the conversion cannot
 * overflow and the words hold q exactly. Where the reciprocal's first
 * product strays further than the theorem assumes, the two roundings could
 * only differ next to a half integer: kernel_exact compares them there, at
 * compile time, and a scale that failed would keep the generic map.
 *
 * Everything else (other layouts, per-axis parameters, f64, other
 * roundings, C > 4, the portable path, other targets) stays the generic
 * cg_map of lower_quant.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "targets/llvm/cg.h"

#define CHUNK_PIX 2048   /* pixels a task (a multiple of the step) */
#define NS_PER_VALUE 0.07 /* estimated single-thread time per input value */

typedef struct qn {
  unsigned C;
  unsigned VL;        /* pixels a step: 16 (zmm) or 8 (ymm, AVX2) */
  bool is_signed, vbmi, dq;
  float s, r, bound;
  int64_t zp, qmin, qmax, smin, smax;
  LLVMTypeRef vf, vi, vb; /* <VL x float>, <VL x i32>, <4 VL x i8> */
} qn;

static LLVMValueRef splat_f(cg *c, const qn *k, float v) {
  return cg_splat(c, cg_f32c(c, v), k->VL);
}

/* The kernel's arithmetic (NaN aside) for one x, in C: the clamp, the
 * corrected quotient, the rounding, as a saturated integer. */
static long kernel_q(float x, float s, float r, float b) {
  x = fabsf(x) < b ? x : copysignf(b, x);
  float q0 = x * r;
  float e = fmaf(-q0, s, x);
  float q = fmaf(e, r, q0);
  return lrintf(q);
}

/* The reference's rounded quotient (quill_quantize_value before the zero
 * point and the clamp), saturated at +-2^20. */
static long ref_q(float x, float s) {
  double q = (double)(x / s);
  return q > 0x1p20 ? 1L << 20 : q < -0x1p20 ? -(1L << 20) : lrint(q);
}

/* Whether the kernel rounds every x of an 8-bit range as the reference:
 * the two quotients are each within about an ulp of x / s, so their
 * roundings can only differ where x / s is within a few ulps of a half
 * integer k + 1/2; the 33 floats around (k + 1/2) s for every k that
 * decides a result (|k| <= 600 covers any zero point) are compared (the
 * exhaustive comparison over all 2^32 floats found no difference for the
 * scales tried; this keeps any other scale honest). */
static bool kernel_exact(float s, float r, float b) {
  for (int k = -600; k <= 600; k++) {
    float x = ((float)k + 0.5f) * s;
    for (int j = 0; j < 16; j++)
      x = nextafterf(x, -INFINITY);
    for (int j = 0; j < 33; j++, x = nextafterf(x, INFINITY)) {
      long a = kernel_q(x, s, r, b), want = ref_q(x, s);
      /* beyond +-600 both saturate every 8-bit result alike */
      if (a != want && !(labs(a) > 600 && labs(want) > 600 &&
                         (a > 0) == (want > 0)))
        return false;
    }
  }
  return true;
}

/* Per-tensor parameters and shapes this kernel takes, into k. */
static bool qn_applies(cg *c, const cg_view *y, const cg_view *x,
                       quill_rounding r, qn *k) {
  const cg_target *t = c->tgt;
  memset(k, 0, sizeof *k);
  if (!t || !t->x86)
    return false;
  if (t->avx512f && t->avx512bw &&
      (t->isa == QUILL_LLVM_ISA_AVX512_VNNI || t->isa == QUILL_LLVM_ISA_AMX))
    k->VL = 16;
  else if (t->avx2 && t->fma &&
           (t->isa == QUILL_LLVM_ISA_AVX2 || t->isa == QUILL_LLVM_ISA_AVX_VNNI))
    k->VL = 8;
  else
    return false;
  if (r != QUILL_ROUND_HALF_EVEN || x->rank != 4 || y->rank != 4 ||
      quill_type_is_quant(x->elem) ||
      quill_type_kind_of(x->elem) != QUILL_TYPE_F32 ||
      !quill_type_is_quant(y->elem) || quill_type_quant_axis_of(y->elem) >= 0)
    return false;
  const quill_type *e = y->elem;
  quill_type_kind sk = quill_type_kind_of(quill_type_quant_storage(e));
  if ((sk != QUILL_TYPE_U8 && sk != QUILL_TYPE_I8) ||
      quill_type_kind_of(quill_type_quant_expressed(e)) != QUILL_TYPE_F32)
    return false;
  for (unsigned d = 0; d < 4; d++)
    if (x->dims[d] != y->dims[d] || x->dims[d] < 1)
      return false;
  int64_t C = y->dims[1];
  if (C > 4 || x->strides[3] != 1 || y->strides[1] != 1 ||
      y->strides[3] != C)
    return false;
  float s = (float)quill_type_quant_scales(e)[0];
  if (!(s >= 0x1p-60f && s <= 0x1p60f))
    return false;
  k->C = (unsigned)C;
  k->is_signed = sk == QUILL_TYPE_I8;
  k->smin = k->is_signed ? -128 : 0;
  k->smax = k->is_signed ? 127 : 255;
  k->zp = quill_type_quant_zero_points(e)[0];
  k->qmin = quill_type_quant_qmin(e);
  k->qmax = quill_type_quant_qmax(e);
  if (k->zp < k->smin || k->zp > k->smax || k->qmin < k->smin ||
      k->qmax > k->smax || k->qmin > k->qmax)
    return false;
  k->s = s;
  volatile float one = 1.0f; /* RN(1/s) in float, not folded otherwise */
  k->r = one / s;
  k->bound = s * 8192.0f; /* exact: a power of two */
  if (!kernel_exact(k->s, k->r, k->bound))
    return false;
  k->vbmi = k->VL == 16 && t->avx512vbmi;
  k->dq = k->VL == 16 && t->avx512dq;
  k->vf = LLVMVectorType(c->t_f32, k->VL);
  k->vi = LLVMVectorType(c->t_i32, k->VL);
  k->vb = LLVMVectorType(c->t_i8, 4 * k->VL);
  return true;
}

/* x r corrected by two fmas: RN(x / s) for the clamped x. */
static LLVMValueRef quotient(cg *c, const qn *k, LLVMValueRef x) {
  LLVMValueRef sv = splat_f(c, k, k->s), rv = splat_f(c, k, k->r);
  LLVMTypeRef vf = k->vf;
  LLVMValueRef q0 = LLVMBuildFMul(c->b, x, rv, "");
  LLVMValueRef e = cg_intrinsic(
      c, "llvm.fma", &vf, 1,
      (LLVMValueRef[]){LLVMBuildFNeg(c->b, q0, ""), sv, x}, 3);
  return cg_intrinsic(c, "llvm.fma", &vf, 1, (LLVMValueRef[]){e, rv, q0}, 3);
}

/* The quotient of one vector of VL floats as i32 lanes (zp not added). */
static LLVMValueRef quant_vec(cg *c, const qn *k, LLVMValueRef x) {
  if (k->VL == 8) {
    /* AVX2: NaN -> 0 (vcmpordps, vandps), vmaxps / vminps, the quotient,
     * vroundps + vcvttps2dq (not the MXCSR's rounding) */
    x = LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, LLVMRealUNO, x, x, ""),
                        LLVMConstNull(k->vf), x, "");
    x = cg_fclamp(c, x, splat_f(c, k, -k->bound), splat_f(c, k, k->bound));
    LLVMValueRef q = cg_round(c, quotient(c, k, x), QUILL_ROUND_HALF_EVEN);
    return LLVMBuildFPToSI(c->b, q, k->vi, "");
  }
  LLVMValueRef m16 = LLVMConstInt(c->t_i16, 0xFFFF, 0);
  /* token 0 (QNaN) and 1 (SNaN) -> response 8 (+0), others 0 (the
   * destination, x itself) */
  x = cg_intrinsic(c, "llvm.x86.avx512.mask.fixupimm.ps.512", NULL, 0,
                   (LLVMValueRef[]){x, x, cg_splat(c, cg_i32c(c, 0x88), 16),
                                    cg_i32c(c, 0), m16, cg_i32c(c, 4)},
                   6);
  LLVMValueRef B = splat_f(c, k, k->bound);
  if (k->dq) /* imm 2: the smaller magnitude, the sign of x */
    x = cg_intrinsic(c, "llvm.x86.avx512.mask.range.ps.512", NULL, 0,
                     (LLVMValueRef[]){x, B, cg_i32c(c, 2),
                                      LLVMConstNull(k->vf), m16, cg_i32c(c, 4)},
                     6);
  else
    x = cg_fclamp(c, x, splat_f(c, k, -k->bound), B);
  LLVMValueRef q = quotient(c, k, x);
  /* rounding 8: {rn-sae} */
  return cg_intrinsic(c, "llvm.x86.avx512.mask.cvtps2dq.512", NULL, 0,
                      (LLVMValueRef[]){q, LLVMConstNull(k->vi), m16,
                                       cg_i32c(c, 8)},
                      4);
}

/* The C i32 vectors as 4 VL bytes: pixel p's channel ch at byte C p + ch
 * (bytes from VL C on undefined), zp added, clamped to [qmin, qmax]. */
static LLVMValueRef narrow(cg *c, const qn *k, const LLVMValueRef *q) {
  unsigned C = k->C, VL = k->VL, NB = 4 * VL;
  bool z = VL == 16;
  const char *dw =
      z ? "llvm.x86.avx512.packssdw.512" : "llvm.x86.avx2.packssdw";
  LLVMValueRef w0 = cg_intrinsic(
      c, dw, NULL, 0, (LLVMValueRef[]){q[0], C > 1 ? q[1] : q[0]}, 2);
  LLVMValueRef w1 =
      C > 2 ? cg_intrinsic(c, dw, NULL, 0,
                           (LLVMValueRef[]){q[2], C > 3 ? q[3] : q[2]}, 2)
            : w0;
  /* per 128-bit lane L: words q0[4L..4L+3] q1[4L..] | q2[4L..] q3[4L..] */
  LLVMTypeRef w16 = LLVMVectorType(c->t_i16, 2 * VL);
  LLVMValueRef zp = cg_splat(c, cg_i16c(c, k->zp), 2 * VL);
  if (k->zp) {
    w0 = cg_intrinsic(c, "llvm.sadd.sat", &w16, 1, (LLVMValueRef[]){w0, zp},
                      2);
    w1 = C > 2 ? cg_intrinsic(c, "llvm.sadd.sat", &w16, 1,
                              (LLVMValueRef[]){w1, zp}, 2)
               : w0;
  }
  LLVMValueRef b = cg_intrinsic(
      c,
      z ? (k->is_signed ? "llvm.x86.avx512.packsswb.512"
                        : "llvm.x86.avx512.packuswb.512")
        : (k->is_signed ? "llvm.x86.avx2.packsswb" : "llvm.x86.avx2.packuswb"),
      NULL, 0, (LLVMValueRef[]){w0, w1}, 2);
  /* lane L, byte 4 ch + i: channel ch of pixel 4 L + i */
  LLVMTypeRef vb = k->vb;
  if (k->qmin > k->smin)
    b = cg_intrinsic(c, k->is_signed ? "llvm.smax" : "llvm.umax", &vb, 1,
                     (LLVMValueRef[]){b, cg_splat(c, cg_i8c(c, k->qmin), NB)},
                     2);
  if (k->qmax < k->smax)
    b = cg_intrinsic(c, k->is_signed ? "llvm.smin" : "llvm.umin", &vb, 1,
                     (LLVMValueRef[]){b, cg_splat(c, cg_i8c(c, k->qmax), NB)},
                     2);
  LLVMValueRef idx[64];
  if (k->vbmi) {
    for (unsigned j = 0; j < 64; j++) {
      unsigned p = j / C, ch = j % C;
      idx[j] = cg_i8c(c, j < 16 * C ? 16 * (p / 4) + 4 * ch + p % 4 : 0);
    }
    return cg_intrinsic(c, "llvm.x86.avx512.permvar.qi.512", NULL, 0,
                        (LLVMValueRef[]){b, LLVMConstVector(idx, 64)}, 2);
  }
  /* inside each lane: byte C i + ch <- byte 4 ch + i (i < 4), then the
   * lanes' first C dwords together */
  for (unsigned j = 0; j < NB; j++) {
    unsigned l = j % 16, i = l / C, ch = l % C;
    idx[j] = cg_i8c(c, l < 4 * C ? (int64_t)(4 * ch + i) : 0x80);
  }
  b = cg_intrinsic(c, z ? "llvm.x86.avx512.pshuf.b.512" : "llvm.x86.avx2.pshuf.b",
                   NULL, 0, (LLVMValueRef[]){b, LLVMConstVector(idx, NB)}, 2);
  LLVMValueRef di[16];
  for (unsigned j = 0; j < VL; j++)
    di[j] = cg_i32c(c, j < VL / 4 * C ? 4 * (j / C) + j % C : 0);
  LLVMValueRef d = LLVMBuildBitCast(c->b, b, k->vi, "");
  d = cg_intrinsic(c,
                   z ? "llvm.x86.avx512.permvar.si.512" : "llvm.x86.avx2.permd",
                   NULL, 0, (LLVMValueRef[]){d, LLVMConstVector(di, VL)}, 2);
  return LLVMBuildBitCast(c->b, d, vb, "");
}

static LLVMValueRef masked_store(cg *c, const qn *k, LLVMValueRef v,
                                 LLVMValueRef ptr, LLVMValueRef mask) {
  LLVMTypeRef ov[2] = {k->vb, c->t_ptr};
  return cg_intrinsic(c, "llvm.masked.store", ov, 2,
                      (LLVMValueRef[]){v, ptr, cg_i32c(c, 1), mask}, 4);
}

/* One step: pixels [p, p + VL) of the run at xo / yo (element offsets),
 * or only the first `left` of them (an i64 value) when left is set. */
static void step(cg *c, const qn *k, LLVMValueRef xb, LLVMValueRef yb,
                 LLVMValueRef xo, LLVMValueRef yo, int64_t xs1,
                 LLVMValueRef p, LLVMValueRef left) {
  LLVMValueRef q[4] = {NULL, NULL, NULL, NULL};
  LLVMValueRef lm = left ? cg_lane_mask(c, left, k->VL) : NULL;
  LLVMTypeRef lov[2] = {k->vf, c->t_ptr};
  for (unsigned ch = 0; ch < k->C; ch++) {
    LLVMValueRef o = LLVMBuildAdd(
        c->b, LLVMBuildAdd(c->b, xo, cg_i64c(c, (int64_t)ch * xs1), ""), p,
        "");
    LLVMValueRef ptr = cg_gep(c, c->t_f32, xb, o);
    LLVMValueRef x =
        left ? cg_intrinsic(c, "llvm.masked.load", lov, 2,
                            (LLVMValueRef[]){ptr, cg_i32c(c, 4), lm,
                                             LLVMConstNull(k->vf)},
                            4)
             : cg_load(c, k->vf, ptr, 4);
    q[ch] = quant_vec(c, k, x);
  }
  LLVMValueRef b = narrow(c, k, q);
  LLVMValueRef optr = cg_gep(
      c, c->t_i8, yb,
      LLVMBuildAdd(c->b, yo, LLVMBuildMul(c->b, p, cg_i64c(c, k->C), ""), ""));
  unsigned nb = k->VL * k->C, NB = 4 * k->VL;
  if (left) {
    masked_store(c, k, b, optr,
                 cg_lane_mask(c, LLVMBuildMul(c->b, left, cg_i64c(c, k->C), ""),
                              NB));
  } else if (nb == NB / 4 || nb == NB / 2 || nb == NB || k->VL == 8) {
    /* whole registers' low halves, or (ymm, 24 bytes) 16 + 8 */
    LLVMValueRef idx[64];
    for (unsigned j = 0; j < nb; j++)
      idx[j] = cg_i32c(c, j);
    LLVMValueRef v = nb == NB ? b
                              : LLVMBuildShuffleVector(
                                    c->b, b, LLVMGetUndef(k->vb),
                                    LLVMConstVector(idx, nb), "");
    cg_store(c, v, optr, 1);
  } else { /* zmm, 48 bytes: vmovdqu8 with a mask */
    masked_store(c, k, b, optr, cg_lane_mask(c, cg_i64c(c, nb), NB));
  }
}

bool cg_quant_nchw(cg *c, const cg_view *y, const cg_view *x,
                   quill_rounding r) {
  qn k;
  if (!qn_applies(c, y, x, r, &k))
    return false;
  int64_t N = y->dims[0], C = k.C, H = y->dims[2], W = y->dims[3];
  /* runs of contiguous pixels: the whole image when rows follow each other
   * in both views, else one row */
  bool merged = H == 1 || (x->strides[2] == W && y->strides[2] == W * C);
  int64_t L = merged ? H * W : W, R = merged ? 1 : H;
  int64_t nch = (L + CHUNK_PIX - 1) / CHUNK_PIX;
  cg_stage_begin(c, "quantize", N * R * nch);
  cg_stage_work(c, NS_PER_VALUE * (double)(N * C * H * W));
  LLVMValueRef xb = cg_view_base(c, x), yb = cg_view_base(c, y);
  cg_loop lt;
  cg_loop_begin(c, &lt, c->t0, c->t1, 1);
  LLVMValueRef t = lt.i;
  LLVMValueRef ck = LLVMBuildSRem(c->b, t, cg_i64c(c, nch), "");
  t = LLVMBuildSDiv(c->b, t, cg_i64c(c, nch), "");
  LLVMValueRef h = LLVMBuildSRem(c->b, t, cg_i64c(c, R), "");
  LLVMValueRef n = LLVMBuildSDiv(c->b, t, cg_i64c(c, R), "");
  LLVMValueRef xo = LLVMBuildMul(c->b, n, cg_i64c(c, x->strides[0]), "");
  LLVMValueRef yo = LLVMBuildMul(c->b, n, cg_i64c(c, y->strides[0]), "");
  if (!merged) {
    xo = LLVMBuildAdd(c->b, xo,
                      LLVMBuildMul(c->b, h, cg_i64c(c, x->strides[2]), ""), "");
    yo = LLVMBuildAdd(c->b, yo,
                      LLVMBuildMul(c->b, h, cg_i64c(c, y->strides[2]), ""), "");
  }
  LLVMValueRef p0 = LLVMBuildMul(c->b, ck, cg_i64c(c, CHUNK_PIX), "");
  LLVMValueRef p1 = cg_min_s(
      c, LLVMBuildAdd(c->b, p0, cg_i64c(c, CHUNK_PIX), ""), cg_i64c(c, L));
  LLVMValueRef full = LLVMBuildAnd(
      c->b, LLVMBuildSub(c->b, p1, p0, ""), cg_i64c(c, -(int64_t)k.VL), "");
  LLVMValueRef pend = LLVMBuildAdd(c->b, p0, full, "");
  cg_loop lp;
  cg_loop_begin(c, &lp, p0, pend, k.VL);
  step(c, &k, xb, yb, xo, yo, x->strides[1], lp.i, NULL);
  cg_loop_end_nounroll(c, &lp);
  LLVMValueRef left = LLVMBuildSub(c->b, p1, pend, "");
  cg_if tail;
  cg_if_begin(c, &tail,
              LLVMBuildICmp(c->b, LLVMIntSGT, left, cg_i64c(c, 0), ""));
  step(c, &k, xb, yb, xo, yo, x->strides[1], pend, left);
  cg_if_end(c, &tail);
  cg_loop_end(c, &lt);
  cg_stage_end(c);
  return true;
}
