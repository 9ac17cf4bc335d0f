/*
 * ops_nn.c - import of ONNX neural-network ops: Conv, ConvTranspose,
 * MaxPool, AveragePool, global pooling, Gemm, MatMul, BatchNormalization,
 * LayerNormalization, Softmax, LogSoftmax and the Reduce* ops.
 *
 * Window attributes are read into a quill_window (ir/shape.h); auto_pad is
 * resolved to explicit pads so the Quill op always carries
 *
 *   conv2d {strides, pads = [top, left, bottom, right], dilations, group}
 *
 * Softmax before opset 13 works on the input flattened to 2-D at `axis`;
 * unless axis is the last one it is imported as reshape -> softmax(axis=1)
 * -> reshape.
 */
#include <string.h>

#include "frontends/onnx/onnx_impl.h"

/* Read kernel/strides/pads/dilations (+ group, output_padding, ceil_mode)
 * and resolve auto_pad. `in` is x's shape, `kernel` the window sizes. */
static quill_status read_window(onnx_importer *im, const onnx_node *n,
                                const quill_shape *in, const int64_t *kernel,
                                bool transpose, quill_window *w) {
  unsigned ns = in->rank - 2;
  int64_t len, tmp[2 * QUILL_MAX_RANK];
  quill_window_init(w, ns);
  static const char *const lists[] = {"strides", "dilations", "pads",
                                      "output_padding"};
  int64_t *dst[] = {w->strides, w->dilations, w->pads, w->output_padding};
  for (unsigned k = 0; k < 4; k++) {
    unsigned want = k == 2 ? 2 * ns : ns;
    if (onnx_attr_ints(im, n, lists[k], tmp, 2 * QUILL_MAX_RANK, &len))
      return QUILL_ERR_INVALID;
    if (len < 0)
      continue;
    if (len != (int64_t)want)
      return onnx_error(im, n, "attribute '%s' must have %u elements, got "
                               "%lld",
                        lists[k], want, (long long)len);
    for (unsigned i = 0; i < want; i++)
      if (tmp[i] < (k < 2 ? 1 : 0))
        return onnx_error(im, n, "attribute '%s' has invalid value %lld",
                          lists[k], (long long)tmp[i]);
    memcpy(dst[k], tmp, want * sizeof *tmp);
  }
  const char *ap;
  if (onnx_attr_string(im, n, "auto_pad", "NOTSET", &ap))
    return QUILL_ERR_INVALID;
  if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
    quill_window_same_pads(w, in->dims + 2, kernel, ap[5] == 'U', transpose);
  } else if (!strcmp(ap, "VALID")) {
    memset(w->pads, 0, sizeof w->pads);
  } else if (strcmp(ap, "NOTSET")) {
    return onnx_error(im, n, "unknown auto_pad \"%s\"", ap);
  }
  return QUILL_OK;
}

static quill_status check_rank(onnx_importer *im, const onnx_node *n,
                               const quill_shape *s, unsigned lo, unsigned hi,
                               const char *what) {
  if (s->rank < lo || s->rank > hi)
    return onnx_error(im, n, "%s must have rank %u%s, got rank %u", what, lo,
                      hi > lo ? " or more" : "", s->rank);
  return QUILL_OK;
}

/* x -> [N, C, 1, L] or w -> [M, C/g, 1, K] for a 1-D convolution. */
static void insert_unit_dim(const quill_shape *s, quill_shape *out) {
  int64_t d[4] = {s->dims[0], s->dims[1], 1, s->dims[2]};
  quill_shape_set(out, 4, d);
}

/* The window of a Conv / ConvTranspose / QLinearConv / ConvInteger node
 * (strides, pads with auto_pad resolved, dilations, group, output padding
 * or output_shape), checked against the weight's kernel, and the result
 * shape. 1-D convolutions (3-D x and w) get the equivalent 2-D window over
 * [N, C, 1, L] and a 4-D result shape. */
quill_status onnx_conv_window(onnx_importer *im, const onnx_node *n,
                              const quill_shape *x, const quill_shape *w,
                              bool tr, quill_window *win, quill_shape *out) {
  bool one_d = x->rank == 3 && w->rank == 3;
  if (!one_d && (x->rank != 4 || w->rank != 4))
    return onnx_error(im, n, "only 1-D and 2-D convolutions (3-D or 4-D input "
                             "and weight) are supported, got ranks %u and %u",
                      x->rank, w->rank);
  unsigned ns = x->rank - 2;
  if (read_window(im, n, x, w->dims + 2, tr, win) ||
      onnx_attr_int(im, n, "group", 1, &win->group))
    return QUILL_ERR_INVALID;
  int64_t ks[QUILL_MAX_RANK], klen;
  if (onnx_attr_ints(im, n, "kernel_shape", ks, QUILL_MAX_RANK, &klen))
    return QUILL_ERR_INVALID;
  bool kok = klen < 0 || klen == (int64_t)ns;
  for (unsigned i = 0; kok && klen >= 0 && i < ns; i++)
    kok = ks[i] == w->dims[2 + i];
  if (!kok)
    return onnx_error(im, n, "attribute 'kernel_shape' does not match the "
                             "weight shape");
  int64_t os[QUILL_MAX_RANK], oslen = -1;
  if (tr && onnx_attr_ints(im, n, "output_shape", os, QUILL_MAX_RANK, &oslen))
    return QUILL_ERR_INVALID;
  if (oslen >= 0) {
    /* Explicit output_shape (spatial dims, or full rank): derive pads. */
    const int64_t *sp = oslen == (int64_t)ns + 2 ? os + 2 : os;
    if (oslen != (int64_t)ns && oslen != (int64_t)ns + 2)
      return onnx_error(im, n, "attribute 'output_shape' must have %u or %u "
                               "elements",
                        ns, ns + 2);
    const char *ap;
    if (onnx_attr_string(im, n, "auto_pad", "NOTSET", &ap))
      return QUILL_ERR_INVALID;
    for (unsigned i = 0; i < ns; i++) {
      int64_t total = win->strides[i] * (x->dims[2 + i] - 1) +
                      win->output_padding[i] +
                      (w->dims[2 + i] - 1) * win->dilations[i] + 1 - sp[i];
      if (total < 0) {
        /* A larger output than the natural one: extra output padding. */
        win->output_padding[i] -= total;
        total = 0;
      }
      int64_t half = total / 2;
      bool lower = !strcmp(ap, "SAME_LOWER");
      win->pads[i] = lower ? total - half : half;
      win->pads[i + ns] = lower ? half : total - half;
    }
  }
  quill_shape x4 = *x, w4 = *w;
  if (one_d) {
    quill_window w1 = *win;
    quill_window_init(win, 2);
    win->group = w1.group;
    win->strides[1] = w1.strides[0];
    win->dilations[1] = w1.dilations[0];
    win->pads[1] = w1.pads[0];
    win->pads[3] = w1.pads[1];
    win->output_padding[1] = w1.output_padding[0];
    insert_unit_dim(x, &x4);
    insert_unit_dim(w, &w4);
  }
  quill_strbuf why;
  quill_strbuf_init(&why, im->ctx);
  bool ok = tr ? quill_shape_conv_transpose(&x4, &w4, win, out, &why)
               : quill_shape_conv(&x4, &w4, win, out, &why);
  if (!ok)
    onnx_shape_error(im, n, "invalid shapes", &why);
  quill_strbuf_free(&why);
  return ok ? QUILL_OK : QUILL_ERR_INVALID;
}

/* v with shape s (a constant is retyped, anything else reshaped). */
quill_status onnx_reshape_value(onnx_importer *im, const onnx_node *n,
                                quill_value *v, const quill_shape *s,
                                quill_value **out) {
  quill_type *t = onnx_type(im, s, onnx_elem(v));
  const quill_attr *c = quill_value_constant(v);
  if (!t)
    return QUILL_ERR_NOMEM;
  if (t == quill_value_type(v)) {
    *out = v;
    return QUILL_OK;
  }
  if (c)
    return onnx_emit_constant(im, n,
                              quill_attr_dense(im->ctx, t,
                                               quill_attr_dense_data(c),
                                               quill_attr_dense_size(c)),
                              out);
  return onnx_emit1(im, n, QUILL_OP_RESHAPE, 1, &v, t, 0, NULL, out);
}

/* Conv / ConvTranspose (1-D through the 2-D op, and 2-D). */
quill_status onnx_import_conv(onnx_importer *im, const onnx_node *n) {
  bool tr = !strcmp(n->op_type, "ConvTranspose");
  quill_value *ops[3] = {NULL, NULL, onnx_opt_input(n, 2)}, *r;
  if (onnx_input(im, n, 0, &ops[0]) || onnx_input(im, n, 1, &ops[1]))
    return QUILL_ERR_INVALID;
  quill_shape x, w, out;
  onnx_shape(ops[0], &x);
  onnx_shape(ops[1], &w);
  quill_window win;
  if (onnx_conv_window(im, n, &x, &w, tr, &win, &out))
    return QUILL_ERR_INVALID;
  if (x.rank == 3) {
    quill_shape x4, w4;
    insert_unit_dim(&x, &x4);
    insert_unit_dim(&w, &w4);
    if (onnx_reshape_value(im, n, ops[0], &x4, &ops[0]) ||
        onnx_reshape_value(im, n, ops[1], &w4, &ops[1]))
      return QUILL_ERR_INVALID;
  }
  quill_named_attr attrs[5] = {
      onnx_nattr_ints(im, "strides", 2, win.strides),
      onnx_nattr_ints(im, "pads", 4, win.pads),
      onnx_nattr_ints(im, "dilations", 2, win.dilations),
      onnx_nattr_int(im, "group", win.group),
      onnx_nattr_ints(im, "output_padding", 2, win.output_padding),
  };
  if (onnx_emit1(im, n, tr ? QUILL_OP_CONV_TRANSPOSE2D : QUILL_OP_CONV2D,
                 ops[2] ? 3 : 2, ops, onnx_type(im, &out, onnx_elem(ops[0])),
                 tr ? 5 : 4, attrs, &r))
    return QUILL_ERR_INVALID;
  if (x.rank == 3) {
    int64_t d[3] = {out.dims[0], out.dims[1], out.dims[3]};
    quill_shape o3;
    quill_shape_set(&o3, 3, d);
    if (onnx_reshape_value(im, n, r, &o3, &r))
      return QUILL_ERR_INVALID;
  }
  return onnx_set_output(im, n, 0, r);
}

/* MaxPool / AveragePool. */
quill_status onnx_import_pool(onnx_importer *im, const onnx_node *n) {
  bool is_max = !strcmp(n->op_type, "MaxPool");
  quill_value *x, *r;
  if (onnx_input(im, n, 0, &x))
    return QUILL_ERR_INVALID;
  quill_shape s, out;
  onnx_shape(x, &s);
  if (check_rank(im, n, &s, 3, QUILL_MAX_RANK, "the input"))
    return QUILL_ERR_INVALID;
  unsigned ns = s.rank - 2;
  int64_t kernel[QUILL_MAX_RANK], klen, ceil_mode, cip, order;
  if (onnx_attr_ints(im, n, "kernel_shape", kernel, QUILL_MAX_RANK, &klen))
    return QUILL_ERR_INVALID;
  if (klen != (int64_t)ns)
    return onnx_error(im, n, "attribute 'kernel_shape' must have %u elements",
                      ns);
  quill_window win;
  if (read_window(im, n, &s, kernel, false, &win) ||
      onnx_attr_int(im, n, "ceil_mode", 0, &ceil_mode) ||
      onnx_attr_int(im, n, "count_include_pad", 0, &cip) ||
      onnx_attr_int(im, n, "storage_order", 0, &order))
    return QUILL_ERR_INVALID;
  if (onnx_check_unused_outputs(im, n, 1))
    return QUILL_ERR_INVALID;
  for (unsigned i = 0; !is_max && i < ns; i++)
    if (win.dilations[i] != 1)
      return onnx_error(im, n, "dilated average pooling (attribute "
                               "'dilations') is not supported");
  memcpy(win.kernel, kernel, ns * sizeof *kernel);
  win.ceil_mode = ceil_mode != 0;
  quill_strbuf why;
  quill_strbuf_init(&why, im->ctx);
  bool ok = quill_shape_pool(&s, &win, &out, &why);
  if (!ok)
    onnx_shape_error(im, n, "invalid window", &why);
  quill_strbuf_free(&why);
  if (!ok)
    return QUILL_ERR_INVALID;
  quill_named_attr attrs[5] = {
      onnx_nattr_ints(im, "kernel_shape", ns, win.kernel),
      onnx_nattr_ints(im, "strides", ns, win.strides),
      onnx_nattr_ints(im, "pads", 2 * ns, win.pads),
      onnx_nattr_int(im, "ceil_mode", ceil_mode != 0),
      is_max ? onnx_nattr_ints(im, "dilations", ns, win.dilations)
             : onnx_nattr_int(im, "count_include_pad", cip != 0),
  };
  if (onnx_emit1(im, n, is_max ? QUILL_OP_MAXPOOL : QUILL_OP_AVGPOOL, 1, &x,
                 onnx_type(im, &out, onnx_elem(x)), 5, attrs, &r))
    return QUILL_ERR_INVALID;
  return onnx_set_output(im, n, 0, r);
}

quill_status onnx_import_global_pool(onnx_importer *im, const onnx_node *n) {
  quill_value *x, *r;
  if (onnx_input(im, n, 0, &x))
    return QUILL_ERR_INVALID;
  quill_shape s, out;
  onnx_shape(x, &s);
  quill_strbuf why;
  quill_strbuf_init(&why, im->ctx);
  bool ok = quill_shape_global_pool(&s, &out, &why);
  if (!ok)
    onnx_shape_error(im, n, "invalid input", &why);
  quill_strbuf_free(&why);
  if (!ok || onnx_emit1(im, n,
                        n->op_type[6] == 'A' ? QUILL_OP_GLOBAL_AVGPOOL
                                             : QUILL_OP_GLOBAL_MAXPOOL,
                        1, &x, onnx_type(im, &out, onnx_elem(x)), 0, NULL, &r))
    return QUILL_ERR_INVALID;
  return onnx_set_output(im, n, 0, r);
}

quill_status onnx_import_gemm(onnx_importer *im, const onnx_node *n) {
  quill_value *ops[3] = {NULL, NULL, onnx_opt_input(n, 2)}, *r;
  double alpha, beta;
  int64_t ta, tb;
  if (onnx_input(im, n, 0, &ops[0]) || onnx_input(im, n, 1, &ops[1]) ||
      onnx_attr_float(im, n, "alpha", 1.0, &alpha) ||
      onnx_attr_float(im, n, "beta", 1.0, &beta) ||
      onnx_attr_int(im, n, "transA", 0, &ta) ||
      onnx_attr_int(im, n, "transB", 0, &tb))
    return QUILL_ERR_INVALID;
  quill_shape a, b, out;
  onnx_shape(ops[0], &a);
  onnx_shape(ops[1], &b);
  quill_strbuf why;
  quill_strbuf_init(&why, im->ctx);
  bool ok = quill_shape_gemm(&a, &b, ta != 0, tb != 0, &out, &why);
  if (ok && ops[2]) {
    quill_shape c;
    onnx_shape(ops[2], &c);
    ok = quill_shape_broadcastable_to(&c, &out, &why);
  }
  if (!ok)
    onnx_shape_error(im, n, "incompatible operand shapes", &why);
  quill_strbuf_free(&why);
  if (!ok)
    return QUILL_ERR_INVALID;
  quill_named_attr attrs[4] = {
      onnx_nattr_float(im, "alpha", alpha),
      onnx_nattr_float(im, "beta", beta),
      onnx_nattr_int(im, "trans_a", ta != 0),
      onnx_nattr_int(im, "trans_b", tb != 0),
  };
  if (onnx_emit1(im, n, QUILL_OP_GEMM, ops[2] ? 3 : 2, ops,
                 onnx_type(im, &out, onnx_elem(ops[0])), 4, attrs, &r))
    return QUILL_ERR_INVALID;
  return onnx_set_output(im, n, 0, r);
}

quill_status onnx_import_matmul(onnx_importer *im, const onnx_node *n) {
  quill_value *ops[2], *r;
  if (onnx_input(im, n, 0, &ops[0]) || onnx_input(im, n, 1, &ops[1]))
    return QUILL_ERR_INVALID;
  quill_shape a, b, out;
  onnx_shape(ops[0], &a);
  onnx_shape(ops[1], &b);
  quill_strbuf why;
  quill_strbuf_init(&why, im->ctx);
  bool ok = quill_shape_matmul(&a, &b, &out, &why);
  if (!ok)
    onnx_shape_error(im, n, "incompatible operand shapes", &why);
  quill_strbuf_free(&why);
  if (!ok || onnx_emit1(im, n, QUILL_OP_MATMUL, 2, ops,
                        onnx_type(im, &out, onnx_elem(ops[0])), 0, NULL, &r))
    return QUILL_ERR_INVALID;
  return onnx_set_output(im, n, 0, r);
}

/* A scalar f32-like constant of element type e. */
static quill_status scalar_constant(onnx_importer *im, const onnx_node *n,
                                    quill_type *e, double v,
                                    quill_value **out) {
  quill_type *t = quill_type_tensor(im->ctx, e, 0, NULL);
  quill_tensor tt;
  if (!t || quill_tensor_alloc(im->ctx, t, &tt))
    return QUILL_ERR_NOMEM;
  quill_tensor_set_f64(&tt, 0, v);
  const quill_attr *a = quill_tensor_to_attr(im->ctx, &tt);
  quill_tensor_free(im->ctx, &tt);
  return onnx_emit_constant(im, n, a, out);
}

/* LayerNormalization's optional outputs Mean and InvStdDev (x's shape with
 * the normalized dims kept as 1), computed with reductions when used:
 *   mean = reduce_mean(x), inv = 1 / sqrt(reduce_mean((x - mean)^2) + eps) */
static quill_status layer_norm_stats(onnx_importer *im, const onnx_node *n,
                                     quill_value *x, unsigned axis,
                                     double eps) {
  bool want_mean = onnx_output_used(im, n, 1);
  bool want_inv = onnx_output_used(im, n, 2);
  if (!want_mean && !want_inv)
    return QUILL_OK;
  quill_shape s, rs;
  onnx_shape(x, &s);
  int64_t axes[QUILL_MAX_RANK];
  unsigned na = 0;
  rs = s;
  for (unsigned i = axis; i < s.rank; i++) {
    axes[na++] = i;
    rs.dims[i] = 1;
  }
  quill_type *e = onnx_elem(x);
  quill_type *rt = onnx_type(im, &rs, e);
  quill_named_attr attrs[2] = {onnx_nattr_ints(im, "axes", na, axes),
                               onnx_nattr_int(im, "keepdims", 1)};
  quill_value *mean, *ops[2], *d, *sq, *var, *ve, *sd, *inv, *epsv;
  if (onnx_emit1(im, n, QUILL_OP_REDUCE_MEAN, 1, &x, rt, 2, attrs, &mean))
    return QUILL_ERR_INVALID;
  if (want_mean && onnx_set_output(im, n, 1, mean))
    return QUILL_ERR_INVALID;
  if (!want_inv)
    return QUILL_OK;
  ops[0] = x, ops[1] = mean;
  if (onnx_emit1(im, n, QUILL_OP_SUB, 2, ops, quill_value_type(x), 0, NULL,
                 &d))
    return QUILL_ERR_INVALID;
  ops[0] = d, ops[1] = d;
  if (onnx_emit1(im, n, QUILL_OP_MUL, 2, ops, quill_value_type(x), 0, NULL,
                 &sq) ||
      onnx_emit1(im, n, QUILL_OP_REDUCE_MEAN, 1, &sq, rt, 2, attrs, &var) ||
      scalar_constant(im, n, e, eps, &epsv))
    return QUILL_ERR_INVALID;
  ops[0] = var, ops[1] = epsv;
  if (onnx_emit1(im, n, QUILL_OP_ADD, 2, ops, rt, 0, NULL, &ve) ||
      onnx_emit1(im, n, QUILL_OP_SQRT, 1, &ve, rt, 0, NULL, &sd) ||
      onnx_emit1(im, n, QUILL_OP_RECIPROCAL, 1, &sd, rt, 0, NULL, &inv))
    return QUILL_ERR_INVALID;
  return onnx_set_output(im, n, 2, inv);
}

/* BatchNormalization (inference) / LayerNormalization. */
quill_status onnx_import_norm(onnx_importer *im, const onnx_node *n) {
  bool bn = n->op_type[0] == 'B';
  quill_value *ops[5] = {0}, *r;
  unsigned nops = bn ? 5 : (onnx_opt_input(n, 2) ? 3 : 2);
  for (unsigned i = 0; i < nops; i++)
    if (onnx_input(im, n, i, &ops[i]))
      return QUILL_ERR_INVALID;
  double eps;
  int64_t axis = -1, training = 0, is_test = 1, spatial = 1;
  if (onnx_attr_float(im, n, "epsilon", 1e-5, &eps) ||
      (!bn && onnx_attr_int(im, n, "axis", -1, &axis)) ||
      (bn && onnx_attr_int(im, n, "training_mode", 0, &training)) ||
      (bn && n->version < 7 && onnx_attr_int(im, n, "is_test", 0, &is_test)) ||
      (bn && n->version < 9 && onnx_attr_int(im, n, "spatial", 1, &spatial)))
    return QUILL_ERR_INVALID;
  if (training || !is_test)
    return onnx_error(im, n, "training mode is not supported");
  if (!spatial)
    return onnx_error(im, n, "spatial=0 (per-activation statistics) is not "
                             "supported");
  quill_shape xs;
  onnx_shape(ops[0], &xs);
  unsigned ax = 0;
  if (!bn && !quill_shape_norm_axis(axis, xs.rank, &ax))
    return onnx_error(im, n, "attribute 'axis' (%lld) is out of range for "
                             "rank %u",
                      (long long)axis, xs.rank);
  if (onnx_check_unused_outputs(im, n, bn ? 1 : 3))
    return QUILL_ERR_INVALID;
  quill_named_attr attrs[2] = {onnx_nattr_float(im, "epsilon", eps),
                               onnx_nattr_int(im, "axis", axis)};
  if (onnx_emit1(im, n, bn ? QUILL_OP_BATCH_NORM : QUILL_OP_LAYER_NORM, nops,
                 ops, quill_value_type(ops[0]), bn ? 1 : 2, attrs, &r) ||
      onnx_set_output(im, n, 0, r))
    return QUILL_ERR_INVALID;
  return bn ? QUILL_OK : layer_norm_stats(im, n, ops[0], ax, eps);
}

static quill_status reshape_to(onnx_importer *im, const onnx_node *n,
                               quill_value *x, const quill_shape *s,
                               quill_value **out) {
  return onnx_emit1(im, n, QUILL_OP_RESHAPE, 1, &x,
                    onnx_type(im, s, onnx_elem(x)), 0, NULL, out);
}

quill_status onnx_import_softmax(onnx_importer *im, const onnx_node *n) {
  quill_opcode opc =
      n->op_type[0] == 'L' ? QUILL_OP_LOG_SOFTMAX : QUILL_OP_SOFTMAX;
  quill_value *x, *r;
  int64_t axis;
  if (onnx_input(im, n, 0, &x) ||
      onnx_attr_int(im, n, "axis", n->opset < 13 ? 1 : -1, &axis))
    return QUILL_ERR_INVALID;
  quill_shape s;
  onnx_shape(x, &s);
  unsigned ax;
  if (!quill_shape_norm_axis(axis, s.rank, &ax) && !(s.rank == 0 && axis == 0))
    return onnx_error(im, n, "attribute 'axis' (%lld) is out of range for "
                             "rank %u",
                      (long long)axis, s.rank);
  if (n->opset >= 13 || s.rank == 0 || ax == s.rank - 1) {
    quill_named_attr a = onnx_nattr_int(im, "axis", s.rank ? (int64_t)ax : 0);
    if (onnx_emit1(im, n, opc, 1, &x, quill_value_type(x), 1, &a, &r))
      return QUILL_ERR_INVALID;
    return onnx_set_output(im, n, 0, r);
  }
  /* Legacy semantics: softmax over the input flattened at axis. */
  quill_shape flat;
  quill_strbuf why;
  quill_strbuf_init(&why, im->ctx);
  bool ok = quill_shape_flatten(&s, ax, &flat, &why);
  quill_strbuf_free(&why);
  if (!ok)
    return onnx_error(im, n, "cannot flatten the input at axis %u", ax);
  quill_value *f, *sm;
  quill_named_attr a = onnx_nattr_int(im, "axis", 1);
  if (reshape_to(im, n, x, &flat, &f) ||
      onnx_emit1(im, n, opc, 1, &f, quill_value_type(f), 1, &a, &sm) ||
      reshape_to(im, n, sm, &s, &r))
    return QUILL_ERR_INVALID;
  return onnx_set_output(im, n, 0, r);
}

/* ReduceMean/Sum/Max/Min: axes from the attribute, or (ReduceSum from
 * opset 13, all from opset 18) from a constant second input. */
quill_status onnx_import_reduce(onnx_importer *im, const onnx_node *n) {
  static const struct {
    const char *name;
    quill_opcode opc;
  } ops[] = {{"ReduceMax", QUILL_OP_REDUCE_MAX},
             {"ReduceMean", QUILL_OP_REDUCE_MEAN},
             {"ReduceMin", QUILL_OP_REDUCE_MIN},
             {"ReduceSum", QUILL_OP_REDUCE_SUM}};
  quill_opcode opc = QUILL_OP_REDUCE_SUM;
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
    if (!strcmp(ops[i].name, n->op_type))
      opc = ops[i].opc;
  quill_value *x, *r;
  int64_t axes[QUILL_MAX_RANK], na = -1, keep, noop;
  if (onnx_input(im, n, 0, &x) ||
      onnx_attr_int(im, n, "keepdims", 1, &keep) ||
      onnx_attr_int(im, n, "noop_with_empty_axes", 0, &noop) ||
      onnx_attr_ints(im, n, "axes", axes, QUILL_MAX_RANK, &na))
    return QUILL_ERR_INVALID;
  if (na < 0 && onnx_opt_input(n, 1) &&
      onnx_const_ints(im, n, 1, axes, QUILL_MAX_RANK, &na))
    return QUILL_ERR_INVALID;
  quill_shape s, out;
  onnx_shape(x, &s);
  if (na <= 0) {
    if (noop)
      return onnx_import_identity(im, n);
    for (unsigned i = 0; i < s.rank; i++)
      axes[i] = i;
    na = s.rank;
  }
  for (int64_t i = 0; i < na; i++) {
    unsigned a;
    if (!quill_shape_norm_axis(axes[i], s.rank, &a))
      return onnx_error(im, n, "axis %lld is out of range for rank %u",
                        (long long)axes[i], s.rank);
    axes[i] = a;
  }
  quill_strbuf why;
  quill_strbuf_init(&why, im->ctx);
  bool ok = quill_shape_reduce(&s, (unsigned)na, axes, keep != 0, false, &out,
                               &why);
  if (!ok)
    onnx_shape_error(im, n, "invalid axes", &why);
  quill_strbuf_free(&why);
  if (!ok)
    return QUILL_ERR_INVALID;
  quill_named_attr attrs[2] = {onnx_nattr_ints(im, "axes", (size_t)na, axes),
                               onnx_nattr_int(im, "keepdims", keep != 0)};
  if (onnx_emit1(im, n, opc, 1, &x, onnx_type(im, &out, onnx_elem(x)), 2,
                 attrs, &r))
    return QUILL_ERR_INVALID;
  return onnx_set_output(im, n, 0, r);
}
