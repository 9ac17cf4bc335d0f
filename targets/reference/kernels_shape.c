/*
 * kernels_shape.c - reference kernels for constants and data movement:
 * constant, identity/reshape/flatten/squeeze/unsqueeze (one byte copy),
 * transpose, concat, split, slice, pad and gather, with ONNX semantics.
 *
 * These kernels never look at element values (except gather's indices and
 * pad's fill value), only at element *bytes*, so they work for every element
 * type, quantized ones included (a quantized pad fills the zero point). Each kernel first recomputes the result
 * shape from its operands and attributes and compares it with the
 * preallocated output, so a malformed op is reported, never read or
 * written out of bounds. Index-mapping kernels (transpose, slice, pad) walk
 * the output like an odometer and compute the source offset per element:
 *
 *   out index (o0, o1, ...)  ->  in offset  sum_d src_d(o_d) * stride_d
 */
#include <string.h>

#include "targets/reference/kernels.h"

static size_t elem_bytes(const quill_tensor *t) {
  return quill_type_elem_bytes(quill_type_elem(t->type));
}

static quill_status shape_mismatch(quill_context *ctx, const quill_op *op,
                                   const char *what) {
  return quill_error(ctx, quill_op_loc(op), "reference: '%s': %s",
                     quill_op_name(op), what);
}

static bool same_elem(const quill_tensor *a, const quill_tensor *b) {
  return elem_bytes(a) == elem_bytes(b);
}

/* Normalize an ONNX axis in [-rank, rank). */
static bool norm_axis(int64_t axis, unsigned rank, unsigned *out) {
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= (int64_t)rank)
    return false;
  *out = (unsigned)axis;
  return true;
}

/* Product of dims [from, to) of a static tensor type. */
static size_t dims_product(const quill_type *t, unsigned from, unsigned to) {
  size_t p = 1;
  for (unsigned d = from; d < to; d++)
    p *= (size_t)quill_type_dim(t, d);
  return p;
}

/* Advance an odometer over dims; returns false after the last index. */
static bool odometer_next(int64_t *index, const quill_type *t) {
  for (unsigned d = quill_type_rank(t); d-- > 0;) {
    if (++index[d] < quill_type_dim(t, d))
      return true;
    index[d] = 0;
  }
  return false;
}

/* ---- constant and plain copies -------------------------------------------- */

QUILL_REF_KERNEL(quill_ref_kernel_constant) {
  (void)in;
  const quill_attr *v = quill_op_attr(op, "value");
  if (!v || quill_attr_kind_of(v) != QUILL_ATTR_DENSE ||
      quill_attr_dense_size(v) != out[0].size)
    return shape_mismatch(ctx, op, "'value' must be a dense attribute of the "
                                   "result's size");
  if (out[0].size)
    memcpy(out[0].data, quill_attr_dense_data(v), out[0].size);
  return QUILL_OK;
}

/* identity, reshape, flatten, squeeze, unsqueeze: row-major data is the
 * same, only the type changes. */
QUILL_REF_KERNEL(quill_ref_kernel_copy) {
  if (in[0].size != out[0].size || !same_elem(&in[0], &out[0]) ||
      quill_tensor_num_elements(&in[0]) != quill_tensor_num_elements(&out[0]))
    return shape_mismatch(ctx, op, "operand and result element counts differ");
  if (out[0].size)
    memcpy(out[0].data, in[0].data, out[0].size);
  return QUILL_OK;
}

/* ---- transpose ------------------------------------------------------------ */

QUILL_REF_KERNEL(quill_ref_kernel_transpose) {
  const quill_tensor *x = &in[0];
  quill_tensor *y = &out[0];
  unsigned r = quill_type_rank(x->type);
  int64_t perm[QUILL_MAX_RANK], stride[QUILL_MAX_RANK], index[QUILL_MAX_RANK];
  bool seen[QUILL_MAX_RANK] = {false};
  int64_t n = quill_op_attr_ints(op, "perm", perm, QUILL_MAX_RANK);
  if (n < 0) {
    n = r;
    for (unsigned d = 0; d < r; d++)
      perm[d] = r - 1 - d;
  }
  if (n != (int64_t)r || quill_type_rank(y->type) != r || !same_elem(x, y))
    return shape_mismatch(ctx, op, "'perm' does not match the ranks");
  for (unsigned d = 0; d < r; d++) {
    if (perm[d] < 0 || perm[d] >= (int64_t)r || seen[perm[d]] ||
        quill_type_dim(y->type, d) != quill_type_dim(x->type, (unsigned)perm[d]))
      return shape_mismatch(ctx, op, "'perm' is not a permutation matching "
                                     "the result shape");
    seen[perm[d]] = true;
  }
  if (!y->size)
    return QUILL_OK;
  quill_ref_strides(x->type, stride);
  memset(index, 0, sizeof index);
  size_t eb = elem_bytes(x), i = 0;
  do {
    int64_t off = 0;
    for (unsigned d = 0; d < r; d++)
      off += index[d] * stride[perm[d]];
    memcpy((char *)y->data + i++ * eb, (const char *)x->data + off * eb, eb);
  } while (odometer_next(index, y->type));
  return QUILL_OK;
}

/* ---- concat and split ----------------------------------------------------- */

/* Check that `part` equals `whole` except along `axis`. */
static bool same_but_axis(const quill_type *part, const quill_type *whole,
                          unsigned axis) {
  unsigned r = quill_type_rank(whole);
  if (quill_type_rank(part) != r)
    return false;
  for (unsigned d = 0; d < r; d++)
    if (d != axis && quill_type_dim(part, d) != quill_type_dim(whole, d))
      return false;
  return true;
}

/* Concatenation and splitting are one loop: for each outer index, the
 * parts' inner blocks follow each other in the whole. */
static void concat_split(quill_tensor *whole, const quill_tensor *parts,
                         unsigned nparts, unsigned axis, bool to_whole) {
  size_t outer = dims_product(whole->type, 0, axis);
  size_t inner = dims_product(whole->type, axis + 1,
                              quill_type_rank(whole->type)) *
                 elem_bytes(whole);
  char *w = whole->data;
  for (size_t o = 0; o < outer; o++)
    for (unsigned k = 0; k < nparts; k++) {
      size_t block = (size_t)quill_type_dim(parts[k].type, axis) * inner;
      char *p = (char *)parts[k].data + o * block;
      if (block)
        memcpy(to_whole ? w : p, to_whole ? p : w, block);
      w += block;
    }
}

/* Validate parts against whole along the axis attribute. */
static quill_status check_parts(quill_context *ctx, const quill_op *op,
                                const quill_tensor *whole,
                                const quill_tensor *parts, unsigned n,
                                unsigned *axis) {
  unsigned r = quill_type_rank(whole->type);
  if (!norm_axis(quill_op_attr_int(op, "axis", 0), r, axis))
    return shape_mismatch(ctx, op, "'axis' is out of range");
  int64_t sum = 0;
  for (unsigned k = 0; k < n; k++) {
    if (!same_but_axis(parts[k].type, whole->type, *axis) ||
        !same_elem(&parts[k], whole))
      return shape_mismatch(ctx, op, "shapes differ outside the axis");
    sum += quill_type_dim(parts[k].type, *axis);
  }
  if (sum != quill_type_dim(whole->type, *axis))
    return shape_mismatch(ctx, op, "sizes along the axis do not add up");
  return QUILL_OK;
}

QUILL_REF_KERNEL(quill_ref_kernel_concat) {
  unsigned axis, n = quill_op_num_operands(op);
  quill_status st = check_parts(ctx, op, &out[0], in, n, &axis);
  if (st == QUILL_OK)
    concat_split(&out[0], in, n, axis, true);
  return st;
}

QUILL_REF_KERNEL(quill_ref_kernel_split) {
  unsigned axis, n = quill_op_num_results(op);
  quill_status st = check_parts(ctx, op, &in[0], out, n, &axis);
  if (st == QUILL_OK)
    concat_split((quill_tensor *)&in[0], out, n, axis, false);
  return st;
}

/* ---- slice ---------------------------------------------------------------- */

/* ONNX Slice: negative starts/ends count from the back; starts clamp to
 * [0, dim] ([0, dim-1] for negative steps), ends to [0, dim] ([-1, dim-1]). */
QUILL_REF_KERNEL(quill_ref_kernel_slice) {
  const quill_tensor *x = &in[0];
  quill_tensor *y = &out[0];
  unsigned r = quill_type_rank(x->type);
  int64_t starts[QUILL_MAX_RANK], ends[QUILL_MAX_RANK], axes[QUILL_MAX_RANK];
  int64_t steps[QUILL_MAX_RANK], first[QUILL_MAX_RANK], step[QUILL_MAX_RANK];
  int64_t stride[QUILL_MAX_RANK], index[QUILL_MAX_RANK];
  bool seen[QUILL_MAX_RANK] = {false};
  int64_t n = quill_op_attr_ints(op, "starts", starts, QUILL_MAX_RANK);
  if (n < 0 || n > (int64_t)r ||
      quill_op_attr_ints(op, "ends", ends, QUILL_MAX_RANK) != n)
    return shape_mismatch(ctx, op, "'starts' and 'ends' must be int lists of "
                                   "equal length up to the rank");
  int64_t na = quill_op_attr_ints(op, "axes", axes, QUILL_MAX_RANK);
  int64_t ns = quill_op_attr_ints(op, "steps", steps, QUILL_MAX_RANK);
  if ((na >= 0 && na != n) || (ns >= 0 && ns != n) ||
      quill_type_rank(y->type) != r || !same_elem(x, y))
    return shape_mismatch(ctx, op, "'axes' and 'steps' must match 'starts'");
  for (unsigned d = 0; d < r; d++) {
    first[d] = 0;
    step[d] = 1;
  }
  for (int64_t k = 0; k < n; k++) {
    unsigned d;
    int64_t s = ns >= 0 ? steps[k] : 1;
    if (!norm_axis(na >= 0 ? axes[k] : k, r, &d) || seen[d] || s == 0)
      return shape_mismatch(ctx, op, "bad or repeated axis, or zero step");
    seen[d] = true;
    int64_t dim = quill_type_dim(x->type, d), b = starts[k], e = ends[k];
    b = b < 0 ? b + dim : b;
    e = e < 0 ? e + dim : e;
    int64_t len;
    if (s > 0) {
      b = b < 0 ? 0 : b > dim ? dim : b;
      e = e < 0 ? 0 : e > dim ? dim : e;
      len = e > b ? (e - b + s - 1) / s : 0;
    } else {
      b = b < 0 ? 0 : b > dim - 1 ? dim - 1 : b;
      e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
      len = b > e ? (b - e - s - 1) / -s : 0;
    }
    if (len != quill_type_dim(y->type, d))
      return shape_mismatch(ctx, op, "result shape does not match the slice");
    first[d] = b;
    step[d] = s;
  }
  for (unsigned d = 0; d < r; d++)
    if (!seen[d] && quill_type_dim(y->type, d) != quill_type_dim(x->type, d))
      return shape_mismatch(ctx, op, "result shape does not match the slice");
  if (!y->size)
    return QUILL_OK;
  quill_ref_strides(x->type, stride);
  memset(index, 0, sizeof index);
  size_t eb = elem_bytes(x), i = 0;
  do {
    int64_t off = 0;
    for (unsigned d = 0; d < r; d++)
      off += (first[d] + index[d] * step[d]) * stride[d];
    memcpy((char *)y->data + i++ * eb, (const char *)x->data + off * eb, eb);
  } while (odometer_next(index, y->type));
  return QUILL_OK;
}

/* ---- pad ------------------------------------------------------------------ */

typedef enum pad_mode { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP } pad_mode;

/* Map an out-of-range source index i of a dim of size dim; -1 means "use
 * the fill value". */
static int64_t pad_source(int64_t i, int64_t dim, pad_mode mode) {
  if (i >= 0 && i < dim)
    return i;
  if (mode == PAD_CONSTANT || dim == 0)
    return -1;
  if (mode == PAD_EDGE)
    return i < 0 ? 0 : dim - 1;
  if (mode == PAD_WRAP)
    return ((i % dim) + dim) % dim;
  if (dim == 1) /* reflect */
    return 0;
  int64_t period = 2 * (dim - 1);
  i = ((i % period) + period) % period;
  return i < dim ? i : period - i;
}

QUILL_REF_KERNEL(quill_ref_kernel_pad) {
  const quill_tensor *x = &in[0];
  quill_tensor *y = &out[0];
  unsigned r = quill_type_rank(x->type);
  int64_t pads[2 * QUILL_MAX_RANK], stride[QUILL_MAX_RANK], index[QUILL_MAX_RANK];
  if (quill_op_attr_ints(op, "pads", pads, 2 * QUILL_MAX_RANK) != 2 * (int64_t)r ||
      quill_type_rank(y->type) != r || !same_elem(x, y))
    return shape_mismatch(ctx, op, "'pads' must hold 2 * rank ints");
  for (unsigned d = 0; d < r; d++)
    if (quill_type_dim(x->type, d) + pads[d] + pads[r + d] !=
        quill_type_dim(y->type, d))
      return shape_mismatch(ctx, op, "result shape does not match the pads");
  pad_mode mode = PAD_CONSTANT;
  const quill_attr *m = quill_op_attr(op, "mode");
  if (m && quill_attr_kind_of(m) == QUILL_ATTR_STRING) {
    static const char *const names[] = {"constant", "reflect", "edge", "wrap"};
    size_t len;
    const char *s = quill_attr_string_value(m, &len);
    unsigned k = 0;
    while (k < 4 && !(strlen(names[k]) == len && memcmp(names[k], s, len) == 0))
      k++;
    if (k == 4)
      return shape_mismatch(ctx, op, "'mode' must be constant, reflect, edge "
                                     "or wrap");
    mode = (pad_mode)k;
  }
  const quill_attr *va = quill_op_attr(op, "value");
  double value = 0.0;
  if (va && quill_attr_kind_of(va) == QUILL_ATTR_FLOAT)
    value = quill_attr_float_value(va);
  else if (va && quill_attr_kind_of(va) == QUILL_ATTR_INT)
    value = (double)quill_attr_int_value(va);
  /* A quantized tensor pads with its zero point (the stored 0.0). */
  quill_type *qe = quill_type_elem(y->type);
  bool zp_fill = quill_type_is_quant(qe);
  int64_t zp = zp_fill ? quill_type_quant_zero_points(qe)[0] : 0;
  if (zp_fill && (value != 0.0 || quill_type_quant_axis_of(qe) >= 0))
    return shape_mismatch(ctx, op, "a quantized pad needs 'value' 0 and a "
                                   "per-tensor type");
  if (!y->size)
    return QUILL_OK;
  quill_ref_strides(x->type, stride);
  memset(index, 0, sizeof index);
  size_t eb = elem_bytes(x), i = 0;
  do {
    int64_t off = 0;
    for (unsigned d = 0; d < r && off >= 0; d++) {
      int64_t s = pad_source(index[d] - pads[d], quill_type_dim(x->type, d), mode);
      off = s < 0 ? -1 : off + s * stride[d];
    }
    if (off < 0 && zp_fill)
      quill_tensor_set_i64(y, i, zp);
    else if (off < 0)
      quill_tensor_set_f64(y, i, value);
    else
      memcpy((char *)y->data + i * eb, (const char *)x->data + off * eb, eb);
    i++;
  } while (odometer_next(index, y->type));
  return QUILL_OK;
}

/* ---- gather --------------------------------------------------------------- */

const char *quill_ref_supports_gather(const quill_op *op) {
  quill_type *t = quill_value_type(quill_op_operand(op, 1));
  if (!quill_type_is_tensor(t) || !quill_type_is_integer(quill_type_elem(t)))
    return "non-integer indices";
  return NULL;
}

/* out = data[:axis] + indices.shape + data[axis+1:]; negative indices count
 * from the back; an index out of range is an error. */
QUILL_REF_KERNEL(quill_ref_kernel_gather) {
  const quill_tensor *x = &in[0], *idx = &in[1];
  quill_tensor *y = &out[0];
  unsigned r = quill_type_rank(x->type), q = quill_type_rank(idx->type), axis;
  if (!norm_axis(quill_op_attr_int(op, "axis", 0), r, &axis))
    return shape_mismatch(ctx, op, "'axis' is out of range");
  bool ok = quill_type_rank(y->type) == r + q - 1 && same_elem(x, y);
  for (unsigned d = 0; ok && d < quill_type_rank(y->type); d++) {
    int64_t want = d < axis       ? quill_type_dim(x->type, d)
                   : d < axis + q ? quill_type_dim(idx->type, d - axis)
                                  : quill_type_dim(x->type, d - q + 1);
    ok = want == quill_type_dim(y->type, d);
  }
  if (!ok)
    return shape_mismatch(ctx, op, "result shape does not match the gather");
  int64_t dim = quill_type_dim(x->type, axis);
  size_t outer = dims_product(x->type, 0, axis);
  size_t inner = dims_product(x->type, axis + 1, r) * elem_bytes(x);
  size_t nidx = quill_tensor_num_elements(idx);
  for (size_t j = 0; j < nidx; j++) { /* check all indices first */
    int64_t k = quill_tensor_get_i64(idx, j);
    if (k < -dim || k >= dim)
      return quill_error(ctx, quill_op_loc(op),
                         "gather index %lld is out of range [%lld, %lld)",
                         (long long)k, (long long)-dim, (long long)dim);
  }
  if (!inner)
    return QUILL_OK;
  for (size_t o = 0; o < outer; o++)
    for (size_t j = 0; j < nidx; j++) {
      int64_t k = quill_tensor_get_i64(idx, j);
      k = k < 0 ? k + dim : k;
      memcpy((char *)y->data + (o * nidx + j) * inner,
             (const char *)x->data + (o * (size_t)dim + (size_t)k) * inner,
             inner);
    }
  return QUILL_OK;
}
