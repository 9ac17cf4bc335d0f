/*
 * export_impl.h - private interface of the TFLite target (targets/tflite/).
 *
 * The exporter lowers the Quill graph into a flat TFLite-shaped model
 * (tensors, ops with options, buffers) held in the exporter, then
 * serializes it with the FlatBuffers builder:
 *
 *   quill_graph
 *     fold.c     analysis: which float ops fold with their dequantize /
 *                quantize neighbours into int8 ops (QDQ folding), aliases
 *     layout.c   NCHW -> NHWC decision per value (union of values joined
 *                by layout-agnostic ops; spatial ops vote NHWC), permuted
 *                constants, TRANSPOSE where a value is needed both ways
 *     op_table.c opcode-indexed writers, in program order:
 *                  [QUILL_OP_CONV2D] = {write_conv, "CONV_2D/...", ...}
 *     ops_conv.c, ops_nn.c, ops_shape.c, ops_misc.c  the writers: emit
 *                tx_ops on tx_tensors
 *     quant.c    quantization parameters, the int8 spec checks, fused
 *                activations
 *     versions.c operator versions and the minimum runtime version
 *     writer.c   buffers, tensors, operator codes, subgraph, signature
 *                def, metadata -> FlatBuffer (flatbuf.c)
 *
 * A writer asks for tensors with tx_in() / tx_out(), which see folding,
 * aliases and layouts, and never builds FlatBuffers itself. Everything
 * lives in the exporter's arena and is freed after writing; dense data of
 * constants is borrowed from attributes (which live as long as the
 * context) unless it had to be transformed.
 */
#ifndef QUILL_TARGETS_TFLITE_EXPORT_IMPL_H
#define QUILL_TARGETS_TFLITE_EXPORT_IMPL_H

#include "ir/arena.h"
#include "ir/hmap.h"
#include "ir/shape.h"
#include "targets/tflite/flatbuf.h"
#include "targets/tflite/schema.h"
#include "targets/tflite/tflite_export.h"

/* ---- the lowered model --------------------------------------------------------- */

typedef struct tx_tensor {
  const char *name;
  int8_t type;         /* TFL_FLOAT32, TFL_INT8, ... */
  unsigned rank;
  int32_t *shape;
  uint32_t buffer;     /* index into buffers; 0 = none */
  unsigned nq;         /* number of scales; 0 = not quantized */
  float *scale;
  int64_t *zero_point;
  int32_t qdim;        /* quantized_dimension */
  bool is_variable;    /* a state the op keeps between invocations */
} tx_tensor;

enum { TXO_BOOL, TXO_I8, TXO_I32, TXO_F32, TXO_VEC_I32 };
typedef struct tx_opt {
  uint16_t id;
  uint8_t kind;
  int64_t i, dflt_i;
  float f, dflt_f;
  const int32_t *vec;
  size_t nvec;
} tx_opt;

typedef struct tx_op {
  int32_t builtin;         /* TFL_OP_*; TFL_OP_CUSTOM with custom_code */
  const char *custom_code;
  int32_t *inputs, *outputs; /* tensor indices; -1 = absent optional */
  unsigned nin, nout;
  uint8_t opt_type;        /* TFL_OPT_* (0: none) */
  tx_opt *opts;
  unsigned nopts, opts_cap;
  const quill_op *src;     /* the Quill op it came from */
  int version;             /* set by versions.c */
  int32_t *intermediates;  /* tensors the kernel reads parameters from */
  unsigned ninter;         /* (the integer LSTM's five); 0: none */
} tx_op;

typedef struct tx_buffer {
  const void *data;
  size_t size;
} tx_buffer;

/* ---- per-value and per-op analysis ------------------------------------------------ */

/* TX_FLAT: a 2-D [N, C*H*W] value holding the flattened NHWC data of an
 * [N, C, H, W] value (element order h, w, c); only fully connected layers
 * (which permute their weights to match) and quantize/dequantize read it. */
enum { TX_NATIVE = 0, TX_NHWC = 1, TX_ANY = 2, TX_FLAT = 3 };

typedef struct tx_vinfo {
  unsigned index;            /* dense index (layout union-find) */
  uint8_t layout;            /* TX_NATIVE, TX_NHWC (4-D), TX_FLAT (2-D) */
  int64_t chw[3];            /* TX_FLAT: the C, H, W it was flattened from */
  int32_t tensor[2];         /* per layout; -1 = not made yet */
  const quill_value *alias;  /* use this value's tensors instead */
  bool warned;               /* a TRANSPOSE warning was given */
} tx_vinfo;

typedef struct tx_opinfo {
  bool folded;                /* float op written as its int8 builtin */
  bool skip;                  /* absorbed by folding: nothing to write */
  const quill_value **ein;    /* effective operands (folded: q inputs) */
  const quill_value *eout;    /* effective result 0 (folded: q result) */
} tx_opinfo;

/* Maps (ir/hmap.h): tx_map_* with pointer keys, tx_smap_* with string
 * keys, both borrowed; freed with the exporter. */
typedef quill_hmap tx_map;

typedef struct tflite_exporter {
  quill_context *ctx;
  const quill_graph *graph;
  quill_tflite_export_options opts;
  bool nomem;
  unsigned errors;
  quill_arena arena; /* the lowered model, its strings and arrays */
  /* the lowered model */
  tx_tensor *tensors;
  size_t ntensors, tensors_cap;
  tx_op *ops;
  size_t nops, ops_cap;
  tx_buffer *buffers;
  size_t nbuffers, buffers_cap;
  size_t data_bytes;          /* sum of buffer sizes */
  int32_t *inputs, *outputs;  /* subgraph inputs / outputs */
  unsigned ninputs, noutputs;
  /* analysis */
  tx_map vinfo;               /* quill_value * -> tx_vinfo * */
  tx_map opinfo;              /* quill_op * -> tx_opinfo * */
  tx_map names;               /* tensor names in use (string set) */
  unsigned nvalues;
  const quill_op *op;         /* the op being written */
} tflite_exporter;

/* ---- arena, arrays, maps (export.c) ------------------------------------------------ */

void *tx_alloc(tflite_exporter *ex, size_t size); /* zeroed; NULL + nomem */
char *tx_strdup(tflite_exporter *ex, const char *s);
char *tx_printf(tflite_exporter *ex, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void *tx_map_get(const tx_map *m, const void *key);
void tx_map_put(tflite_exporter *ex, tx_map *m, const void *key, void *val);
void *tx_smap_get(const tx_map *m, const char *key);
void tx_smap_put(tflite_exporter *ex, tx_map *m, const char *key, void *val);

/* ---- diagnostics (export.c) -------------------------------------------------------- */

/* "op 'X' cannot be exported to TFLite: <reason>" at the op; counts the
 * error and returns QUILL_ERR_INVALID. */
quill_status tx_error(tflite_exporter *ex, const quill_op *op,
                      const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "op 'X' breaks the TFLite int8 spec: <rule>: <details>". */
quill_status tx_spec_error(tflite_exporter *ex, const quill_op *op,
                           const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void tx_warning(tflite_exporter *ex, const quill_op *op, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- tensors and ops (export.c) ----------------------------------------------------- */

/* TFLite TensorType of a Quill element type (the storage type of a
 * quantized one); -1 if TFLite has none. */
int tx_tensor_type(const quill_type *elem);
/* A new tensor named after `base` (made unique); dims in TFLite order.
 * Returns its index (-1 on allocation failure). */
int32_t tx_tensor_new(tflite_exporter *ex, const char *base, int type,
                      unsigned rank, const int64_t *dims);
/* A constant tensor holding `size` bytes (borrowed unless `copy`). */
int32_t tx_const(tflite_exporter *ex, const char *base, int type,
                 unsigned rank, const int64_t *dims, const void *data,
                 size_t size, bool copy);
/* A 1-D int32 constant (rank 0 with scalar = true). */
int32_t tx_const_i32(tflite_exporter *ex, const char *base, size_t n,
                     const int32_t *v);
int32_t tx_const_f32_scalar(tflite_exporter *ex, const char *base, float v);
/* Give tensor t the quantization of a quantized element type; per-axis
 * parameters go to dimension `qdim` (the caller maps Quill's axis). */
void tx_tensor_set_quant(tflite_exporter *ex, int32_t t, const quill_type *q,
                         int32_t qdim);

/* Append an op from the current Quill op. */
tx_op *tx_emit(tflite_exporter *ex, int32_t builtin, unsigned nin,
               const int32_t *ins, unsigned nout, const int32_t *outs);
/* tx_emit of one input and one output with options table `opt` (NULL if
 * either tensor is missing); ops_misc.c. */
tx_op *tx_emit1(tflite_exporter *ex, int32_t builtin, uint8_t opt, int32_t in,
                int32_t out);
/* Tensor `to` takes the quantization of tensor `from`; ops_misc.c. */
void tx_copy_quant(tflite_exporter *ex, int32_t to, int32_t from);
void tx_opt_int(tflite_exporter *ex, tx_op *o, unsigned id, uint8_t kind,
                int64_t v, int64_t dflt);
void tx_opt_f32(tflite_exporter *ex, tx_op *o, unsigned id, float v,
                float dflt);
void tx_opt_vec(tflite_exporter *ex, tx_op *o, unsigned id, size_t n,
                const int32_t *v);

/* ---- values (export.c, layout.c) ------------------------------------------------------- */

tx_vinfo *tx_info(tflite_exporter *ex, const quill_value *v);
tx_opinfo *tx_op_info(tflite_exporter *ex, const quill_op *op);
/* The value whose tensor stands for v (following aliases). */
const quill_value *tx_resolve(tflite_exporter *ex, const quill_value *v);
/* Effective operand i / result i of op (folding substitutes the
 * dequantize inputs and the quantize result). */
const quill_value *tx_ein(tflite_exporter *ex, const quill_op *op,
                          unsigned i);
const quill_value *tx_eout(tflite_exporter *ex, const quill_op *op,
                           unsigned i);
quill_type *tx_in_type(tflite_exporter *ex, const quill_op *op, unsigned i);
quill_type *tx_out_type(tflite_exporter *ex, const quill_op *op, unsigned i);
/* The layout value v has (TX_NATIVE, TX_NHWC or TX_FLAT). */
int tx_layout_of(tflite_exporter *ex, const quill_value *v);
/* Tensor of value v in layout `want` (TX_ANY: its own): constants are
 * made (permuted at compile time), other values get a TRANSPOSE when
 * asked for the layout they do not have. -1 on failure. */
int32_t tx_value(tflite_exporter *ex, const quill_value *v, int want);
/* Effective operand i / result i of the current op as tensors. */
int32_t tx_in(tflite_exporter *ex, const quill_op *op, unsigned i, int want);
int32_t tx_out(tflite_exporter *ex, const quill_op *op, unsigned i);
/* The values of a quantized constant as f32, computed as Quill's
 * interpreter dequantizes (quill_dequantize_value: in f32 for an f32
 * expressed type, which is also what TFLite's DEQUANTIZE computes from the
 * f32 scale). NULL on allocation failure. */
float *tx_dequantized(tflite_exporter *ex, const quill_attr *q);
/* The constant dense attribute behind effective operand i, or NULL (a
 * dequantized constant feeding an op that is not folded: its
 * tx_dequantized values). */
const quill_attr *tx_in_const(tflite_exporter *ex, const quill_op *op,
                              unsigned i);

/* ---- folding (fold.c) ------------------------------------------------------------------ */

/* Register every value, fold QDQ patterns, alias identities. */
void tx_fold_analyze(tflite_exporter *ex);

/* ---- layout (layout.c) --------------------------------------------------------------- */

/* Decide the layout of every value (after folding). */
quill_status tx_layout_run(tflite_exporter *ex);
/* Physical dims of logical dims in a layout (NHWC permutes rank 4). */
void tx_phys_dims(unsigned rank, const int64_t *dims, int layout,
                  int64_t *out);
/* Physical position of logical axis a (normalized, 0 <= a < rank). */
int tx_phys_axis(unsigned rank, int a, int layout);
/* Row-major transpose: out[i...] = in[perm applied], elements of size
 * `esz`. out_dims[i] = dims[perm[i]]. */
void tx_transpose_data(const void *in, const int64_t *dims, unsigned rank,
                       const int *perm, size_t esz, void *out);
/* True if layout `layout` of a tensor with logical dims `dims` stores its
 * elements in logical row-major order (only size-1 dims move). */
bool tx_layout_neutral(unsigned rank, const int64_t *dims, int layout);

/* ---- quantization and the int8 spec (quant.c) ---------------------------------------------- */

/* The "TFLite fused activation" of a float op's `activation` attribute:
 * returns false if it has none that TFLite can fuse (*lo and *hi then hold
 * the clip bounds for a separate op). */
bool tx_float_activation(const quill_op *op, int *act, double *lo,
                         double *hi, bool *present);
/* The fused activation for a quantized result: act_min/act_max (the
 * attributes of integer ops, or computed from a float `activation` of a
 * folded op) must equal one of the ranges TFLite derives from the output
 * parameters (NONE, RELU, RELU6, RELU_N1_TO_1); otherwise an error. */
quill_status tx_quant_activation(tflite_exporter *ex, const quill_op *op,
                                 const quill_type *out_elem, int *act);
/* Spec checks: quantized activation tensors must be int8, or int16 with
 * zero point 0 where the op's row has int16 (TFLite's 16x8 kernels). */
quill_status tx_check_act_i8(tflite_exporter *ex, const quill_op *op,
                             const quill_type *elem, const char *what);
/* Weights (a constant dense attr of a quantized type): int8, zero point 0,
 * values in [-127, 127], per tensor or per axis `channel_axis`. */
quill_status tx_check_weights(tflite_exporter *ex, const quill_op *op,
                              const quill_attr *w, int channel_axis);
/* Bias: int32 (int32 or int64 after 16-bit activations: written as
 * int64), zero point 0, scale s_in * s_w[c] (TFLite's tolerance). */
quill_status tx_check_bias(tflite_exporter *ex, const quill_op *op,
                           const quill_type *bias_elem,
                           const quill_type *in_elem,
                           const quill_type *w_elem, int64_t channels);
/* Equal quantization of an input and the output (TFLite kernels that move
 * values without rescaling). */
quill_status tx_check_same_quant(tflite_exporter *ex, const quill_op *op,
                                 const quill_type *in, const quill_type *out,
                                 const char *builtin);
/* The integer op's requantization (rounding "tflite", multiplier/shift)
 * against the one TFLite computes from the f32 scales: a warning when it
 * differs (results may then differ by one step). */
void tx_check_requant(tflite_exporter *ex, const quill_op *op,
                      const quill_type *in, const quill_type *w,
                      const quill_type *out);
/* The f32 scale TFLite stores for a Quill f64 scale. */
float tx_scale_f32(double s);

/* ---- the op table (op_table.c) --------------------------------------------------------- */

typedef quill_status (*tx_write_fn)(tflite_exporter *ex, const quill_op *op);

enum {
  TXL_NONE = 0,     /* layout-fixed: works on native data */
  TXL_SPATIAL = 1,  /* 4-D operand 0 and result 0 are NHWC */
  TXL_AGNOSTIC = 2, /* works in any layout (axes remapped) */
};

typedef struct tx_entry {
  tx_write_fn write;     /* NULL: not exportable */
  const char *builtins;  /* for coverage listings */
  uint8_t layout;        /* TXL_* */
  bool int8;             /* has an int8 builtin: QDQ patterns fold */
  int32_t builtin;       /* for the generic writers */
  uint8_t opt_type;      /* for the generic writers */
  bool int16;            /* has a 16x8 kernel (int16 activations with zero
                            point 0, int8 weights, int64 bias) written */
} tx_entry;

extern const tx_entry tx_table[QUILL_OP_COUNT];

/* ---- writers ----------------------------------------------------------------------------- */

/* Shared by the writers (ops_nn.c). */
/* A tensor like `like` (same type, shape and quantization), for
 * intermediate results. */
int32_t tx_temp_like(tflite_exporter *ex, int32_t like, const char *sfx);
/* Window attributes of a conv or pool with auto_pad resolved (x: input
 * dims, kernel: kernel dims). */
void tx_read_window(const quill_op *op, const int64_t *x,
                    const int64_t *kernel, quill_window *w);
typedef struct tx_padding {
  int mode;          /* TFL_PADDING_SAME or TFL_PADDING_VALID */
  bool explicit_pad; /* a PAD op is needed first */
  int64_t before[2], after[2];
} tx_padding;
/* Classify the padding of one spatial window. in: H, W; out: OH, OW. */
void tx_classify_padding(const int64_t *in, const int64_t *out,
                         const int64_t *k, const quill_window *w,
                         tx_padding *p);
/* PAD (or PADV2 with `value` when use_value) of an NHWC tensor; returns
 * the padded tensor (-1 on failure). */
int32_t tx_emit_spatial_pad(tflite_exporter *ex, int32_t x,
                            const tx_padding *p, bool use_value,
                            double value);
/* An integer op that accumulates in int64 has no TFLite form (error),
 * except after 16-bit activations, where TFLite's 16x8 kernels accumulate
 * in int64 and Quill's op must too (accumulator = "i64"). */
quill_status tx_check_acc_i32(tflite_exporter *ex, const quill_op *op);
/* x is a 16-bit quantized activation (TFLite's 16x8 kernels). */
bool tx_is_16x8(const quill_type *x_elem);
/* The bias values of n channels for tx_const: int32 (TFL_INT32), or int64
 * (TFL_INT64) after 16-bit activations (TFLite's 16x8 kernels); zeros
 * without b. Sets *type and *bytes; NULL on allocation failure. */
void *tx_bias_values(tflite_exporter *ex, const quill_attr *b, int64_t n,
                     const quill_type *x_elem, int *type, size_t *bytes);

/* ops_conv.c */
quill_status tx_write_conv(tflite_exporter *ex, const quill_op *op);
quill_status tx_write_conv_transpose(tflite_exporter *ex, const quill_op *op);
quill_status tx_write_batch_norm(tflite_exporter *ex, const quill_op *op);
quill_status tx_write_layer_norm(tflite_exporter *ex, const quill_op *op);

/* ops_rnn.c */
quill_status tx_write_lstm(tflite_exporter *ex, const quill_op *op);
quill_status tx_write_qlstm(tflite_exporter *ex, const quill_op *op);

/* ops_nn.c */
quill_status tx_write_gemm(tflite_exporter *ex, const quill_op *op);
quill_status tx_write_matmul(tflite_exporter *ex, const quill_op *op);
quill_status tx_write_pool(tflite_exporter *ex, const quill_op *op);
quill_status tx_write_global_pool(tflite_exporter *ex, const quill_op *op);
quill_status tx_write_reduce(tflite_exporter *ex, const quill_op *op);
quill_status tx_write_softmax(tflite_exporter *ex, const quill_op *op);
/* ops_shape.c */
quill_status tx_write_slice(tflite_exporter *ex, const quill_op *op);
quill_status tx_write_split(tflite_exporter *ex, const quill_op *op);
quill_status tx_write_gather(tflite_exporter *ex, const quill_op *op);
/* ops_misc.c */
quill_status tx_write_unary(tflite_exporter *ex, const quill_op *op);
quill_status tx_write_binary(tflite_exporter *ex, const quill_op *op);
quill_status tx_write_relu(tflite_exporter *ex, const quill_op *op);
quill_status tx_write_clip(tflite_exporter *ex, const quill_op *op);
quill_status tx_write_leaky_relu(tflite_exporter *ex, const quill_op *op);
quill_status tx_write_concat(tflite_exporter *ex, const quill_op *op);
quill_status tx_write_reshape(tflite_exporter *ex, const quill_op *op);
quill_status tx_write_transpose(tflite_exporter *ex, const quill_op *op);
quill_status tx_write_pad(tflite_exporter *ex, const quill_op *op);
quill_status tx_write_resize(tflite_exporter *ex, const quill_op *op);
quill_status tx_write_identity(tflite_exporter *ex, const quill_op *op);
quill_status tx_write_quantize(tflite_exporter *ex, const quill_op *op);
quill_status tx_write_dequantize(tflite_exporter *ex, const quill_op *op);
quill_status tx_write_requantize(tflite_exporter *ex, const quill_op *op);
quill_status tx_write_constant(tflite_exporter *ex, const quill_op *op);
quill_status tx_write_cast(tflite_exporter *ex, const quill_op *op);
quill_status tx_write_qbinary(tflite_exporter *ex, const quill_op *op);
quill_status tx_write_lut(tflite_exporter *ex, const quill_op *op);
quill_status tx_write_custom(tflite_exporter *ex, const quill_op *op);
/* Write op as a CUSTOM operator with custom_code `code` (its operands and
 * results in Quill's layout). */
quill_status tx_write_as_custom(tflite_exporter *ex, const quill_op *op,
                                const char *code);
/* Shared: the fused activation of the current op's output (float
 * `activation` attribute, integer act_min/act_max, or folded), or an error
 * if TFLite cannot fuse it. Float ops with a clip that cannot be fused get
 * *post set (the caller writes MAXIMUM/MINIMUM after). */
quill_status tx_fused_activation(tflite_exporter *ex, const quill_op *op,
                                 int *act, bool *post, double *lo,
                                 double *hi);
/* RESHAPE of tensor x into tensor y (the new shape is y's). */
quill_status tx_emit_reshape(tflite_exporter *ex, int32_t x, int32_t y);
/* Write MAXIMUM/MINIMUM clamps of tensor `in` into tensor `out`. */
quill_status tx_emit_clamp(tflite_exporter *ex, int32_t in, int32_t out,
                           double lo, double hi);

/* ---- versions and writing (versions.c, writer.c) ----------------------------------------- */

int tx_op_version(const tflite_exporter *ex, const tx_op *o);
/* The minimum TFLite runtime for (builtin, version), "" if unknown. */
const char *tx_min_runtime(int32_t builtin, int version);
/* Name of a builtin ("CONV_2D"), or NULL. */
const char *tx_builtin_name(int32_t builtin);
/* Serialize the lowered model. */
quill_status tx_write_model(tflite_exporter *ex, void **data, size_t *len);

#endif /* QUILL_TARGETS_TFLITE_EXPORT_IMPL_H */
