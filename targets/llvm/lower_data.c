/*
 * lower_data.c - data movement: constant, the reshape family (aliases or
 * copies), transpose, concat, split, slice, pad and nearest resize, for
 * any element type (floats, integers, quantized storage).
 *
 * Almost everything is a strided copy between views (cg_copy):
 *
 *   transpose  src strides permuted:         src.strides[d] = x.strides[perm[d]]
 *   concat     dst = a slab of the result:   dst.offset += start * stride[axis]
 *   split      src = a slab of the operand
 *   slice      src.offset = sum first[d] * stride[d], src.strides *= step
 *   pad        fill the result with the value, then copy the (cropped)
 *              operand into the interior view
 *
 * The reshape family (identity, reshape, flatten, squeeze, unsqueeze, scast)
 * normally shares its operand's storage (memplan.c); only when the operand
 * is not densely row-major (an NHWC conv output) is it copied, walking the
 * operand in logical order so the copy is the row-major element sequence.
 * Resize (nearest) maps each output index to an input index per dim with
 * tables computed at compile time, exactly as the reference does.
 */
#include <math.h>
#include <string.h>

#include "targets/llvm/cg.h"

static bool norm_axis(int64_t a, unsigned r, unsigned *out) {
  if (a < 0)
    a += r;
  if (a < 0 || a >= (int64_t)r)
    return false;
  *out = (unsigned)a;
  return true;
}

CG_LOWER(cg_lower_constant) {
  (void)c;
  (void)op;
  return QUILL_OK;
}

CG_LOWER(cg_lower_alias) {
  cg_value *y = cg_val(c, quill_op_result(op, 0));
  if (y->alias_of >= 0)
    return QUILL_OK; /* shares the operand's storage */
  cg_view src = cg_value_view(c, quill_op_operand(op, 0));
  cg_view dst = cg_value_view(c, quill_op_result(op, 0));
  /* the result's bytes in the operand's logical order */
  dst.rank = src.rank;
  memcpy(dst.dims, src.dims, sizeof dst.dims);
  cg_row_major(dst.rank, dst.dims, dst.strides);
  cg_copy(c, quill_op_name(op), &dst, &src);
  return QUILL_OK;
}

/* A transpose is its operand with the strides permuted (memplan.c makes
 * it a view; the copy below only runs if the memplan declined). */
bool cg_view_transpose(const quill_op *op, const cg_view *in, cg_view *out) {
  unsigned r = in->rank;
  int64_t perm[QUILL_MAX_RANK];
  if (quill_op_attr_ints(op, "perm", perm, QUILL_MAX_RANK) != (int64_t)r)
    for (unsigned d = 0; d < r; d++)
      perm[d] = r - 1 - d;
  for (unsigned d = 0; d < r; d++) {
    if (perm[d] < 0 || perm[d] >= (int64_t)r || out->dims[d] != in->dims[perm[d]])
      return false;
    out->strides[d] = in->strides[perm[d]];
  }
  return true;
}

CG_LOWER(cg_lower_transpose) {
  if (cg_val(c, quill_op_result(op, 0))->alias_of >= 0)
    return QUILL_OK; /* a view */
  cg_view x = cg_value_view(c, quill_op_operand(op, 0));
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  unsigned r = x.rank;
  int64_t perm[QUILL_MAX_RANK];
  if (quill_op_attr_ints(op, "perm", perm, QUILL_MAX_RANK) != (int64_t)r)
    for (unsigned d = 0; d < r; d++)
      perm[d] = r - 1 - d;
  cg_view src = x;
  for (unsigned d = 0; d < r; d++) {
    if (perm[d] < 0 || perm[d] >= (int64_t)r)
      return cg_op_error(c, "bad 'perm'");
    src.dims[d] = x.dims[perm[d]];
    src.strides[d] = x.strides[perm[d]];
  }
  cg_copy(c, "transpose", &y, &src);
  return QUILL_OK;
}

CG_LOWER(cg_lower_concat) {
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  unsigned axis;
  if (!norm_axis(quill_op_attr_int(op, "axis", 0), y.rank, &axis))
    return cg_op_error(c, "'axis' is out of range");
  int64_t start = 0;
  for (unsigned k = 0; k < quill_op_num_operands(op); k++) {
    cg_view x = cg_value_view(c, quill_op_operand(op, k));
    cg_view dst = y;
    dst.dims[axis] = x.dims[axis];
    dst.offset += start * y.strides[axis];
    start += x.dims[axis];
    cg_copy(c, "concat", &dst, &x);
  }
  return QUILL_OK;
}

CG_LOWER(cg_lower_split) {
  cg_view x = cg_value_view(c, quill_op_operand(op, 0));
  unsigned axis;
  if (!norm_axis(quill_op_attr_int(op, "axis", 0), x.rank, &axis))
    return cg_op_error(c, "'axis' is out of range");
  int64_t start = 0;
  for (unsigned k = 0; k < quill_op_num_results(op); k++) {
    cg_view y = cg_value_view(c, quill_op_result(op, k));
    cg_view src = x;
    src.dims[axis] = y.dims[axis];
    src.offset += start * x.strides[axis];
    start += y.dims[axis];
    cg_copy(c, "split", &y, &src);
  }
  return QUILL_OK;
}

/* ---- slice --------------------------------------------------------------------- */

CG_SUPPORTS(cg_supports_slice) {
  int64_t n = quill_op_attr_ints(op, "starts", NULL, 0);
  if (n < 0 || quill_op_attr_ints(op, "ends", NULL, 0) != n)
    return "slice without constant 'starts'/'ends'";
  return NULL;
}

CG_LOWER(cg_lower_slice) {
  cg_view x = cg_value_view(c, quill_op_operand(op, 0));
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  unsigned r = x.rank;
  int64_t starts[QUILL_MAX_RANK], ends[QUILL_MAX_RANK], axes[QUILL_MAX_RANK],
      steps[QUILL_MAX_RANK];
  int64_t n = quill_op_attr_ints(op, "starts", starts, QUILL_MAX_RANK);
  quill_op_attr_ints(op, "ends", ends, QUILL_MAX_RANK);
  int64_t na = quill_op_attr_ints(op, "axes", axes, QUILL_MAX_RANK);
  int64_t ns = quill_op_attr_ints(op, "steps", steps, QUILL_MAX_RANK);
  if (n < 0 || n > (int64_t)r || (na >= 0 && na != n) || (ns >= 0 && ns != n))
    return cg_op_error(c, "'starts', 'ends', 'axes' and 'steps' disagree");
  cg_view src = x;
  memcpy(src.dims, y.dims, sizeof src.dims);
  for (int64_t k = 0; k < n; k++) {
    unsigned d;
    int64_t s = ns >= 0 ? steps[k] : 1;
    if (!norm_axis(na >= 0 ? axes[k] : k, r, &d) || s == 0)
      return cg_op_error(c, "bad axis or zero step");
    int64_t dim = x.dims[d], b = starts[k];
    b = b < 0 ? b + dim : b;
    if (s > 0)
      b = b < 0 ? 0 : b > dim ? dim : b;
    else
      b = b < 0 ? 0 : b > dim - 1 ? dim - 1 : b;
    src.offset += b * x.strides[d];
    src.strides[d] = x.strides[d] * s;
  }
  cg_copy(c, "slice", &y, &src);
  return QUILL_OK;
}

/* ---- pad ------------------------------------------------------------------------ */

CG_SUPPORTS(cg_supports_pad) {
  const quill_attr *m = quill_op_attr(op, "mode");
  if (m && quill_attr_kind_of(m) == QUILL_ATTR_STRING &&
      strcmp(quill_attr_string_value(m, NULL), "constant"))
    return "pad mode other than constant";
  return NULL;
}

/* The fill value as the element type stores it (quill_tensor_set_f64:
 * floats round, integers truncate toward zero and saturate). */
static LLVMValueRef fill_value(cg *c, const quill_type *elem, double v) {
  quill_type *s = cg_storage(elem);
  LLVMTypeRef t = cg_elem_type(c, elem);
  if (quill_type_is_float(s))
    return LLVMConstReal(t, v);
  int64_t lo = quill_type_int_min(s), hi = quill_type_int_max(s);
  int64_t iv;
  if (quill_type_kind_of(s) == QUILL_TYPE_BOOL)
    iv = v != 0.0;
  else if (isnan(v))
    iv = 0;
  else if (v <= (double)lo)
    iv = lo;
  else if (v >= (double)hi)
    iv = hi;
  else
    iv = (int64_t)v;
  return LLVMConstInt(t, (unsigned long long)iv, 1);
}

CG_LOWER(cg_lower_pad) {
  cg_view x = cg_value_view(c, quill_op_operand(op, 0));
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  unsigned r = x.rank;
  int64_t pads[2 * QUILL_MAX_RANK];
  if (quill_op_attr_ints(op, "pads", pads, 2 * QUILL_MAX_RANK) !=
      2 * (int64_t)r)
    return cg_op_error(c, "'pads' must hold 2 * rank ints");
  const quill_attr *va = quill_op_attr(op, "value");
  double value = 0.0;
  if (va && quill_attr_kind_of(va) == QUILL_ATTR_FLOAT)
    value = quill_attr_float_value(va);
  else if (va && quill_attr_kind_of(va) == QUILL_ATTR_INT)
    value = (double)quill_attr_int_value(va);
  bool grow = false, empty = false;
  cg_view src = x, dst = y;
  for (unsigned d = 0; d < r; d++) {
    int64_t pb = pads[d], pe = pads[r + d];
    grow |= pb > 0 || pe > 0;
    int64_t len = x.dims[d] + (pb < 0 ? pb : 0) + (pe < 0 ? pe : 0);
    if (len <= 0) {
      empty = true;
      continue;
    }
    src.dims[d] = dst.dims[d] = len;
    src.offset += (pb < 0 ? -pb : 0) * x.strides[d];
    dst.offset += (pb > 0 ? pb : 0) * y.strides[d];
  }
  if (grow || empty)
    cg_fill(c, "pad.fill", &y, fill_value(c, y.elem, value));
  if (!empty)
    cg_copy(c, "pad", &dst, &src);
  return QUILL_OK;
}

/* ---- resize (nearest) -------------------------------------------------------------- */

CG_SUPPORTS(cg_supports_resize) {
  const quill_attr *m = quill_op_attr(op, "mode");
  if (m && quill_attr_kind_of(m) == QUILL_ATTR_STRING &&
      strcmp(quill_attr_string_value(m, NULL), "nearest"))
    return "resize mode other than nearest";
  if (quill_op_attr_int(op, "antialias", 0))
    return "antialias";
  return NULL;
}

static const char *str_attr(const quill_op *op, const char *name,
                            const char *dflt) {
  const quill_attr *a = quill_op_attr(op, name);
  return a && quill_attr_kind_of(a) == QUILL_ATTR_STRING
             ? quill_attr_string_value(a, NULL)
             : dflt;
}

/* Input index of output index o along a dim in -> out (the reference's
 * original_coord + nearest_index + clamp). */
static int64_t nearest_src(const char *cm, const char *nm, int64_t o,
                           int64_t in, int64_t out) {
  double x = (double)o, scale = (double)out / (double)in, xo;
  if (in == out)
    xo = x;
  else if (!strcmp(cm, "half_pixel_symmetric")) {
    double adj = (double)out / ((double)in * scale);
    xo = (double)in / 2 * (1 - adj) + (x + 0.5) / scale - 0.5;
  } else if (!strcmp(cm, "pytorch_half_pixel"))
    xo = out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  else if (!strcmp(cm, "align_corners"))
    xo = out == 1 ? 0.0 : x * (double)(in - 1) / (double)(out - 1);
  else if (!strcmp(cm, "asymmetric"))
    xo = x / scale;
  else
    xo = (x + 0.5) / scale - 0.5;
  int64_t i;
  if (!strcmp(nm, "round_prefer_ceil"))
    i = xo - floor(xo) == 0.5 ? (int64_t)ceil(xo) : (int64_t)floor(xo + 0.5);
  else if (!strcmp(nm, "floor"))
    i = (int64_t)floor(xo);
  else if (!strcmp(nm, "ceil"))
    i = (int64_t)ceil(xo);
  else
    i = xo - floor(xo) == 0.5 ? (int64_t)floor(xo) : (int64_t)floor(xo + 0.5);
  return i < 0 ? 0 : i >= in ? in - 1 : i;
}

CG_LOWER(cg_lower_resize) {
  cg_view x = cg_value_view(c, quill_op_operand(op, 0));
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  unsigned r = y.rank;
  const char *cm = str_attr(op, "coordinate_transformation_mode",
                            "half_pixel");
  const char *nm = str_attr(op, "nearest_mode", "round_prefer_floor");
  if (!strcmp(cm, "tf_crop_and_resize"))
    return cg_op_error(c, "tf_crop_and_resize is not supported");
  for (unsigned d = 0; d < r; d++)
    if (y.dims[d] == 0)
      return QUILL_OK;
  /* Element-offset tables per dim: tab_d[o] = src_index(o) * x.stride[d]. */
  LLVMValueRef tabs[QUILL_MAX_RANK];
  for (unsigned d = 0; d < r; d++) {
    size_t n = (size_t)y.dims[d];
    int64_t *t = quill_alloc(c->ctx, n * sizeof *t);
    if (!t)
      return QUILL_ERR_NOMEM;
    for (size_t o = 0; o < n; o++)
      t[o] = nearest_src(cm, nm, (int64_t)o, x.dims[d], y.dims[d]) *
             x.strides[d];
    tabs[d] = cg_const_global(c, "resize", t, n * sizeof *t);
    quill_free(c->ctx, t, n * sizeof *t);
  }
  /* Loop the output in its physical order; tasks = the outermost dim. */
  unsigned order[QUILL_MAX_RANK];
  for (unsigned d = 0; d < r; d++) {
    unsigned j = d;
    while (j > 0 && y.strides[order[j - 1]] < y.strides[d]) {
      order[j] = order[j - 1];
      j--;
    }
    order[j] = d;
  }
  int64_t ntasks = r ? y.dims[order[0]] : 1;
  if (r > 1)
    ntasks *= y.dims[order[1]];
  cg_stage_begin(c, "resize", ntasks);
  LLVMValueRef xb = cg_view_base(c, &x), yb = cg_view_base(c, &y);
  LLVMTypeRef et = cg_elem_type(c, y.elem);
  unsigned eb = (unsigned)quill_type_elem_bytes(cg_storage(y.elem));
  cg_loop lt, loops[QUILL_MAX_RANK];
  cg_loop_begin(c, &lt, c->t0, c->t1, 1);
  LLVMValueRef xo = cg_i64c(c, 0), yo = cg_i64c(c, 0);
  for (unsigned k = 0; k < r; k++) {
    unsigned d = order[k];
    LLVMValueRef i;
    if (k == 0 && r > 1)
      i = LLVMBuildUDiv(c->b, lt.i, cg_i64c(c, y.dims[order[1]]), "");
    else if (k == 1)
      i = LLVMBuildURem(c->b, lt.i, cg_i64c(c, y.dims[order[1]]), "");
    else if (k == 0)
      i = lt.i;
    else {
      cg_for(c, &loops[k], 0, y.dims[d], 1);
      i = loops[k].i;
    }
    LLVMValueRef t = cg_load(c, c->t_i64, cg_gep(c, c->t_i64, tabs[d], i), 8);
    xo = LLVMBuildAdd(c->b, xo, t, "");
    yo = LLVMBuildAdd(c->b, yo,
                      LLVMBuildMul(c->b, i, cg_i64c(c, y.strides[d]), ""), "");
  }
  LLVMValueRef v = cg_load(c, et, cg_gep(c, et, xb, xo), eb);
  cg_store(c, v, cg_gep(c, et, yb, yo), eb);
  for (unsigned k = r; k-- > 2;)
    cg_loop_end(c, &loops[k]);
  cg_loop_end(c, &lt);
  cg_stage_end(c);
  return QUILL_OK;
}
