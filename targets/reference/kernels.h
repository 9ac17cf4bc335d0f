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

/* ---- helpers shared by the nn kernels (ref.c) ------------------------------- */

/* A float view of a tensor's elements. f32 tensors are used in place; any
 * other element type is converted into (or, for outputs, staged in) a
 * scratch buffer allocated through the context. */
typedef struct quill_ref_fbuf {
  float *p;     /* n floats */
  size_t n;
  bool scratch; /* p was allocated here (freed by quill_ref_fbuf_release) */
} quill_ref_fbuf;

/* Read view of t (QUILL_ERR_NOMEM on allocation failure). */
quill_status quill_ref_fbuf_read(quill_context *ctx, const quill_tensor *t,
                                 quill_ref_fbuf *b);
/* Write view of t: in place for f32, else a zeroed scratch buffer. */
quill_status quill_ref_fbuf_write(quill_context *ctx, quill_tensor *t,
                                  quill_ref_fbuf *b);
/* Copy a write view back into t (if staged; NULL t: discard) and free any
 * scratch buffer. Safe on a zeroed fbuf. */
void quill_ref_fbuf_release(quill_context *ctx, quill_tensor *t,
                            quill_ref_fbuf *b);

/* A numeric attribute given as a float or an int (dflt if absent). */
double quill_ref_attr_num(const quill_op *op, const char *name, double dflt);
/* A string attribute (dflt if absent or not a string). */
const char *quill_ref_attr_str(const quill_op *op, const char *name,
                               const char *dflt);
/* Emit "reference: 'op': <what>" at the op; returns QUILL_ERR_INVALID. */
quill_status quill_ref_op_error(quill_context *ctx, const quill_op *op,
                                const char *what);
/* NULL if no operand or result has a quantized element type, else
 * "quantized element types"; for float-only kernels. */
const char *quill_ref_supports_float(const quill_op *op);

/* ---- kernels_gemm.c ------------------------------------------------------- */

/* C[M,N] (row stride ldc) = A[M,K] * B[K,N] (+ C if accumulate), all f32.
 * A and B are addressed through row and column strides, so transposed
 * operands need no copy: A(i,k) = A[i*rsa + k*csa]. Cache-blocked, with A
 * and B packed into contiguous panels (allocated through ctx: NOMEM). */
quill_status quill_ref_sgemm(quill_context *ctx, size_t M, size_t N, size_t K,
                             const float *A, ptrdiff_t rsa, ptrdiff_t csa,
                             const float *B, ptrdiff_t rsb, ptrdiff_t csb,
                             float *C, size_t ldc, bool accumulate);
QUILL_REF_KERNEL(quill_ref_kernel_matmul);
QUILL_REF_KERNEL(quill_ref_kernel_gemm);
const char *quill_ref_supports_linalg(const quill_op *op);

/* kernels_conv.c */
QUILL_REF_KERNEL(quill_ref_kernel_conv2d);
QUILL_REF_KERNEL(quill_ref_kernel_conv_transpose2d);

/* kernels_pool.c */
QUILL_REF_KERNEL(quill_ref_kernel_pool);        /* maxpool avgpool */
QUILL_REF_KERNEL(quill_ref_kernel_global_pool); /* global_{avg,max}pool */
const char *quill_ref_supports_pool(const quill_op *op);

/* kernels_norm.c */
QUILL_REF_KERNEL(quill_ref_kernel_batch_norm);
QUILL_REF_KERNEL(quill_ref_kernel_layer_norm);
QUILL_REF_KERNEL(quill_ref_kernel_reduce); /* reduce_{mean,sum,max,min} */
QUILL_REF_KERNEL(quill_ref_kernel_softmax); /* softmax log_softmax */

/* kernels_resize.c */
QUILL_REF_KERNEL(quill_ref_kernel_resize);
const char *quill_ref_supports_resize(const quill_op *op);

/* kernels_quant.c */
QUILL_REF_KERNEL(quill_ref_kernel_quantize);
QUILL_REF_KERNEL(quill_ref_kernel_dequantize);
QUILL_REF_KERNEL(quill_ref_kernel_requantize);
QUILL_REF_KERNEL(quill_ref_kernel_fake_quant);

#endif /* QUILL_TARGETS_REFERENCE_KERNELS_H */
