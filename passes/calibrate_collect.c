/*
 * calibrate_collect.c - the calibrate pass's fake_quants (calibrate.c):
 * each one's scheme read from its attributes (dtype, qmin/qmax,
 * symmetric, per-axis, observer and its options, or fixed params), its
 * observer created, and what it observes chosen (its own result, or the
 * result of the max pool that alone reads it); constants (weights) are
 * observed here directly, with no data.
 */
#include <math.h>
#include <string.h>

#include "backends/backend.h"
#include "passes/calibrate_impl.h"

/* ---- the scheme of a fake_quant ------------------------------------------------- */

static bool attr_is(const quill_attr *a, quill_attr_kind k) {
  return a && quill_attr_kind_of(a) == k;
}

/* Read the scheme attributes (defaults: i8, its full range, asymmetric,
 * per tensor, minmax). */
static quill_status read_scheme(calib *c, quill_op *op, fq_info *f) {
  quill_context *ctx = c->ctx;
  quill_quant_scheme *s = &f->scheme;
  memset(s, 0, sizeof *s);
  const quill_attr *a = quill_op_attr(op, "dtype");
  quill_type *storage = attr_is(a, QUILL_ATTR_TYPE) ? quill_attr_type_value(a)
                                                    : NULL;
  if (a && (!storage || !quill_type_is_integer(storage) ||
            quill_type_bit_width(storage) > 16))
    return quill_error(ctx, quill_op_loc(op),
                       "calibrate: fake_quant of '%s': attribute 'dtype' must "
                       "be an integer type of at most 16 bits",
                       quill_fake_quant_subject(op));
  if (!storage)
    storage = quill_type_scalar(ctx, QUILL_TYPE_I8);
  s->storage = quill_type_kind_of(storage);
  s->bits = (int)quill_type_bit_width(storage);
  s->qmin = quill_op_attr_int(op, "qmin", quill_type_int_min(storage));
  s->qmax = quill_op_attr_int(op, "qmax", quill_type_int_max(storage));
  const quill_attr *sym = quill_op_attr(op, "symmetric");
  const quill_attr *p2 = quill_op_attr(op, "power_of_two");
  s->symmetric = attr_is(sym, QUILL_ATTR_BOOL) && quill_attr_bool_value(sym);
  s->power_of_two = attr_is(p2, QUILL_ATTR_BOOL) && quill_attr_bool_value(p2);
  if (s->qmin < quill_type_int_min(storage) ||
      s->qmax > quill_type_int_max(storage) || s->qmin >= s->qmax ||
      (s->symmetric && (s->qmin >= 0 || s->qmax <= 0)))
    return quill_error(ctx, quill_op_loc(op),
                       "calibrate: fake_quant of '%s': range [%lld, %lld] "
                       "does not fit its dtype%s",
                       quill_fake_quant_subject(op), (long long)s->qmin, (long long)s->qmax,
                       s->symmetric ? " symmetrically" : "");
  const quill_attr *ob = quill_op_attr(op, "observer");
  const char *oname = attr_is(ob, QUILL_ATTR_STRING)
                          ? quill_attr_string_value(ob, NULL)
                          : "minmax";
  if (!quill_observer_parse(oname, &s->observer.kind))
    return quill_error(ctx, quill_op_loc(op),
                       "calibrate: fake_quant of '%s': unknown observer '%s' "
                       "(minmax, ema_minmax, percentile, kl, mse)",
                       quill_fake_quant_subject(op), oname);
  s->observer.momentum = quill_op_attr_float(op, "momentum", 0.9);
  s->observer.percentile = quill_op_attr_float(op, "percentile", 99.99);
  s->observer.bins = quill_op_attr_int(op, "bins", 2048);
  if (!(s->observer.momentum > 0.0 && s->observer.momentum < 1.0) ||
      !(s->observer.percentile > 0.0 && s->observer.percentile <= 100.0) ||
      s->observer.bins < 16 || s->observer.bins > (INT64_C(1) << 20))
    return quill_error(ctx, quill_op_loc(op),
                       "calibrate: fake_quant of '%s': observer parameter out "
                       "of range (momentum in (0, 1), percentile in (0, 100], "
                       "bins in [16, 2^20])",
                       quill_fake_quant_subject(op));
  f->axis = quill_op_attr_int(op, "axis", -1);
  quill_type *t = quill_value_type(quill_op_operand(op, 0));
  unsigned rank = quill_type_rank(t);
  if (f->axis < -1 || f->axis >= (int64_t)rank)
    return quill_error(ctx, quill_op_loc(op),
                       "calibrate: fake_quant of '%s': axis %lld is out of "
                       "range for rank %u",
                       quill_fake_quant_subject(op), (long long)f->axis, rank);
  if (!quill_type_has_static_shape(t))
    return quill_error(ctx, quill_op_loc(op),
                       "calibrate: fake_quant of '%s' has a dynamic shape",
                       quill_fake_quant_subject(op));
  f->channels = 1;
  f->inner = (size_t)quill_type_num_elements(t);
  if (f->axis >= 0) {
    f->channels = (size_t)quill_type_dim(t, (unsigned)f->axis);
    f->inner = 1;
    for (unsigned d = (unsigned)f->axis + 1; d < rank; d++)
      f->inner *= (size_t)quill_type_dim(t, d);
    if (f->channels == 0)
      return quill_error(ctx, quill_op_loc(op),
                         "calibrate: fake_quant of '%s': axis %lld is empty",
                         quill_fake_quant_subject(op), (long long)f->axis);
  }
  const quill_attr *fs = quill_op_attr(op, "fixed_scale");
  if (fs) {
    f->fixed = true;
    f->fixed_scale = quill_op_attr_float(op, "fixed_scale", 0.0);
    f->fixed_zp = quill_op_attr_int(op, "fixed_zero_point", 0);
    if (!(f->fixed_scale > 0.0) || !isfinite(f->fixed_scale) ||
        f->fixed_zp < s->qmin || f->fixed_zp > s->qmax)
      return quill_error(ctx, quill_op_loc(op),
                         "calibrate: fake_quant of '%s': fixed params need a "
                         "positive scale and a zero point in [%lld, %lld]",
                         quill_fake_quant_subject(op), (long long)s->qmin,
                         (long long)s->qmax);
  }
  return QUILL_OK;
}

/* ---- collecting ------------------------------------------------------------------- */

quill_status quill_calib_add_fq(calib *c, quill_op *op, bool entry) {
  if (c->nfq == c->cap) {
    size_t ncap = c->cap ? c->cap * 2 : 32;
    fq_info *p = quill_realloc(c->ctx, c->fq, c->cap * sizeof *p,
                               ncap * sizeof *p);
    if (!p)
      return QUILL_ERR_NOMEM;
    c->fq = p;
    c->cap = ncap;
  }
  fq_info *f = &c->fq[c->nfq];
  memset(f, 0, sizeof *f);
  f->op = op;
  quill_status st = read_scheme(c, op, f);
  if (st)
    return st;
  /* drop an old calibration: the runs must see float values */
  if (quill_op_set_attr(op, "quant", NULL))
    return QUILL_ERR_NOMEM;
  if (!f->fixed) {
    f->obs = quill_observer_create(c->ctx, &f->scheme, f->channels);
    if (!f->obs)
      return QUILL_ERR_NOMEM;
  }
  f->from_data = !f->fixed && !quill_value_constant(quill_op_operand(op, 0));
  f->watch = op;
  quill_value *y = quill_op_result(op, 0);
  quill_use *u = quill_value_first_use(y);
  quill_op *pool = u && quill_value_num_uses(y) == 1 ? quill_use_user(u) : NULL;
  quill_status ost = QUILL_OK;
  bool pooled = quill_pass_option_int(c->ps, "pooled", 1, &ost) != 0;
  if (ost)
    return ost;
  if (pooled && f->from_data && f->axis < 0 && pool &&
      (quill_op_opcode(pool) == QUILL_OP_MAXPOOL ||
       quill_op_opcode(pool) == QUILL_OP_GLOBAL_MAXPOOL) &&
      quill_op_num_results(pool) == 1 &&
      quill_type_has_static_shape(quill_value_type(quill_op_result(pool, 0)))) {
    f->watch = pool;
    f->inner = (size_t)quill_type_num_elements(
        quill_value_type(quill_op_result(pool, 0)));
  }
  c->nfq++; /* owns f->obs from here */
  if (f->from_data && !entry)
    return quill_error(c->ctx, quill_op_loc(op),
                       "calibrate: fake_quant of '%s' is in function '%s', "
                       "but calibration data runs only the entry function "
                       "'%s'",
                       quill_fake_quant_subject(op), quill_graph_name(quill_op_graph(op)),
                       quill_graph_name(quill_module_graph(
                           quill_graph_module(quill_op_graph(op)), 0)));
  return QUILL_OK;
}

quill_status quill_calib_observe_constant(calib *c, fq_info *f) {
  quill_tensor t =
      quill_tensor_from_attr(quill_value_constant(quill_op_operand(f->op, 0)));
  size_t n = quill_tensor_num_elements(&t);
  bool f32 = quill_tensor_elem_kind(&t) == QUILL_TYPE_F32;
  for (size_t i = 0; i < n; i++) {
    double v = f32 ? (double)((const float *)t.data)[i]
                   : quill_tensor_get_f64(&t, i);
    if (!isfinite(v))
      return quill_error(c->ctx, quill_op_loc(f->op),
                         "calibrate: the constant observed by the fake_quant "
                         "of '%s' holds NaN or Inf (element %zu)",
                         quill_fake_quant_subject(f->op), i);
  }
  quill_observer_add_range(f->obs, &t, f->inner);
  quill_status st = quill_observer_start_histogram(f->obs);
  if (!st)
    quill_observer_add_histogram(f->obs, &t, f->inner);
  return st;
}
