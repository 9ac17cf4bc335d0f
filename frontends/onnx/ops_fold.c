/*
 * ops_fold.c - import of ONNX ops that produce constants under static
 * shapes: Constant, Shape, Size, ConstantOfShape, Range, Expand and Cast.
 *
 * Shape and Size only look at the operand's (static) type. ConstantOfShape
 * and Range need constant inputs and compute their result here; Cast and
 * Expand emit ops that onnx_emit folds when the operand is constant.
 */
#include <math.h>
#include <string.h>

#include "frontends/onnx/onnx_impl.h"
#include "targets/reference/ref.h"

/* Constant: value (tensor) or value_float(s) / value_int(s). */
quill_status onnx_import_constant(onnx_importer *im, const onnx_node *n) {
  const Onnx__AttributeProto *a;
  const quill_attr *dense = NULL;
  quill_context *ctx = im->ctx;
  if ((a = onnx_attr(n, "value"))) {
    if (!a->t)
      return onnx_error(im, n, "attribute 'value' must be a tensor");
    if (onnx_tensor_to_attr(im, a->t, n->loc, &dense))
      return QUILL_ERR_INVALID;
  } else if ((a = onnx_attr(n, "value_float")) ||
             (a = onnx_attr(n, "value_floats")) ||
             (a = onnx_attr(n, "value_int")) ||
             (a = onnx_attr(n, "value_ints"))) {
    bool is_float = strstr(a->name, "float") != NULL;
    bool list = a->name[strlen(a->name) - 1] == 's';
    int64_t cnt = list ? (int64_t)(is_float ? a->n_floats : a->n_ints) : 1;
    quill_type *e = quill_type_scalar(ctx, is_float ? QUILL_TYPE_F32
                                                    : QUILL_TYPE_I64);
    quill_type *t = quill_type_tensor(ctx, e, list ? 1 : 0, &cnt);
    quill_tensor tt;
    if (!t || quill_tensor_alloc(ctx, t, &tt))
      return QUILL_ERR_NOMEM;
    for (int64_t i = 0; i < cnt; i++) {
      if (is_float)
        quill_tensor_set_f64(&tt, (size_t)i, list ? a->floats[i] : a->f);
      else
        quill_tensor_set_i64(&tt, (size_t)i, list ? a->ints[i] : a->i);
    }
    dense = quill_tensor_to_attr(ctx, &tt);
    quill_tensor_free(ctx, &tt);
  } else {
    return onnx_error(im, n, "needs a 'value' attribute (sparse and string "
                             "constants are not supported)");
  }
  quill_value *r;
  if (onnx_emit_constant(im, n, dense, &r))
    return QUILL_ERR_INVALID;
  return onnx_set_output(im, n, 0, r);
}

/* Emit a 1-D or scalar i64 constant. */
static quill_status emit_i64s(onnx_importer *im, const onnx_node *n,
                              unsigned rank, size_t cnt, const int64_t *v,
                              quill_value **out) {
  int64_t d = (int64_t)cnt;
  quill_type *t = quill_type_tensor(
      im->ctx, quill_type_scalar(im->ctx, QUILL_TYPE_I64), rank, &d);
  if (!t)
    return QUILL_ERR_NOMEM;
  return onnx_emit_constant(im, n,
                            quill_attr_dense(im->ctx, t, v, cnt * sizeof *v),
                            out);
}

/* Shape (with opset-15 start/end) and Size. */
quill_status onnx_import_shape(onnx_importer *im, const onnx_node *n) {
  quill_value *x, *r;
  if (onnx_input(im, n, 0, &x))
    return QUILL_ERR_INVALID;
  quill_shape s;
  onnx_shape(x, &s);
  for (unsigned i = 0; i < s.rank; i++)
    if (s.dims[i] < 0)
      return onnx_error(im, n, "input shape is not static");
  if (n->op_type[1] == 'i') {
    int64_t cnt = quill_shape_num_elements(&s);
    if (emit_i64s(im, n, 0, 1, &cnt, &r))
      return QUILL_ERR_INVALID;
    return onnx_set_output(im, n, 0, r);
  }
  int64_t start, end, rank = s.rank;
  if (onnx_attr_int(im, n, "start", 0, &start) ||
      onnx_attr_int(im, n, "end", rank, &end))
    return QUILL_ERR_INVALID;
  if (start < 0)
    start += rank;
  if (end < 0)
    end += rank;
  start = start < 0 ? 0 : start > rank ? rank : start;
  end = end < 0 ? 0 : end > rank ? rank : end;
  if (end < start)
    end = start;
  if (emit_i64s(im, n, 1, (size_t)(end - start), s.dims + start, &r))
    return QUILL_ERR_INVALID;
  return onnx_set_output(im, n, 0, r);
}

quill_status onnx_import_cast(onnx_importer *im, const onnx_node *n) {
  quill_value *x, *r;
  int64_t to;
  if (onnx_input(im, n, 0, &x) || onnx_attr_int(im, n, "to", 0, &to))
    return QUILL_ERR_INVALID;
  quill_type *e = onnx_elem_type(im->ctx, (int32_t)to);
  if (!e)
    return onnx_error(im, n, "unsupported target type %s",
                      onnx_data_type_name((int32_t)to));
  if (onnx_emit1(im, n, QUILL_OP_CAST, 1, &x,
                 quill_type_with_elem(im->ctx, quill_value_type(x), e), 0,
                 NULL, &r))
    return QUILL_ERR_INVALID;
  return onnx_set_output(im, n, 0, r);
}

quill_status onnx_import_constant_of_shape(onnx_importer *im,
                                           const onnx_node *n) {
  int64_t dims[QUILL_MAX_RANK], rank;
  if (onnx_const_ints(im, n, 0, dims, QUILL_MAX_RANK, &rank))
    return QUILL_ERR_INVALID;
  for (int64_t i = 0; i < rank; i++)
    if (dims[i] < 0 || dims[i] > QUILL_MAX_DIM)
      return onnx_error(im, n, "dimension %lld out of range [0, %lld]",
                        (long long)dims[i], (long long)QUILL_MAX_DIM);
  quill_context *ctx = im->ctx;
  const Onnx__AttributeProto *va = onnx_attr(n, "value");
  const quill_attr *fill = NULL;
  if (va) {
    if (!va->t)
      return onnx_error(im, n, "attribute 'value' must be a tensor");
    if (onnx_tensor_to_attr(im, va->t, n->loc, &fill))
      return QUILL_ERR_INVALID;
    if (quill_type_num_elements(quill_attr_dense_type(fill)) != 1)
      return onnx_error(im, n, "attribute 'value' must have one element");
  }
  quill_type *e = fill ? quill_type_elem(quill_attr_dense_type(fill))
                       : quill_type_scalar(ctx, QUILL_TYPE_F32);
  quill_type *t = quill_type_tensor(ctx, e, (unsigned)rank, dims);
  quill_tensor tt;
  if (!t)
    return onnx_error(im, n, "invalid result shape");
  if (quill_type_num_elements(t) > ONNX_FOLD_MAX_ELEMENTS)
    return onnx_error(im, n, "result is too large to fold");
  if (quill_tensor_alloc(ctx, t, &tt))
    return QUILL_ERR_NOMEM;
  size_t eb = quill_type_elem_bytes(e), cnt = quill_tensor_num_elements(&tt);
  if (fill)
    for (size_t i = 0; i < cnt; i++)
      memcpy((char *)tt.data + i * eb, quill_attr_dense_data(fill), eb);
  const quill_attr *a = quill_tensor_to_attr(ctx, &tt);
  quill_tensor_free(ctx, &tt);
  quill_value *r;
  if (onnx_emit_constant(im, n, a, &r))
    return QUILL_ERR_INVALID;
  return onnx_set_output(im, n, 0, r);
}

/* Number of Range elements for integers, without overflow:
 * ceil((limit - start) / delta), 0 if the range is empty. */
static uint64_t int_range_count(int64_t start, int64_t limit, int64_t delta) {
  uint64_t diff, d;
  if (delta > 0) {
    if (limit <= start)
      return 0;
    diff = (uint64_t)limit - (uint64_t)start;
    d = (uint64_t)delta;
  } else {
    if (limit >= start)
      return 0;
    diff = (uint64_t)start - (uint64_t)limit;
    d = -(uint64_t)delta;
  }
  return diff / d + (diff % d != 0);
}

/* Range(start, limit, delta) of constant scalars, computed here. */
quill_status onnx_import_range(onnx_importer *im, const onnx_node *n) {
  double v[3];
  int64_t iv[3];
  quill_value *in0;
  if (onnx_input(im, n, 0, &in0))
    return QUILL_ERR_INVALID;
  quill_type *e = onnx_elem(in0);
  bool fl = quill_type_is_float(e);
  for (unsigned i = 0; i < 3; i++) {
    int64_t len;
    if (fl ? onnx_const_floats(im, n, i, &v[i], 1, &len)
           : onnx_const_ints(im, n, i, &iv[i], 1, &len))
      return QUILL_ERR_INVALID;
    if (len != 1)
      return onnx_error(im, n, "input #%u must be a scalar", i);
  }
  if (fl ? v[2] == 0 : iv[2] == 0)
    return onnx_error(im, n, "delta must not be zero");
  int64_t cnt;
  if (fl) {
    double c = ceil((v[1] - v[0]) / v[2]);
    if (!(c <= (double)ONNX_FOLD_MAX_ELEMENTS)) /* also NaN */
      return onnx_error(im, n, "result is too large to fold");
    cnt = c > 0 ? (int64_t)c : 0;
  } else {
    uint64_t c = int_range_count(iv[0], iv[1], iv[2]);
    if (c > (uint64_t)ONNX_FOLD_MAX_ELEMENTS)
      return onnx_error(im, n, "result is too large to fold");
    cnt = (int64_t)c;
  }
  quill_type *t = quill_type_tensor(im->ctx, e, 1, &cnt);
  quill_tensor tt;
  if (!t || quill_tensor_alloc(im->ctx, t, &tt))
    return QUILL_ERR_NOMEM;
  int64_t x = fl ? 0 : iv[0];
  for (int64_t i = 0; i < cnt; i++) {
    if (fl) {
      quill_tensor_set_f64(&tt, (size_t)i, v[0] + (double)i * v[2]);
    } else {
      /* Every value lies between start and limit: accumulate (the step
       * after the last one is never taken). */
      quill_tensor_set_i64(&tt, (size_t)i, x);
      if (i + 1 < cnt)
        x += iv[2];
    }
  }
  const quill_attr *a = quill_tensor_to_attr(im->ctx, &tt);
  quill_tensor_free(im->ctx, &tt);
  quill_value *r;
  if (onnx_emit_constant(im, n, a, &r))
    return QUILL_ERR_INVALID;
  return onnx_set_output(im, n, 0, r);
}

/* Expand(x, shape) -> x + zeros(broadcast shape) (folded for constant x);
 * identity if the shape does not change. */
quill_status onnx_import_expand(onnx_importer *im, const onnx_node *n) {
  quill_value *x, *r;
  int64_t dims[QUILL_MAX_RANK], rank;
  if (onnx_input(im, n, 0, &x) ||
      onnx_const_ints(im, n, 1, dims, QUILL_MAX_RANK, &rank))
    return QUILL_ERR_INVALID;
  for (int64_t i = 0; i < rank; i++)
    if (dims[i] > QUILL_MAX_DIM)
      return onnx_error(im, n, "dimension %lld is too large (at most %lld)",
                        (long long)dims[i], (long long)QUILL_MAX_DIM);
  quill_shape xs, ts, out;
  onnx_shape(x, &xs);
  quill_shape_set(&ts, (unsigned)rank, dims);
  quill_strbuf why;
  quill_strbuf_init(&why, im->ctx);
  bool ok = quill_shape_broadcast(&xs, &ts, &out, &why);
  if (!ok)
    onnx_shape_error(im, n, "shape does not broadcast", &why);
  quill_strbuf_free(&why);
  if (!ok)
    return QUILL_ERR_INVALID;
  quill_type *e = onnx_elem(x);
  if (quill_shape_matches(&xs, &out)) {
    if (onnx_emit1(im, n, QUILL_OP_IDENTITY, 1, &x, quill_value_type(x), 0,
                   NULL, &r))
      return QUILL_ERR_INVALID;
    return onnx_set_output(im, n, 0, r);
  }
  if (quill_type_kind_of(e) == QUILL_TYPE_BOOL || quill_type_is_quant(e))
    return onnx_error(im, n, "expanding bool or quantized tensors is not "
                             "supported");
  quill_type *t = onnx_type(im, &out, e);
  quill_tensor zeros;
  if (!t || quill_shape_num_elements(&out) > ONNX_FOLD_MAX_ELEMENTS ||
      quill_tensor_alloc(im->ctx, t, &zeros))
    return onnx_error(im, n, "result is too large");
  const quill_attr *za = quill_tensor_to_attr(im->ctx, &zeros);
  quill_tensor_free(im->ctx, &zeros);
  quill_value *ops[2] = {x, NULL};
  if (onnx_emit_constant(im, n, za, &ops[1]) ||
      onnx_emit1(im, n, QUILL_OP_ADD, 2, ops, t, 0, NULL, &r))
    return QUILL_ERR_INVALID;
  return onnx_set_output(im, n, 0, r);
}
