/*
 * graph.c - modules, graphs, ops, values and use lists.
 *
 * Memory. A module is a growable array of graph pointers. A graph struct is
 * one funnel allocation; everything under it (name, argument values, ops,
 * their operand/result/attribute arrays, value names) comes from the graph's
 * arena (ir/arena.h), so quill_graph_destroy is "free every chunk". Erased
 * ops and replaced arrays are simply abandoned in the arena until then.
 *
 * Use lists. Each operand is a quill_use embedded in its op's operand array
 * and linked at the tail of the used value's doubly linked list, so a value
 * lists its uses in the order they were created:
 *
 *   %v.first_use -> (op A, #0) <-> (op B, #1) <-> (op C, #0) <- %v.last_use
 *
 * set_operand unlinks from the old value and links into the new one;
 * replace_all_uses retargets every record and splices the whole list onto
 * the new value in O(uses).
 *
 * Output names. A graph's outputs are named by the values the return op
 * uses, so when a return operand changes (set_operand, set_operands,
 * replace_all_uses) the old value's name moves to the new one
 * (carry_result_name): `return %logits` stays `return %logits` after a
 * pass puts a dequantize (or anything else) in front of it.
 *
 * Op list. A doubly linked list with first/last pointers in the graph; ops
 * are created detached and inserted explicitly. Builders only build.
 */
#include <assert.h>
#include <string.h>

#include "ir/attr_impl.h"
#include "ir/context.h"
#include "ir/graph_impl.h"

/* ---- arena ------------------------------------------------------------- */

void *quill_graph_alloc(quill_graph *g, size_t size) {
  return quill_arena_alloc(&g->arena, size);
}

/* ---- module ------------------------------------------------------------ */

quill_module *quill_module_create(quill_context *ctx) {
  quill_module *m = quill_calloc(ctx, 1, sizeof *m);
  if (m)
    m->ctx = ctx;
  return m;
}

static void graph_free(quill_graph *g) {
  quill_context *ctx = g->ctx;
  quill_arena_free(&g->arena);
  quill_free(ctx, g, sizeof *g);
}

void quill_module_destroy(quill_module *m) {
  if (!m)
    return;
  for (unsigned i = 0; i < m->num_graphs; i++)
    graph_free(m->graphs[i]);
  quill_free(m->ctx, m->graphs, m->cap_graphs * sizeof *m->graphs);
  quill_free(m->ctx, m, sizeof *m);
}

quill_context *quill_module_context(const quill_module *m) { return m->ctx; }
unsigned quill_module_num_graphs(const quill_module *m) {
  return m->num_graphs;
}

quill_graph *quill_module_graph(const quill_module *m, unsigned i) {
  return i < m->num_graphs ? m->graphs[i] : NULL;
}

quill_graph *quill_module_find_graph(const quill_module *m, const char *name) {
  for (unsigned i = 0; i < m->num_graphs; i++)
    if (strcmp(m->graphs[i]->name, name) == 0)
      return m->graphs[i];
  return NULL;
}

/* ---- graph ------------------------------------------------------------- */

quill_graph *quill_graph_create(quill_module *m, const char *name,
                                unsigned num_args, quill_type *const *arg_types,
                                unsigned num_results,
                                quill_type *const *result_types) {
  quill_context *ctx = m->ctx;
  if (m->num_graphs == m->cap_graphs) {
    unsigned ncap = m->cap_graphs ? m->cap_graphs * 2 : 4;
    quill_graph **ng = quill_realloc(ctx, m->graphs, m->cap_graphs * sizeof *ng,
                                     ncap * sizeof *ng);
    if (!ng)
      return NULL;
    m->graphs = ng;
    m->cap_graphs = ncap;
  }
  quill_graph *g = quill_calloc(ctx, 1, sizeof *g);
  if (!g)
    return NULL;
  g->module = m;
  g->ctx = ctx;
  quill_arena_init(&g->arena, ctx);
  g->name = quill_arena_strdup(&g->arena, name ? name : "");
  g->args = quill_graph_alloc(g, (size_t)num_args * sizeof *g->args);
  if (!g->name || !g->args ||
      quill_graph_set_result_types(g, num_results, result_types) != QUILL_OK) {
    graph_free(g);
    return NULL;
  }
  g->num_args = num_args;
  for (unsigned i = 0; i < num_args; i++) {
    quill_value *v = &g->args[i];
    memset(v, 0, sizeof *v);
    v->type = arg_types ? arg_types[i] : NULL;
    v->graph = g;
    v->index = i;
  }
  m->graphs[m->num_graphs++] = g;
  return g;
}

void quill_graph_destroy(quill_graph *g) {
  if (!g)
    return;
  quill_module *m = g->module;
  for (unsigned i = 0; i < m->num_graphs; i++) {
    if (m->graphs[i] == g) {
      memmove(&m->graphs[i], &m->graphs[i + 1],
              (m->num_graphs - i - 1) * sizeof *m->graphs);
      m->num_graphs--;
      break;
    }
  }
  graph_free(g);
}

quill_context *quill_graph_context(const quill_graph *g) { return g->ctx; }
quill_module *quill_graph_module(const quill_graph *g) { return g->module; }
const char *quill_graph_name(const quill_graph *g) { return g->name; }
quill_loc quill_graph_loc(const quill_graph *g) { return g->loc; }
void quill_graph_set_loc(quill_graph *g, quill_loc loc) { g->loc = loc; }
unsigned quill_graph_num_args(const quill_graph *g) { return g->num_args; }

quill_value *quill_graph_arg(const quill_graph *g, unsigned i) {
  assert(i < g->num_args);
  return &g->args[i];
}

unsigned quill_graph_num_results(const quill_graph *g) {
  return g->num_results;
}

quill_type *quill_graph_result_type(const quill_graph *g, unsigned i) {
  assert(i < g->num_results);
  return g->result_types[i];
}

quill_status quill_graph_set_result_types(quill_graph *g, unsigned n,
                                          quill_type *const *types) {
  quill_type **rt = g->result_types;
  if (n > g->num_results || !rt) {
    rt = quill_graph_alloc(g, (size_t)n * sizeof *rt);
    if (!rt)
      return QUILL_ERR_NOMEM;
  }
  for (unsigned i = 0; i < n; i++)
    rt[i] = types ? types[i] : NULL;
  g->result_types = rt;
  g->num_results = n;
  return QUILL_OK;
}

quill_op *quill_graph_first_op(const quill_graph *g) { return g->first; }
quill_op *quill_graph_last_op(const quill_graph *g) { return g->last; }
unsigned quill_graph_num_ops(const quill_graph *g) { return g->num_ops; }

quill_op *quill_graph_return(const quill_graph *g) {
  if (g->last && g->last->opcode == QUILL_OP_RETURN)
    return g->last;
  return NULL;
}

/* ---- use lists --------------------------------------------------------- */

static void use_link(quill_use *u, quill_value *v) {
  u->value = v;
  u->next = NULL;
  u->prev = NULL;
  if (!v)
    return;
  /* Append: keep uses in creation order. Walking to the tail would be
   * O(uses); instead we keep the invariant that first_use->prev is the
   * tail (a circular prev link), as in many intrusive lists. */
  quill_use *head = v->first_use;
  if (!head) {
    v->first_use = u;
    u->prev = u;
    return;
  }
  quill_use *tail = head->prev;
  tail->next = u;
  u->prev = tail;
  head->prev = u;
}

static void use_unlink(quill_use *u) {
  quill_value *v = u->value;
  if (!v)
    return;
  quill_use *head = v->first_use;
  if (u == head) {
    v->first_use = u->next;
    if (u->next)
      u->next->prev = u->prev; /* new head points at the tail */
  } else {
    u->prev->next = u->next;
    if (u->next)
      u->next->prev = u->prev;
    else
      head->prev = u->prev; /* u was the tail */
  }
  u->value = NULL;
  u->next = u->prev = NULL;
}

quill_use *quill_value_first_use(const quill_value *v) { return v->first_use; }
quill_use *quill_use_next(const quill_use *u) { return u->next; }
quill_op *quill_use_user(const quill_use *u) { return u->user; }
unsigned quill_use_operand_index(const quill_use *u) { return u->index; }
bool quill_value_has_uses(const quill_value *v) { return v->first_use; }

bool quill_value_has_one_use(const quill_value *v) {
  return v->first_use && !v->first_use->next;
}

unsigned quill_value_num_uses(const quill_value *v) {
  unsigned n = 0;
  for (quill_use *u = v->first_use; u; u = u->next)
    n++;
  return n;
}

/* True if v is one of its graph's outputs (used by the return op). */
static bool is_result(const quill_value *v) {
  for (const quill_use *u = v->first_use; u; u = u->next)
    if (u->user->opcode == QUILL_OP_RETURN)
      return true;
  return false;
}

/* A return operand changes from `from` to `to`: the output keeps its name.
 * The name moves (so the two values do not share it) unless `from` is a
 * graph argument (an input keeps its name) or `to` is an argument or
 * already another output with a name of its own. Call before `to` gains
 * the return use. */
static void carry_result_name(quill_value *from, quill_value *to) {
  if (!from || !to || from == to || !from->name || !from->def || !to->def)
    return;
  if (to->name && is_result(to))
    return;
  to->name = from->name; /* both in the same graph's arena */
  from->name = NULL;
}

void quill_value_replace_all_uses(quill_value *from, quill_value *to) {
  if (from == to || !from->first_use)
    return;
  if (to && is_result(from))
    carry_result_name(from, to);
  quill_use *head = from->first_use;
  quill_use *tail = head->prev;
  from->first_use = NULL;
  if (!to) {
    for (quill_use *u = head, *n; u; u = n) {
      n = u->next;
      u->value = NULL;
      u->next = u->prev = NULL;
    }
    return;
  }
  for (quill_use *u = head; u; u = u->next)
    u->value = to;
  quill_use *thead = to->first_use;
  if (!thead) {
    to->first_use = head; /* head->prev already is the tail */
    return;
  }
  quill_use *ttail = thead->prev;
  ttail->next = head;
  head->prev = ttail;
  thead->prev = tail;
}

/* ---- ops --------------------------------------------------------------- */

static quill_named_attr *find_attr(const quill_op *op, quill_ident name) {
  for (unsigned i = 0; i < op->num_attrs; i++)
    if (op->attrs[i].name == name)
      return &op->attrs[i];
  return NULL;
}

/* Set or replace an attr whose name is already interned. */
static quill_status set_attr_ident(quill_op *op, quill_ident name,
                                   const quill_attr *attr) {
  quill_named_attr *na = find_attr(op, name);
  if (!attr) {
    if (na) {
      unsigned i = (unsigned)(na - op->attrs);
      memmove(na, na + 1, (op->num_attrs - i - 1) * sizeof *na);
      op->num_attrs--;
    }
    return QUILL_OK;
  }
  if (na) {
    na->attr = attr;
    return QUILL_OK;
  }
  if (op->num_attrs == op->cap_attrs) {
    unsigned ncap = op->cap_attrs ? op->cap_attrs * 2 : 4;
    quill_named_attr *n =
        quill_graph_alloc(op->graph, (size_t)ncap * sizeof *n);
    if (!n)
      return QUILL_ERR_NOMEM;
    if (op->num_attrs)
      memcpy(n, op->attrs, op->num_attrs * sizeof *n);
    op->attrs = n;
    op->cap_attrs = ncap;
  }
  op->attrs[op->num_attrs].name = name;
  op->attrs[op->num_attrs].attr = attr;
  op->num_attrs++;
  return QUILL_OK;
}

quill_op *quill_op_create(quill_graph *g, quill_opcode opc,
                          unsigned num_operands, quill_value *const *operands,
                          unsigned num_results, quill_type *const *result_types,
                          unsigned num_attrs, const quill_named_attr *attrs,
                          quill_loc loc) {
  if ((unsigned)opc >= QUILL_OP_COUNT)
    return NULL;
  quill_op *op = quill_graph_alloc(g, sizeof *op);
  if (!op)
    return NULL;
  memset(op, 0, sizeof *op);
  op->opcode = opc;
  op->graph = g;
  op->loc = loc;
  op->operands = quill_graph_alloc(g, (size_t)num_operands * sizeof(quill_use));
  op->results = quill_graph_alloc(g, (size_t)num_results * sizeof(quill_value));
  op->cap_attrs = num_attrs;
  op->attrs =
      quill_graph_alloc(g, (size_t)num_attrs * sizeof(quill_named_attr));
  if (!op->operands || !op->results || !op->attrs)
    return NULL;
  /* Attributes first: interning can fail, and nothing is linked yet. */
  for (unsigned i = 0; attrs && i < num_attrs; i++) {
    if (!attrs[i].name || !attrs[i].attr)
      continue;
    quill_ident name = quill_ident_get(g->ctx, attrs[i].name);
    if (!name || set_attr_ident(op, name, attrs[i].attr) != QUILL_OK)
      return NULL;
  }
  op->num_results = num_results;
  for (unsigned i = 0; i < num_results; i++) {
    quill_value *v = &op->results[i];
    memset(v, 0, sizeof *v);
    v->type = result_types ? result_types[i] : NULL;
    v->def = op;
    v->graph = g;
    v->index = i;
  }
  op->num_operands = num_operands;
  for (unsigned i = 0; i < num_operands; i++) {
    quill_use *u = &op->operands[i];
    u->user = op;
    u->index = i;
    use_link(u, operands ? operands[i] : NULL);
  }
  op->id = g->next_op_id++;
  return op;
}

static void link_between(quill_op *op, quill_op *prev, quill_op *next) {
  quill_graph *g = op->graph;
  assert(!op->attached);
  op->prev = prev;
  op->next = next;
  if (prev)
    prev->next = op;
  else
    g->first = op;
  if (next)
    next->prev = op;
  else
    g->last = op;
  op->attached = true;
  g->num_ops++;
}

void quill_op_insert_at_end(quill_graph *g, quill_op *op) {
  assert(op->graph == g);
  link_between(op, g->last, NULL);
}

void quill_op_insert_before(quill_op *pos, quill_op *op) {
  assert(pos->attached && pos->graph == op->graph);
  link_between(op, pos->prev, pos);
}

void quill_op_insert_after(quill_op *pos, quill_op *op) {
  assert(pos->attached && pos->graph == op->graph);
  link_between(op, pos, pos->next);
}

void quill_op_remove(quill_op *op) {
  if (!op->attached)
    return;
  quill_graph *g = op->graph;
  if (op->prev)
    op->prev->next = op->next;
  else
    g->first = op->next;
  if (op->next)
    op->next->prev = op->prev;
  else
    g->last = op->prev;
  op->next = op->prev = NULL;
  op->attached = false;
  g->num_ops--;
}

void quill_op_move_before(quill_op *op, quill_op *pos) {
  if (op == pos)
    return;
  quill_op_remove(op);
  quill_op_insert_before(pos, op);
}

void quill_op_erase(quill_op *op) {
  for (unsigned i = 0; i < op->num_results; i++)
    assert(!op->results[i].first_use && "erasing an op whose result is used");
  for (unsigned i = 0; i < op->num_operands; i++)
    use_unlink(&op->operands[i]);
  quill_op_remove(op);
}

bool quill_op_is_attached(const quill_op *op) { return op->attached; }
quill_opcode quill_op_opcode(const quill_op *op) { return op->opcode; }
const char *quill_op_name(const quill_op *op) {
  return quill_opcode_name(op->opcode);
}
quill_graph *quill_op_graph(const quill_op *op) { return op->graph; }
quill_context *quill_op_context(const quill_op *op) { return op->graph->ctx; }
quill_loc quill_op_loc(const quill_op *op) { return op->loc; }
void quill_op_set_loc(quill_op *op, quill_loc loc) { op->loc = loc; }
quill_op *quill_op_next(const quill_op *op) { return op->next; }
quill_op *quill_op_prev(const quill_op *op) { return op->prev; }
uint32_t quill_op_id(const quill_op *op) { return op->id; }

bool quill_op_has_flag(const quill_op *op, unsigned flag) {
  return (quill_op_infos[op->opcode].flags & flag) != 0;
}

unsigned quill_op_num_operands(const quill_op *op) { return op->num_operands; }

quill_value *quill_op_operand(const quill_op *op, unsigned i) {
  assert(i < op->num_operands);
  return op->operands[i].value;
}

void quill_op_set_operand(quill_op *op, unsigned i, quill_value *v) {
  assert(i < op->num_operands);
  quill_use *u = &op->operands[i];
  if (u->value == v)
    return;
  if (op->opcode == QUILL_OP_RETURN)
    carry_result_name(u->value, v);
  use_unlink(u);
  use_link(u, v);
}

quill_status quill_op_set_operands(quill_op *op, unsigned n,
                                   quill_value *const *vals) {
  quill_use *uses = op->operands;
  if (n > op->num_operands) {
    uses = quill_graph_alloc(op->graph, (size_t)n * sizeof *uses);
    if (!uses)
      return QUILL_ERR_NOMEM;
  }
  if (op->opcode == QUILL_OP_RETURN)
    for (unsigned i = 0; i < op->num_operands && i < n && vals; i++)
      carry_result_name(op->operands[i].value, vals[i]);
  for (unsigned i = 0; i < op->num_operands; i++)
    use_unlink(&op->operands[i]);
  op->operands = uses;
  op->num_operands = n;
  for (unsigned i = 0; i < n; i++) {
    uses[i].user = op;
    uses[i].index = i;
    use_link(&uses[i], vals ? vals[i] : NULL);
  }
  return QUILL_OK;
}

unsigned quill_op_num_results(const quill_op *op) { return op->num_results; }

quill_value *quill_op_result(const quill_op *op, unsigned i) {
  assert(i < op->num_results);
  return &op->results[i];
}

/* ---- attributes -------------------------------------------------------- */

unsigned quill_op_num_attrs(const quill_op *op) { return op->num_attrs; }

quill_named_attr quill_op_attr_at(const quill_op *op, unsigned i) {
  assert(i < op->num_attrs);
  return op->attrs[i];
}

const quill_attr *quill_op_attr_ident(const quill_op *op, quill_ident name) {
  quill_named_attr *na = name ? find_attr(op, name) : NULL;
  return na ? na->attr : NULL;
}

const quill_attr *quill_op_attr(const quill_op *op, const char *name) {
  /* A name that was never interned cannot be on any op. */
  return quill_op_attr_ident(op, quill_ident_lookup(op->graph->ctx, name));
}

quill_status quill_op_set_attr(quill_op *op, const char *name,
                               const quill_attr *attr) {
  quill_ident id;
  if (!attr) {
    id = quill_ident_lookup(op->graph->ctx, name);
    return id ? set_attr_ident(op, id, NULL) : QUILL_OK;
  }
  id = quill_ident_get(op->graph->ctx, name);
  if (!id)
    return QUILL_ERR_NOMEM;
  return set_attr_ident(op, id, attr);
}

int64_t quill_op_attr_int(const quill_op *op, const char *name, int64_t dflt) {
  const quill_attr *a = quill_op_attr(op, name);
  return a && a->kind == QUILL_ATTR_INT ? a->u.i : dflt;
}

double quill_op_attr_float(const quill_op *op, const char *name, double dflt) {
  const quill_attr *a = quill_op_attr(op, name);
  return a && a->kind == QUILL_ATTR_FLOAT ? a->u.f : dflt;
}

double quill_op_attr_number(const quill_op *op, const char *name,
                            double dflt) {
  const quill_attr *a = quill_op_attr(op, name);
  if (a && a->kind == QUILL_ATTR_FLOAT)
    return a->u.f;
  if (a && a->kind == QUILL_ATTR_INT)
    return (double)a->u.i;
  return dflt;
}

int64_t quill_op_attr_ints(const quill_op *op, const char *name, int64_t *out,
                           size_t max) {
  const quill_attr *a = quill_op_attr(op, name);
  return a ? quill_attr_get_ints(a, out, max) : -1;
}

/* ---- values ------------------------------------------------------------ */

quill_type *quill_value_type(const quill_value *v) { return v->type; }
void quill_value_set_type(quill_value *v, quill_type *t) { v->type = t; }
quill_op *quill_value_def(const quill_value *v) { return v->def; }
unsigned quill_value_index(const quill_value *v) { return v->index; }
quill_graph *quill_value_graph(const quill_value *v) { return v->graph; }
bool quill_value_is_arg(const quill_value *v) { return v->def == NULL; }
const char *quill_value_name(const quill_value *v) { return v->name; }

quill_status quill_value_set_name(quill_value *v, const char *name) {
  if (!name) {
    v->name = NULL;
    return QUILL_OK;
  }
  char *copy = quill_arena_strdup(&v->graph->arena, name);
  if (!copy)
    return QUILL_ERR_NOMEM;
  v->name = copy;
  return QUILL_OK;
}

const quill_attr *quill_value_constant(const quill_value *v) {
  if (!v || !v->def || v->def->opcode != QUILL_OP_CONSTANT)
    return NULL;
  const quill_attr *a = quill_op_attr(v->def, "value");
  return a && a->kind == QUILL_ATTR_DENSE ? a : NULL;
}
