/*
 * kernels_qlinear.c - reference kernels for the integer ops qconv2d and
 * qmatmul (ONNX QLinearConv / ConvInteger and QLinearMatMul /
 * MatMulInteger, plus TFLite-style fixed-point requantization).
 *
 * Both compute an int32 accumulator per output element c
 *
 *   acc = sum (q_x - zp_x) * (q_w - zp_w[ch]) + bias[ch]     (modulo 2^32)
 *
 * and return it (i32 result) or requantize it to the result's quant type
 * with the op's rounding policy (ir/quant.h, the shared numerics):
 *
 *   float path   q_y = clamp(zp_y + quill_requant_float(acc, s[ch], r))
 *                s[ch] = quill_requant_scale_f32(s_x, s_w[ch], s_y)
 *   fixed point  q_y = clamp(zp_y + quill_requant_fixed(acc, m[ch],
 *                                                       shift[ch], r))
 *
 * and clamps to [max(qmin, act_min), min(qmax, act_max)] (act_min/act_max:
 * optional int attributes, a fused relu/clip).
 *
 * ch is the output channel (qconv2d: axis 1 of the result, matching
 * per-axis weights along their axis 0) or the result's last axis (qmatmul:
 * the columns, matching per-axis b along its last axis). {multiplier,
 * shift} hold one element or one per channel.
 *
 * The sums run on the f32 engine (quill_ref_conv_core / sgemm.c): x - zp_x
 * and w - zp_w are small integers, exact in f32, and the engine sums at
 * most kc products in f32 before converting to int32, with kc chosen so
 * that no partial sum exceeds 2^24 (quill_ref_exact_block from the largest
 * magnitudes of the two centered operands; for 8-bit data 256). So the
 * result is exact whatever the summation order: integer addition modulo
 * 2^32 is associative. Only if a single product may exceed 2^24 (16- or
 * 32-bit storage with large values) does a plain int64 loop run instead
 * (direct convolution / triple loop); it gives the same bits.
 *
 * With `accumulator = "i64"` (fuse-qdq found that the worst-case sum may
 * not fit in int32) the sums are exact int64 (the same direct loops, not
 * truncated), the bias is added in int64, and the fixed-point path
 * requantizes with quill_requant_fixed64 (TFLite's int64 form); the float
 * path converts the int64 sum to f32 as it does the int32 one.
 */
#include <string.h>

#include "ir/quant.h"
#include "targets/reference/kernels.h"

/* ---- requantization of the accumulators ---------------------------------- */

typedef struct requant {
  bool raw;              /* i32 result: the accumulator itself */
  bool wide;             /* int64 accumulator (accumulator = "i64") */
  quill_rounding r;
  size_t nch;            /* channels of the result */
  int64_t *mult, *shift; /* fixed point (n_fixed elements), or NULL */
  size_t n_fixed;
  float *scale;          /* float path, n_scale elements */
  size_t n_scale;
  int64_t zp, qmin, qmax;
  int32_t *bias;         /* nch elements, or NULL */
} requant;

static void requant_free(quill_context *ctx, requant *rq) {
  quill_free(ctx, rq->mult, rq->n_fixed * sizeof(int64_t));
  quill_free(ctx, rq->shift, rq->n_fixed * sizeof(int64_t));
  quill_free(ctx, rq->scale, rq->n_scale * sizeof(float));
  quill_free(ctx, rq->bias, rq->nch * sizeof(int32_t));
  memset(rq, 0, sizeof *rq);
}

/* Read an int list attribute of 1 or nch elements into a new array. */
static quill_status read_list(quill_context *ctx, const quill_op *op,
                              const char *name, size_t nch, int64_t **out,
                              size_t *n) {
  int64_t len = quill_op_attr_ints(op, name, NULL, 0);
  if (len != 1 && (len < 0 || (size_t)len != nch))
    return quill_ref_op_error(ctx, op, "'multiplier' and 'shift' must be int "
                                       "lists of 1 or one-per-channel "
                                       "elements");
  if (!(*out = quill_alloc(ctx, (size_t)len * sizeof(int64_t))))
    return QUILL_ERR_NOMEM;
  quill_op_attr_ints(op, name, *out, (size_t)len);
  *n = (size_t)len;
  return QUILL_OK;
}

/* Set up the requantization of an op with input scale s_x, weight params
 * wq (per tensor, or one per channel) and nch result channels. Reads the
 * bias from in[2] if the op has one. */
static quill_status requant_init(quill_context *ctx, const quill_op *op,
                                 const quill_tensor *in, const quill_tensor *y,
                                 double s_x, const quill_ref_qinfo *wq,
                                 size_t nch, requant *rq) {
  memset(rq, 0, sizeof *rq);
  rq->nch = nch;
  rq->wide = quill_op_acc_i64(op);
  if (quill_op_num_operands(op) > 2) {
    if (quill_tensor_num_elements(&in[2]) != nch)
      return quill_ref_op_error(ctx, op, "bias must have one element per "
                                         "output channel");
    if (!(rq->bias = quill_alloc(ctx, nch * sizeof(int32_t))))
      return QUILL_ERR_NOMEM;
    for (size_t c = 0; c < nch; c++)
      rq->bias[c] = (int32_t)quill_tensor_get_i64(&in[2], c);
  }
  quill_type *ye = quill_type_elem(y->type);
  if (!quill_type_is_quant(ye)) {
    if (quill_type_kind_of(ye) != QUILL_TYPE_I32 || rq->wide)
      return quill_ref_op_error(ctx, op, "result must be quantized, or i32 "
                                         "with an i32 accumulator");
    rq->raw = true;
    return QUILL_OK;
  }
  if (quill_type_quant_axis_of(ye) >= 0)
    return quill_ref_op_error(ctx, op, "result must be quantized per tensor");
  if (!quill_rounding_parse(quill_ref_attr_str(op, "rounding", "half_even"),
                            &rq->r))
    return quill_ref_op_error(ctx, op, "unknown 'rounding'");
  rq->zp = quill_type_quant_zero_points(ye)[0];
  rq->qmin = quill_type_quant_qmin(ye);
  rq->qmax = quill_type_quant_qmax(ye);
  /* a fused activation: clamp to [max(qmin, act_min), min(qmax, act_max)] */
  int64_t lo = quill_op_attr_int(op, "act_min", rq->qmin);
  int64_t hi = quill_op_attr_int(op, "act_max", rq->qmax);
  rq->qmin = lo > rq->qmin ? lo : rq->qmin;
  rq->qmax = hi < rq->qmax ? hi : rq->qmax;
  quill_status st;
  if (quill_op_attr(op, "multiplier") || quill_op_attr(op, "shift")) {
    size_t ns = 0;
    if ((st = read_list(ctx, op, "multiplier", nch, &rq->mult, &rq->n_fixed)) ||
        (st = read_list(ctx, op, "shift", nch, &rq->shift, &ns)))
      return st;
    if (ns != rq->n_fixed)
      return quill_ref_op_error(ctx, op, "'multiplier' and 'shift' differ in "
                                         "length");
    for (size_t c = 0; c < ns; c++)
      if (rq->mult[c] < 0 || rq->mult[c] > INT32_MAX || rq->shift[c] < -31 ||
          rq->shift[c] > 62)
        return quill_ref_op_error(ctx, op, "'multiplier' or 'shift' out of "
                                           "range");
    return QUILL_OK;
  }
  rq->n_scale = wq->n;
  if (!(rq->scale = quill_alloc(ctx, rq->n_scale * sizeof(float))))
    return QUILL_ERR_NOMEM;
  double s_y = quill_type_quant_scales(ye)[0];
  for (size_t c = 0; c < rq->n_scale; c++)
    rq->scale[c] = quill_requant_scale_f32(s_x, wq->scales[c], s_y);
  return QUILL_OK;
}

/* Saturate a requantized value v to the result: clamp(v + zp) without
 * overflowing v + zp. */
static inline int64_t saturate(const requant *rq, int64_t v) {
  if (v >= rq->qmax - rq->zp)
    return rq->qmax;
  if (v <= rq->qmin - rq->zp)
    return rq->qmin;
  return v + rq->zp;
}

/* q[i] = the result's storage value for accumulator a[i] (bias included)
 * of channel c, i < n. */
static void requant_chunk(const requant *rq, size_t c, const int32_t *a,
                          size_t n, int64_t *restrict q) {
  if (rq->mult) {
    size_t p = rq->n_fixed == 1 ? 0 : c;
    int32_t m = (int32_t)rq->mult[p];
    int sh = (int)rq->shift[p];
    for (size_t i = 0; i < n; i++)
      q[i] = saturate(rq, quill_requant_fixed(a[i], m, sh, rq->r));
  } else {
    float s = rq->scale[rq->n_scale == 1 ? 0 : c];
    for (size_t i = 0; i < n; i++)
      q[i] = saturate(rq, quill_requant_float(a[i], s, rq->r));
  }
}

/* Finish every output: y[i] = requant(acc[i] + bias[ch]) with ch =
 * (i / inner) % nch. acc may be y's own data (i32 result). */
static void requant_store(const requant *rq, int32_t *acc, quill_tensor *y,
                          size_t inner) {
  enum { CHUNK = 256 };
  int64_t q[CHUNK];
  size_t total = quill_tensor_num_elements(y);
  quill_type_kind k = quill_tensor_elem_kind(y);
  for (size_t start = 0; start < total; start += inner) {
    size_t c = (start / inner) % rq->nch;
    uint32_t b = rq->bias ? (uint32_t)rq->bias[c] : 0;
    int32_t *a = acc + start;
    for (size_t i = 0; i < inner; i++)
      a[i] = (int32_t)((uint32_t)a[i] + b); /* modulo 2^32 */
    if (rq->raw)
      continue; /* acc is y */
    for (size_t i0 = 0; i0 < inner; i0 += CHUNK) {
      size_t n = inner - i0 < CHUNK ? inner - i0 : CHUNK;
      size_t o = start + i0;
      requant_chunk(rq, c, a + i0, n, q);
      if (k == QUILL_TYPE_U8) {
        uint8_t *p = (uint8_t *)y->data + o;
        for (size_t i = 0; i < n; i++)
          p[i] = (uint8_t)q[i];
      } else if (k == QUILL_TYPE_I8) {
        int8_t *p = (int8_t *)y->data + o;
        for (size_t i = 0; i < n; i++)
          p[i] = (int8_t)q[i];
      } else {
        for (size_t i = 0; i < n; i++)
          quill_tensor_set_i64(y, o + i, q[i]);
      }
    }
  }
}

/* The same for int64 accumulators (rq->wide, never raw): y[i] =
 * requant(acc[i] + bias[ch]) with the 64-bit requantization. */
static void requant_store64(const requant *rq, const int64_t *acc,
                            quill_tensor *y, size_t inner) {
  size_t total = quill_tensor_num_elements(y);
  for (size_t start = 0; start < total; start += inner) {
    size_t c = (start / inner) % rq->nch;
    int64_t b = rq->bias ? rq->bias[c] : 0;
    for (size_t i = start; i < start + inner; i++) {
      int64_t a = acc[i] + b, v;
      if (rq->mult) {
        size_t p = rq->n_fixed == 1 ? 0 : c;
        v = quill_requant_fixed64(a, (int32_t)rq->mult[p],
                                  (int)rq->shift[p], rq->r);
      } else {
        v = quill_requant_float(a, rq->scale[rq->n_scale == 1 ? 0 : c],
                                rq->r);
      }
      quill_tensor_set_i64(y, i, saturate(rq, v));
    }
  }
}

/* Store an exact sum: as int64 into acc64 (wide), else modulo 2^32. */
static inline void put_acc(int32_t *acc32, int64_t *acc64, size_t i,
                           uint64_t sum) {
  if (acc64)
    acc64[i] = (int64_t)sum;
  else
    acc32[i] = (int32_t)(uint32_t)sum;
}

/* ---- operands --------------------------------------------------------------- */

/* A quantized operand as floats q - zp (zp per its parameter index);
 * *maxabs gets the largest |q - zp|. */
static quill_status centered(quill_context *ctx, const quill_tensor *t,
                             const quill_ref_qinfo *qi, float **out,
                             double *maxabs) {
  size_t n = quill_tensor_num_elements(t);
  float *f = quill_alloc(ctx, (n ? n : 1) * sizeof(float));
  if (!(*out = f))
    return QUILL_ERR_NOMEM;
  quill_type_kind k = quill_tensor_elem_kind(t);
  size_t run = qi->n == 1 ? (n ? n : 1) : qi->inner;
  int64_t lo = 0, hi = 0;
  for (size_t start = 0; start < n; start += run) {
    int64_t zp = qi->zps[quill_ref_qchannel(qi, start)];
    size_t len = run < n - start ? run : n - start;
    if (k == QUILL_TYPE_U8) {
      const uint8_t *p = (const uint8_t *)t->data + start;
      for (size_t i = 0; i < len; i++) {
        int64_t v = (int64_t)p[i] - zp;
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
        f[start + i] = (float)v;
      }
    } else if (k == QUILL_TYPE_I8) {
      const int8_t *p = (const int8_t *)t->data + start;
      for (size_t i = 0; i < len; i++) {
        int64_t v = (int64_t)p[i] - zp;
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
        f[start + i] = (float)v;
      }
    } else {
      for (size_t i = 0; i < len; i++) {
        int64_t v = quill_tensor_get_i64(t, start + i) - zp;
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
        f[start + i] = (float)v;
      }
    }
  }
  *maxabs = (double)(-lo > hi ? -lo : hi);
  return QUILL_OK;
}

static void centered_free(quill_context *ctx, const quill_tensor *t,
                          float *f) {
  size_t n = quill_tensor_num_elements(t);
  quill_free(ctx, f, (n ? n : 1) * sizeof(float));
}

/* The quant params of operand i (which must be quantized and fit). */
static bool operand_qinfo(const quill_tensor *t, quill_ref_qinfo *qi) {
  quill_type *e = quill_type_elem(t->type);
  return quill_type_is_quant(e) && quill_ref_qinfo_init(qi, e, t->type);
}

/* The accumulator buffer: y's data for an i32 result, else scratch. */
static int32_t *acc_buffer(quill_context *ctx, quill_tensor *y, bool raw,
                           size_t n) {
  if (raw)
    return y->data;
  return quill_alloc(ctx, (n ? n : 1) * sizeof(int32_t));
}

static void acc_release(quill_context *ctx, int32_t *acc, bool raw, size_t n) {
  if (!raw)
    quill_free(ctx, acc, (n ? n : 1) * sizeof(int32_t));
}

/* ---- qconv2d ------------------------------------------------------------ */

/* Exact int64 direct convolution (wide storage): acc modulo 2^32, or
 * acc64 whole (an int64 accumulator). The centered operands are copied to
 * int64 arrays once; each output plane then adds weight x shifted input
 * row, a contiguous loop the compiler vectorizes (16-bit ResNet-18 in
 * seconds; element by element with the index arithmetic inside, minutes).
 * Sums wrap modulo 2^64 (uint64), which an int64 accumulator never
 * reaches and the modulo-2^32 one does not see. */
static quill_status qconv_direct(quill_context *ctx,
                                 const quill_ref_conv_geom *g,
                                 const quill_tensor *x, int64_t zx,
                                 const quill_tensor *w,
                                 const quill_ref_qinfo *wq, int32_t *acc,
                                 int64_t *acc64) {
  size_t K = g->Cg * g->kh * g->kw;
  size_t nx = g->N * g->C * g->H * g->W, nw = g->M * K;
  size_t plane = g->OH * g->OW;
  uint64_t *xs = quill_alloc(ctx, (nx ? nx : 1) * sizeof *xs);
  uint64_t *ws = quill_alloc(ctx, (nw ? nw : 1) * sizeof *ws);
  uint64_t *sum = quill_alloc(ctx, (plane ? plane : 1) * sizeof *sum);
  quill_status st = xs && ws && sum ? QUILL_OK : QUILL_ERR_NOMEM;
  for (size_t i = 0; !st && i < nx; i++)
    xs[i] = (uint64_t)(quill_tensor_get_i64(x, i) - zx);
  for (size_t m = 0; !st && m < g->M; m++) {
    int64_t zw = wq->zps[quill_ref_qchannel(wq, m * K)];
    for (size_t k = 0; k < K; k++)
      ws[m * K + k] = (uint64_t)(quill_tensor_get_i64(w, m * K + k) - zw);
  }
  for (size_t n = 0; !st && n < g->N; n++)
    for (size_t m = 0; m < g->M; m++) {
      size_t gr = m / g->Mg;
      memset(sum, 0, plane * sizeof *sum);
      for (size_t c = 0; c < g->Cg; c++) {
        const uint64_t *xc = xs + (n * g->C + gr * g->Cg + c) * g->H * g->W;
        for (size_t i = 0; i < g->kh; i++)
          for (size_t j = 0; j < g->kw; j++) {
            uint64_t wv = ws[m * K + (c * g->kh + i) * g->kw + j];
            if (!wv)
              continue;
            /* the output columns whose input column is inside the image */
            int64_t off = (int64_t)j * g->dw - g->pl;
            size_t ow0 = 0, ow1 = 0;
            while (ow0 < g->OW && (int64_t)ow0 * g->sw + off < 0)
              ow0++;
            ow1 = ow0;
            while (ow1 < g->OW && (int64_t)ow1 * g->sw + off < (int64_t)g->W)
              ow1++;
            for (size_t oh = 0; oh < g->OH; oh++) {
              int64_t ih = (int64_t)oh * g->sh - g->pt + (int64_t)i * g->dh;
              if (ih < 0 || ih >= (int64_t)g->H)
                continue;
              const uint64_t *xr = xc + (size_t)ih * g->W;
              uint64_t *sr = sum + oh * g->OW;
              for (size_t ow = ow0; ow < ow1; ow++)
                sr[ow] += wv * xr[(int64_t)ow * g->sw + off];
            }
          }
      }
      size_t base = (n * g->M + m) * plane;
      for (size_t q = 0; q < plane; q++)
        put_acc(acc, acc64, base + q, sum[q]);
    }
  if (xs)
    quill_free(ctx, xs, (nx ? nx : 1) * sizeof *xs);
  if (ws)
    quill_free(ctx, ws, (nw ? nw : 1) * sizeof *ws);
  if (sum)
    quill_free(ctx, sum, (plane ? plane : 1) * sizeof *sum);
  return st;
}

QUILL_REF_KERNEL(quill_ref_kernel_qconv2d) {
  quill_ref_conv_geom g;
  quill_status st = quill_ref_conv_setup(ctx, op, in, &out[0], false, &g);
  if (st)
    return st;
  quill_tensor *y = &out[0];
  quill_ref_qinfo xq, wq;
  if (!operand_qinfo(&in[0], &xq) || xq.n != 1 ||
      !operand_qinfo(&in[1], &wq) ||
      quill_type_quant_axis_of(quill_type_elem(in[1].type)) > 0)
    return quill_ref_op_error(ctx, op, "expects x quantized per tensor and w "
                                       "per tensor or along axis 0");
  requant rq;
  float *xf = NULL, *wf = NULL;
  size_t nacc = quill_tensor_num_elements(y);
  int32_t *acc = NULL;
  if ((st = requant_init(ctx, op, in, y, xq.scales[0], &wq, g.M, &rq)))
    goto done;
  if (rq.wide) {
    int64_t *acc64 = quill_alloc(ctx, (nacc ? nacc : 1) * sizeof *acc64);
    if (!acc64) {
      st = QUILL_ERR_NOMEM;
      goto done;
    }
    st = qconv_direct(ctx, &g, &in[0], xq.zps[0], &in[1], &wq, NULL, acc64);
    if (!st)
      requant_store64(&rq, acc64, y, g.OH * g.OW);
    quill_free(ctx, acc64, (nacc ? nacc : 1) * sizeof *acc64);
    goto done;
  }
  if (!(acc = acc_buffer(ctx, y, rq.raw, nacc))) {
    st = QUILL_ERR_NOMEM;
    goto done;
  }
  double mx, mw;
  if ((st = centered(ctx, &in[0], &xq, &xf, &mx)) ||
      (st = centered(ctx, &in[1], &wq, &wf, &mw)))
    goto done;
  size_t kc = quill_ref_exact_block(mx, mw);
  if (kc)
    st = quill_ref_conv_core(ctx, &g, xf, wf, NULL, acc, kc);
  else
    st = qconv_direct(ctx, &g, &in[0], xq.zps[0], &in[1], &wq, acc, NULL);
  if (!st)
    requant_store(&rq, acc, y, g.OH * g.OW);
done:
  centered_free(ctx, &in[0], xf);
  centered_free(ctx, &in[1], wf);
  if (acc)
    acc_release(ctx, acc, rq.raw, nacc);
  requant_free(ctx, &rq);
  return st;
}

/* ---- qmatmul ------------------------------------------------------------- */

/* Exact int64 triple loop for one batch (wide storage). */
static void qmatmul_direct(const quill_ref_matmul_plan *p,
                           const quill_tensor *a, size_t oa, int64_t za,
                           const quill_tensor *b, size_t ob,
                           const quill_ref_qinfo *bq, int32_t *acc,
                           int64_t *acc64) {
  for (size_t i = 0; i < p->M; i++)
    for (size_t j = 0; j < p->N; j++) {
      uint64_t sum = 0;
      for (size_t k = 0; k < p->K; k++) {
        size_t bi = ob + k * p->N + j;
        int64_t zb = bq->zps[quill_ref_qchannel(bq, bi)];
        sum += (uint64_t)(quill_tensor_get_i64(a, oa + i * p->K + k) - za) *
               (uint64_t)(quill_tensor_get_i64(b, bi) - zb);
      }
      put_acc(acc, acc64, i * p->N + j, sum);
    }
}

QUILL_REF_KERNEL(quill_ref_kernel_qmatmul) {
  const quill_tensor *a = &in[0], *b = &in[1];
  quill_tensor *y = &out[0];
  quill_ref_matmul_plan p;
  quill_status st = quill_ref_matmul_plan_init(ctx, op, a, b, y, &p);
  if (st)
    return st;
  quill_ref_qinfo aq, bq;
  int32_t baxis = quill_type_is_quant(quill_type_elem(b->type))
                      ? quill_type_quant_axis_of(quill_type_elem(b->type))
                      : -1;
  if (!operand_qinfo(a, &aq) || aq.n != 1 || !operand_qinfo(b, &bq) ||
      (baxis >= 0 && baxis != (int32_t)quill_type_rank(b->type) - 1))
    return quill_ref_op_error(ctx, op, "expects a quantized per tensor and b "
                                       "per tensor or along its last axis");
  unsigned ry = quill_type_rank(y->type);
  size_t cols = ry ? (size_t)quill_type_dim(y->type, ry - 1) : 1;
  requant rq;
  float *af = NULL, *bf = NULL;
  size_t nacc = quill_tensor_num_elements(y);
  int32_t *acc = NULL;
  if ((st = requant_init(ctx, op, in, y, aq.scales[0], &bq, cols, &rq)))
    goto done;
  if (rq.wide) {
    int64_t *acc64 = quill_alloc(ctx, (nacc ? nacc : 1) * sizeof *acc64);
    if (!acc64) {
      st = QUILL_ERR_NOMEM;
      goto done;
    }
    for (size_t t = 0; t < p.batches; t++) {
      size_t oa, ob;
      quill_ref_matmul_offsets(&p, t, &oa, &ob);
      qmatmul_direct(&p, a, oa, aq.zps[0], b, ob, &bq, NULL,
                     acc64 + t * p.M * p.N);
    }
    requant_store64(&rq, acc64, y, 1);
    quill_free(ctx, acc64, (nacc ? nacc : 1) * sizeof *acc64);
    goto done;
  }
  if (!(acc = acc_buffer(ctx, y, rq.raw, nacc))) {
    st = QUILL_ERR_NOMEM;
    goto done;
  }
  double ma, mb;
  if ((st = centered(ctx, a, &aq, &af, &ma)) ||
      (st = centered(ctx, b, &bq, &bf, &mb)))
    goto done;
  size_t kc = quill_ref_exact_block(ma, mb);
  for (size_t t = 0; t < p.batches && !st; t++) {
    size_t oa, ob, oy = t * p.M * p.N;
    quill_ref_matmul_offsets(&p, t, &oa, &ob);
    if (kc)
      st = quill_ref_sgemm_i32(ctx, p.M, p.N, p.K, af + oa, (ptrdiff_t)p.K, 1,
                               bf + ob, (ptrdiff_t)p.N, 1, acc + oy, p.N,
                               false, kc);
    else
      qmatmul_direct(&p, a, oa, aq.zps[0], b, ob, &bq, acc + oy, NULL);
  }
  if (!st)
    requant_store(&rq, acc, y, 1);
done:
  centered_free(ctx, a, af);
  centered_free(ctx, b, bf);
  if (acc)
    acc_release(ctx, acc, rq.raw, nacc);
  requant_free(ctx, &rq);
  return st;
}
