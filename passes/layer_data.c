/*
 * layer_data.c - conv2d/gemm layers as f64 weight and bias arrays, written
 * back as constants, and per-channel statistics over the calibration data
 * (see layer_data.h).
 *
 * Reading copies the constants into f64 arrays; the passes change the
 * arrays and write them once at the end, so an equalization that iterates
 * many times over a pair makes only one new constant per layer. Writing
 * makes a `constant` op before the layer in the old constant's element
 * type (round to nearest even) and erases the old constant when nothing
 * else uses it.
 *
 * Statistics run each calibration sample once through the reference
 * interpreter (quill_ref_run_observed) and accumulate, per requested value,
 * the minimum and the sum of every channel (axis 1) in f64, and for a
 * value a conv2d reads, the sum each kernel tap reads over the output
 * positions (zero padding counted as zeros; separable: per tap column the
 * row sums, then per tap row their sum).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "ir/shape.h"
#include "passes/layer_data.h"

static const quill_attr *float_constant(const quill_value *v) {
  const quill_attr *a = v ? quill_value_constant(v) : NULL;
  if (!a)
    return NULL;
  quill_type *e = quill_type_elem(quill_attr_dense_type(a));
  return quill_type_is_float(e) ? a : NULL;
}

static bool gemm_trans_b(const quill_op *op) {
  const quill_attr *tb = quill_op_attr(op, "trans_b");
  return tb && (quill_attr_kind_of(tb) == QUILL_ATTR_BOOL
                    ? quill_attr_bool_value(tb)
                    : quill_attr_kind_of(tb) == QUILL_ATTR_INT &&
                          quill_attr_int_value(tb) != 0);
}

static double *read_f64(quill_context *ctx, const quill_attr *a, size_t *n) {
  *n = (size_t)quill_type_num_elements(quill_attr_dense_type(a));
  double *v = quill_alloc(ctx, (*n ? *n : 1) * sizeof *v);
  if (v)
    for (size_t i = 0; i < *n; i++)
      v[i] = quill_attr_dense_get_f64(a, i);
  return v;
}

const char *quill_layer_read(quill_context *ctx, quill_op *op,
                             quill_value *w_value, quill_layer *L) {
  memset(L, 0, sizeof *L);
  quill_opcode opc = quill_op_opcode(op);
  if (opc != QUILL_OP_CONV2D && opc != QUILL_OP_GEMM)
    return "not a conv2d or gemm";
  const quill_attr *w = float_constant(w_value);
  if (!w)
    return "the weight is not a float constant";
  bool has_b = quill_op_num_operands(op) > 2;
  const quill_attr *b = has_b ? float_constant(quill_op_operand(op, 2)) : NULL;
  if (has_b && !b)
    return "the bias is not a float constant";
  quill_type *wt = quill_attr_dense_type(w);
  if (opc == QUILL_OP_CONV2D) {
    if (quill_type_rank(wt) != 4)
      return "weight is not 4-D";
    int64_t g = quill_op_attr_int(op, "group", 1);
    L->out_ch = quill_type_dim(wt, 0);
    L->cg = quill_type_dim(wt, 1);
    L->kk = quill_type_dim(wt, 2) * quill_type_dim(wt, 3);
    if (g < 1 || L->out_ch % g || L->kk < 1 || L->cg < 1)
      return "group does not divide the output channels";
    L->og = L->out_ch / g;
    L->in_ch = L->cg * g;
    L->bias_mul = 1.0;
  } else {
    if (quill_type_rank(wt) != 2)
      return "B is not 2-D";
    L->trans = gemm_trans_b(op);
    L->out_ch = quill_type_dim(wt, L->trans ? 0 : 1);
    L->in_ch = quill_type_dim(wt, L->trans ? 1 : 0);
    L->bias_mul = quill_op_attr_float(op, "beta", 1.0);
    if (b) {
      quill_type *ct = quill_attr_dense_type(b);
      unsigned r = quill_type_rank(ct);
      if (r < 1 || r > 2 || quill_type_dim(ct, r - 1) != L->out_ch)
        return "C does not have one value per output column";
    }
  }
  if (L->out_ch < 1 || L->in_ch < 1)
    return "no channels";
  if (b && opc == QUILL_OP_CONV2D &&
      quill_type_num_elements(quill_attr_dense_type(b)) != L->out_ch)
    return "bias size differs from the output channels";
  L->op = op;
  L->w_value = w_value;
  L->w = read_f64(ctx, w, &L->nw);
  L->b = b ? read_f64(ctx, b, &L->nb) : NULL;
  if (!L->w || (b && !L->b)) {
    quill_layer_free(ctx, L);
    return "out of memory";
  }
  return NULL;
}

void quill_layer_free(quill_context *ctx, quill_layer *L) {
  if (L->w)
    quill_free(ctx, L->w, (L->nw ? L->nw : 1) * sizeof *L->w);
  if (L->b)
    quill_free(ctx, L->b, (L->nb ? L->nb : 1) * sizeof *L->b);
  L->w = L->b = NULL;
}

int64_t quill_layer_out_ch(const quill_layer *L, size_t i) {
  int64_t k = (int64_t)i;
  if (quill_op_opcode(L->op) == QUILL_OP_CONV2D)
    return k / (L->cg * L->kk);
  return L->trans ? k / L->in_ch : k % L->out_ch;
}

int64_t quill_layer_in_ch(const quill_layer *L, size_t i) {
  int64_t k = (int64_t)i;
  if (quill_op_opcode(L->op) == QUILL_OP_CONV2D) {
    int64_t o = k / (L->cg * L->kk);
    return (o / L->og) * L->cg + (k / L->kk) % L->cg;
  }
  return L->trans ? k % L->in_ch : k / L->out_ch;
}

bool quill_layer_ensure_bias(quill_context *ctx, quill_layer *L) {
  if (L->b)
    return true;
  L->b = quill_calloc(ctx, (size_t)L->out_ch, sizeof *L->b);
  L->nb = (size_t)L->out_ch;
  return L->b != NULL;
}

/* A new constant of `type` holding vals, inserted before `pos`. */
static quill_value *new_constant(quill_context *ctx, quill_op *pos,
                                 quill_type *type, const double *vals) {
  quill_tensor t;
  if (!type || quill_tensor_alloc(ctx, type, &t) != QUILL_OK)
    return NULL;
  for (size_t i = 0; i < quill_tensor_num_elements(&t); i++)
    quill_tensor_set_f64(&t, i, vals[i]);
  const quill_attr *a = quill_tensor_to_attr(ctx, &t);
  quill_tensor_free(ctx, &t);
  quill_ident value = quill_ident_get(ctx, "value");
  if (!a || !value)
    return NULL;
  quill_named_attr na = {value, a};
  quill_op *k = quill_op_create(quill_op_graph(pos), QUILL_OP_CONSTANT, 0,
                                NULL, 1, &type, 1, &na, quill_op_loc(pos));
  if (!k)
    return NULL;
  quill_op_insert_before(pos, k);
  return quill_op_result(k, 0);
}

static void erase_if_dead(quill_value *v) {
  quill_op *d = v ? quill_value_def(v) : NULL;
  if (d && quill_op_opcode(d) == QUILL_OP_CONSTANT && !quill_value_has_uses(v))
    quill_op_erase(d);
}

quill_status quill_layer_write(quill_context *ctx, quill_layer *L,
                               bool weight, bool bias) {
  quill_op *op = L->op;
  quill_type *wt = quill_value_type(L->w_value);
  if (weight) {
    quill_value *nv = new_constant(ctx, op, wt, L->w);
    if (!nv)
      return QUILL_ERR_NOMEM;
    /* Every user of the old weight constant that is this op or the
     * fake_quant feeding it. */
    quill_value *w1 = quill_op_operand(op, 1);
    if (w1 == L->w_value)
      quill_op_set_operand(op, 1, nv);
    else
      quill_op_set_operand(quill_value_def(w1), 0, nv);
    erase_if_dead(L->w_value);
    L->w_value = nv;
  }
  if (bias && L->b) {
    bool has = quill_op_num_operands(op) > 2;
    quill_value *old = has ? quill_op_operand(op, 2) : NULL;
    int64_t n = L->out_ch;
    quill_type *bt =
        has ? quill_value_type(old)
            : quill_type_tensor(ctx, quill_type_elem(wt), 1, &n);
    quill_value *nv = new_constant(ctx, op, bt, L->b);
    if (!nv)
      return QUILL_ERR_NOMEM;
    if (has) {
      quill_op_set_operand(op, 2, nv);
      erase_if_dead(old);
    } else {
      quill_value *ops[3] = {quill_op_operand(op, 0), quill_op_operand(op, 1),
                             nv};
      if (quill_op_set_operands(op, 3, ops))
        return QUILL_ERR_NOMEM;
      if (quill_op_opcode(op) == QUILL_OP_GEMM) {
        const quill_attr *one = quill_attr_float(ctx, 1.0);
        if (!one || quill_op_set_attr(op, "beta", one))
          return QUILL_ERR_NOMEM;
        L->bias_mul = 1.0;
      }
    }
  }
  return QUILL_OK;
}

/* ---- statistics over the calibration data ----------------------------- */

/* A conv2d's window over its input plane (H x W -> OH x OW), for the
 * per-tap means. */
typedef struct conv_geom {
  int64_t H, W, OH, OW, kh, kw, sh, sw, pt, pl, dh, dw;
} conv_geom;

typedef struct stats_run {
  size_t n;
  quill_value *const *values;
  quill_chan_stats *out;
  double *count;    /* elements seen per channel, for each value */
  conv_geom *geom;  /* per value (kh 0: no taps) */
  double *tap_count; /* output positions seen, for each value */
  double *plane, *rows; /* scratch: one channel plane, kw x H row sums */
  quill_context *ctx;
} stats_run;

/* The window of conv over its static input shape (the shape code's own
 * reading of strides, pads, dilations and auto_pad), or kh = 0 if conv is
 * not a conv2d with static 4-D shapes. */
static conv_geom geom_of(const quill_op *conv) {
  conv_geom g = {0};
  if (!conv || quill_op_opcode(conv) != QUILL_OP_CONV2D)
    return g;
  const quill_type *xt = quill_value_type(quill_op_operand(conv, 0));
  const quill_type *wt = quill_value_type(quill_op_operand(conv, 1));
  quill_window w;
  quill_shape xs, ws, os;
  if (quill_type_rank(xt) != 4 || quill_type_rank(wt) != 4 ||
      !quill_window_of_conv(conv, xt, wt, false, &w))
    return g;
  quill_shape_of(xt, &xs);
  quill_shape_of(wt, &ws);
  if (!quill_shape_conv(&xs, &ws, &w, &os, NULL))
    return g;
  for (unsigned d = 2; d < 4; d++)
    if (xs.dims[d] < 1 || ws.dims[d] < 1 || os.dims[d] < 1)
      return g;
  g = (conv_geom){xs.dims[2], xs.dims[3], os.dims[2], os.dims[3],
                  ws.dims[2], ws.dims[3], w.strides[0], w.strides[1],
                  w.pads[0], w.pads[1], w.dilations[0], w.dilations[1]};
  return g;
}

/* Add what each tap of g reads over the output positions of one channel
 * plane x (g->H x g->W) to tap[kh * kw]; rows: kw * H scratch. Separable:
 * the row sums over each tap column's input columns first, then over each
 * tap row's input rows. */
static void tap_sums(const conv_geom *g, const double *x, double *rows,
                     double *tap) {
  int64_t H = g->H, W = g->W;
  for (int64_t kj = 0; kj < g->kw; kj++)
    for (int64_t h = 0; h < H; h++) {
      double s = 0.0;
      for (int64_t o = 0; o < g->OW; o++) {
        int64_t w = o * g->sw - g->pl + kj * g->dw;
        if (w >= 0 && w < W)
          s += x[h * W + w];
      }
      rows[kj * H + h] = s;
    }
  for (int64_t ki = 0; ki < g->kh; ki++)
    for (int64_t kj = 0; kj < g->kw; kj++) {
      double s = 0.0;
      for (int64_t o = 0; o < g->OH; o++) {
        int64_t h = o * g->sh - g->pt + ki * g->dh;
        if (h >= 0 && h < H)
          s += rows[kj * H + h];
      }
      tap[ki * g->kw + kj] += s;
    }
}

/* The per-tap sums of value k's tensor t (N x C x H x W). A tensor of
 * another plane size than the static one the scratch was sized for
 * (dynamic dims) drops value k's per-tap means: the channel means stand
 * for every tap then. */
static void add_taps(stats_run *r, size_t k, const quill_tensor *t) {
  const conv_geom *g = &r->geom[k];
  quill_chan_stats *o = &r->out[k];
  quill_type *ty = t->type;
  if (quill_type_rank(ty) != 4 || quill_type_dim(ty, 2) != g->H ||
      quill_type_dim(ty, 3) != g->W) {
    quill_free(r->ctx, o->tap_mean, o->channels * o->taps * sizeof(double));
    o->tap_mean = NULL;
    return;
  }
  int64_t N = quill_type_dim(ty, 0), C = quill_type_dim(ty, 1);
  size_t plane = (size_t)(g->H * g->W);
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < C && (size_t)c < o->channels; c++) {
      size_t base = (size_t)(n * C + c) * plane;
      for (size_t i = 0; i < plane; i++)
        r->plane[i] = quill_tensor_get_f64(t, base + i);
      tap_sums(g, r->plane, r->rows, o->tap_mean + (size_t)c * o->taps);
    }
  r->tap_count[k] += (double)(g->OH * g->OW * N);
}

static quill_status on_op(void *ud, const quill_op *op,
                          const quill_tensor *res, unsigned nres) {
  stats_run *r = ud;
  for (size_t k = 0; k < r->n; k++) {
    quill_value *v = r->values[k];
    if (quill_value_def(v) != op || quill_value_index(v) >= nres)
      continue;
    const quill_tensor *t = &res[quill_value_index(v)];
    quill_type *ty = t->type;
    size_t c = r->out[k].channels, inner = 1;
    for (unsigned d = 2; d < quill_type_rank(ty); d++)
      inner *= (size_t)quill_type_dim(ty, d);
    size_t total = quill_tensor_num_elements(t);
    for (size_t i = 0; i < total; i++) {
      size_t ch = (i / inner) % c;
      double x = quill_tensor_get_f64(t, i);
      r->out[k].mean[ch] += x; /* a sum until the end */
      if (x < r->out[k].min[ch])
        r->out[k].min[ch] = x;
    }
    r->count[k] += (double)(total / c);
    if (r->out[k].tap_mean)
      add_taps(r, k, t);
  }
  return QUILL_OK;
}

static quill_status get_data(quill_pass_state *ps, const char *who,
                             quill_graph *g, quill_calib_dataset **ds,
                             quill_calib_dataset **owned) {
  quill_context *ctx = quill_pass_context(ps);
  quill_status st = QUILL_OK;
  int64_t max = quill_pass_option_int(ps, "max-samples", 0, &st);
  if (st)
    return st;
  const char *path = quill_pass_option(ps, "data");
  *owned = NULL;
  if (path && *path) {
    if (!(*owned = quill_calib_dataset_create(ctx, g)))
      return QUILL_ERR_INVALID;
    quill_calib_dataset_set_max_samples(*owned, max > 0 ? (size_t)max : 0);
    *ds = *owned;
    return quill_calib_dataset_load(*owned, path);
  }
  *ds = quill_pass_input(ps, "calibration-data");
  if (!*ds)
    return quill_error(ctx, quill_graph_loc(g),
                       "%s: no calibration data (give data=PATH, or a "
                       "dataset as the pass input 'calibration-data')",
                       who);
  return quill_calib_dataset_check_graph(*ds, g);
}

quill_status quill_chan_stats_collect(quill_pass_state *ps, const char *who,
                                      quill_graph *g, size_t n,
                                      quill_value *const *values,
                                      const quill_op *const *convs,
                                      quill_chan_stats *out) {
  quill_context *ctx = quill_pass_context(ps);
  memset(out, 0, n * sizeof *out);
  quill_calib_dataset *ds = NULL, *owned = NULL;
  quill_status st = get_data(ps, who, g, &ds, &owned);
  stats_run r = {n, values, out, NULL, NULL, NULL, NULL, NULL, ctx};
  size_t nplane = 1, nrows = 1;
  if (!st && (!(r.count = quill_calloc(ctx, n ? n : 1, sizeof *r.count)) ||
              !(r.tap_count = quill_calloc(ctx, n ? n : 1,
                                           sizeof *r.tap_count)) ||
              !(r.geom = quill_calloc(ctx, n ? n : 1, sizeof *r.geom))))
    st = QUILL_ERR_NOMEM;
  for (size_t k = 0; !st && k < n; k++) {
    quill_type *t = quill_value_type(values[k]);
    if (quill_type_rank(t) < 2 || quill_type_dim(t, 1) < 1) {
      st = quill_error(ctx, quill_op_loc(quill_value_def(values[k])),
                       "%s: a value without a channel axis", who);
      break;
    }
    out[k].channels = (size_t)quill_type_dim(t, 1);
    out[k].min = quill_alloc(ctx, 2 * out[k].channels * sizeof(double));
    if (!out[k].min) {
      st = QUILL_ERR_NOMEM;
      break;
    }
    out[k].mean = out[k].min + out[k].channels;
    for (size_t c = 0; c < out[k].channels; c++) {
      out[k].min[c] = DBL_MAX;
      out[k].mean[c] = 0.0;
    }
    r.geom[k] = geom_of(convs ? convs[k] : NULL);
    if (r.geom[k].kh &&
        quill_op_operand(convs[k], 0) == values[k]) {
      int64_t H = r.geom[k].H, W = r.geom[k].W;
      size_t np = (size_t)(H * W), nr = (size_t)(r.geom[k].kw * H);
      nplane = np > nplane ? np : nplane;
      nrows = nr > nrows ? nr : nrows;
      out[k].taps = (size_t)(r.geom[k].kh * r.geom[k].kw);
      out[k].tap_mean =
          quill_calloc(ctx, out[k].channels * out[k].taps, sizeof(double));
      if (!out[k].tap_mean) {
        st = QUILL_ERR_NOMEM;
        break;
      }
    }
  }
  if (!st && (!(r.plane = quill_alloc(ctx, nplane * sizeof *r.plane)) ||
              !(r.rows = quill_alloc(ctx, nrows * sizeof *r.rows))))
    st = QUILL_ERR_NOMEM;
  size_t ns = st ? 0 : quill_calib_dataset_size(ds);
  int64_t max = quill_pass_option_int(ps, "max-samples", 0, NULL);
  if (max > 0 && (size_t)max < ns)
    ns = (size_t)max;
  if (!st && ns == 0)
    st = quill_error(ctx, quill_graph_loc(g),
                     "%s: the calibration dataset is empty", who);
  unsigned nout = quill_graph_num_results(g);
  quill_tensor *res = st ? NULL : quill_calloc(ctx, nout ? nout : 1,
                                               sizeof *res);
  if (!st && !res)
    st = QUILL_ERR_NOMEM;
  for (size_t i = 0; !st && i < ns; i++) {
    st = quill_ref_run_observed(ctx, g, quill_calib_dataset_sample(ds, i),
                                quill_calib_dataset_num_inputs(ds), res, nout,
                                on_op, &r);
    quill_ref_tensors_free(ctx, res, nout);
  }
  if (res)
    quill_free(ctx, res, (nout ? nout : 1) * sizeof *res);
  for (size_t k = 0; !st && k < n; k++) {
    for (size_t c = 0; c < out[k].channels; c++)
      out[k].mean[c] /= r.count[k] > 0 ? r.count[k] : 1.0;
    for (size_t i = 0; out[k].tap_mean && i < out[k].channels * out[k].taps;
         i++)
      out[k].tap_mean[i] /= r.tap_count[k] > 0 ? r.tap_count[k] : 1.0;
  }
  if (r.count)
    quill_free(ctx, r.count, (n ? n : 1) * sizeof *r.count);
  if (r.tap_count)
    quill_free(ctx, r.tap_count, (n ? n : 1) * sizeof *r.tap_count);
  if (r.geom)
    quill_free(ctx, r.geom, (n ? n : 1) * sizeof *r.geom);
  if (r.plane)
    quill_free(ctx, r.plane, nplane * sizeof *r.plane);
  if (r.rows)
    quill_free(ctx, r.rows, nrows * sizeof *r.rows);
  quill_calib_dataset_destroy(owned);
  if (st)
    quill_chan_stats_free(ctx, out, n);
  return st;
}

void quill_chan_stats_free(quill_context *ctx, quill_chan_stats *s, size_t n) {
  for (size_t k = 0; k < n; k++) {
    if (s[k].min)
      quill_free(ctx, s[k].min, 2 * s[k].channels * sizeof(double));
    if (s[k].tap_mean)
      quill_free(ctx, s[k].tap_mean,
                 s[k].channels * s[k].taps * sizeof(double));
    s[k].min = s[k].mean = s[k].tap_mean = NULL;
  }
}
