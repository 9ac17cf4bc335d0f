/*
 * op_table.c - the opcode-indexed table from Quill ops to ONNX node
 * builders, and the documented list of ops that cannot be exported.
 *
 * One row per opcode (designated initializers, as ir/ops.h asks):
 *
 *   [QUILL_OP_CONV2D] = {ex_build_simple, "Conv", 0, 0, conv_attrs},
 *
 * ex_build_simple covers the 1:1 ops: one node of `op_type` with the
 * operands as inputs, the results as outputs and the attributes of `attrs`
 * copied (renamed where ONNX spells them differently: trans_a -> transA).
 * Ops whose ONNX form takes inputs where Quill has attributes or result
 * types (reshape, split, slice, pad, squeeze, resize, ReduceSum) and the
 * quantization ops have their own builders (ops_float.c, ops_quant.c).
 *
 * An opcode without a builder must be listed in `excluded` with a reason;
 * test/unit/test_onnx_export.c walks 0..QUILL_OP_COUNT to enforce it.
 */
#include <string.h>

#include "targets/onnx/export_impl.h"

/* ---- attribute lists --------------------------------------------------------- */

#define A(q, o) {.quill = q, .onnx = o}
#define AD(q, o, d) {.quill = q, .onnx = o, .has_default = true, .default_value = d}

static const ex_attr_map leaky_relu_attrs[] = {AD("alpha", "alpha", 0.01),
                                               {0}};
static const ex_attr_map hard_sigmoid_attrs[] = {
    AD("alpha", "alpha", 0.2), AD("beta", "beta", 0.5), {0}};
static const ex_attr_map axis_attrs[] = {A("axis", "axis"), {0}};
static const ex_attr_map perm_attrs[] = {A("perm", "perm"), {0}};
static const ex_attr_map conv_attrs[] = {
    A("strides", "strides"),   A("pads", "pads"),
    A("dilations", "dilations"), A("group", "group"),
    A("auto_pad", "auto_pad"), A("kernel_shape", "kernel_shape"),
    {0}};
static const ex_attr_map conv_transpose_attrs[] = {
    A("strides", "strides"),     A("pads", "pads"),
    A("dilations", "dilations"), A("group", "group"),
    A("auto_pad", "auto_pad"),   A("kernel_shape", "kernel_shape"),
    A("output_padding", "output_padding"), {0}};
static const ex_attr_map gemm_attrs[] = {
    AD("alpha", "alpha", 1.0), AD("beta", "beta", 1.0),
    A("trans_a", "transA"),    A("trans_b", "transB"),
    {0}};
static const ex_attr_map batch_norm_attrs[] = {
    AD("epsilon", "epsilon", 1e-5), AD("momentum", "momentum", 0.9), {0}};
static const ex_attr_map layer_norm_attrs[] = {
    A("axis", "axis"), AD("epsilon", "epsilon", 1e-5), {0}};
static const ex_attr_map maxpool_attrs[] = {
    A("kernel_shape", "kernel_shape"), A("strides", "strides"),
    A("pads", "pads"),                 A("dilations", "dilations"),
    A("ceil_mode", "ceil_mode"),       A("storage_order", "storage_order"),
    A("auto_pad", "auto_pad"),         {0}};

/* ---- the table ------------------------------------------------------------------ */

#define SIMPLE(T) ex_build_simple, T
#define ST EXF_STORAGE
#define Q EXF_QUANT

const onnx_export_entry onnx_export_table[QUILL_OP_COUNT] = {
    /* structure */
    [QUILL_OP_CONSTANT] = {ex_build_constant, "Constant", 0, Q, NULL, 0, 0},
    [QUILL_OP_RETURN] = {ex_build_return, "(graph outputs)", 0, Q, NULL, 0, 0},
    [QUILL_OP_IDENTITY] = {SIMPLE("Identity"), 0, ST, NULL, 0, 0},
    /* elementwise unary */
    [QUILL_OP_RELU] = {SIMPLE("Relu"), 0, 0, NULL, ex_opset_relu, 0},
    [QUILL_OP_LEAKY_RELU] = {SIMPLE("LeakyRelu"), 0, 0, leaky_relu_attrs, 0, 0},
    [QUILL_OP_CLIP] = {ex_build_clip, "Clip", 0, 0, NULL, 0, 0},
    [QUILL_OP_SIGMOID] = {SIMPLE("Sigmoid"), 0, 0, NULL, 0, 0},
    [QUILL_OP_TANH] = {SIMPLE("Tanh"), 0, 0, NULL, 0, 0},
    [QUILL_OP_HARD_SIGMOID] = {SIMPLE("HardSigmoid"), 0, 0, hard_sigmoid_attrs,
                               0, 0},
    [QUILL_OP_HARD_SWISH] = {SIMPLE("HardSwish"), 14, 0, NULL, 0, 0},
    /* Gelu is opset 20: written as its formula (Erf or Tanh). */
    [QUILL_OP_GELU] = {ex_build_gelu, "Div+Erf+Add+Mul", 0, 0, NULL, 0, 0},
    [QUILL_OP_ERF] = {SIMPLE("Erf"), 0, 0, NULL, 0, 0},
    [QUILL_OP_SQRT] = {SIMPLE("Sqrt"), 0, 0, NULL, 0, 0},
    [QUILL_OP_EXP] = {SIMPLE("Exp"), 0, 0, NULL, 0, 0},
    [QUILL_OP_LOG] = {SIMPLE("Log"), 0, 0, NULL, 0, 0},
    [QUILL_OP_NEG] = {SIMPLE("Neg"), 0, 0, NULL, 0, 0},
    [QUILL_OP_ABS] = {SIMPLE("Abs"), 0, 0, NULL, 0, 0},
    [QUILL_OP_RECIPROCAL] = {SIMPLE("Reciprocal"), 0, 0, NULL, 0, 0},
    [QUILL_OP_FLOOR] = {SIMPLE("Floor"), 0, 0, NULL, 0, 0},
    [QUILL_OP_CEIL] = {SIMPLE("Ceil"), 0, 0, NULL, 0, 0},
    [QUILL_OP_CAST] = {ex_build_cast, "Cast", 0, 0, NULL, 0, 0},
    /* elementwise binary */
    [QUILL_OP_ADD] = {SIMPLE("Add"), 0, 0, NULL, ex_opset_arith, 0},
    [QUILL_OP_SUB] = {SIMPLE("Sub"), 0, 0, NULL, ex_opset_arith, 0},
    [QUILL_OP_MUL] = {SIMPLE("Mul"), 0, 0, NULL, ex_opset_arith, 0},
    [QUILL_OP_DIV] = {SIMPLE("Div"), 0, 0, NULL, ex_opset_arith, 0},
    [QUILL_OP_POW] = {SIMPLE("Pow"), 0, 0, NULL, 0, 0},
    [QUILL_OP_MAX] = {SIMPLE("Max"), 0, 0, NULL, 0, 0},
    [QUILL_OP_MIN] = {SIMPLE("Min"), 0, 0, NULL, 0, 0},
    [QUILL_OP_PRELU] = {SIMPLE("PRelu"), 0, 0, NULL, 0, 0},
    [QUILL_OP_EQUAL] = {SIMPLE("Equal"), 0, 0, NULL, 0, 0},
    [QUILL_OP_LESS] = {SIMPLE("Less"), 0, 0, NULL, 0, 0},
    [QUILL_OP_GREATER] = {SIMPLE("Greater"), 0, 0, NULL, 0, 0},
    [QUILL_OP_WHERE] = {SIMPLE("Where"), 0, 0, NULL, 0, 0},
    /* linear algebra and normalization */
    [QUILL_OP_CONV2D] = {SIMPLE("Conv"), 0, 0, conv_attrs, 0, 0},
    [QUILL_OP_CONV_TRANSPOSE2D] = {SIMPLE("ConvTranspose"), 0, 0,
                                   conv_transpose_attrs, 0, 0},
    [QUILL_OP_MATMUL] = {SIMPLE("MatMul"), 0, 0, NULL, 0, 0},
    [QUILL_OP_GEMM] = {SIMPLE("Gemm"), 0, 0, gemm_attrs, 0, 0},
    [QUILL_OP_BATCH_NORM] = {SIMPLE("BatchNormalization"), 0, 0,
                             batch_norm_attrs, 0, 0},
    [QUILL_OP_LAYER_NORM] = {SIMPLE("LayerNormalization"), 17, 0,
                             layer_norm_attrs, 0, 0},
    /* pooling and reductions */
    [QUILL_OP_MAXPOOL] = {SIMPLE("MaxPool"), 0, ST, maxpool_attrs, 0, 0},
    [QUILL_OP_AVGPOOL] = {ex_build_avgpool, "AveragePool", 0, ST, NULL, 0,
                          ex_storage_per_tensor},
    [QUILL_OP_GLOBAL_AVGPOOL] = {ex_build_avgpool, "GlobalAveragePool", 0, ST,
                                 NULL, 0, ex_storage_per_tensor},
    [QUILL_OP_GLOBAL_MAXPOOL] = {SIMPLE("GlobalMaxPool"), 0, 0, NULL, 0, 0},
    [QUILL_OP_REDUCE_MEAN] = {ex_build_reduce, "ReduceMean", 0, 0, NULL, 0,
                              0},
    [QUILL_OP_REDUCE_SUM] = {ex_build_reduce, "ReduceSum", 0, 0, NULL, 0, 0},
    [QUILL_OP_REDUCE_MAX] = {ex_build_reduce, "ReduceMax", 0, 0, NULL, 0, 0},
    [QUILL_OP_REDUCE_MIN] = {ex_build_reduce, "ReduceMin", 0, 0, NULL, 0, 0},
    [QUILL_OP_SOFTMAX] = {SIMPLE("Softmax"), 0, 0, axis_attrs, 0, 0},
    [QUILL_OP_LOG_SOFTMAX] = {SIMPLE("LogSoftmax"), 0, 0, axis_attrs, 0, 0},
    /* data movement */
    [QUILL_OP_CONCAT] = {SIMPLE("Concat"), 0, ST, axis_attrs, 0, 0},
    [QUILL_OP_SPLIT] = {ex_build_split, "Split", 0, ST, NULL, 0, 0},
    [QUILL_OP_SLICE] = {ex_build_slice, "Slice", 0, ST, NULL, 0, 0},
    [QUILL_OP_PAD] = {ex_build_pad, "Pad", 0, ST, NULL, ex_opset_pad, 0},
    [QUILL_OP_RESHAPE] = {ex_build_reshape, "Reshape", 0, ST, NULL, 0, 0},
    [QUILL_OP_FLATTEN] = {SIMPLE("Flatten"), 0, ST, axis_attrs, 0, 0},
    [QUILL_OP_TRANSPOSE] = {SIMPLE("Transpose"), 0, ST, perm_attrs, 0, 0},
    [QUILL_OP_SQUEEZE] = {ex_build_squeeze, "Squeeze", 0, ST, NULL, 0, 0},
    [QUILL_OP_UNSQUEEZE] = {ex_build_squeeze, "Unsqueeze", 0, ST, NULL, 0, 0},
    [QUILL_OP_GATHER] = {SIMPLE("Gather"), 0, ST, axis_attrs, 0, 0},
    [QUILL_OP_RESIZE] = {ex_build_resize, "Resize", 0, ST, NULL, 0,
                         ex_storage_resize},
    /* quantization */
    [QUILL_OP_QUANTIZE] = {ex_build_quantize, "QuantizeLinear", 0, Q, NULL, 0,
                           0},
    [QUILL_OP_DEQUANTIZE] = {ex_build_dequantize, "DequantizeLinear", 0, Q,
                             NULL, 0, 0},
    [QUILL_OP_REQUANTIZE] = {ex_build_requantize,
                             "DequantizeLinear+QuantizeLinear", 0, Q, NULL, 0,
                             0},
    [QUILL_OP_FAKE_QUANT] = {ex_build_fake_quant,
                             "QuantizeLinear+DequantizeLinear", 0, Q, NULL, 0,
                             0},
    /* integer ops */
    [QUILL_OP_QCONV2D] = {ex_build_qconv2d, "QLinearConv", 0, Q, NULL, 0, 0},
    [QUILL_OP_QMATMUL] = {ex_build_qmatmul, "QLinearMatMul", 0, Q, NULL, 0, 0},
    [QUILL_OP_QADD] = {ex_build_qbinary, "DequantizeLinear+Add+QuantizeLinear",
                       0, Q, NULL, 0, 0},
    [QUILL_OP_QMUL] = {ex_build_qbinary, "DequantizeLinear+Mul+QuantizeLinear",
                       0, Q, NULL, 0, 0},
    [QUILL_OP_LUT] = {ex_build_lut, "Cast+Add+Gather", 0, Q, NULL, 0, 0},
    [QUILL_OP_SCAST] = {ex_build_scast, "Identity", 0, Q, NULL, 0, 0},
    [QUILL_OP_DYNAMIC_QUANTIZE] = {ex_build_dynamic_quantize,
                                   "DynamicQuantizeLinear", 0, Q, NULL, 0, 0},
    /* extension */
    [QUILL_OP_CUSTOM] = {ex_build_custom, "(op type and domain from its name)",
                         0, Q, NULL, 0, 0},
};

/* Ops that cannot be exported, with the reason (opcode-indexed; NULL: not
 * excluded). A new op must get a builder above or a reason here. */
static const char *const excluded[QUILL_OP_COUNT] = {
    [QUILL_OP_LSTM] = "not written yet (ONNX LSTM needs W, R and B with a "
                      "direction dim): import the ONNX model, whose LSTM "
                      "nodes the importer unrolls into exportable ops",
    [QUILL_OP_QLSTM] = "ONNX has no integer LSTM: export the model quantized "
                       "for another backend (tflite-int8 alone makes qlstm)",
    [QUILL_OP_QLAYER_NORM] = "ONNX has no integer LayerNormalization: quantize "
                             "with layer_norm_numerics \"f64\" or \"f32\" "
                             "(a float LayerNormalization between "
                             "DequantizeLinear and QuantizeLinear)",
};

const char *quill_onnx_export_op_type(quill_opcode opc) {
  if ((unsigned)opc >= QUILL_OP_COUNT || !onnx_export_table[opc].build)
    return NULL;
  return onnx_export_table[opc].op_type;
}

bool quill_onnx_export_op_excluded(quill_opcode opc, const char **why) {
  if ((unsigned)opc >= QUILL_OP_COUNT || !excluded[opc])
    return false;
  if (why)
    *why = excluded[opc];
  return true;
}

/* ---- the 1:1 builder ------------------------------------------------------------ */

quill_status ex_build_simple(onnx_exporter *ex, const quill_op *op) {
  const onnx_export_entry *e = &onnx_export_table[quill_op_opcode(op)];
  unsigned no = quill_op_num_operands(op), nr = quill_op_num_results(op);
  const char **in = ex_alloc(ex, (no ? no : 1) * sizeof *in);
  const char **out = ex_alloc(ex, (nr ? nr : 1) * sizeof *out);
  if (!in || !out)
    return QUILL_ERR_NOMEM;
  for (unsigned i = 0; i < no; i++)
    in[i] = ex_in(ex, op, i);
  for (unsigned i = 0; i < nr; i++)
    out[i] = ex_out(ex, op, i);
  Onnx__NodeProto *n = ex_node(ex, e->op_type, no, in, nr, out);
  if (!n)
    return QUILL_ERR_NOMEM;
  for (const ex_attr_map *m = e->attrs; m && m->quill; m++) {
    const quill_attr *a = quill_op_attr(op, m->quill);
    if (a && m->has_default && quill_attr_kind_of(a) == QUILL_ATTR_FLOAT &&
        quill_attr_float_value(a) == m->default_value)
      continue;
    if (a && !ex_attr_from_quill(ex, n, m->onnx, a))
      return ex_op_error(ex, op, "attribute '%s' has no ONNX form",
                         m->quill);
  }
  return QUILL_OK;
}
