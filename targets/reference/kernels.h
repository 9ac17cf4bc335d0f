/*
 * kernels.h - private to targets/reference: the kernel functions that
 * ref.c assembles into the opcode-indexed table quill_ref_kernels.
 *
 * One kernel may serve several opcodes (all unary math ops share
 * quill_ref_kernel_unary, which looks the op's scalar function up in its
 * own opcode-indexed table in kernels_eltwise.c).
 */
#ifndef QUILL_TARGETS_REFERENCE_KERNELS_H
#define QUILL_TARGETS_REFERENCE_KERNELS_H

#include "targets/reference/ref.h"

#define QUILL_REF_KERNEL(name)                                                \
  quill_status name(quill_context *ctx, const quill_op *op,                   \
                    const quill_tensor *in, quill_tensor *out)

/* kernels_eltwise.c */
QUILL_REF_KERNEL(quill_ref_kernel_unary);   /* relu ... ceil */
QUILL_REF_KERNEL(quill_ref_kernel_clip);
QUILL_REF_KERNEL(quill_ref_kernel_cast);
QUILL_REF_KERNEL(quill_ref_kernel_binary);  /* add sub mul div pow max min prelu */
QUILL_REF_KERNEL(quill_ref_kernel_compare); /* equal less greater */
QUILL_REF_KERNEL(quill_ref_kernel_where);
const char *quill_ref_supports_unary(const quill_op *op);
const char *quill_ref_supports_scalar(const quill_op *op);

/* kernels_shape.c */
QUILL_REF_KERNEL(quill_ref_kernel_constant);
QUILL_REF_KERNEL(quill_ref_kernel_copy); /* identity reshape flatten (un)squeeze */
QUILL_REF_KERNEL(quill_ref_kernel_transpose);
QUILL_REF_KERNEL(quill_ref_kernel_concat);
QUILL_REF_KERNEL(quill_ref_kernel_split);
QUILL_REF_KERNEL(quill_ref_kernel_slice);
QUILL_REF_KERNEL(quill_ref_kernel_pad);
QUILL_REF_KERNEL(quill_ref_kernel_gather);
const char *quill_ref_supports_gather(const quill_op *op);

#endif /* QUILL_TARGETS_REFERENCE_KERNELS_H */
