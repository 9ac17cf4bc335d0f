/*
 * conv_dot_impl.h - the plan of a dot-product convolution kernel (its
 * instruction kind, tile shape, panel and task split) and the state of
 * its emission, shared by
 * conv_dot_plan.c, which chooses it and packs the weights, conv_dot.c,
 * which emits the kernel, and conv_dot_epi.c, its epilogue. See
 * conv_dot.c for the scheme.
 */
#ifndef QUILL_TARGETS_LLVM_CONV_DOT_IMPL_H
#define QUILL_TARGETS_LLVM_CONV_DOT_IMPL_H

#include "targets/llvm/conv.h"

typedef enum dot_kind {
  DOT_VNNI,
  DOT_UBSW,
  DOT_WD,
  DOT_MUL,
  DOT_SDOT,
  DOT_SMMLA
} dot_kind;

typedef struct dot_plan {
  dot_kind kind;
  unsigned VL, kg, nreg, OCB, PIX;
  int64_t TW, ntiles, Cgp, C4;
  bool rowwin;              /* window rows as one run of KW*Cg elements */
  int64_t KWk;              /* taps the kernel loops over along a row */
  bool u8panel;             /* 8-bit panel (u8 domain, s8 if s8panel) */
  bool s8panel;
  cg_panel pn;
  int64_t npix;             /* OH * OW */
  int64_t chunk, nchunks;   /* pixels per task (a multiple of PIX) */
  bool chunk_outer;         /* task order: see cg_conv_task */
  bool kblock;              /* taps outermost, partial sums in accbuf */
  int64_t nbig;             /* tiles of PIX pixels, then PIX - 1 (0: the
                               remainder tile; conv_dot_plan.c) */
  bool corr;                /* UBSW with correction steps (conv_ubsw.c) */
  cg_ubsw_lists cl;
} dot_plan;

/* The state of the kernel being emitted: its arguments and plan, the
 * task's pointers and channel tile, the accumulators (allocas, PIX * OCB
 * of them, pixel-major). */
typedef struct dot_kstate {
  const cg_dot_args *a;
  const dot_plan *p;
  LLVMValueRef panel, wtile, biasp, yb;
  LLVMValueRef ob; /* a fused qadd's other operand (fuse_add.c) */
  LLVMValueRef pf_base, pf_line0; /* K blocking: the next tap's weights */
  LLVMValueRef accbuf, lo; /* K blocking's partial sums; the first pixel */
  LLVMValueRef n, chbase, valid; /* valid: channels left in the tile */
  LLVMValueRef clist; /* UBSW corrections: the tile's first list */
  LLVMValueRef acc[12 * 4];
  LLVMTypeRef vt; /* <VL x i32> */
} dot_kstate;

/* Bytes of one packed weight vector (VL lanes of kg elements). */
static inline int64_t cg_dot_wvec_bytes(const dot_plan *p) {
  return (int64_t)p->VL * p->kg * (p->u8panel ? 1 : 2);
}

/* Choose the kind and the tile shape (p's panel, chunk and K-blocking
 * fields are left to cg_dot_emit); false if no dot kernel fits. */
bool cg_dot_plan(cg *c, const cg_dot_args *a, dot_plan *p);
/* Mixed tiles for a K-blocked plan (p->npix set): p->nbig. */
void cg_dot_mixed_tiles(const cg_dot_args *a, dot_plan *p);
/* The centered weights packed in the order p's tiles consume them
 * ([G][tiles][KH][KWk][C4][TW][kg], u8 or i16 elements), a constant
 * global; NULL with c->status set when out of memory. */
LLVMValueRef cg_dot_pack_weights(cg *c, const cg_dot_args *a,
                                 const dot_plan *p);
/* The epilogue of a tile of P pixels, their accumulators in s->acc:
 * requantized, through the fused qadd if any, stored at the output element
 * offsets yo (the qadd's other operand at bo). */
void cg_dot_epilogue(cg *c, dot_kstate *s, unsigned P, const LLVMValueRef *yo,
                     const LLVMValueRef *bo);

#endif /* QUILL_TARGETS_LLVM_CONV_DOT_IMPL_H */
