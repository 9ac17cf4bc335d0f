/*
 * graph_impl.h - private bodies of modules, graphs, ops, values and uses
 * (ir/ *.c only).
 *
 * Everything below a graph lives in the graph's arena (ir/arena.h), a list
 * of chunks that only grows and is freed in one go by quill_graph_destroy:
 *
 *   arena.head -> [chunk | op | values | uses | ...] -> [older chunk] -> ..
 *
 * An operand is a quill_use record embedded in the op's operand array and
 * linked into the used value's doubly linked use list:
 *
 *   value.first_use -> use(op A, #0) <-> use(op B, #1) <-> ...
 *
 * (the head's prev points at the tail so appending is O(1)).
 */
#ifndef QUILL_IR_GRAPH_IMPL_H
#define QUILL_IR_GRAPH_IMPL_H

#include "ir/arena.h"
#include "ir/graph.h"

struct quill_use {
  quill_op *user;
  unsigned index;     /* operand index in user */
  quill_value *value; /* the used value, or NULL */
  quill_use *next;    /* next use of the same value, NULL at the tail */
  quill_use *prev;    /* previous use; the head's prev is the tail */
};

struct quill_value {
  quill_type *type;
  quill_op *def; /* NULL for a graph argument */
  quill_graph *graph;
  unsigned index;   /* result index or argument index */
  const char *name; /* arena copy, or NULL */
  quill_use *first_use;
};

struct quill_op {
  quill_opcode opcode;
  quill_graph *graph;
  quill_op *next, *prev;
  bool attached;
  uint32_t id;
  quill_loc loc;
  unsigned num_operands;
  quill_use *operands;
  unsigned num_results;
  quill_value *results;
  unsigned num_attrs, cap_attrs;
  quill_named_attr *attrs;
};

struct quill_graph {
  quill_module *module;
  quill_context *ctx;
  const char *name; /* arena copy */
  quill_loc loc;
  unsigned num_args;
  quill_value *args;
  unsigned num_results;
  quill_type **result_types;
  quill_op *first, *last;
  unsigned num_ops;
  uint32_t next_op_id;
  quill_arena arena;
};

struct quill_module {
  quill_context *ctx;
  quill_graph **graphs;
  unsigned num_graphs, cap_graphs;
};

#endif /* QUILL_IR_GRAPH_IMPL_H */
