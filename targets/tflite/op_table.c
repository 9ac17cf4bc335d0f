/*
 * op_table.c - the opcode-indexed table from Quill ops to TFLite writers,
 * and the documented list of ops that have no TFLite builtin.
 *
 * One row per opcode:
 *
 *   [QUILL_OP_ADD] = {tx_write_binary, "ADD", TXL_AGNOSTIC, true,
 *                     TFL_OP_ADD, TFL_OPT_AddOptions, false},
 *
 *   write      the writer (ops_conv.c, ops_nn.c, ops_shape.c, ops_misc.c)
 *   builtins   the TFLite builtin(s) written, for listings
 *   layout     TXL_SPATIAL (NHWC operand 0 and result), TXL_AGNOSTIC (any
 *              layout, one for operands and result), TXL_NONE (layout
 *              fixed or decided by the writer)
 *   int8       TFLite has an int8 kernel: the QDQ pattern around the float
 *              op folds into it
 *   builtin, opt_type   for the generic unary/binary writers
 *   int16      TFLite has a 16x8 kernel (int16 activations, zero point 0;
 *              int8 weights, int64 bias) and the writer writes it
 *
 * Every row spells every field: clang's -Wmissing-field-initializers
 * (the fuzzing build) rejects a positional row that stops short.
 *
 * A new op is one row here plus, if no generic writer fits, one writer
 * function. An opcode without a writer must be listed in `excluded` with
 * a reason; test/unit/test_tflite_export.c walks 0..QUILL_OP_COUNT.
 */
#include "targets/tflite/export_impl.h"

#define SP TXL_SPATIAL
#define AG TXL_AGNOSTIC
#define NO TXL_NONE
#define UNARY(name, int8) tx_write_unary, #name, AG, int8, TFL_OP_##name
#define BINARY(name, opt, int8) tx_write_binary, #name, AG, int8, TFL_OP_##name, opt

const tx_entry tx_table[QUILL_OP_COUNT] = {
    /* structure */
    [QUILL_OP_CONSTANT] = {tx_write_constant, "(constant tensor)", NO, false, 0, 0, false},
    [QUILL_OP_IDENTITY] = {tx_write_identity, "RESHAPE (copy) or none", AG, true, 0, 0, true},
    /* elementwise unary */
    [QUILL_OP_RELU] = {tx_write_relu, "RELU", AG, true, 0, 0, false},
    [QUILL_OP_LEAKY_RELU] = {tx_write_leaky_relu, "LEAKY_RELU", AG, true, 0, 0, false},
    [QUILL_OP_CLIP] = {tx_write_clip, "RELU/RELU6/RELU_N1_TO_1/RELU_0_TO_1 or MAXIMUM+MINIMUM",
                       AG, true, 0, 0, false},
    [QUILL_OP_SIGMOID] = {UNARY(LOGISTIC, true), 0, false},
    [QUILL_OP_TANH] = {UNARY(TANH, true), 0, false},
    [QUILL_OP_HARD_SWISH] = {UNARY(HARD_SWISH, true), TFL_OPT_HardSwishOptions, false},
    [QUILL_OP_GELU] = {UNARY(GELU, true), TFL_OPT_GeluOptions, false},
    [QUILL_OP_SQRT] = {UNARY(SQRT, false), 0, false},
    [QUILL_OP_EXP] = {UNARY(EXP, false), TFL_OPT_ExpOptions, false},
    [QUILL_OP_LOG] = {UNARY(LOG, false), 0, false},
    [QUILL_OP_NEG] = {UNARY(NEG, false), TFL_OPT_NegOptions, false},
    [QUILL_OP_ABS] = {UNARY(ABS, false), TFL_OPT_AbsOptions, false},
    [QUILL_OP_FLOOR] = {UNARY(FLOOR, false), 0, false},
    [QUILL_OP_CEIL] = {UNARY(CEIL, false), 0, false},
    [QUILL_OP_CAST] = {tx_write_cast, "CAST", AG, false, 0, 0, false},
    /* elementwise binary */
    [QUILL_OP_ADD] = {BINARY(ADD, TFL_OPT_AddOptions, true), false},
    [QUILL_OP_SUB] = {BINARY(SUB, TFL_OPT_SubOptions, true), false},
    [QUILL_OP_MUL] = {BINARY(MUL, TFL_OPT_MulOptions, true), false},
    [QUILL_OP_DIV] = {BINARY(DIV, TFL_OPT_DivOptions, false), false},
    [QUILL_OP_POW] = {BINARY(POW, TFL_OPT_PowOptions, false), false},
    [QUILL_OP_MAX] = {BINARY(MAXIMUM, TFL_OPT_MaximumMinimumOptions, true), false},
    [QUILL_OP_MIN] = {BINARY(MINIMUM, TFL_OPT_MaximumMinimumOptions, true), false},
    [QUILL_OP_PRELU] = {BINARY(PRELU, 0, true), false},
    [QUILL_OP_EQUAL] = {BINARY(EQUAL, TFL_OPT_EqualOptions, false), false},
    [QUILL_OP_LESS] = {BINARY(LESS, TFL_OPT_LessOptions, false), false},
    [QUILL_OP_GREATER] = {BINARY(GREATER, TFL_OPT_GreaterOptions, false), false},
    /* linear algebra */
    [QUILL_OP_CONV2D] = {tx_write_conv, "CONV_2D/DEPTHWISE_CONV_2D", SP, true, 0, 0, false},
    /* conv_transpose2d is not folded either: Quill has no integer
     * transposed convolution, its quantized graphs keep it float, and
     * TFLite's int8 TRANSPOSE_CONV requantizes in fixed point (PP-OCRv4
     * det: 1 step on 1140 values, 57 at the output after its sigmoid).
     * Written as DEQUANTIZE, float TRANSPOSE_CONV (weights dequantized at
     * compile time as the interpreter does), QUANTIZE: with a kernel no
     * larger than the stride each output is one dot product summed in
     * input-channel order in both. */
    [QUILL_OP_CONV_TRANSPOSE2D] = {tx_write_conv_transpose, "TRANSPOSE_CONV (+ STRIDED_SLICE)",
                                   SP, false, 0, 0, false},
    [QUILL_OP_BATCH_NORM] = {tx_write_batch_norm, "MUL + ADD", AG, false, 0, 0, false},
    [QUILL_OP_LAYER_NORM] = {tx_write_layer_norm,
                             "MEAN, SQUARED_DIFFERENCE, RSQRT, SUB, MUL, ADD", NO, false,
                             0, 0, false},
    /* one float layer, the reference kernel's definition (ops_rnn.c) */
    [QUILL_OP_LSTM] = {tx_write_lstm, "UNIDIRECTIONAL_SEQUENCE_LSTM", NO, false, 0, 0, false},
    [QUILL_OP_MATMUL] = {tx_write_matmul, "FULLY_CONNECTED/BATCH_MATMUL", NO, true, 0, 0, false},
    [QUILL_OP_GEMM] = {tx_write_gemm, "FULLY_CONNECTED/BATCH_MATMUL", NO, true, 0, 0, false},
    /* pooling and reductions */
    [QUILL_OP_MAXPOOL] = {tx_write_pool, "MAX_POOL_2D", SP, true, 0, 0, true},
    [QUILL_OP_AVGPOOL] = {tx_write_pool, "AVERAGE_POOL_2D", SP, true, 0, 0, true},
    [QUILL_OP_GLOBAL_AVGPOOL] = {tx_write_global_pool, "AVERAGE_POOL_2D or MEAN (int8, rescaling)", SP, true, 0, 0, true},
    [QUILL_OP_GLOBAL_MAXPOOL] = {tx_write_global_pool, "MAX_POOL_2D", SP, true, 0, 0, true},
    /* reduce_mean is not folded: Quill's quantized graphs keep it float
     * (dequantize, mean accumulated exactly, quantize), and TFLite's int8
     * MEAN requantizes its integer sum in fixed point, which rounds
     * otherwise (mnasnet1_0: 1 step on 98 of 1000 logits). Written as
     * DEQUANTIZE, float MEAN, QUANTIZE, it computes what Quill computes. */
    [QUILL_OP_REDUCE_MEAN] = {tx_write_reduce, "MEAN", AG, false, 0, 0, false},
    [QUILL_OP_REDUCE_SUM] = {tx_write_reduce, "SUM", AG, false, 0, 0, false},
    [QUILL_OP_REDUCE_MAX] = {tx_write_reduce, "REDUCE_MAX", AG, true, 0, 0, false},
    [QUILL_OP_REDUCE_MIN] = {tx_write_reduce, "REDUCE_MIN", AG, true, 0, 0, false},
    [QUILL_OP_SOFTMAX] = {tx_write_softmax, "SOFTMAX", NO, true, 0, 0, true},
    [QUILL_OP_LOG_SOFTMAX] = {tx_write_softmax, "LOG_SOFTMAX", NO, true, 0, 0, false},
    /* data movement */
    [QUILL_OP_CONCAT] = {tx_write_concat, "CONCATENATION", AG, true, 0, 0, true},
    [QUILL_OP_PAD] = {tx_write_pad, "PAD/PADV2/MIRROR_PAD", AG, true, 0, 0, true},
    [QUILL_OP_RESHAPE] = {tx_write_reshape, "RESHAPE", NO, true, 0, 0, true},
    [QUILL_OP_FLATTEN] = {tx_write_reshape, "RESHAPE", NO, true, 0, 0, true},
    [QUILL_OP_SQUEEZE] = {tx_write_reshape, "RESHAPE", NO, true, 0, 0, true},
    [QUILL_OP_UNSQUEEZE] = {tx_write_reshape, "RESHAPE", NO, true, 0, 0, true},
    [QUILL_OP_SLICE] = {tx_write_slice, "STRIDED_SLICE", AG, true, 0, 0, true},
    [QUILL_OP_SPLIT] = {tx_write_split, "SPLIT/SPLIT_V", AG, false, 0, 0, false},
    [QUILL_OP_GATHER] = {tx_write_gather, "GATHER", NO, true, 0, 0, false},
    [QUILL_OP_TRANSPOSE] = {tx_write_transpose, "TRANSPOSE", NO, true, 0, 0, true},
    [QUILL_OP_RESIZE] = {tx_write_resize, "RESIZE_BILINEAR/RESIZE_NEAREST_NEIGHBOR", SP,
                         true, 0, 0, false},
    /* quantization */
    [QUILL_OP_QUANTIZE] = {tx_write_quantize, "QUANTIZE", AG, false, 0, 0, true},
    [QUILL_OP_DEQUANTIZE] = {tx_write_dequantize, "DEQUANTIZE", AG, false, 0, 0, true},
    [QUILL_OP_REQUANTIZE] = {tx_write_requantize, "QUANTIZE (int8 -> int8)", AG, false, 0,
                             0, true},
    /* integer ops */
    [QUILL_OP_QCONV2D] = {tx_write_conv, "CONV_2D/DEPTHWISE_CONV_2D", SP, false, 0, 0, true},
    [QUILL_OP_QMATMUL] = {tx_write_matmul, "FULLY_CONNECTED/BATCH_MATMUL", NO, false, 0,
                          0, true},
    [QUILL_OP_QADD] = {tx_write_qbinary, "ADD", AG, true, TFL_OP_ADD, TFL_OPT_AddOptions, true},
    [QUILL_OP_QMUL] = {tx_write_qbinary, "MUL", AG, true, TFL_OP_MUL, TFL_OPT_MulOptions, true},
    /* int16: the tables of TFLite's int16 LOGISTIC and TANH only */
    [QUILL_OP_QLSTM] = {tx_write_qlstm, "UNIDIRECTIONAL_SEQUENCE_LSTM (int8, 16-bit cell)",
                        NO, false, 0, 0, false},
    [QUILL_OP_LUT] = {tx_write_lut, "CAST+ADD+GATHER (the table); LOGISTIC/TANH (int16)",
                      AG, false, 0, 0, true},
    /* extension */
    [QUILL_OP_CUSTOM] = {tx_write_custom, "CUSTOM (custom code: the op's name)", NO, false,
                         0, 0, false},
};

/* Ops without a writer, with the reason (opcode-indexed; NULL: has a
 * writer). */
static const char *const excluded[QUILL_OP_COUNT] = {
    [QUILL_OP_RETURN] = "the graph's outputs (no op)",
    [QUILL_OP_HARD_SIGMOID] = "TFLite has no HARD_SIGMOID builtin",
    [QUILL_OP_ERF] = "TFLite has no ERF builtin",
    [QUILL_OP_RECIPROCAL] = "not written yet (DIV of a constant 1 would do)",
    [QUILL_OP_WHERE] = "not written yet (SELECT_V2)",
    [QUILL_OP_FAKE_QUANT] = "calibrate and quantize the model first",
    [QUILL_OP_SCAST] = "TFLite tensors have no storage-cast",
    [QUILL_OP_DYNAMIC_QUANTIZE] = "TFLite has no dynamic quantization builtin",
    [QUILL_OP_QLAYER_NORM] = "TFLite has no integer LayerNorm; quantize with a backend "
                             "whose layer_norm_numerics is \"f32\" (tflite-int8: float "
                             "builtins between a DEQUANTIZE and a QUANTIZE)",
};

const char *quill_tflite_export_builtin(quill_opcode opc) {
  if ((unsigned)opc >= QUILL_OP_COUNT || !tx_table[opc].write)
    return NULL;
  return tx_table[opc].builtins;
}

bool quill_tflite_export_op_excluded(quill_opcode opc, const char **why) {
  if ((unsigned)opc >= QUILL_OP_COUNT || !excluded[opc])
    return false;
  if (why)
    *why = excluded[opc];
  return true;
}
