/*
 * conv_dot_epi.c - the epilogue of conv_dot.c's dot-product kernels: a
 * tile's accumulators (PIX pixels x OCB vectors of VL channels, bias'
 * included from the start) requantized (requant.c), through the fused
 * residual qadd if any (fuse_add.c), and stored.
 *
 * The general form goes vector by vector: each pixel's vector truncated
 * to the storage type and stored, with masked stores where the tile's
 * channels run out.
 *
 * An 8-bit NHWC result (channels contiguous, 1-byte storage, not raw)
 * goes pixel by pixel instead: the pixel's OCB vectors narrowed together
 * with saturating packs (vpackssdw, then vpackuswb / vpacksswb, then a
 * dword shuffle: irb.c's cg_pack_bytes on zmm with AVX-512BW,
 * cg_pack_bytes8 on the avx-vnni path's ymm) and stored at once. The
 * saturation does the clamps to the storage range, so the requantization
 * leaves them out where that is exact (cg_requant_apply_sat; all of them
 * when cg_requant_bound holds); a fused qadd starts from the conv's value
 * as an integer-valued f32 and is left to the saturation too
 * (cg_qadd_vec_sat), else its clamped result passes the packs as it is. Per
 * 4 zmm vectors that is 4 shuffles and a store where vpmovdb took 2 uops
 * each, and a vmaxps less per vector (the lower clamp, when it is the
 * storage's). One zmm vector a tile keeps vpmovdb (3 shuffles no cheaper
 * than its 2). On ymm without AVX-512 a truncation took 4 shuffles a
 * vector; the packs take 4 for 2, and a partial tile stores each full
 * vector's 8 bytes at once (a masked byte store is a loop over the
 * bytes). Measured, 1-thread CPU (interleaved runs, medians): avx512-vnni
 * MobileNetV2 1713 -> 1527 us (its expanding 1x1 convs 20-25% faster),
 * ResNet-18, whose 3x3 convs spend little in the epilogue, 5529 -> 5319
 * us; avx-vnni (--mcpu alderlake) MobileNetV2 3017 -> 2864 us, ResNet-18
 * 9961 -> 9673 us.
 */
#include "targets/llvm/conv_dot_impl.h"

/* The epilogue: requantize and store each vector of each pixel (with a
 * fused qadd: the requantized value and the other operand's vector go
 * through the qadd, whose result is stored). */
static void epilogue(cg *c, dot_kstate *s, unsigned P, const LLVMValueRef *yo,
                     const LLVMValueRef *bo) {
  const cg_dot_args *a = s->a;
  const dot_plan *p = s->p;
  const cg_conv_add *fa = a->add;
  unsigned VL = p->VL, OCB = p->OCB;
  LLVMTypeRef vt = s->vt;
  const cg_view *y = &a->y;
  bool raw = a->rq->raw;
  LLVMTypeRef yet = cg_elem_type(c, y->elem);
  LLVMTypeRef yvt = raw ? vt : LLVMVectorType(yet, VL);
  unsigned yal = raw ? 4 : (unsigned)quill_type_elem_bytes(cg_storage(y->elem));
  LLVMTypeRef oet = fa ? cg_elem_type(c, fa->other.elem) : NULL;
  LLVMTypeRef ovt = fa ? LLVMVectorType(oet, VL) : NULL;
  for (unsigned v = 0; v < OCB; v++) {
    LLVMValueRef ch = LLVMBuildAdd(c->b, s->chbase, cg_i64c(c, v * VL), "");
    /* lanes left in this vector: valid - v*VL */
    LLVMValueRef left = LLVMBuildSub(c->b, s->valid, cg_i64c(c, v * VL), "");
    LLVMValueRef r[12];
    for (unsigned q = 0; q < P; q++) {
      r[q] = cg_requant_apply(c, a->rq, cg_load(c, vt, s->acc[q * OCB + v], 64),
                              ch, true);
      if (!raw && !fa)
        r[q] = LLVMBuildTrunc(c->b, r[q], yvt, "");
    }
    cg_if fu;
    cg_if_begin(c, &fu,
                LLVMBuildICmp(c->b, LLVMIntSGE, left, cg_i64c(c, VL), ""));
    for (unsigned q = 0; q < P; q++) {
      LLVMValueRef val = r[q];
      if (fa) {
        LLVMValueRef ov = cg_widen_int(
            c, fa->other.elem,
            cg_load(c, ovt,
                    cg_gep(c, oet, s->ob,
                           LLVMBuildAdd(c->b, bo[q], cg_i64c(c, v * VL), "")),
                    1),
            vt);
        val = LLVMBuildTrunc(c->b, cg_conv_add_apply(c, fa, r[q], ov), yvt, "");
      }
      cg_store(c, val,
               cg_gep(c, yet, s->yb,
                      LLVMBuildAdd(c->b, yo[q], cg_i64c(c, v * VL), "")),
               yal);
    }
    cg_if_else(c, &fu);
    cg_if fp;
    cg_if_begin(c, &fp,
                LLVMBuildICmp(c->b, LLVMIntSGT, left, cg_i64c(c, 0), ""));
    LLVMValueRef mask = cg_lane_mask(c, left, VL);
    LLVMTypeRef ov[2] = {yvt, c->t_ptr};
    LLVMTypeRef olt[2] = {ovt, c->t_ptr};
    for (unsigned q = 0; q < P; q++) {
      LLVMValueRef val = r[q];
      if (fa) { /* the other operand's lanes past the channels: not read */
        LLVMValueRef o = cg_intrinsic(
            c, "llvm.masked.load", olt, 2,
            (LLVMValueRef[]){cg_gep(c, oet, s->ob,
                                    LLVMBuildAdd(c->b, bo[q],
                                                 cg_i64c(c, v * VL), "")),
                             cg_i32c(c, 1), mask, LLVMConstNull(ovt)},
            4);
        val = LLVMBuildTrunc(
            c->b, cg_conv_add_apply(c, fa, r[q], cg_widen_int(c, fa->other.elem, o, vt)),
            yvt, "");
      }
      cg_intrinsic(c, "llvm.masked.store", ov, 2,
                   (LLVMValueRef[]){val,
                                    cg_gep(c, yet, s->yb,
                                           LLVMBuildAdd(c->b, yo[q],
                                                        cg_i64c(c, v * VL), "")),
                                    cg_i32c(c, yal), mask},
                   4);
    }
    cg_if_end(c, &fp);
    cg_if_end(c, &fu);
  }
}

/* An 8-bit NHWC result, on zmm vectors with AVX-512BW (two or more a
 * tile: one vector packs no cheaper than vpmovdb) or on ymm vectors on
 * the avx-vnni path: the epilogue narrows a pixel's OCB channel vectors
 * together with saturating packs. */
static bool pack_on(cg *c, const dot_kstate *s) {
  const cg_dot_args *a = s->a;
  const cg_target *t = c->tgt;
  bool zmm = t->avx512bw && s->p->VL == 16 && s->p->OCB > 1;
  bool ymm = t->avx2 && s->p->VL == 8 && t->isa == QUILL_LLVM_ISA_AVX_VNNI;
  return t->x86 && (zmm || ymm) && !a->rq->raw && a->y.strides[1] == 1 &&
         quill_type_elem_bytes(cg_storage(a->y.elem)) == 1;
}

/* The masked store of a pixel's packed bytes on ymm vectors, where
 * without AVX-512 a masked byte store is a loop over the bytes: each
 * full vector's 8 bytes as one store, the partial one masked. */
static void masked_store8(cg *c, const dot_kstate *s, LLVMValueRef bytes,
                          LLVMValueRef yp, const LLVMValueRef *mask) {
  unsigned OCB = s->p->OCB;
  LLVMTypeRef b8 = LLVMVectorType(c->t_i8, 8);
  LLVMValueRef q8 =
      LLVMBuildBitCast(c->b, bytes, LLVMVectorType(c->t_i64, OCB), "");
  for (unsigned v = 0; v < OCB; v++) {
    LLVMValueRef left = LLVMBuildSub(c->b, s->valid, cg_i64c(c, 8 * v), "");
    LLVMValueRef e = LLVMBuildExtractElement(c->b, q8, cg_i32c(c, v), "");
    LLVMValueRef pv = cg_gep8(c, yp, cg_i64c(c, 8 * v));
    cg_if fu, fp;
    cg_if_begin(c, &fu,
                LLVMBuildICmp(c->b, LLVMIntSGE, left, cg_i64c(c, 8), ""));
    cg_store(c, e, pv, 1);
    cg_if_else(c, &fu);
    cg_if_begin(c, &fp,
                LLVMBuildICmp(c->b, LLVMIntSGT, left, cg_i64c(c, 0), ""));
    cg_intrinsic(c, "llvm.masked.store", (LLVMTypeRef[]){b8, c->t_ptr}, 2,
                 (LLVMValueRef[]){LLVMBuildBitCast(c->b, e, b8, ""), pv,
                                  cg_i32c(c, 1), mask[v]},
                 4);
    cg_if_end(c, &fp);
    cg_if_end(c, &fu);
  }
}

/* The epilogue of pack_on: pixel by pixel, its OCB vectors requantized
 * (the clamps that the packs' saturation does left out when
 * cg_requant_apply_sat can; with a fused qadd, the qadd computed from the
 * conv's value as an integer-valued f32 and left to the saturation too,
 * cg_qadd_vec_sat, or its clamped result), narrowed to bytes together
 * (cg_pack_bytes: vpackssdw, vpackuswb/vpacksswb, vpermd; 4 shuffles for
 * 4 vectors where vpmovdb takes 2 each; cg_pack_bytes8 on ymm, where
 * without AVX-512 a truncation takes 4 a vector) and stored at once, with
 * a masked store when the tile's channels run out. */
static void epilogue_packed(cg *c, dot_kstate *s, unsigned P,
                            const LLVMValueRef *yo, const LLVMValueRef *bo) {
  const cg_dot_args *a = s->a;
  const dot_plan *p = s->p;
  const cg_conv_add *fa = a->add;
  unsigned VL = p->VL, OCB = p->OCB, n = OCB * VL;
  LLVMTypeRef vt = s->vt;
  bool sg = quill_type_is_signed(cg_storage(a->y.elem));
  int64_t smin = sg ? -128 : 0, smax = sg ? 127 : 255;
  LLVMTypeRef bt = LLVMVectorType(c->t_i8, n);
  LLVMTypeRef oet = fa ? cg_elem_type(c, fa->other.elem) : NULL;
  LLVMTypeRef ovt = fa ? LLVMVectorType(oet, VL) : NULL;
  LLVMValueRef ch[4], mask[4], idx[64];
  for (unsigned v = 0; v < OCB; v++) {
    ch[v] = LLVMBuildAdd(c->b, s->chbase, cg_i64c(c, v * VL), "");
    mask[v] = cg_lane_mask(
        c, LLVMBuildSub(c->b, s->valid, cg_i64c(c, v * VL), ""), VL);
  }
  for (unsigned l = 0; l < n; l++)
    idx[l] = cg_i64c(c, l);
  LLVMValueRef bmask = LLVMBuildICmp(c->b, LLVMIntSLT,
                                     LLVMConstVector(idx, n),
                                     cg_splat(c, s->valid, n), "");
  for (unsigned l = 0; l < n; l++)
    idx[l] = cg_i32c(c, (int32_t)l);
  LLVMValueRef narrow = LLVMConstVector(idx, n);
  LLVMValueRef full = LLVMBuildICmp(c->b, LLVMIntSGE, s->valid,
                                    cg_i64c(c, n), "");
  for (unsigned q = 0; q < P; q++) {
    LLVMValueRef r[4], d[4];
    for (unsigned v = 0; v < OCB; v++) {
      LLVMValueRef acc = cg_load(c, vt, s->acc[q * OCB + v], 64);
      r[v] = fa ? NULL
                : cg_requant_apply_sat(c, a->rq, acc, ch[v], true, smin, smax);
      if (!r[v])
        r[v] = cg_requant_apply(c, a->rq, acc, ch[v], true);
      /* with a fused qadd: the conv's value as an integer-valued f32 */
      d[v] = fa ? cg_requant_apply_f(c, a->rq, acc, ch[v], true) : NULL;
    }
    LLVMValueRef yp = cg_gep(c, c->t_i8, s->yb, yo[q]);
    cg_if fu;
    cg_if_begin(c, &fu, full);
    for (unsigned m = 0; m < 2; m++) { /* 0: every channel, 1: masked */
      LLVMValueRef w[4];
      for (unsigned v = 0; v < OCB; v++) {
        w[v] = r[v];
        if (!fa)
          continue;
        LLVMValueRef op = cg_gep(c, oet, s->ob,
                                 LLVMBuildAdd(c->b, bo[q],
                                              cg_i64c(c, v * VL), ""));
        LLVMValueRef o =
            m == 0 ? cg_load(c, ovt, op, 1)
                   : cg_intrinsic(c, "llvm.masked.load",
                                  (LLVMTypeRef[]){ovt, c->t_ptr}, 2,
                                  (LLVMValueRef[]){op, cg_i32c(c, 1), mask[v],
                                                   LLVMConstNull(ovt)},
                                  4);
        o = cg_widen_int(c, fa->other.elem, o, vt);
        w[v] = d[v] ? cg_qadd_vec_sat(c, fa->add, fa->recip, fa->inv_y,
                                      fa->conv_operand, a->rq->zp, d[v], o,
                                      smin, smax)
                    : NULL;
        if (!w[v])
          w[v] = cg_conv_add_apply(c, fa, r[v], o);
      }
      LLVMValueRef bytes = VL == 8 ? cg_pack_bytes8(c, w, OCB, sg)
                                   : cg_pack_bytes(c, w, OCB, sg);
      if (VL == 16 && n < 64)
        bytes = LLVMBuildShuffleVector(c->b, bytes, bytes, narrow, "");
      if (m == 0) {
        cg_store(c, bytes, yp, 1);
        cg_if_else(c, &fu);
      } else if (VL == 16) {
        cg_intrinsic(c, "llvm.masked.store", (LLVMTypeRef[]){bt, c->t_ptr}, 2,
                     (LLVMValueRef[]){bytes, yp, cg_i32c(c, 1), bmask}, 4);
      } else {
        masked_store8(c, s, bytes, yp, mask);
      }
    }
    cg_if_end(c, &fu);
  }
}

void cg_dot_epilogue(cg *c, dot_kstate *s, unsigned P, const LLVMValueRef *yo,
                     const LLVMValueRef *bo) {
  if (pack_on(c, s))
    epilogue_packed(c, s, P, yo, bo);
  else
    epilogue(c, s, P, yo, bo);
}
