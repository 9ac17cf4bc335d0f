/*
 * graph.h - modules, graphs, ops and SSA values with use lists.
 *
 * A module holds named graphs (functions). A graph has typed arguments,
 * result types and one ordered list of ops that ends in a `return`. Every
 * value is defined once (a graph argument or an op result) and knows all of
 * its uses, so replacing a value everywhere is one call.
 *
 *    graph @main(%x, %w) -> (t)
 *      op list:  [constant] <-> [conv2d] <-> [relu] <-> [return]
 *                                 |  ^ operands are uses, linked into
 *                                 v  | the defining value's use list
 *                               value %0 --uses--> (relu, operand 0)
 *
 * Ops, values and uses live in the graph's arena and die with the graph.
 * Builders only build (no folding or other side effects); passes optimise.
 */
#ifndef QUILL_IR_GRAPH_H
#define QUILL_IR_GRAPH_H

#include "attr.h"
#include "ops.h"
#include "type.h"

QUILL_BEGIN_DECLS

/* ---- module ------------------------------------------------------------ */

/* Every call should be paired with quill_module_destroy(), which destroys
 * its graphs. Returns NULL on allocation failure. */
quill_module *quill_module_create(quill_context *ctx);
void quill_module_destroy(quill_module *m);
quill_context *quill_module_context(const quill_module *m);
unsigned quill_module_num_graphs(const quill_module *m);
quill_graph *quill_module_graph(const quill_module *m, unsigned i);
/* Find a graph by name (NULL if absent). */
quill_graph *quill_module_find_graph(const quill_module *m, const char *name);

/* ---- graph ------------------------------------------------------------- */

/* Create an empty graph named `name` (copied) with the given argument and
 * result types and append it to the module, which owns it. Returns NULL on
 * allocation failure. A duplicate name is not checked here (the verifier
 * reports it). */
quill_graph *quill_graph_create(quill_module *m, const char *name,
                                unsigned num_args, quill_type *const *arg_types,
                                unsigned num_results,
                                quill_type *const *result_types);
/* Remove the graph from its module and free it with all its ops. */
void quill_graph_destroy(quill_graph *g);
quill_context *quill_graph_context(const quill_graph *g);
quill_module *quill_graph_module(const quill_graph *g);
const char *quill_graph_name(const quill_graph *g);
quill_loc quill_graph_loc(const quill_graph *g);
void quill_graph_set_loc(quill_graph *g, quill_loc loc);
unsigned quill_graph_num_args(const quill_graph *g);
quill_value *quill_graph_arg(const quill_graph *g, unsigned i);
unsigned quill_graph_num_results(const quill_graph *g);
quill_type *quill_graph_result_type(const quill_graph *g, unsigned i);
/* Change the declared result types (e.g. after a pass retypes outputs). */
quill_status quill_graph_set_result_types(quill_graph *g, unsigned n,
                                          quill_type *const *types);

/* Op list, in program order. */
quill_op *quill_graph_first_op(const quill_graph *g);
quill_op *quill_graph_last_op(const quill_graph *g);
unsigned quill_graph_num_ops(const quill_graph *g);
/* The terminating return op, or NULL if the graph has none yet. */
quill_op *quill_graph_return(const quill_graph *g);

/* Arena allocation tied to the graph's lifetime (NULL on failure). */
void *quill_graph_alloc(quill_graph *g, size_t size);

/* Iterate: for (quill_op *op = quill_graph_first_op(g); op;
 *               op = quill_op_next(op)) ...
 * Erasing the current op while iterating is allowed if the next pointer was
 * taken first (see QUILL_GRAPH_FOREACH_SAFE). */
#define QUILL_GRAPH_FOREACH(g, op)                                            \
  for (quill_op *op = quill_graph_first_op(g); op; op = quill_op_next(op))
#define QUILL_GRAPH_FOREACH_SAFE(g, op, nx)                                   \
  for (quill_op *op = quill_graph_first_op(g), *nx = op ? quill_op_next(op)  \
                                                       : NULL;               \
       op; op = nx, nx = op ? quill_op_next(op) : NULL)

/* ---- ops --------------------------------------------------------------- */

/* Create a detached op (not yet in the op list; insert it with one of the
 * quill_op_insert_* calls). `operands` must be values of graph g; results
 * get the given types. Attributes are copied (names are interned). Returns
 * NULL on allocation failure. The op's arity is NOT checked here: the
 * verifier does it, so that a parser can build and then report. */
quill_op *quill_op_create(quill_graph *g, quill_opcode opc,
                          unsigned num_operands, quill_value *const *operands,
                          unsigned num_results,
                          quill_type *const *result_types, unsigned num_attrs,
                          const quill_named_attr *attrs, quill_loc loc);
/* Insert a detached op. */
void quill_op_insert_at_end(quill_graph *g, quill_op *op);
void quill_op_insert_before(quill_op *pos, quill_op *op);
void quill_op_insert_after(quill_op *pos, quill_op *op);
/* Unlink an op from the list without destroying it (its operands stay). */
void quill_op_remove(quill_op *op);
/* Move an op before `pos`. */
void quill_op_move_before(quill_op *op, quill_op *pos);
/* Erase an op: drop its operand uses and unlink it. Its results must have
 * no uses left (asserted: an internal invariant). */
void quill_op_erase(quill_op *op);
bool quill_op_is_attached(const quill_op *op);

quill_opcode quill_op_opcode(const quill_op *op);
const char *quill_op_name(const quill_op *op); /* the mnemonic */
quill_graph *quill_op_graph(const quill_op *op);
quill_context *quill_op_context(const quill_op *op);
quill_loc quill_op_loc(const quill_op *op);
void quill_op_set_loc(quill_op *op, quill_loc loc);
quill_op *quill_op_next(const quill_op *op);
quill_op *quill_op_prev(const quill_op *op);
/* A per-graph unique, stable number assigned at creation (for hashing and
 * deterministic ordering, never printed). */
uint32_t quill_op_id(const quill_op *op);
bool quill_op_has_flag(const quill_op *op, unsigned flag);

unsigned quill_op_num_operands(const quill_op *op);
quill_value *quill_op_operand(const quill_op *op, unsigned i);
/* Replace operand i (updates use lists). */
void quill_op_set_operand(quill_op *op, unsigned i, quill_value *v);
/* Replace the whole operand list (NOMEM on allocation failure). */
quill_status quill_op_set_operands(quill_op *op, unsigned n,
                                   quill_value *const *vals);

unsigned quill_op_num_results(const quill_op *op);
quill_value *quill_op_result(const quill_op *op, unsigned i);

/* Attributes, in insertion order. Lookups intern the name. */
unsigned quill_op_num_attrs(const quill_op *op);
quill_named_attr quill_op_attr_at(const quill_op *op, unsigned i);
const quill_attr *quill_op_attr(const quill_op *op, const char *name);
const quill_attr *quill_op_attr_ident(const quill_op *op, quill_ident name);
/* Set (replace or append) or remove (attr == NULL) an attribute. */
quill_status quill_op_set_attr(quill_op *op, const char *name,
                               const quill_attr *attr);
/* Typed getters with defaults: return `dflt` if absent or of another kind. */
int64_t quill_op_attr_int(const quill_op *op, const char *name, int64_t dflt);
double quill_op_attr_float(const quill_op *op, const char *name, double dflt);
/* A numeric attribute given as a float or an int (epsilon = 1 or 1.0). */
double quill_op_attr_number(const quill_op *op, const char *name,
                            double dflt);
/* Copy an int-list attribute into out (up to max); return its length, or -1
 * if absent or not an int list. */
int64_t quill_op_attr_ints(const quill_op *op, const char *name, int64_t *out,
                           size_t max);

/* ---- values ------------------------------------------------------------ */

quill_type *quill_value_type(const quill_value *v);
void quill_value_set_type(quill_value *v, quill_type *t);
/* The defining op, or NULL for a graph argument. */
quill_op *quill_value_def(const quill_value *v);
/* Result index in the defining op, or argument index. */
unsigned quill_value_index(const quill_value *v);
quill_graph *quill_value_graph(const quill_value *v);
bool quill_value_is_arg(const quill_value *v);
/* Optional name (from the text or an ONNX tensor name); NULL if none. */
const char *quill_value_name(const quill_value *v);
quill_status quill_value_set_name(quill_value *v, const char *name);

/* Uses. */
typedef struct quill_use quill_use;
quill_use *quill_value_first_use(const quill_value *v);
quill_use *quill_use_next(const quill_use *u);
quill_op *quill_use_user(const quill_use *u);
unsigned quill_use_operand_index(const quill_use *u);
bool quill_value_has_uses(const quill_value *v);
bool quill_value_has_one_use(const quill_value *v);
unsigned quill_value_num_uses(const quill_value *v);
/* Make every use of `from` a use of `to`. */
void quill_value_replace_all_uses(quill_value *from, quill_value *to);

/* If v is defined by a constant op, return its dense `value` attr. */
const quill_attr *quill_value_constant(const quill_value *v);

QUILL_END_DECLS

#endif /* QUILL_IR_GRAPH_H */
