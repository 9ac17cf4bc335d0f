/*
 * kernels_resize.c - the reference kernel for resize (ONNX Resize: modes
 * nearest, linear and cubic; output sizes from the result type).
 *
 * Resize is separable: every output coordinate along dim d maps to an
 * input coordinate on its own. The scale of a dim is the op's `scales`
 * entry when the model gave scales (ONNX uses them, not out/in, in the
 * transform), else out/in; `len_out` below is in * scale (a real number):
 *
 *   coordinate_transformation_mode   x_original =
 *     half_pixel            (x + 0.5) / scale - 0.5
 *     half_pixel_symmetric  in/2 * (1 - out/(in*scale)) + (x + 0.5)/scale - 0.5
 *     pytorch_half_pixel    len_out > 1 ? (x + 0.5) / scale - 0.5 : 0
 *     align_corners         len_out == 1 ? 0 : x * (in - 1) / (len_out - 1)
 *     asymmetric            x / scale
 *     tf_half_pixel_for_nn  (x + 0.5) / scale
 *     tf_crop_and_resize    start*(in-1) + x*(end-start)*(in-1)/(len_out-1)
 *                           (len_out == 1: (end-start)*(in-1)/2 + start*(in-1));
 *                           outside [0, in-1] the output element is
 *                           `extrapolation_value`; start/end from `roi`
 *
 * nearest picks one input index with nearest_mode (round_prefer_floor: ties
 * down, round_prefer_ceil: ties up, floor, ceil), clamped to [0, in-1].
 * linear and cubic take the 2 or 4 neighbours of x_original as ONNX's
 * reference does: base = floor(x), t = x - base, and t = 1 (base - 1) when x
 * is integral; taps base, base+1 (linear, weights 1-t, t) or base-1 ..
 * base+2 (cubic, Keys' kernel with a = cubic_coeff_a). Tap indices clamp to
 * the edge (ONNX pads with edge values); with exclude_outside the weights
 * of taps outside the tensor are zeroed and the rest renormalized.
 *
 * The per-dim maps (taps and weights per output index) are built first;
 * then each output element sums the products over the taps of every dim
 * whose weights are not a single 1. antialias is not supported (reported
 * before evaluation by quill_ref_supports_resize).
 */
#include <math.h>
#include <string.h>

#include "targets/reference/kernels.h"

#define MAX_TAPS 4

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
      strcmp(mode, "bilinear") && strcmp(mode, "cubic"))
    return "resize mode other than nearest, linear and cubic";
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
  TF_HALF_PIXEL_FOR_NN,
  TF_CROP_AND_RESIZE,
} coord_mode;

typedef enum nearest_mode {
  ROUND_PREFER_FLOOR,
  ROUND_PREFER_CEIL,
  FLOOR,
  CEIL,
} nearest_mode;

static const char *const coord_names[] = {
    "half_pixel",   "half_pixel_symmetric", "pytorch_half_pixel",
    "align_corners", "asymmetric",          "tf_half_pixel_for_nn",
    "tf_crop_and_resize"};
static const char *const nearest_names[] = {"round_prefer_floor",
                                            "round_prefer_ceil", "floor",
                                            "ceil"};

/* Index of s in names[0..n), or -1. */
static int find_name(const char *const *names, int n, const char *s) {
  for (int i = 0; i < n; i++)
    if (!strcmp(names[i], s))
      return i;
  return -1;
}

/* Element i of a list attribute of numbers (dflt if absent or short). */
static double list_num(const quill_op *op, const char *name, size_t i,
                       double dflt) {
  const quill_attr *a = quill_op_attr(op, name);
  if (!a || quill_attr_kind_of(a) != QUILL_ATTR_LIST ||
      i >= quill_attr_list_size(a))
    return dflt;
  const quill_attr *e = quill_attr_list_elem(a, i);
  if (quill_attr_kind_of(e) == QUILL_ATTR_FLOAT)
    return quill_attr_float_value(e);
  if (quill_attr_kind_of(e) == QUILL_ATTR_INT)
    return (double)quill_attr_int_value(e);
  return dflt;
}

/* The transform of one dim. */
typedef struct dim_xform {
  coord_mode cm;
  int64_t in;
  double scale, len_out;   /* len_out = in * scale */
  double roi_start, roi_end;
} dim_xform;

/* Input coordinate of output coordinate x. */
static double original_coord(const dim_xform *t, double x) {
  double in = (double)t->in, s = t->scale;
  switch (t->cm) {
  case HALF_PIXEL: return (x + 0.5) / s - 0.5;
  case HALF_PIXEL_SYMMETRIC: {
    double adj = t->len_out / (in * s);
    return in / 2 * (1 - adj) + (x + 0.5) / s - 0.5;
  }
  case PYTORCH_HALF_PIXEL: return t->len_out > 1 ? (x + 0.5) / s - 0.5 : 0.0;
  case ALIGN_CORNERS:
    return t->len_out == 1 ? 0.0 : x * (in - 1) / (t->len_out - 1);
  case ASYMMETRIC: return x / s;
  case TF_HALF_PIXEL_FOR_NN: return (x + 0.5) / s;
  case TF_CROP_AND_RESIZE: {
    double w = (t->roi_end - t->roi_start) * (in - 1);
    return t->len_out == 1 ? w / 2 + t->roi_start * (in - 1)
                           : x * w / (t->len_out - 1) + t->roi_start * (in - 1);
  }
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

/* Keys' cubic convolution weights for the taps at distances 1+t, t, 1-t,
 * 2-t from x (ONNX's cubic_coeffs). */
static void cubic_weights(double a, double t, double *w) {
  double u = t + 1, v = 1 - t, z = 2 - t;
  w[0] = ((a * u - 5 * a) * u + 8 * a) * u - 4 * a;
  w[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
  w[2] = ((a + 2) * v - (a + 3)) * v * v + 1;
  w[3] = ((a * z - 5 * a) * z + 8 * a) * z - 4 * a;
}

/* Taps of one output index: ntap (index, weight) pairs; outside: the
 * coordinate left the tensor (tf_crop_and_resize extrapolates). */
typedef struct taps {
  int64_t idx[MAX_TAPS];
  double w[MAX_TAPS];
  unsigned n;
  bool outside;
} taps;

typedef enum interp { NEAREST, LINEAR, CUBIC } interp;

static void make_taps(interp mode, nearest_mode nm, double a, bool exclude,
                      const dim_xform *t, int64_t o, taps *tp) {
  memset(tp, 0, sizeof *tp);
  double x = original_coord(t, (double)o);
  if (t->cm == TF_CROP_AND_RESIZE && (x < 0 || x > (double)(t->in - 1))) {
    tp->outside = true;
    return;
  }
  if (mode == NEAREST) {
    tp->n = 1;
    tp->idx[0] = clamp_index(nearest_index(nm, x), t->in);
    tp->w[0] = 1;
    return;
  }
  double base = floor(x), f = x - base;
  if (f == 0) { /* ONNX's reference takes the neighbours below */
    f = 1;
    base -= 1;
  }
  int64_t b = (int64_t)base;
  int64_t raw[MAX_TAPS];
  if (mode == LINEAR) {
    tp->n = 2;
    raw[0] = b, raw[1] = b + 1;
    tp->w[0] = 1 - f, tp->w[1] = f;
  } else {
    tp->n = 4;
    for (int k = 0; k < 4; k++)
      raw[k] = b - 1 + k;
    cubic_weights(a, f, tp->w);
  }
  if (exclude) {
    double sum = 0;
    for (unsigned k = 0; k < tp->n; k++) {
      if (raw[k] < 0 || raw[k] >= t->in)
        tp->w[k] = 0;
      sum += tp->w[k];
    }
    if (sum != 0)
      for (unsigned k = 0; k < tp->n; k++)
        tp->w[k] /= sum;
  }
  for (unsigned k = 0; k < tp->n; k++)
    tp->idx[k] = clamp_index(raw[k], t->in);
}

QUILL_REF_KERNEL(quill_ref_kernel_resize) {
  const quill_tensor *x = &in[0];
  quill_tensor *y = &out[0];
  unsigned r = quill_type_rank(x->type);
  const char *mode = quill_ref_attr_str(op, "mode", "nearest");
  interp im = !strcmp(mode, "nearest") ? NEAREST
              : !strcmp(mode, "cubic") ? CUBIC
                                       : LINEAR;
  int cm = find_name(coord_names, 7,
                     quill_ref_attr_str(op, "coordinate_transformation_mode",
                                        "half_pixel"));
  int nm = find_name(nearest_names, 4,
                     quill_ref_attr_str(op, "nearest_mode",
                                        "round_prefer_floor"));
  if (cm < 0 || nm < 0)
    return quill_ref_op_error(ctx, op, "unsupported resize attributes");
  if (quill_type_rank(y->type) != r)
    return quill_ref_op_error(ctx, op, "result rank differs from operand");
  double a = quill_op_attr_number(op, "cubic_coeff_a", -0.75);
  bool exclude = quill_op_attr_int(op, "exclude_outside", 0) != 0;
  double extrap = quill_op_attr_number(op, "extrapolation_value", 0.0);
  bool has_scales = quill_op_attr(op, "scales") != NULL;
  size_t total_map = 0;
  for (unsigned d = 0; d < r; d++) {
    if (quill_type_dim(x->type, d) == 0 && quill_type_dim(y->type, d) != 0)
      return quill_ref_op_error(ctx, op, "cannot resize an empty dim");
    total_map += (size_t)quill_type_dim(y->type, d);
  }
  size_t ny = quill_tensor_num_elements(y);
  if (ny == 0)
    return QUILL_OK;
  size_t bytes = total_map * sizeof(taps);
  taps *mem = quill_alloc(ctx, bytes);
  if (!mem)
    return QUILL_ERR_NOMEM;
  taps *maps[QUILL_MAX_RANK];
  int64_t xstride[QUILL_MAX_RANK];
  quill_ref_strides(x->type, xstride);
  taps *p = mem;
  for (unsigned d = 0; d < r; d++) {
    dim_xform t;
    t.cm = (coord_mode)cm;
    t.in = quill_type_dim(x->type, d);
    int64_t nout = quill_type_dim(y->type, d);
    t.scale = has_scales ? list_num(op, "scales", d, 1.0)
                         : (double)nout / (double)t.in;
    t.len_out = has_scales ? (double)t.in * t.scale : (double)nout;
    t.roi_start = list_num(op, "roi", d, 0.0);
    t.roi_end = list_num(op, "roi", r + d, 1.0);
    maps[d] = p;
    p += nout;
    for (int64_t o = 0; o < nout; o++) {
      bool identity = t.in == nout && !has_scales && t.cm != TF_CROP_AND_RESIZE;
      if (identity) { /* no resampling along this dim */
        memset(&maps[d][o], 0, sizeof(taps));
        maps[d][o].n = 1;
        maps[d][o].idx[0] = o;
        maps[d][o].w[0] = 1;
      } else {
        make_taps(im, (nearest_mode)nm, a, exclude, &t, o, &maps[d][o]);
      }
    }
  }
  int64_t idx[QUILL_MAX_RANK] = {0};
  for (size_t i = 0; i < ny; i++) {
    /* dims with more than one tap are summed over; the rest add a base */
    unsigned active[QUILL_MAX_RANK], na = 0;
    int64_t base = 0;
    double wbase = 1;
    bool outside = false;
    for (unsigned d = 0; d < r; d++) {
      const taps *tp = &maps[d][idx[d]];
      outside |= tp->outside;
      if (tp->n == 1) {
        base += tp->idx[0] * xstride[d];
        wbase *= tp->w[0];
      } else {
        active[na++] = d;
      }
    }
    double v = 0;
    if (outside) {
      v = extrap;
    } else if (na > 8) { /* 4^na taps: refuse absurd ranks rather than hang */
      quill_free(ctx, mem, bytes);
      return quill_ref_op_error(ctx, op, "too many interpolated dims");
    } else {
      unsigned k[QUILL_MAX_RANK] = {0};
      for (;;) {
        double w = wbase;
        int64_t off = base;
        for (unsigned j = 0; j < na; j++) {
          const taps *tp = &maps[active[j]][idx[active[j]]];
          w *= tp->w[k[j]];
          off += tp->idx[k[j]] * xstride[active[j]];
        }
        if (w != 0)
          v += w * quill_tensor_get_f64(x, (size_t)off);
        unsigned j = na;
        while (j-- > 0) {
          if (++k[j] < maps[active[j]][idx[active[j]]].n)
            break;
          k[j] = 0;
        }
        if (j == (unsigned)-1)
          break;
      }
    }
    if (!quill_type_is_float(quill_type_elem(y->type)) && im != NEAREST)
      v = nearbyint(v); /* integer interpolation rounds to nearest even */
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
