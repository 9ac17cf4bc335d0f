/*
 * onnx_impl.h - private interface of the ONNX frontend (frontends/onnx/).
 *
 * The importer walks the (topologically sorted) nodes of the ONNX graph and
 * looks each op type up in one sorted table (op_table.c). Each family of
 * ops has one import function that receives the node with its operand
 * values already resolved and emits Quill ops through the helpers below:
 *
 *   ModelProto --protobuf-c--> nodes --sort--> for each node:
 *       onnx_op_lookup(op_type)->import(im, node)
 *           read attributes     onnx_attr_int/_ints/_float/_string
 *           read const inputs   onnx_const_ints/_floats
 *           infer result types  ir/shape.h
 *           emit ops            onnx_emit (+ folding of constant operands)
 *           publish outputs     onnx_set_output (names, value_info check)
 *
 * Files: import.c (driver, checks, sorting, outputs), inputs.c (graph
 * arguments, bindings, initializers), tensor.c
 * (TensorProto -> dense attrs, external data, types), node.c (attribute and
 * operand helpers, emission, folding), op_table.c (the table), and one
 * ops_*.c per op family.
 */
#ifndef QUILL_FRONTENDS_ONNX_ONNX_IMPL_H
#define QUILL_FRONTENDS_ONNX_ONNX_IMPL_H

#include "onnx.pb-c.h"

#include "frontends/onnx/onnx.h"
#include "ir/hmap.h"
#include "ir/shape.h"

/* Default-domain opsets. ONNX_MIN_OPSET..ONNX_MAX_OPSET are fully
 * supported. Older and newer ones up to ONNX_NEWEST_OPSET are imported op
 * by op: each node's op version in effect (op_table.c) must be one the
 * import function handles, else the node is reported. Past
 * ONNX_NEWEST_OPSET (op histories unknown) the import is best effort, with
 * a warning. */
#define ONNX_MIN_OPSET 7
#define ONNX_MAX_OPSET 17
#define ONNX_NEWEST_OPSET 24

/* The largest tensor (in elements) the importer computes at import time
 * (folding, ConstantOfShape, Range, Expand); bigger ones stay ops or are
 * reported, so that a small corrupt model cannot ask for gigabytes. */
#define ONNX_FOLD_MAX_ELEMENTS (INT64_C(1) << 24)

/* ---- name -> pointer map (keys are borrowed, live as long as the map) - */

typedef struct onnx_map {
  quill_context *ctx;
  quill_hmap h;
} onnx_map;

void onnx_map_init(onnx_map *m, quill_context *ctx);
void onnx_map_free(onnx_map *m);
void *onnx_map_get(const onnx_map *m, const char *key);
/* Insert or replace; QUILL_ERR_NOMEM on allocation failure. */
quill_status onnx_map_put(onnx_map *m, const char *key, void *val);

/* protobuf-c's allocator over the context's funnel (tensor.c). */
ProtobufCAllocator onnx_pb_allocator(quill_context *ctx);

/* ---- importer state ----------------------------------------------------- */

typedef struct onnx_importer {
  quill_context *ctx;
  quill_graph *graph;
  const quill_onnx_options *opts;
  const char *model_name; /* for messages */
  const char *base_dir;   /* external data directory ("." if none) */
  int64_t opset;          /* default-domain opset */
  onnx_map values;        /* ONNX tensor name -> quill_value */
  onnx_map infos;         /* tensor name -> Onnx__ValueInfoProto */
  onnx_map used;          /* names consumed by a node or a graph output */
} onnx_importer;

/* One node being imported. */
typedef struct onnx_node {
  const Onnx__NodeProto *proto;
  const char *op_type;
  const char *name;   /* node name, or "<OpType>_<index>" (interned) */
  quill_loc loc;      /* quill_loc_named(name) */
  int64_t opset;      /* the model's default-domain opset */
  int version;        /* the op's version in effect (its since_version) */
  unsigned num_inputs;
  quill_value **in;   /* num_inputs entries; NULL for absent ("") inputs */
  unsigned num_outputs;
  unsigned flags;     /* ONNX_OPF_* of the table entry */
} onnx_node;

typedef quill_status (*onnx_import_fn)(onnx_importer *im, const onnx_node *n);

enum {
  ONNX_OPF_FOLD = 1u << 0, /* fold to a constant when operands are */
};

typedef struct onnx_op_entry {
  const char *op_type;  /* sorted by strcmp */
  onnx_import_fn import;
  unsigned flags;
  unsigned char since[10]; /* opsets where the op changed, ascending, 0-ended */
  unsigned char oldest;    /* oldest version the import function handles */
} onnx_op_entry;

/* "", "ai.onnx" (or NULL): the default domain. */
bool onnx_is_default_domain(const char *domain);
/* The table entry of an op type in a domain, or NULL if unsupported. */
const onnx_op_entry *onnx_op_lookup(const char *domain, const char *op_type);
/* The op's version in effect at `opset` (the last since_version <= opset),
 * 0 if the op does not exist yet at that opset. */
int onnx_op_version(const onnx_op_entry *e, int64_t opset);

/* ---- types and tensors (tensor.c) ------------------------------------------ */

/* Quill scalar type for an ONNX TensorProto.DataType, NULL if unsupported. */
quill_type *onnx_elem_type(quill_context *ctx, int32_t data_type);
const char *onnx_data_type_name(int32_t data_type);
/* A TensorProto (initializer or Constant value) as a dense attr. `loc`
 * locates errors. */
quill_status onnx_tensor_to_attr(onnx_importer *im, const Onnx__TensorProto *t,
                                 quill_loc loc, const quill_attr **out);
/* Parse "name=1,3,8,8" into name/len and shape; diagnostic on error. */
quill_status onnx_parse_input_shape(quill_context *ctx, const char *spec,
                                    const char **name, size_t *name_len,
                                    quill_shape *shape);

/* ---- model-level helpers (import.c, inputs.c) -------------------------- */

/* An error located at the model (not a node); returns QUILL_ERR_INVALID. */
quill_status onnx_model_error(onnx_importer *im, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Whether type t fits the declared shape of tt: same rank (when tt has a
 * shape) and each dim equal where tt gives a value. A dim without a value,
 * a symbolic one or a negative value (exporters write -1 for "dynamic")
 * accepts any inferred dim. The element type is not compared. */
bool onnx_declared_shape_fits(const Onnx__TypeProto__Tensor *tt,
                              const quill_type *t);
/* Append "FLOAT [2, ?, 4]" for a declared tensor type (dynamic dims "?"). */
void onnx_print_declared(quill_strbuf *sb, const Onnx__TypeProto__Tensor *tt);
/* Every binding names a graph input (once) and fits its declared type. */
quill_status onnx_check_bindings(onnx_importer *im, const Onnx__GraphProto *gp);
/* Create im->graph in m with the graph arguments: the inputs that are not
 * initializers (`inits`: name -> TensorProto) and not bound. */
quill_status onnx_build_args(onnx_importer *im, quill_module *m,
                             const Onnx__GraphProto *gp, onnx_map *inits);
/* Constant ops for the bound inputs, then for the used initializers. */
quill_status onnx_build_bindings(onnx_importer *im);
quill_status onnx_build_initializers(onnx_importer *im,
                                     const Onnx__GraphProto *gp);

/* ---- node helpers (node.c) ---------------------------------------------- */

/* The location of a diagnostic about node `node` of the model: the model
 * file and the node name, printed "m.onnx: /fc/Gemm: error: ...". (Ops
 * keep the node name alone as their location, so .qir text is unchanged.) */
quill_loc onnx_node_loc(onnx_importer *im, const char *node);
/* "<OpType> node '<name>': <message>" at onnx_node_loc. Returns
 * QUILL_ERR_INVALID. */
quill_status onnx_error(onnx_importer *im, const onnx_node *n,
                        const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "...: <what>: <why>" for a failed ir/shape.h helper; frees nothing. */
quill_status onnx_shape_error(onnx_importer *im, const onnx_node *n,
                              const char *what, quill_strbuf *why);

/* Attributes. Absent -> default (QUILL_OK); present with the wrong type ->
 * error naming the attribute, its expected and actual type. */
const Onnx__AttributeProto *onnx_attr(const onnx_node *n, const char *name);
quill_status onnx_attr_int(onnx_importer *im, const onnx_node *n,
                           const char *name, int64_t dflt, int64_t *out);
quill_status onnx_attr_float(onnx_importer *im, const onnx_node *n,
                             const char *name, double dflt, double *out);
quill_status onnx_attr_string(onnx_importer *im, const onnx_node *n,
                              const char *name, const char *dflt,
                              const char **out);
/* Int list: *len = -1 if absent, else its length (at most max). */
quill_status onnx_attr_ints(onnx_importer *im, const onnx_node *n,
                            const char *name, int64_t *out, size_t max,
                            int64_t *len);
quill_status onnx_attr_floats(onnx_importer *im, const onnx_node *n,
                              const char *name, double *out, size_t max,
                              int64_t *len);

/* Operand i, or an error if it is missing. */
quill_status onnx_input(onnx_importer *im, const onnx_node *n, unsigned i,
                        quill_value **out);
/* Operand i if present (NULL otherwise). */
static inline quill_value *onnx_opt_input(const onnx_node *n, unsigned i) {
  return i < n->num_inputs ? n->in[i] : NULL;
}
/* Read operand i, which must be a constant, as ints / floats (*len gets
 * the element count, at most max). */
quill_status onnx_const_ints(onnx_importer *im, const onnx_node *n, unsigned i,
                             int64_t *out, size_t max, int64_t *len);
quill_status onnx_const_floats(onnx_importer *im, const onnx_node *n,
                               unsigned i, double *out, size_t max,
                               int64_t *len);

void onnx_shape(const quill_value *v, quill_shape *s);
quill_type *onnx_elem(const quill_value *v);
/* A tensor type from a shape and element type (NOMEM reported as error). */
quill_type *onnx_type(onnx_importer *im, const quill_shape *s,
                      quill_type *elem);

/* Create op `opc` with the node's location, append it to the graph, verify
 * it, and fold it to constants if every operand is a constant and either
 * the node is marked ONNX_OPF_FOLD or the results are integer/bool (shape
 * arithmetic). results[0..num_results) get the result values. */
typedef struct onnx_emit_args {
  quill_opcode opc;
  unsigned num_operands;
  quill_value *const *operands;
  unsigned num_results;
  quill_type *const *result_types;
  unsigned num_attrs;
  const quill_named_attr *attrs;
} onnx_emit_args;
quill_status onnx_emit(onnx_importer *im, const onnx_node *n,
                       const onnx_emit_args *a, quill_value **results);
/* Shorthand for a one-result op; *out gets the result value. */
quill_status onnx_emit1(onnx_importer *im, const onnx_node *n,
                        quill_opcode opc, unsigned nops,
                        quill_value *const *ops, quill_type *rtype,
                        unsigned nattrs, const quill_named_attr *attrs,
                        quill_value **out);
/* A constant op holding `attr`, located at the node. */
quill_status onnx_emit_constant(onnx_importer *im, const onnx_node *n,
                                const quill_attr *attr, quill_value **out);
/* Publish v as output i of the node: name it, record it, and check it
 * against the model's value_info for that name. */
quill_status onnx_set_output(onnx_importer *im, const onnx_node *n,
                             unsigned i, quill_value *v);
/* Whether output i of the node exists and is consumed (by a node or as a
 * graph output). */
bool onnx_output_used(onnx_importer *im, const onnx_node *n, unsigned i);
/* Error if any output from index `first` on is consumed (the import does
 * not produce it). */
quill_status onnx_check_unused_outputs(onnx_importer *im, const onnx_node *n,
                                       unsigned first);
/* Named-attribute shorthands (NULL attr on allocation failure). */
quill_named_attr onnx_nattr(onnx_importer *im, const char *name,
                            const quill_attr *a);
quill_named_attr onnx_nattr_int(onnx_importer *im, const char *name,
                                int64_t v);
quill_named_attr onnx_nattr_float(onnx_importer *im, const char *name,
                                  double v);
quill_named_attr onnx_nattr_ints(onnx_importer *im, const char *name,
                                 size_t n, const int64_t *v);
quill_named_attr onnx_nattr_str(onnx_importer *im, const char *name,
                                const char *s);
/* True if any attr in the array is NULL (allocation failure). */
bool onnx_nattrs_failed(const quill_named_attr *a, unsigned n);

/* The window of a 1-D or 2-D convolution node (strides, pads with
 * auto_pad resolved, dilations, group, output padding / output_shape) and
 * its result shape, always as a 2-D convolution (1-D: over [N, C, 1, L]);
 * diagnostics name the node. (ops_nn.c) */
quill_status onnx_conv_window(onnx_importer *im, const onnx_node *n,
                              const quill_shape *x, const quill_shape *w,
                              bool transpose, quill_window *win,
                              quill_shape *out);

/* v reshaped to s: a constant is re-emitted with the new type, anything
 * else goes through a reshape op. (ops_nn.c) */
quill_status onnx_reshape_value(onnx_importer *im, const onnx_node *n,
                                quill_value *v, const quill_shape *s,
                                quill_value **out);

/* ---- import functions, one per op family ---------------------------------- */

/* ops_eltwise.c */
quill_status onnx_import_unary(onnx_importer *im, const onnx_node *n);
quill_status onnx_import_binary(onnx_importer *im, const onnx_node *n);
quill_status onnx_import_variadic(onnx_importer *im, const onnx_node *n);
quill_status onnx_import_clip(onnx_importer *im, const onnx_node *n);
quill_status onnx_import_activation(onnx_importer *im, const onnx_node *n);
quill_status onnx_import_where(onnx_importer *im, const onnx_node *n);
quill_status onnx_import_identity(onnx_importer *im, const onnx_node *n);
/* ops_nn.c */
quill_status onnx_import_conv(onnx_importer *im, const onnx_node *n);
quill_status onnx_import_pool(onnx_importer *im, const onnx_node *n);
quill_status onnx_import_global_pool(onnx_importer *im, const onnx_node *n);
quill_status onnx_import_gemm(onnx_importer *im, const onnx_node *n);
quill_status onnx_import_matmul(onnx_importer *im, const onnx_node *n);
quill_status onnx_import_norm(onnx_importer *im, const onnx_node *n);
quill_status onnx_import_softmax(onnx_importer *im, const onnx_node *n);
quill_status onnx_import_reduce(onnx_importer *im, const onnx_node *n);
/* ops_shape.c */
quill_status onnx_import_reshape(onnx_importer *im, const onnx_node *n);
quill_status onnx_import_transpose(onnx_importer *im, const onnx_node *n);
quill_status onnx_import_squeeze(onnx_importer *im, const onnx_node *n);
quill_status onnx_import_concat(onnx_importer *im, const onnx_node *n);
quill_status onnx_import_split(onnx_importer *im, const onnx_node *n);
quill_status onnx_import_slice(onnx_importer *im, const onnx_node *n);
quill_status onnx_import_pad(onnx_importer *im, const onnx_node *n);
quill_status onnx_import_resize(onnx_importer *im, const onnx_node *n);
quill_status onnx_import_gather(onnx_importer *im, const onnx_node *n);
/* ops_rnn.c */
quill_status onnx_import_rnn(onnx_importer *im, const onnx_node *n);
/* ops_fold.c */
quill_status onnx_import_constant(onnx_importer *im, const onnx_node *n);
quill_status onnx_import_shape(onnx_importer *im, const onnx_node *n);
quill_status onnx_import_cast(onnx_importer *im, const onnx_node *n);
quill_status onnx_import_constant_of_shape(onnx_importer *im,
                                           const onnx_node *n);
quill_status onnx_import_range(onnx_importer *im, const onnx_node *n);
quill_status onnx_import_expand(onnx_importer *im, const onnx_node *n);
/* ops_quant.c */
quill_status onnx_import_quant(onnx_importer *im, const onnx_node *n);
quill_status onnx_import_qconv(onnx_importer *im, const onnx_node *n);
quill_status onnx_import_qmatmul(onnx_importer *im, const onnx_node *n);
quill_status onnx_import_dynamic_quant(onnx_importer *im, const onnx_node *n);
/* ops_qat.c: training tools' fake quantizers, and Clip on quantized values */
quill_status onnx_import_qonnx_quant(onnx_importer *im, const onnx_node *n);
quill_status onnx_import_mqbench_fake_quant(onnx_importer *im,
                                            const onnx_node *n);
quill_status onnx_import_quant_clip(onnx_importer *im, const onnx_node *n,
                                    quill_value *x);

#endif /* QUILL_FRONTENDS_ONNX_ONNX_IMPL_H */
