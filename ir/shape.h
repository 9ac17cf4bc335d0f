/*
 * shape.h - ONNX shape inference helpers, shared by the verifier
 * (ir/op_verify*.c) and the ONNX frontend.
 *
 * A quill_shape is a plain value (rank + dims) so that callers can build
 * and compare shapes without creating uniqued types. QUILL_DIM_DYNAMIC (-1)
 * dims propagate: any output dim that depends on a dynamic input dim is
 * dynamic. Helpers return true on success; on failure they return false and
 * append a reason (no "'op' op" prefix) to `why` if it is non-NULL, e.g.
 *
 *   "dimension 1 (3 vs 4) is not broadcastable"
 *
 * No helper emits diagnostics or allocates (except quill_shape_type and the
 * `why` buffer), so they are safe to use while building IR.
 *
 * Conventions follow ONNX: pads are [x1_begin, x2_begin, ..., x1_end,
 * x2_end, ...] (for 2-D: [top, left, bottom, right]); negative axes count
 * from the back.
 */
#ifndef QUILL_IR_SHAPE_H
#define QUILL_IR_SHAPE_H

#include "ir/type.h"

typedef struct quill_shape {
  unsigned rank;
  int64_t dims[QUILL_MAX_RANK]; /* QUILL_DIM_DYNAMIC for unknown */
} quill_shape;

/* Copy the shape of a tensor type. */
void quill_shape_of(const quill_type *tensor, quill_shape *out);
/* Set a shape from rank + dims (rank is clamped to QUILL_MAX_RANK). */
void quill_shape_set(quill_shape *s, unsigned rank, const int64_t *dims);
/* The tensor type with this shape and element type (uniqued in ctx; NULL on
 * allocation failure). */
quill_type *quill_shape_type(quill_context *ctx, const quill_shape *s,
                             quill_type *elem);
/* Same rank and every dim equal, a dynamic dim on either side matching
 * anything. */
bool quill_shape_matches(const quill_shape *a, const quill_shape *b);
/* Product of the dims; -1 if a dim is dynamic or on overflow. */
int64_t quill_shape_num_elements(const quill_shape *s);
/* Append "2x3x?" (the dims as in a tensor type, "scalar" for rank 0). */
void quill_shape_print(const quill_shape *s, quill_strbuf *sb);

/* Normalize an ONNX axis in [-rank, rank) to [0, rank). Returns false if
 * out of range. */
bool quill_shape_norm_axis(int64_t axis, unsigned rank, unsigned *out);

/* ---- elementwise ------------------------------------------------------- */

/* Numpy (multidirectional) broadcasting of a and b. */
bool quill_shape_broadcast(const quill_shape *a, const quill_shape *b,
                           quill_shape *out, quill_strbuf *why);
/* Unidirectional broadcasting: can `from` be broadcast to `to`? */
bool quill_shape_broadcastable_to(const quill_shape *from,
                                  const quill_shape *to, quill_strbuf *why);

/* ---- convolution and pooling ------------------------------------------- */

/* Window attributes of conv, conv-transpose and pooling. */
typedef struct quill_window {
  unsigned nspatial;                  /* number of spatial dims */
  int64_t kernel[QUILL_MAX_RANK];     /* pooling only (conv: from weights) */
  int64_t strides[QUILL_MAX_RANK];    /* default 1 */
  int64_t pads[2 * QUILL_MAX_RANK];   /* begins then ends; default 0 */
  int64_t dilations[QUILL_MAX_RANK];  /* default 1 */
  int64_t output_padding[QUILL_MAX_RANK]; /* conv-transpose; default 0 */
  int64_t group;                      /* conv; default 1 */
  bool ceil_mode;                     /* pooling; default false */
} quill_window;

/* Fill in the ONNX defaults for `nspatial` spatial dims. */
void quill_window_init(quill_window *w, unsigned nspatial);

/* Resolve ONNX auto_pad = SAME_UPPER (upper) / SAME_LOWER into explicit
 * w->pads for the given input spatial dims and kernel sizes, so that the
 * output size is ceil(in / stride) (conv, pooling) or in * stride
 * (transpose). The odd padding unit goes to the end for SAME_UPPER, to the
 * beginning for SAME_LOWER. Dims that are dynamic keep pads 0 (their
 * output is dynamic anyway). */
void quill_window_same_pads(quill_window *w, const int64_t *in,
                            const int64_t *kernel, bool upper,
                            bool transpose);

/* The 2-D window of a conv2d / qconv2d / conv_transpose2d op from its
 * attributes: strides, dilations, pads, output_padding, group and auto_pad
 * (SAME_* resolved for the input x and weights w, whose dims 2 and 3 are
 * spatial). False when they are invalid: strides or dilations below 1,
 * negative pads, group below 1. */
bool quill_window_of_conv(const quill_op *op, const quill_type *xt,
                          const quill_type *wt, bool transpose,
                          quill_window *w);

/* One output size of a conv/pool window:
 *   floor_or_ceil((in + pb + pe - ((k - 1) * d + 1)) / s) + 1
 * with ceil mode dropping a last window that starts inside the end padding.
 * Returns QUILL_DIM_DYNAMIC if in is dynamic; the result may be <= 0 when
 * the window does not fit (callers report that). */
int64_t quill_shape_window_dim(int64_t in, int64_t k, int64_t s, int64_t pb,
                               int64_t pe, int64_t d, bool ceil_mode);
/* One output size of a transposed conv:
 *   s * (in - 1) + output_padding + ((k - 1) * d + 1) - pb - pe */
int64_t quill_shape_conv_transpose_dim(int64_t in, int64_t k, int64_t s,
                                       int64_t pb, int64_t pe, int64_t d,
                                       int64_t output_padding);

/* Conv: x [N, C, D1...], w [M, C/group, k1...] -> [N, M, o1...]. Checks
 * ranks, channel/group consistency and that the output is non-empty. */
bool quill_shape_conv(const quill_shape *x, const quill_shape *w,
                      const quill_window *win, quill_shape *out,
                      quill_strbuf *why);
/* ConvTranspose: x [N, C, D1...], w [C, M/group, k1...] -> [N, M, o1...]. */
bool quill_shape_conv_transpose(const quill_shape *x, const quill_shape *w,
                                const quill_window *win, quill_shape *out,
                                quill_strbuf *why);
/* Max/average pooling with win->kernel: [N, C, D1...] -> [N, C, o1...]. */
bool quill_shape_pool(const quill_shape *x, const quill_window *win,
                      quill_shape *out, quill_strbuf *why);
/* Global pooling: [N, C, D1...] -> [N, C, 1...]. */
bool quill_shape_global_pool(const quill_shape *x, quill_shape *out,
                             quill_strbuf *why);

/* ---- linear algebra ---------------------------------------------------- */

/* numpy.matmul, including 1-D operands and batch broadcasting. */
bool quill_shape_matmul(const quill_shape *a, const quill_shape *b,
                        quill_shape *out, quill_strbuf *why);
/* Gemm: 2-D a and b, optionally transposed -> [M, N]. */
bool quill_shape_gemm(const quill_shape *a, const quill_shape *b,
                      bool trans_a, bool trans_b, quill_shape *out,
                      quill_strbuf *why);

/* ---- data movement ----------------------------------------------------- */

/* Concat n shapes along axis. */
bool quill_shape_concat(unsigned n, const quill_shape *ins, int64_t axis,
                        quill_shape *out, quill_strbuf *why);
/* Split `in` along axis into n parts of the given sizes (which must add up
 * to the dim when it is static); outs gets n shapes. */
bool quill_shape_split(const quill_shape *in, int64_t axis, unsigned n,
                       const int64_t *sizes, quill_shape *outs,
                       quill_strbuf *why);
/* Slice with ONNX clamping. axes may be NULL (0..n-1), steps NULL (all 1). */
bool quill_shape_slice(const quill_shape *in, unsigned n,
                       const int64_t *starts, const int64_t *ends,
                       const int64_t *axes, const int64_t *steps,
                       quill_shape *out, quill_strbuf *why);
/* Pad with 2*rank pads (negative pads crop). */
bool quill_shape_pad(const quill_shape *in, const int64_t *pads,
                     quill_shape *out, quill_strbuf *why);
/* Transpose; perm NULL (n ignored) reverses the dims. */
bool quill_shape_transpose(const quill_shape *in, unsigned n,
                           const int64_t *perm, quill_shape *out,
                           quill_strbuf *why);
/* Squeeze the given axes (n == 0: every static dim of size 1). */
bool quill_shape_squeeze(const quill_shape *in, unsigned n,
                         const int64_t *axes, quill_shape *out,
                         quill_strbuf *why);
/* Unsqueeze: axes index the output (range [-(r+n), r+n)). */
bool quill_shape_unsqueeze(const quill_shape *in, unsigned n,
                           const int64_t *axes, quill_shape *out,
                           quill_strbuf *why);
/* Flatten at axis in [-r, r] to a 2-D shape. */
bool quill_shape_flatten(const quill_shape *in, int64_t axis,
                         quill_shape *out, quill_strbuf *why);
/* ONNX Reshape target: 0 copies the input dim (unless allowzero), one -1 is
 * inferred. The element counts must agree when static. */
bool quill_shape_reshape(const quill_shape *in, unsigned n,
                         const int64_t *shape, bool allowzero,
                         quill_shape *out, quill_strbuf *why);
/* Reduce over axes (n == 0: all axes unless noop_with_empty_axes). */
bool quill_shape_reduce(const quill_shape *in, unsigned n,
                        const int64_t *axes, bool keepdims,
                        bool noop_with_empty_axes, quill_shape *out,
                        quill_strbuf *why);
/* Gather: data[:axis] + indices + data[axis+1:]. */
bool quill_shape_gather(const quill_shape *data, const quill_shape *indices,
                        int64_t axis, quill_shape *out, quill_strbuf *why);
/* Resize with per-dim scales: out = floor(in * scale). */
bool quill_shape_resize_scales(const quill_shape *in, unsigned n,
                               const double *scales, quill_shape *out,
                               quill_strbuf *why);

#endif /* QUILL_IR_SHAPE_H */
