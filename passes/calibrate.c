/*
 * calibrate.c - the `calibrate` pass: run calibration data through the
 * graph, let each fake_quant's observer pick a range, and write the range
 * and the resulting quantization type onto the fake_quant
 * (docs/quantization.md sections 2 and 4).
 *
 *   %y = fake_quant %x {role = "activation", dtype = i8, qmin = -128,
 *                       qmax = 127, ..., observer = "minmax"}
 *     ==>
 *   %y = fake_quant %x {..., min = -1.25, max = 3.5,
 *                       quant = !quant.uniform<i8:f32, 0.0186...:-61>}
 *
 * Which fake_quants get their range how:
 *
 *   fixed_scale/fixed_zero_point  quant from them; min/max the range it
 *                                 represents; no data
 *   operand is a constant         (weights) the observer runs on the
 *                                 constant itself, per channel along
 *                                 `axis`; no data
 *   otherwise                     observed in the runs of the entry graph
 *                                 (the module's first) over the samples
 *
 * A per-tensor activation read only by one max pool is observed on the
 * pool's result instead of its own (a conv's output feeding SqueezeNet's
 * or ResNet's max pools): only the values the pool keeps go on, so a
 * histogram observer (mse, kl, percentile) fits the range to them rather
 * than clipping the large values the pool selects for the sake of the
 * many it drops; minmax gets the same maximum. Option pooled=0 turns it
 * off.
 *
 * Concats (per-tensor activations of one scheme): the concat's result
 * takes the union of its inputs' ranges instead of its own observer's
 * (option concat-union, default 1; a concat makes no new values, and an
 * mse fit of its own clipped the widest input a second time), and each
 * input read only by the concat takes the concat's params (concat-share,
 * default 1), so that its producer writes the concat's scale directly:
 * one rounding instead of its own and the concat's requantization.
 * Concats joined by shared inputs (a DenseNet block: each layer concats
 * all of the block's earlier outputs, which feed only concats) take one
 * range, the union of theirs, and so do the inputs they share (option
 * concat-group, default 1): then no input is requantized per concat, and
 * the compiled code keeps the whole block in one buffer. A concat whose
 * own range is less than half the group's stays out (its inputs too,
 * unless they feed only concats of the group), unless each of its inputs
 * feeds other concats of the group as well and its range is at least a
 * quarter of the group's (then staying out wins its readers at most 2
 * bits, and costs a requantization of each input into every other
 * concat).
 *
 * Data: option data=PATH (loaded with passes/calib_data.h, honouring
 * max-samples=N while reading), else the pass-manager input
 * "calibration-data" (a quill_calib_dataset *). Each sample is run once
 * through the reference interpreter (quill_ref_run_observed); fake_quants
 * are the identity during the runs (any old `quant` is dropped first), so
 * every observer sees float values. The observer callback checks every
 * float result for NaN/Inf (an error naming the sample and the op) and
 * feeds the fake_quants' results to their observers. Observers that need
 * a histogram (percentile, kl, mse; observers.c) get it after the first
 * run over all samples has fixed its range: from copies of the values they
 * saw, kept while they fit in histogram-cache-mb=N MiB (default 256; 0:
 * never), else from a second run over the samples.
 *
 * Ranges become scale and zero point with quill_quant_params_from_range
 * (backends/scheme.c). A degenerate range (all zeros) gets scale 1.0 and a
 * warning naming the fake_quant. The runs also observe each float lstm's
 * internal cell state (observers.h): its largest |c| becomes the lstm's
 * attribute cell_absmax, which fuse-qdq's integer LSTM takes for its cell
 * scale. A progress bar goes to stderr only when
 * stderr is a terminal. Statistics: num-samples, num-observers (from
 * data), num-weight-observers (from constants), num-fixed, num-degenerate,
 * num-lstm-cells.
 */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "backends/backend.h"
#include "passes/calib_data.h"
#include "passes/calibrate_impl.h"
#include "passes/pass.h"

/* ---- naming ------------------------------------------------------------------- */

static const char *op_subject(const quill_op *op) {
  if (quill_op_num_results(op) && quill_value_name(quill_op_result(op, 0)))
    return quill_value_name(quill_op_result(op, 0));
  return quill_op_loc(op).name ? quill_op_loc(op).name : "";
}

/* ---- the runs ---------------------------------------------------------------------- */

static bool all_finite(const quill_tensor *t) {
  quill_type_kind k = quill_tensor_elem_kind(t);
  size_t n = quill_tensor_num_elements(t);
  if (k == QUILL_TYPE_F32) {
    const float *p = t->data;
    bool ok = true;
    for (size_t i = 0; i < n; i++)
      ok &= isfinite(p[i]) != 0;
    return ok;
  }
  if (!quill_type_is_float(quill_type_elem(t->type)))
    return true;
  for (size_t i = 0; i < n; i++)
    if (!isfinite(quill_tensor_get_f64(t, i)))
      return false;
  return true;
}

static void cache_free(calib *c) {
  for (size_t i = 0; i < c->ncache; i++)
    quill_tensor_free(c->ctx, &c->cache[i].t);
  quill_free(c->ctx, c->cache, c->cache_cap * sizeof *c->cache);
  c->cache = NULL;
  c->ncache = c->cache_cap = c->cache_bytes = 0;
}

/* Keep a copy of t for observer k; past the budget (or out of memory) the
 * cache is dropped and the histograms take a second run. */
static void cache_add(calib *c, size_t k, const quill_tensor *t) {
  if (!c->cache_ok)
    return;
  bool ok = c->cache_bytes + t->size <= c->cache_budget;
  if (ok && c->ncache == c->cache_cap) {
    size_t ncap = c->cache_cap ? c->cache_cap * 2 : 64;
    cached *p = quill_realloc(c->ctx, c->cache, c->cache_cap * sizeof *p,
                              ncap * sizeof *p);
    ok = p != NULL;
    if (p) {
      c->cache = p;
      c->cache_cap = ncap;
    }
  }
  cached e = {k, {NULL, NULL, 0}};
  ok = ok && quill_tensor_alloc(c->ctx, t->type, &e.t) == QUILL_OK;
  if (!ok) {
    cache_free(c);
    c->cache_ok = false;
    return;
  }
  if (t->size)
    memcpy(e.t.data, t->data, t->size);
  c->cache[c->ncache++] = e;
  c->cache_bytes += t->size;
}

static quill_status on_op(void *ud, const quill_op *op,
                          const quill_tensor *results, unsigned nres) {
  calib *c = ud;
  /* results computed from constants alone (the weights' fake_quants) are
   * the same in every run; constants are checked once, by their observer */
  bool from_constants = true;
  for (unsigned i = 0; from_constants && i < quill_op_num_operands(op); i++)
    from_constants = quill_value_constant(quill_op_operand(op, i)) != NULL;
  if (c->pass == 1 && !(from_constants && quill_op_num_operands(op)))
    for (unsigned i = 0; i < nres; i++)
      if (!all_finite(&results[i]))
        return quill_error(c->ctx, quill_op_loc(op),
                           "calibrate: sample %s: the result of '%s'%s%s%s "
                           "is not finite (NaN or Inf)",
                           quill_calib_dataset_origin(c->ds, c->sample, 0),
                           quill_op_name(op), *op_subject(op) ? " ('" : "",
                           op_subject(op), *op_subject(op) ? "')" : "");
  quill_status st = c->pass == 1
                        ? quill_calib_lstm_observe(c->lstm, op, results, nres)
                        : QUILL_OK;
  if (st)
    return st;
  uint32_t id = quill_op_id(op);
  if (id >= c->num_ids || c->index_of_id[id] < 0)
    return QUILL_OK;
  fq_info *f = &c->fq[c->index_of_id[id]];
  if (c->pass == 1) {
    quill_observer_add_range(f->obs, &results[0], f->inner);
    if (quill_observer_needs_histogram(f->obs))
      cache_add(c, (size_t)c->index_of_id[id], &results[0]);
  } else
    quill_observer_add_histogram(f->obs, &results[0], f->inner);
  return QUILL_OK;
}

static void progress(const calib *c, size_t done, size_t total) {
  enum { WIDTH = 30 };
  size_t fill = total ? done * WIDTH / total : WIDTH;
  char bar[WIDTH + 1];
  for (size_t i = 0; i < WIDTH; i++)
    bar[i] = i < fill ? '#' : '.';
  bar[WIDTH] = '\0';
  fprintf(stderr, "\rcalibrate%s: [%s] %zu/%zu",
          c->pass == 2 ? " (histograms)" : "", bar, done, total);
  fflush(stderr);
}

/* Sample i's inputs must be finite (else: the file is to blame). */
static quill_status check_inputs(calib *c, size_t i) {
  const quill_tensor *in = quill_calib_dataset_sample(c->ds, i);
  for (unsigned k = 0; k < quill_calib_dataset_num_inputs(c->ds); k++)
    if (!all_finite(&in[k]))
      return quill_error(c->ctx,
                         quill_loc_file(c->ctx,
                                        quill_calib_dataset_origin(c->ds, i, k),
                                        0, 0),
                         "calibrate: input '%s' holds NaN or Inf",
                         quill_calib_dataset_input_name(c->ds, k));
  return QUILL_OK;
}

static quill_status run_samples(calib *c, quill_graph *g, size_t n) {
  quill_context *ctx = c->ctx;
  unsigned nout = quill_graph_num_results(g);
  unsigned nin = quill_calib_dataset_num_inputs(c->ds);
  quill_tensor *out = quill_calloc(ctx, nout ? nout : 1, sizeof *out);
  if (!out)
    return QUILL_ERR_NOMEM;
  bool bar = isatty(STDERR_FILENO) && n > 0;
  quill_status st = QUILL_OK;
  for (size_t i = 0; !st && i < n; i++) {
    c->sample = i;
    if (c->pass == 1)
      st = check_inputs(c, i);
    if (!st)
      st = quill_ref_run_observed(ctx, g, quill_calib_dataset_sample(c->ds, i),
                                  nin, out, nout, on_op, c);
    quill_ref_tensors_free(ctx, out, nout);
    if (bar)
      progress(c, i + 1, n);
  }
  if (bar)
    fputs("\r\033[K", stderr);
  quill_free(ctx, out, (nout ? nout : 1) * sizeof *out);
  return st;
}

/* Get the dataset (data= option or the manager input); *owned if made here. */
static quill_status get_dataset(calib *c, quill_graph *g, int64_t max,
                                quill_calib_dataset **owned) {
  const char *path = quill_pass_option(c->ps, "data");
  *owned = NULL;
  if (path && *path) {
    quill_calib_dataset *ds = quill_calib_dataset_create(c->ctx, g);
    if (!ds)
      return QUILL_ERR_INVALID;
    quill_calib_dataset_set_max_samples(ds, max > 0 ? (size_t)max : 0);
    *owned = ds;
    quill_status st = quill_calib_dataset_load(ds, path);
    if (st)
      return st;
    c->ds = ds;
    return QUILL_OK;
  }
  c->ds = quill_pass_input(c->ps, "calibration-data");
  if (c->ds)
    return quill_calib_dataset_check_graph(c->ds, g);
  return QUILL_ERR_INVALID; /* reported by the caller */
}

static quill_status calibrate_data(calib *c, quill_graph *g, size_t first) {
  quill_context *ctx = c->ctx;
  quill_status st = QUILL_OK;
  int64_t max = quill_pass_option_int(c->ps, "max-samples", 0, &st);
  if (st)
    return st;
  int64_t mb = quill_pass_option_int(c->ps, "histogram-cache-mb",
                                     CACHE_MB_DEFAULT, &st);
  if (st)
    return st;
  if (mb < 0 || mb > (INT64_C(1) << 30))
    return quill_error(ctx, quill_loc_unknown(),
                       "calibrate: histogram-cache-mb must be in [0, 2^30], "
                       "got %lld",
                       (long long)mb);
  c->cache_budget = (size_t)mb << 20;
  if (quill_pass_option(c->ps, "max-samples") && max < 1)
    return quill_error(ctx, quill_loc_unknown(),
                       "calibrate: max-samples must be at least 1, got %lld",
                       (long long)max);
  quill_calib_dataset *owned;
  st = get_dataset(c, g, max, &owned);
  if (st == QUILL_ERR_INVALID && !c->ds && !owned &&
      !quill_pass_option(c->ps, "data"))
    st = quill_error(ctx, quill_op_loc(c->fq[first].op),
                     "calibrate: no calibration data for the fake_quant of "
                     "'%s' (give data=PATH, or a dataset as the pass input "
                     "'calibration-data')",
                     quill_fake_quant_subject(c->fq[first].op));
  size_t n = c->ds ? quill_calib_dataset_size(c->ds) : 0;
  if (!st && max > 0 && (size_t)max < n)
    n = (size_t)max;
  if (!st && n == 0)
    st = quill_error(ctx, quill_graph_loc(g),
                     "calibrate: the calibration dataset is empty");
  /* op id -> fq index for the entry graph */
  uint32_t ids = 0;
  QUILL_GRAPH_FOREACH(g, op) {
    if (quill_op_id(op) + 1 > ids)
      ids = quill_op_id(op) + 1;
  }
  if (!st && !(c->index_of_id = quill_alloc(ctx, (ids ? ids : 1) * sizeof(int32_t))))
    st = QUILL_ERR_NOMEM;
  bool hist = false;
  if (!st) {
    c->num_ids = ids;
    for (uint32_t i = 0; i < ids; i++)
      c->index_of_id[i] = -1;
    for (size_t k = 0; k < c->nfq; k++)
      if (c->fq[k].from_data) {
        c->index_of_id[quill_op_id(c->fq[k].watch)] = (int32_t)k;
        hist |= quill_observer_needs_histogram(c->fq[k].obs);
      }
    c->pass = 1;
    c->cache_ok = hist;
    st = quill_calib_lstm_create(ctx, g, &c->lstm);
    if (!st)
      st = run_samples(c, g, n);
    uint64_t nl = 0;
    if (!st)
      st = quill_calib_lstm_finish(c->lstm, &nl);
    if (nl)
      quill_pass_stat_add(c->ps, "num-lstm-cells", nl);
    quill_calib_lstm_destroy(c->lstm);
    c->lstm = NULL;
  }
  if (!st && hist) {
    for (size_t k = 0; !st && k < c->nfq; k++) {
      fq_info *f = &c->fq[k];
      bool needs = f->from_data && quill_observer_needs_histogram(f->obs);
      if (f->from_data && !needs)
        c->index_of_id[quill_op_id(f->watch)] = -1; /* done after pass 1 */
      if (needs)
        st = quill_observer_start_histogram(f->obs);
    }
    c->pass = 2;
    if (!st && c->cache_ok) {
      quill_pass_debug(c->ps, "histograms from %zu cached values (%zu bytes)",
                       c->ncache, c->cache_bytes);
      for (size_t i = 0; i < c->ncache; i++) {
        fq_info *f = &c->fq[c->cache[i].fq];
        quill_observer_add_histogram(f->obs, &c->cache[i].t, f->inner);
      }
    } else if (!st) {
      quill_pass_debug(c->ps, "histograms from a second run over the "
                              "samples (more than %zu bytes to keep)",
                       c->cache_budget);
      st = run_samples(c, g, n);
    }
  }
  cache_free(c);
  if (!st)
    quill_pass_stat_add(c->ps, "num-samples", n);
  if (c->index_of_id)
    quill_free(ctx, c->index_of_id, (ids ? ids : 1) * sizeof(int32_t));
  c->index_of_id = NULL;
  quill_calib_dataset_destroy(owned);
  c->ds = NULL;
  return st;
}

/* ---- results ------------------------------------------------------------------------ */

static quill_status set_result(calib *c, fq_info *f) {
  quill_context *ctx = c->ctx;
  size_t n = f->channels;
  double *sc = quill_alloc(ctx, n * sizeof *sc * 3);
  int64_t *zp = quill_alloc(ctx, n * sizeof *zp);
  const quill_attr **mins = quill_alloc(ctx, n * sizeof *mins * 2);
  quill_status st = sc && zp && mins ? QUILL_OK : QUILL_ERR_NOMEM;
  double *lo = sc ? sc + n : NULL, *hi = sc ? sc + 2 * n : NULL;
  const quill_attr **maxs = mins ? mins + n : NULL;
  bool degenerate = false, tiny = false;
  double tiny_amax = 0.0;
  for (size_t k = 0; !st && k < n; k++) {
    bool deg = false;
    if (f->fixed) {
      sc[k] = f->fixed_scale;
      zp[k] = f->fixed_zp;
      lo[k] = (double)(f->scheme.qmin - f->fixed_zp) * f->fixed_scale;
      hi[k] = (double)(f->scheme.qmax - f->fixed_zp) * f->fixed_scale;
    } else {
      if (f->has_union) {
        lo[k] = f->ulo;
        hi[k] = f->uhi;
      } else {
        quill_observer_range(f->obs, k, &lo[k], &hi[k]);
      }
      if (quill_quant_params_from_range(&f->scheme, lo[k], hi[k], &sc[k],
                                        &zp[k], &deg))
        st = quill_error(ctx, quill_op_loc(f->op),
                         "calibrate: fake_quant of '%s': the range [%g, %g] "
                         "has no representable scale",
                         quill_fake_quant_subject(f->op), lo[k], hi[k]);
    }
    degenerate |= deg;
    if (deg && !f->fixed && (lo[k] != 0.0 || hi[k] != 0.0)) {
      /* nonzero, but too small for a normal float32 scale */
      tiny = true;
      double a = fmax(fabs(lo[k]), fabs(hi[k]));
      tiny_amax = fmax(tiny_amax, a);
    }
    if (!st) {
      mins[k] = quill_attr_float(ctx, lo[k]);
      maxs[k] = quill_attr_float(ctx, hi[k]);
      if (!mins[k] || !maxs[k])
        st = QUILL_ERR_NOMEM;
    }
  }
  if (!st && tiny) {
    quill_diag_emit(ctx, quill_op_loc(f->op), QUILL_DIAG_WARNING,
                    "calibrate: the fake_quant of '%s' saw only values too "
                    "small for a float32 scale (|x| <= %g)%s: using scale "
                    "1.0, they quantize to 0",
                    quill_fake_quant_subject(f->op), tiny_amax,
                    n > 1 ? " in some channel" : "");
    c->degenerate++;
  } else if (!st && degenerate) {
    quill_diag_emit(ctx, quill_op_loc(f->op), QUILL_DIAG_WARNING,
                    "calibrate: the fake_quant of '%s' saw only zeros%s: "
                    "using scale 1.0",
                    quill_fake_quant_subject(f->op), n > 1 ? " in some channel" : "");
    c->degenerate++;
  }
  quill_type *storage = quill_type_scalar(ctx, f->scheme.storage);
  quill_type *expressed =
      quill_type_elem(quill_value_type(quill_op_operand(f->op, 0)));
  quill_type *qt = NULL;
  if (!st) {
    qt = f->axis < 0 ? quill_type_quant(ctx, storage, expressed, sc[0], zp[0],
                                        f->scheme.qmin, f->scheme.qmax)
                     : quill_type_quant_axis(ctx, storage, expressed,
                                             (int32_t)f->axis, n, sc, zp,
                                             f->scheme.qmin, f->scheme.qmax);
    if (!qt) {
      const char *why = quill_type_quant_check(storage, expressed, n, sc, zp,
                                               f->scheme.qmin, f->scheme.qmax);
      st = why ? quill_error(ctx, quill_op_loc(f->op),
                             "calibrate: fake_quant of '%s': %s",
                             quill_fake_quant_subject(f->op), why)
               : QUILL_ERR_NOMEM;
    }
  }
  if (!st) {
    const quill_attr *amin = f->axis < 0 ? mins[0]
                                         : quill_attr_list(ctx, n, mins);
    const quill_attr *amax = f->axis < 0 ? maxs[0]
                                         : quill_attr_list(ctx, n, maxs);
    const quill_attr *aq = quill_attr_type(ctx, qt);
    if (!amin || !amax || !aq || quill_op_set_attr(f->op, "min", amin) ||
        quill_op_set_attr(f->op, "max", amax) ||
        quill_op_set_attr(f->op, "quant", aq))
      st = QUILL_ERR_NOMEM;
  }
  if (!st)
    quill_pass_debug(c->ps, "'%s': [%g, %g] -> scale %g, zero point %lld%s",
                     quill_fake_quant_subject(f->op), lo[0], hi[0], sc[0], (long long)zp[0],
                     n > 1 ? " (channel 0)" : "");
  quill_free(ctx, sc, n * sizeof *sc * 3);
  quill_free(ctx, zp, n * sizeof *zp);
  quill_free(ctx, mins, n * sizeof *mins * 2);
  return st;
}

/* The fq_info of the fake_quant op (NULL if it has none). */
static fq_info *info_of(calib *c, const quill_op *op) {
  for (size_t j = 0; op && j < c->nfq; j++)
    if (c->fq[j].op == op)
      return &c->fq[j];
  return NULL;
}

/* Option concat-union (header comment): every input must be a per-tensor
 * activation of the same scheme; in program order, a concat of concats
 * takes their unions. */
static void concat_union(calib *c) {
  for (size_t k = 0; k < c->nfq; k++) {
    fq_info *g = &c->fq[k];
    quill_op *cat = quill_value_def(quill_op_operand(g->op, 0));
    if (!g->from_data || g->axis >= 0 || !cat ||
        quill_op_opcode(cat) != QUILL_OP_CONCAT)
      continue;
    double lo = INFINITY, hi = -INFINITY;
    bool ok = quill_op_num_operands(cat) > 0;
    for (unsigned i = 0; ok && i < quill_op_num_operands(cat); i++) {
      fq_info *f = info_of(c, quill_value_def(quill_op_operand(cat, i)));
      ok = f && f->from_data && f->axis < 0 &&
           quill_quant_scheme_equal(&f->scheme, &g->scheme);
      double l = 0.0, h = 0.0;
      if (ok && f->has_union) {
        l = f->ulo;
        h = f->uhi;
      } else if (ok) {
        quill_observer_range(f->obs, 0, &l, &h);
      }
      lo = l < lo ? l : lo;
      hi = h > hi ? h : hi;
    }
    if (!ok)
      continue;
    g->has_union = true;
    g->ulo = lo;
    g->uhi = hi;
  }
}

/* ---- concat groups ---------------------------------------------------------------- */

/* A group member may take a range this much wider than its own; one
 * whose inputs all feed other members (operands_shared) this much: 2 bits
 * of resolution at most for its readers, where the inputs' requantization
 * into the other members is the cost of staying out. */
#define GROUP_WIDEN 2.0
#define GROUP_WIDEN_SHARED 4.0

static size_t find_root(size_t *par, size_t k) {
  while (par[k] != k)
    k = par[k] = par[par[k]];
  return k;
}

static bool plain_activation(const fq_info *f, const fq_info *like) {
  return f && f->from_data && f->axis < 0 && !f->fixed &&
         quill_quant_scheme_equal(&f->scheme, &like->scheme);
}

/* The concat a plain activation fake_quant reads (NULL: none). */
static const quill_op *fq_concat(const fq_info *g) {
  const quill_op *cat = quill_value_def(quill_op_operand(g->op, 0));
  return cat && quill_op_opcode(cat) == QUILL_OP_CONCAT &&
                 plain_activation(g, g)
             ? cat
             : NULL;
}

/* Every user of x is a concat. */
static bool feeds_concats_only(const quill_value *x) {
  for (quill_use *u = quill_value_first_use(x); u; u = quill_use_next(u))
    if (quill_op_opcode(quill_use_user(u)) != QUILL_OP_CONCAT)
      return false;
  return quill_value_first_use(x) != NULL;
}

/* The fake_quant whose params concat operand x has: x's producer, or
 * reached through max/average pools and pads that read nothing else
 * (they keep their operand's params; DenseNet's blocks start at one). */
static fq_info *operand_fq(calib *c, const quill_value *x) {
  const quill_op *op = quill_value_def(x);
  while (op && (quill_op_opcode(op) == QUILL_OP_MAXPOOL ||
                quill_op_opcode(op) == QUILL_OP_AVGPOOL ||
                quill_op_opcode(op) == QUILL_OP_PAD) &&
         quill_value_has_one_use(quill_op_operand(op, 0)))
    op = quill_value_def(quill_op_operand(op, 0));
  return op && quill_op_opcode(op) == QUILL_OP_FAKE_QUANT ? info_of(c, op)
                                                          : NULL;
}

static void fq_range(const fq_info *f, double *lo, double *hi) {
  if (f->has_union) {
    *lo = f->ulo;
    *hi = f->uhi;
  } else {
    quill_observer_range(f->obs, 0, lo, hi);
  }
}

/* Every user of x (an operand member's value) is a kept concat of the
 * group root. */
static bool users_kept(calib *c, size_t *par, const bool *keep,
                       const quill_value *x, size_t root) {
  for (quill_use *u = quill_value_first_use(x); u; u = quill_use_next(u)) {
    quill_value *r = quill_op_result(quill_use_user(u), 0);
    quill_use *v = quill_value_first_use(r);
    const fq_info *g = v && quill_value_num_uses(r) == 1
                           ? info_of(c, quill_use_user(v))
                           : NULL;
    size_t gi = g ? (size_t)(g - c->fq) : 0;
    if (!g || !keep[gi] || find_root(par, gi) != root)
      return false;
  }
  return true;
}

/* Every operand x of cat is a member of the group root read by another
 * concat too (x's values reach the group's other concats at the union's
 * scale whatever cat takes): a narrow cat staying out would keep a finer
 * scale for its own readers only, at the cost of a requantization of x
 * into every other concat and a copy per concat (DenseNet's first block:
 * its input, alone in its first layer's concat, is 0.39 as wide as the
 * block, all ReLU). */
static bool operands_shared(calib *c, size_t *par, const quill_value **top,
                            const quill_op *cat, size_t root) {
  for (unsigned i = 0; i < quill_op_num_operands(cat); i++) {
    const quill_value *x = quill_op_operand(cat, i);
    fq_info *f = operand_fq(c, x);
    size_t fi = f ? (size_t)(f - c->fq) : 0;
    if (!f || top[fi] != x || find_root(par, fi) != root ||
        quill_value_num_uses(x) < 2)
      return false;
  }
  return true;
}

/* Option concat-group (header comment): concats joined by shared inputs
 * take one range, the union of theirs, and so do the inputs they share. */
static quill_status concat_group(calib *c) {
  size_t n = c->nfq;
  size_t *par = quill_alloc(c->ctx, n * sizeof *par * 2);
  bool *keep = quill_alloc(c->ctx, n * sizeof *keep);
  const quill_value **top = quill_alloc(c->ctx, n * sizeof *top);
  if (!par || !keep || !top) {
    quill_free(c->ctx, par, n * sizeof *par * 2);
    quill_free(c->ctx, keep, n * sizeof *keep);
    quill_free(c->ctx, top, n * sizeof *top);
    return QUILL_ERR_NOMEM;
  }
  size_t *cats = par + n; /* concat members per root */
  for (size_t k = 0; k < n; k++) {
    par[k] = k;
    cats[k] = 0;
    keep[k] = false;
    top[k] = NULL;
  }
  for (size_t k = 0; k < n; k++) {
    fq_info *g = &c->fq[k];
    const quill_op *cat = fq_concat(g);
    if (!cat)
      continue;
    for (unsigned i = 0; i < quill_op_num_operands(cat); i++) {
      const quill_value *x = quill_op_operand(cat, i);
      fq_info *f = operand_fq(c, x);
      size_t fi = f ? (size_t)(f - c->fq) : 0;
      if (!plain_activation(f, g) || !feeds_concats_only(x) ||
          (top[fi] && top[fi] != x))
        continue;
      top[fi] = x;
      par[find_root(par, fi)] = find_root(par, k);
    }
  }
  for (size_t k = 0; k < n; k++)
    if (fq_concat(&c->fq[k]))
      cats[find_root(par, k)]++;
  /* Per group of two or more concats: the union of the concats' ranges,
   * without a concat whose own range is too narrow for it. */
  for (size_t r = 0; r < n; r++) {
    if (find_root(par, r) != r || cats[r] < 2)
      continue;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t k = 0; k < n; k++)
      if (fq_concat(&c->fq[k]) && find_root(par, k) == r) {
        double l, h;
        fq_range(&c->fq[k], &l, &h);
        lo = fmin(lo, l);
        hi = fmax(hi, h);
      }
    double ulo = INFINITY, uhi = -INFINITY;
    size_t kept = 0;
    for (size_t k = 0; k < n; k++) {
      double l, h;
      if (!fq_concat(&c->fq[k]) || find_root(par, k) != r)
        continue;
      fq_range(&c->fq[k], &l, &h);
      if ((h - l) * GROUP_WIDEN < hi - lo &&
          ((h - l) * GROUP_WIDEN_SHARED < hi - lo ||
           !operands_shared(c, par, top,
                            quill_value_def(quill_op_operand(c->fq[k].op, 0)),
                            r)))
        continue;
      keep[k] = true;
      kept++;
      ulo = fmin(ulo, l);
      uhi = fmax(uhi, h);
    }
    if (kept < 2)
      continue;
    for (size_t k = 0; k < n; k++) {
      fq_info *f = &c->fq[k];
      if (find_root(par, k) != r ||
          (!keep[k] && (!top[k] || !users_kept(c, par, keep, top[k], r))))
        continue;
      f->has_union = true;
      f->ulo = ulo;
      f->uhi = uhi;
    }
    quill_pass_debug(c->ps, "%zu concats and their shared inputs: [%g, %g]",
                     kept, ulo, uhi);
    quill_pass_stat_add(c->ps, "num-concat-groups", 1);
  }
  quill_free(c->ctx, par, n * sizeof *par * 2);
  quill_free(c->ctx, keep, n * sizeof *keep);
  quill_free(c->ctx, top, n * sizeof *top);
  return QUILL_OK;
}

/* Option concat-share (header comment). */
static quill_status share_concat(calib *c) {
  for (size_t k = 0; k < c->nfq; k++) {
    fq_info *f = &c->fq[k];
    quill_value *y = quill_op_result(f->op, 0);
    quill_use *u = quill_value_first_use(y);
    if (!f->from_data || f->axis >= 0 || !u || quill_value_num_uses(y) != 1 ||
        quill_op_opcode(quill_use_user(u)) != QUILL_OP_CONCAT)
      continue;
    quill_value *r = quill_op_result(quill_use_user(u), 0);
    const fq_info *g = NULL;
    for (quill_use *v = quill_value_first_use(r); v && !g;
         v = quill_use_next(v))
      for (size_t j = 0; j < c->nfq && !g; j++)
        if (c->fq[j].op == quill_use_user(v) && c->fq[j].from_data &&
            c->fq[j].axis < 0 &&
            quill_quant_scheme_equal(&c->fq[j].scheme, &f->scheme))
          g = &c->fq[j];
    if (!g)
      continue;
    static const char *const keys[3] = {"min", "max", "quant"};
    for (unsigned i = 0; i < 3; i++)
      if (quill_op_set_attr(f->op, keys[i], quill_op_attr(g->op, keys[i])))
        return QUILL_ERR_NOMEM;
    quill_pass_debug(c->ps, "'%s': the params of the concat it feeds",
                     quill_fake_quant_subject(f->op));
  }
  return QUILL_OK;
}

/* ---- the pass ------------------------------------------------------------------------ */

static quill_status run(quill_pass_state *ps, quill_module *m) {
  calib c = {.ps = ps, .ctx = quill_pass_context(ps)};
  quill_status st = QUILL_OK;
  for (unsigned gi = 0; !st && gi < quill_module_num_graphs(m); gi++)
    QUILL_GRAPH_FOREACH(quill_module_graph(m, gi), op) {
      if (quill_op_opcode(op) == QUILL_OP_FAKE_QUANT &&
          (st = quill_calib_add_fq(&c, op, gi == 0)))
        break;
    }
  uint64_t consts = 0, fixed = 0, data = 0;
  size_t first_data = 0;
  for (size_t k = 0; !st && k < c.nfq; k++) {
    fq_info *f = &c.fq[k];
    if (f->fixed)
      fixed++;
    else if (!f->from_data) {
      consts++;
      st = quill_calib_observe_constant(&c, f);
    } else if (!data++)
      first_data = k;
  }
  if (!st && data)
    st = calibrate_data(&c, quill_module_graph(m, 0), first_data);
  quill_status ost = QUILL_OK;
  bool share = quill_pass_option_int(ps, "concat-share", 1, &ost) != 0;
  bool unite = quill_pass_option_int(ps, "concat-union", 1, &ost) != 0;
  bool group = quill_pass_option_int(ps, "concat-group", 1, &ost) != 0;
  if (!st)
    st = ost;
  if (!st && unite)
    concat_union(&c);
  if (!st && unite && group)
    st = concat_group(&c);
  for (size_t k = 0; !st && k < c.nfq; k++)
    st = set_result(&c, &c.fq[k]);
  if (!st && share)
    st = share_concat(&c);
  for (size_t k = 0; k < c.nfq; k++)
    quill_observer_destroy(c.fq[k].obs);
  quill_free(c.ctx, c.fq, c.cap * sizeof *c.fq);
  if (st)
    return st;
  if (data)
    quill_pass_stat_add(ps, "num-observers", data);
  if (consts)
    quill_pass_stat_add(ps, "num-weight-observers", consts);
  if (fixed)
    quill_pass_stat_add(ps, "num-fixed", fixed);
  if (c.degenerate)
    quill_pass_stat_add(ps, "num-degenerate", c.degenerate);
  if (!c.nfq)
    quill_pass_mark_unchanged(ps);
  return QUILL_OK;
}

const quill_pass quill_pass_calibrate = {
    .name = "calibrate",
    .summary = "Run calibration data and set min/max/quant on every "
               "fake_quant",
    .run = run,
    .requires = 0,
    .establishes = 0,
    .preserves = QUILL_PROP_ALL,
    .options = "data=PATH max-samples=N histogram-cache-mb=N pooled=0|1 "
               "concat-union=0|1 concat-group=0|1 concat-share=0|1",
};
