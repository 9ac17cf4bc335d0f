/*
 * fuse_qdq.c - the `fuse-qdq` pass: rewrite the reference quantized form
 * (dequantize -> float op -> quantize) into Quill's integer ops, whose
 * exact arithmetic is docs/quantization.md section 3.
 *
 *   %xd = dequantize %xq                %y = qconv2d %xq, %wq, %b
 *   %wd = dequantize %wq        ==>          {rounding = "tflite",
 *   %c  = conv2d %xd, %wd, %bd               multiplier = [...],
 *   %y  = quantize %c                        shift = [...]}
 *
 * The patterns are in fuse_qdq_patterns.c; this file holds the pass, its
 * numerics and the helpers the patterns share (reading the reference form,
 * building requantization / activation attributes, quantizing biases).
 *
 * Accumulators. qconv2d/qmatmul sum in int32 only when the worst case
 * fits (quill_fqdq_acc_bound: K x the actual |w - zp_w| x the storage
 * reach of x - zp_x, plus |bias|); otherwise they carry
 * `accumulator = "i64"` and every target sums exactly in int64 (statistic
 * num-acc-i64).
 *
 * Numerics. `backend=NAME` takes the backend config's rounding policy and
 * requantization mode: fixed_point writes {multiplier, shift} computed by
 * ir/quant.c (quill_product_multiplier, quill_qadd_params_compute,
 * quill_quantize_multiplier: TFLite's formulas on f32 scales), float writes
 * none (the kernels then scale in f32). Without a backend: ONNX semantics,
 * float requantization and the reference form's own rounding (the
 * quantize op's `rounding`, half_even by default).
 *
 * What does not match stays in reference form, which is correct (float
 * inside), only slower. Statistics: num-fused (all rewrites),
 * num-fused-<op> per float op replaced, and num-unfused-<op> for float ops
 * still reading a dequantized value afterwards. Match failures are logged
 * on the "fuse-qdq" debug channel.
 */
#include <math.h>
#include <string.h>

#include "passes/fuse_qdq.h"
#include "passes/pass.h"
#include "targets/reference/ref.h"

/* ---- reading the reference form ------------------------------------------ */

quill_value *quill_fqdq_dq_source(const quill_value *v) {
  quill_op *d = v ? quill_value_def(v) : NULL;
  if (!d || quill_op_opcode(d) != QUILL_OP_DEQUANTIZE)
    return NULL;
  return quill_op_operand(d, 0);
}

quill_type *quill_fqdq_qelem(const quill_value *v) {
  quill_type *e = quill_type_elem(quill_value_type(v));
  return quill_type_is_quant(e) ? e : NULL;
}

bool quill_fqdq_per_tensor(const quill_value *v) {
  quill_type *e = quill_fqdq_qelem(v);
  return e && quill_type_quant_axis_of(e) < 0;
}

quill_rounding quill_fqdq_op_rounding(const quill_op *q) {
  quill_rounding r = QUILL_ROUND_HALF_EVEN;
  const quill_attr *a = quill_op_attr(q, "rounding");
  if (a && quill_attr_kind_of(a) == QUILL_ATTR_STRING)
    (void)quill_rounding_parse(quill_attr_string_value(a, NULL), &r);
  return r;
}

quill_rounding quill_fqdq_rounding(const quill_fqdq *f, const quill_op *q) {
  if (f->backend)
    return quill_backend_rounding(f->backend);
  return quill_fqdq_op_rounding(q);
}

bool quill_fqdq_only_use(const quill_value *v, const quill_op *user) {
  return quill_value_has_one_use(v) &&
         quill_use_user(quill_value_first_use(v)) == user;
}

/* ---- attribute lists ----------------------------------------------------- */

void quill_fqdq_attrs_init(quill_fqdq_attrs *l, quill_context *ctx) {
  memset(l, 0, sizeof *l);
  l->ctx = ctx;
}

void quill_fqdq_attrs_free(quill_fqdq_attrs *l) {
  quill_free(l->ctx, l->v, l->cap * sizeof *l->v);
  l->v = NULL;
  l->n = l->cap = 0;
}

bool quill_fqdq_attrs_ok(const quill_fqdq_attrs *l) { return !l->failed; }

void quill_fqdq_attrs_set(quill_fqdq_attrs *l, const char *name,
                          const quill_attr *a) {
  quill_ident id = quill_ident_get(l->ctx, name);
  if (!a || !id) {
    l->failed = true;
    return;
  }
  for (unsigned i = 0; i < l->n; i++)
    if (l->v[i].name == id) {
      l->v[i].attr = a;
      return;
    }
  if (l->n == l->cap) {
    unsigned nc = l->cap ? 2 * l->cap : 8;
    quill_named_attr *nv = quill_realloc(l->ctx, l->v, l->cap * sizeof *nv,
                                         nc * sizeof *nv);
    if (!nv) {
      l->failed = true;
      return;
    }
    l->v = nv;
    l->cap = nc;
  }
  l->v[l->n++] = (quill_named_attr){id, a};
}

void quill_fqdq_attrs_set_int(quill_fqdq_attrs *l, const char *name,
                              int64_t v) {
  quill_fqdq_attrs_set(l, name, quill_attr_int(l->ctx, v));
}

void quill_fqdq_attrs_set_str(quill_fqdq_attrs *l, const char *name,
                              const char *s) {
  quill_fqdq_attrs_set(l, name, quill_attr_string(l->ctx, s, strlen(s)));
}

void quill_fqdq_attrs_copy(quill_fqdq_attrs *l, const quill_op *op,
                           const char *skip) {
  quill_ident act = quill_ident_get(l->ctx, "activation");
  quill_ident amin = quill_ident_get(l->ctx, "activation_min");
  quill_ident amax = quill_ident_get(l->ctx, "activation_max");
  quill_ident sk = skip ? quill_ident_get(l->ctx, skip) : NULL;
  for (unsigned i = 0; i < quill_op_num_attrs(op); i++) {
    quill_named_attr a = quill_op_attr_at(op, i);
    if (a.name == act || a.name == amin || a.name == amax ||
        (sk && a.name == sk))
      continue;
    quill_fqdq_attrs_set(l, a.name, a.attr);
  }
}

bool quill_fqdq_requant_attrs(const quill_fqdq *f, quill_fqdq_attrs *l,
                              quill_rounding r, const double *reals,
                              size_t n, const char **why) {
  quill_fqdq_attrs_set_str(l, "rounding", quill_rounding_name(r));
  if (!f->fixed)
    return true;
  int64_t *v = quill_alloc(l->ctx, 2 * n * sizeof *v);
  if (!v) {
    l->failed = true;
    return true;
  }
  bool ok = true;
  for (size_t i = 0; i < n && ok; i++) {
    int32_t m = 0;
    int s = 0;
    /* 0: the caller's "always rounds to 0" (multiplier 0, shift 0) */
    ok = reals[i] >= 0.0 && quill_quantize_multiplier(reals[i], &m, &s);
    v[i] = m;
    v[n + i] = s;
  }
  if (ok) {
    quill_fqdq_attrs_set(l, "multiplier", quill_attr_int_list(l->ctx, n, v));
    quill_fqdq_attrs_set(l, "shift", quill_attr_int_list(l->ctx, n, v + n));
  } else
    *why = "a requantization multiplier is out of the fixed-point range";
  quill_free(l->ctx, v, 2 * n * sizeof *v);
  return ok;
}

bool quill_fqdq_act_attrs(quill_fqdq_attrs *l, const quill_op *fop,
                          const quill_op *q, const quill_type *yelem,
                          const char **why) {
  const quill_attr *a = quill_op_attr(fop, "activation");
  if (!a)
    return true;
  const char *kind = quill_attr_kind_of(a) == QUILL_ATTR_STRING
                         ? quill_attr_string_value(a, NULL)
                         : "";
  double lo, hi = INFINITY;
  if (strcmp(kind, "relu") == 0)
    lo = 0.0;
  else if (strcmp(kind, "clip") == 0) {
    lo = quill_op_attr_float(fop, "activation_min", -INFINITY);
    hi = quill_op_attr_float(fop, "activation_max", INFINITY);
  } else {
    *why = "unknown fused activation";
    return false;
  }
  double s = quill_type_quant_scales(yelem)[0];
  int64_t zp = quill_type_quant_zero_points(yelem)[0];
  int64_t qmin = quill_type_quant_qmin(yelem);
  int64_t qmax = quill_type_quant_qmax(yelem);
  bool f64 = quill_type_kind_of(quill_type_quant_expressed(yelem)) ==
             QUILL_TYPE_F64;
  quill_rounding r = quill_fqdq_op_rounding(q);
  int64_t qlo = quill_quantize_value(lo, s, zp, qmin, qmax, f64, r);
  int64_t qhi = quill_quantize_value(hi, s, zp, qmin, qmax, f64, r);
  if (qlo > qmin)
    quill_fqdq_attrs_set_int(l, "act_min", qlo);
  if (qhi < qmax)
    quill_fqdq_attrs_set_int(l, "act_max", qhi);
  return true;
}

/* ---- biases -------------------------------------------------------------- */

const quill_attr *quill_fqdq_bias_i32(quill_context *ctx,
                                      const quill_value *bias, double s_x,
                                      const double *s_w, size_t n_w,
                                      size_t nch, const char **why) {
  quill_value *bq = quill_fqdq_dq_source(bias);
  const quill_attr *c = quill_value_constant(bq ? bq : bias);
  if (!c) {
    *why = "the bias is not a (dequantized) constant";
    return NULL;
  }
  quill_type *ct = quill_attr_dense_type(c), *ce = quill_type_elem(ct);
  int64_t nb = quill_type_num_elements(ct);
  if (nb != (int64_t)nch && nb != 1) {
    *why = "the bias does not have one element per output channel";
    return NULL;
  }
  if (!bq && !quill_type_is_float(ce)) {
    *why = "the bias is neither float nor quantized";
    return NULL;
  }
  /* A quantized bias: parameters per tensor, or along its one axis. */
  const double *bs = bq ? quill_type_quant_scales(ce) : NULL;
  const int64_t *bz = bq ? quill_type_quant_zero_points(ce) : NULL;
  bool bper = bq && quill_type_quant_axis_of(ce) >= 0;
  bool bf64 = bq && quill_type_kind_of(quill_type_quant_expressed(ce)) ==
                        QUILL_TYPE_F64;
  if (bper && (quill_type_rank(ct) != 1 ||
               (int64_t)quill_type_quant_num_params(ce) != nb)) {
    *why = "the bias quantization does not fit its shape";
    return NULL;
  }
  /* Reuse the integers if they already have the accumulator's scale. */
  bool reuse = bq && quill_type_kind_of(quill_type_quant_storage(ce)) ==
                         QUILL_TYPE_I32;
  for (size_t k = 0; reuse && k < nch; k++) {
    size_t i = nb == 1 ? 0 : k;
    double want = s_x * s_w[n_w == 1 ? 0 : k];
    double have = bs[bper ? i : 0];
    reuse = bz[bper ? i : 0] == 0 && fabs(have - want) <= 1e-6 * want;
  }
  int32_t *v = quill_alloc(ctx, nch * sizeof *v);
  if (!v)
    return NULL;
  const char *err = NULL;
  for (size_t k = 0; k < nch && !err; k++) {
    size_t i = nb == 1 ? 0 : k;
    if (reuse) {
      v[k] = (int32_t)quill_attr_dense_get_i64(c, i);
      continue;
    }
    double real = quill_attr_dense_get_f64(c, i);
    if (bq)
      real = quill_dequantize_value(quill_attr_dense_get_i64(c, i),
                                    bs[bper ? i : 0], bz[bper ? i : 0], bf64);
    double q = nearbyint(real / (s_x * s_w[n_w == 1 ? 0 : k]));
    if (!(q >= (double)INT32_MIN && q <= (double)INT32_MAX))
      err = "a bias value does not fit in int32 at the accumulator's scale";
    else
      v[k] = (int32_t)q;
  }
  const quill_attr *res = NULL;
  int64_t dim = (int64_t)nch;
  quill_type *t = quill_type_tensor(ctx, quill_type_scalar(ctx, QUILL_TYPE_I32),
                                    1, &dim);
  if (!err && t)
    res = quill_attr_dense(ctx, t, v, nch * sizeof *v);
  quill_free(ctx, v, nch * sizeof *v);
  if (err)
    *why = err;
  return res;
}

const quill_attr *quill_fqdq_bias_drop_dead(quill_context *ctx,
                                            const quill_attr *bias,
                                            double s_x, const double *s_w,
                                            size_t n_w, double s_y) {
  size_t nch = (size_t)quill_type_num_elements(quill_attr_dense_type(bias));
  int32_t *v = NULL;
  for (size_t k = 0; k < nch; k++) {
    int64_t b = quill_attr_dense_get_i64(bias, k);
    if (!b || quill_product_multiplier(s_x, s_w[n_w == 1 ? 0 : k], s_y) >=
                  0x1p-32)
      continue;
    if (!v) {
      if (!(v = quill_alloc(ctx, nch * sizeof *v)))
        return NULL;
      for (size_t i = 0; i < nch; i++)
        v[i] = (int32_t)quill_attr_dense_get_i64(bias, i);
    }
    v[k] = 0;
  }
  if (!v)
    return bias;
  const quill_attr *res = quill_attr_dense(ctx, quill_attr_dense_type(bias),
                                           v, nch * sizeof *v);
  quill_free(ctx, v, nch * sizeof *v);
  return res;
}

/* ---- accumulator width --------------------------------------------------- */

/* max |v - zp| over the storage range of the quantized type e, for the
 * zero point zp. */
static double storage_reach(const quill_type *e, int64_t zp) {
  quill_type *st = quill_type_quant_storage(e);
  double hi = (double)quill_type_int_max(st) - (double)zp;
  double lo = (double)zp - (double)quill_type_int_min(st);
  return hi > lo ? hi : lo;
}

double quill_fqdq_acc_bound(const quill_type *xe, const quill_type *wt,
                            const quill_attr *w, bool conv,
                            const quill_attr *bias) {
  quill_type *we = quill_type_elem(wt);
  unsigned rank = quill_type_rank(wt);
  if (!quill_type_has_static_shape(wt) || rank < (conv ? 1u : 2u))
    return INFINITY;
  const int64_t *d = quill_type_dims(wt);
  size_t numel = (size_t)quill_type_num_elements(wt);
  size_t nch = (size_t)(conv ? d[0] : d[rank - 1]);
  size_t K = conv ? (nch ? numel / nch : 0) : (size_t)d[rank - 2];
  size_t nsum = conv ? nch : (K ? numel / K : 0); /* batch x columns */
  const int64_t *zpw = quill_type_quant_zero_points(we);
  bool per_ch = quill_type_quant_num_params(we) > 1;
  double mx = storage_reach(xe, quill_type_quant_zero_points(xe)[0]);
  double best = 0.0;
  for (size_t s = 0; s < nsum; s++) {
    size_t c = conv ? s : s % nch;
    int64_t zp = zpw[per_ch ? c : 0];
    double sum = 0.0;
    if (!w)
      sum = (double)K * storage_reach(we, zp);
    for (size_t k = 0; w && k < K; k++) {
      size_t e = conv ? s * K + k : (s / nch) * K * nch + k * nch + c;
      int64_t v = quill_attr_dense_get_i64(w, e) - zp;
      sum += (double)(v < 0 ? -v : v);
    }
    double b = 0.0;
    if (bias) {
      int64_t bv = quill_attr_dense_get_i64(bias, c);
      b = (double)(bv < 0 ? -bv : bv);
    }
    double bound = b + sum * mx;
    best = bound > best ? bound : best;
  }
  return best;
}

/* ---- the pass ------------------------------------------------------------ */

/* Count the float ops still reading a dequantized value, per opcode. */
static void count_unfused(quill_pass_state *ps, const quill_module *m) {
  uint64_t n[QUILL_OP_COUNT] = {0};
  for (unsigned gi = 0; gi < quill_module_num_graphs(m); gi++) {
    quill_graph *g = quill_module_graph(m, gi);
    QUILL_GRAPH_FOREACH(g, op) {
      quill_opcode o = quill_op_opcode(op);
      if (quill_op_has_flag(op, QUILL_OPF_QUANT) || o == QUILL_OP_RETURN)
        continue;
      for (unsigned i = 0; i < quill_op_num_operands(op); i++)
        if (quill_fqdq_dq_source(quill_op_operand(op, i))) {
          n[o]++;
          break;
        }
    }
  }
  char name[64];
  for (int o = 0; o < QUILL_OP_COUNT; o++)
    if (n[o]) {
      snprintf(name, sizeof name, "num-unfused-%s",
               quill_opcode_name((quill_opcode)o));
      quill_pass_stat_add(ps, name, n[o]);
    }
}

static quill_status run(quill_pass_state *ps, quill_module *m) {
  quill_context *ctx = quill_pass_context(ps);
  quill_fqdq f;
  memset(&f, 0, sizeof f);
  const char *name = quill_pass_option(ps, "backend");
  if (name && !(f.backend = quill_backend_get(ctx, name)))
    return QUILL_ERR_INVALID;
  f.fixed = f.backend &&
            quill_backend_requant(f.backend) == QUILL_REQUANT_FIXED_POINT;
  quill_pattern_set *set = quill_pattern_set_create(ctx);
  if (!set)
    return QUILL_ERR_NOMEM;
  quill_status st = quill_fqdq_populate(set, &f);
  quill_greedy_config cfg = {0, true, "fuse-qdq"};
  if (!st)
    st = quill_apply_patterns_module(m, set, &cfg, NULL, NULL);
  quill_pattern_set_destroy(set);
  if (st)
    return st;
  uint64_t total = 0;
  char stat[64];
  for (int o = 0; o < QUILL_OP_COUNT; o++)
    if (f.fused[o]) {
      total += f.fused[o];
      snprintf(stat, sizeof stat, "num-fused-%s",
               quill_opcode_name((quill_opcode)o));
      quill_pass_stat_add(ps, stat, f.fused[o]);
    }
  if (total)
    quill_pass_stat_add(ps, "num-fused", total);
  if (f.wide)
    quill_pass_stat_add(ps, "num-acc-i64", f.wide);
  else
    quill_pass_mark_unchanged(ps);
  count_unfused(ps, m);
  return QUILL_OK;
}

const quill_pass quill_pass_fuse_qdq = {
    .name = "fuse-qdq",
    .summary = "Rewrite dequantize -> op -> quantize patterns into integer "
               "ops",
    .run = run,
    .requires = 0,
    .establishes = 0,
    .preserves = 0,
    .options = "backend=NAME",
};
