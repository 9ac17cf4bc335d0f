/*
 * kernels_eltwise.c - reference kernels for the elementwise ops: unary math,
 * clip, cast, binary arithmetic, comparisons and where, with ONNX semantics
 * and numpy broadcasting.
 *
 * Each op's scalar behaviour is a small function, kept in opcode-indexed
 * tables local to this file (unary_defs, binary_defs, compare_defs). A table
 * row has one function per computation domain:
 *
 *   result element type   domain
 *   f32, f16, bf16        float  (as an f32 runtime computes; f16/bf16 are
 *                                 widened exactly, rounded once on store)
 *   f64                   double
 *   iN, uN, bool          int64  (wrapping to the result width on store;
 *                                 u64 compares and divides unsigned)
 *
 * A NULL int64 function means the op is float-only (quill_ref_supports_unary
 * reports that before evaluation). Integer division by zero, and zero to a
 * negative integer power, are reported as errors at the op, never trapped.
 * Binary kernels walk the output with quill_ref_bcast (numpy broadcasting).
 *
 * Plain f32 tensors (every operand and the result) take a direct path: the
 * same float function on floats loaded and stored as such, the result
 * identical to the generic path's (an f32 widened to double and narrowed
 * back is itself). Calibration runs every sample through these kernels:
 * through the per-element accessors, the binary and unary ops of PP-OCRv4
 * rec took about 60% of its calibrate's CPU time.
 */
#include <math.h>
#include <string.h>

#include "ir/fmath.h"
#include "targets/reference/kernels.h"

typedef enum domain { DOM_F32, DOM_F64, DOM_INT } domain;

static domain domain_of(const quill_tensor *t) {
  switch (quill_tensor_elem_kind(t)) {
  case QUILL_TYPE_F64: return DOM_F64;
  case QUILL_TYPE_F32: case QUILL_TYPE_F16: case QUILL_TYPE_BF16:
    return DOM_F32;
  default: return DOM_INT;
  }
}

/* A tensor of plain f32 elements (not quantized, not f16/bf16). */
static bool plain_f32(const quill_tensor *t) {
  return quill_type_kind_of(quill_type_elem(t->type)) == QUILL_TYPE_F32;
}

static float load_f32(const quill_tensor *t, size_t i) {
  float v;
  memcpy(&v, (const char *)t->data + i * sizeof v, sizeof v);
  return v;
}

static void store_f32(quill_tensor *t, size_t i, float v) {
  memcpy((char *)t->data + i * sizeof v, &v, sizeof v);
}

static quill_status shape_error(quill_context *ctx, const quill_op *op) {
  return quill_error(ctx, quill_op_loc(op),
                     "reference: operand shapes of '%s' do not broadcast to "
                     "its result shape",
                     quill_op_name(op));
}

/* ---- unary ---------------------------------------------------------------- */

typedef struct uparams {
  double alpha, beta; /* leaky_relu, hard_sigmoid, hard_swish */
  bool tanh_approx;   /* gelu {approximate = "tanh"} */
  bool is_unsigned;   /* integer domain: element type is unsigned */
} uparams;

static float relu_f(float x, const uparams *p) { (void)p; return x > 0 ? x : 0.0f; }
static double relu_d(double x, const uparams *p) { (void)p; return x > 0 ? x : 0.0; }
static int64_t relu_i(int64_t x, const uparams *p) { return p->is_unsigned || x > 0 ? x : 0; }
static float leaky_f(float x, const uparams *p) { return x < 0 ? (float)p->alpha * x : x; }
static double leaky_d(double x, const uparams *p) { return x < 0 ? p->alpha * x : x; }
static float sigmoid_f(float x, const uparams *p) { (void)p; return 1.0f / (1.0f + quill_fexp(-x)); }
static double sigmoid_d(double x, const uparams *p) { (void)p; return 1.0 / (1.0 + exp(-x)); }
static float tanh_f(float x, const uparams *p) { (void)p; return quill_ftanh(x); }
static double tanh_d(double x, const uparams *p) { (void)p; return tanh(x); }
static float hsig_f(float x, const uparams *p) {
  return fmaxf(0.0f, fminf(1.0f, (float)p->alpha * x + (float)p->beta));
}
static double hsig_d(double x, const uparams *p) {
  return fmax(0.0, fmin(1.0, p->alpha * x + p->beta));
}
static float hswish_f(float x, const uparams *p) { return x * hsig_f(x, p); }
static double hswish_d(double x, const uparams *p) { return x * hsig_d(x, p); }
static float gelu_f(float x, const uparams *p) {
  if (p->tanh_approx)
    return 0.5f * x *
           (1.0f + quill_ftanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
  return 0.5f * x * (1.0f + quill_ferf(x * 0.70710678118654752f));
}
static double gelu_d(double x, const uparams *p) {
  if (p->tanh_approx)
    return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
  return 0.5 * x * (1.0 + erf(x * 0.70710678118654752));
}
static float erf_f(float x, const uparams *p) { (void)p; return quill_ferf(x); }
static double erf_d(double x, const uparams *p) { (void)p; return erf(x); }
static float sqrt_f(float x, const uparams *p) { (void)p; return sqrtf(x); }
static double sqrt_d(double x, const uparams *p) { (void)p; return sqrt(x); }
static float exp_f(float x, const uparams *p) { (void)p; return quill_fexp(x); }
static double exp_d(double x, const uparams *p) { (void)p; return exp(x); }
static float log_f(float x, const uparams *p) { (void)p; return logf(x); }
static double log_d(double x, const uparams *p) { (void)p; return log(x); }
static float neg_f(float x, const uparams *p) { (void)p; return -x; }
static double neg_d(double x, const uparams *p) { (void)p; return -x; }
static int64_t neg_i(int64_t x, const uparams *p) { (void)p; return (int64_t)(0 - (uint64_t)x); }
static float abs_f(float x, const uparams *p) { (void)p; return fabsf(x); }
static double abs_d(double x, const uparams *p) { (void)p; return fabs(x); }
static int64_t abs_i(int64_t x, const uparams *p) {
  return p->is_unsigned || x >= 0 ? x : (int64_t)(0 - (uint64_t)x);
}
static float recip_f(float x, const uparams *p) { (void)p; return 1.0f / x; }
static double recip_d(double x, const uparams *p) { (void)p; return 1.0 / x; }
static float floor_f(float x, const uparams *p) { (void)p; return floorf(x); }
static double floor_d(double x, const uparams *p) { (void)p; return floor(x); }
static float ceil_f(float x, const uparams *p) { (void)p; return ceilf(x); }
static double ceil_d(double x, const uparams *p) { (void)p; return ceil(x); }

typedef struct unary_def {
  float (*f32)(float x, const uparams *p);
  double (*f64)(double x, const uparams *p);
  int64_t (*i64)(int64_t x, const uparams *p); /* NULL: float only */
  double alpha, beta;                          /* attribute defaults */
} unary_def;

static const unary_def unary_defs[QUILL_OP_COUNT] = {
    [QUILL_OP_RELU] = {relu_f, relu_d, relu_i, 0, 0},
    [QUILL_OP_LEAKY_RELU] = {leaky_f, leaky_d, NULL, 0.01, 0},
    [QUILL_OP_SIGMOID] = {sigmoid_f, sigmoid_d, NULL, 0, 0},
    [QUILL_OP_TANH] = {tanh_f, tanh_d, NULL, 0, 0},
    [QUILL_OP_HARD_SIGMOID] = {hsig_f, hsig_d, NULL, 0.2, 0.5},
    [QUILL_OP_HARD_SWISH] = {hswish_f, hswish_d, NULL, 1.0 / 6.0, 0.5},
    [QUILL_OP_GELU] = {gelu_f, gelu_d, NULL, 0, 0},
    [QUILL_OP_ERF] = {erf_f, erf_d, NULL, 0, 0},
    [QUILL_OP_SQRT] = {sqrt_f, sqrt_d, NULL, 0, 0},
    [QUILL_OP_EXP] = {exp_f, exp_d, NULL, 0, 0},
    [QUILL_OP_LOG] = {log_f, log_d, NULL, 0, 0},
    [QUILL_OP_NEG] = {neg_f, neg_d, neg_i, 0, 0},
    [QUILL_OP_ABS] = {abs_f, abs_d, abs_i, 0, 0},
    [QUILL_OP_RECIPROCAL] = {recip_f, recip_d, NULL, 0, 0},
    [QUILL_OP_FLOOR] = {floor_f, floor_d, NULL, 0, 0},
    [QUILL_OP_CEIL] = {ceil_f, ceil_d, NULL, 0, 0},
};

static bool elem_is_quant(const quill_type *t) {
  return quill_type_is_quant(quill_type_elem(t));
}

/* Every operand and result has a plain scalar (not quantized) element. */
const char *quill_ref_supports_scalar(const quill_op *op) {
  for (unsigned i = 0; i < quill_op_num_operands(op); i++)
    if (elem_is_quant(quill_value_type(quill_op_operand(op, i))))
      return "quantized element types";
  for (unsigned i = 0; i < quill_op_num_results(op); i++)
    if (elem_is_quant(quill_value_type(quill_op_result(op, i))))
      return "quantized element types";
  return NULL;
}

const char *quill_ref_supports_unary(const quill_op *op) {
  const char *why = quill_ref_supports_scalar(op);
  if (why)
    return why;
  const unary_def *d = &unary_defs[quill_op_opcode(op)];
  if (!d->f32)
    return "no scalar function";
  quill_type *elem = quill_type_elem(quill_value_type(quill_op_result(op, 0)));
  if (!quill_type_is_float(elem) && !d->i64)
    return "integer tensors";
  return NULL;
}

QUILL_REF_KERNEL(quill_ref_kernel_unary) {
  const unary_def *d = &unary_defs[quill_op_opcode(op)];
  const quill_tensor *x = &in[0];
  quill_tensor *y = &out[0];
  size_t n = quill_tensor_num_elements(y);
  if (quill_tensor_num_elements(x) != n)
    return shape_error(ctx, op);
  uparams p = {quill_op_attr_number(op, "alpha", d->alpha),
               quill_op_attr_number(op, "beta", d->beta),
               false, !quill_type_is_signed(quill_type_elem(y->type))};
  const quill_attr *approx = quill_op_attr(op, "approximate");
  if (approx && quill_attr_kind_of(approx) == QUILL_ATTR_STRING) {
    size_t len;
    const char *s = quill_attr_string_value(approx, &len);
    p.tanh_approx = len == 4 && memcmp(s, "tanh", 4) == 0;
  }
  domain dom = domain_of(y);
  if (plain_f32(x) && plain_f32(y)) {
    for (size_t i = 0; i < n; i++)
      store_f32(y, i, d->f32(load_f32(x, i), &p));
    return QUILL_OK;
  }
  for (size_t i = 0; i < n; i++) {
    if (dom == DOM_F32)
      quill_tensor_set_f64(y, i, d->f32((float)quill_tensor_get_f64(x, i), &p));
    else if (dom == DOM_F64)
      quill_tensor_set_f64(y, i, d->f64(quill_tensor_get_f64(x, i), &p));
    else if (d->i64)
      quill_tensor_set_i64(y, i, d->i64(quill_tensor_get_i64(x, i), &p));
    else
      return quill_error(ctx, quill_op_loc(op),
                         "reference: '%s' needs float tensors",
                         quill_op_name(op));
  }
  return QUILL_OK;
}

/* ---- clip ----------------------------------------------------------------- */

/* Bound of clip: operand `idx` (a one-element tensor) if present, else the
 * attribute `name`, else dflt. */
static bool clip_bound(const quill_op *op, const quill_tensor *in,
                       unsigned idx, const char *name, double dflt,
                       double *out) {
  if (quill_op_num_operands(op) > idx) {
    if (quill_tensor_num_elements(&in[idx]) != 1)
      return false;
    *out = quill_tensor_get_f64(&in[idx], 0);
    return true;
  }
  *out = quill_op_attr_number(op, name, dflt);
  return true;
}

QUILL_REF_KERNEL(quill_ref_kernel_clip) {
  const quill_tensor *x = &in[0];
  quill_tensor *y = &out[0];
  size_t n = quill_tensor_num_elements(y);
  double lo, hi;
  if (quill_tensor_num_elements(x) != n)
    return shape_error(ctx, op);
  if (!clip_bound(op, in, 1, "min", -INFINITY, &lo) ||
      !clip_bound(op, in, 2, "max", INFINITY, &hi))
    return quill_error(ctx, quill_op_loc(op),
                       "reference: clip bounds must have one element");
  domain dom = domain_of(y);
  bool u64 = quill_tensor_elem_kind(y) == QUILL_TYPE_U64;
  for (size_t i = 0; i < n; i++) {
    if (dom == DOM_F32) { /* NaN passes through: comparisons are false */
      float v = (float)quill_tensor_get_f64(x, i);
      v = v < (float)lo ? (float)lo : v;
      v = v > (float)hi ? (float)hi : v;
      quill_tensor_set_f64(y, i, v);
    } else if (dom == DOM_F64 || u64) {
      double v = quill_tensor_get_f64(x, i);
      v = v < lo ? lo : v;
      v = v > hi ? hi : v;
      quill_tensor_set_f64(y, i, v);
    } else {
      /* clamp in double, stored with saturation; min > max yields max */
      int64_t v = quill_tensor_get_i64(x, i);
      if ((double)v > hi)
        quill_tensor_set_f64(y, i, floor(hi));
      else if ((double)v < lo)
        quill_tensor_set_f64(y, i, lo > hi ? floor(hi) : ceil(lo));
      else
        quill_tensor_set_i64(y, i, v);
    }
  }
  return QUILL_OK;
}

/* ---- cast ----------------------------------------------------------------- */

/* ONNX Cast: float -> int truncates toward zero (saturating out of range,
 * NaN -> 0), int -> int wraps, anything -> bool is "nonzero", float ->
 * float rounds to nearest even. */
QUILL_REF_KERNEL(quill_ref_kernel_cast) {
  const quill_tensor *x = &in[0];
  quill_tensor *y = &out[0];
  size_t n = quill_tensor_num_elements(y);
  if (quill_tensor_num_elements(x) != n)
    return shape_error(ctx, op);
  bool via_int = domain_of(x) == DOM_INT &&
                 quill_tensor_elem_kind(x) != QUILL_TYPE_U64;
  if (quill_tensor_elem_kind(x) == QUILL_TYPE_U64 && domain_of(y) == DOM_INT)
    via_int = true; /* keep the bit pattern, wrap */
  for (size_t i = 0; i < n; i++) {
    if (via_int)
      quill_tensor_set_i64(y, i, quill_tensor_get_i64(x, i));
    else
      quill_tensor_set_f64(y, i, quill_tensor_get_f64(x, i));
  }
  return QUILL_OK;
}

/* ---- binary --------------------------------------------------------------- */

/* Integer functions return NULL, or an error message. */
typedef const char *(*int_binary_fn)(int64_t a, int64_t b, bool is_unsigned,
                                     int64_t *r);

static float add_f(float a, float b) { return a + b; }
static double add_d(double a, double b) { return a + b; }
static const char *add_i(int64_t a, int64_t b, bool u, int64_t *r) {
  (void)u; *r = (int64_t)((uint64_t)a + (uint64_t)b); return NULL;
}
static float sub_f(float a, float b) { return a - b; }
static double sub_d(double a, double b) { return a - b; }
static const char *sub_i(int64_t a, int64_t b, bool u, int64_t *r) {
  (void)u; *r = (int64_t)((uint64_t)a - (uint64_t)b); return NULL;
}
static float mul_f(float a, float b) { return a * b; }
static double mul_d(double a, double b) { return a * b; }
static const char *mul_i(int64_t a, int64_t b, bool u, int64_t *r) {
  (void)u; *r = (int64_t)((uint64_t)a * (uint64_t)b); return NULL;
}
static float div_f(float a, float b) { return a / b; }
static double div_d(double a, double b) { return a / b; }
static const char *div_i(int64_t a, int64_t b, bool u, int64_t *r) {
  if (b == 0)
    return "integer division by zero";
  if (u)
    *r = (int64_t)((uint64_t)a / (uint64_t)b);
  else if (a == INT64_MIN && b == -1)
    *r = INT64_MIN; /* wraps, as the narrower types do on store */
  else
    *r = a / b; /* C: truncates toward zero */
  return NULL;
}
static float pow_f(float a, float b) { return powf(a, b); }
static double pow_d(double a, double b) { return pow(a, b); }
static const char *pow_i(int64_t a, int64_t b, bool u, int64_t *r) {
  if (!u && b < 0) {
    if (a == 0)
      return "zero raised to a negative integer power";
    *r = a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
    return NULL;
  }
  uint64_t base = (uint64_t)a, e = (uint64_t)b, acc = 1;
  while (e) { /* square and multiply, wrapping */
    if (e & 1)
      acc *= base;
    base *= base;
    e >>= 1;
  }
  *r = (int64_t)acc;
  return NULL;
}
/* max/min propagate NaN, as numpy.maximum/minimum do. */
static float max_f(float a, float b) { return isnan(a) || isnan(b) ? NAN : a > b ? a : b; }
static double max_d(double a, double b) { return isnan(a) || isnan(b) ? NAN : a > b ? a : b; }
static const char *max_i(int64_t a, int64_t b, bool u, int64_t *r) {
  *r = (u ? (uint64_t)a > (uint64_t)b : a > b) ? a : b; return NULL;
}
static float min_f(float a, float b) { return isnan(a) || isnan(b) ? NAN : a < b ? a : b; }
static double min_d(double a, double b) { return isnan(a) || isnan(b) ? NAN : a < b ? a : b; }
static const char *min_i(int64_t a, int64_t b, bool u, int64_t *r) {
  *r = (u ? (uint64_t)a < (uint64_t)b : a < b) ? a : b; return NULL;
}
static float prelu_f(float x, float s) { return x < 0 ? x * s : x; }
static double prelu_d(double x, double s) { return x < 0 ? x * s : x; }
static const char *prelu_i(int64_t x, int64_t s, bool u, int64_t *r) {
  *r = !u && x < 0 ? (int64_t)((uint64_t)x * (uint64_t)s) : x; return NULL;
}

typedef struct binary_def {
  float (*f32)(float a, float b);
  double (*f64)(double a, double b);
  int_binary_fn i64;
} binary_def;

static const binary_def binary_defs[QUILL_OP_COUNT] = {
    [QUILL_OP_ADD] = {add_f, add_d, add_i},
    [QUILL_OP_SUB] = {sub_f, sub_d, sub_i},
    [QUILL_OP_MUL] = {mul_f, mul_d, mul_i},
    [QUILL_OP_DIV] = {div_f, div_d, div_i},
    [QUILL_OP_POW] = {pow_f, pow_d, pow_i},
    [QUILL_OP_MAX] = {max_f, max_d, max_i},
    [QUILL_OP_MIN] = {min_f, min_d, min_i},
    [QUILL_OP_PRELU] = {prelu_f, prelu_d, prelu_i},
};

QUILL_REF_KERNEL(quill_ref_kernel_binary) {
  const binary_def *d = &binary_defs[quill_op_opcode(op)];
  const quill_tensor *a = &in[0], *b = &in[1];
  quill_tensor *y = &out[0];
  const quill_type *types[2] = {a->type, b->type};
  quill_ref_bcast it;
  if (!d->f32)
    return quill_error(ctx, quill_op_loc(op),
                       "reference: '%s' is not a binary op", quill_op_name(op));
  if (!quill_ref_bcast_init(&it, y->type, 2, types))
    return shape_error(ctx, op);
  domain dom = domain_of(y);
  bool u = !quill_type_is_signed(quill_type_elem(y->type));
  if (plain_f32(a) && plain_f32(b) && plain_f32(y)) {
    /* an operand of the result's size is laid out as the result (it
     * broadcasts to it without repeating); one of one element repeats */
    size_t na = quill_tensor_num_elements(a), nb = quill_tensor_num_elements(b);
    if ((na == it.count || na == 1) && (nb == it.count || nb == 1)) {
      size_t sa = na == 1 ? 0 : 1, sb = nb == 1 ? 0 : 1;
      for (size_t i = 0; i < it.count; i++)
        store_f32(y, i, d->f32(load_f32(a, i * sa), load_f32(b, i * sb)));
      return QUILL_OK;
    }
    for (size_t i = 0; i < it.count; i++, quill_ref_bcast_next(&it))
      store_f32(y, i, d->f32(load_f32(a, it.offset[0]),
                             load_f32(b, it.offset[1])));
    return QUILL_OK;
  }
  for (size_t i = 0; i < it.count; i++, quill_ref_bcast_next(&it)) {
    size_t ia = it.offset[0], ib = it.offset[1];
    if (dom == DOM_F32) {
      float r = d->f32((float)quill_tensor_get_f64(a, ia),
                       (float)quill_tensor_get_f64(b, ib));
      quill_tensor_set_f64(y, i, r);
    } else if (dom == DOM_F64) {
      quill_tensor_set_f64(y, i, d->f64(quill_tensor_get_f64(a, ia),
                                        quill_tensor_get_f64(b, ib)));
    } else {
      int64_t r = 0;
      const char *err = d->i64(quill_tensor_get_i64(a, ia),
                               quill_tensor_get_i64(b, ib), u, &r);
      if (err)
        return quill_error(ctx, quill_op_loc(op), "%s in '%s'", err,
                           quill_op_name(op));
      quill_tensor_set_i64(y, i, r);
    }
  }
  return QUILL_OK;
}

/* ---- comparisons ---------------------------------------------------------- */

/* cmp is -1, 0 or 1 (a <, ==, > b); unordered (NaN) compares are false. */
static bool equal_c(int cmp) { return cmp == 0; }
static bool less_c(int cmp) { return cmp < 0; }
static bool greater_c(int cmp) { return cmp > 0; }

typedef bool (*compare_fn)(int cmp);
static const compare_fn compare_defs[QUILL_OP_COUNT] = {
    [QUILL_OP_EQUAL] = equal_c,
    [QUILL_OP_LESS] = less_c,
    [QUILL_OP_GREATER] = greater_c,
};

QUILL_REF_KERNEL(quill_ref_kernel_compare) {
  compare_fn fn = compare_defs[quill_op_opcode(op)];
  const quill_tensor *a = &in[0], *b = &in[1];
  quill_tensor *y = &out[0];
  const quill_type *types[2] = {a->type, b->type};
  quill_ref_bcast it;
  if (!fn)
    return quill_error(ctx, quill_op_loc(op),
                       "reference: '%s' is not a comparison", quill_op_name(op));
  if (!quill_ref_bcast_init(&it, y->type, 2, types))
    return shape_error(ctx, op);
  bool fl = domain_of(a) != DOM_INT || domain_of(b) != DOM_INT;
  bool u = quill_tensor_elem_kind(a) == QUILL_TYPE_U64 ||
           quill_tensor_elem_kind(b) == QUILL_TYPE_U64;
  for (size_t i = 0; i < it.count; i++, quill_ref_bcast_next(&it)) {
    size_t ia = it.offset[0], ib = it.offset[1];
    int cmp;
    if (fl) {
      double x = quill_tensor_get_f64(a, ia), z = quill_tensor_get_f64(b, ib);
      cmp = x < z ? -1 : x > z ? 1 : x == z ? 0 : 2; /* 2: unordered */
    } else if (u) {
      uint64_t x = (uint64_t)quill_tensor_get_i64(a, ia);
      uint64_t z = (uint64_t)quill_tensor_get_i64(b, ib);
      cmp = x < z ? -1 : x > z;
    } else {
      int64_t x = quill_tensor_get_i64(a, ia), z = quill_tensor_get_i64(b, ib);
      cmp = x < z ? -1 : x > z;
    }
    quill_tensor_set_i64(y, i, cmp != 2 && fn(cmp));
  }
  return QUILL_OK;
}

/* ---- where ---------------------------------------------------------------- */

/* where(cond, x, y): elements are copied bytewise, so any element type
 * (quantized too) works as long as x, y and the result agree. */
QUILL_REF_KERNEL(quill_ref_kernel_where) {
  const quill_tensor *c = &in[0], *x = &in[1], *z = &in[2];
  quill_tensor *y = &out[0];
  const quill_type *types[3] = {c->type, x->type, z->type};
  quill_type *elem = quill_type_elem(y->type);
  quill_ref_bcast it;
  if (quill_type_elem(x->type) != elem || quill_type_elem(z->type) != elem)
    return quill_error(ctx, quill_op_loc(op),
                       "reference: 'where' needs equal element types for its "
                       "values and result");
  if (!quill_ref_bcast_init(&it, y->type, 3, types))
    return shape_error(ctx, op);
  size_t eb = quill_type_elem_bytes(elem);
  for (size_t i = 0; i < it.count; i++, quill_ref_bcast_next(&it)) {
    bool take_x = quill_tensor_get_f64(c, it.offset[0]) != 0.0;
    const quill_tensor *src = take_x ? x : z;
    size_t off = take_x ? it.offset[1] : it.offset[2];
    memcpy((char *)y->data + i * eb, (const char *)src->data + off * eb, eb);
  }
  return QUILL_OK;
}
