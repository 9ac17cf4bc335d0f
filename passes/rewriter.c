/*
 * rewriter.c - pattern sets, the rewriter and the greedy pattern driver.
 *
 * The driver works per graph, MLIR-style:
 *
 *   iteration:  worklist <- every op (popped in program order)
 *     pop op ──> dead pure op?  ──yes──> erase (enqueue operand defs)
 *          │
 *          └──> patterns[opcode] (benefit desc, then name) ──> first that
 *               succeeds wins; its rewriter calls enqueue what they touch:
 *                 created op ........... the new op
 *                 replaced value ....... every user of it
 *                 erased op ............ the defining ops of its operands
 *                 updated op ........... the op (and users of a retyped result)
 *   repeat while an iteration changed something, at most max_iterations;
 *   still changing then -> warning "... did not converge ...".
 *
 * The worklist is a stack (pushes go to the back and are processed next)
 * with a pointer->slot hash so an op is queued at most once and an erased
 * op's slot is cleared. Every pattern goes through quill_rewriter_* so the
 * driver sees all changes; failures log their reason on the debug channel.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "passes/rewriter.h"

/* ---- pattern sets ---------------------------------------------------------- */

struct quill_pattern_set {
  quill_context *ctx;
  const quill_pattern **pats;
  unsigned n, cap;
};

quill_pattern_set *quill_pattern_set_create(quill_context *ctx) {
  quill_pattern_set *s = quill_calloc(ctx, 1, sizeof *s);
  if (s)
    s->ctx = ctx;
  return s;
}

void quill_pattern_set_destroy(quill_pattern_set *s) {
  if (!s)
    return;
  quill_free(s->ctx, s->pats, s->cap * sizeof *s->pats);
  quill_free(s->ctx, s, sizeof *s);
}

quill_status quill_pattern_set_add(quill_pattern_set *s,
                                   const quill_pattern *p) {
  if (!p || !p->match_and_rewrite || p->root >= (int)QUILL_OP_COUNT)
    return quill_error(s->ctx, quill_loc_unknown(),
                       "invalid rewrite pattern '%s'",
                       p && p->name ? p->name : "?");
  if (s->n == s->cap) {
    unsigned ncap = s->cap ? s->cap * 2 : 16;
    const quill_pattern **np = quill_realloc(
        s->ctx, s->pats, s->cap * sizeof *np, ncap * sizeof *np);
    if (!np)
      return QUILL_ERR_NOMEM;
    s->pats = np;
    s->cap = ncap;
  }
  s->pats[s->n++] = p;
  return QUILL_OK;
}

unsigned quill_pattern_set_size(const quill_pattern_set *s) { return s->n; }

/* ---- the worklist ------------------------------------------------------------ */

typedef struct worklist {
  quill_context *ctx;
  quill_op **stack; /* NULL slots are removed ops */
  size_t len, cap;
  /* open addressing: key op pointer, value slot index; tombstone = 1 */
  quill_op **keys;
  size_t *slots;
  size_t hcap, hused; /* hused counts live keys and tombstones */
  size_t live;
  bool oom;
} worklist;

#define TOMB ((quill_op *)(uintptr_t)1)

static size_t hash_ptr(const void *p) {
  uintptr_t x = (uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (size_t)x;
}

static void wl_free(worklist *w) {
  quill_free(w->ctx, w->stack, w->cap * sizeof *w->stack);
  quill_free(w->ctx, w->keys, w->hcap * sizeof *w->keys);
  quill_free(w->ctx, w->slots, w->hcap * sizeof *w->slots);
  memset(w, 0, sizeof *w);
}

static size_t *wl_find(worklist *w, const quill_op *op) {
  if (!w->hcap)
    return NULL;
  size_t mask = w->hcap - 1;
  for (size_t i = hash_ptr(op) & mask;; i = (i + 1) & mask) {
    if (w->keys[i] == op)
      return &w->slots[i];
    if (!w->keys[i])
      return NULL;
  }
}

static bool wl_rehash(worklist *w, size_t ncap) {
  quill_op **keys = quill_calloc(w->ctx, ncap, sizeof *keys);
  size_t *slots = quill_calloc(w->ctx, ncap, sizeof *slots);
  if (!keys || !slots) {
    quill_free(w->ctx, keys, keys ? ncap * sizeof *keys : 0);
    quill_free(w->ctx, slots, slots ? ncap * sizeof *slots : 0);
    return false;
  }
  for (size_t i = 0; i < w->hcap; ++i) {
    quill_op *k = w->keys[i];
    if (!k || k == TOMB)
      continue;
    size_t j = hash_ptr(k) & (ncap - 1);
    while (keys[j])
      j = (j + 1) & (ncap - 1);
    keys[j] = k;
    slots[j] = w->slots[i];
  }
  quill_free(w->ctx, w->keys, w->hcap * sizeof *w->keys);
  quill_free(w->ctx, w->slots, w->hcap * sizeof *w->slots);
  w->keys = keys;
  w->slots = slots;
  w->hcap = ncap;
  size_t live = 0;
  for (size_t i = 0; i < ncap; ++i)
    live += keys[i] != NULL;
  w->hused = live;
  return true;
}

static void wl_push(worklist *w, quill_op *op) {
  if (!op || !quill_op_is_attached(op) || wl_find(w, op))
    return;
  size_t ncap = 64;
  while (ncap < (w->live + 1) * 4)
    ncap *= 2;
  if ((w->hused + 1) * 2 > w->hcap && !wl_rehash(w, ncap)) {
    w->oom = true;
    return;
  }
  if (w->len == w->cap) {
    size_t ncap = w->cap ? w->cap * 2 : 64;
    quill_op **ns = quill_realloc(w->ctx, w->stack, w->cap * sizeof *ns,
                                  ncap * sizeof *ns);
    if (!ns) {
      w->oom = true;
      return;
    }
    w->stack = ns;
    w->cap = ncap;
  }
  size_t mask = w->hcap - 1, i = hash_ptr(op) & mask;
  while (w->keys[i] && w->keys[i] != TOMB)
    i = (i + 1) & mask;
  if (!w->keys[i])
    w->hused++;
  w->keys[i] = op;
  w->live++;
  w->slots[i] = w->len;
  w->stack[w->len++] = op;
}

static void wl_remove(worklist *w, const quill_op *op) {
  size_t *slot = wl_find(w, op);
  if (!slot)
    return;
  w->stack[*slot] = NULL;
  /* slot points into w->slots; the key sits at the same index */
  w->keys[slot - w->slots] = TOMB;
  w->live--;
}

static quill_op *wl_pop(worklist *w) {
  while (w->len) {
    quill_op *op = w->stack[--w->len];
    if (!op)
      continue;
    w->keys[wl_find(w, op) - w->slots] = TOMB;
    w->live--;
    return op;
  }
  return NULL;
}

/* ---- the rewriter ------------------------------------------------------------ */

struct quill_rewriter {
  quill_context *ctx;
  quill_graph *graph;
  worklist wl;
  const char *channel;
  const quill_pattern *pattern; /* the pattern being tried */
  quill_op *insert_before;
  bool changed;
};

quill_context *quill_rewriter_context(quill_rewriter *rw) { return rw->ctx; }

quill_match_result quill_rewriter_fail(quill_rewriter *rw, const quill_op *op,
                                       const char *fmt, ...) {
  if (!quill_debug_enabled(rw->ctx, rw->channel))
    return QUILL_MATCH_FAILURE;
  quill_strbuf sb;
  quill_strbuf_init(&sb, rw->ctx);
  va_list ap;
  va_start(ap, fmt);
  quill_strbuf_vprintf(&sb, fmt, ap);
  va_end(ap);
  quill_debug(rw->ctx, rw->channel, "pattern '%s' failed on '%s': %s",
              rw->pattern ? rw->pattern->name : "?",
              op ? quill_op_name(op) : "?", quill_strbuf_str(&sb));
  quill_strbuf_free(&sb);
  return QUILL_MATCH_FAILURE;
}

void quill_rewriter_set_insertion_point(quill_rewriter *rw, quill_op *before) {
  rw->insert_before = before;
}

static void enqueue_users(quill_rewriter *rw, const quill_value *v) {
  for (quill_use *u = quill_value_first_use(v); u; u = quill_use_next(u))
    wl_push(&rw->wl, quill_use_user(u));
}

quill_op *quill_rewriter_create_op(quill_rewriter *rw, quill_opcode opc,
                                   unsigned num_operands,
                                   quill_value *const *operands,
                                   unsigned num_results,
                                   quill_type *const *result_types,
                                   unsigned num_attrs,
                                   const quill_named_attr *attrs,
                                   quill_loc loc) {
  quill_op *op = quill_op_create(rw->graph, opc, num_operands, operands,
                                 num_results, result_types, num_attrs, attrs,
                                 loc);
  if (!op)
    return NULL;
  if (rw->insert_before)
    quill_op_insert_before(rw->insert_before, op);
  else
    quill_op_insert_at_end(rw->graph, op);
  rw->changed = true;
  wl_push(&rw->wl, op);
  return op;
}

quill_value *quill_rewriter_create_constant(quill_rewriter *rw,
                                            const quill_attr *dense,
                                            quill_loc loc) {
  if (!dense || quill_attr_kind_of(dense) != QUILL_ATTR_DENSE)
    return NULL;
  quill_named_attr a = {quill_ident_get(rw->ctx, "value"), dense};
  if (!a.name)
    return NULL;
  quill_type *t = quill_attr_dense_type(dense);
  quill_op *op =
      quill_rewriter_create_op(rw, QUILL_OP_CONSTANT, 0, NULL, 1, &t, 1, &a,
                               loc);
  return op ? quill_op_result(op, 0) : NULL;
}

void quill_rewriter_replace_all_uses(quill_rewriter *rw, quill_value *from,
                                     quill_value *to) {
  if (from == to || !quill_value_has_uses(from))
    return;
  enqueue_users(rw, from);
  quill_value_replace_all_uses(from, to);
  rw->changed = true;
}

void quill_rewriter_erase_op(quill_rewriter *rw, quill_op *op) {
  for (unsigned i = 0; i < quill_op_num_operands(op); ++i) {
    quill_value *v = quill_op_operand(op, i);
    if (v)
      wl_push(&rw->wl, quill_value_def(v));
  }
  wl_remove(&rw->wl, op);
  if (rw->insert_before == op)
    rw->insert_before = quill_op_next(op);
  quill_op_erase(op);
  rw->changed = true;
}

void quill_rewriter_replace_op(quill_rewriter *rw, quill_op *op,
                               quill_value *const *new_values) {
  for (unsigned i = 0; i < quill_op_num_results(op); ++i)
    quill_rewriter_replace_all_uses(rw, quill_op_result(op, i),
                                    new_values[i]);
  quill_rewriter_erase_op(rw, op);
}

void quill_rewriter_set_operand(quill_rewriter *rw, quill_op *op, unsigned i,
                                quill_value *v) {
  quill_value *old = quill_op_operand(op, i);
  if (old == v)
    return;
  quill_op_set_operand(op, i, v);
  if (old)
    wl_push(&rw->wl, quill_value_def(old));
  wl_push(&rw->wl, op);
  rw->changed = true;
}

quill_status quill_rewriter_set_attr(quill_rewriter *rw, quill_op *op,
                                     const char *name, const quill_attr *a) {
  quill_status st = quill_op_set_attr(op, name, a);
  if (st)
    return st;
  wl_push(&rw->wl, op);
  rw->changed = true;
  return QUILL_OK;
}

void quill_rewriter_set_result_type(quill_rewriter *rw, quill_op *op,
                                    unsigned i, quill_type *t) {
  quill_value *r = quill_op_result(op, i);
  if (quill_value_type(r) == t)
    return;
  quill_value_set_type(r, t);
  wl_push(&rw->wl, op);
  enqueue_users(rw, r);
  rw->changed = true;
}

/* ---- the greedy driver ------------------------------------------------------- */

static int cmp_patterns(const void *a, const void *b) {
  const quill_pattern *x = *(const quill_pattern *const *)a;
  const quill_pattern *y = *(const quill_pattern *const *)b;
  if (x->benefit != y->benefit)
    return x->benefit > y->benefit ? -1 : 1;
  return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

/* Per-opcode candidate lists: patterns rooted at the opcode plus the
 * wildcard ones (root -1), sorted. One flat array, sliced by `start`. */
typedef struct pattern_index {
  const quill_pattern **list;
  unsigned start[QUILL_OP_COUNT + 1];
  size_t size;
} pattern_index;

static quill_status index_build(quill_context *ctx, const quill_pattern_set *s,
                                pattern_index *ix) {
  unsigned wild = 0;
  for (unsigned i = 0; i < s->n; ++i)
    wild += s->pats[i]->root < 0;
  size_t total = 0;
  for (int opc = 0; opc < QUILL_OP_COUNT; ++opc) {
    ix->start[opc] = (unsigned)total;
    for (unsigned i = 0; i < s->n; ++i)
      total += s->pats[i]->root == opc;
    total += wild;
  }
  ix->start[QUILL_OP_COUNT] = (unsigned)total;
  ix->size = total;
  ix->list = total ? quill_alloc(ctx, total * sizeof *ix->list) : NULL;
  if (total && !ix->list)
    return QUILL_ERR_NOMEM;
  for (int opc = 0; opc < QUILL_OP_COUNT; ++opc) {
    size_t k = ix->start[opc];
    for (unsigned i = 0; i < s->n; ++i)
      if (s->pats[i]->root == opc || s->pats[i]->root < 0)
        ix->list[k++] = s->pats[i];
    if (k > ix->start[opc])
      qsort(ix->list + ix->start[opc], k - ix->start[opc], sizeof *ix->list,
            cmp_patterns);
  }
  return QUILL_OK;
}

static bool trivially_dead(const quill_op *op) {
  if (!quill_op_has_flag(op, QUILL_OPF_PURE) ||
      quill_op_has_flag(op, QUILL_OPF_TERMINATOR))
    return false;
  for (unsigned i = 0; i < quill_op_num_results(op); ++i)
    if (quill_value_has_uses(quill_op_result(op, i)))
      return false;
  return true;
}

/* Process one op. Returns QUILL_OK, or an error from a pattern. */
static quill_status process(quill_rewriter *rw, const pattern_index *ix,
                            quill_op *op, bool remove_dead,
                            uint64_t *rewrites) {
  if (remove_dead && trivially_dead(op)) {
    quill_debug(rw->ctx, rw->channel, "erasing dead op '%s'",
                quill_op_name(op));
    quill_rewriter_erase_op(rw, op);
    return QUILL_OK;
  }
  quill_opcode opc = quill_op_opcode(op);
  for (unsigned k = ix->start[opc]; k < ix->start[opc + 1]; ++k) {
    const quill_pattern *p = ix->list[k];
    rw->pattern = p;
    rw->insert_before = op;
    quill_match_result r = p->match_and_rewrite(p, rw, op);
    if (r == QUILL_MATCH_ERROR)
      return QUILL_ERR_INVALID;
    if (r == QUILL_MATCH_SUCCESS) {
      quill_debug(rw->ctx, rw->channel, "pattern '%s' applied", p->name);
      ++*rewrites;
      rw->changed = true;
      return QUILL_OK;
    }
  }
  return QUILL_OK;
}

quill_status quill_apply_patterns_greedily(quill_graph *g,
                                           const quill_pattern_set *patterns,
                                           const quill_greedy_config *cfg,
                                           bool *changed,
                                           uint64_t *num_rewrites) {
  quill_context *ctx = quill_graph_context(g);
  unsigned max_it = cfg && cfg->max_iterations ? cfg->max_iterations : 10;
  bool remove_dead = cfg ? cfg->remove_dead_ops : true;
  quill_rewriter rw;
  memset(&rw, 0, sizeof rw);
  rw.ctx = ctx;
  rw.graph = g;
  rw.wl.ctx = ctx;
  rw.channel = cfg && cfg->debug_channel ? cfg->debug_channel : "rewriter";

  pattern_index ix;
  memset(&ix, 0, sizeof ix);
  quill_status st = index_build(ctx, patterns, &ix);
  uint64_t rewrites = 0;
  bool any_change = false, converged = false;
  unsigned it = 0;
  while (!st && it < max_it) {
    ++it;
    rw.changed = false;
    /* Push in reverse so that popping visits ops in program order. */
    for (quill_op *op = quill_graph_last_op(g); op; op = quill_op_prev(op))
      wl_push(&rw.wl, op);
    /* Bound the work of one iteration so that patterns that undo each
     * other end in the non-convergence warning instead of a hang. */
    uint64_t budget = 1000 + 100 * (uint64_t)quill_graph_num_ops(g);
    uint64_t before = rewrites;
    quill_op *op;
    while (!st && !rw.wl.oom && rewrites - before < budget &&
           (op = wl_pop(&rw.wl)))
      st = process(&rw, &ix, op, remove_dead, &rewrites);
    if (rewrites - before >= budget)
      while (wl_pop(&rw.wl)) /* drop the rest; the next iteration refills */
        ;
    if (!st && rw.wl.oom)
      st = QUILL_ERR_NOMEM;
    any_change |= rw.changed;
    if (!rw.changed) {
      converged = true;
      break;
    }
  }
  if (!st && !converged)
    quill_diag_emit(ctx, quill_graph_loc(g), QUILL_DIAG_WARNING,
                    "pattern rewriting in graph '%s' did not converge after "
                    "%u iterations",
                    quill_graph_name(g), max_it);
  quill_free(ctx, ix.list, ix.size * sizeof *ix.list);
  wl_free(&rw.wl);
  if (changed)
    *changed = any_change;
  if (num_rewrites)
    *num_rewrites = rewrites;
  return st;
}

quill_status quill_apply_patterns_module(quill_module *m,
                                         const quill_pattern_set *patterns,
                                         const quill_greedy_config *cfg,
                                         bool *changed,
                                         uint64_t *num_rewrites) {
  quill_status st = QUILL_OK;
  bool any = false;
  uint64_t total = 0;
  for (unsigned i = 0; !st && i < quill_module_num_graphs(m); i++) {
    bool c = false;
    uint64_t n = 0;
    st = quill_apply_patterns_greedily(quill_module_graph(m, i), patterns, cfg,
                                       &c, &n);
    any |= c;
    total += n;
  }
  if (changed)
    *changed = any;
  if (num_rewrites)
    *num_rewrites = total;
  return st;
}
