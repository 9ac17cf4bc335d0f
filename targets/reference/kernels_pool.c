/*
 * kernels_pool.c - reference kernels for maxpool, avgpool (any number of
 * spatial dims) and global_avgpool / global_maxpool, with ONNX semantics.
 *
 * x is [N, C, D1, ..., Dk]; each of the N*C planes is pooled on its own.
 * For an output position o and a kernel offset q the input position along
 * spatial dim d is
 *
 *   pos_d = o_d * stride_d - pad_begin_d + q_d * dilation_d
 *
 *   |<-pad_b->|<------- D ------->|<-pad_e->|<- ceil_mode overhang ->|
 *   ^ counted when count_include_pad   ^ never counted
 *
 * maxpool takes the max over positions inside [0, D) (padding is -inf).
 * avgpool sums the positions inside [0, D) and divides by their number,
 * or, with count_include_pad, by the number of positions inside the padded
 * extent [-pad_begin, D + pad_end) (a window that ceil_mode lets hang over
 * the end of the padding does not count the overhang, as in ONNX's and
 * PyTorch's reference implementations).
 *
 * Attributes: kernel_shape (required), strides, pads, dilations,
 * ceil_mode, count_include_pad, auto_pad (SAME_* resolved with
 * quill_window_same_pads). The output shape comes from quill_shape_pool
 * and must match the preallocated result.
 *
 * Values are pooled as floats: f32 in place; f16, bf16, f64 and integers
 * of up to 16 bits through a float buffer (exact for those integers). Max
 * pooling of a quantized tensor works on the storage integers and needs
 * the result to have the same quantized type (max commutes with the
 * monotone dequantization). Average pooling of a quantized tensor (same
 * type in and out, docs/quantization.md section 3) sums stored integers
 * exactly, a padded position counted by count_include_pad adding the zero
 * point (the stored value of 0.0), and divides with the op's rounding
 * (avg_round: tflite is TFLite's (s +- n/2) / n on the stored sum, the
 * other policies round the centered average); an empty window gives the
 * zero point. global_avgpool may also change the quant type (or
 * carry {multiplier, shift}): then it is a requantizing mean (qmean).
 */
#include <math.h>
#include <string.h>

#include "ir/quant.h"
#include "ir/shape.h"
#include "targets/reference/kernels.h"

static bool is_max_op(const quill_op *op) {
  quill_opcode o = quill_op_opcode(op);
  return o == QUILL_OP_MAXPOOL || o == QUILL_OP_GLOBAL_MAXPOOL;
}

const char *quill_ref_supports_pool(const quill_op *op) {
  quill_type *xe = quill_type_elem(quill_value_type(quill_op_operand(op, 0)));
  quill_type *ye = quill_type_elem(quill_value_type(quill_op_result(op, 0)));
  if (quill_type_is_quant(xe) || quill_type_is_quant(ye)) {
    bool mean = quill_op_opcode(op) == QUILL_OP_GLOBAL_AVGPOOL &&
                quill_type_is_quant(xe) && quill_type_is_quant(ye) &&
                quill_type_quant_axis_of(ye) < 0;
    if ((xe != ye && !mean) || quill_type_quant_axis_of(xe) >= 0)
      return "quantized operand and result of different types";
    xe = quill_type_quant_storage(xe);
  }
  if (!quill_type_is_float(xe) && quill_type_bit_width(xe) > 16)
    return "integer tensors wider than 16 bits";
  return NULL;
}

/* Advance an odometer over n dims; false after the last index. */
static bool odometer_next(int64_t *idx, const int64_t *dims, unsigned n) {
  for (unsigned d = n; d-- > 0;) {
    if (++idx[d] < dims[d])
      return true;
    idx[d] = 0;
  }
  return false;
}

typedef struct pool_geom {
  unsigned k;                       /* spatial dims */
  size_t planes;                    /* N * C */
  int64_t in[QUILL_MAX_RANK];       /* input spatial dims */
  int64_t outd[QUILL_MAX_RANK];     /* output spatial dims */
  int64_t istride[QUILL_MAX_RANK];  /* row-major strides within a plane */
  size_t in_plane, out_plane;
  quill_window w;
} pool_geom;

static quill_status pool_setup(quill_context *ctx, const quill_op *op,
                               const quill_tensor *x, const quill_tensor *y,
                               pool_geom *g) {
  unsigned r = quill_type_rank(x->type);
  if (r < 3 || quill_type_rank(y->type) != r)
    return quill_ref_op_error(ctx, op, "operand must have rank >= 3 and the "
                                       "result the same rank");
  g->k = r - 2;
  quill_window_init(&g->w, g->k);
  if (quill_op_attr_ints(op, "kernel_shape", g->w.kernel, QUILL_MAX_RANK) !=
      (int64_t)g->k)
    return quill_ref_op_error(ctx, op, "'kernel_shape' must have one entry "
                                       "per spatial dim");
  int64_t v[2 * QUILL_MAX_RANK];
  if (quill_op_attr_ints(op, "strides", v, QUILL_MAX_RANK) == (int64_t)g->k)
    memcpy(g->w.strides, v, g->k * sizeof *v);
  if (quill_op_attr_ints(op, "dilations", v, QUILL_MAX_RANK) == (int64_t)g->k)
    memcpy(g->w.dilations, v, g->k * sizeof *v);
  if (quill_op_attr_ints(op, "pads", v, 2 * QUILL_MAX_RANK) == 2 * (int64_t)g->k)
    memcpy(g->w.pads, v, 2 * g->k * sizeof *v);
  g->w.ceil_mode = quill_op_attr_int(op, "ceil_mode", 0) != 0;
  const char *ap = quill_ref_attr_str(op, "auto_pad", "NOTSET");
  if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER"))
    quill_window_same_pads(&g->w, quill_type_dims(x->type) + 2, g->w.kernel,
                           ap[5] == 'U', false);
  for (unsigned d = 0; d < g->k; d++)
    if (g->w.kernel[d] < 1 || g->w.strides[d] < 1 || g->w.dilations[d] < 1 ||
        g->w.pads[d] < 0 || g->w.pads[d + g->k] < 0)
      return quill_ref_op_error(ctx, op, "invalid window attributes");
  quill_shape xs, os;
  quill_shape_of(x->type, &xs);
  if (!quill_shape_pool(&xs, &g->w, &os, NULL))
    return quill_ref_op_error(ctx, op, "the window does not fit the operand");
  for (unsigned d = 0; d < r; d++)
    if (os.dims[d] != quill_type_dim(y->type, d))
      return quill_ref_op_error(ctx, op, "result shape does not match the "
                                         "window");
  g->planes = (size_t)(xs.dims[0] * xs.dims[1]);
  g->in_plane = g->out_plane = 1;
  for (unsigned d = g->k; d-- > 0;) {
    g->in[d] = xs.dims[d + 2];
    g->outd[d] = os.dims[d + 2];
    g->istride[d] = (int64_t)g->in_plane;
    g->in_plane *= (size_t)g->in[d];
    g->out_plane *= (size_t)g->outd[d];
  }
  return QUILL_OK;
}

/* Pool one plane. */
static void pool_plane(const pool_geom *g, bool is_max, bool include_pad,
                       const float *x, float *y) {
  int64_t o[QUILL_MAX_RANK] = {0}, q[QUILL_MAX_RANK];
  const quill_window *w = &g->w;
  size_t oi = 0;
  if (g->out_plane == 0)
    return;
  do {
    float acc = is_max ? -INFINITY : 0.0f;
    size_t cnt = 0, cnt_pad = 0;
    memset(q, 0, g->k * sizeof *q);
    do {
      bool inside = true, padded = true;
      int64_t off = 0;
      for (unsigned d = 0; d < g->k; d++) {
        int64_t pos = o[d] * w->strides[d] - w->pads[d] + q[d] * w->dilations[d];
        if (pos < 0 || pos >= g->in[d])
          inside = false;
        if (pos < -w->pads[d] || pos >= g->in[d] + w->pads[d + g->k])
          padded = false;
        off += pos * g->istride[d];
      }
      cnt_pad += padded;
      if (inside) {
        float v = x[off];
        if (is_max) {
          if (v > acc || isnan(v))
            acc = isnan(acc) ? acc : v;
        } else
          acc += v;
        cnt++;
      }
    } while (odometer_next(q, w->kernel, g->k));
    if (!is_max) {
      size_t div = include_pad ? cnt_pad : cnt;
      acc = div ? acc / (float)div : NAN;
    }
    y[oi++] = acc;
  } while (odometer_next(o, g->outd, g->k));
}

/* The stored average of n stored values summing to s: tflite divides the
 * stored sum ((s +- n/2) / n, TFLite's AVERAGE_POOL_2D); the other
 * policies round the average of the centered values, zp + round((s -
 * n*zp) / n), i.e. of the real values in units of the scale. */
static int64_t avg_round(int64_t s, int64_t n, int64_t zp, quill_rounding r) {
  if (r == QUILL_ROUND_TFLITE)
    return quill_div_round(s, n, r);
  return zp + quill_div_round(s - n * zp, n, r);
}

/* Average one plane of stored integers (quantized avgpool). */
static void qavg_plane(const pool_geom *g, bool include_pad, int64_t zp,
                       quill_rounding r, const int64_t *x, int64_t *y) {
  int64_t o[QUILL_MAX_RANK] = {0}, q[QUILL_MAX_RANK];
  const quill_window *w = &g->w;
  size_t oi = 0;
  if (g->out_plane == 0)
    return;
  do {
    int64_t sum = 0, cnt = 0, cnt_pad = 0;
    memset(q, 0, g->k * sizeof *q);
    do {
      bool inside = true, padded = true;
      int64_t off = 0;
      for (unsigned d = 0; d < g->k; d++) {
        int64_t pos = o[d] * w->strides[d] - w->pads[d] + q[d] * w->dilations[d];
        if (pos < 0 || pos >= g->in[d])
          inside = false;
        if (pos < -w->pads[d] || pos >= g->in[d] + w->pads[d + g->k])
          padded = false;
        off += pos * g->istride[d];
      }
      cnt_pad += padded;
      if (inside) {
        sum += x[off];
        cnt++;
      }
    } while (odometer_next(q, w->kernel, g->k));
    int64_t n = include_pad ? cnt_pad : cnt;
    if (include_pad)
      sum += (cnt_pad - cnt) * zp;
    y[oi++] = n ? avg_round(sum, n, zp, r) : zp;
  } while (odometer_next(o, g->outd, g->k));
}

/* global_avgpool as a requantizing mean (docs/quantization.md section 3):
 * acc = sum over the plane of (x - zp_x), int32; y = clamp(zp_y + R(acc))
 * with the multiplier of s_x / (n * s_y): fixed point with {multiplier,
 * shift}, else acc * ((f32)s_x / ((f32)s_y * (f32)n)) in f32. */
static quill_status qmean(quill_context *ctx, const quill_op *op,
                          const quill_type *xe, const quill_type *ye,
                          const int64_t *x, size_t nx, int64_t *y, size_t ny,
                          quill_rounding r) {
  int64_t zx = quill_type_quant_zero_points(xe)[0];
  int64_t zy = quill_type_quant_zero_points(ye)[0];
  int64_t qmin = quill_type_quant_qmin(ye), qmax = quill_type_quant_qmax(ye);
  size_t plane = ny ? nx / ny : 0;
  int64_t m = 0, sh = 0;
  bool fixed = quill_op_attr(op, "multiplier") != NULL;
  if (fixed && (quill_op_attr_ints(op, "multiplier", &m, 1) != 1 ||
                quill_op_attr_ints(op, "shift", &sh, 1) != 1 || m < 0 ||
                m > INT32_MAX || sh < -31 || sh > 62))
    return quill_ref_op_error(ctx, op, "'multiplier' and 'shift' must be one "
                                       "int each, in range");
  float scale = (float)quill_type_quant_scales(xe)[0] /
                ((float)quill_type_quant_scales(ye)[0] * (float)plane);
  for (size_t p = 0; p < ny; p++) {
    uint32_t acc = 0; /* an int32 accumulator: wraps */
    for (size_t i = 0; i < plane; i++)
      acc += (uint32_t)(x[p * plane + i] - zx);
    int64_t v = fixed ? quill_requant_fixed((int32_t)acc, (int32_t)m, (int)sh, r)
                      : quill_requant_float((int32_t)acc, scale, r);
    y[p] = v >= qmax - zy ? qmax : v <= qmin - zy ? qmin : v + zy;
  }
  return QUILL_OK;
}

/* The quantized average pools: stored integers in, rounded averages out. */
static quill_status qavg_pool(quill_context *ctx, const quill_op *op,
                              const quill_tensor *x, quill_tensor *y,
                              const pool_geom *g) {
  quill_type *e = quill_type_elem(x->type);
  int64_t zp = quill_type_quant_zero_points(e)[0];
  quill_rounding r;
  if (!quill_rounding_parse(quill_ref_attr_str(op, "rounding", "half_even"),
                            &r))
    return quill_ref_op_error(ctx, op, "unknown 'rounding'");
  size_t nx = quill_tensor_num_elements(x), ny = quill_tensor_num_elements(y);
  int64_t *xi = quill_alloc(ctx, (nx ? nx : 1) * sizeof *xi);
  int64_t *yi = quill_alloc(ctx, (ny ? ny : 1) * sizeof *yi);
  quill_status st = QUILL_OK;
  if (!xi || !yi) {
    st = QUILL_ERR_NOMEM;
    goto done;
  }
  for (size_t i = 0; i < nx; i++)
    xi[i] = quill_tensor_get_i64(x, i);
  if (g) {
    bool include_pad = quill_op_attr_int(op, "count_include_pad", 0) != 0;
    for (size_t p = 0; p < g->planes; p++)
      qavg_plane(g, include_pad, zp, r, xi + p * g->in_plane,
                 yi + p * g->out_plane);
  } else if (quill_type_elem(y->type) == e && !quill_op_attr(op, "multiplier")) {
    /* global, one type: the rounded average of each plane */
    size_t plane = ny ? nx / ny : 0;
    for (size_t p = 0; p < ny; p++) {
      int64_t sum = 0;
      for (size_t i = 0; i < plane; i++)
        sum += xi[p * plane + i];
      yi[p] = plane ? avg_round(sum, (int64_t)plane, zp, r) : zp;
    }
  } else if ((st = qmean(ctx, op, e, quill_type_elem(y->type), xi, nx, yi,
                         ny, r)))
    goto done;
  for (size_t i = 0; i < ny; i++)
    quill_tensor_set_i64(y, i, yi[i]);
done:
  quill_free(ctx, xi, (nx ? nx : 1) * sizeof *xi);
  quill_free(ctx, yi, (ny ? ny : 1) * sizeof *yi);
  return st;
}

static bool is_quant_avg(const quill_op *op, const quill_tensor *x) {
  return !is_max_op(op) && quill_type_is_quant(quill_type_elem(x->type));
}

QUILL_REF_KERNEL(quill_ref_kernel_pool) {
  pool_geom g;
  quill_status st = pool_setup(ctx, op, &in[0], &out[0], &g);
  if (st)
    return st;
  if (is_quant_avg(op, &in[0]))
    return qavg_pool(ctx, op, &in[0], &out[0], &g);
  bool is_max = quill_op_opcode(op) == QUILL_OP_MAXPOOL;
  bool include_pad = quill_op_attr_int(op, "count_include_pad", 0) != 0;
  quill_ref_fbuf fx = {0}, fy = {0};
  if ((st = quill_ref_fbuf_read(ctx, &in[0], &fx)) ||
      (st = quill_ref_fbuf_write(ctx, &out[0], &fy)))
    goto done;
  for (size_t p = 0; p < g.planes; p++)
    pool_plane(&g, is_max, include_pad, fx.p + p * g.in_plane,
               fy.p + p * g.out_plane);
done:
  quill_ref_fbuf_release(ctx, NULL, &fx);
  quill_ref_fbuf_release(ctx, st ? NULL : &out[0], &fy);
  return st;
}

/* global_avgpool / global_maxpool: [N, C, D...] -> [N, C, 1...]. */
QUILL_REF_KERNEL(quill_ref_kernel_global_pool) {
  const quill_tensor *x = &in[0];
  quill_tensor *y = &out[0];
  unsigned r = quill_type_rank(x->type);
  if (r < 2 || quill_type_rank(y->type) != r ||
      quill_type_dim(y->type, 0) != quill_type_dim(x->type, 0) ||
      quill_type_dim(y->type, 1) != quill_type_dim(x->type, 1) ||
      quill_tensor_num_elements(y) !=
          (size_t)(quill_type_dim(x->type, 0) * quill_type_dim(x->type, 1)))
    return quill_ref_op_error(ctx, op, "result must be [N, C, 1, ...]");
  if (is_quant_avg(op, x))
    return qavg_pool(ctx, op, x, y, NULL);
  bool is_max = quill_op_opcode(op) == QUILL_OP_GLOBAL_MAXPOOL;
  size_t planes = quill_tensor_num_elements(y);
  size_t plane = planes ? quill_tensor_num_elements(x) / planes : 0;
  quill_ref_fbuf fx = {0}, fy = {0};
  quill_status st;
  if ((st = quill_ref_fbuf_read(ctx, x, &fx)) ||
      (st = quill_ref_fbuf_write(ctx, y, &fy)))
    goto done;
  for (size_t p = 0; p < planes; p++) {
    const float *xp = fx.p + p * plane;
    double acc = is_max ? -INFINITY : 0.0;
    for (size_t i = 0; i < plane; i++) {
      if (is_max)
        acc = xp[i] > acc || isnan(xp[i]) ? xp[i] : acc;
      else
        acc += xp[i];
    }
    fy.p[p] = (float)(is_max ? acc : (plane ? acc / (double)plane : NAN));
  }
done:
  quill_ref_fbuf_release(ctx, NULL, &fx);
  quill_ref_fbuf_release(ctx, st ? NULL : y, &fy);
  return st;
}
