/*
 * ops_shape.c - writers of the ops that cut tensors apart: slice
 * (STRIDED_SLICE), split (SPLIT for equal parts, SPLIT_V otherwise) and
 * gather (GATHER).
 *
 * All three move int8 values without rescaling, so a quantized operand
 * and result must have equal parameters (as CONCATENATION's). slice and
 * split are layout-agnostic: they write in their result's layout (NHWC for
 * a 4-D value in an NHWC group) with the axes mapped to physical ones.
 * gather changes the rank and works on native data.
 *
 * slice follows ONNX: negative starts/ends count from the back and clamp
 * (targets/reference/kernels_shape.c). The writer resolves them at compile
 * time into the first index b, the step s and the length n of each axis,
 * and writes STRIDED_SLICE's begin = b, end = b + (n - 1) * s + sign(s),
 * strides = s; an end that would be -1 (a negative step running to the
 * front) is written with the axis's end_mask bit instead, since TFLite
 * reads a negative end as counting from the back:
 *
 *   x [1, 232, 7, 7] NHWC, slice {starts = [116], ends = [232], axes = [1]}
 *   STRIDED_SLICE(x, begin [0, 0, 0, 116], end [1, 7, 7, 232],
 *                 strides [1, 1, 1, 1]) -> [1, 7, 7, 116]
 *
 * gather's constant indices are normalized (negative ones count from the
 * back, which TFLite's GATHER does not) and written as int32.
 */
#include <string.h>

#include "targets/tflite/export_impl.h"

static const int nhwc_perm[4] = {0, 2, 3, 1};

/* The logical axis behind physical axis j of a rank-r value in `lay`. */
static unsigned logical_axis(unsigned r, unsigned j, int lay) {
  return lay == TX_NHWC && r == 4 ? (unsigned)nhwc_perm[j] : j;
}

/* Equal quantization of operand 0 and every result (int8 data movement). */
static quill_status check_moves(tflite_exporter *ex, const quill_op *op,
                                const char *builtin) {
  unsigned e0 = ex->errors;
  quill_type *xe = quill_type_elem(tx_in_type(ex, op, 0));
  for (unsigned i = 0; i < quill_op_num_results(op) && ex->errors == e0; i++) {
    quill_type *ye = quill_type_elem(tx_out_type(ex, op, i));
    if (quill_type_is_quant(xe) && tx_check_act_i8(ex, op, xe, "input"))
      break;
    tx_check_same_quant(ex, op, xe, ye, builtin);
  }
  return ex->errors != e0 ? QUILL_ERR_INVALID : QUILL_OK;
}

/* ---- slice ------------------------------------------------------------------------------ */

quill_status tx_write_slice(tflite_exporter *ex, const quill_op *op) {
  quill_type *xt = tx_in_type(ex, op, 0), *yt = tx_out_type(ex, op, 0);
  if (!quill_type_has_static_shape(xt) || !quill_type_has_static_shape(yt))
    return tx_error(ex, op, "dynamic shapes are not supported");
  if (check_moves(ex, op, "STRIDED_SLICE"))
    return QUILL_ERR_INVALID;
  unsigned r = quill_type_rank(xt);
  int64_t starts[QUILL_MAX_RANK], ends[QUILL_MAX_RANK], axes[QUILL_MAX_RANK];
  int64_t steps[QUILL_MAX_RANK];
  int64_t n = quill_op_attr_ints(op, "starts", starts, QUILL_MAX_RANK);
  int64_t na = quill_op_attr_ints(op, "axes", axes, QUILL_MAX_RANK);
  int64_t ns = quill_op_attr_ints(op, "steps", steps, QUILL_MAX_RANK);
  if (n < 0 || quill_op_attr_ints(op, "ends", ends, QUILL_MAX_RANK) != n)
    return tx_error(ex, op, "'starts' and 'ends' must be int lists of equal "
                            "length");
  /* per logical axis: first index, step, length */
  int64_t first[QUILL_MAX_RANK], step[QUILL_MAX_RANK], len[QUILL_MAX_RANK];
  for (unsigned d = 0; d < r; d++) {
    first[d] = 0;
    step[d] = 1;
    len[d] = quill_type_dim(xt, d);
  }
  for (int64_t k = 0; k < n; k++) {
    int64_t a = na >= 0 ? axes[k] : k;
    a = a < 0 ? a + r : a;
    int64_t s = ns >= 0 ? steps[k] : 1;
    if (a < 0 || a >= (int64_t)r || s == 0)
      return tx_error(ex, op, "axis %lld or step %lld is out of range",
                      (long long)a, (long long)s);
    int64_t dim = quill_type_dim(xt, (unsigned)a), b = starts[k], e = ends[k];
    b = b < 0 ? b + dim : b;
    e = e < 0 ? e + dim : e;
    if (s > 0) {
      b = b < 0 ? 0 : b > dim ? dim : b;
      e = e < 0 ? 0 : e > dim ? dim : e;
      len[a] = e > b ? (e - b + s - 1) / s : 0;
    } else {
      b = b < 0 ? 0 : b > dim - 1 ? dim - 1 : b;
      e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
      len[a] = b > e ? (b - e - s - 1) / -s : 0;
    }
    first[a] = b;
    step[a] = s;
  }
  for (unsigned d = 0; d < r; d++) {
    if (len[d] != quill_type_dim(yt, d))
      return tx_error(ex, op, "the result shape does not match the slice");
    if (len[d] == 0)
      return tx_error(ex, op, "an empty slice has no TFLite form");
  }
  int lay = tx_layout_of(ex, tx_eout(ex, op, 0));
  int32_t begin[QUILL_MAX_RANK], end[QUILL_MAX_RANK], stride[QUILL_MAX_RANK];
  int64_t end_mask = 0;
  for (unsigned j = 0; j < r; j++) {
    unsigned d = logical_axis(r, j, lay);
    int64_t last = first[d] + (len[d] - 1) * step[d];
    begin[j] = (int32_t)first[d];
    stride[j] = (int32_t)step[d];
    end[j] = (int32_t)(step[d] > 0 ? last + 1 : last - 1);
    if (end[j] < 0) { /* runs to the front: TFLite would count from the back */
      end[j] = 0;
      end_mask |= (int64_t)1 << j;
    }
  }
  int32_t x = tx_in(ex, op, 0, lay), y = tx_out(ex, op, 0);
  int32_t ins[4] = {x, tx_const_i32(ex, "begin", r, begin),
                    tx_const_i32(ex, "end", r, end),
                    tx_const_i32(ex, "strides", r, stride)};
  if (x < 0 || y < 0 || ins[1] < 0 || ins[2] < 0 || ins[3] < 0)
    return QUILL_ERR_NOMEM;
  tx_op *o = tx_emit(ex, TFL_OP_STRIDED_SLICE, 4, ins, 1, &y);
  if (!o)
    return QUILL_ERR_NOMEM;
  o->opt_type = TFL_OPT_StridedSliceOptions;
  tx_opt_int(ex, o, TFL_STRIDED_SLICE_END_MASK, TXO_I32, end_mask, 0);
  return QUILL_OK;
}

/* ---- split -------------------------------------------------------------------------------- */

quill_status tx_write_split(tflite_exporter *ex, const quill_op *op) {
  quill_type *xt = tx_in_type(ex, op, 0);
  unsigned nr = quill_op_num_results(op), r = quill_type_rank(xt);
  if (!quill_type_has_static_shape(xt))
    return tx_error(ex, op, "dynamic shapes are not supported");
  if (check_moves(ex, op, "SPLIT"))
    return QUILL_ERR_INVALID;
  int64_t axis = quill_op_attr_int(op, "axis", 0);
  axis = axis < 0 ? axis + r : axis;
  int lay = tx_layout_of(ex, tx_eout(ex, op, 0));
  int32_t pa = tx_phys_axis(r, (int)axis, lay);
  int32_t *sizes = tx_alloc(ex, nr * sizeof *sizes);
  int32_t *outs = tx_alloc(ex, nr * sizeof *outs);
  if (!sizes || !outs)
    return QUILL_ERR_NOMEM;
  bool equal = true;
  for (unsigned i = 0; i < nr; i++) {
    quill_type *yt = tx_out_type(ex, op, i);
    if (!quill_type_has_static_shape(yt))
      return tx_error(ex, op, "dynamic shapes are not supported");
    sizes[i] = (int32_t)quill_type_dim(yt, (unsigned)axis);
    if (sizes[i] == 0)
      return tx_error(ex, op, "an empty part (result #%u) has no TFLite form",
                      i);
    equal &= sizes[i] == sizes[0];
    if (tx_layout_of(ex, tx_eout(ex, op, i)) != lay)
      return tx_error(ex, op, "internal error: the parts of a split have "
                              "different layouts");
    outs[i] = tx_out(ex, op, i);
  }
  int32_t x = tx_in(ex, op, 0, lay);
  int32_t at = tx_const(ex, "axis", TFL_INT32, 0, NULL, &pa, 4, true);
  if (x < 0 || at < 0)
    return QUILL_ERR_NOMEM;
  tx_op *o;
  if (equal) { /* SPLIT(axis, x): every runtime has it */
    int32_t ins[2] = {at, x};
    o = tx_emit(ex, TFL_OP_SPLIT, 2, ins, nr, outs);
    if (!o)
      return QUILL_ERR_NOMEM;
    o->opt_type = TFL_OPT_SplitOptions;
  } else { /* SPLIT_V(x, size_splits, axis) */
    int32_t ins[3] = {x, tx_const_i32(ex, "size_splits", nr, sizes), at};
    if (ins[1] < 0)
      return QUILL_ERR_NOMEM;
    o = tx_emit(ex, TFL_OP_SPLIT_V, 3, ins, nr, outs);
    if (!o)
      return QUILL_ERR_NOMEM;
    o->opt_type = TFL_OPT_SplitVOptions;
  }
  tx_opt_int(ex, o, TFL_SPLIT_NUM_SPLITS, TXO_I32, nr, 0);
  return QUILL_OK;
}

/* ---- gather ------------------------------------------------------------------------------ */

quill_status tx_write_gather(tflite_exporter *ex, const quill_op *op) {
  quill_type *xt = tx_in_type(ex, op, 0), *it = tx_in_type(ex, op, 1);
  if (!quill_type_has_static_shape(xt) || !quill_type_has_static_shape(it))
    return tx_error(ex, op, "dynamic shapes are not supported");
  if (check_moves(ex, op, "GATHER"))
    return QUILL_ERR_INVALID;
  unsigned r = quill_type_rank(xt);
  int64_t axis = quill_op_attr_int(op, "axis", 0);
  axis = axis < 0 ? axis + r : axis;
  int64_t dim = quill_type_dim(xt, (unsigned)axis);
  int32_t idx;
  const quill_attr *ia = tx_in_const(ex, op, 1);
  if (ia) {
    size_t n = (size_t)quill_type_num_elements(it);
    int32_t *v = tx_alloc(ex, (n ? n : 1) * sizeof *v);
    if (!v)
      return QUILL_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
      int64_t k = quill_attr_dense_get_i64(ia, i);
      if (k < -dim || k >= dim)
        return tx_error(ex, op, "index %lld is out of range [%lld, %lld)",
                        (long long)k, (long long)-dim, (long long)dim);
      v[i] = (int32_t)(k < 0 ? k + dim : k);
    }
    const quill_value *iv = tx_ein(ex, op, 1);
    idx = tx_const(ex, quill_value_name(iv) ? quill_value_name(iv) : "indices",
                   TFL_INT32, quill_type_rank(it), quill_type_dims(it), v,
                   n * sizeof *v, false);
  } else {
    /* TFLite's GATHER refuses negative indices at run time, where ONNX
     * counts them from the back. */
    tx_warning(ex, op, "the indices are not a constant: TFLite's GATHER "
                       "takes no negative index");
    idx = tx_in(ex, op, 1, TX_NATIVE);
  }
  quill_type *yt = tx_out_type(ex, op, 0);
  if (tx_layout_of(ex, tx_eout(ex, op, 0)) == TX_NHWC &&
      !tx_layout_neutral(4, quill_type_dims(yt), TX_NHWC))
    return tx_error(ex, op, "a 4-D gather result read in NHWC layout is not "
                            "supported");
  int32_t x = tx_in(ex, op, 0, TX_NATIVE), y = tx_out(ex, op, 0);
  if (x < 0 || y < 0 || idx < 0)
    return QUILL_ERR_NOMEM;
  int32_t ins[2] = {x, idx};
  tx_op *o = tx_emit(ex, TFL_OP_GATHER, 2, ins, 1, &y);
  if (!o)
    return QUILL_ERR_NOMEM;
  o->opt_type = TFL_OPT_GatherOptions;
  tx_opt_int(ex, o, TFL_GATHER_AXIS, TXO_I32, axis, 0);
  return QUILL_OK;
}
