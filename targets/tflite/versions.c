/*
 * versions.c - operator versions and the minimum TFLite runtime version.
 *
 * A TFLite operator code carries a version: the runtime refuses a version
 * it does not know, and a version must be at least what the op's tensor
 * types and options need. The rules below follow TFLite's
 * GetBuiltinOperatorVersion (tensorflow/lite/tools/versioning/
 * op_version.cc) for the builtins Quill writes, and the runtime versions
 * its FindMinimumRuntimeVersionForOp (runtime_version.cc); the model's
 * "min_runtime_version" metadata is the highest of its ops.
 *
 * int16 activations (tflite-int16x8) have versions of their own: LOGISTIC,
 * TANH, SOFTMAX, MEAN, RELU, RELU6, REDUCE_MAX/MIN, CONCATENATION, PAD,
 * BATCH_MATMUL, the pools and ADD (pot_scale_int16 false) 3, MUL 4,
 * MAXIMUM/MINIMUM 4, TRANSPOSE 5, SPLIT 4, LEAKY_RELU 2, RESIZE_* 4. The
 * 16x8 CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED keep their float
 * versions: TFLite's rule gives 4 (conv), 5 (depthwise) and 7 (fully
 * connected) only to int16 weights, and 8 / 11 only with the
 * quantized_bias_type option, which Quill does not write (int64 bias
 * tensors are the default of the 16x8 kernels); STRIDED_SLICE has no int16
 * version either.
 */
#include <string.h>

#include "targets/tflite/export_impl.h"

static int in_type(const tflite_exporter *ex, const tx_op *o, unsigned i) {
  return i < o->nin && o->inputs[i] >= 0 ? ex->tensors[o->inputs[i]].type
                                         : -1;
}

static int out_type(const tflite_exporter *ex, const tx_op *o) {
  return o->nout ? ex->tensors[o->outputs[0]].type : -1;
}

static unsigned in_rank(const tflite_exporter *ex, const tx_op *o,
                        unsigned i) {
  return i < o->nin && o->inputs[i] >= 0 ? ex->tensors[o->inputs[i]].rank : 0;
}

static int64_t opt(const tx_op *o, unsigned id) {
  for (unsigned i = 0; i < o->nopts; i++)
    if (o->opts[i].id == id)
      return o->opts[i].i;
  return 0;
}

/* Inputs of different shapes (broadcasting) with more than 4 dims. */
static bool broadcast_over4(const tflite_exporter *ex, const tx_op *o) {
  if (o->nin < 2 || o->inputs[0] < 0 || o->inputs[1] < 0)
    return false;
  const tx_tensor *a = &ex->tensors[o->inputs[0]];
  const tx_tensor *b = &ex->tensors[o->inputs[1]];
  bool same = a->rank == b->rank &&
              !memcmp(a->shape, b->shape, a->rank * sizeof *a->shape);
  return !same && (a->rank > 4 || b->rank > 4);
}

int tx_op_version(const tflite_exporter *ex, const tx_op *o) {
  int t0 = in_type(ex, o, 0), t1 = in_type(ex, o, 1), to = out_type(ex, o);
  bool i8 = t0 == TFL_INT8;
  bool i16 = t0 == TFL_INT16; /* quantized int16 (16x8 activations) */
  switch (o->builtin) {
  case TFL_OP_CONV_2D: {
    /* grouped: the filter has fewer input channels than the input */
    const tx_tensor *x = &ex->tensors[o->inputs[0]];
    const tx_tensor *f = &ex->tensors[o->inputs[1]];
    if (x->rank == 4 && f->rank == 4 && x->shape[3] != f->shape[3])
      return 6;
    return t0 == TFL_INT8 && t1 == TFL_INT8 && to == TFL_INT8 ? 3 : 1;
  }
  case TFL_OP_DEPTHWISE_CONV_2D:
    if (t0 == TFL_INT8 && t1 == TFL_INT8 && to == TFL_INT8)
      return 3;
    return opt(o, TFL_DWCONV_DILATION_W) > 1 ||
                   opt(o, TFL_DWCONV_DILATION_H) > 1
               ? 2
               : 1;
  case TFL_OP_FULLY_CONNECTED:
    if (o->nin == 2)
      return 6;
    if (opt(o, TFL_FC_KEEP_NUM_DIMS))
      return 5;
    return t0 == TFL_INT8 && t1 == TFL_INT8 && to == TFL_INT8 ? 4 : 1;
  case TFL_OP_MUL:
    if (i16)
      return 4;
    if (i8 && o->nin == 2) {
      const tx_tensor *a = &ex->tensors[o->inputs[0]];
      const tx_tensor *b = &ex->tensors[o->inputs[1]];
      const tx_tensor *y = &ex->tensors[o->outputs[0]];
      if (a->nq && b->nq && y->nq &&
          (double)a->scale[0] * b->scale[0] / y->scale[0] >= 1.0)
        return 3;
    }
    return i8 ? 2 : 1;
  case TFL_OP_SUB:
    if (broadcast_over4(ex, o))
      return 3;
    return i8 ? 2 : 1;
  case TFL_OP_MAXIMUM:
  case TFL_OP_MINIMUM:
    if (i16 && to == TFL_INT16)
      return 4;
    if (broadcast_over4(ex, o))
      return 3;
    return i8 ? 2 : 1;
  case TFL_OP_TRANSPOSE:
    if (in_rank(ex, o, 0) > 5)
      return 6;
    if (i16)
      return 5;
    if (in_rank(ex, o, 0) > 4)
      return 4;
    return t0 == TFL_BOOL ? 3 : i8 ? 2 : 1;
  case TFL_OP_PAD:
  case TFL_OP_PADV2:
    if (in_rank(ex, o, 0) > 4)
      return 4;
    return i16 ? 3 : i8 ? 2 : 1;
  case TFL_OP_MIRROR_PAD:
    return i8 ? 2 : 1;
  case TFL_OP_DEQUANTIZE:
    if (t0 == TFL_INT16 || t0 == TFL_FLOAT16)
      return 3;
    if (i8)
      return ex->tensors[o->inputs[0]].nq > 1 ? 5 : 2;
    return 1;
  case TFL_OP_QUANTIZE:
    if (o->nout && ex->tensors[o->outputs[0]].nq > 1)
      return 3;
    return to == TFL_INT16 ? 2 : 1;
  case TFL_OP_RESIZE_BILINEAR:
    if (i16)
      return 4;
    if (opt(o, TFL_RESIZE_BILINEAR_HALF_PIXEL_CENTERS))
      return 3;
    return i8 ? 2 : 1;
  case TFL_OP_RESIZE_NEAREST_NEIGHBOR:
    if (i16)
      return 4;
    if (opt(o, TFL_RESIZE_NEAREST_HALF_PIXEL_CENTERS) ||
        opt(o, TFL_RESIZE_NEAREST_ALIGN_CORNERS))
      return 3;
    return i8 ? 2 : 1;
  case TFL_OP_RELU:
    return i16 ? 3 : i8 || t0 == TFL_UINT8 ? 2 : 1;
  case TFL_OP_STRIDED_SLICE:
    if (in_rank(ex, o, 0) > 4)
      return 4;
    return i8 ? 2 : 1;
  case TFL_OP_SPLIT:
    return in_type(ex, o, 1) == TFL_INT16  ? 4
           : in_type(ex, o, 1) == TFL_INT8 ? 2
                                           : 1;
  case TFL_OP_SPLIT_V:
    return i8 ? 2 : 1;
  case TFL_OP_TRANSPOSE_CONV:
    if (opt(o, TFL_TCONV_FUSED_ACTIVATION) != TFL_ACT_NONE)
      return 4;
    if (o->nin == 4 && o->inputs[3] >= 0)
      return 3;
    return in_type(ex, o, 2) == TFL_INT8 ? 2 : 1;
  case TFL_OP_GATHER:
    if (t0 == TFL_INT16)
      return 4;
    return t0 == TFL_BOOL ? 3 : i8 ? 2 : 1;
  case TFL_OP_LEAKY_RELU:
    return i16 ? 2 : 1;
  case TFL_OP_ADD:
    /* the writer sets pot_scale_int16 false on every int16 ADD */
    if (i16 && to == TFL_INT16 && !opt(o, TFL_ADD_POT_SCALE_INT16))
      return 3;
    return i8 ? 2 : 1;
  case TFL_OP_AVERAGE_POOL_2D:
  case TFL_OP_MAX_POOL_2D:
  case TFL_OP_LOGISTIC:
  case TFL_OP_TANH:
    if (i16 && to == TFL_INT16)
      return 3;
    return i8 ? 2 : 1;
  case TFL_OP_CONCATENATION:
  case TFL_OP_SOFTMAX:
  case TFL_OP_MEAN:
  case TFL_OP_REDUCE_MAX:
  case TFL_OP_REDUCE_MIN:
  case TFL_OP_RELU6:
  case TFL_OP_BATCH_MATMUL:
    return i16 ? 3 : i8 ? 2 : 1;
  case TFL_OP_SUM:
  case TFL_OP_LOG_SOFTMAX:
  case TFL_OP_GREATER:
  case TFL_OP_LESS:
  case TFL_OP_EQUAL:
  case TFL_OP_GELU:
    return i8 ? 2 : 1;
  case TFL_OP_CAST:
    if (t0 == TFL_BFLOAT16 || to == TFL_BFLOAT16)
      return 7;
    if (t0 == TFL_FLOAT64 || to == TFL_FLOAT64 || t0 == TFL_FLOAT16 ||
        to == TFL_FLOAT16)
      return 5;
    if (t0 == TFL_UINT16 || to == TFL_UINT16)
      return 4;
    if (t0 == TFL_INT8 || to == TFL_INT8)
      return 3;
    if (t0 == TFL_UINT32 || to == TFL_UINT32)
      return 2;
    return 1;
  default:
    return 1;
  }
}

/* ---- minimum runtime versions ----------------------------------------------------- */

static const struct {
  int32_t builtin;
  int version;
  const char *runtime;
} runtime_table[] = {
    {TFL_OP_AVERAGE_POOL_2D, 1, "1.5.0"}, {TFL_OP_AVERAGE_POOL_2D, 2, "1.14.0"},
    {TFL_OP_AVERAGE_POOL_2D, 3, "2.3.0"}, {TFL_OP_BATCH_MATMUL, 3, "2.4.0"},
    {TFL_OP_ADD, 3, "2.4.0"},             {TFL_OP_CONCATENATION, 3, "2.3.0"},
    {TFL_OP_MAX_POOL_2D, 3, "2.3.0"},     {TFL_OP_MAXIMUM, 4, "2.3.0"},
    {TFL_OP_MINIMUM, 4, "2.3.0"},         {TFL_OP_MUL, 4, "2.3.0"},
    {TFL_OP_PAD, 3, "2.4.0"},             {TFL_OP_PADV2, 3, "2.4.0"},
    {TFL_OP_SOFTMAX, 3, "2.3.0"},         {TFL_OP_TRANSPOSE, 5, "2.4.0"},
    {TFL_OP_MEAN, 3, "2.4.0"},            {TFL_OP_REDUCE_MAX, 3, "2.5.0"},
    {TFL_OP_REDUCE_MIN, 3, "2.5.0"},      {TFL_OP_RELU6, 3, "2.5.0"},
    {TFL_OP_RELU, 3, "2.5.0"},            {TFL_OP_TANH, 3, "2.3.0"},
    {TFL_OP_LOGISTIC, 3, "2.3.0"},        {TFL_OP_LEAKY_RELU, 2, "2.3.0"},
    {TFL_OP_RESIZE_BILINEAR, 4, "2.5.0"}, {TFL_OP_RESIZE_NEAREST_NEIGHBOR, 4, "2.4.0"},
    {TFL_OP_SPLIT, 4, "2.3.0"},
    {TFL_OP_BATCH_MATMUL, 1, "2.3.0"},    {TFL_OP_BATCH_MATMUL, 2, "2.3.0"},
    {TFL_OP_CONV_2D, 1, "1.5.0"},         {TFL_OP_CONV_2D, 3, "1.14.0"},
    {TFL_OP_CONV_2D, 6, "2.9.0"},
    {TFL_OP_DEPTHWISE_CONV_2D, 1, "1.5.0"},
    {TFL_OP_DEPTHWISE_CONV_2D, 2, "1.12.0"},
    {TFL_OP_DEPTHWISE_CONV_2D, 3, "1.14.0"},
    {TFL_OP_ADD, 1, "1.5.0"},             {TFL_OP_ADD, 2, "1.14.0"},
    {TFL_OP_SUB, 1, "1.6.0"},             {TFL_OP_SUB, 2, "1.14.0"},
    {TFL_OP_SUB, 3, "2.3.0"},             {TFL_OP_DIV, 1, "1.6.0"},
    {TFL_OP_CAST, 1, "1.5.0"},            {TFL_OP_CAST, 2, "2.7.0"},
    {TFL_OP_CAST, 3, "2.8.0"},            {TFL_OP_CAST, 4, "2.9.0"},
    {TFL_OP_CONCATENATION, 1, "1.5.0"},   {TFL_OP_CONCATENATION, 2, "1.14.0"},
    {TFL_OP_FULLY_CONNECTED, 1, "1.5.0"}, {TFL_OP_FULLY_CONNECTED, 4, "1.14.0"},
    {TFL_OP_FULLY_CONNECTED, 5, "2.0.0"}, {TFL_OP_FULLY_CONNECTED, 6, "2.1.0"},
    {TFL_OP_MAX_POOL_2D, 1, "1.5.0"},     {TFL_OP_MAX_POOL_2D, 2, "1.14.0"},
    {TFL_OP_MAXIMUM, 1, "1.14.0"},        {TFL_OP_MAXIMUM, 2, "1.14.0"},
    {TFL_OP_MAXIMUM, 3, "2.3.0"},         {TFL_OP_MINIMUM, 1, "1.14.0"},
    {TFL_OP_MINIMUM, 2, "1.14.0"},        {TFL_OP_MINIMUM, 3, "2.3.0"},
    {TFL_OP_MUL, 1, "1.5.0"},             {TFL_OP_MUL, 2, "1.14.0"},
    {TFL_OP_MUL, 3, "1.15.0"},            {TFL_OP_PAD, 1, "1.5.0"},
    {TFL_OP_PAD, 2, "1.14.0"},            {TFL_OP_PAD, 4, "2.6.0"},
    {TFL_OP_PADV2, 1, "1.9.0"},           {TFL_OP_PADV2, 2, "1.14.0"},
    {TFL_OP_PADV2, 4, "2.6.0"},           {TFL_OP_RESHAPE, 1, "1.5.0"},
    {TFL_OP_SOFTMAX, 1, "1.5.0"},         {TFL_OP_SOFTMAX, 2, "1.14.0"},
    {TFL_OP_TRANSPOSE, 1, "1.6.0"},       {TFL_OP_TRANSPOSE, 2, "1.14.0"},
    {TFL_OP_TRANSPOSE, 3, "1.15.0"},      {TFL_OP_TRANSPOSE, 4, "2.3.0"},
    {TFL_OP_MEAN, 1, "1.6.0"},            {TFL_OP_MEAN, 2, "1.14.0"},
    {TFL_OP_SUM, 1, "1.10.0"},            {TFL_OP_SUM, 2, "1.15.0"},
    {TFL_OP_REDUCE_MAX, 1, "1.11.0"},     {TFL_OP_REDUCE_MAX, 2, "1.14.0"},
    {TFL_OP_REDUCE_MIN, 1, "1.11.0"},     {TFL_OP_REDUCE_MIN, 2, "1.14.0"},
    {TFL_OP_RELU6, 1, "1.5.0"},           {TFL_OP_RELU6, 2, "1.14.0"},
    {TFL_OP_RESIZE_BILINEAR, 1, "1.7.0"}, {TFL_OP_RESIZE_BILINEAR, 2, "1.14.0"},
    {TFL_OP_RESIZE_BILINEAR, 3, "2.2.0"},
    {TFL_OP_RESIZE_NEAREST_NEIGHBOR, 1, "1.13.1"},
    {TFL_OP_RESIZE_NEAREST_NEIGHBOR, 2, "1.14.0"},
    {TFL_OP_RESIZE_NEAREST_NEIGHBOR, 3, "2.3.0"},
    {TFL_OP_TANH, 1, "1.14.0"},           {TFL_OP_TANH, 2, "1.14.0"},
    {TFL_OP_LEAKY_RELU, 1, "1.13.1"},     {TFL_OP_LOGISTIC, 1, "1.14.0"},
    {TFL_OP_LOGISTIC, 2, "1.14.0"},       {TFL_OP_LOG_SOFTMAX, 1, "1.14.0"},
    {TFL_OP_LOG_SOFTMAX, 2, "1.14.0"},    {TFL_OP_MIRROR_PAD, 1, "1.13.1"},
    {TFL_OP_MIRROR_PAD, 2, "2.3.0"},      {TFL_OP_DEQUANTIZE, 1, "1.13.1"},
    {TFL_OP_DEQUANTIZE, 2, "1.14.0"},     {TFL_OP_DEQUANTIZE, 3, "1.15.0"},
    {TFL_OP_DEQUANTIZE, 5, "2.7.0"},      {TFL_OP_EQUAL, 1, "1.14.0"},
    {TFL_OP_EQUAL, 2, "1.14.0"},          {TFL_OP_GREATER, 1, "1.14.0"},
    {TFL_OP_GREATER, 2, "1.14.0"},        {TFL_OP_LESS, 1, "1.14.0"},
    {TFL_OP_LESS, 2, "1.14.0"},           {TFL_OP_QUANTIZE, 1, "1.14.0"},
    {TFL_OP_QUANTIZE, 2, "1.15.0"},       {TFL_OP_QUANTIZE, 3, "2.7.0"},
    {TFL_OP_RELU, 1, "1.5.0"},            {TFL_OP_RELU, 2, "2.1.0"},
    {TFL_OP_RELU_N1_TO_1, 1, "1.5.0"},    {TFL_OP_RELU_0_TO_1, 1, "2.10.0"},
    {TFL_OP_PRELU, 1, "1.8.0"},           {TFL_OP_EXP, 1, "1.7.0"},
    {TFL_OP_NEG, 1, "1.9.0"},             {TFL_OP_POW, 1, "1.10.0"},
    {TFL_OP_LOG, 1, "1.14.0"},            {TFL_OP_SQRT, 1, "1.10.0"},
    {TFL_OP_ABS, 1, "1.13.0"},            {TFL_OP_HARD_SWISH, 1, "1.15.0"},
    {TFL_OP_FLOOR, 1, "1.9.0"},           {TFL_OP_CEIL, 1, "1.14.0"},
    {TFL_OP_GELU, 1, "2.9.0"},            {TFL_OP_GELU, 2, "2.9.0"},
    {TFL_OP_GATHER, 1, "1.6.0"},          {TFL_OP_GATHER, 2, "1.14.0"},
    {TFL_OP_GATHER, 3, "1.15.0"},         {TFL_OP_GATHER, 4, "2.4.0"},
    {TFL_OP_STRIDED_SLICE, 1, "1.6.0"},   {TFL_OP_STRIDED_SLICE, 2, "1.14.0"},
    {TFL_OP_STRIDED_SLICE, 4, "2.2.0"},   {TFL_OP_SPLIT, 1, "1.5.0"},
    {TFL_OP_SPLIT, 2, "1.14.0"},          {TFL_OP_SPLIT_V, 1, "1.13.1"},
    {TFL_OP_SPLIT_V, 2, "2.3.0"},         {TFL_OP_TRANSPOSE_CONV, 1, "1.9.0"},
    {TFL_OP_TRANSPOSE_CONV, 2, "2.2.0"},  {TFL_OP_TRANSPOSE_CONV, 3, "2.3.0"},
    {TFL_OP_TRANSPOSE_CONV, 4, "2.13.0"}, {TFL_OP_SQUARED_DIFFERENCE, 1, "1.13.1"},
    {TFL_OP_RSQRT, 1, "1.10.0"},
    {TFL_OP_UNIDIRECTIONAL_SEQUENCE_LSTM, 1, "1.13.1"},
};

const char *tx_min_runtime(int32_t builtin, int version) {
  for (size_t i = 0; i < sizeof runtime_table / sizeof runtime_table[0]; i++)
    if (runtime_table[i].builtin == builtin &&
        runtime_table[i].version == version)
      return runtime_table[i].runtime;
  return "";
}

const char *tx_builtin_name(int32_t builtin) {
  switch (builtin) {
#define TFL_NAME_CASE(name, code)                                             \
  case code:                                                                  \
    return #name;
    TFL_BUILTINS(TFL_NAME_CASE)
#undef TFL_NAME_CASE
  default:
    return NULL;
  }
}
