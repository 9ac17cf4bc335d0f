/*
 * amx_epi.c - the AMX conv kernel's epilogue (conv_amx.c): a block's C
 * tiles, parked in a stack buffer, requantized and stored pixel by pixel.
 *
 * The block's virtual pixels are walked output row by output row: with
 * strides 1 the tiles read the panel as one long row of width Wp, so a
 * tile's pixels may span output rows and include the Wp - OW columns
 * between them, which are not stored; pixels before `from` belong to the
 * block before. Each output row's stored range is computed once, and the
 * pixel loop inside it only steps pointers.
 *
 * A pixel's NB channel vectors (16 channels each) are done together. An
 * 8-bit NHWC result is narrowed by saturating packs (cg_pack_bytes) and
 * stored at once; the requantization then leaves out the clamps the
 * saturation does (cg_requant_apply_sat). Other results (i32, 16-bit,
 * NCHW) store each vector, masked for a partial channel block. The bias is
 * not added here: the accumulators started at it (conv_amx.c). A fused
 * residual qadd (fuse_add.c) reads the other operand's lanes of the
 * pixel, masked past the channels.
 */
#include <string.h>

#include "targets/llvm/conv_amx.h"

/* Element offset of (n, ch, oh, ow) in v (an NCHW view). */
static LLVMValueRef pixel_offset(cg *c, const amx_block *k, const cg_view *v,
                                 LLVMValueRef oh, LLVMValueRef ow,
                                 LLVMValueRef ch) {
  return LLVMBuildAdd(
      c->b,
      LLVMBuildAdd(c->b,
                   LLVMBuildMul(c->b, k->n, cg_i64c(c, v->strides[0]), ""),
                   LLVMBuildMul(c->b, oh, cg_i64c(c, v->strides[2]), ""), ""),
      LLVMBuildAdd(c->b, LLVMBuildMul(c->b, ow, cg_i64c(c, v->strides[3]), ""),
                   LLVMBuildMul(c->b, ch, cg_i64c(c, v->strides[1]), ""), ""),
      "");
}

/* The packed store of an 8-bit NHWC result: a pixel's NB channel vectors
 * narrowed together (cg_pack_bytes) and stored at once. */
typedef struct amx_pack {
  bool on, is_signed;
  int64_t smin, smax;
  LLVMValueRef bmask; /* <16 NB x i1>: the block's valid channels */
  LLVMValueRef full;  /* all 16 NB are */
} amx_pack;

static void pack_init(cg *c, const amx_block *k, amx_pack *pk) {
  const cg_dot_args *a = k->a;
  memset(pk, 0, sizeof *pk);
  if (a->rq->raw || a->y.strides[1] != 1 ||
      quill_type_elem_bytes(cg_storage(a->y.elem)) != 1)
    return;
  pk->on = true;
  pk->is_signed = quill_type_is_signed(cg_storage(a->y.elem));
  pk->smin = pk->is_signed ? -128 : 0;
  pk->smax = pk->is_signed ? 127 : 255;
  unsigned n = 16 * k->p->NB;
  LLVMValueRef lanes[32];
  for (unsigned l = 0; l < n; l++)
    lanes[l] = cg_i64c(c, l);
  pk->bmask = LLVMBuildICmp(c->b, LLVMIntSLT, LLVMConstVector(lanes, n),
                            cg_splat(c, k->valid, n), "");
  pk->full = LLVMBuildICmp(c->b, LLVMIntSGE, k->valid, cg_i64c(c, n), "");
}

/* One pixel, cbuf row i: its NB channel vectors requantized (the clamps
 * that saturation does left out when cg_requant_apply_sat can), the
 * residual qadd applied, packed and stored with one masked store. */
/* Channel vector b of the parked tiles' row i. */
static LLVMValueRef acc_load(cg *c, LLVMValueRef cb, LLVMValueRef i,
                             unsigned b) {
  return cg_load(
      c, LLVMVectorType(c->t_i32, 16),
      cg_gep8(c, cb,
              LLVMBuildAdd(c->b, LLVMBuildMul(c->b, i, cg_i64c(c, 64), ""),
                           cg_i64c(c, b * 1024), "")),
      64);
}

static void pixel_vecs(cg *c, const amx_block *k, const amx_pack *pk,
                       LLVMValueRef cb, LLVMValueRef i, LLVMValueRef oo,
                       const LLVMValueRef *ch, const LLVMValueRef *mask,
                       bool full, LLVMValueRef *v) {
  const cg_dot_args *a = k->a;
  const cg_conv_add *fa = a->add;
  unsigned NB = k->p->NB;
  LLVMTypeRef vt = LLVMVectorType(c->t_i32, 16);
  for (unsigned b = 0; b < NB; b++) {
    LLVMValueRef acc = acc_load(c, cb, i, b);
    LLVMValueRef r = NULL;
    if (!fa) {
      r = cg_requant_apply_sat(c, a->rq, acc, ch[b], true, pk->smin, pk->smax);
      if (!r)
        r = cg_requant_apply(c, a->rq, acc, ch[b], true);
    } else { /* the residual qadd (fuse_add.c); lanes past the channels
                not read */
      LLVMTypeRef ovt = LLVMVectorType(cg_elem_type(c, fa->other.elem), 16);
      LLVMTypeRef olt[2] = {ovt, c->t_ptr};
      LLVMValueRef op = cg_gep(c, cg_elem_type(c, fa->other.elem), k->ob,
                               LLVMBuildAdd(c->b, oo, cg_i64c(c, 16 * b), ""));
      LLVMValueRef o =
          full ? cg_load(c, ovt, op, 1)
               : cg_intrinsic(c, "llvm.masked.load", olt, 2,
                              (LLVMValueRef[]){op, cg_i32c(c, 1), mask[b],
                                               LLVMConstNull(ovt)},
                              4);
      o = cg_widen_int(c, fa->other.elem, o, vt);
      LLVMValueRef d = cg_requant_apply_f(c, a->rq, acc, ch[b], true);
      if (d)
        r = cg_qadd_vec_sat(c, fa->add, fa->recip, fa->inv_y,
                            fa->conv_operand, a->rq->zp, d, o, pk->smin,
                            pk->smax);
      if (!r)
        r = cg_conv_add_apply(c, fa, cg_requant_apply(c, a->rq, acc, ch[b], true),
                              o);
    }
    v[b] = r;
  }
}

static void pack_pixel(cg *c, const amx_block *k, const amx_pack *pk,
                       LLVMValueRef cb, LLVMValueRef i, LLVMValueRef yo,
                       LLVMValueRef oo, const LLVMValueRef *ch,
                       const LLVMValueRef *mask, bool full) {
  unsigned NB = k->p->NB;
  LLVMValueRef v[2];
  pixel_vecs(c, k, pk, cb, i, oo, ch, mask, full, v);
  LLVMValueRef bytes = cg_pack_bytes(c, v, NB, pk->is_signed);
  unsigned n = 16 * NB;
  LLVMTypeRef bt = LLVMVectorType(c->t_i8, n);
  if (n < 64) {
    LLVMValueRef idx[32];
    for (unsigned l = 0; l < n; l++)
      idx[l] = cg_i32c(c, (int32_t)l);
    bytes = LLVMBuildShuffleVector(c->b, bytes, bytes, LLVMConstVector(idx, n),
                                   "");
  }
  LLVMValueRef yp = cg_gep(c, c->t_i8, k->yb, yo);
  if (full) {
    cg_store(c, bytes, yp, 1);
    return;
  }
  LLVMTypeRef ov[2] = {bt, c->t_ptr};
  cg_intrinsic(c, "llvm.masked.store", ov, 2,
               (LLVMValueRef[]){bytes, yp, cg_i32c(c, 1), pk->bmask}, 4);
}

/* Two pixels of 32 channels (NB 2, every channel valid), cbuf rows i
 * and i + 1: their four vectors narrowed by one cg_pack_bytes, each
 * half stored (4 shuffles for 64 outputs, against 3 for 32 alone). */
static void pack_pair(cg *c, const amx_block *k, const amx_pack *pk,
                      LLVMValueRef cb, LLVMValueRef i, LLVMValueRef yo0,
                      LLVMValueRef yo1, LLVMValueRef oo0, LLVMValueRef oo1,
                      const LLVMValueRef *ch, const LLVMValueRef *mask) {
  LLVMValueRef v[4];
  pixel_vecs(c, k, pk, cb, i, oo0, ch, mask, true, v);
  pixel_vecs(c, k, pk, cb, LLVMBuildAdd(c->b, i, cg_i64c(c, 1), ""), oo1, ch,
             mask, true, v + 2);
  LLVMValueRef bytes = cg_pack_bytes(c, v, 4, pk->is_signed);
  for (unsigned h = 0; h < 2; h++) {
    LLVMValueRef idx[32];
    for (unsigned l = 0; l < 32; l++)
      idx[l] = cg_i32c(c, (int32_t)(32 * h + l));
    cg_store(c,
             LLVMBuildShuffleVector(c->b, bytes, bytes,
                                    LLVMConstVector(idx, 32), ""),
             cg_gep(c, c->t_i8, k->yb, h ? yo1 : yo0), 1);
  }
}

/* One pixel, cbuf row i, vector by vector (results the packs cannot
 * take). */
static void plain_pixel(cg *c, const amx_block *k, LLVMValueRef cb,
                        LLVMValueRef i, LLVMValueRef yo, LLVMValueRef oo,
                        const LLVMValueRef *ch, const LLVMValueRef *left,
                        const LLVMValueRef *mask) {
  const cg_dot_args *a = k->a;
  const cg_view *y = &a->y;
  unsigned NB = k->p->NB;
  LLVMTypeRef vt = LLVMVectorType(c->t_i32, 16);
  const cg_conv_add *fa = a->add;
  bool raw = a->rq->raw;
  LLVMTypeRef oet = fa ? cg_elem_type(c, fa->other.elem) : NULL;
  LLVMTypeRef ovt = fa ? LLVMVectorType(oet, 16) : NULL;
  LLVMTypeRef yet = cg_elem_type(c, y->elem);
  LLVMTypeRef yvt = raw ? vt : LLVMVectorType(yet, 16);
  unsigned yal = raw ? 4 : (unsigned)quill_type_elem_bytes(cg_storage(y->elem));
  for (unsigned b = 0; b < NB; b++) {
    LLVMValueRef acc = acc_load(c, cb, i, b);
    LLVMValueRef r = cg_requant_apply(
        c, a->rq, acc, ch[b], true);
    if (!raw && !fa)
      r = LLVMBuildTrunc(c->b, r, yvt, "");
    LLVMValueRef yp = cg_gep(
        c, yet, k->yb, LLVMBuildAdd(c->b, yo, cg_i64c(c, 16 * b), ""));
    LLVMValueRef op =
        fa ? cg_gep(c, oet, k->ob,
                    LLVMBuildAdd(c->b, oo, cg_i64c(c, 16 * b), ""))
           : NULL;
    cg_if full, any;
    cg_if_begin(c, &full, LLVMBuildICmp(c->b, LLVMIntSGE, left[b],
                                        cg_i64c(c, 16), ""));
    LLVMValueRef val = r;
    if (fa) /* the residual qadd (fuse_add.c) */
      val = LLVMBuildTrunc(
          c->b,
          cg_conv_add_apply(
              c, fa, r,
              cg_widen_int(c, fa->other.elem, cg_load(c, ovt, op, 1), vt)),
          yvt, "");
    cg_store(c, val, yp, yal);
    cg_if_else(c, &full);
    cg_if_begin(c, &any, LLVMBuildICmp(c->b, LLVMIntSGT, left[b],
                                       cg_i64c(c, 0), ""));
    val = r;
    if (fa) { /* the other operand's lanes past the channels: not read */
      LLVMTypeRef olt[2] = {ovt, c->t_ptr};
      LLVMValueRef o = cg_intrinsic(
          c, "llvm.masked.load", olt, 2,
          (LLVMValueRef[]){op, cg_i32c(c, 1), mask[b], LLVMConstNull(ovt)},
          4);
      val = LLVMBuildTrunc(
          c->b,
          cg_conv_add_apply(c, fa, r, cg_widen_int(c, fa->other.elem, o, vt)),
          yvt, "");
    }
    LLVMTypeRef ov[2] = {yvt, c->t_ptr};
    cg_intrinsic(c, "llvm.masked.store", ov, 2,
                 (LLVMValueRef[]){val, yp, cg_i32c(c, yal), mask[b]}, 4);
    cg_if_end(c, &any);
    cg_if_end(c, &full);
  }
}

void cg_amx_epilogue(cg *c, const amx_block *k, LLVMValueRef vr,
                     LLVMValueRef f0, LLVMValueRef from, unsigned NA) {
  const cg_dot_args *a = k->a;
  const amx_plan *p = k->p;
  const cg_conv_geom *g = &a->g;
  const cg_conv_add *fa = a->add;
  unsigned NB = p->NB;
  LLVMValueRef ch[2], left[2], mask[2];
  for (unsigned b = 0; b < NB; b++) {
    ch[b] = LLVMBuildAdd(c->b, k->chbase, cg_i64c(c, 16 * b), "");
    left[b] = LLVMBuildSub(c->b, k->valid, cg_i64c(c, 16 * b), "");
    mask[b] = cg_lane_mask(c, left[b], 16);
  }
  amx_pack pk;
  pack_init(c, k, &pk);
  LLVMValueRef Wp = cg_i64c(c, p->pn.Wp);
  for (unsigned ai = 0; ai < NA; ai++) {
    /* the tile's virtual pixels [v0, v1); flat: virtual pixel v is output
     * row v / Wp, column v % Wp; else row vr, column v */
    LLVMValueRef v0 =
        p->rows2 ? f0 : LLVMBuildAdd(c->b, f0, cg_i64c(c, ai * p->TR), "");
    /* rows2: tile ai is row vr + ai, `from` its first row's */
    LLVMValueRef fr = p->rows2 && ai ? cg_i64c(c, 0) : from;
    LLVMValueRef row = p->rows2 ? LLVMBuildAdd(c->b, vr, cg_i64c(c, ai), "")
                                : vr;
    LLVMValueRef v1 =
        LLVMBuildAdd(c->b, v0, cg_i64c(c, tile_rows(p, ai)), "");
    LLVMValueRef r0 = cg_i64c(c, 0), r1 = cg_i64c(c, 1);
    if (p->flat) {
      r0 = LLVMBuildUDiv(c->b, v0, Wp, "");
      r1 = LLVMBuildAdd(
          c->b,
          LLVMBuildUDiv(c->b, LLVMBuildSub(c->b, v1, cg_i64c(c, 1), ""), Wp,
                        ""),
          cg_i64c(c, 1), "");
    }
    LLVMValueRef cb = cg_gep8(c, k->cbuf, cg_i64c(c, ai * NB * 1024));
    cg_loop lr;
    cg_loop_begin(c, &lr, r0, r1, 1);
    LLVMValueRef rowbase =
        p->flat ? LLVMBuildMul(c->b, lr.i, Wp, "") : cg_i64c(c, 0);
    LLVMValueRef oh = p->flat ? lr.i : row;
    LLVMValueRef lo = cg_max_s(c, cg_max_s(c, v0, rowbase), fr);
    LLVMValueRef hi = cg_min_s(
        c, v1, LLVMBuildAdd(c->b, rowbase, cg_i64c(c, g->OW), ""));
    cg_if full;
    if (pk.on && NB == 2) { /* pairs of pixels, where the block is full */
      cg_if_begin(c, &full, pk.full);
      LLVMValueRef n2 = LLVMBuildAnd(
          c->b, LLVMBuildSub(c->b, cg_max_s(c, hi, lo), lo, ""),
          cg_i64c(c, -2), "");
      cg_loop lq;
      cg_loop_begin(c, &lq, cg_i64c(c, 0), n2, 2);
      LLVMValueRef vq = LLVMBuildAdd(c->b, lo, lq.i, "");
      LLVMValueRef ow = LLVMBuildSub(c->b, vq, rowbase, "");
      LLVMValueRef ow1 = LLVMBuildAdd(c->b, ow, cg_i64c(c, 1), "");
      pack_pair(c, k, &pk, cb, LLVMBuildSub(c->b, vq, v0, ""),
                pixel_offset(c, k, &a->y, oh, ow, k->chbase),
                pixel_offset(c, k, &a->y, oh, ow1, k->chbase),
                fa ? pixel_offset(c, k, &fa->other, oh, ow, k->chbase) : NULL,
                fa ? pixel_offset(c, k, &fa->other, oh, ow1, k->chbase)
                   : NULL,
                ch, mask);
      cg_loop_end_nounroll(c, &lq);
      lo = LLVMBuildAdd(c->b, lo, n2, ""); /* the odd pixel, if any */
    }
    cg_loop lp;
    cg_loop_begin(c, &lp, lo, hi, 1);
    LLVMValueRef ow = LLVMBuildSub(c->b, lp.i, rowbase, "");
    LLVMValueRef i = LLVMBuildSub(c->b, lp.i, v0, "");
    LLVMValueRef yo = pixel_offset(c, k, &a->y, oh, ow, k->chbase);
    LLVMValueRef oo =
        fa ? pixel_offset(c, k, &fa->other, oh, ow, k->chbase) : NULL;
    if (pk.on && NB == 2) {
      pack_pixel(c, k, &pk, cb, i, yo, oo, ch, mask, true);
    } else if (pk.on) { /* the block's channels all valid, or partial */
      cg_if fb;
      cg_if_begin(c, &fb, pk.full);
      pack_pixel(c, k, &pk, cb, i, yo, oo, ch, mask, true);
      cg_if_else(c, &fb);
      pack_pixel(c, k, &pk, cb, i, yo, oo, ch, mask, false);
      cg_if_end(c, &fb);
    } else {
      plain_pixel(c, k, cb, i, yo, oo, ch, left, mask);
    }
    cg_loop_end_nounroll(c, &lp);
    if (pk.on && NB == 2) { /* a partial block: pixel by pixel, masked */
      cg_if_else(c, &full);
      cg_loop lm;
      cg_loop_begin(c, &lm, cg_max_s(c, cg_max_s(c, v0, rowbase), fr), hi,
                    1);
      LLVMValueRef owm = LLVMBuildSub(c->b, lm.i, rowbase, "");
      pack_pixel(c, k, &pk, cb, LLVMBuildSub(c->b, lm.i, v0, ""),
                 pixel_offset(c, k, &a->y, oh, owm, k->chbase),
                 fa ? pixel_offset(c, k, &fa->other, oh, owm, k->chbase)
                    : NULL,
                 ch, mask, false);
      cg_loop_end_nounroll(c, &lm);
      cg_if_end(c, &full);
    }
    cg_loop_end_nounroll(c, &lr);
  }
}
