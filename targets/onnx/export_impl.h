/*
 * export_impl.h - private interface of the ONNX target (targets/onnx/).
 *
 * The exporter walks the graph's ops in program order and looks each
 * opcode up in one opcode-indexed table (op_table.c). The driver
 * (export.c) wraps every builder call:
 *
 *   for each op:
 *     quantized operands of an op ONNX runs only in float
 *         -> DequantizeLinear each, hand the builder the float names
 *     `activation` attribute -> builder writes a temporary, Relu/Clip after
 *     entry->build(ex, op)        emits NodeProtos / initializers through
 *                                 the helpers below (proto.c)
 *     quantized results of such an op -> QuantizeLinear after
 *
 * Builders ask for tensor names with ex_in()/ex_out() (which see those
 * substitutions) and never look at the wrapping. All protobuf-c messages,
 * arrays and strings live in one arena owned by the exporter and freed in
 * one go after packing; dense data of constants is borrowed from the
 * attributes (they live as long as the context).
 *
 * Files: export.c (driver, names, graph inputs/outputs, packing), proto.c
 * (arena, maps, NodeProto/TensorProto helpers), op_table.c (the table),
 * ops_float.c and ops_quant.c (builders).
 */
#ifndef QUILL_TARGETS_ONNX_EXPORT_IMPL_H
#define QUILL_TARGETS_ONNX_EXPORT_IMPL_H

#include "onnx.pb-c.h"

#include "ir/arena.h"
#include "ir/hmap.h"
#include "targets/onnx/onnx_export.h"

/* ---- arena and maps (proto.c) ---------------------------------------------- */

/* A growable array of pointers in the arena. */
typedef struct ex_vec {
  void **items;
  size_t n, cap;
} ex_vec;

/* Maps (ir/hmap.h); keys are strings (ex_smap_*) or pointers (ex_pmap_*),
 * borrowed. */
typedef quill_hmap ex_map;

/* ---- exporter state ---------------------------------------------------------- */

typedef struct onnx_exporter {
  quill_context *ctx;
  const quill_graph *graph;
  int64_t opset;
  bool opts_omit_value_info; /* quill_onnx_export_options.omit_value_info */
  bool nomem;          /* an allocation failed: the export fails */
  quill_arena arena;   /* every message, array and string */
  /* what becomes the GraphProto */
  ex_vec nodes, inits, inputs, outputs, value_info;
  ex_vec domains;      /* custom op domains to import (char *, version 1) */
  /* names */
  ex_map taken;        /* every tensor name in use (string set) */
  ex_map node_names;   /* every node name in use (string set) */
  ex_map value_names;  /* quill_value * -> tensor name */
  ex_map qparams;      /* quant element type -> ex_qparams * */
  ex_map returned;     /* quill_value * -> non-NULL if a graph output */
  /* the op being exported (set by the driver around each builder) */
  const quill_op *op;
  const char *node_base; /* the op's main node name */
  bool main_named;       /* the main node name has been used */
  bool aux_mode;         /* nodes made now are auxiliary (never main) */
  const char **in_names;  /* operand name overrides (NULL entries: none) */
  const char **out_names; /* result name overrides */
  bool float_wrapped;     /* quantized operands were dequantized */
} onnx_exporter;

void *ex_alloc(onnx_exporter *ex, size_t size); /* zeroed; NULL + nomem */
char *ex_strdup(onnx_exporter *ex, const char *s);
char *ex_printf(onnx_exporter *ex, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void ex_vec_push(onnx_exporter *ex, ex_vec *v, void *item);

void *ex_smap_get(const ex_map *m, const char *key);
void ex_smap_put(onnx_exporter *ex, ex_map *m, const char *key, void *val);
void *ex_pmap_get(const ex_map *m, const void *key);
void ex_pmap_put(onnx_exporter *ex, ex_map *m, const void *key, void *val);
void ex_map_free(onnx_exporter *ex, ex_map *m);

/* ---- names (export.c) ------------------------------------------------------ */

/* A new tensor name "<base>" or "<base>_<k>" not used yet (reserved). */
const char *ex_fresh(onnx_exporter *ex, const char *base);
/* The tensor name of a value (assigned before any op is exported). */
const char *ex_value_name(onnx_exporter *ex, const quill_value *v);
/* Operand / result i of the current op, with the driver's substitutions. */
const char *ex_in(onnx_exporter *ex, const quill_op *op, unsigned i);
const char *ex_out(onnx_exporter *ex, const quill_op *op, unsigned i);
/* The element type a builder sees for operand i: the expressed float type
 * when the driver dequantized it, else the operand's own element type. */
quill_type *ex_in_elem(onnx_exporter *ex, const quill_op *op, unsigned i);

/* ---- diagnostics ------------------------------------------------------------- */

/* "op 'X' cannot be exported to ONNX: <reason>" at the op's location;
 * returns QUILL_ERR_INVALID. */
quill_status ex_op_error(onnx_exporter *ex, const quill_op *op,
                         const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A warning at the op's location. */
void ex_op_warning(onnx_exporter *ex, const quill_op *op, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- protobuf helpers (proto.c) ------------------------------------------- */

/* ONNX TensorProto.DataType of a Quill element type (the storage type for
 * a quantized one); 0 if ONNX has none (i4, u4). */
int32_t ex_dtype(const quill_type *elem);

/* Append a node of the current op: the first one gets the op's node name,
 * later ones "<name>/<OpType>" (unique). Input names may be "" (absent
 * optional input). Returns NULL (nomem set) on allocation failure. */
Onnx__NodeProto *ex_node(onnx_exporter *ex, const char *op_type, unsigned nin,
                         const char *const *in, unsigned nout,
                         const char *const *out);
void ex_attr_int(onnx_exporter *ex, Onnx__NodeProto *n, const char *name,
                 int64_t v);
void ex_attr_float(onnx_exporter *ex, Onnx__NodeProto *n, const char *name,
                   double v);
void ex_attr_ints(onnx_exporter *ex, Onnx__NodeProto *n, const char *name,
                  size_t count, const int64_t *v);
void ex_attr_floats(onnx_exporter *ex, Onnx__NodeProto *n, const char *name,
                    size_t count, const double *v);
void ex_attr_string(onnx_exporter *ex, Onnx__NodeProto *n, const char *name,
                    const char *s, size_t len);
void ex_attr_tensor(onnx_exporter *ex, Onnx__NodeProto *n, const char *name,
                    Onnx__TensorProto *t);
/* Translate a Quill attribute (int, float, bool, string, list of ints or
 * floats) into ONNX attribute `name`; false if its kind has no ONNX form. */
bool ex_attr_from_quill(onnx_exporter *ex, Onnx__NodeProto *n,
                        const char *name, const quill_attr *a);

/* A TensorProto named `name` (may be NULL) holding `nbytes` little-endian
 * bytes. The data is borrowed when `copy` is false (it must outlive the
 * export: attribute data does), else copied into the arena. */
Onnx__TensorProto *ex_tensor(onnx_exporter *ex, const char *name,
                             int32_t dtype, unsigned rank, const int64_t *dims,
                             const void *data, size_t nbytes, bool copy);
/* Add an initializer under a fresh name derived from `base`; returns the
 * name (NULL on allocation failure). */
const char *ex_init(onnx_exporter *ex, const char *base, int32_t dtype,
                    unsigned rank, const int64_t *dims, const void *data,
                    size_t nbytes, bool copy);
/* 1-D int64 initializer. */
const char *ex_init_i64s(onnx_exporter *ex, const char *base, size_t n,
                         const int64_t *v);
/* f32 initializer: a scalar (rank 0) when `scalar`, else 1-D of n. */
const char *ex_init_f32s(onnx_exporter *ex, const char *base, bool scalar,
                         size_t n, const double *v);
/* A rank-0 initializer of element type `elem` (the storage type of a
 * quantized one): float types store v, integer types (int64_t)v, bool
 * v != 0. */
const char *ex_init_scalar(onnx_exporter *ex, const char *base,
                           const quill_type *elem, double v);
/* A ValueInfoProto for a tensor of type t (quantized: its storage type;
 * dynamic dims have no value). */
Onnx__ValueInfoProto *ex_value_info(onnx_exporter *ex, const char *name,
                                    const quill_type *t);

/* ---- quantization helpers (ops_quant.c) ------------------------------------ */

/* Scale (f32) and zero point (storage type) initializers of a quantized
 * element type, made on first request (named "<base>_scale" and
 * "<base>_zero_point", base being the quantized tensor's name) and shared
 * by every later node using the same type. `axis` is the quantized axis
 * (-1 per tensor). NULL on allocation failure. */
typedef struct ex_qparams {
  const char *scale, *zero_point; /* NULL until requested */
  int32_t axis;
} ex_qparams;
const ex_qparams *ex_quant_params(onnx_exporter *ex, const quill_type *qelem,
                                  const char *base, bool scale, bool zp);
/* DequantizeLinear(in) -> out for a tensor of quantized type qt. */
quill_status ex_emit_dequantize(onnx_exporter *ex, const quill_op *op,
                                const char *in, const char *out,
                                const quill_type *qt);
/* QuantizeLinear(in) -> out (plus a Clip when the type's storage range is
 * narrowed, e.g. i8<-127:127>). */
quill_status ex_emit_quantize(onnx_exporter *ex, const quill_op *op,
                              const char *in, const char *out,
                              const quill_type *qt);

/* Round f32 values to integers half to even and store them as qelem's
 * storage (QuantizeLinear with scale 1 and zero point 0, plus a Clip for a
 * narrowed range): out = clamp(round(in), qmin, qmax). */
quill_status ex_emit_round_to_storage(onnx_exporter *ex, const quill_op *op,
                                      const char *in, const char *out,
                                      const quill_type *qelem);

/* ---- the op table (op_table.c) --------------------------------------------- */

typedef quill_status (*onnx_export_fn)(onnx_exporter *ex, const quill_op *op);

/* One Quill attribute translated 1:1 into an ONNX attribute. A float
 * attribute equal to its ONNX default (`has_default`) is left out: ONNX
 * floats are f32, so writing 0.2 would read back as 0.20000000298. */
typedef struct ex_attr_map {
  const char *quill; /* NULL ends a list */
  const char *onnx;
  bool has_default;
  double default_value;
} ex_attr_map;

enum {
  /* The ONNX op moves stored values, so it runs on quantized storage
   * directly when every quantized operand and result has the same type
   * (otherwise the driver dequantizes and requantizes around it). */
  EXF_STORAGE = 1u << 0,
  /* The builder handles quantized types itself (never wrapped). */
  EXF_QUANT = 1u << 1,
};

typedef struct onnx_export_entry {
  onnx_export_fn build; /* NULL: not exportable */
  const char *op_type;  /* ONNX op type (ex_build_simple uses it) */
  int min_opset;        /* 0: QUILL_ONNX_EXPORT_MIN_OPSET */
  unsigned flags;       /* EXF_* */
  const ex_attr_map *attrs; /* attributes copied by ex_build_simple */
  /* Optional: opset this op instance needs (beyond min_opset). */
  int (*opset_of)(const quill_op *op);
  /* Optional with EXF_STORAGE: whether this instance moves values (e.g.
   * resize only in nearest mode). */
  bool (*storage_ok)(const quill_op *op);
} onnx_export_entry;

extern const onnx_export_entry onnx_export_table[QUILL_OP_COUNT];

/* ---- builders ------------------------------------------------------------------ */

/* ops_float.c */
quill_status ex_build_simple(onnx_exporter *ex, const quill_op *op);
quill_status ex_build_clip(onnx_exporter *ex, const quill_op *op);
quill_status ex_build_cast(onnx_exporter *ex, const quill_op *op);
quill_status ex_build_gelu(onnx_exporter *ex, const quill_op *op);
quill_status ex_build_reduce(onnx_exporter *ex, const quill_op *op);
quill_status ex_build_reshape(onnx_exporter *ex, const quill_op *op);
quill_status ex_build_split(onnx_exporter *ex, const quill_op *op);
quill_status ex_build_slice(onnx_exporter *ex, const quill_op *op);
quill_status ex_build_pad(onnx_exporter *ex, const quill_op *op);
quill_status ex_build_squeeze(onnx_exporter *ex, const quill_op *op);
quill_status ex_build_resize(onnx_exporter *ex, const quill_op *op);
quill_status ex_build_avgpool(onnx_exporter *ex, const quill_op *op);
quill_status ex_build_custom(onnx_exporter *ex, const quill_op *op);
int ex_opset_relu(const quill_op *op);
int ex_opset_arith(const quill_op *op);
int ex_opset_pad(const quill_op *op);
bool ex_storage_resize(const quill_op *op);
bool ex_storage_per_tensor(const quill_op *op);
/* ops_quant.c */
quill_status ex_build_constant(onnx_exporter *ex, const quill_op *op);
quill_status ex_build_return(onnx_exporter *ex, const quill_op *op);
quill_status ex_build_quantize(onnx_exporter *ex, const quill_op *op);
quill_status ex_build_dequantize(onnx_exporter *ex, const quill_op *op);
quill_status ex_build_requantize(onnx_exporter *ex, const quill_op *op);
quill_status ex_build_fake_quant(onnx_exporter *ex, const quill_op *op);
quill_status ex_build_qconv2d(onnx_exporter *ex, const quill_op *op);
quill_status ex_build_qmatmul(onnx_exporter *ex, const quill_op *op);
quill_status ex_build_scast(onnx_exporter *ex, const quill_op *op);
quill_status ex_build_qbinary(onnx_exporter *ex, const quill_op *op);
quill_status ex_build_lut(onnx_exporter *ex, const quill_op *op);
quill_status ex_build_dynamic_quantize(onnx_exporter *ex, const quill_op *op);

#endif /* QUILL_TARGETS_ONNX_EXPORT_IMPL_H */
