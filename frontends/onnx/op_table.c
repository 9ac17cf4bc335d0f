/*
 * op_table.c - the ONNX op type -> import function table.
 *
 * One row per supported ONNX op type, kept sorted by strcmp so lookups are
 * a bsearch. Rows of one family share an import function, which tells the
 * members apart by n->op_type (see the ops_*.c files). ONNX_OPF_FOLD marks
 * ops that are folded to constants whenever their operands are constants
 * (shape computations); other ops fold only when their results are
 * integers or booleans.
 *
 * Quantized ops that need IR ops Quill does not have yet (QLinearConv,
 * QLinearMatMul, ConvInteger, MatMulInteger, DynamicQuantizeLinear) are
 * deliberately absent: they are reported with the other unsupported ops.
 */
#include <stdlib.h>
#include <string.h>

#include "frontends/onnx/onnx_impl.h"

#define FOLD ONNX_OPF_FOLD

static const onnx_op_entry table[] = {
    {"Abs", onnx_import_unary, 0},
    {"Add", onnx_import_binary, 0},
    {"AveragePool", onnx_import_pool, 0},
    {"BatchNormalization", onnx_import_norm, 0},
    {"Cast", onnx_import_cast, FOLD},
    {"Ceil", onnx_import_unary, 0},
    {"Clip", onnx_import_clip, 0},
    {"Concat", onnx_import_concat, 0},
    {"Constant", onnx_import_constant, FOLD},
    {"ConstantOfShape", onnx_import_constant_of_shape, FOLD},
    {"Conv", onnx_import_conv, 0},
    {"ConvTranspose", onnx_import_conv, 0},
    {"DequantizeLinear", onnx_import_quant, 0},
    {"Div", onnx_import_binary, 0},
    {"Dropout", onnx_import_identity, 0},
    {"Equal", onnx_import_binary, 0},
    {"Erf", onnx_import_unary, 0},
    {"Exp", onnx_import_unary, 0},
    {"Expand", onnx_import_expand, FOLD},
    {"Flatten", onnx_import_reshape, 0},
    {"Floor", onnx_import_unary, 0},
    {"Gather", onnx_import_gather, FOLD},
    {"Gelu", onnx_import_activation, 0},
    {"Gemm", onnx_import_gemm, 0},
    {"GlobalAveragePool", onnx_import_global_pool, 0},
    {"GlobalMaxPool", onnx_import_global_pool, 0},
    {"Greater", onnx_import_binary, 0},
    {"HardSigmoid", onnx_import_activation, 0},
    {"HardSwish", onnx_import_unary, 0},
    {"Identity", onnx_import_identity, 0},
    {"LayerNormalization", onnx_import_norm, 0},
    {"LeakyRelu", onnx_import_activation, 0},
    {"Less", onnx_import_binary, 0},
    {"Log", onnx_import_unary, 0},
    {"LogSoftmax", onnx_import_softmax, 0},
    {"MatMul", onnx_import_matmul, 0},
    {"Max", onnx_import_variadic, 0},
    {"MaxPool", onnx_import_pool, 0},
    {"Mean", onnx_import_variadic, 0},
    {"Min", onnx_import_variadic, 0},
    {"Mul", onnx_import_binary, 0},
    {"Neg", onnx_import_unary, 0},
    {"PRelu", onnx_import_binary, 0},
    {"Pad", onnx_import_pad, 0},
    {"Pow", onnx_import_binary, 0},
    {"QuantizeLinear", onnx_import_quant, 0},
    {"Range", onnx_import_range, FOLD},
    {"Reciprocal", onnx_import_unary, 0},
    {"ReduceMax", onnx_import_reduce, 0},
    {"ReduceMean", onnx_import_reduce, 0},
    {"ReduceMin", onnx_import_reduce, 0},
    {"ReduceSum", onnx_import_reduce, 0},
    {"Relu", onnx_import_unary, 0},
    {"Reshape", onnx_import_reshape, 0},
    {"Resize", onnx_import_resize, 0},
    {"Shape", onnx_import_shape, FOLD},
    {"Sigmoid", onnx_import_unary, 0},
    {"Size", onnx_import_shape, FOLD},
    {"Slice", onnx_import_slice, 0},
    {"Softmax", onnx_import_softmax, 0},
    {"Split", onnx_import_split, 0},
    {"Sqrt", onnx_import_unary, 0},
    {"Squeeze", onnx_import_squeeze, 0},
    {"Sub", onnx_import_binary, 0},
    {"Sum", onnx_import_variadic, 0},
    {"Tanh", onnx_import_unary, 0},
    {"Transpose", onnx_import_transpose, 0},
    {"Unsqueeze", onnx_import_squeeze, 0},
    {"Upsample", onnx_import_resize, 0},
    {"Where", onnx_import_where, 0},
};

static int cmp_entry(const void *key, const void *elem) {
  return strcmp((const char *)key, ((const onnx_op_entry *)elem)->op_type);
}

const onnx_op_entry *onnx_op_lookup(const char *op_type) {
  if (!op_type)
    return NULL;
  return bsearch(op_type, table, sizeof table / sizeof table[0],
                 sizeof table[0], cmp_entry);
}
