/*
 * ops_quant.c - import of ONNX's quantized ops: QuantizeLinear /
 * DequantizeLinear (the QDQ format), QLinearConv, QLinearMatMul,
 * ConvInteger, MatMulInteger and DynamicQuantizeLinear.
 *
 * ONNX passes quantized tensors as plain integers with separate scale and
 * zero point inputs; Quill keeps the parameters in the element type. So
 * scales and zero points must be constants (initializers, folded values or
 * inputs bound with quill_onnx_options.bindings), and every integer
 * operand is given its quantized type first:
 *
 *   integer constant        re-emitted as a constant of the quant type
 *                           (same storage bytes)
 *   other integer value     scast to the quant type (bits unchanged)
 *   quantized value         used as is when the parameters match, else
 *                           reinterpreted: scast to storage, scast back
 *
 *   QLinearConv(x, sx, zx, w, sw, zw, sy, zy, B)
 *     -> qconv2d %xq, %wq, %B : tensor<..x!quant.uniform<u8:f32, sy:zy>>
 *   ConvInteger(x, w, zx, zw)
 *     -> qconv2d %xq, %wq : tensor<..xi32>     (scales 1.0; raw accumulator)
 *
 * onnxruntime's dynamic quantization feeds MatMulInteger and ConvInteger
 * the zero point DynamicQuantizeLinear computes at run time, which no
 * Quill type can hold; such a node becomes the same sum in float (see
 * "run-time zero points" below).
 *
 * A 1-D scale (or zero point) with more than one element means per-axis
 * parameters: along `axis` for (De)QuantizeLinear, output channels (axis 0)
 * for convolution weights and columns (the last axis) for matmul's B. The
 * zero point's type is the storage type; without one it is the operand's
 * integer type (u8 for QuantizeLinear, or its output_dtype).
 */
#include <string.h>

#include "frontends/onnx/onnx_impl.h"

#define NO_INPUT (~0u)

/* ---- quantized element types ------------------------------------------------ */

typedef struct qspec {
  unsigned scale;        /* input index of the scale, NO_INPUT: all 1.0 */
  unsigned zero_point;   /* input index of the zero point, NO_INPUT: 0 */
  quill_type *storage;   /* storage when there is no zero point input */
  quill_type *expressed; /* expressed type when there is no scale input */
  int64_t axis;          /* axis for per-axis parameters */
  const char *what;      /* "x", "w", ... for messages */
} qspec;

/* Build the quantized element type for a tensor of shape `s` from the
 * scale / zero point inputs described by q. */
static quill_status quant_elem(onnx_importer *im, const onnx_node *n,
                               const qspec *q, const quill_shape *s,
                               quill_type **out) {
  quill_context *ctx = im->ctx;
  *out = NULL;
  quill_value *sv = q->scale == NO_INPUT ? NULL : onnx_opt_input(n, q->scale);
  quill_value *zv =
      q->zero_point == NO_INPUT ? NULL : onnx_opt_input(n, q->zero_point);
  if (q->scale != NO_INPUT && !sv)
    return onnx_error(im, n, "missing the scale of %s (input #%u)", q->what,
                      q->scale);
  const quill_attr *sa = sv ? quill_value_constant(sv) : NULL;
  const quill_attr *za = zv ? quill_value_constant(zv) : NULL;
  if (sv && !sa)
    return onnx_error(im, n, "the scale of %s (input #%u, '%s') must be a "
                             "constant (quantization parameters are part of "
                             "Quill's types)",
                      q->what, q->scale, n->proto->input[q->scale]);
  if (zv && !za)
    return onnx_error(im, n, "the zero point of %s (input #%u, '%s') must be "
                             "a constant (quantization parameters are part "
                             "of Quill's types)",
                      q->what, q->zero_point, n->proto->input[q->zero_point]);
  quill_type *stype = sa ? quill_attr_dense_type(sa) : NULL;
  quill_type *ztype = za ? quill_attr_dense_type(za) : NULL;
  quill_type *storage = za ? quill_type_elem(ztype) : q->storage;
  quill_type *expr = sa ? quill_type_elem(stype) : q->expressed;
  if (!storage || !quill_type_is_integer(storage) ||
      quill_type_bit_width(storage) > 32 ||
      quill_type_kind_of(storage) == QUILL_TYPE_U32)
    return onnx_error(im, n, "unsupported zero point type for %s (u8, i8, "
                             "u16, i16 or i32 expected)",
                      q->what);
  if (!expr || !quill_type_is_float(expr))
    return onnx_error(im, n, "the scale of %s must be a float tensor",
                      q->what);
  size_t ns = sa ? (size_t)quill_type_num_elements(stype) : 1;
  size_t nz = za ? (size_t)quill_type_num_elements(ztype) : 1;
  if ((sa && quill_type_rank(stype) > 1) || (za && quill_type_rank(ztype) > 1))
    return onnx_error(im, n, "the scale and zero point of %s must be scalars "
                             "or 1-D tensors (blocked quantization is not "
                             "supported)",
                      q->what);
  size_t cnt = ns > nz ? ns : nz;
  if (cnt == 0 || (ns != cnt && !(ns == 1 && !sa)) ||
      (nz != cnt && !(nz == 1 && !za)))
    return onnx_error(im, n, "the scale and zero point of %s have %zu and %zu "
                             "elements",
                      q->what, ns, nz);
  bool per_axis = cnt > 1;
  unsigned ax = 0;
  if (per_axis) {
    if (!quill_shape_norm_axis(q->axis, s->rank, &ax))
      return onnx_error(im, n, "axis %lld is out of range for %s of rank %u",
                        (long long)q->axis, q->what, s->rank);
    if (s->dims[ax] != (int64_t)cnt)
      return onnx_error(im, n, "%s has %zu quantization parameters but "
                               "dimension %u has size %lld",
                        q->what, cnt, ax, (long long)s->dims[ax]);
  }
  double *scales = quill_calloc(ctx, cnt, sizeof *scales);
  int64_t *zps = quill_calloc(ctx, cnt, sizeof *zps);
  quill_status st = scales && zps ? QUILL_OK : QUILL_ERR_NOMEM;
  for (size_t i = 0; !st && i < cnt; i++) {
    scales[i] = sa ? quill_attr_dense_get_f64(sa, i) : 1.0;
    zps[i] = za ? quill_attr_dense_get_i64(za, i) : 0;
  }
  int64_t qmin = quill_type_int_min(storage), qmax = quill_type_int_max(storage);
  const char *why = st ? NULL
                       : quill_type_quant_check(storage, expr, cnt, scales,
                                                zps, qmin, qmax);
  if (why)
    st = onnx_error(im, n, "invalid quantization parameters for %s: %s",
                    q->what, why);
  if (!st) {
    *out = per_axis ? quill_type_quant_axis(ctx, storage, expr, (int32_t)ax,
                                            cnt, scales, zps, qmin, qmax)
                    : quill_type_quant(ctx, storage, expr, scales[0], zps[0],
                                       qmin, qmax);
    if (!*out)
      st = QUILL_ERR_NOMEM;
  }
  quill_free(ctx, scales, cnt * sizeof *scales);
  quill_free(ctx, zps, cnt * sizeof *zps);
  return st;
}

/* The integer storage type of a value (its own type, or its quant type's
 * storage), NULL if it is neither. */
static quill_type *storage_of(const quill_value *v) {
  quill_type *e = onnx_elem(v);
  if (quill_type_is_quant(e))
    return quill_type_quant_storage(e);
  return quill_type_is_integer(e) ? e : NULL;
}

static quill_status scast(onnx_importer *im, const onnx_node *n,
                          quill_value *v, quill_type *elem, quill_value **out) {
  return onnx_emit1(im, n, QUILL_OP_SCAST, 1, &v,
                    quill_type_with_elem(im->ctx, quill_value_type(v), elem),
                    0, NULL, out);
}

/* Quant type e has elem's parameters and a range inside elem's (a Clip
 * narrowed it: Brevitas' QCDQ export): the value is read as it is. */
static bool narrower_range(const quill_type *e, const quill_type *elem) {
  if (!quill_type_is_quant(e) || !quill_type_is_quant(elem) ||
      quill_type_quant_storage(e) != quill_type_quant_storage(elem) ||
      quill_type_quant_expressed(e) != quill_type_quant_expressed(elem) ||
      quill_type_quant_axis_of(e) != quill_type_quant_axis_of(elem) ||
      quill_type_quant_num_params(e) != quill_type_quant_num_params(elem) ||
      quill_type_quant_qmin(e) < quill_type_quant_qmin(elem) ||
      quill_type_quant_qmax(e) > quill_type_quant_qmax(elem))
    return false;
  size_t n = quill_type_quant_num_params(e);
  return !memcmp(quill_type_quant_scales(e), quill_type_quant_scales(elem),
                 n * sizeof(double)) &&
         !memcmp(quill_type_quant_zero_points(e),
                 quill_type_quant_zero_points(elem), n * sizeof(int64_t));
}

/* v (ONNX integers, or a Quill quant value) as a tensor of quant `elem`. */
static quill_status quant_value(onnx_importer *im, const onnx_node *n,
                                quill_value *v, quill_type *elem,
                                const char *what, quill_value **out) {
  quill_type *want = quill_type_with_elem(im->ctx, quill_value_type(v), elem);
  quill_type *e = onnx_elem(v), *storage = quill_type_quant_storage(elem);
  if (!want)
    return QUILL_ERR_NOMEM;
  if (storage_of(v) != storage) {
    quill_strbuf sb;
    quill_strbuf_init(&sb, im->ctx);
    quill_type_print(quill_value_type(v), &sb);
    quill_strbuf_puts(&sb, " but its zero point has type ");
    quill_type_print(storage, &sb);
    quill_status st = onnx_error(im, n, "%s has type %s", what,
                                 quill_strbuf_str(&sb));
    quill_strbuf_free(&sb);
    return st;
  }
  if (e == elem || narrower_range(e, elem)) {
    *out = v;
    return QUILL_OK;
  }
  if (quill_type_is_quant(e)) /* other parameters: reinterpret the ints */
    return scast(im, n, v, storage, &v) || scast(im, n, v, elem, out)
               ? QUILL_ERR_INVALID
               : QUILL_OK;
  const quill_attr *c = quill_value_constant(v);
  if (c)
    return onnx_emit_constant(im, n,
                              quill_attr_dense(im->ctx, want,
                                               quill_attr_dense_data(c),
                                               quill_attr_dense_size(c)),
                              out);
  return scast(im, n, v, elem, out);
}

/* Quantize input `i` of the node with the parameters in q. */
static quill_status quant_input(onnx_importer *im, const onnx_node *n,
                                unsigned i, qspec *q, quill_value **out) {
  quill_value *v;
  if (onnx_input(im, n, i, &v))
    return QUILL_ERR_INVALID;
  if (!storage_of(v))
    return onnx_error(im, n, "%s (input #%u) must be an integer tensor",
                      q->what, i);
  if (!q->storage)
    q->storage = storage_of(v);
  quill_shape s;
  onnx_shape(v, &s);
  quill_type *elem;
  if (quant_elem(im, n, q, &s, &elem))
    return QUILL_ERR_INVALID;
  return quant_value(im, n, v, elem, q->what, out);
}

static quill_type *f32(onnx_importer *im) {
  return quill_type_scalar(im->ctx, QUILL_TYPE_F32);
}

/* ---- QuantizeLinear / DequantizeLinear ---------------------------------------- */

/* Attributes of newer versions that Quill cannot represent. */
static quill_status check_qdq_attrs(onnx_importer *im, const onnx_node *n) {
  int64_t block, precision;
  if (onnx_attr_int(im, n, "block_size", 0, &block) ||
      onnx_attr_int(im, n, "precision", 0, &precision))
    return QUILL_ERR_INVALID;
  if (block)
    return onnx_error(im, n, "blocked quantization (block_size %lld) is not "
                             "supported",
                      (long long)block);
  if (precision)
    return onnx_error(im, n, "attribute 'precision' is not supported");
  return QUILL_OK;
}

quill_status onnx_import_quant(onnx_importer *im, const onnx_node *n) {
  bool deq = n->op_type[0] == 'D';
  quill_value *x, *sv, *r;
  int64_t axis, odt;
  if (onnx_input(im, n, 0, &x) || onnx_input(im, n, 1, &sv) ||
      onnx_attr_int(im, n, "axis", 1, &axis) ||
      onnx_attr_int(im, n, "output_dtype", 0, &odt) || check_qdq_attrs(im, n))
    return QUILL_ERR_INVALID;
  quill_type *expr = onnx_elem(deq ? sv : x);
  if (!quill_type_is_float(expr))
    return onnx_error(im, n, "%s must be a float tensor",
                      deq ? "the scale" : "the input");
  qspec q = {1, 2, NULL, expr, axis, deq ? "the input" : "the output"};
  if (deq) {
    if (odt && onnx_elem_type(im->ctx, (int32_t)odt) != expr)
      return onnx_error(im, n, "output_dtype %s differs from the scale's type",
                        onnx_data_type_name((int32_t)odt));
    if (!storage_of(x))
      return onnx_error(im, n, "the input must be an integer tensor");
    if (quant_input(im, n, 0, &q, &x) ||
        onnx_emit1(im, n, QUILL_OP_DEQUANTIZE, 1, &x,
                   quill_type_with_elem(im->ctx, quill_value_type(x), expr), 0,
                   NULL, &r))
      return QUILL_ERR_INVALID;
    return onnx_set_output(im, n, 0, r);
  }
  q.storage = odt ? onnx_elem_type(im->ctx, (int32_t)odt)
                  : quill_type_scalar(im->ctx, QUILL_TYPE_U8);
  quill_value *zv = onnx_opt_input(n, 2);
  if (odt && zv && onnx_elem(zv) != q.storage)
    return onnx_error(im, n, "output_dtype %s differs from the zero point's "
                             "type",
                      onnx_data_type_name((int32_t)odt));
  quill_shape s;
  onnx_shape(x, &s);
  quill_type *elem;
  if (quant_elem(im, n, &q, &s, &elem) ||
      onnx_emit1(im, n, QUILL_OP_QUANTIZE, 1, &x,
                 quill_type_with_elem(im->ctx, quill_value_type(x), elem), 0,
                 NULL, &r))
    return QUILL_ERR_INVALID;
  return onnx_set_output(im, n, 0, r);
}

/* ---- QLinearConv / ConvInteger ------------------------------------------------- */

/* The y_scale / y_zero_point result element type (inputs si, zi). */
static quill_status result_elem(onnx_importer *im, const onnx_node *n,
                                unsigned si, unsigned zi, quill_type **out) {
  qspec q = {si, zi, quill_type_scalar(im->ctx, QUILL_TYPE_U8), NULL, 0,
             "the output"};
  quill_shape scalar;
  quill_shape_set(&scalar, 0, NULL);
  return quant_elem(im, n, &q, &scalar, out);
}

static quill_status emit_conv(onnx_importer *im, const onnx_node *n,
                              quill_opcode opc, quill_value *const *ops,
                              unsigned nops, quill_type *relem,
                              quill_value **r) {
  quill_shape x, w, out;
  onnx_shape(ops[0], &x);
  onnx_shape(ops[1], &w);
  quill_window win;
  if (x.rank != 4 || w.rank != 4)
    return onnx_error(im, n, "only 2-D convolutions (4-D input and weight) "
                             "are supported, got ranks %u and %u",
                      x.rank, w.rank);
  if (onnx_conv_window(im, n, &x, &w, false, &win, &out))
    return QUILL_ERR_INVALID;
  quill_named_attr attrs[4] = {
      onnx_nattr_ints(im, "strides", 2, win.strides),
      onnx_nattr_ints(im, "pads", 4, win.pads),
      onnx_nattr_ints(im, "dilations", 2, win.dilations),
      onnx_nattr_int(im, "group", win.group),
  };
  return onnx_emit1(im, n, opc, nops, ops, onnx_type(im, &out, relem), 4,
                    attrs, r);
}

static quill_status emit_qconv(onnx_importer *im, const onnx_node *n,
                               quill_value *const *ops, unsigned nops,
                               quill_type *relem) {
  quill_value *r;
  if (emit_conv(im, n, QUILL_OP_QCONV2D, ops, nops, relem, &r))
    return QUILL_ERR_INVALID;
  return onnx_set_output(im, n, 0, r);
}

/* The matmul result shape of a and b into *out (else a shape error at the
 * node). */
static quill_status matmul_shape(onnx_importer *im, const onnx_node *n,
                                 const quill_value *a, const quill_value *b,
                                 quill_shape *out) {
  quill_shape as, bs;
  onnx_shape(a, &as);
  onnx_shape(b, &bs);
  quill_strbuf why;
  quill_strbuf_init(&why, im->ctx);
  bool ok = quill_shape_matmul(&as, &bs, out, &why);
  if (!ok)
    onnx_shape_error(im, n, "incompatible operand shapes", &why);
  quill_strbuf_free(&why);
  return ok ? QUILL_OK : QUILL_ERR_INVALID;
}

/* ---- run-time zero points (onnxruntime's dynamic quantization) ----------------- */

/* MatMulInteger(a, b, za, zb) and ConvInteger(x, w, zx, zw) whose zero
 * point is not a constant (DynamicQuantizeLinear's, computed per run) are
 * imported as the same sum in float:
 *
 *   cast<i32>(matmul(float(a) - float(za), float(b) - float(zb)))
 *
 * Every operand difference and product is an integer of at most 17 bits,
 * exact in f32, and so is every partial sum below 2^24: the result equals
 * ONNX's int32 accumulator while K * max|a - za| * max|b - zb| < 2^24
 * (u8 x s8: always for K <= 258, and for much larger K on real data), and
 * is its float rounding beyond. The float ops then run, compile and
 * quantize like any other. */
static bool runtime_zero_point(const onnx_node *n, unsigned i) {
  quill_value *z = onnx_opt_input(n, i);
  return z && !quill_value_constant(z);
}

/* float(v) as a tensor of v's shape (a quant value by its storage). */
static quill_status to_float(onnx_importer *im, const onnx_node *n,
                             quill_value *v, quill_value **out) {
  quill_type *st = storage_of(v);
  if (quill_type_is_quant(onnx_elem(v)) && scast(im, n, v, st, &v))
    return QUILL_ERR_INVALID;
  return onnx_emit1(im, n, QUILL_OP_CAST, 1, &v,
                    quill_type_with_elem(im->ctx, quill_value_type(v), f32(im)),
                    0, NULL, out);
}

/* Operand vi minus its zero point zi, in float. A 1-D zero point of more
 * than one element is per column (matmul's b: the last axis, as numpy
 * broadcasts it) or per output channel (conv's w: reshaped to [M,1,1,1]);
 * a's and x's must be single values. */
static quill_status float_operand(onnx_importer *im, const onnx_node *n,
                                  unsigned vi, unsigned zi, bool per_row,
                                  const char *what, quill_value **out) {
  quill_value *v, *z = onnx_opt_input(n, zi), *vf, *zf;
  if (onnx_input(im, n, vi, &v))
    return QUILL_ERR_INVALID;
  if (!storage_of(v) || (z && !storage_of(z)))
    return onnx_error(im, n, "%s (input #%u) and its zero point must be "
                             "integer tensors",
                      what, vi);
  if (to_float(im, n, v, &vf))
    return QUILL_ERR_INVALID;
  if (!z) {
    *out = vf;
    return QUILL_OK;
  }
  quill_shape zs, vs;
  onnx_shape(z, &zs);
  onnx_shape(v, &vs);
  int64_t cnt = zs.rank == 0 ? 1 : zs.dims[0];
  if (zs.rank > 1 || (cnt != 1 && (!strcmp(what, "a") || !strcmp(what, "x"))))
    return onnx_error(im, n, "the zero point of %s must be a single value "
                             "(got rank %u, %lld elements)",
                      what, zs.rank, (long long)cnt);
  if (to_float(im, n, z, &zf))
    return QUILL_ERR_INVALID;
  if (per_row && cnt != 1) {
    int64_t dims[4] = {cnt, 1, 1, 1};
    quill_shape rs;
    quill_shape_set(&rs, 4, dims);
    if (onnx_emit1(im, n, QUILL_OP_RESHAPE, 1, &zf, onnx_type(im, &rs, f32(im)),
                   0, NULL, &zf))
      return QUILL_ERR_INVALID;
  }
  return onnx_emit1(im, n, QUILL_OP_SUB, 2, (quill_value *[]){vf, zf},
                    quill_value_type(vf), 0, NULL, out);
}

static quill_status import_integer_in_float(onnx_importer *im,
                                            const onnx_node *n, bool conv) {
  quill_value *ops[2], *r;
  if (float_operand(im, n, 0, 2, false, conv ? "x" : "a", &ops[0]) ||
      float_operand(im, n, 1, 3, conv, conv ? "w" : "b", &ops[1]))
    return QUILL_ERR_INVALID;
  if (conv) {
    if (emit_conv(im, n, QUILL_OP_CONV2D, ops, 2, f32(im), &r))
      return QUILL_ERR_INVALID;
  } else {
    quill_shape out;
    if (matmul_shape(im, n, ops[0], ops[1], &out) ||
        onnx_emit1(im, n, QUILL_OP_MATMUL, 2, ops,
                   onnx_type(im, &out, f32(im)), 0, NULL, &r))
      return QUILL_ERR_INVALID;
  }
  quill_type *i32 = quill_type_scalar(im->ctx, QUILL_TYPE_I32);
  if (onnx_emit1(im, n, QUILL_OP_CAST, 1, &r,
                 quill_type_with_elem(im->ctx, quill_value_type(r), i32), 0,
                 NULL, &r))
    return QUILL_ERR_INVALID;
  return onnx_set_output(im, n, 0, r);
}

quill_status onnx_import_qconv(onnx_importer *im, const onnx_node *n) {
  quill_value *ops[3] = {NULL, NULL, NULL};
  if (!strcmp(n->op_type, "ConvInteger")) {
    if (runtime_zero_point(n, 2) || runtime_zero_point(n, 3))
      return import_integer_in_float(im, n, true);
    qspec qx = {NO_INPUT, 2, NULL, f32(im), 0, "x"};
    qspec qw = {NO_INPUT, 3, NULL, f32(im), 0, "w"};
    if (quant_input(im, n, 0, &qx, &ops[0]) ||
        quant_input(im, n, 1, &qw, &ops[1]))
      return QUILL_ERR_INVALID;
    return emit_qconv(im, n, ops, 2,
                      quill_type_scalar(im->ctx, QUILL_TYPE_I32));
  }
  qspec qx = {1, 2, NULL, NULL, 0, "x"};
  qspec qw = {4, 5, NULL, NULL, 0, "w"};
  quill_type *relem;
  if (quant_input(im, n, 0, &qx, &ops[0]) ||
      quant_input(im, n, 3, &qw, &ops[1]) || result_elem(im, n, 6, 7, &relem))
    return QUILL_ERR_INVALID;
  if (quill_type_quant_axis_of(onnx_elem(ops[0])) >= 0)
    return onnx_error(im, n, "x must be quantized per tensor");
  ops[2] = onnx_opt_input(n, 8);
  return emit_qconv(im, n, ops, ops[2] ? 3 : 2, relem);
}

/* ---- QLinearMatMul / MatMulInteger --------------------------------------------- */

quill_status onnx_import_qmatmul(onnx_importer *im, const onnx_node *n) {
  bool integer = !strcmp(n->op_type, "MatMulInteger");
  if (integer && (runtime_zero_point(n, 2) || runtime_zero_point(n, 3)))
    return import_integer_in_float(im, n, false);
  quill_value *a, *b, *ops[2], *r;
  if (onnx_input(im, n, 0, &a) || onnx_input(im, n, integer ? 1 : 3, &b))
    return QUILL_ERR_INVALID;
  quill_shape as, bs, out;
  if (matmul_shape(im, n, a, b, &out))
    return QUILL_ERR_INVALID;
  onnx_shape(a, &as);
  onnx_shape(b, &bs);
  /* A's parameters must be per tensor; B's may be per column. */
  int64_t bcol = bs.rank ? (int64_t)bs.rank - 1 : 0;
  qspec qa = {integer ? NO_INPUT : 1, integer ? 2 : 2, NULL, f32(im),
              as.rank ? (int64_t)as.rank - 2 : 0, "a"};
  qspec qb = {integer ? NO_INPUT : 4, integer ? 3 : 5, NULL, f32(im), bcol,
              "b"};
  quill_type *relem = quill_type_scalar(im->ctx, QUILL_TYPE_I32);
  if (quant_input(im, n, 0, &qa, &ops[0]) ||
      quant_input(im, n, integer ? 1 : 3, &qb, &ops[1]) ||
      (!integer && result_elem(im, n, 6, 7, &relem)))
    return QUILL_ERR_INVALID;
  if (quill_type_quant_axis_of(onnx_elem(ops[0])) >= 0)
    return onnx_error(im, n, "per-row quantization parameters for a are not "
                             "supported (only per tensor)");
  if (onnx_emit1(im, n, QUILL_OP_QMATMUL, 2, ops, onnx_type(im, &out, relem),
                 0, NULL, &r))
    return QUILL_ERR_INVALID;
  return onnx_set_output(im, n, 0, r);
}

/* ---- DynamicQuantizeLinear ------------------------------------------------------ */

quill_status onnx_import_dynamic_quant(onnx_importer *im, const onnx_node *n) {
  quill_value *x, *res[3];
  if (onnx_input(im, n, 0, &x))
    return QUILL_ERR_INVALID;
  if (onnx_elem(x) != f32(im))
    return onnx_error(im, n, "the input must be an f32 tensor");
  quill_shape scalar;
  quill_shape_set(&scalar, 0, NULL);
  quill_type *u8 = quill_type_scalar(im->ctx, QUILL_TYPE_U8);
  quill_type *types[3] = {
      quill_type_with_elem(im->ctx, quill_value_type(x), u8),
      onnx_type(im, &scalar, f32(im)), onnx_type(im, &scalar, u8)};
  onnx_emit_args a = {QUILL_OP_DYNAMIC_QUANTIZE, 1, &x, 3, types, 0, NULL};
  if (onnx_emit(im, n, &a, res))
    return QUILL_ERR_INVALID;
  for (unsigned i = 0; i < 3; i++)
    if (onnx_set_output(im, n, i, res[i]))
      return QUILL_ERR_INVALID;
  return QUILL_OK;
}
