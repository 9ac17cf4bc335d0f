/*
 * lower_data.c - data movement: constant, the reshape family (aliases or
 * copies), transpose, concat, split, slice, pad and nearest resize, for
 * any element type (floats, integers, quantized storage).
 *
 * Almost everything is a strided copy between views (cg_copy):
 *
 *   transpose  src strides permuted:         src.strides[d] = x.strides[perm[d]]
 *   concat     dst = a slab of the result:   dst.offset += start * stride[axis]
 *              (nothing when the operand already is that slab: a conv
 *              that stores into its concat's buffer, memplan.c)
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
#include "targets/reference/ref.h"

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

/* True if a and b are the same elements of the same storage. */
static bool same_view(const cg_view *a, const cg_view *b) {
  if (a->slot < 0 || a->slot != b->slot || a->global || b->global ||
      a->offset != b->offset || a->rank != b->rank)
    return false;
  for (unsigned d = 0; d < a->rank; d++)
    if (a->dims[d] != b->dims[d] || a->strides[d] != b->strides[d])
      return false;
  return true;
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
    if (!same_view(&dst, &x))
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

/* ---- table-driven copies (pad modes, resize) ------------------------------ */

/* y[i0, i1, ..] = x[src_0[i0], src_1[i1], ..]: per-dim tables of input
 * element offsets (tab_d[o] = source index * x.strides[d]), looping y in
 * its physical order with the two outermost dims as tasks. */
static quill_status table_copy(cg *c, const char *name, const cg_view *y,
                               const cg_view *x, int64_t *const *src) {
  unsigned r = y->rank;
  for (unsigned d = 0; d < r; d++)
    if (y->dims[d] == 0)
      return QUILL_OK;
  LLVMValueRef tabs[QUILL_MAX_RANK];
  for (unsigned d = 0; d < r; d++) {
    size_t n = (size_t)y->dims[d];
    int64_t *t = quill_alloc(c->ctx, n * sizeof *t);
    if (!t)
      return QUILL_ERR_NOMEM;
    for (size_t o = 0; o < n; o++)
      t[o] = src[d][o] * x->strides[d];
    tabs[d] = cg_const_global(c, "tab", t, n * sizeof *t);
    quill_free(c->ctx, t, n * sizeof *t);
  }
  unsigned order[QUILL_MAX_RANK];
  for (unsigned d = 0; d < r; d++) {
    unsigned j = d;
    while (j > 0 && y->strides[order[j - 1]] < y->strides[d]) {
      order[j] = order[j - 1];
      j--;
    }
    order[j] = d;
  }
  int64_t ntasks = r ? y->dims[order[0]] : 1;
  if (r > 1)
    ntasks *= y->dims[order[1]];
  cg_stage_begin(c, name, ntasks);
  LLVMValueRef xb = cg_view_base(c, x), yb = cg_view_base(c, y);
  LLVMTypeRef et = cg_elem_type(c, y->elem);
  unsigned eb = (unsigned)quill_type_elem_bytes(cg_storage(y->elem));
  cg_loop lt, loops[QUILL_MAX_RANK];
  cg_loop_begin(c, &lt, c->t0, c->t1, 1);
  LLVMValueRef xo = cg_i64c(c, 0), yo = cg_i64c(c, 0);
  for (unsigned k = 0; k < r; k++) {
    unsigned d = order[k];
    LLVMValueRef i;
    if (k == 0 && r > 1)
      i = LLVMBuildUDiv(c->b, lt.i, cg_i64c(c, y->dims[order[1]]), "");
    else if (k == 1)
      i = LLVMBuildURem(c->b, lt.i, cg_i64c(c, y->dims[order[1]]), "");
    else if (k == 0)
      i = lt.i;
    else {
      cg_for(c, &loops[k], 0, y->dims[d], 1);
      i = loops[k].i;
    }
    LLVMValueRef t = cg_load(c, c->t_i64, cg_gep(c, c->t_i64, tabs[d], i), 8);
    xo = LLVMBuildAdd(c->b, xo, t, "");
    yo = LLVMBuildAdd(c->b, yo,
                      LLVMBuildMul(c->b, i, cg_i64c(c, y->strides[d]), ""), "");
  }
  LLVMValueRef v = cg_load(c, et, cg_gep(c, et, xb, xo), eb);
  cg_store(c, v, cg_gep(c, et, yb, yo), eb);
  for (unsigned k = r; k-- > 2;)
    cg_loop_end(c, &loops[k]);
  cg_loop_end(c, &lt);
  cg_stage_end(c);
  return c->status;
}

static void free_tables(cg *c, int64_t **src, unsigned r, const int64_t *n) {
  for (unsigned d = 0; d < r; d++)
    if (src[d])
      quill_free(c->ctx, src[d], (size_t)(n[d] ? n[d] : 1) * sizeof(int64_t));
}

/* ---- pad ------------------------------------------------------------------------ */

CG_SUPPORTS(cg_supports_pad) {
  const quill_attr *m = quill_op_attr(op, "mode");
  if (m && quill_attr_kind_of(m) == QUILL_ATTR_STRING) {
    const char *s = quill_attr_string_value(m, NULL);
    if (strcmp(s, "constant") && strcmp(s, "edge") && strcmp(s, "reflect") &&
        strcmp(s, "wrap"))
      return "pad mode other than constant, edge, reflect and wrap";
  }
  return NULL;
}

/* The fill value as the element type stores it (quill_tensor_set_f64:
 * floats round, integers truncate toward zero and saturate); a quantized
 * tensor pads with its zero point (the stored 0.0). */
static LLVMValueRef fill_value(cg *c, const quill_type *elem, double v) {
  quill_type *s = cg_storage(elem);
  LLVMTypeRef t = cg_elem_type(c, elem);
  if (quill_type_is_quant(elem))
    return LLVMConstInt(t, (unsigned long long)quill_type_quant_zero_points(elem)[0], 1);
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

/* The reference's pad_source for the edge / reflect / wrap modes. */
static int64_t pad_source(int64_t i, int64_t dim, char mode) {
  if (i >= 0 && i < dim)
    return i;
  if (mode == 'e')
    return i < 0 ? 0 : dim - 1;
  if (mode == 'w')
    return ((i % dim) + dim) % dim;
  if (dim == 1)
    return 0;
  int64_t period = 2 * (dim - 1);
  i = ((i % period) + period) % period;
  return i < dim ? i : period - i;
}

CG_LOWER(cg_lower_pad) {
  cg_view x = cg_value_view(c, quill_op_operand(op, 0));
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  unsigned r = x.rank;
  int64_t pads[2 * QUILL_MAX_RANK];
  if (quill_op_attr_ints(op, "pads", pads, 2 * QUILL_MAX_RANK) !=
      2 * (int64_t)r)
    return cg_op_error(c, "'pads' must hold 2 * rank ints");
  const quill_attr *ma = quill_op_attr(op, "mode");
  const char *mode = ma && quill_attr_kind_of(ma) == QUILL_ATTR_STRING
                         ? quill_attr_string_value(ma, NULL)
                         : "constant";
  bool empty_in = false;
  for (unsigned d = 0; d < r; d++)
    empty_in |= x.dims[d] == 0;
  if (strcmp(mode, "constant") && !empty_in) { /* edge, reflect, wrap */
    int64_t *src[QUILL_MAX_RANK] = {NULL};
    quill_status st = QUILL_OK;
    for (unsigned d = 0; d < r && !st; d++) {
      src[d] = quill_alloc(c->ctx, (size_t)(y.dims[d] ? y.dims[d] : 1) *
                                       sizeof(int64_t));
      if (!src[d]) {
        st = QUILL_ERR_NOMEM;
        break;
      }
      for (int64_t o = 0; o < y.dims[d]; o++)
        src[d][o] = pad_source(o - pads[d], x.dims[d], mode[0]);
    }
    if (!st)
      st = table_copy(c, "pad", &y, &x, src);
    free_tables(c, src, r, y.dims);
    return st;
  }
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
  const quill_attr *cm = quill_op_attr(op, "coordinate_transformation_mode");
  if (cm && quill_attr_kind_of(cm) == QUILL_ATTR_STRING &&
      !strcmp(quill_attr_string_value(cm, NULL), "tf_crop_and_resize"))
    return "tf_crop_and_resize";
  if (quill_op_attr_int(op, "antialias", 0))
    return "antialias";
  if (!quill_ref_op_supported(op, NULL))
    return "resize attributes the reference does not take";
  return NULL;
}

/* Nearest resize picks one input index per output index along each dim,
 * independently. The maps are taken from the reference kernel itself (so
 * every coordinate mode, scales and rounding agree by construction): run
 * it at compile time on an f64 tensor holding each element's index along
 * dim d, and read the picked indices along d. */
CG_LOWER(cg_lower_resize) {
  cg_view x = cg_value_view(c, quill_op_operand(op, 0));
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  unsigned r = y.rank;
  for (unsigned d = 0; d < r; d++)
    if (y.dims[d] == 0)
      return QUILL_OK;
  quill_context *ctx = c->ctx;
  quill_type *f64 = quill_type_scalar(ctx, QUILL_TYPE_F64);
  quill_type *xt = quill_type_tensor(ctx, f64, r, x.dims);
  quill_type *yt = quill_type_tensor(ctx, f64, r, y.dims);
  if (!xt || !yt)
    return QUILL_ERR_NOMEM;
  int64_t *src[QUILL_MAX_RANK] = {NULL};
  int64_t xs[QUILL_MAX_RANK], ys[QUILL_MAX_RANK];
  cg_row_major(r, x.dims, xs);
  cg_row_major(r, y.dims, ys);
  quill_status st = QUILL_OK;
  for (unsigned d = 0; d < r && !st; d++) {
    quill_tensor in, out;
    if ((st = quill_tensor_alloc(ctx, xt, &in)))
      break;
    if ((st = quill_tensor_alloc(ctx, yt, &out))) {
      quill_tensor_free(ctx, &in);
      break;
    }
    size_t nx = quill_tensor_num_elements(&in);
    for (size_t i = 0; i < nx; i++)
      ((double *)in.data)[i] = (double)((int64_t)i / xs[d] % x.dims[d]);
    st = quill_ref_eval_op(ctx, op, &in, &out);
    src[d] = quill_alloc(ctx, (size_t)y.dims[d] * sizeof(int64_t));
    if (!st && !src[d])
      st = QUILL_ERR_NOMEM;
    for (int64_t o = 0; !st && o < y.dims[d]; o++) {
      double v = ((double *)out.data)[o * ys[d]];
      if (!(v >= 0 && v < (double)x.dims[d]) || v != (double)(int64_t)v)
        st = cg_op_error(c, "resize does not pick input elements");
      else
        src[d][o] = (int64_t)v;
    }
    quill_tensor_free(ctx, &in);
    quill_tensor_free(ctx, &out);
  }
  if (!st)
    st = table_copy(c, "resize", &y, &x, src);
  free_tables(c, src, r, y.dims);
  return st;
}

/* ---- gather ------------------------------------------------------------------------ */

CG_SUPPORTS(cg_supports_gather) {
  quill_type *t = quill_value_type(quill_op_operand(op, 1));
  if (!quill_type_is_integer(quill_type_elem(t)))
    return "non-integer indices";
  return NULL;
}

/* y[o, j.., i] = x[o, idx[j..], i]: per task (outer o, flat index j) one
 * index is loaded, made non-negative and clamped into range (the reference
 * reports an out-of-range index as an error; compiled code cannot, so it
 * clamps), then the inner block is copied. */
CG_LOWER(cg_lower_gather) {
  cg_view x = cg_value_view(c, quill_op_operand(op, 0));
  cg_view ix = cg_value_view(c, quill_op_operand(op, 1));
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  unsigned r = x.rank, q = ix.rank, axis;
  if (!norm_axis(quill_op_attr_int(op, "axis", 0), r, &axis))
    return cg_op_error(c, "'axis' is out of range");
  int64_t outer = 1, nidx = 1;
  for (unsigned d = 0; d < axis; d++)
    outer *= x.dims[d];
  for (unsigned d = 0; d < q; d++)
    nidx *= ix.dims[d];
  int64_t dim = x.dims[axis];
  if (outer * nidx == 0 || dim == 0)
    return QUILL_OK;
  /* inner view: dims after the axis */
  cg_view xi = x, yi = y;
  xi.rank = yi.rank = r - axis - 1;
  for (unsigned d = axis + 1; d < r; d++) {
    xi.dims[d - axis - 1] = yi.dims[d - axis - 1] = x.dims[d];
    xi.strides[d - axis - 1] = x.strides[d];
    yi.strides[d - axis - 1] = y.strides[d - 1 + q];
  }
  int64_t inner = 1;
  for (unsigned d = 0; d < xi.rank; d++)
    inner *= xi.dims[d];
  cg_stage_begin(c, "gather", outer * nidx);
  LLVMValueRef xb = cg_view_base(c, &x), ib = cg_view_base(c, &ix),
               yb = cg_view_base(c, &y);
  LLVMTypeRef et = cg_elem_type(c, y.elem);
  unsigned eb = (unsigned)quill_type_elem_bytes(cg_storage(y.elem));
  cg_loop lt, li;
  cg_loop_begin(c, &lt, c->t0, c->t1, 1);
  LLVMValueRef o = LLVMBuildUDiv(c->b, lt.i, cg_i64c(c, nidx), "");
  LLVMValueRef j = LLVMBuildURem(c->b, lt.i, cg_i64c(c, nidx), "");
  /* element offsets of the outer index in x and y, of j in idx and y */
  LLVMValueRef xo = cg_i64c(c, 0), yo = cg_i64c(c, 0), io = cg_i64c(c, 0);
  LLVMValueRef rem = o;
  for (unsigned d = axis; d-- > 0;) {
    LLVMValueRef k = LLVMBuildURem(c->b, rem, cg_i64c(c, x.dims[d]), "");
    rem = LLVMBuildUDiv(c->b, rem, cg_i64c(c, x.dims[d]), "");
    xo = LLVMBuildAdd(c->b, xo, LLVMBuildMul(c->b, k, cg_i64c(c, x.strides[d]), ""), "");
    yo = LLVMBuildAdd(c->b, yo, LLVMBuildMul(c->b, k, cg_i64c(c, y.strides[d]), ""), "");
  }
  rem = j;
  for (unsigned d = q; d-- > 0;) {
    LLVMValueRef k = LLVMBuildURem(c->b, rem, cg_i64c(c, ix.dims[d]), "");
    rem = LLVMBuildUDiv(c->b, rem, cg_i64c(c, ix.dims[d]), "");
    io = LLVMBuildAdd(c->b, io, LLVMBuildMul(c->b, k, cg_i64c(c, ix.strides[d]), ""), "");
    yo = LLVMBuildAdd(c->b, yo,
                      LLVMBuildMul(c->b, k, cg_i64c(c, y.strides[axis + d]), ""),
                      "");
  }
  LLVMValueRef k = cg_load_int(c, ix.elem,
                               cg_gep(c, cg_elem_type(c, ix.elem), ib, io),
                               c->t_i64);
  k = LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntSLT, k, cg_i64c(c, 0), ""),
                      LLVMBuildAdd(c->b, k, cg_i64c(c, dim), ""), k, "");
  k = cg_min_s(c, cg_max_s(c, k, cg_i64c(c, 0)), cg_i64c(c, dim - 1));
  xo = LLVMBuildAdd(c->b, xo, LLVMBuildMul(c->b, k, cg_i64c(c, x.strides[axis]), ""), "");
  /* the inner block, element by element in row-major order */
  cg_for(c, &li, 0, inner, 1);
  LLVMValueRef xe = xo, ye = yo, rr = li.i;
  for (unsigned d = xi.rank; d-- > 0;) {
    LLVMValueRef kk = LLVMBuildURem(c->b, rr, cg_i64c(c, xi.dims[d]), "");
    rr = LLVMBuildUDiv(c->b, rr, cg_i64c(c, xi.dims[d]), "");
    xe = LLVMBuildAdd(c->b, xe, LLVMBuildMul(c->b, kk, cg_i64c(c, xi.strides[d]), ""), "");
    ye = LLVMBuildAdd(c->b, ye, LLVMBuildMul(c->b, kk, cg_i64c(c, yi.strides[d]), ""), "");
  }
  cg_store(c, cg_load(c, et, cg_gep(c, et, xb, xe), eb), cg_gep(c, et, yb, ye),
           eb);
  cg_loop_end(c, &li);
  cg_loop_end(c, &lt);
  cg_stage_end(c);
  return c->status;
}
