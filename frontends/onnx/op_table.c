/*
 * op_table.c - the ONNX op type -> import function table, with each op's
 * version history.
 *
 * One row per supported ONNX op type, kept sorted by strcmp so lookups are
 * a bsearch. Rows of one family share an import function, which tells the
 * members apart by n->op_type (see the ops_*.c files). ONNX_OPF_FOLD marks
 * ops that are folded to constants whenever their operands are constants
 * (shape computations); other ops fold only when their results are
 * integers or booleans.
 *
 * `since` lists the opsets at which the op's definition changed (ONNX's
 * "since_version"s, from docs/Changelog.md, up to ONNX_NEWEST_OPSET). The
 * version in effect for a model is the last one at or below the model's
 * opset:
 *
 *   Resize  since {10, 11, 13, 18, 19}   opset 17 -> Resize-13
 *                                        opset 9  -> none (not an op yet)
 *
 * `oldest` is the first version the import function handles; every later
 * version is handled, newer attributes included (values Quill cannot
 * represent are reported by the import function, naming the attribute).
 * Versions added after ONNX_NEWEST_OPSET are unknown here: a model with a
 * newer opset is imported as if it used ONNX_NEWEST_OPSET, with a warning.
 *
 * The com.microsoft domain (ONNX Runtime's contrib ops) is accepted for the
 * few ops whose contrib form has the standard semantics: QuantizeLinear /
 * DequantizeLinear (emitted by ONNX Runtime's quantizer for per-channel
 * models before opset 13) and Gelu.
 *
 * Training tools' fake quantizers (ops_qat.c): QONNX's Quant (domains
 * qonnx.custom_op.general and finn.custom_op.general, Brevitas' export)
 * and MQBench's custom nodes, which its torch.onnx symbolics put in the
 * default domain under names no ONNX op has (a second table, looked up
 * after the standard one).
 */
#include <stdlib.h>
#include <string.h>

#include "frontends/onnx/onnx_impl.h"

#define FOLD ONNX_OPF_FOLD
#define V(...) {__VA_ARGS__, 0}

static const onnx_op_entry table[] = {
    {"Abs", onnx_import_unary, 0, V(1, 6, 13), 1},
    {"Add", onnx_import_binary, 0, V(1, 6, 7, 13, 14), 1},
    {"AveragePool", onnx_import_pool, 0, V(1, 7, 10, 11, 19, 22), 1},
    {"BatchNormalization", onnx_import_norm, 0, V(1, 6, 7, 9, 14, 15), 1},
    {"Cast", onnx_import_cast, FOLD, V(1, 6, 9, 13, 19, 21, 23, 24), 6},
    {"Ceil", onnx_import_unary, 0, V(1, 6, 13), 1},
    {"Clip", onnx_import_clip, 0, V(1, 6, 11, 12, 13), 1},
    {"Concat", onnx_import_concat, 0, V(1, 4, 11, 13), 1},
    {"Constant", onnx_import_constant, FOLD,
     V(1, 9, 11, 12, 13, 19, 21, 23, 24), 1},
    {"ConstantOfShape", onnx_import_constant_of_shape, FOLD,
     V(9, 20, 21, 23, 24), 9},
    {"Conv", onnx_import_conv, 0, V(1, 11, 22), 1},
    {"ConvInteger", onnx_import_qconv, 0, V(10), 10},
    {"ConvTranspose", onnx_import_conv, 0, V(1, 11, 22), 1},
    {"DequantizeLinear", onnx_import_quant, 0, V(10, 13, 19, 21, 23, 24), 10},
    {"Div", onnx_import_binary, 0, V(1, 6, 7, 13, 14), 1},
    {"Dropout", onnx_import_identity, 0, V(1, 6, 7, 10, 12, 13, 22), 1},
    {"DynamicQuantizeLinear", onnx_import_dynamic_quant, 0, V(11), 11},
    {"Equal", onnx_import_binary, 0, V(1, 7, 11, 13, 19), 1},
    {"Erf", onnx_import_unary, 0, V(9, 13), 9},
    {"Exp", onnx_import_unary, 0, V(1, 6, 13), 1},
    {"Expand", onnx_import_expand, FOLD, V(8, 13), 8},
    {"Flatten", onnx_import_reshape, 0, V(1, 9, 11, 13, 21, 23, 24), 1},
    {"Floor", onnx_import_unary, 0, V(1, 6, 13), 1},
    {"GRU", onnx_import_rnn, 0, V(1, 3, 7, 14, 22), 7},
    {"Gather", onnx_import_gather, FOLD, V(1, 11, 13), 1},
    {"Gelu", onnx_import_activation, 0, V(20), 20},
    {"Gemm", onnx_import_gemm, 0, V(1, 6, 7, 9, 11, 13), 1},
    {"GlobalAveragePool", onnx_import_global_pool, 0, V(1, 22), 1},
    {"GlobalMaxPool", onnx_import_global_pool, 0, V(1, 22), 1},
    {"Greater", onnx_import_binary, 0, V(1, 7, 9, 13), 1},
    {"HardSigmoid", onnx_import_activation, 0, V(1, 6, 22), 1},
    {"HardSwish", onnx_import_unary, 0, V(14, 22), 14},
    {"Identity", onnx_import_identity, 0, V(1, 13, 14, 16, 19, 21, 23, 24), 1},
    {"LSTM", onnx_import_rnn, 0, V(1, 7, 14, 22), 7},
    {"LayerNormalization", onnx_import_norm, 0, V(17), 17},
    {"LeakyRelu", onnx_import_activation, 0, V(1, 6, 16), 1},
    {"Less", onnx_import_binary, 0, V(1, 7, 9, 13), 1},
    {"Log", onnx_import_unary, 0, V(1, 6, 13), 1},
    {"LogSoftmax", onnx_import_softmax, 0, V(1, 11, 13), 1},
    {"MatMul", onnx_import_matmul, 0, V(1, 9, 13), 1},
    {"MatMulInteger", onnx_import_qmatmul, 0, V(10), 10},
    {"Max", onnx_import_variadic, 0, V(1, 6, 8, 12, 13), 1},
    {"MaxPool", onnx_import_pool, 0, V(1, 8, 10, 11, 12, 22), 1},
    {"Mean", onnx_import_variadic, 0, V(1, 6, 8, 13), 1},
    {"Min", onnx_import_variadic, 0, V(1, 6, 8, 12, 13), 1},
    {"Mul", onnx_import_binary, 0, V(1, 6, 7, 13, 14), 1},
    {"Neg", onnx_import_unary, 0, V(1, 6, 13), 1},
    {"PRelu", onnx_import_binary, 0, V(1, 6, 7, 9, 16), 1},
    {"Pad", onnx_import_pad, 0, V(1, 2, 11, 13, 18, 19, 21, 23, 24), 1},
    {"Pow", onnx_import_binary, 0, V(1, 7, 12, 13, 15), 1},
    {"QLinearConv", onnx_import_qconv, 0, V(10), 10},
    {"QLinearMatMul", onnx_import_qmatmul, 0, V(10, 21), 10},
    {"QuantizeLinear", onnx_import_quant, 0, V(10, 13, 19, 21, 23, 24), 10},
    {"RNN", onnx_import_rnn, 0, V(1, 7, 14, 22), 7},
    {"Range", onnx_import_range, FOLD, V(11), 11},
    {"Reciprocal", onnx_import_unary, 0, V(1, 6, 13), 1},
    {"ReduceMax", onnx_import_reduce, 0, V(1, 11, 12, 13, 18, 20), 1},
    {"ReduceMean", onnx_import_reduce, 0, V(1, 11, 13, 18), 1},
    {"ReduceMin", onnx_import_reduce, 0, V(1, 11, 12, 13, 18, 20), 1},
    {"ReduceSum", onnx_import_reduce, 0, V(1, 11, 13), 1},
    {"Relu", onnx_import_unary, 0, V(1, 6, 13, 14), 1},
    {"Reshape", onnx_import_reshape, 0, V(1, 5, 13, 14, 19, 21, 23, 24), 1},
    {"Resize", onnx_import_resize, 0, V(10, 11, 13, 18, 19), 10},
    {"Shape", onnx_import_shape, FOLD, V(1, 13, 15, 19, 21, 23, 24), 1},
    {"Sigmoid", onnx_import_unary, 0, V(1, 6, 13), 1},
    {"Size", onnx_import_shape, FOLD, V(1, 13, 19, 21, 23, 24), 1},
    {"Slice", onnx_import_slice, 0, V(1, 10, 11, 13), 1},
    {"Softmax", onnx_import_softmax, 0, V(1, 11, 13), 1},
    {"Split", onnx_import_split, 0, V(1, 2, 11, 13, 18), 1},
    {"Sqrt", onnx_import_unary, 0, V(1, 6, 13), 1},
    {"Squeeze", onnx_import_squeeze, 0, V(1, 11, 13, 21, 23, 24), 1},
    {"Sub", onnx_import_binary, 0, V(1, 6, 7, 13, 14), 1},
    {"Sum", onnx_import_variadic, 0, V(1, 6, 8, 13), 1},
    {"Tanh", onnx_import_unary, 0, V(1, 6, 13), 1},
    {"Transpose", onnx_import_transpose, 0, V(1, 13, 21, 23, 24), 1},
    {"Unsqueeze", onnx_import_squeeze, 0, V(1, 11, 13, 21, 23, 24), 1},
    {"Upsample", onnx_import_resize, 0, V(1, 7, 9, 10), 7},
    {"Where", onnx_import_where, 0, V(9, 16), 9},
};

/* com.microsoft contrib ops with standard semantics (version 1). */
static const onnx_op_entry ms_table[] = {
    {"DequantizeLinear", onnx_import_quant, 0, V(1), 1},
    {"Gelu", onnx_import_activation, 0, V(1), 1},
    {"QuantizeLinear", onnx_import_quant, 0, V(1), 1},
};

/* MQBench's fake quantizers (default domain, version 1). */
static const onnx_op_entry mqbench_table[] = {
    {"FakeQuantizeLearnablePerchannelAffine", onnx_import_mqbench_fake_quant, 0,
     V(1), 1},
    {"FixedPerChannelAffine", onnx_import_mqbench_fake_quant, 0, V(1), 1},
    {"FixedPerTensorAffine", onnx_import_mqbench_fake_quant, 0, V(1), 1},
    {"LearnablePerTensorAffine", onnx_import_mqbench_fake_quant, 0, V(1), 1},
};

/* QONNX (version 1). */
static const onnx_op_entry qonnx_table[] = {
    {"BipolarQuant", onnx_import_qonnx_quant, 0, V(1), 1},
    {"Quant", onnx_import_qonnx_quant, 0, V(1), 1},
};

#define LOOKUP(t, op) bsearch(op, t, sizeof t / sizeof t[0], sizeof t[0], cmp_entry)

static int cmp_entry(const void *key, const void *elem) {
  return strcmp((const char *)key, ((const onnx_op_entry *)elem)->op_type);
}

bool onnx_is_default_domain(const char *domain) {
  return !domain || !*domain || !strcmp(domain, "ai.onnx");
}

const onnx_op_entry *onnx_op_lookup(const char *domain, const char *op_type) {
  if (!op_type)
    return NULL;
  if (onnx_is_default_domain(domain)) {
    const onnx_op_entry *e = LOOKUP(table, op_type);
    return e ? e : LOOKUP(mqbench_table, op_type);
  }
  if (!strcmp(domain, "com.microsoft"))
    return LOOKUP(ms_table, op_type);
  if (!strcmp(domain, "qonnx.custom_op.general") ||
      !strcmp(domain, "finn.custom_op.general"))
    return LOOKUP(qonnx_table, op_type);
  return NULL;
}

int onnx_op_version(const onnx_op_entry *e, int64_t opset) {
  int v = 0;
  for (size_t i = 0; i < sizeof e->since && e->since[i]; i++)
    if (e->since[i] <= opset)
      v = e->since[i];
  return v;
}
