/*
 * quant_nchw.c - the model input's quantize on the zmm paths: a float
 * NCHW tensor of C = 1..4 channels quantized per tensor (half_even) to 8
 * bits stored channel-last (NHWC, possibly inside a conv's halo), 16
 * pixels a step, bit-exact with targets/reference/kernels_quant.c:
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
 * Why the arithmetic is exact: with r = RN(1/s) and q0 = RN(x r) within
 * an ulp of x / s, e = x - q0 s is representable and the fma gives it
 * exactly, and RN(q0 + e r) is the correctly rounded quotient (Markstein),
 * as long as nothing under- or overflows. The clamp to |x| <= B keeps
 * q0 finite (|q| <= 2^13, beyond every 8-bit range from any zero point,
 * so the clamped x saturates as x did); 2^-60 <= s <= 2^60 keeps every
 * intermediate normal wherever |x / s| >= 2^-30, and where it is smaller
 * both quotients round to 0. With |q| <= 2^13 the conversion cannot
 * overflow and the words hold q exactly.
 *
 * Everything else (other layouts, per-axis parameters, f64, other
 * roundings, C > 4, other paths and targets) stays the generic cg_map of
 * lower_quant.c.
 */
#include <math.h>
#include <string.h>

#include "targets/llvm/cg.h"

#define PIX 16           /* pixels a step */
#define CHUNK_PIX 2048   /* pixels a task (a multiple of PIX) */
#define NS_PER_VALUE 0.07 /* estimated single-thread time per input value */

typedef struct qn {
  unsigned C;
  bool is_signed, vbmi, dq;
  float s, r, bound;
  int64_t zp, qmin, qmax, smin, smax;
  LLVMTypeRef vf, vi, vb; /* <16 x float>, <16 x i32>, <64 x i8> */
} qn;

static LLVMValueRef splat_f(cg *c, const qn *k, float v) {
  (void)k;
  return cg_splat(c, cg_f32c(c, v), PIX);
}

/* Per-tensor parameters and shapes this kernel takes, into k. */
static bool qn_applies(cg *c, const cg_view *y, const cg_view *x,
                       quill_rounding r, qn *k) {
  const cg_target *t = c->tgt;
  memset(k, 0, sizeof *k);
  if (!t || !t->x86 || !t->avx512f || !t->avx512bw ||
      (t->isa != QUILL_LLVM_ISA_AVX512_VNNI && t->isa != QUILL_LLVM_ISA_AMX))
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
  volatile float one = 1.0f; /* the division in float, at run time */
  k->r = one / s;
  k->bound = s * 8192.0f; /* exact: a power of two */
  k->vbmi = t->avx512vbmi;
  k->dq = t->avx512dq;
  k->vf = LLVMVectorType(c->t_f32, PIX);
  k->vi = LLVMVectorType(c->t_i32, PIX);
  k->vb = LLVMVectorType(c->t_i8, 64);
  return true;
}

/* The quotient of one vector of 16 floats as i32 lanes (zp not added). */
static LLVMValueRef quant_vec(cg *c, const qn *k, LLVMValueRef x) {
  LLVMValueRef m16 = LLVMConstInt(c->t_i16, 0xFFFF, 0);
  /* token 0 (QNaN) and 1 (SNaN) -> response 8 (+0), others 0 (the
   * destination, x itself) */
  x = cg_intrinsic(c, "llvm.x86.avx512.mask.fixupimm.ps.512", NULL, 0,
                   (LLVMValueRef[]){x, x, cg_splat(c, cg_i32c(c, 0x88), PIX),
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
  LLVMValueRef sv = splat_f(c, k, k->s), rv = splat_f(c, k, k->r);
  LLVMTypeRef vf = k->vf;
  LLVMValueRef q0 = LLVMBuildFMul(c->b, x, rv, "");
  LLVMValueRef e = cg_intrinsic(
      c, "llvm.fma", &vf, 1,
      (LLVMValueRef[]){LLVMBuildFNeg(c->b, q0, ""), sv, x}, 3);
  LLVMValueRef q = cg_intrinsic(c, "llvm.fma", &vf, 1,
                                (LLVMValueRef[]){e, rv, q0}, 3);
  /* rounding 8: {rn-sae} */
  return cg_intrinsic(c, "llvm.x86.avx512.mask.cvtps2dq.512", NULL, 0,
                      (LLVMValueRef[]){q, LLVMConstNull(k->vi), m16,
                                       cg_i32c(c, 8)},
                      4);
}

/* The C i32 vectors as 64 bytes: pixel p's channel ch at byte C p + ch
 * (bytes from 16 C on undefined), zp added, clamped to [qmin, qmax]. */
static LLVMValueRef narrow(cg *c, const qn *k, const LLVMValueRef *q) {
  unsigned C = k->C;
  const char *dw = "llvm.x86.avx512.packssdw.512";
  LLVMValueRef w0 = cg_intrinsic(
      c, dw, NULL, 0, (LLVMValueRef[]){q[0], C > 1 ? q[1] : q[0]}, 2);
  LLVMValueRef w1 =
      C > 2 ? cg_intrinsic(c, dw, NULL, 0,
                           (LLVMValueRef[]){q[2], C > 3 ? q[3] : q[2]}, 2)
            : w0;
  /* per 128-bit lane L: words q0[4L..4L+3] q1[4L..] | q2[4L..] q3[4L..] */
  LLVMTypeRef w16 = LLVMVectorType(c->t_i16, 32);
  LLVMValueRef zp = cg_splat(c, cg_i16c(c, k->zp), 32);
  if (k->zp) {
    w0 = cg_intrinsic(c, "llvm.sadd.sat", &w16, 1, (LLVMValueRef[]){w0, zp},
                      2);
    w1 = C > 2 ? cg_intrinsic(c, "llvm.sadd.sat", &w16, 1,
                              (LLVMValueRef[]){w1, zp}, 2)
               : w0;
  }
  LLVMValueRef b = cg_intrinsic(
      c,
      k->is_signed ? "llvm.x86.avx512.packsswb.512"
                   : "llvm.x86.avx512.packuswb.512",
      NULL, 0, (LLVMValueRef[]){w0, w1}, 2);
  /* lane L, byte 4 ch + i: channel ch of pixel 4 L + i */
  LLVMTypeRef vb = k->vb;
  if (k->qmin > k->smin)
    b = cg_intrinsic(c, k->is_signed ? "llvm.smax" : "llvm.umax", &vb, 1,
                     (LLVMValueRef[]){b, cg_splat(c, cg_i8c(c, k->qmin), 64)},
                     2);
  if (k->qmax < k->smax)
    b = cg_intrinsic(c, k->is_signed ? "llvm.smin" : "llvm.umin", &vb, 1,
                     (LLVMValueRef[]){b, cg_splat(c, cg_i8c(c, k->qmax), 64)},
                     2);
  LLVMValueRef idx[64];
  if (k->vbmi) {
    for (unsigned j = 0; j < 64; j++) {
      unsigned p = j / C, ch = j % C;
      idx[j] = cg_i8c(c, j < PIX * C ? 16 * (p / 4) + 4 * ch + p % 4 : 0);
    }
    return cg_intrinsic(c, "llvm.x86.avx512.permvar.qi.512", NULL, 0,
                        (LLVMValueRef[]){b, LLVMConstVector(idx, 64)}, 2);
  }
  /* inside each lane: byte C i + ch <- byte 4 ch + i (i < 4), then the
   * lanes' first C dwords together */
  for (unsigned j = 0; j < 64; j++) {
    unsigned l = j % 16, i = l / C, ch = l % C;
    idx[j] = cg_i8c(c, l < 4 * C ? (int64_t)(4 * ch + i) : 0x80);
  }
  b = cg_intrinsic(c, "llvm.x86.avx512.pshuf.b.512", NULL, 0,
                   (LLVMValueRef[]){b, LLVMConstVector(idx, 64)}, 2);
  LLVMValueRef di[16];
  for (unsigned j = 0; j < 16; j++)
    di[j] = cg_i32c(c, j < 4 * C ? 4 * (j / C) + j % C : 0);
  LLVMValueRef d = LLVMBuildBitCast(c->b, b, k->vi, "");
  d = cg_intrinsic(c, "llvm.x86.avx512.permvar.si.512", NULL, 0,
                   (LLVMValueRef[]){d, LLVMConstVector(di, 16)}, 2);
  return LLVMBuildBitCast(c->b, d, vb, "");
}

/* The <64 x i1> mask of bytes j < n (an i64 value). */
static LLVMValueRef byte_mask(cg *c, LLVMValueRef n) {
  LLVMValueRef lanes[64];
  for (unsigned l = 0; l < 64; l++)
    lanes[l] = cg_i64c(c, l);
  return LLVMBuildICmp(c->b, LLVMIntSLT, LLVMConstVector(lanes, 64),
                       cg_splat(c, n, 64), "");
}

static LLVMValueRef masked_store(cg *c, const qn *k, LLVMValueRef v,
                                 LLVMValueRef ptr, LLVMValueRef mask) {
  LLVMTypeRef ov[2] = {k->vb, c->t_ptr};
  return cg_intrinsic(c, "llvm.masked.store", ov, 2,
                      (LLVMValueRef[]){v, ptr, cg_i32c(c, 1), mask}, 4);
}

/* One step: pixels [p, p + 16) of the run at xo / yo (element offsets),
 * or only the first `left` of them (an i64 value) when left is set. */
static void step(cg *c, const qn *k, LLVMValueRef xb, LLVMValueRef yb,
                 LLVMValueRef xo, LLVMValueRef yo, int64_t xs1,
                 LLVMValueRef p, LLVMValueRef left) {
  LLVMValueRef q[4] = {NULL, NULL, NULL, NULL};
  LLVMValueRef lm = left ? cg_lane_mask(c, left, PIX) : NULL;
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
  unsigned nb = PIX * k->C;
  if (left) {
    masked_store(c, k, b,
                 optr, byte_mask(c, LLVMBuildMul(c->b, left,
                                                 cg_i64c(c, k->C), "")));
  } else if (nb == 16 || nb == 32 || nb == 64) {
    LLVMValueRef idx[64];
    for (unsigned j = 0; j < nb; j++)
      idx[j] = cg_i32c(c, j);
    LLVMValueRef v = nb == 64 ? b
                              : LLVMBuildShuffleVector(
                                    c->b, b, LLVMGetUndef(k->vb),
                                    LLVMConstVector(idx, nb), "");
    cg_store(c, v, optr, 1);
  } else {
    masked_store(c, k, b, optr, byte_mask(c, cg_i64c(c, nb)));
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
      c->b, LLVMBuildSub(c->b, p1, p0, ""), cg_i64c(c, -PIX), "");
  LLVMValueRef pend = LLVMBuildAdd(c->b, p0, full, "");
  cg_loop lp;
  cg_loop_begin(c, &lp, p0, pend, PIX);
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
