/*
 * op_verify_nn.c - verifiers for the neural-network ops: convolution,
 * matmul/gemm, normalization, pooling, reductions and softmax.
 *
 * Each verifier reads its ONNX attributes (defaults when absent: strides 1,
 * pads 0, dilations 1, group 1, ceil_mode 0, keepdims 1, axis -1 ...),
 * checks their kinds and values, checks operand element types and ranks,
 * and then compares the declared result type with the shape inferred by
 * ir/shape.c:
 *
 *   x [N,C,H,W] --+
 *   w [O,C/g,kh,kw]-+--> quill_shape_conv --> [N,O,oh,ow] == result?
 *   {strides, pads, dilations, group}
 *
 * Float ops need float operands of one element type; quantized operands are
 * accepted where a quantized kernel exists (their parameters may differ).
 */
#include <string.h>

#include "ir/op_verify.h"

/* ---- window attributes ------------------------------------------------- */

/* Read an int list attribute of exactly `n` elements, each >= lo. Leaves
 * out untouched when absent. */
static quill_status window_list(quill_context *ctx, const quill_op *op,
                                const char *name, unsigned n, int64_t lo,
                                int64_t *out) {
  int64_t tmp[2 * QUILL_MAX_RANK], len;
  if (quill_vop_attr_ints(ctx, op, name, tmp, 2 * QUILL_MAX_RANK, &len))
    return QUILL_ERR_INVALID;
  if (len < 0)
    return QUILL_OK;
  if (len != (int64_t)n)
    return quill_vop_fail(ctx, op, "attribute '%s' must have %u elements, got "
                                   "%lld",
                          name, n, (long long)len);
  for (unsigned i = 0; i < n; i++) {
    if (tmp[i] < lo)
      return quill_vop_fail(ctx, op, "attribute '%s' must be %s, got %lld",
                            name, lo > 0 ? "positive" : "non-negative",
                            (long long)tmp[i]);
    out[i] = tmp[i];
  }
  return QUILL_OK;
}

enum {
  WIN_KERNEL = 1u << 0,   /* kernel_shape required (pooling) */
  WIN_GROUP = 1u << 1,    /* group */
  WIN_OUTPAD = 1u << 2,   /* output_padding */
  WIN_CEIL = 1u << 3,     /* ceil_mode */
};

static const char *const auto_pads[] = {"NOTSET", "VALID", "SAME_UPPER",
                                        "SAME_LOWER", NULL};

/* Apply auto_pad (after read_window): SAME_* computes the pads from the
 * input's spatial dims and the kernel (from the weights for conv). */
static quill_status apply_auto_pad(quill_context *ctx, const quill_op *op,
                                   const quill_shape *x, const int64_t *kernel,
                                   bool transpose, quill_window *w) {
  const char *mode;
  if (quill_vop_attr_choice(ctx, op, "auto_pad", "NOTSET", auto_pads, &mode))
    return QUILL_ERR_INVALID;
  if (mode[0] == 'N')
    return QUILL_OK;
  if (quill_op_attr(op, "pads"))
    return quill_vop_fail(ctx, op, "attribute 'pads' cannot be combined with "
                                   "auto_pad \"%s\"",
                          mode);
  if (mode[0] == 'S')
    quill_window_same_pads(w, x->dims + 2, kernel, mode[5] == 'U', transpose);
  return QUILL_OK;
}

/* Read strides, pads, dilations and the attributes selected by `what`. */
static quill_status read_window(quill_context *ctx, const quill_op *op,
                                unsigned nspatial, unsigned what,
                                quill_window *w) {
  quill_status st = QUILL_OK;
  quill_window_init(w, nspatial);
  if (what & WIN_KERNEL) {
    if (quill_vop_attr_required(ctx, op, "kernel_shape") ||
        window_list(ctx, op, "kernel_shape", nspatial, 1, w->kernel))
      st = QUILL_ERR_INVALID;
  }
  if (window_list(ctx, op, "strides", nspatial, 1, w->strides) ||
      window_list(ctx, op, "pads", 2 * nspatial, 0, w->pads) ||
      window_list(ctx, op, "dilations", nspatial, 1, w->dilations))
    st = QUILL_ERR_INVALID;
  if (what & WIN_GROUP) {
    if (quill_vop_attr_int(ctx, op, "group", 1, &w->group))
      st = QUILL_ERR_INVALID;
    else if (w->group <= 0)
      st = quill_vop_fail(ctx, op, "attribute 'group' must be positive, got "
                                   "%lld",
                          (long long)w->group);
  }
  if ((what & WIN_OUTPAD) && !st) {
    if (window_list(ctx, op, "output_padding", nspatial, 0,
                    w->output_padding))
      return QUILL_ERR_INVALID;
    for (unsigned i = 0; i < nspatial; i++)
      if (w->output_padding[i] >= w->strides[i] &&
          w->output_padding[i] >= w->dilations[i])
        return quill_vop_fail(ctx, op,
                              "attribute 'output_padding' (%lld) must be "
                              "smaller than the stride or the dilation",
                              (long long)w->output_padding[i]);
  }
  if ((what & WIN_CEIL) &&
      quill_vop_attr_flag(ctx, op, "ceil_mode", false, &w->ceil_mode))
    st = QUILL_ERR_INVALID;
  return st;
}

/* Operand i must have the given rank. */
static quill_status expect_rank(quill_context *ctx, const quill_op *op,
                                unsigned i, unsigned rank, const char *what) {
  quill_type *t = quill_vop_operand_type(op, i);
  if (quill_type_rank(t) == rank)
    return QUILL_OK;
  quill_strbuf sb;
  quill_strbuf_init(&sb, ctx);
  quill_type_print(t, &sb);
  quill_vop_fail(ctx, op, "operand #%u must be %s, got %s", i, what,
                 quill_strbuf_str(&sb));
  quill_strbuf_free(&sb);
  return QUILL_ERR_INVALID;
}

/* Operand i must be 1-D of size n (n < 0: any). */
static quill_status expect_vector(quill_context *ctx, const quill_op *op,
                                  unsigned i, int64_t n, const char *what) {
  quill_type *t = quill_vop_operand_type(op, i);
  if (quill_type_rank(t) == 1 &&
      (n < 0 || quill_type_dim(t, 0) < 0 || quill_type_dim(t, 0) == n))
    return QUILL_OK;
  quill_strbuf sb;
  quill_strbuf_init(&sb, ctx);
  quill_type_print(t, &sb);
  quill_vop_fail(ctx, op, "%s (operand #%u) must have shape [%lld], got %s",
                 what, i, (long long)n, quill_strbuf_str(&sb));
  quill_strbuf_free(&sb);
  return QUILL_ERR_INVALID;
}

/* Element types of x, w and optional bias: float -> all equal; quantized x
 * -> quantized w and an integer or quantized bias. */
static quill_status conv_elems(quill_context *ctx, const quill_op *op) {
  if (quill_vop_expect_operand_elem(ctx, op, 0,
                                    QUILL_EC_FLOAT | QUILL_EC_QUANT,
                                    "a float or quantized"))
    return QUILL_ERR_INVALID;
  quill_type *xe = quill_vop_operand_elem(op, 0);
  if (quill_type_is_quant(xe)) {
    if (quill_vop_expect_operand_elem(ctx, op, 1, QUILL_EC_QUANT,
                                      "a quantized"))
      return QUILL_ERR_INVALID;
    if (quill_op_num_operands(op) > 2 &&
        quill_vop_expect_operand_elem(ctx, op, 2,
                                      QUILL_EC_QUANT | QUILL_EC_INT,
                                      "an integer or quantized"))
      return QUILL_ERR_INVALID;
    return QUILL_OK;
  }
  for (unsigned i = 1; i < quill_op_num_operands(op); i++)
    if (quill_vop_expect_operand_like(ctx, op, i, xe))
      return QUILL_ERR_INVALID;
  return QUILL_OK;
}

/* Shared body of conv2d and conv_transpose2d. */
static quill_status verify_conv(quill_context *ctx, const quill_op *op,
                                bool transpose, bool integer) {
  quill_status st = integer ? quill_vop_integer_operands(ctx, op)
                            : conv_elems(ctx, op);
  if (expect_rank(ctx, op, 0, 4, "a 4-D NCHW tensor") ||
      expect_rank(ctx, op, 1, 4, transpose ? "a 4-D IOHW weight tensor"
                                           : "a 4-D OIHW weight tensor"))
    return QUILL_ERR_INVALID;
  quill_window w;
  if (read_window(ctx, op, 2, WIN_GROUP | (transpose ? WIN_OUTPAD : 0), &w))
    st = QUILL_ERR_INVALID;
  quill_shape xs, ws, out;
  quill_vop_operand_shape(op, 0, &xs);
  quill_vop_operand_shape(op, 1, &ws);
  int64_t kernel[2], klen;
  if (quill_vop_attr_ints(ctx, op, "kernel_shape", kernel, 2, &klen))
    st = QUILL_ERR_INVALID;
  else if (klen >= 0 &&
           (klen != 2 || (ws.dims[2] >= 0 && kernel[0] != ws.dims[2]) ||
            (ws.dims[3] >= 0 && kernel[1] != ws.dims[3])))
    st = quill_vop_fail(ctx, op, "attribute 'kernel_shape' does not match the "
                                 "weight's spatial dims");
  if (!st && apply_auto_pad(ctx, op, &xs, ws.dims + 2, transpose, &w))
    st = QUILL_ERR_INVALID;
  if (st)
    return st;
  quill_strbuf why;
  quill_strbuf_init(&why, ctx);
  bool ok = transpose ? quill_shape_conv_transpose(&xs, &ws, &w, &out, &why)
                      : quill_shape_conv(&xs, &ws, &w, &out, &why);
  if (!ok)
    st = quill_vop_shape_fail(ctx, op, "invalid shapes", &why);
  quill_strbuf_free(&why);
  if (st)
    return st;
  if (quill_op_num_operands(op) > 2 &&
      expect_vector(ctx, op, 2, out.dims[1], "bias"))
    st = QUILL_ERR_INVALID;
  if (integer) {
    /* Weights quantized per output channel: one parameter per channel. */
    quill_type *we = quill_vop_operand_elem(op, 1);
    if (quill_type_quant_axis_of(we) > 0)
      return quill_vop_fail(ctx, op, "weights must be quantized per tensor or "
                                     "along axis 0 (output channels)");
    if (quill_vop_check_quant_axis(ctx, op, "operand #1",
                                   quill_vop_operand_type(op, 1)) ||
        quill_vop_expect_result(ctx, op, 0, &out, NULL) ||
        quill_vop_integer_result(ctx, op, out.dims[1]))
      st = QUILL_ERR_INVALID;
    return st;
  }
  if (quill_vop_expect_result(ctx, op, 0, &out, quill_vop_operand_elem(op, 0)))
    st = QUILL_ERR_INVALID;
  return st;
}

/* conv2d x w [b] {strides, pads, dilations, group, kernel_shape, auto_pad} */
quill_status quill_verify_conv2d(quill_context *ctx, const quill_op *op) {
  return verify_conv(ctx, op, false, false);
}

/* conv_transpose2d x w [b] {strides, pads, dilations, group,
 * output_padding, auto_pad} */
quill_status quill_verify_conv_transpose2d(quill_context *ctx,
                                           const quill_op *op) {
  return verify_conv(ctx, op, true, false);
}

/* qconv2d x w [b] {conv2d attrs, rounding, multiplier, shift}: quantized
 * x and w (w per tensor or per output channel), i32 bias [O], result
 * quantized (requantized) or i32 (the accumulator). */
quill_status quill_verify_qconv2d(quill_context *ctx, const quill_op *op) {
  return verify_conv(ctx, op, false, true);
}

/* ---- matmul and gemm --------------------------------------------------- */

/* Operands 0 and 1 (and 2 if `with_c`): numeric, alike. */
static quill_status linalg_elems(quill_context *ctx, const quill_op *op) {
  if (quill_vop_expect_operand_elem(ctx, op, 0, QUILL_EC_NUMERIC,
                                    "a numeric"))
    return QUILL_ERR_INVALID;
  quill_type *ae = quill_vop_operand_elem(op, 0);
  for (unsigned i = 1; i < quill_op_num_operands(op); i++) {
    bool quant_ok = quill_type_is_quant(ae) &&
                    quill_vop_elem_class(quill_vop_operand_elem(op, i)) &
                        (QUILL_EC_QUANT | (i == 2 ? QUILL_EC_INT : 0));
    if (!quant_ok && quill_vop_expect_operand_like(ctx, op, i, ae))
      return QUILL_ERR_INVALID;
  }
  return QUILL_OK;
}

/* matmul a b: numpy matmul. */
quill_status quill_verify_matmul(quill_context *ctx, const quill_op *op) {
  if (linalg_elems(ctx, op))
    return QUILL_ERR_INVALID;
  quill_shape a, b, out;
  quill_vop_operand_shape(op, 0, &a);
  quill_vop_operand_shape(op, 1, &b);
  quill_strbuf why;
  quill_strbuf_init(&why, ctx);
  quill_status st = QUILL_OK;
  if (!quill_shape_matmul(&a, &b, &out, &why))
    st = quill_vop_shape_fail(ctx, op, "incompatible operand shapes", &why);
  quill_strbuf_free(&why);
  if (st)
    return st;
  return quill_vop_expect_result(ctx, op, 0, &out, quill_vop_operand_elem(op, 0));
}

/* qmatmul a b [bias] {rounding, multiplier, shift}: numpy matmul of
 * quantized a and b (b per tensor or per column, i.e. its last axis), i32
 * bias broadcast along the last result axis, result quantized or i32. */
quill_status quill_verify_qmatmul(quill_context *ctx, const quill_op *op) {
  if (quill_vop_integer_operands(ctx, op))
    return QUILL_ERR_INVALID;
  quill_shape a, b, out;
  quill_vop_operand_shape(op, 0, &a);
  quill_vop_operand_shape(op, 1, &b);
  quill_strbuf why;
  quill_strbuf_init(&why, ctx);
  quill_status st = QUILL_OK;
  if (!quill_shape_matmul(&a, &b, &out, &why))
    st = quill_vop_shape_fail(ctx, op, "incompatible operand shapes", &why);
  quill_strbuf_free(&why);
  if (st)
    return st;
  int64_t cols = out.rank ? out.dims[out.rank - 1] : 1;
  quill_type *be = quill_vop_operand_elem(op, 1);
  int32_t axis = quill_type_quant_axis_of(be);
  if (axis >= 0 && (b.rank < 2 || axis != (int32_t)b.rank - 1))
    return quill_vop_fail(ctx, op, "operand #1 must be quantized per tensor or "
                                   "along its last axis (columns)");
  if (quill_vop_check_quant_axis(ctx, op, "operand #1",
                                 quill_vop_operand_type(op, 1)))
    return QUILL_ERR_INVALID;
  if (quill_op_num_operands(op) > 2 &&
      expect_vector(ctx, op, 2, cols, "bias"))
    return QUILL_ERR_INVALID;
  if (quill_vop_expect_result(ctx, op, 0, &out, NULL) ||
      quill_vop_integer_result(ctx, op, cols))
    return QUILL_ERR_INVALID;
  return QUILL_OK;
}

/* gemm a b [c] {alpha, beta, trans_a, trans_b} */
quill_status quill_verify_gemm(quill_context *ctx, const quill_op *op) {
  quill_status st = linalg_elems(ctx, op);
  double alpha, beta;
  bool ta, tb;
  if (quill_vop_attr_float(ctx, op, "alpha", 1.0, &alpha) ||
      quill_vop_attr_float(ctx, op, "beta", 1.0, &beta) ||
      quill_vop_attr_flag(ctx, op, "trans_a", false, &ta) ||
      quill_vop_attr_flag(ctx, op, "trans_b", false, &tb))
    st = QUILL_ERR_INVALID;
  if (st)
    return st;
  quill_shape a, b, out;
  quill_vop_operand_shape(op, 0, &a);
  quill_vop_operand_shape(op, 1, &b);
  quill_strbuf why;
  quill_strbuf_init(&why, ctx);
  if (!quill_shape_gemm(&a, &b, ta, tb, &out, &why))
    st = quill_vop_shape_fail(ctx, op, "incompatible operand shapes", &why);
  quill_strbuf_free(&why);
  if (st)
    return st;
  if (quill_op_num_operands(op) > 2) {
    quill_shape c;
    quill_vop_operand_shape(op, 2, &c);
    if (!quill_shape_broadcastable_to(&c, &out, NULL)) {
      quill_type *mn = quill_shape_type(ctx, &out, quill_vop_operand_elem(op, 0));
      st = quill_vop_fail_types(ctx, op,
                                "operand #2 of type %s cannot be broadcast to "
                                "%s",
                                quill_vop_operand_type(op, 2), mn);
    }
  }
  if (quill_vop_expect_result(ctx, op, 0, &out, quill_vop_operand_elem(op, 0)))
    st = QUILL_ERR_INVALID;
  return st;
}

/* ---- normalization ----------------------------------------------------- */

/* batch_norm x scale bias mean var {epsilon, momentum} */
quill_status quill_verify_batch_norm(quill_context *ctx, const quill_op *op) {
  static const char *const names[] = {"x", "scale", "bias", "mean", "var"};
  quill_status st =
      quill_vop_expect_operand_elem(ctx, op, 0, QUILL_EC_FLOAT, "a float");
  quill_type *x = quill_vop_operand_type(op, 0);
  if (quill_type_rank(x) < 2)
    return quill_vop_fail_types(ctx, op,
                                "operand #0 must have rank >= 2 (N, C, ...), "
                                "got %s%s",
                                x, NULL);
  int64_t c = quill_type_dim(x, 1);
  for (unsigned i = 1; i < 5; i++) {
    if (expect_vector(ctx, op, i, c, names[i]) ||
        quill_vop_expect_operand_like(ctx, op, i, quill_type_elem(x)))
      st = QUILL_ERR_INVALID;
  }
  double eps, mom;
  if (quill_vop_attr_float(ctx, op, "epsilon", 1e-5, &eps) ||
      quill_vop_attr_float(ctx, op, "momentum", 0.9, &mom))
    st = QUILL_ERR_INVALID;
  else if (!(eps >= 0))
    st = quill_vop_fail(ctx, op, "attribute 'epsilon' must be non-negative");
  quill_shape xs;
  quill_shape_of(x, &xs);
  if (quill_vop_expect_result(ctx, op, 0, &xs, quill_type_elem(x)))
    st = QUILL_ERR_INVALID;
  return st;
}

/* layer_norm x scale [bias] {axis = -1, epsilon} */
/* layer_norm's arithmetic: "f64" statistics rounded once (the default), or
 * "f32", every step in f32 as TFLite's float builtins compute it
 * (targets/reference/kernels_norm.c), or "integer": fuse-qdq makes it a
 * qlayer_norm (ir/qnorm.h); one left float computes as "f64". */
static const char *const layer_norm_numerics[] = {"f64", "f32", "integer",
                                                  NULL};

quill_status quill_verify_layer_norm(quill_context *ctx, const quill_op *op) {
  quill_status st =
      quill_vop_expect_operand_elem(ctx, op, 0, QUILL_EC_FLOAT, "a float");
  quill_shape xs;
  quill_vop_operand_shape(op, 0, &xs);
  int64_t axis;
  unsigned ax;
  double eps;
  const char *numerics;
  if (quill_vop_attr_int(ctx, op, "axis", -1, &axis) ||
      quill_vop_attr_float(ctx, op, "epsilon", 1e-5, &eps) ||
      quill_vop_attr_choice(ctx, op, "numerics", "f64", layer_norm_numerics,
                            &numerics))
    return QUILL_ERR_INVALID;
  if (strcmp(numerics, "f32") == 0 &&
      quill_type_kind_of(quill_vop_operand_elem(op, 0)) != QUILL_TYPE_F32)
    return quill_vop_fail(ctx, op, "numerics \"f32\" needs an f32 operand");
  if (!quill_shape_norm_axis(axis, xs.rank, &ax))
    return quill_vop_fail(ctx, op, "attribute 'axis' (%lld) is out of range "
                                   "for rank %u",
                          (long long)axis, xs.rank);
  quill_shape norm;
  quill_shape_set(&norm, xs.rank - ax, xs.dims + ax);
  for (unsigned i = 1; i < quill_op_num_operands(op); i++) {
    quill_shape s;
    quill_vop_operand_shape(op, i, &s);
    if (quill_vop_expect_operand_like(ctx, op, i, quill_vop_operand_elem(op, 0)))
      st = QUILL_ERR_INVALID;
    else if (!quill_shape_broadcastable_to(&s, &norm, NULL)) {
      quill_strbuf sb;
      quill_strbuf_init(&sb, ctx);
      quill_type_print(quill_vop_operand_type(op, i), &sb);
      quill_strbuf_puts(&sb, " cannot be broadcast to the normalized shape ");
      quill_shape_print(&norm, &sb);
      st = quill_vop_fail(ctx, op, "operand #%u of type %s", i,
                          quill_strbuf_str(&sb));
      quill_strbuf_free(&sb);
    }
  }
  if (quill_vop_expect_result(ctx, op, 0, &xs, quill_vop_operand_elem(op, 0)))
    st = QUILL_ERR_INVALID;
  return st;
}

/* The operand shapes lstm and qlstm share: x [seq, batch, in], w [4h, in],
 * r [4h, h]; *y = [seq, batch, h]. */
quill_status quill_vop_lstm_shape(quill_context *ctx, const quill_op *op,
                                  quill_shape *y) {
  quill_shape x, w, r;
  quill_vop_operand_shape(op, 0, &x);
  quill_vop_operand_shape(op, 1, &w);
  quill_vop_operand_shape(op, 2, &r);
  if (x.rank != 3 || w.rank != 2 || r.rank != 2)
    return quill_vop_fail(ctx, op, "x must be [seq, batch, in], w [4*hidden, "
                                   "in] and r [4*hidden, hidden]");
  int64_t h = r.dims[1];
  if (h <= 0 || r.dims[0] != 4 * h || w.dims[0] != 4 * h ||
      w.dims[1] != x.dims[2])
    return quill_vop_fail(ctx, op, "w must be [4*hidden, in] = [%lld, %lld] "
                                   "and r [4*hidden, hidden]",
                          (long long)(4 * h), (long long)x.dims[2]);
  int64_t yd[3] = {x.dims[0], x.dims[1], h};
  quill_shape_set(y, 3, yd);
  return QUILL_OK;
}

/* lstm x [seq, batch, in], w [4h, in], r [4h, h] [, b [8h]] -> y [seq,
 * batch, h]: ONNX LSTM's forward layer (gate rows i, o, f, c; b = Wb then
 * Rb), all of one float type. */
quill_status quill_verify_lstm(quill_context *ctx, const quill_op *op) {
  quill_status st =
      quill_vop_expect_operand_elem(ctx, op, 0, QUILL_EC_FLOAT, "a float");
  if (st)
    return st;
  quill_type *e = quill_vop_operand_elem(op, 0);
  for (unsigned i = 1; i < quill_op_num_operands(op); i++)
    if (quill_vop_expect_operand_like(ctx, op, i, e))
      return QUILL_ERR_INVALID;
  quill_shape y, b;
  if (quill_vop_lstm_shape(ctx, op, &y))
    return QUILL_ERR_INVALID;
  int64_t h = y.dims[2];
  if (quill_op_num_operands(op) > 3) {
    quill_vop_operand_shape(op, 3, &b);
    if (b.rank != 1 || b.dims[0] != 8 * h)
      return quill_vop_fail(ctx, op, "b must be [8*hidden] = [%lld]",
                            (long long)(8 * h));
  }
  return quill_vop_expect_result(ctx, op, 0, &y, e);
}

/* ---- pooling ----------------------------------------------------------- */

/* maxpool/avgpool x {kernel_shape, strides, pads, dilations, ceil_mode,
 * count_include_pad, storage_order, auto_pad} */
/* Pooling of quantized tensors: one per-tensor quant type in and out,
 * except global_avgpool, whose result type may differ (a requantizing
 * mean, optionally with fixed-point {multiplier, shift}); averages take a
 * `rounding` (for quantized operands only). */
static quill_status quantized_pool_attrs(quill_context *ctx,
                                         const quill_op *op) {
  quill_opcode o = quill_op_opcode(op);
  quill_type *xe = quill_vop_operand_elem(op, 0);
  quill_type *ye = quill_type_elem(quill_vop_result_type(op, 0));
  bool fixed = false;
  if (o == QUILL_OP_GLOBAL_AVGPOOL && quill_type_is_quant(xe) &&
      quill_type_is_quant(ye)) {
    /* the requantizing mean: per-tensor types that may differ, optional
     * fixed-point {multiplier, shift} */
    if (quill_type_quant_axis_of(xe) >= 0 || quill_type_quant_axis_of(ye) >= 0)
      return quill_vop_fail(ctx, op, "quantized operands must be quantized "
                                     "per tensor");
    if (quill_vop_fixed_point(ctx, op, 1, -1, &fixed))
      return QUILL_ERR_INVALID;
  } else if (quill_vop_quant_passthrough(ctx, op, 1))
    return QUILL_ERR_INVALID;
  if (o != QUILL_OP_AVGPOOL && o != QUILL_OP_GLOBAL_AVGPOOL)
    return QUILL_OK;
  if (!quill_type_is_quant(xe))
    return quill_op_attr(op, "rounding")
               ? quill_vop_fail(ctx, op, "'rounding' applies to quantized "
                                         "operands only")
               : QUILL_OK;
  return quill_vop_rounding(ctx, op);
}

quill_status quill_verify_pool(quill_context *ctx, const quill_op *op) {
  bool is_max = quill_op_opcode(op) == QUILL_OP_MAXPOOL;
  quill_status st = quill_vop_expect_operand_elem(
      ctx, op, 0,
      QUILL_EC_FLOAT | QUILL_EC_QUANT | (is_max ? QUILL_EC_INT : 0),
      is_max ? "a numeric" : "a float or quantized");
  if (!st && quantized_pool_attrs(ctx, op))
    return QUILL_ERR_INVALID;
  quill_shape xs, out;
  quill_vop_operand_shape(op, 0, &xs);
  if (xs.rank < 3)
    return quill_vop_fail_types(ctx, op,
                                "operand #0 must have rank >= 3 (N, C, "
                                "spatial...), got %s%s",
                                quill_vop_operand_type(op, 0), NULL);
  quill_window w;
  bool flag;
  if (read_window(ctx, op, xs.rank - 2, WIN_KERNEL | WIN_CEIL, &w) ||
      quill_vop_attr_flag(ctx, op, is_max ? "storage_order"
                                          : "count_include_pad",
                          false, &flag) ||
      apply_auto_pad(ctx, op, &xs, w.kernel, false, &w))
    return QUILL_ERR_INVALID;
  quill_strbuf why;
  quill_strbuf_init(&why, ctx);
  if (!quill_shape_pool(&xs, &w, &out, &why))
    st = quill_vop_shape_fail(ctx, op, "invalid window", &why);
  quill_strbuf_free(&why);
  if (st)
    return st;
  return quill_vop_expect_result(ctx, op, 0, &out, quill_vop_operand_elem(op, 0));
}

/* global_avgpool / global_maxpool: [N, C, ...] -> [N, C, 1...] */
quill_status quill_verify_global_pool(quill_context *ctx, const quill_op *op) {
  if (quill_vop_expect_operand_elem(ctx, op, 0,
                                    QUILL_EC_FLOAT | QUILL_EC_QUANT,
                                    "a float or quantized") ||
      quantized_pool_attrs(ctx, op))
    return QUILL_ERR_INVALID;
  quill_shape xs, out;
  quill_vop_operand_shape(op, 0, &xs);
  quill_strbuf why;
  quill_strbuf_init(&why, ctx);
  quill_status st = QUILL_OK;
  if (!quill_shape_global_pool(&xs, &out, &why))
    st = quill_vop_shape_fail(ctx, op, "invalid operand", &why);
  quill_strbuf_free(&why);
  if (st)
    return st;
  return quill_vop_expect_result(ctx, op, 0, &out, quill_vop_operand_elem(op, 0));
}

/* ---- reductions and softmax -------------------------------------------- */

/* reduce_* x {axes, keepdims = 1, noop_with_empty_axes = 0} */
quill_status quill_verify_reduce(quill_context *ctx, const quill_op *op) {
  quill_status st = quill_vop_expect_operand_elem(ctx, op, 0, QUILL_EC_NUMERIC,
                                                  "a numeric");
  int64_t axes[QUILL_MAX_RANK], n;
  bool keep, noop;
  if (quill_vop_attr_ints(ctx, op, "axes", axes, QUILL_MAX_RANK, &n) ||
      quill_vop_attr_flag(ctx, op, "keepdims", true, &keep) ||
      quill_vop_attr_flag(ctx, op, "noop_with_empty_axes", false, &noop))
    return QUILL_ERR_INVALID;
  quill_shape xs, out;
  quill_vop_operand_shape(op, 0, &xs);
  quill_strbuf why;
  quill_strbuf_init(&why, ctx);
  if (!quill_shape_reduce(&xs, n < 0 ? 0 : (unsigned)n, axes, keep, noop,
                          &out, &why))
    st = quill_vop_shape_fail(ctx, op, "invalid attribute 'axes'", &why);
  quill_strbuf_free(&why);
  if (st)
    return st;
  return quill_vop_expect_result(ctx, op, 0, &out, quill_vop_operand_elem(op, 0));
}

/* softmax / log_softmax x {axis = -1} */
quill_status quill_verify_softmax(quill_context *ctx, const quill_op *op) {
  quill_status st = quill_vop_expect_operand_elem(
      ctx, op, 0, QUILL_EC_FLOAT | QUILL_EC_QUANT, "a float or quantized");
  quill_shape xs;
  quill_vop_operand_shape(op, 0, &xs);
  int64_t axis;
  unsigned ax;
  if (quill_vop_attr_int(ctx, op, "axis", -1, &axis))
    st = QUILL_ERR_INVALID;
  else if (!quill_shape_norm_axis(axis, xs.rank, &ax))
    st = quill_vop_fail(ctx, op, "attribute 'axis' (%lld) is out of range for "
                                 "rank %u",
                        (long long)axis, xs.rank);
  if (quill_vop_expect_result(ctx, op, 0, &xs, quill_vop_operand_elem(op, 0)))
    st = QUILL_ERR_INVALID;
  return st;
}
