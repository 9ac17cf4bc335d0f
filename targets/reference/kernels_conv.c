/*
 * kernels_conv.c - reference kernels for conv2d and conv_transpose2d
 * (ONNX Conv / ConvTranspose on NCHW activations), and the convolution
 * engine that qconv2d (kernels_qlinear.c) shares: the geometry setup
 * (quill_ref_conv_setup) and quill_ref_conv_core.
 *
 * quill_ref_conv_core, per batch image n and group g (Cg = C/group input
 * channels, Mg = M/group output channels, weights OIHW [M, Cg, kh, kw]):
 *
 *   im2col:  col[(c*kh + i)*kw + j][oh*OW + ow] =
 *              x[n, g*Cg + c, oh*sh - pad_top + i*dh, ow*sw - pad_left + j*dw]
 *            (0 where that falls into the padding), generated a row at a
 *            time straight into the GEMM's packed B layout
 *   GEMM:    y[n, g*Mg .. g*Mg+Mg, :] = W_g [Mg x Cg*kh*kw] * col
 *
 * A 1x1 kernel with stride 1 and no padding skips im2col: the input
 * channels already are the col matrix. Depthwise-like convolutions (one
 * input channel per group, Cg == 1, e.g. group == C) would be Mg x kh*kw
 * GEMMs per channel, so they run as a direct loop instead: for each tap
 * (i, j), y[m] += w[m, 0, i, j] * (shifted input plane), the inner loop
 * running along an output row.
 *
 * The core computes in f32 into an f32 result, or, for integer-valued
 * operands (qconv2d's x - zp_x and w - zp_w), exactly into an int32
 * result (quill_ref_sgemm_i32's K blocks; direct loops sum at most kh*kw
 * taps in f32 before converting).
 *
 * conv_transpose2d runs the same picture backwards (weights IOHW
 * [C, Mg, kh, kw]): col = W_g^T * x_g, then col2im scatter-adds each
 * column entry to y[n, g*Mg + m, h*sh - pad_top + i*dh, w*sw - pad_left +
 * j*dw] when that lies inside the output (so pads crop the full result,
 * and output_padding only enlarges the result shape).
 *
 * Both float kernels compute in f32 (f16, bf16 and f64 tensors are staged
 * through float buffers) and add the bias last. Attributes: strides, pads
 * [t, l, b, r], dilations, group, auto_pad (SAME_UPPER/SAME_LOWER resolved
 * with quill_window_same_pads), output_padding (transpose). The result
 * shape is recomputed and must equal the preallocated output's.
 */
#include <string.h>

#include "ir/shape.h"
#include "targets/reference/kernels.h"

typedef quill_ref_conv_geom conv_geom;

quill_status quill_ref_conv_setup(quill_context *ctx, const quill_op *op,
                                  const quill_tensor *in,
                                  const quill_tensor *y, bool transpose,
                                  quill_ref_conv_geom *g) {
  const quill_type *xt = in[0].type, *wt = in[1].type;
  if (quill_type_rank(xt) != 4 || quill_type_rank(wt) != 4 ||
      quill_type_rank(y->type) != 4)
    return quill_ref_op_error(ctx, op, "operands and result must be 4-D");
  quill_window w;
  if (!quill_window_of_conv(op, xt, wt, transpose, &w))
    return quill_ref_op_error(ctx, op,
                              "invalid strides, dilations, pads or group");
  quill_shape xs, ws, os;
  quill_shape_of(xt, &xs);
  quill_shape_of(wt, &ws);
  bool ok = transpose ? quill_shape_conv_transpose(&xs, &ws, &w, &os, NULL)
                      : quill_shape_conv(&xs, &ws, &w, &os, NULL);
  if (!ok)
    return quill_ref_op_error(ctx, op, "operand shapes do not fit");
  for (unsigned d = 0; d < 4; d++)
    if (os.dims[d] != quill_type_dim(y->type, d))
      return quill_ref_op_error(ctx, op, "result shape does not match the "
                                         "operands");
  g->N = (size_t)xs.dims[0];
  g->C = (size_t)xs.dims[1];
  g->H = (size_t)xs.dims[2];
  g->W = (size_t)xs.dims[3];
  g->M = (size_t)os.dims[1];
  g->OH = (size_t)os.dims[2];
  g->OW = (size_t)os.dims[3];
  g->kh = (size_t)ws.dims[2];
  g->kw = (size_t)ws.dims[3];
  g->group = (size_t)w.group;
  if (g->C % g->group || g->M % g->group)
    return quill_ref_op_error(ctx, op, "channels are not divisible by 'group'");
  g->Cg = g->C / g->group;
  g->Mg = g->M / g->group;
  g->sh = w.strides[0];
  g->sw = w.strides[1];
  g->dh = w.dilations[0];
  g->dw = w.dilations[1];
  g->pt = w.pads[0];
  g->pl = w.pads[1];
  if (quill_op_num_operands(op) > 2 &&
      quill_tensor_num_elements(&in[2]) != g->M)
    return quill_ref_op_error(ctx, op, "bias must have one element per "
                                       "output channel");
  return QUILL_OK;
}

/* Row k = (c*kh + i)*kw + j of the im2col matrix of the Cg channels
 * starting at x (each H x W): OH*OW floats into row. */
static void im2col_row(const conv_geom *g, const float *x, size_t k,
                       float *restrict row) {
  size_t j = k % g->kw, i = k / g->kw % g->kh, c = k / (g->kw * g->kh);
  const float *xc = x + c * g->H * g->W;
  int64_t di = (int64_t)i * g->dh - g->pt;
  int64_t dj = (int64_t)j * g->dw - g->pl;
  /* output columns ow whose input column lies in [0, W) */
  int64_t lo = 0, hi = (int64_t)g->OW;
  while (lo < hi && lo * g->sw + dj < 0)
    lo++;
  while (hi > lo && (hi - 1) * g->sw + dj >= (int64_t)g->W)
    hi--;
  for (size_t oh = 0; oh < g->OH; oh++) {
    float *r = row + oh * g->OW;
    int64_t ih = (int64_t)oh * g->sh + di;
    if (ih < 0 || ih >= (int64_t)g->H) {
      memset(r, 0, g->OW * sizeof(float));
      continue;
    }
    const float *xr = xc + (size_t)ih * g->W;
    for (int64_t ow = 0; ow < lo; ow++)
      r[ow] = 0;
    if (g->sw == 1) {
      if (hi > lo)
        memcpy(r + lo, xr + lo + dj, (size_t)(hi - lo) * sizeof(float));
    } else {
      for (int64_t ow = lo; ow < hi; ow++)
        r[ow] = xr[ow * g->sw + dj];
    }
    for (int64_t ow = hi; ow < (int64_t)g->OW; ow++)
      r[ow] = 0;
  }
}

/* One output plane of a group with a single input channel: yp [OH x OW] =
 * sum over taps of w[i][j] * x shifted (x is that channel's H x W plane).
 * Each output sums its taps in (i, j) order, skipping padding. */
static void depthwise_plane(const conv_geom *g, const float *x,
                            const float *w, float *restrict yp) {
  memset(yp, 0, g->OH * g->OW * sizeof(float));
  for (size_t i = 0; i < g->kh; i++)
    for (size_t j = 0; j < g->kw; j++) {
      const float wv = w[i * g->kw + j];
      int64_t di = (int64_t)i * g->dh - g->pt;
      int64_t dj = (int64_t)j * g->dw - g->pl;
      int64_t lo = 0, hi = (int64_t)g->OW;
      while (lo < hi && lo * g->sw + dj < 0)
        lo++;
      while (hi > lo && (hi - 1) * g->sw + dj >= (int64_t)g->W)
        hi--;
      for (size_t oh = 0; oh < g->OH; oh++) {
        int64_t ih = (int64_t)oh * g->sh + di;
        if (ih < 0 || ih >= (int64_t)g->H)
          continue;
        const float *restrict xr = x + (size_t)ih * g->W;
        float *restrict yr = yp + oh * g->OW;
        if (g->sw == 1) {
          for (int64_t ow = lo; ow < hi; ow++)
            yr[ow] += wv * xr[ow + dj];
        } else {
          for (int64_t ow = lo; ow < hi; ow++)
            yr[ow] += wv * xr[ow * g->sw + dj];
        }
      }
    }
}

/* Plane p (ohw values) of an int32 result from exact f32 sums. */
static void plane_to_i32(const float *src, int32_t *dst, size_t ohw) {
  for (size_t p = 0; p < ohw; p++)
    dst[p] = (int32_t)src[p];
}

quill_status quill_ref_conv_core(quill_context *ctx,
                                 const quill_ref_conv_geom *g, const float *x,
                                 const float *w, float *yf, int32_t *yi,
                                 size_t kc_max) {
  size_t K = g->Cg * g->kh * g->kw, ohw = g->OH * g->OW;
  bool direct = g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 &&
                g->pt == 0 && g->pl == 0 && g->OH == g->H && g->OW == g->W;
  bool depthwise = g->Cg == 1 && g->kh * g->kw <= kc_max;
  quill_status st = QUILL_OK;
  size_t row_n = 0, bp_n = 0, plane_n = 0;
  float *row = NULL, *bp = NULL, *plane = NULL;
  if (depthwise)
    plane_n = yi ? ohw : 0;
  else if (!direct) {
    row_n = ohw;
    bp_n = quill_ref_packed_b_size(K, ohw);
  }
  if ((row_n && !(row = quill_alloc(ctx, row_n * sizeof(float)))) ||
      (bp_n && !(bp = quill_alloc(ctx, bp_n * sizeof(float)))) ||
      (plane_n && !(plane = quill_alloc(ctx, plane_n * sizeof(float))))) {
    st = QUILL_ERR_NOMEM;
    goto done;
  }
  for (size_t n = 0; n < g->N && !st; n++) {
    size_t y0 = n * g->M * ohw;
    if (depthwise) {
      for (size_t m = 0; m < g->M; m++) {
        const float *xc = x + (n * g->C + m / g->Mg) * g->H * g->W;
        const float *wm = w + m * g->kh * g->kw;
        if (yi) {
          depthwise_plane(g, xc, wm, plane);
          plane_to_i32(plane, yi + y0 + m * ohw, ohw);
        } else {
          depthwise_plane(g, xc, wm, yf + y0 + m * ohw);
        }
      }
      continue;
    }
    for (size_t gr = 0; gr < g->group && !st; gr++) {
      const float *xg = x + (n * g->C + gr * g->Cg) * g->H * g->W;
      const float *wg = w + gr * g->Mg * K;
      size_t yo = y0 + gr * g->Mg * ohw;
      if (direct) {
        st = yi ? quill_ref_sgemm_i32(ctx, g->Mg, ohw, K, wg, (ptrdiff_t)K, 1,
                                      xg, (ptrdiff_t)ohw, 1, yi + yo, ohw,
                                      false, kc_max)
                : quill_ref_sgemm(ctx, g->Mg, ohw, K, wg, (ptrdiff_t)K, 1, xg,
                                  (ptrdiff_t)ohw, 1, yf + yo, ohw, false);
        continue;
      }
      for (size_t k = 0; k < K; k++) {
        im2col_row(g, xg, k, row);
        quill_ref_pack_b_row(bp, K, ohw, k, row);
      }
      st = yi ? quill_ref_sgemm_packed_i32(ctx, g->Mg, ohw, K, wg,
                                           (ptrdiff_t)K, 1, bp, yi + yo, ohw,
                                           false, kc_max)
              : quill_ref_sgemm_packed(ctx, g->Mg, ohw, K, wg, (ptrdiff_t)K,
                                       1, bp, yf + yo, ohw, false);
    }
  }
done:
  quill_free(ctx, row, row_n * sizeof(float));
  quill_free(ctx, bp, bp_n * sizeof(float));
  quill_free(ctx, plane, plane_n * sizeof(float));
  return st;
}

/* Add bias[m] to each of the M planes of size `plane` of one image. */
static void add_bias(float *y, const float *bias, size_t M, size_t plane) {
  for (size_t m = 0; m < M; m++)
    for (size_t p = 0; p < plane; p++)
      y[m * plane + p] += bias[m];
}

QUILL_REF_KERNEL(quill_ref_kernel_conv2d) {
  conv_geom g;
  quill_status st = quill_ref_conv_setup(ctx, op, in, &out[0], false, &g);
  if (st)
    return st;
  bool has_b = quill_op_num_operands(op) > 2;
  size_t ohw = g.OH * g.OW;
  quill_ref_fbuf fx = {0}, fw = {0}, fb = {0}, fy = {0};
  if ((st = quill_ref_fbuf_read(ctx, &in[0], &fx)) ||
      (st = quill_ref_fbuf_read(ctx, &in[1], &fw)) ||
      (has_b && (st = quill_ref_fbuf_read(ctx, &in[2], &fb))) ||
      (st = quill_ref_fbuf_write(ctx, &out[0], &fy)))
    goto done;
  st = quill_ref_conv_core(ctx, &g, fx.p, fw.p, fy.p, NULL, SIZE_MAX);
  if (!st && has_b)
    for (size_t n = 0; n < g.N; n++)
      add_bias(fy.p + n * g.M * ohw, fb.p, g.M, ohw);
done:
  quill_ref_fbuf_release(ctx, NULL, &fx);
  quill_ref_fbuf_release(ctx, NULL, &fw);
  quill_ref_fbuf_release(ctx, NULL, &fb);
  quill_ref_fbuf_release(ctx, st ? NULL : &out[0], &fy);
  return st;
}

/* col2im for one group of one image: scatter-add col [Mg*kh*kw, H*W] into
 * the Mg output planes starting at y (each OH x OW). */
static void col2im(const conv_geom *g, const float *col, float *y) {
  size_t hw = g->H * g->W;
  for (size_t m = 0; m < g->Mg; m++)
    for (size_t i = 0; i < g->kh; i++)
      for (size_t j = 0; j < g->kw; j++) {
        const float *row = col + ((m * g->kh + i) * g->kw + j) * hw;
        float *ym = y + m * g->OH * g->OW;
        for (size_t h = 0; h < g->H; h++) {
          int64_t oh = (int64_t)h * g->sh - g->pt + (int64_t)i * g->dh;
          if (oh < 0 || oh >= (int64_t)g->OH)
            continue;
          for (size_t w = 0; w < g->W; w++) {
            int64_t ow = (int64_t)w * g->sw - g->pl + (int64_t)j * g->dw;
            if (ow >= 0 && ow < (int64_t)g->OW)
              ym[(size_t)oh * g->OW + (size_t)ow] += row[h * g->W + w];
          }
        }
      }
}

QUILL_REF_KERNEL(quill_ref_kernel_conv_transpose2d) {
  conv_geom g;
  quill_status st = quill_ref_conv_setup(ctx, op, in, &out[0], true, &g);
  if (st)
    return st;
  bool has_b = quill_op_num_operands(op) > 2;
  size_t R = g.Mg * g.kh * g.kw, hw = g.H * g.W, ohw = g.OH * g.OW;
  quill_ref_fbuf fx = {0}, fw = {0}, fb = {0}, fy = {0};
  size_t col_size = R * hw * sizeof(float);
  float *col = NULL;
  if ((st = quill_ref_fbuf_read(ctx, &in[0], &fx)) ||
      (st = quill_ref_fbuf_read(ctx, &in[1], &fw)) ||
      (has_b && (st = quill_ref_fbuf_read(ctx, &in[2], &fb))) ||
      (st = quill_ref_fbuf_write(ctx, &out[0], &fy)))
    goto done;
  if (col_size && !(col = quill_alloc(ctx, col_size))) {
    st = QUILL_ERR_NOMEM;
    goto done;
  }
  memset(fy.p, 0, fy.n * sizeof(float));
  for (size_t n = 0; n < g.N && !st; n++) {
    float *yn = fy.p + n * g.M * ohw;
    for (size_t gr = 0; gr < g.group && !st; gr++) {
      /* W_g is [Cg, R] row-major; A = W_g^T [R x Cg] */
      const float *wg = fw.p + gr * g.Cg * R;
      const float *xg = fx.p + (n * g.C + gr * g.Cg) * hw;
      st = quill_ref_sgemm(ctx, R, hw, g.Cg, wg, 1, (ptrdiff_t)R, xg,
                           (ptrdiff_t)hw, 1, col, hw, false);
      if (!st)
        col2im(&g, col, yn + gr * g.Mg * ohw);
    }
    if (has_b)
      add_bias(yn, fb.p, g.M, ohw);
  }
done:
  if (col)
    quill_free(ctx, col, col_size);
  quill_ref_fbuf_release(ctx, NULL, &fx);
  quill_ref_fbuf_release(ctx, NULL, &fw);
  quill_ref_fbuf_release(ctx, NULL, &fb);
  quill_ref_fbuf_release(ctx, st ? NULL : &out[0], &fy);
  return st;
}
