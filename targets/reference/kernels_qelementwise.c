/*
 * kernels_qelementwise.c - reference kernels for the quantized elementwise
 * integer ops qadd, qmul (numpy broadcasting) and lut, exactly as
 * docs/quantization.md section 3 defines them, and the row-wise
 * qlayer_norm (ir/qnorm.h: int64 row sums, an exact integer square root,
 * one requantization per element through quill_qnorm_elem).
 *
 * With da = a - zp_a, db = b - zp_b (stored values minus zero points) and
 * the result clamped to [max(qmin, act_min), min(qmax, act_max)] after
 * adding zp_y:
 *
 *   qadd, fixed point  v = quill_qadd_fixed(da, db, {multiplier, shift,
 *                          left_shift}, rounding)        (TFLite's ADD)
 *   qadd, float        v = round_r((da*s_a + db*s_b) / s_y)   in f32: the
 *                          dequantize -> add -> quantize of the reference
 *                          form, bit for bit
 *   qmul, fixed point  v = quill_requant_fixed(da * db, m, s, rounding)
 *   qmul, float        v = round_r((da*s_a) * (db*s_b) / s_y)   in f32
 *   lut                y = table[x - storage_min]
 *
 * (f32 means: every product, sum and quotient rounded to f32 in that order,
 * as the dequantize, add/mul and quantize kernels do; f64 when the result's
 * expressed type is f64.) The kernels walk the output with quill_ref_bcast
 * and read elements through the type-generic accessors: slow and plain.
 */
#include <string.h>

#include "ir/qnorm.h"
#include "ir/quant.h"
#include "ir/shape.h"
#include "targets/reference/kernels.h"

/* Per-tensor parameters of a quantized tensor. */
typedef struct qp {
  double scale;
  int64_t zp, qmin, qmax;
  unsigned bits;
} qp;

static bool qp_of(const quill_tensor *t, qp *p) {
  quill_type *e = quill_type_elem(t->type);
  if (!quill_type_is_quant(e) || quill_type_quant_axis_of(e) >= 0)
    return false;
  p->scale = quill_type_quant_scales(e)[0];
  p->zp = quill_type_quant_zero_points(e)[0];
  p->qmin = quill_type_quant_qmin(e);
  p->qmax = quill_type_quant_qmax(e);
  p->bits = quill_type_bit_width(quill_type_quant_storage(e));
  return true;
}

/* The clamp range [max(qmin, act_min), min(qmax, act_max)]. */
static void act_range(const quill_op *op, const qp *y, int64_t *lo,
                      int64_t *hi) {
  *lo = quill_op_attr_int(op, "act_min", y->qmin);
  *hi = quill_op_attr_int(op, "act_max", y->qmax);
  *lo = *lo > y->qmin ? *lo : y->qmin;
  *hi = *hi < y->qmax ? *hi : y->qmax;
}

/* v + zp clamped to [lo, hi] without overflowing. */
static int64_t saturate(int64_t v, int64_t zp, int64_t lo, int64_t hi) {
  if (v >= hi - zp)
    return hi;
  if (v <= lo - zp)
    return lo;
  return v + zp;
}

/* Read an int list attribute of exactly n elements. */
static bool read_ints(const quill_op *op, const char *name, size_t n,
                      int64_t *out) {
  return quill_op_attr_ints(op, name, out, n) == (int64_t)n;
}

typedef struct qbin {
  bool add, fixed, f64;
  quill_rounding r;
  qp a, b, y;
  int64_t lo, hi;
  quill_qadd_params add_p; /* qadd fixed point */
  int32_t m;               /* qmul fixed point */
  int shift;
} qbin;

static quill_status qbin_setup(quill_context *ctx, const quill_op *op,
                               const quill_tensor *in, const quill_tensor *out,
                               qbin *k) {
  memset(k, 0, sizeof *k);
  k->add = quill_op_opcode(op) == QUILL_OP_QADD;
  if (!qp_of(&in[0], &k->a) || !qp_of(&in[1], &k->b) || !qp_of(&out[0], &k->y))
    return quill_ref_op_error(ctx, op, "expects per-tensor quantized operands "
                                       "and result");
  if (!quill_rounding_parse(quill_ref_attr_str(op, "rounding", "half_even"),
                            &k->r))
    return quill_ref_op_error(ctx, op, "unknown 'rounding'");
  k->f64 = quill_type_kind_of(quill_type_quant_expressed(
               quill_type_elem(out[0].type))) == QUILL_TYPE_F64;
  act_range(op, &k->y, &k->lo, &k->hi);
  k->fixed = quill_op_attr(op, "multiplier") != NULL;
  if (!k->fixed)
    return QUILL_OK;
  size_t n = k->add ? 3 : 1;
  int64_t m[3], s[3];
  if (!read_ints(op, "multiplier", n, m) || !read_ints(op, "shift", n, s))
    return quill_ref_op_error(ctx, op, "'multiplier' and 'shift' must be int "
                                       "lists of the op's length");
  for (size_t i = 0; i < n; i++)
    if (m[i] < 0 || m[i] > INT32_MAX || s[i] < -31 || s[i] > 62)
      return quill_ref_op_error(ctx, op, "'multiplier' or 'shift' out of "
                                         "range");
  if (!k->add) {
    k->m = (int32_t)m[0];
    k->shift = (int)s[0];
    return QUILL_OK;
  }
  unsigned bits = k->a.bits > k->b.bits ? k->a.bits : k->b.bits;
  int64_t ls = quill_op_attr_int(op, "left_shift", quill_qadd_left_shift(bits));
  if (ls < 0 || ls > 31 - (int64_t)bits)
    return quill_ref_op_error(ctx, op, "'left_shift' out of range");
  k->add_p.left_shift = (int)ls;
  for (int i = 0; i < 3; i++) {
    k->add_p.multiplier[i] = (int32_t)m[i];
    k->add_p.shift[i] = (int)s[i];
  }
  return QUILL_OK;
}

/* The result's stored value for centered operands da, db. */
static int64_t qbin_eval(const qbin *k, int64_t da, int64_t db) {
  if (k->fixed) {
    int64_t v = k->add ? quill_qadd_fixed(da, db, &k->add_p, k->r)
                       : quill_requant_fixed(da * db, k->m, k->shift, k->r);
    return saturate(v, k->y.zp, k->lo, k->hi);
  }
  double x;
  if (k->f64) {
    double fa = (double)da * k->a.scale, fb = (double)db * k->b.scale;
    x = k->add ? fa + fb : fa * fb;
  } else {
    float fa = (float)da * (float)k->a.scale;
    float fb = (float)db * (float)k->b.scale;
    x = k->add ? (double)(fa + fb) : (double)(fa * fb);
  }
  return quill_quantize_value(x, k->y.scale, k->y.zp, k->lo, k->hi, k->f64,
                              k->r);
}

/* qadd / qmul */
QUILL_REF_KERNEL(quill_ref_kernel_qbinary) {
  qbin k;
  quill_status st = qbin_setup(ctx, op, in, out, &k);
  if (st)
    return st;
  quill_ref_bcast it;
  const quill_type *types[2] = {in[0].type, in[1].type};
  if (!quill_ref_bcast_init(&it, out[0].type, 2, types))
    return quill_ref_op_error(ctx, op, "operand shapes do not broadcast to "
                                       "the result");
  for (size_t i = 0; i < it.count; i++, quill_ref_bcast_next(&it)) {
    int64_t da = quill_tensor_get_i64(&in[0], it.offset[0]) - k.a.zp;
    int64_t db = quill_tensor_get_i64(&in[1], it.offset[1]) - k.b.zp;
    quill_tensor_set_i64(&out[0], i, qbin_eval(&k, da, db));
  }
  return QUILL_OK;
}

/* lut: y = table[x - storage_min]. */
QUILL_REF_KERNEL(quill_ref_kernel_lut) {
  const quill_tensor *x = &in[0];
  quill_tensor *y = &out[0];
  quill_type *xe = quill_type_elem(x->type);
  const quill_attr *t = quill_op_attr(op, "table");
  if (!quill_type_is_quant(xe) ||
      !quill_type_is_quant(quill_type_elem(y->type)) ||
      quill_tensor_num_elements(x) != quill_tensor_num_elements(y))
    return quill_ref_op_error(ctx, op, "expects a quantized operand and "
                                       "result of the same shape");
  quill_type *storage = quill_type_quant_storage(xe);
  unsigned bits = quill_type_bit_width(storage);
  int64_t entries = bits <= 16 ? INT64_C(1) << bits : 0;
  if (!t || quill_attr_kind_of(t) != QUILL_ATTR_DENSE || !entries ||
      quill_type_num_elements(quill_attr_dense_type(t)) != entries)
    return quill_ref_op_error(ctx, op, "'table' must be a dense attribute "
                                       "with one entry per operand value");
  int64_t base = quill_type_int_min(storage);
  size_t n = quill_tensor_num_elements(y);
  for (size_t i = 0; i < n; i++) {
    int64_t idx = quill_tensor_get_i64(x, i) - base;
    quill_tensor_set_i64(y, i, quill_attr_dense_get_i64(t, (size_t)idx));
  }
  return QUILL_OK;
}

/* qlayer_norm x g b: each row of N stored values as ir/qnorm.h defines it
 * (the row's sums in int64, then quill_qnorm_row and quill_qnorm_elem). */
QUILL_REF_KERNEL(quill_ref_kernel_qlayer_norm) {
  const quill_tensor *x = &in[0];
  quill_tensor *y = &out[0];
  quill_type *xe = quill_type_elem(x->type), *ye = quill_type_elem(y->type);
  unsigned r = quill_type_rank(x->type), ax;
  if (!quill_type_is_quant(xe) || !quill_type_is_quant(ye) ||
      quill_tensor_num_elements(x) != quill_tensor_num_elements(y))
    return quill_ref_op_error(ctx, op, "expects a quantized operand and "
                                       "result of the same shape");
  if (!quill_shape_norm_axis(quill_op_attr_int(op, "axis", -1), r, &ax))
    return quill_ref_op_error(ctx, op, "'axis' is out of range");
  size_t n = 1;
  for (unsigned d = ax; d < r; d++)
    n *= (size_t)quill_type_dim(x->type, d);
  if (n == 0 || n > QUILL_QNORM_MAX_ROW ||
      quill_tensor_num_elements(&in[1]) != n ||
      quill_tensor_num_elements(&in[2]) != n)
    return quill_ref_op_error(ctx, op, "g and b must have one element per "
                                       "row element (at most 16383)");
  int64_t E = quill_op_attr_int(op, "epsilon_q", 0);
  int G = (int)quill_op_attr_int(op, "shift", 0);
  int F = (int)quill_op_attr_int(op, "bias_shift", 0);
  int64_t zx = quill_type_quant_zero_points(xe)[0];
  int64_t zy = quill_type_quant_zero_points(ye)[0];
  int64_t qmin = quill_type_quant_qmin(ye), qmax = quill_type_quant_qmax(ye);
  size_t rows = quill_tensor_num_elements(x) / n;
  for (size_t o = 0; o < rows; o++) {
    size_t base = o * n;
    int64_t S = 0, Q = 0;
    for (size_t i = 0; i < n; i++) {
      int64_t xi = quill_tensor_get_i64(x, base + i) - zx;
      S += xi;
      Q += xi * xi;
    }
    int64_t m;
    int s;
    quill_qnorm_row((int64_t)n * Q - S * S + E, &m, &s);
    for (size_t i = 0; i < n; i++) {
      int64_t d = (int64_t)n * (quill_tensor_get_i64(x, base + i) - zx) - S;
      quill_tensor_set_i64(
          y, base + i,
          quill_qnorm_elem(d, m, s, quill_tensor_get_i64(&in[1], i),
                           quill_tensor_get_i64(&in[2], i), G, F, zy, qmin,
                           qmax));
    }
  }
  return QUILL_OK;
}
