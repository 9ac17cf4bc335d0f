/*
 * sgemm_order.h - private to the reference target and the LLVM target:
 * the summation order of the reference's f32 matmul and gemm kernels
 * (sgemm.c), which the LLVM target's float matmul/gemm reproduce bit for
 * bit (targets/llvm/lower_fmatmul.c). Change both with these constants.
 *
 * Each y(i, j) is the sum of its K blocks of QUILL_REF_SGEMM_KC terms in
 * block order, the first block stored as is. A block is summed in k order
 * from 0, except for a gemm with trans_b, K > 1 and fewer than
 * QUILL_REF_SGEMM_SMALL_M rows (a batch-1 fully connected layer, an RNN
 * step): there lane l (< QUILL_REF_SGEMM_LANES) sums the block's terms
 * k = l mod 8 in k order, and the block is
 * ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)).
 * Multiplies and adds are separate f32 operations (no FMA).
 */
#ifndef QUILL_TARGETS_REFERENCE_SGEMM_ORDER_H
#define QUILL_TARGETS_REFERENCE_SGEMM_ORDER_H

enum {
  QUILL_REF_SGEMM_KC = 256,    /* K block length */
  QUILL_REF_SGEMM_SMALL_M = 4, /* fewer rows: the unpacked small-M path */
  QUILL_REF_SGEMM_LANES = 8    /* partial sums of its dot products */
};

#endif
