/*
 * conv_amx.h - private to the AMX conv kernel (conv_amx.c) and its
 * epilogue (amx_epi.c): the plan of a conv on AMX tiles and what one
 * block of tiles is emitted with.
 */
#ifndef QUILL_TARGETS_LLVM_CONV_AMX_H
#define QUILL_TARGETS_LLVM_CONV_AMX_H

#include "targets/llvm/conv.h"

typedef struct amx_plan {
  int64_t Kc, nkc, nsteps; /* bytes per K chunk, chunks per tap, K steps */
  bool rowwin;             /* window rows (KW * Cg bytes) in K chunks */
  int64_t R;               /* kernel rows stacked in a K chunk (1, stem 3) */
  int64_t KHk, KWk;        /* row groups and taps the steps go over */
  int64_t TR;              /* rows of the A and C tiles (pixels) */
  unsigned NA, NB;         /* A and B tiles per block */
  bool split;              /* a strided conv's row of TR + 1 .. 2 TR - 1
                              pixels: one block of 2 A tiles, the second
                              shorter (plan_pixels) */
  int64_t TWB, ntiles;     /* channels per block, blocks per group */
  bool flat;               /* stride 1: one virtual row of width Wp */
  int64_t nvrows, vcount;  /* virtual rows, pixels per virtual row */
  bool rows2;              /* a strided conv's rows of at most TR pixels:
                              a block's 2 A tiles are 2 virtual rows */
  int64_t nrb;             /* blocks of virtual rows (rows2: pairs) */
  int64_t PB, nblk;        /* pixels per block, blocks per virtual row */
  int64_t chunk, nchunks;  /* pixel blocks per task */
  int64_t tile_bytes;      /* a channel tile's packed weights */
  bool outer;              /* tasks pixel chunk outer (amx_chunk_outer) */
  int64_t pfl;             /* lines of the next tile's weights each K step
                              prefetches (0: none; emit_compute) */
  cg_panel pn;             /* the panel the tiles read (stacked: below) */
  cg_panel src;            /* stacked: the usual panel it is made from */
  int fromx;               /* stacked straight from x (no src stage):
                              X_PLANAR rows of a channel, X_NHWC pixels */
} amx_plan;

/* Rows of pixel tile ai of a block (split: the second has the rest). */
static inline int64_t tile_rows(const amx_plan *p, unsigned ai) {
  return p->split && ai == 1 ? p->vcount - p->TR : p->TR;
}

/* What a block's code is emitted with: the operands' base pointers, the
 * task's batch index, channel base and valid channels, the parked C tiles
 * (cbuf: NA x NB tiles of 16 x 16 i32). */
typedef struct amx_block {
  const cg_dot_args *a;
  const amx_plan *p;
  LLVMValueRef panel, wtile, offs, biasp, yb, ob, cbuf;
  LLVMValueRef n, chbase, valid;
  LLVMValueRef pf; /* the block's share of the next tile's weights */
} amx_block;

/* Store the block whose first virtual pixel is f0 in virtual row vr from
 * its C tiles parked in k->cbuf (NA A tiles); pixels before `from` belong
 * to the block before. */
void cg_amx_epilogue(cg *c, const amx_block *k, LLVMValueRef vr,
                     LLVMValueRef f0, LLVMValueRef from, unsigned NA);

#endif
