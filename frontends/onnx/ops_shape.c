/*
 * ops_shape.c - import of ONNX data-movement ops: Reshape, Flatten,
 * Transpose, Squeeze, Unsqueeze, Concat, Split, Slice, Pad, Resize,
 * Upsample and Gather.
 *
 * Newer opsets moved several attributes to inputs (Slice 10, Pad 11,
 * Squeeze/Unsqueeze/Split 13, Resize scales/sizes). Those inputs must be
 * constants here (initializers or folded shape computations); they become
 * attributes of the Quill op, or the result type (reshape, resize):
 *
 *   Slice(x, starts, ends, axes, steps)  ->  slice x {starts, ends, axes,
 *                                                     steps}
 *   Reshape(x, [0, -1])                  ->  reshape x : tensor<2x12xf32>
 */
#include <math.h>
#include <string.h>

#include "frontends/onnx/onnx_impl.h"

/* Finish a one-result op whose result shape came from a shape helper. */
static quill_status finish(onnx_importer *im, const onnx_node *n, bool ok,
                           quill_strbuf *why, const char *what,
                           quill_opcode opc, quill_value *x,
                           const quill_shape *out, unsigned nattrs,
                           const quill_named_attr *attrs) {
  if (!ok) {
    onnx_shape_error(im, n, what, why);
    quill_strbuf_free(why);
    return QUILL_ERR_INVALID;
  }
  quill_strbuf_free(why);
  quill_value *r;
  if (onnx_emit1(im, n, opc, 1, &x, onnx_type(im, out, onnx_elem(x)), nattrs,
                 attrs, &r))
    return QUILL_ERR_INVALID;
  return onnx_set_output(im, n, 0, r);
}

/* Reshape (constant shape input; 0 copies, -1 infers) and Flatten. */
quill_status onnx_import_reshape(onnx_importer *im, const onnx_node *n) {
  quill_value *x;
  if (onnx_input(im, n, 0, &x))
    return QUILL_ERR_INVALID;
  quill_shape in, out;
  onnx_shape(x, &in);
  quill_strbuf why;
  quill_strbuf_init(&why, im->ctx);
  if (n->op_type[0] == 'F') {
    int64_t axis;
    if (onnx_attr_int(im, n, "axis", 1, &axis))
      return QUILL_ERR_INVALID;
    if (axis < 0)
      axis += in.rank;
    quill_named_attr a = onnx_nattr_int(im, "axis", axis);
    bool ok = quill_shape_flatten(&in, axis, &out, &why);
    return finish(im, n, ok, &why, "invalid axis", QUILL_OP_FLATTEN, x, &out,
                  1, &a);
  }
  int64_t shape[QUILL_MAX_RANK], len, allowzero;
  if (onnx_attr_int(im, n, "allowzero", 0, &allowzero))
    return QUILL_ERR_INVALID;
  if (n->version < 5) { /* Reshape-1: the shape is an attribute */
    if (onnx_attr_ints(im, n, "shape", shape, QUILL_MAX_RANK, &len))
      return QUILL_ERR_INVALID;
    if (len < 0)
      return onnx_error(im, n, "missing required attribute 'shape'");
  } else if (onnx_const_ints(im, n, 1, shape, QUILL_MAX_RANK, &len)) {
    return QUILL_ERR_INVALID;
  }
  bool ok = quill_shape_reshape(&in, (unsigned)len, shape, allowzero != 0,
                                &out, &why);
  return finish(im, n, ok, &why, "invalid target shape", QUILL_OP_RESHAPE, x,
                &out, 0, NULL);
}

quill_status onnx_import_transpose(onnx_importer *im, const onnx_node *n) {
  quill_value *x;
  int64_t perm[QUILL_MAX_RANK], len;
  if (onnx_input(im, n, 0, &x) ||
      onnx_attr_ints(im, n, "perm", perm, QUILL_MAX_RANK, &len))
    return QUILL_ERR_INVALID;
  quill_shape in, out;
  onnx_shape(x, &in);
  if (len < 0) {
    len = in.rank;
    for (unsigned i = 0; i < in.rank; i++)
      perm[i] = in.rank - 1 - i;
  }
  quill_strbuf why;
  quill_strbuf_init(&why, im->ctx);
  bool ok = quill_shape_transpose(&in, (unsigned)len, perm, &out, &why);
  quill_named_attr a = onnx_nattr_ints(im, "perm", (size_t)len, perm);
  return finish(im, n, ok, &why, "invalid attribute 'perm'",
                QUILL_OP_TRANSPOSE, x, &out, 1, &a);
}

/* Squeeze / Unsqueeze: axes attribute (< 13) or constant input. */
quill_status onnx_import_squeeze(onnx_importer *im, const onnx_node *n) {
  bool un = n->op_type[0] == 'U';
  quill_value *x;
  int64_t axes[QUILL_MAX_RANK], na = -1;
  if (onnx_input(im, n, 0, &x))
    return QUILL_ERR_INVALID;
  if (n->opset < 13) {
    if (onnx_attr_ints(im, n, "axes", axes, QUILL_MAX_RANK, &na))
      return QUILL_ERR_INVALID;
  } else if (onnx_opt_input(n, 1) &&
             onnx_const_ints(im, n, 1, axes, QUILL_MAX_RANK, &na)) {
    return QUILL_ERR_INVALID;
  }
  quill_shape in, out;
  onnx_shape(x, &in);
  if (un && na < 0)
    return onnx_error(im, n, "missing axes");
  if (!un && na < 0) {
    na = 0;
    for (unsigned i = 0; i < in.rank; i++)
      if (in.dims[i] == 1)
        axes[na++] = i;
  }
  /* Normalise the axes (against the output rank for Unsqueeze). */
  unsigned rank = un ? in.rank + (unsigned)na : in.rank;
  for (int64_t i = 0; i < na; i++) {
    unsigned a;
    if (!quill_shape_norm_axis(axes[i], rank, &a))
      return onnx_error(im, n, "axis %lld is out of range for rank %u",
                        (long long)axes[i], rank);
    axes[i] = a;
  }
  quill_strbuf why;
  quill_strbuf_init(&why, im->ctx);
  bool ok = un ? quill_shape_unsqueeze(&in, (unsigned)na, axes, &out, &why)
               : quill_shape_squeeze(&in, (unsigned)na, axes, &out, &why);
  quill_named_attr a = onnx_nattr_ints(im, "axes", (size_t)na, axes);
  return finish(im, n, ok, &why, "invalid axes",
                un ? QUILL_OP_UNSQUEEZE : QUILL_OP_SQUEEZE, x, &out, 1, &a);
}

quill_status onnx_import_concat(onnx_importer *im, const onnx_node *n) {
  int64_t axis;
  if (!onnx_attr(n, "axis") && n->version >= 4)
    return onnx_error(im, n, "missing required attribute 'axis'");
  if (onnx_attr_int(im, n, "axis", 1, &axis)) /* Concat-1: default 1 */
    return QUILL_ERR_INVALID;
  unsigned k = n->num_inputs;
  quill_shape *shapes = quill_calloc(im->ctx, k ? k : 1, sizeof *shapes);
  if (!shapes)
    return QUILL_ERR_NOMEM;
  quill_status st = k ? QUILL_OK : onnx_error(im, n, "has no inputs");
  for (unsigned i = 0; !st && i < k; i++) {
    quill_value *v;
    st = onnx_input(im, n, i, &v);
    if (!st)
      onnx_shape(v, &shapes[i]);
  }
  quill_shape out;
  quill_strbuf why;
  quill_strbuf_init(&why, im->ctx);
  if (!st && !quill_shape_concat(k, shapes, axis, &out, &why))
    st = onnx_shape_error(im, n, "invalid operands", &why);
  quill_strbuf_free(&why);
  quill_free(im->ctx, shapes, (k ? k : 1) * sizeof *shapes);
  if (st)
    return st;
  if (axis < 0)
    axis += out.rank;
  /* Empty inputs add nothing: drop them (unless all are empty). */
  quill_value **ins = quill_calloc(im->ctx, k, sizeof *ins);
  if (!ins)
    return QUILL_ERR_NOMEM;
  unsigned nk = 0;
  for (unsigned i = 0; i < k; i++)
    if (quill_type_num_elements(quill_value_type(n->in[i])) != 0)
      ins[nk++] = n->in[i];
  if (nk == 0)
    ins[nk++] = n->in[0];
  quill_named_attr a = onnx_nattr_int(im, "axis", axis);
  quill_value *r;
  st = onnx_emit1(im, n, QUILL_OP_CONCAT, nk, ins,
                  onnx_type(im, &out, onnx_elem(n->in[0])), 1, &a, &r);
  quill_free(im->ctx, ins, k * sizeof *ins);
  if (st)
    return QUILL_ERR_INVALID;
  return onnx_set_output(im, n, 0, r);
}

quill_status onnx_import_split(onnx_importer *im, const onnx_node *n) {
  quill_value *x;
  int64_t axis, sizes[256], ns = -1, nout = n->num_outputs;
  if (onnx_input(im, n, 0, &x) || onnx_attr_int(im, n, "axis", 0, &axis))
    return QUILL_ERR_INVALID;
  if (nout < 1 || nout > 256)
    return onnx_error(im, n, "must have 1 to 256 outputs, has %lld",
                      (long long)nout);
  if (n->opset < 13) {
    if (onnx_attr_ints(im, n, "split", sizes, 256, &ns))
      return QUILL_ERR_INVALID;
    /* Split-1 also took the sizes as an optional second input. */
    if (ns < 0 && n->version == 1 && onnx_opt_input(n, 1) &&
        onnx_const_ints(im, n, 1, sizes, 256, &ns))
      return QUILL_ERR_INVALID;
  } else if (onnx_opt_input(n, 1) &&
             onnx_const_ints(im, n, 1, sizes, 256, &ns)) {
    return QUILL_ERR_INVALID;
  }
  int64_t num_outputs;
  if (onnx_attr_int(im, n, "num_outputs", nout, &num_outputs))
    return QUILL_ERR_INVALID;
  if (num_outputs != nout)
    return onnx_error(im, n, "attribute 'num_outputs' is %lld but the node "
                             "has %lld outputs",
                      (long long)num_outputs, (long long)nout);
  quill_shape in;
  onnx_shape(x, &in);
  unsigned ax;
  if (!quill_shape_norm_axis(axis, in.rank, &ax))
    return onnx_error(im, n, "axis %lld is out of range for rank %u",
                      (long long)axis, in.rank);
  if (ns < 0) {
    /* Equal parts (the last one smaller when it does not divide). */
    int64_t d = in.dims[ax], part = d / nout + (d % nout != 0);
    for (int64_t i = 0; i < nout; i++) {
      int64_t left = d - i * part;
      sizes[i] = left < 0 ? 0 : left < part ? left : part;
    }
    ns = nout;
  }
  if (ns != nout)
    return onnx_error(im, n, "has %lld split sizes for %lld outputs",
                      (long long)ns, (long long)nout);
  quill_shape outs[256];
  quill_type *types[256];
  quill_strbuf why;
  quill_strbuf_init(&why, im->ctx);
  bool ok = quill_shape_split(&in, ax, (unsigned)nout, sizes, outs, &why);
  if (!ok)
    onnx_shape_error(im, n, "invalid split", &why);
  quill_strbuf_free(&why);
  if (!ok)
    return QUILL_ERR_INVALID;
  for (int64_t i = 0; i < nout; i++)
    types[i] = onnx_type(im, &outs[i], onnx_elem(x));
  quill_named_attr a = onnx_nattr_int(im, "axis", ax);
  quill_value *res[256];
  onnx_emit_args ea = {QUILL_OP_SPLIT, 1, &x, (unsigned)nout, types, 1, &a};
  if (onnx_emit(im, n, &ea, res))
    return QUILL_ERR_INVALID;
  for (int64_t i = 0; i < nout; i++)
    if (onnx_set_output(im, n, (unsigned)i, res[i]))
      return QUILL_ERR_INVALID;
  return QUILL_OK;
}

quill_status onnx_import_slice(onnx_importer *im, const onnx_node *n) {
  quill_value *x;
  int64_t v[4][QUILL_MAX_RANK], len[4] = {-1, -1, -1, -1};
  if (onnx_input(im, n, 0, &x))
    return QUILL_ERR_INVALID;
  if (n->opset < 10) {
    static const char *const names[] = {"starts", "ends", "axes"};
    for (unsigned k = 0; k < 3; k++)
      if (onnx_attr_ints(im, n, names[k], v[k], QUILL_MAX_RANK, &len[k]))
        return QUILL_ERR_INVALID;
    if (len[0] < 0 || len[1] < 0)
      return onnx_error(im, n, "missing attribute 'starts' or 'ends'");
  } else {
    for (unsigned k = 0; k < 4; k++)
      if ((k < 2 || onnx_opt_input(n, k + 1)) &&
          onnx_const_ints(im, n, k + 1, v[k], QUILL_MAX_RANK, &len[k]))
        return QUILL_ERR_INVALID;
  }
  int64_t cnt = len[0];
  if (len[1] != cnt || (len[2] >= 0 && len[2] != cnt) ||
      (len[3] >= 0 && len[3] != cnt))
    return onnx_error(im, n, "starts, ends, axes and steps must have the same "
                             "length");
  quill_shape in, out;
  onnx_shape(x, &in);
  for (int64_t i = 0; i < cnt; i++) {
    if (len[2] < 0)
      v[2][i] = i;
    if (len[3] < 0)
      v[3][i] = 1;
    unsigned a;
    if (!quill_shape_norm_axis(v[2][i], in.rank, &a))
      return onnx_error(im, n, "axis %lld is out of range for rank %u",
                        (long long)v[2][i], in.rank);
    v[2][i] = a;
  }
  quill_strbuf why;
  quill_strbuf_init(&why, im->ctx);
  bool ok = quill_shape_slice(&in, (unsigned)cnt, v[0], v[1], v[2], v[3], &out,
                              &why);
  quill_named_attr attrs[4] = {
      onnx_nattr_ints(im, "starts", (size_t)cnt, v[0]),
      onnx_nattr_ints(im, "ends", (size_t)cnt, v[1]),
      onnx_nattr_ints(im, "axes", (size_t)cnt, v[2]),
      onnx_nattr_ints(im, "steps", (size_t)cnt, v[3]),
  };
  return finish(im, n, ok, &why, "invalid slice", QUILL_OP_SLICE, x, &out, 4,
                attrs);
}

quill_status onnx_import_pad(onnx_importer *im, const onnx_node *n) {
  quill_value *x;
  int64_t pads[2 * QUILL_MAX_RANK], np = -1;
  double value = 0.0;
  const char *mode;
  if (onnx_input(im, n, 0, &x) ||
      onnx_attr_string(im, n, "mode", "constant", &mode))
    return QUILL_ERR_INVALID;
  quill_shape in, out;
  onnx_shape(x, &in);
  if (n->opset < 11) {
    if (onnx_attr_ints(im, n, n->version == 1 ? "paddings" : "pads", pads,
                       2 * QUILL_MAX_RANK, &np) ||
        onnx_attr_float(im, n, "value", 0.0, &value))
      return QUILL_ERR_INVALID;
  } else {
    int64_t one;
    if (onnx_const_ints(im, n, 1, pads, 2 * QUILL_MAX_RANK, &np) ||
        (onnx_opt_input(n, 2) &&
         onnx_const_floats(im, n, 2, &value, 1, &one)))
      return QUILL_ERR_INVALID;
    if (onnx_opt_input(n, 3)) {
      /* opset 18 axes: scatter the given pads into a full list. */
      int64_t axes[QUILL_MAX_RANK], na, full[2 * QUILL_MAX_RANK] = {0};
      if (onnx_const_ints(im, n, 3, axes, QUILL_MAX_RANK, &na))
        return QUILL_ERR_INVALID;
      if (np != 2 * na)
        return onnx_error(im, n, "pads must have twice as many entries as "
                                 "axes");
      for (int64_t i = 0; i < na; i++) {
        unsigned a;
        if (!quill_shape_norm_axis(axes[i], in.rank, &a))
          return onnx_error(im, n, "axis %lld is out of range",
                            (long long)axes[i]);
        full[a] = pads[i];
        full[a + in.rank] = pads[i + na];
      }
      memcpy(pads, full, sizeof full);
      np = 2 * in.rank;
    }
  }
  if (np != 2 * (int64_t)in.rank)
    return onnx_error(im, n, "pads must have %u entries, got %lld",
                      2 * in.rank, (long long)np);
  if (strcmp(mode, "constant") && strcmp(mode, "reflect") &&
      strcmp(mode, "edge") && strcmp(mode, "wrap"))
    return onnx_error(im, n, "unknown mode \"%s\"", mode);
  quill_strbuf why;
  quill_strbuf_init(&why, im->ctx);
  bool ok = quill_shape_pad(&in, pads, &out, &why);
  quill_named_attr attrs[3] = {
      onnx_nattr_ints(im, "pads", (size_t)np, pads),
      onnx_nattr_str(im, "mode", mode),
      onnx_nattr_float(im, "value", value),
  };
  return finish(im, n, ok, &why, "invalid pads", QUILL_OP_PAD, x, &out, 3,
                attrs);
}

/* A list attr of floats (NULL on allocation failure). */
static const quill_attr *float_list(onnx_importer *im, size_t n,
                                    const double *v) {
  const quill_attr *fs[2 * QUILL_MAX_RANK];
  for (size_t i = 0; i < n; i++)
    if (!(fs[i] = quill_attr_float(im->ctx, v[i])))
      return NULL;
  return quill_attr_list(im->ctx, n, fs);
}

/* Scatter the per-axis values of `axes` (Resize-18) into a full-rank list
 * whose other entries are `dflt`; `per` values per axis (roi: 2). */
static quill_status scatter_axes(onnx_importer *im, const onnx_node *n,
                                 const int64_t *axes, int64_t na,
                                 unsigned rank, double dflt_lo, double dflt_hi,
                                 unsigned per, double *v, int64_t *len) {
  double full[2 * QUILL_MAX_RANK];
  for (unsigned i = 0; i < rank; i++) {
    full[i] = dflt_lo;
    full[i + rank] = dflt_hi;
  }
  if (*len != na * per)
    return onnx_error(im, n, "has %lld values for %lld axes", (long long)*len,
                      (long long)na);
  for (int64_t i = 0; i < na; i++) {
    full[axes[i]] = v[i];
    if (per == 2)
      full[axes[i] + rank] = v[i + na];
  }
  memcpy(v, full, sizeof full);
  *len = (int64_t)rank * per;
  return QUILL_OK;
}

/* Resize (10: x, scales; 11+: x, roi, scales, sizes; 18: axes,
 * keep_aspect_ratio_policy, antialias) and Upsample (scales attribute in
 * version 7, input from 9). The result shape comes from sizes or
 * floor(in * scale); the attributes of the Quill op carry the modes, the
 * ONNX scales that drive the coordinate transform, and the cubic / crop /
 * antialias parameters when they matter. */
quill_status onnx_import_resize(onnx_importer *im, const onnx_node *n) {
  quill_value *x;
  if (onnx_input(im, n, 0, &x))
    return QUILL_ERR_INVALID;
  quill_shape in, out;
  onnx_shape(x, &in);
  unsigned rank = in.rank;
  double scales[2 * QUILL_MAX_RANK], roi[2 * QUILL_MAX_RANK], sz[QUILL_MAX_RANK];
  int64_t sizes[QUILL_MAX_RANK], axes[QUILL_MAX_RANK];
  int64_t nsc = -1, nsz = -1, nroi = -1, na = -1, antialias = 0, exclude = 0;
  double cubic_a = -0.75, extrap = 0.0;
  bool upsample = n->op_type[0] == 'U', legacy = upsample || n->version < 11;
  const char *mode, *coord = "asymmetric", *nearest = "floor",
                    *policy = "stretch";
  if (onnx_attr_string(im, n, "mode", "nearest", &mode))
    return QUILL_ERR_INVALID;
  if (!strcmp(mode, "bilinear") || !strcmp(mode, "trilinear"))
    mode = "linear";
  if (strcmp(mode, "nearest") && strcmp(mode, "linear") &&
      (legacy || strcmp(mode, "cubic")))
    return onnx_error(im, n, "unknown mode \"%s\"", mode);
  if (upsample && n->version < 9) {
    if (onnx_attr_floats(im, n, "scales", scales, QUILL_MAX_RANK, &nsc))
      return QUILL_ERR_INVALID;
  } else {
    unsigned si = legacy ? 1 : 2;
    if (onnx_opt_input(n, si) &&
        onnx_const_floats(im, n, si, scales, QUILL_MAX_RANK, &nsc))
      return QUILL_ERR_INVALID;
  }
  if (!legacy) {
    if ((onnx_opt_input(n, 3) &&
         onnx_const_ints(im, n, 3, sizes, QUILL_MAX_RANK, &nsz)) ||
        onnx_attr_string(im, n, "coordinate_transformation_mode",
                         "half_pixel", &coord) ||
        onnx_attr_string(im, n, "nearest_mode", "round_prefer_floor",
                         &nearest) ||
        onnx_attr_float(im, n, "cubic_coeff_a", -0.75, &cubic_a) ||
        onnx_attr_int(im, n, "exclude_outside", 0, &exclude) ||
        onnx_attr_float(im, n, "extrapolation_value", 0.0, &extrap) ||
        onnx_attr_int(im, n, "antialias", 0, &antialias) ||
        onnx_attr_ints(im, n, "axes", axes, QUILL_MAX_RANK, &na) ||
        onnx_attr_string(im, n, "keep_aspect_ratio_policy", "stretch",
                         &policy))
      return QUILL_ERR_INVALID;
    if (!strcmp(coord, "tf_crop_and_resize") && onnx_opt_input(n, 1) &&
        onnx_const_floats(im, n, 1, roi, 2 * QUILL_MAX_RANK, &nroi))
      return QUILL_ERR_INVALID;
  }
  if (nsc == 0)
    nsc = -1;
  if (nsz == 0)
    nsz = -1;
  if (nsc > 0 && nsz > 0)
    return onnx_error(im, n, "only one of scales and sizes may be given");
  if (strcmp(policy, "stretch") && strcmp(policy, "not_larger") &&
      strcmp(policy, "not_smaller"))
    return onnx_error(im, n, "unknown keep_aspect_ratio_policy \"%s\"",
                      policy);
  /* Normalise axes, then spread per-axis values over the full rank. */
  for (int64_t i = 0; i < na; i++) {
    unsigned a;
    if (!quill_shape_norm_axis(axes[i], rank, &a))
      return onnx_error(im, n, "axis %lld is out of range for rank %u",
                        (long long)axes[i], rank);
    axes[i] = a;
  }
  if (na >= 0) {
    for (int64_t i = 0; nsz > 0 && i < nsz; i++)
      sz[i] = (double)sizes[i];
    if ((nsc > 0 &&
         scatter_axes(im, n, axes, na, rank, 1.0, 1.0, 1, scales, &nsc)) ||
        (nroi > 0 &&
         scatter_axes(im, n, axes, na, rank, 0.0, 1.0, 2, roi, &nroi)))
      return QUILL_ERR_INVALID;
    if (nsz > 0) {
      for (unsigned i = 0; i < rank; i++)
        sizes[i] = in.dims[i];
      if (nsz != na)
        return onnx_error(im, n, "sizes has %lld values for %lld axes",
                          (long long)nsz, (long long)na);
      for (int64_t i = 0; i < na; i++)
        sizes[axes[i]] = (int64_t)sz[i];
      nsz = rank;
    }
  } else {
    na = rank;
    for (unsigned i = 0; i < rank; i++)
      axes[i] = i;
  }
  bool crop = !strcmp(coord, "tf_crop_and_resize");
  if (crop && nroi != 2 * (int64_t)rank)
    return onnx_error(im, n, "tf_crop_and_resize needs a constant roi with %u "
                             "values",
                      2 * rank);
  /* why is only written by quill_shape_resize_scales; after that every
   * path ends in finish, which frees it */
  quill_strbuf why;
  quill_strbuf_init(&why, im->ctx);
  bool ok = true, with_scales = nsc > 0;
  if (nsz > 0) {
    if (nsz != rank)
      return onnx_error(im, n, "sizes must have %u entries", rank);
    for (unsigned i = 0; i < rank; i++)
      if (sizes[i] < 0)
        return onnx_error(im, n, "sizes must not be negative");
    if (strcmp(policy, "stretch")) {
      /* One scale for all axes so that the result fits (not_larger) or
       * covers (not_smaller) the requested sizes. */
      bool larger = !strcmp(policy, "not_smaller");
      double sc = larger ? 0 : INFINITY;
      for (int64_t i = 0; i < na; i++) {
        double r = (double)sizes[axes[i]] / (double)in.dims[axes[i]];
        sc = larger ? fmax(sc, r) : fmin(sc, r);
      }
      for (unsigned i = 0; i < rank; i++)
        scales[i] = 1.0;
      for (int64_t i = 0; i < na; i++) {
        scales[axes[i]] = sc;
        sizes[axes[i]] = (int64_t)nearbyint(sc * (double)in.dims[axes[i]]);
      }
      nsc = rank;
      with_scales = true;
    }
    quill_shape_set(&out, rank, sizes);
  } else if (nsc > 0) {
    if (nsc != rank)
      return onnx_error(im, n, "scales must have %u entries", rank);
    ok = quill_shape_resize_scales(&in, (unsigned)nsc, scales, &out, &why);
  } else {
    return onnx_error(im, n, "needs constant scales or sizes");
  }
  quill_named_attr attrs[9] = {
      onnx_nattr_str(im, "mode", mode),
      onnx_nattr_str(im, "coordinate_transformation_mode", coord),
      onnx_nattr_str(im, "nearest_mode", nearest),
  };
  unsigned nat = 3;
  if (with_scales) /* the ONNX scales, not out/in, drive the transform */
    attrs[nat++] = onnx_nattr(im, "scales", float_list(im, rank, scales));
  if (!strcmp(mode, "cubic")) {
    attrs[nat++] = onnx_nattr_float(im, "cubic_coeff_a", cubic_a);
    attrs[nat++] = onnx_nattr_int(im, "exclude_outside", exclude != 0);
  }
  if (crop) {
    attrs[nat++] = onnx_nattr(im, "roi", float_list(im, 2 * rank, roi));
    attrs[nat++] = onnx_nattr_float(im, "extrapolation_value", extrap);
  }
  if (antialias)
    attrs[nat++] = onnx_nattr_int(im, "antialias", 1);
  return finish(im, n, ok, &why, "invalid scales", QUILL_OP_RESIZE, x, &out,
                nat, attrs);
}

quill_status onnx_import_gather(onnx_importer *im, const onnx_node *n) {
  quill_value *ops[2], *r;
  int64_t axis;
  if (onnx_input(im, n, 0, &ops[0]) || onnx_input(im, n, 1, &ops[1]) ||
      onnx_attr_int(im, n, "axis", 0, &axis))
    return QUILL_ERR_INVALID;
  quill_shape d, i, out;
  onnx_shape(ops[0], &d);
  onnx_shape(ops[1], &i);
  quill_strbuf why;
  quill_strbuf_init(&why, im->ctx);
  bool ok = quill_shape_gather(&d, &i, axis, &out, &why);
  if (!ok)
    onnx_shape_error(im, n, "invalid operands", &why);
  quill_strbuf_free(&why);
  if (!ok)
    return QUILL_ERR_INVALID;
  if (axis < 0)
    axis += d.rank;
  quill_named_attr a = onnx_nattr_int(im, "axis", axis);
  if (onnx_emit1(im, n, QUILL_OP_GATHER, 2, ops,
                 onnx_type(im, &out, onnx_elem(ops[0])), 1, &a, &r))
    return QUILL_ERR_INVALID;
  return onnx_set_output(im, n, 0, r);
}
