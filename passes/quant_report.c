/*
 * quant_report.c - build and measure the quantization report (see
 * quant_report.h; formats in quant_report_write.c and _html.c, each op's
 * status and reason in quant_report_classify.c).
 *
 *   m ──copy──> F = PREPARE(m)          (float, ops as the backend runs them)
 *   m ──copy──> Q = ALL(m)              (exactly what `quill quantize` does)
 *
 * Rows, in F's program order:
 *   inputs     F's graph arguments; x_q is Q's `quantize` of the argument
 *   ops        F's ops (not constants), matched with Q's "compute" ops
 *              (not constants, casts or the return) by key and occurrence:
 *              the k-th F op keyed K is the k-th Q compute op keyed K. The
 *              key is the location name, else the first result's value
 *              name (both interned, so compared as pointers). x_q is the
 *              Q op's result when it is quantized (an integer op), else
 *              the `quantize` every use of it goes through (QDQ), else
 *              the float result itself (kept-float ops).
 *   fused      ops of m whose key F lacks (folded by fold-batchnorm, fused
 *              by fuse-activation or fuse-patterns, removed by
 *              canonicalize); placed after the row of the op they went
 *              into: for batch_norm, relu and clip the producer (operand
 *              0 up to an op F has), for the others the consumer their
 *              results reach (fuse-patterns keeps a chain's last op),
 *              else the producer.
 *
 * Measuring: for each sample, F runs with an observer that copies each
 * row's output (as doubles) into the row's buffer; then Q runs with an
 * observer that reads each tracked result through its quant type and adds
 * (x, x_q) to the row's SQNR sums. Op ids index the row maps.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "ir/dot.h"
#include "passes/quant_report.h"
#include "passes/quant_report_impl.h"

/* ---- SQNR ------------------------------------------------------------------ */

void quill_sqnr_add(quill_sqnr *s, const double *x, const double *xq,
                    size_t n) {
  double sig = 0, noise = 0;
  for (size_t i = 0; i < n; i++) {
    double d = x[i] - xq[i];
    sig += x[i] * x[i];
    noise += d * d;
  }
  s->signal += sig;
  s->noise += noise;
  s->count += n;
}

double quill_sqnr_db(const quill_sqnr *s) {
  if (s->noise == 0)
    return INFINITY;
  if (s->signal == 0)
    return -INFINITY;
  return 10.0 * log10(s->signal / s->noise);
}

const char *quill_report_status_name(quill_report_status s) {
  static const char *const names[] = {
      [QUILL_REPORT_QUANTIZED] = "quantized",
      [QUILL_REPORT_FLOAT] = "float",
      [QUILL_REPORT_FUSED] = "fused",
      [QUILL_REPORT_MISSING] = "missing",
  };
  return names[s];
}

/* ---- key maps: interned name -> items in insertion order ----------------------- */

typedef struct keymap {
  quill_context *ctx;
  const char **key;
  int32_t *head, *tail; /* first / last item of each key */
  size_t cap, count;
  int32_t *next;        /* per item: the next item of the same key */
  size_t items_cap;
} keymap;

static size_t key_hash(const char *k, size_t cap) {
  return (size_t)(((uint64_t)(uintptr_t)k * 0x9E3779B97F4A7C15ull) >> 17) &
         (cap - 1);
}

static void keymap_free(keymap *m) {
  quill_free(m->ctx, m->key, m->cap * sizeof *m->key);
  quill_free(m->ctx, m->head, m->cap * sizeof *m->head);
  quill_free(m->ctx, m->tail, m->cap * sizeof *m->tail);
  quill_free(m->ctx, m->next, m->items_cap * sizeof *m->next);
}

/* A map for up to n items (keys <= n). */
static quill_status keymap_init(keymap *m, quill_context *ctx, size_t n) {
  memset(m, 0, sizeof *m);
  m->ctx = ctx;
  m->cap = 16;
  while (m->cap < 2 * n + 2)
    m->cap *= 2;
  m->items_cap = n + 1;
  m->key = quill_calloc(ctx, m->cap, sizeof *m->key);
  m->head = quill_calloc(ctx, m->cap, sizeof *m->head);
  m->tail = quill_calloc(ctx, m->cap, sizeof *m->tail);
  m->next = quill_calloc(ctx, m->items_cap, sizeof *m->next);
  if (!m->key || !m->head || !m->tail || !m->next) {
    keymap_free(m);
    return QUILL_ERR_NOMEM;
  }
  return QUILL_OK;
}

static size_t keymap_slot(const keymap *m, const char *k) {
  size_t i = key_hash(k, m->cap);
  while (m->key[i] && m->key[i] != k)
    i = (i + 1) & (m->cap - 1);
  return i;
}

/* Add item (0 <= item < n, increasing) under k; returns how many items
 * had key k before (the occurrence index). */
static size_t keymap_add(keymap *m, const char *k, int32_t item) {
  size_t i = keymap_slot(m, k), occ = 0;
  m->next[item] = -1;
  if (!m->key[i]) {
    m->key[i] = k;
    m->head[i] = item;
  } else {
    for (int32_t it = m->head[i]; it >= 0; it = m->next[it])
      occ++;
    m->next[m->tail[i]] = item;
  }
  m->tail[i] = item;
  return occ;
}

/* The item of occurrence `occ` under k, or -1. */
static int32_t keymap_nth(const keymap *m, const char *k, size_t occ) {
  size_t i = keymap_slot(m, k);
  if (!m->key[i])
    return -1;
  int32_t it = m->head[i];
  while (it >= 0 && occ--)
    it = m->next[it];
  return it;
}

/* ---- helpers --------------------------------------------------------------------- */

static const char *op_key(quill_context *ctx, const quill_op *op) {
  if (quill_op_loc(op).name)
    return quill_op_loc(op).name;
  const char *vn = quill_op_num_results(op)
                       ? quill_value_name(quill_op_result(op, 0))
                       : NULL;
  return vn ? quill_ident_get(ctx, vn) : NULL;
}

static bool is_row_op(const quill_op *op) {
  return !quill_op_has_flag(op, QUILL_OPF_CONSTANT) &&
         !quill_op_has_flag(op, QUILL_OPF_TERMINATOR);
}

static bool is_compute_op(const quill_op *op) {
  quill_op_qclass c = quill_op_quant_class(op);
  return c == QUILL_OP_QCLASS_FLOAT || c == QUILL_OP_QCLASS_QUANTIZED;
}

void quill_report_tensor_to_real(const quill_tensor *t, double *out) {
  size_t n = quill_tensor_num_elements(t);
  const quill_type *e = quill_type_elem(t->type);
  if (!quill_type_is_quant(e)) {
    if (quill_type_kind_of(e) == QUILL_TYPE_F32) {
      const float *p = t->data;
      for (size_t i = 0; i < n; i++)
        out[i] = p[i];
    } else {
      for (size_t i = 0; i < n; i++)
        out[i] = quill_tensor_get_f64(t, i);
    }
    return;
  }
  const double *s = quill_type_quant_scales(e);
  const int64_t *zp = quill_type_quant_zero_points(e);
  int32_t axis = quill_type_quant_axis_of(e);
  size_t inner = 1, dim = 1;
  if (axis >= 0 && (unsigned)axis < quill_type_rank(t->type)) {
    dim = (size_t)quill_type_dim(t->type, (unsigned)axis);
    for (unsigned d = (unsigned)axis + 1; d < quill_type_rank(t->type); d++)
      inner *= (size_t)quill_type_dim(t->type, d);
  }
  for (size_t i = 0; i < n; i++) {
    size_t c = axis >= 0 && dim ? (i / inner) % dim : 0;
    out[i] = (double)(quill_tensor_get_i64(t, i) - zp[c]) * s[c];
  }
}

/* Round-trip a module through its text: an exact copy (file locations
 * kept). NULL after diagnostics or on allocation failure. */
quill_module *quill_report_clone_module(quill_context *ctx,
                                        const quill_module *m) {
  quill_strbuf sb;
  quill_strbuf_init(&sb, ctx);
  quill_print_options po = {.print_locs = true};
  quill_print_module(m, &sb, &po);
  quill_module *c = quill_strbuf_failed(&sb)
                        ? NULL
                        : quill_parse_module(ctx, quill_strbuf_str(&sb), sb.len,
                                             "<report copy>", 0);
  quill_strbuf_free(&sb);
  return c;
}

/* ---- report object ----------------------------------------------------------------- */

static quill_status grow_rows(quill_quant_report *r) {
  if (r->nrows < r->cap)
    return QUILL_OK;
  size_t nc = r->cap ? 2 * r->cap : 32;
  report_entry *e = quill_realloc(r->ctx, r->rows, r->cap * sizeof *e,
                                  nc * sizeof *e);
  if (!e)
    return QUILL_ERR_NOMEM;
  r->rows = e;
  r->cap = nc;
  return QUILL_OK;
}

static report_entry *new_row(quill_quant_report *r) {
  if (grow_rows(r))
    return NULL;
  report_entry *e = &r->rows[r->nrows++];
  memset(e, 0, sizeof *e);
  e->arg = -1;
  return e;
}

void quill_quant_report_destroy(quill_quant_report *r) {
  if (!r)
    return;
  quill_context *ctx = r->ctx;
  for (size_t i = 0; i < r->nrows; i++)
    quill_free(ctx, r->rows[i].buf, r->rows[i].buf_n * sizeof(double));
  quill_free(ctx, r->rows, r->cap * sizeof *r->rows);
  if (r->outs)
    quill_free(ctx, r->outs, (r->nouts + 1) * sizeof *r->outs);
  quill_free(ctx, r->fmap, r->fmap_n * sizeof *r->fmap);
  quill_free(ctx, r->qmap, r->qmap_n * sizeof *r->qmap);
  quill_free(ctx, r->qrow, r->qmap_n * sizeof *r->qrow);
  quill_free(ctx, r->scratch, r->scratch_n * sizeof *r->scratch);
  quill_free(ctx, r->keep, r->num_keep_cap * sizeof *r->keep);
  quill_string_free(ctx, r->keep_text);
  quill_strbuf_free(&r->accuracy_log);
  if (r->flt)
    quill_module_destroy(r->flt);
  if (r->qnt)
    quill_module_destroy(r->qnt);
  quill_free(ctx, r, sizeof *r);
}

size_t quill_quant_report_num_rows(const quill_quant_report *r) {
  return r->nrows;
}
const quill_report_row *quill_quant_report_row(const quill_quant_report *r,
                                               size_t i) {
  return i < r->nrows ? &r->rows[i].row : NULL;
}
size_t quill_quant_report_num_outputs(const quill_quant_report *r) {
  return r->nouts;
}
const quill_report_output *
quill_quant_report_output(const quill_quant_report *r, size_t i) {
  return i < r->nouts ? &r->outs[i] : NULL;
}
const quill_report_accuracy *
quill_quant_report_accuracy(const quill_quant_report *r) {
  return &r->acc;
}
size_t quill_quant_report_num_samples(const quill_quant_report *r) {
  return r->samples;
}
const char *quill_quant_report_backend(const quill_quant_report *r) {
  return quill_backend_name(r->b);
}
const char *quill_quant_report_keep_float(const quill_quant_report *r) {
  return r->keep_float;
}
const char *quill_quant_report_accuracy_log(const quill_quant_report *r) {
  return quill_strbuf_str(&r->accuracy_log);
}
quill_module *quill_quant_report_quantized(const quill_quant_report *r) {
  return r->qnt;
}

/* The row of the first op F has that op's results reach through ops F
 * lacks (depth-first over the users, at most `depth` ops deep), or -1. */
static int32_t consumer_row(quill_quant_report *r, const keymap *fk,
                            const quill_op *op, unsigned depth) {
  if (!depth)
    return -1;
  for (unsigned i = 0; i < quill_op_num_results(op); i++)
    for (quill_use *u = quill_value_first_use(quill_op_result(op, i)); u;
         u = quill_use_next(u)) {
      const quill_op *user = quill_use_user(u);
      const char *k = is_row_op(user) ? op_key(r->ctx, user) : NULL;
      if (!k)
        continue;
      int32_t row = keymap_nth(fk, k, 0);
      if (row < 0)
        row = consumer_row(r, fk, user, depth - 1);
      if (row >= 0)
        return row;
    }
  return -1;
}

/* The rows of ops m has and F lacks, after the op they went into. */
static quill_status add_fused_rows(quill_quant_report *r, const quill_graph *og,
                                   const keymap *fk) {
  size_t sub = 1;
  QUILL_GRAPH_FOREACH(og, op) {
    const char *k = is_row_op(op) ? op_key(r->ctx, op) : NULL;
    if (!k || keymap_nth(fk, k, 0) >= 0)
      continue;
    const quill_op *d = op;
    int32_t into = -1;
    bool down = false;
    /* fuse-patterns folds a chain into its last op (the consumer): follow
     * single uses down to an op F has; batch_norm and activations went
     * into their producer (operand 0 up). */
    quill_opcode opc = quill_op_opcode(op);
    if (opc != QUILL_OP_BATCH_NORM && opc != QUILL_OP_RELU &&
        opc != QUILL_OP_CLIP && quill_op_num_results(op)) {
      into = consumer_row(r, fk, op, 16);
      down = into >= 0;
    }
    while (into < 0 && d && quill_op_num_operands(d) &&
           (d = quill_value_def(quill_op_operand(d, 0))) && is_row_op(d)) {
      const char *dk = op_key(r->ctx, d);
      if (dk)
        into = keymap_nth(fk, dk, 0);
    }
    report_entry *e = new_row(r);
    if (!e)
      return QUILL_ERR_NOMEM;
    e->row.name = k;
    e->row.opcode = quill_op_name(op);
    e->row.status = QUILL_REPORT_FUSED;
    e->sub = sub++;
    if (into < 0) {
      e->anchor = SIZE_MAX;
      e->row.reason = "removed before quantization (canonicalize, "
                      "fuse-patterns, fold-batchnorm, fuse-activation)";
      continue;
    }
    const report_entry *p = &r->rows[into];
    e->anchor = p->anchor;
    e->row.fused_into = p->row.name;
    quill_strbuf sb;
    quill_strbuf_init(&sb, r->ctx);
    if (down)
      quill_strbuf_printf(&sb, "fused into %s %s", p->row.opcode,
                          p->row.name);
    else
      quill_strbuf_printf(&sb, "%s into producer %s",
                          opc == QUILL_OP_BATCH_NORM ? "folded" : "fused",
                          p->row.name);
    e->row.reason = quill_strbuf_failed(&sb)
                        ? NULL
                        : quill_ident_get(r->ctx, quill_strbuf_str(&sb));
    quill_strbuf_free(&sb);
    if (!e->row.reason)
      return QUILL_ERR_NOMEM;
  }
  return QUILL_OK;
}

static int entry_cmp(const void *a, const void *b) {
  const report_entry *x = a, *y = b;
  if (x->anchor != y->anchor)
    return x->anchor < y->anchor ? -1 : 1;
  return x->sub < y->sub ? -1 : x->sub > y->sub;
}

static size_t max_op_id(const quill_graph *g) {
  size_t m = 0;
  QUILL_GRAPH_FOREACH(g, op) {
    if ((size_t)quill_op_id(op) + 1 > m)
      m = (size_t)quill_op_id(op) + 1;
  }
  return m;
}

/* Op id -> row maps, after the rows are in their final order. */
static quill_status build_maps(quill_quant_report *r, const quill_graph *fg,
                               const quill_graph *qg) {
  r->fmap_n = max_op_id(fg);
  r->qmap_n = max_op_id(qg);
  r->fmap = quill_alloc(r->ctx, (r->fmap_n ? r->fmap_n : 1) * sizeof *r->fmap);
  r->qmap = quill_alloc(r->ctx, (r->qmap_n ? r->qmap_n : 1) * sizeof *r->qmap);
  r->qrow = quill_alloc(r->ctx, (r->qmap_n ? r->qmap_n : 1) * sizeof *r->qrow);
  r->fmap_n = r->fmap_n ? r->fmap_n : 1;
  r->qmap_n = r->qmap_n ? r->qmap_n : 1;
  if (!r->fmap || !r->qmap || !r->qrow)
    return QUILL_ERR_NOMEM;
  for (size_t i = 0; i < r->fmap_n; i++)
    r->fmap[i] = -1;
  for (size_t i = 0; i < r->qmap_n; i++)
    r->qmap[i] = r->qrow[i] = -1;
  for (size_t i = 0; i < r->nrows; i++) {
    report_entry *e = &r->rows[i];
    if (e->fop)
      r->fmap[quill_op_id(e->fop)] = (int32_t)i;
    if (e->track)
      r->qmap[quill_op_id(e->track)] = (int32_t)i;
    if (e->qop)
      r->qrow[quill_op_id(e->qop)] = (int32_t)i;
  }
  return QUILL_OK;
}

static quill_status build_rows(quill_quant_report *r, const quill_graph *og,
                               const quill_graph *fg, const quill_graph *qg) {
  keymap qk, fk;
  size_t nq = quill_graph_num_ops(qg), nf = quill_graph_num_ops(fg);
  const quill_op **qops = quill_calloc(r->ctx, nq + 1, sizeof *qops);
  if (!qops)
    return QUILL_ERR_NOMEM;
  quill_status st = keymap_init(&qk, r->ctx, nq);
  if (st) {
    quill_free(r->ctx, qops, (nq + 1) * sizeof *qops);
    return st;
  }
  if ((st = keymap_init(&fk, r->ctx, nf + quill_graph_num_args(fg)))) {
    keymap_free(&qk);
    quill_free(r->ctx, qops, (nq + 1) * sizeof *qops);
    return st;
  }
  int32_t nqops = 0;
  QUILL_GRAPH_FOREACH(qg, op) {
    const char *k = is_compute_op(op) ? op_key(r->ctx, op) : NULL;
    if (k) {
      qops[nqops] = op;
      keymap_add(&qk, k, nqops++);
    }
  }
  for (unsigned i = 0; i < quill_graph_num_args(fg) && !st; i++) {
    report_entry *e = new_row(r);
    if (!e) {
      st = QUILL_ERR_NOMEM;
      break;
    }
    const char *n = quill_value_name(quill_graph_arg(fg, i));
    e->arg = (int)i;
    e->sub = i;
    e->row.opcode = "input";
    e->row.name = n ? quill_ident_get(r->ctx, n) : NULL;
    if (!e->row.name) {
      char buf[32];
      snprintf(buf, sizeof buf, "input%u", i);
      e->row.name = quill_ident_get(r->ctx, buf);
    }
    if (!e->row.name)
      st = QUILL_ERR_NOMEM;
    else
      quill_report_classify_input(e, qg);
  }
  size_t pos = 1;
  QUILL_GRAPH_FOREACH(fg, op) {
    if (st || !is_row_op(op))
      continue;
    const char *k = op_key(r->ctx, op);
    size_t idx = r->nrows;
    report_entry *e = new_row(r);
    if (!e) {
      st = QUILL_ERR_NOMEM;
      break;
    }
    e->fop = op;
    e->anchor = pos++;
    e->row.opcode = quill_op_name(op);
    e->row.name = k ? k : quill_op_name(op);
    if (k) {
      size_t occ = keymap_add(&fk, k, (int32_t)idx);
      int32_t qi = keymap_nth(&qk, k, occ);
      e->qop = qi >= 0 ? qops[qi] : NULL;
    }
    st = quill_report_classify_op(r, e);
  }
  if (!st)
    st = add_fused_rows(r, og, &fk);
  keymap_free(&qk);
  keymap_free(&fk);
  quill_free(r->ctx, qops, (nq + 1) * sizeof *qops);
  if (st)
    return st;
  qsort(r->rows, r->nrows, sizeof *r->rows, entry_cmp);
  return build_maps(r, fg, qg);
}

/* ---- create ------------------------------------------------------------------------- */

quill_status quill_quant_report_create(quill_context *ctx,
                                       const quill_module *m,
                                       const quill_quantize_options *o,
                                       quill_calib_dataset *calib,
                                       quill_quant_report **out) {
  *out = NULL;
  if (!quill_module_num_graphs(m))
    return quill_error(ctx, quill_loc_unknown(),
                       "report: the model has no function");
  if (!calib)
    return quill_error(ctx, quill_loc_unknown(),
                       "report: no calibration samples");
  quill_quant_report *r = quill_calloc(ctx, 1, sizeof *r);
  if (!r)
    return QUILL_ERR_NOMEM;
  r->ctx = ctx;
  quill_strbuf_init(&r->accuracy_log, ctx);
  quill_status st = QUILL_OK;
  if (!(r->b = quill_backend_get(ctx, o->backend)) ||
      !(r->backend_opt = quill_ident_get(ctx, o->backend)))
    st = QUILL_ERR_INVALID;
  if (!st)
    st = quill_report_parse_keep(r, o->keep_float);
  if (!st && (!(r->flt = quill_report_clone_module(ctx, m)) ||
              !(r->qnt = quill_report_clone_module(ctx, m))))
    st = quill_diag_error_count(ctx) ? QUILL_ERR_INVALID : QUILL_ERR_NOMEM;
  if (!st)
    st = quill_quantize_module(ctx, r->flt, o, QUILL_QUANTIZE_PREPARE, calib,
                               NULL); /* equalize may need the data */
  quill_quantize_options qo = *o;
  qo.log = &r->accuracy_log; /* what the accuracy passes did, once */
  if (!st)
    /* the reference form: float ops between quantize/dequantize keep the
     * float model's ops and locations one to one (the integer form differs
     * by at most one step of requantization rounding) */
    st = quill_quantize_module(ctx, r->qnt, &qo,
                               QUILL_QUANTIZE_PREPARE | QUILL_QUANTIZE_QUANTIZE,
                               calib, NULL);
  if (!st)
    st = build_rows(r, quill_module_graph(m, 0), quill_module_graph(r->flt, 0),
                    quill_module_graph(r->qnt, 0));
  if (!st)
    st = quill_report_measure(r, calib);
  if (st) {
    quill_quant_report_destroy(r);
    return st;
  }
  *out = r;
  return QUILL_OK;
}

/* ---- the graph picture ------------------------------------------------------------ */

typedef struct note_ctx {
  const quill_quant_report *r;
  quill_strbuf sb;
} note_ctx;

static const char *graph_note(void *ud, const quill_op *op) {
  note_ctx *n = ud;
  const quill_quant_report *r = n->r;
  size_t id = quill_op_id(op);
  if (id >= r->qmap_n || r->qrow[id] < 0)
    return NULL;
  const quill_report_row *row = &r->rows[r->qrow[id]].row;
  if (!row->sqnr.count)
    return NULL;
  quill_strbuf_clear(&n->sb);
  quill_strbuf_puts(&n->sb, "SQNR ");
  quill_report_put_db(&n->sb, &row->sqnr);
  quill_strbuf_puts(&n->sb, " dB");
  return quill_strbuf_str(&n->sb);
}

/* Colours from the rows: a row's Q op is quantized or float as the row
 * says; other ops (casts, constants) as the graph alone says. */
static quill_op_qclass graph_class(void *ud, const quill_op *op) {
  note_ctx *n = ud;
  const quill_quant_report *r = n->r;
  size_t id = quill_op_id(op);
  quill_op_qclass c = quill_op_quant_class(op);
  if (id >= r->qmap_n || r->qrow[id] < 0 ||
      (c != QUILL_OP_QCLASS_FLOAT && c != QUILL_OP_QCLASS_QUANTIZED))
    return c;
  return r->rows[r->qrow[id]].row.status == QUILL_REPORT_QUANTIZED
             ? QUILL_OP_QCLASS_QUANTIZED
             : QUILL_OP_QCLASS_FLOAT;
}

quill_status quill_quant_report_write_graph(const quill_quant_report *r,
                                            const char *path,
                                            const char *dot_program) {
  note_ctx n = {.r = r};
  quill_strbuf_init(&n.sb, r->ctx);
  quill_dot_options o = {
      .note = graph_note,
      .note_ud = &n,
      .classify = graph_class,
      .dot_program = dot_program};
  quill_status st = quill_dot_write_file(r->qnt, path, &o);
  quill_strbuf_free(&n.sb);
  return st;
}
