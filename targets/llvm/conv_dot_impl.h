/*
 * conv_dot_impl.h - the plan of a dot-product convolution kernel (its
 * instruction kind, tile shape, panel and task split), shared by
 * conv_dot_plan.c, which chooses it and packs the weights, and
 * conv_dot.c, which emits the kernel. See conv_dot.c for the scheme.
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
  bool corr;                /* UBSW with correction steps (conv_ubsw.c) */
  cg_ubsw_lists cl;
} dot_plan;

/* Bytes of one packed weight vector (VL lanes of kg elements). */
static inline int64_t cg_dot_wvec_bytes(const dot_plan *p) {
  return (int64_t)p->VL * p->kg * (p->u8panel ? 1 : 2);
}

/* Choose the kind and the tile shape (p's panel, chunk and K-blocking
 * fields are left to cg_dot_emit); false if no dot kernel fits. */
bool cg_dot_plan(cg *c, const cg_dot_args *a, dot_plan *p);
/* The centered weights packed in the order p's tiles consume them
 * ([G][tiles][KH][KWk][C4][TW][kg], u8 or i16 elements), a constant
 * global; NULL with c->status set when out of memory. */
LLVMValueRef cg_dot_pack_weights(cg *c, const cg_dot_args *a,
                                 const dot_plan *p);

#endif /* QUILL_TARGETS_LLVM_CONV_DOT_IMPL_H */
