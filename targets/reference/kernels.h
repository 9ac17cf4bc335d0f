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

/* kernels_custom.c: `custom` ops through their registered evaluator */
QUILL_REF_KERNEL(quill_ref_kernel_custom);
const char *quill_ref_supports_custom(const quill_op *op);

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

/* A string attribute (dflt if absent or not a string). */
const char *quill_ref_attr_str(const quill_op *op, const char *name,
                               const char *dflt);
/* Emit "reference: 'op': <what>" at the op; returns QUILL_ERR_INVALID. */
quill_status quill_ref_op_error(quill_context *ctx, const quill_op *op,
                                const char *what);
/* NULL if no operand or result has a quantized element type, else
 * "quantized element types"; for float-only kernels. */
const char *quill_ref_supports_float(const quill_op *op);

/* ---- kernels_quant.c -------------------------------------------------------- */

/* Quantization parameters of one tensor: per tensor or per axis. */
typedef struct quill_ref_qinfo {
  const double *scales;
  const int64_t *zps;
  size_t n;        /* number of parameter pairs (1 per-tensor) */
  size_t inner;    /* elements per step along the axis */
  int64_t qmin, qmax;
  bool f64;        /* expressed type is f64 */
} quill_ref_qinfo;

/* Fill qi from a quant element type and the (static) tensor type it
 * applies to; false if a per-axis type does not fit the tensor. */
bool quill_ref_qinfo_init(quill_ref_qinfo *qi, const quill_type *qelem,
                          const quill_type *tensor);
/* The parameter index of row-major element i. */
static inline size_t quill_ref_qchannel(const quill_ref_qinfo *qi, size_t i) {
  return qi->n == 1 ? 0 : (i / qi->inner) % qi->n;
}

/* ---- sgemm.c ---------------------------------------------------------------- */

/* C[M,N] (row stride ldc) = A[M,K] * B[K,N] (+ C if accumulate), all f32.
 * A and B are addressed through row and column strides, so transposed
 * operands need no copy: A(i,k) = A[i*rsa + k*csa]. Cache-blocked, with A
 * and B packed into micro-panels (allocated through ctx: NOMEM). */
quill_status quill_ref_sgemm(quill_context *ctx, size_t M, size_t N, size_t K,
                             const float *A, ptrdiff_t rsa, ptrdiff_t csa,
                             const float *B, ptrdiff_t rsb, ptrdiff_t csb,
                             float *C, size_t ldc, bool accumulate);
/* The same product of integer-valued floats into int32 C (+ C if
 * accumulate), exactly: K is cut into blocks of at most kc_max, each block
 * is summed in f32 and added to C modulo 2^32. The caller guarantees that
 * kc_max * max|A| * max|B| <= 2^24 (see quill_ref_exact_block), which makes
 * every f32 operation exact. */
quill_status quill_ref_sgemm_i32(quill_context *ctx, size_t M, size_t N,
                                 size_t K, const float *A, ptrdiff_t rsa,
                                 ptrdiff_t csa, const float *B, ptrdiff_t rsb,
                                 ptrdiff_t csb, int32_t *C, size_t ldc,
                                 bool accumulate, size_t kc_max);
/* B pre-packed for the engine, for callers that produce B a row at a time
 * (conv2d's im2col): allocate quill_ref_packed_b_size(K, N) floats, store
 * each row k < K of B (N floats) with quill_ref_pack_b_row, then multiply
 * with the _packed variants (same contracts as above). */
size_t quill_ref_packed_b_size(size_t K, size_t N);
void quill_ref_pack_b_row(float *restrict bp, size_t K, size_t N, size_t k,
                          const float *restrict row);
quill_status quill_ref_sgemm_packed(quill_context *ctx, size_t M, size_t N,
                                    size_t K, const float *A, ptrdiff_t rsa,
                                    ptrdiff_t csa, const float *Bp, float *C,
                                    size_t ldc, bool accumulate);
quill_status quill_ref_sgemm_packed_i32(quill_context *ctx, size_t M,
                                        size_t N, size_t K, const float *A,
                                        ptrdiff_t rsa, ptrdiff_t csa,
                                        const float *Bp, int32_t *C,
                                        size_t ldc, bool accumulate,
                                        size_t kc_max);
/* The longest K block for quill_ref_sgemm_i32 when |A| <= max_a and |B| <=
 * max_b (capped at the engine's block size; SIZE_MAX if a bound is 0);
 * 0 if even one product may exceed 2^24 (then f32 is not exact). */
size_t quill_ref_exact_block(double max_a, double max_b);

/* ---- kernels_gemm.c --------------------------------------------------------- */

/* The shape of a numpy matmul y = a x b (shared with qmatmul): a [.., M, K]
 * (or [K]: M = 1), b [.., K, N] (or [K]: N = 1), batch dims broadcast. */
typedef struct quill_ref_matmul_plan {
  size_t M, N, K;
  size_t batches;                      /* product of the batch dims */
  unsigned num_batch_dims;
  int64_t batch_dims[QUILL_MAX_RANK];  /* of the result */
  size_t a_stride[QUILL_MAX_RANK];     /* in matrices; 0 if broadcast */
  size_t b_stride[QUILL_MAX_RANK];
} quill_ref_matmul_plan;

/* Check the shapes of a, b and y and fill p (an error at the op and
 * QUILL_ERR_INVALID on a mismatch). */
quill_status quill_ref_matmul_plan_init(quill_context *ctx, const quill_op *op,
                                        const quill_tensor *a,
                                        const quill_tensor *b,
                                        const quill_tensor *y,
                                        quill_ref_matmul_plan *p);
/* Element offsets of batch t's matrices in a and b (batch t's result
 * matrix starts at element t * M * N). */
void quill_ref_matmul_offsets(const quill_ref_matmul_plan *p, size_t t,
                              size_t *oa, size_t *ob);
QUILL_REF_KERNEL(quill_ref_kernel_matmul);
QUILL_REF_KERNEL(quill_ref_kernel_gemm);
const char *quill_ref_supports_linalg(const quill_op *op);

/* ---- kernels_conv.c ---------------------------------------------------------- */

/* Convolution geometry (conv2d, conv_transpose2d, qconv2d). */
typedef struct quill_ref_conv_geom {
  size_t N, C, H, W;     /* input */
  size_t M, OH, OW;      /* output channels and spatial size */
  size_t kh, kw, group;
  size_t Cg, Mg;         /* channels per group (input, output) */
  int64_t sh, sw, dh, dw, pt, pl;
} quill_ref_conv_geom;

/* Read the window attributes of a conv op (strides, pads, dilations,
 * group, auto_pad, output_padding) and check the shapes of x = in[0],
 * w = in[1], the optional bias in[2] (one element per output channel) and
 * the result y. On a mismatch emits an error at the op and returns
 * QUILL_ERR_INVALID. */
quill_status quill_ref_conv_setup(quill_context *ctx, const quill_op *op,
                                  const quill_tensor *in,
                                  const quill_tensor *y, bool transpose,
                                  quill_ref_conv_geom *g);
/* y = conv(x, w) without bias, on f32 data laid out as the geometry says
 * (x [N,C,H,W], w [M,Cg,kh,kw], y [N,M,OH,OW]). Exactly one of yf / yi is
 * non-NULL. With yi the operands hold integers and kc_max bounds the
 * number of products summed in f32 before converting (see
 * quill_ref_sgemm_i32); yi then gets the exact sums modulo 2^32. Scratch
 * memory comes from ctx (QUILL_ERR_NOMEM). */
quill_status quill_ref_conv_core(quill_context *ctx,
                                 const quill_ref_conv_geom *g, const float *x,
                                 const float *w, float *yf, int32_t *yi,
                                 size_t kc_max);
QUILL_REF_KERNEL(quill_ref_kernel_conv2d);
QUILL_REF_KERNEL(quill_ref_kernel_conv_transpose2d);

/* kernels_pool.c */
QUILL_REF_KERNEL(quill_ref_kernel_pool);        /* maxpool avgpool */
QUILL_REF_KERNEL(quill_ref_kernel_global_pool); /* global_{avg,max}pool */
const char *quill_ref_supports_pool(const quill_op *op);

/* kernels_rnn.c */
QUILL_REF_KERNEL(quill_ref_kernel_lstm);

/* kernels_norm.c */
QUILL_REF_KERNEL(quill_ref_kernel_batch_norm);
QUILL_REF_KERNEL(quill_ref_kernel_layer_norm);
QUILL_REF_KERNEL(quill_ref_kernel_reduce); /* reduce_{mean,sum,max,min} */
QUILL_REF_KERNEL(quill_ref_kernel_softmax); /* softmax log_softmax */
/* float, or softmax in TFLite's int16 form (i16 zero point 0 -> 1/32768) */
const char *quill_ref_supports_softmax(const quill_op *op);

/* kernels_resize.c */
QUILL_REF_KERNEL(quill_ref_kernel_resize);
const char *quill_ref_supports_resize(const quill_op *op);

/* kernels_quant.c */
QUILL_REF_KERNEL(quill_ref_kernel_quantize);
QUILL_REF_KERNEL(quill_ref_kernel_dequantize);
QUILL_REF_KERNEL(quill_ref_kernel_requantize);
QUILL_REF_KERNEL(quill_ref_kernel_fake_quant);
QUILL_REF_KERNEL(quill_ref_kernel_scast);
QUILL_REF_KERNEL(quill_ref_kernel_dynamic_quantize);

/* kernels_qlinear.c */
QUILL_REF_KERNEL(quill_ref_kernel_qconv2d);
QUILL_REF_KERNEL(quill_ref_kernel_qmatmul);

/* kernels_qelementwise.c */
QUILL_REF_KERNEL(quill_ref_kernel_qbinary); /* qadd qmul */
QUILL_REF_KERNEL(quill_ref_kernel_lut);
QUILL_REF_KERNEL(quill_ref_kernel_qlayer_norm);
/* kernels_qlstm.c */
QUILL_REF_KERNEL(quill_ref_kernel_qlstm);

#endif /* QUILL_TARGETS_REFERENCE_KERNELS_H */
