/*
 * kernels_resize.c - the reference kernel for resize (ONNX Resize, modes
 * nearest and linear; output sizes from the result type).
 *
 * Resize is separable: every output coordinate along dim d maps to an
 * input coordinate on its own, with scale_d = out_d / in_d:
 *
 *   coordinate_transformation_mode   x_original =
 *     half_pixel            (x + 0.5) / scale - 0.5
 *     half_pixel_symmetric  in/2 * (1 - out/(in*scale)) + (x + 0.5)/scale - 0.5
 *     pytorch_half_pixel    out > 1 ? (x + 0.5) / scale - 0.5 : 0
 *     align_corners         out == 1 ? 0 : x * (in - 1) / (out - 1)
 *     asymmetric            x / scale
 *
 * nearest picks one input index per output index with nearest_mode
 * (round_prefer_floor: ties go down, round_prefer_ceil: ties go up, floor,
 * ceil), clamped to [0, in-1]. linear blends the two neighbours
 * floor(x_original) and floor(x_original)+1 with weights (1-f, f), indices
 * clamped to the edge (ONNX pads with edge values), so "bilinear" over H,W
 * is linear along every dim whose scale is not 1.
 *
 * The per-dim maps (two taps and a weight per output index) are built
 * first; then each output element sums the 2^k corner taps of the k dims
 * where its weight is fractional (for nearest, k = 0: one tap).
 * tf_crop_and_resize (needs roi), cubic mode and antialias are not
 * supported (reported before evaluation by quill_ref_supports_resize).
 */
#include <math.h>
#include <string.h>

#include "targets/reference/kernels.h"

const char *quill_ref_supports_resize(const quill_op *op) {
  const char *mode = quill_ref_attr_str(op, "mode", "nearest");
  quill_type *xe = quill_type_elem(quill_value_type(quill_op_operand(op, 0)));
  quill_type *ye = quill_type_elem(quill_value_type(quill_op_result(op, 0)));
  if (quill_type_is_quant(xe) || quill_type_is_quant(ye)) {
    /* nearest only picks stored values: same quant type in and out */
    if (xe != ye || strcmp(mode, "nearest"))
      return "quantized element types (other than nearest with one type)";
  } else {
    const char *why = quill_ref_supports_scalar(op);
    if (why)
      return why;
  }
  if (strcmp(mode, "nearest") && strcmp(mode, "linear") &&
      strcmp(mode, "bilinear"))
    return "resize mode other than nearest and linear";
  if (!strcmp(quill_ref_attr_str(op, "coordinate_transformation_mode",
                                 "half_pixel"),
              "tf_crop_and_resize"))
    return "tf_crop_and_resize";
  if (quill_op_attr_int(op, "antialias", 0))
    return "antialias";
  return NULL;
}

typedef enum coord_mode {
  HALF_PIXEL,
  HALF_PIXEL_SYMMETRIC,
  PYTORCH_HALF_PIXEL,
  ALIGN_CORNERS,
  ASYMMETRIC,
} coord_mode;

typedef enum nearest_mode {
  ROUND_PREFER_FLOOR,
  ROUND_PREFER_CEIL,
  FLOOR,
  CEIL,
} nearest_mode;

static bool parse_modes(const quill_op *op, bool *linear, coord_mode *cm,
                        nearest_mode *nm) {
  const char *mode = quill_ref_attr_str(op, "mode", "nearest");
  const char *c = quill_ref_attr_str(op, "coordinate_transformation_mode",
                                     "half_pixel");
  const char *n = quill_ref_attr_str(op, "nearest_mode", "round_prefer_floor");
  *linear = strcmp(mode, "nearest") != 0;
  if (!strcmp(c, "half_pixel")) *cm = HALF_PIXEL;
  else if (!strcmp(c, "half_pixel_symmetric")) *cm = HALF_PIXEL_SYMMETRIC;
  else if (!strcmp(c, "pytorch_half_pixel")) *cm = PYTORCH_HALF_PIXEL;
  else if (!strcmp(c, "align_corners")) *cm = ALIGN_CORNERS;
  else if (!strcmp(c, "asymmetric")) *cm = ASYMMETRIC;
  else return false;
  if (!strcmp(n, "round_prefer_floor")) *nm = ROUND_PREFER_FLOOR;
  else if (!strcmp(n, "round_prefer_ceil")) *nm = ROUND_PREFER_CEIL;
  else if (!strcmp(n, "floor")) *nm = FLOOR;
  else if (!strcmp(n, "ceil")) *nm = CEIL;
  else return false;
  return true;
}

/* Input coordinate of output coordinate x along a dim in -> out. */
static double original_coord(coord_mode cm, double x, int64_t in,
                             int64_t out) {
  double scale = (double)out / (double)in;
  switch (cm) {
  case HALF_PIXEL: return (x + 0.5) / scale - 0.5;
  case HALF_PIXEL_SYMMETRIC: {
    double adj = (double)out / ((double)in * scale);
    double center = (double)in / 2;
    return center * (1 - adj) + (x + 0.5) / scale - 0.5;
  }
  case PYTORCH_HALF_PIXEL: return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  case ALIGN_CORNERS:
    return out == 1 ? 0.0 : x * (double)(in - 1) / (double)(out - 1);
  case ASYMMETRIC: return x / scale;
  }
  return 0.0;
}

static int64_t nearest_index(nearest_mode nm, double x) {
  switch (nm) {
  case ROUND_PREFER_FLOOR:
    return x - floor(x) == 0.5 ? (int64_t)floor(x) : (int64_t)floor(x + 0.5);
  case ROUND_PREFER_CEIL:
    return x - floor(x) == 0.5 ? (int64_t)ceil(x) : (int64_t)floor(x + 0.5);
  case FLOOR: return (int64_t)floor(x);
  case CEIL: return (int64_t)ceil(x);
  }
  return 0;
}

static int64_t clamp_index(int64_t i, int64_t n) {
  return i < 0 ? 0 : i >= n ? n - 1 : i;
}

/* Two taps and the weight of the second, per output index of one dim. */
typedef struct dim_map {
  int64_t *i0, *i1;
  double *w1;
} dim_map;

QUILL_REF_KERNEL(quill_ref_kernel_resize) {
  const quill_tensor *x = &in[0];
  quill_tensor *y = &out[0];
  unsigned r = quill_type_rank(x->type);
  bool linear;
  coord_mode cm;
  nearest_mode nm;
  if (!parse_modes(op, &linear, &cm, &nm))
    return quill_ref_op_error(ctx, op, "unsupported resize attributes");
  if (quill_type_rank(y->type) != r)
    return quill_ref_op_error(ctx, op, "result rank differs from operand");
  size_t total_map = 0;
  for (unsigned d = 0; d < r; d++) {
    if (quill_type_dim(x->type, d) == 0 && quill_type_dim(y->type, d) != 0)
      return quill_ref_op_error(ctx, op, "cannot resize an empty dim");
    total_map += (size_t)quill_type_dim(y->type, d);
  }
  size_t ny = quill_tensor_num_elements(y);
  if (ny == 0)
    return QUILL_OK;
  /* one allocation: per dim i0, i1 (int64) and w1 (double) arrays */
  size_t bytes = total_map * (2 * sizeof(int64_t) + sizeof(double));
  char *mem = quill_alloc(ctx, bytes);
  if (!mem)
    return QUILL_ERR_NOMEM;
  dim_map maps[QUILL_MAX_RANK];
  int64_t xstride[QUILL_MAX_RANK];
  quill_ref_strides(x->type, xstride);
  char *p = mem;
  for (unsigned d = 0; d < r; d++) {
    int64_t nin = quill_type_dim(x->type, d), nout = quill_type_dim(y->type, d);
    maps[d].i0 = (int64_t *)p;
    maps[d].i1 = maps[d].i0 + nout;
    maps[d].w1 = (double *)(maps[d].i1 + nout);
    p = (char *)(maps[d].w1 + nout);
    for (int64_t o = 0; o < nout; o++) {
      double xo = nin == nout ? (double)o : original_coord(cm, (double)o, nin, nout);
      if (!linear) {
        maps[d].i0[o] = maps[d].i1[o] = clamp_index(nearest_index(nm, xo), nin);
        maps[d].w1[o] = 0;
        continue;
      }
      double f = floor(xo);
      maps[d].i0[o] = clamp_index((int64_t)f, nin);
      maps[d].i1[o] = clamp_index((int64_t)f + 1, nin);
      maps[d].w1[o] = maps[d].i0[o] == maps[d].i1[o] ? 0.0 : xo - f;
    }
  }
  int64_t idx[QUILL_MAX_RANK] = {0};
  for (size_t i = 0; i < ny; i++) {
    unsigned active[QUILL_MAX_RANK], na = 0;
    int64_t base = 0;
    for (unsigned d = 0; d < r; d++) {
      base += maps[d].i0[idx[d]] * xstride[d];
      if (maps[d].w1[idx[d]] != 0)
        active[na++] = d;
    }
    double v = 0;
    if (na == 0)
      v = quill_tensor_get_f64(x, (size_t)base);
    else if (na > 16) { /* 2^na taps: refuse absurd ranks rather than hang */
      quill_free(ctx, mem, bytes);
      return quill_ref_op_error(ctx, op, "too many interpolated dims");
    } else
      for (unsigned mask = 0; mask < (1u << na); mask++) {
        double w = 1;
        int64_t off = base;
        for (unsigned k = 0; k < na; k++) {
          unsigned d = active[k];
          double w1 = maps[d].w1[idx[d]];
          if (mask & (1u << k)) {
            w *= w1;
            off += (maps[d].i1[idx[d]] - maps[d].i0[idx[d]]) * xstride[d];
          } else
            w *= 1 - w1;
        }
        v += w * quill_tensor_get_f64(x, (size_t)off);
      }
    if (!quill_type_is_float(quill_type_elem(y->type)) && linear)
      v = nearbyint(v); /* integer linear resize rounds to nearest even */
    quill_tensor_set_f64(y, i, v);
    for (unsigned d = r; d-- > 0;)
      if (++idx[d] < quill_type_dim(y->type, d))
        break;
      else
        idx[d] = 0;
  }
  quill_free(ctx, mem, bytes);
  return QUILL_OK;
}
