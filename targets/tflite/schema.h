/*
 * schema.h - the subset of the TFLite FlatBuffers schema (schema.fbs,
 * schema version 3, file identifier "TFL3") that the TFLite target reads
 * and writes, as named constants.
 *
 * Written from the published schema (tensorflow/compiler/mlir/lite/schema/
 * schema.fbs). A field id is the field's declaration index in its table;
 * a union field takes two ids (`x_type`, then `x`); deprecated fields keep
 * their ids. Defaults are the schema's (0 / false / NONE unless the
 * schema says otherwise: they are spelled out where they are not 0).
 * test/targets/tflite/Inputs/check_schema.py compares every constant here
 * with the `tflite` Python package, which flatc generated from the same
 * schema.
 */
#ifndef QUILL_TARGETS_TFLITE_SCHEMA_H
#define QUILL_TARGETS_TFLITE_SCHEMA_H

#define TFL_FILE_IDENTIFIER "TFL3"
#define TFL_SCHEMA_VERSION 3

/* enum TensorType : byte */
enum {
  TFL_FLOAT32 = 0, TFL_FLOAT16 = 1, TFL_INT32 = 2, TFL_UINT8 = 3,
  TFL_INT64 = 4, TFL_STRING = 5, TFL_BOOL = 6, TFL_INT16 = 7,
  TFL_COMPLEX64 = 8, TFL_INT8 = 9, TFL_FLOAT64 = 10, TFL_COMPLEX128 = 11,
  TFL_UINT64 = 12, TFL_RESOURCE = 13, TFL_VARIANT = 14, TFL_UINT32 = 15,
  TFL_UINT16 = 16, TFL_INT4 = 17, TFL_BFLOAT16 = 18,
};

/* enum BuiltinOperator : int32 -- the operators Quill writes or names.
 * TFL_BUILTIN(NAME, code) */
#define TFL_BUILTINS(X)                                                       \
  X(ADD, 0) X(AVERAGE_POOL_2D, 1) X(CONCATENATION, 2) X(CONV_2D, 3)           \
  X(DEPTHWISE_CONV_2D, 4) X(DEQUANTIZE, 6) X(FLOOR, 8)                        \
  X(FULLY_CONNECTED, 9) X(LOGISTIC, 14) X(MAX_POOL_2D, 17) X(MUL, 18)         \
  X(RELU, 19) X(RELU_N1_TO_1, 20) X(RELU6, 21) X(RESHAPE, 22)                 \
  X(RESIZE_BILINEAR, 23) X(SOFTMAX, 25) X(TANH, 28) X(CUSTOM, 32)             \
  X(PAD, 34) X(GATHER, 36) X(TRANSPOSE, 39) X(MEAN, 40) X(SUB, 41)            \
  X(DIV, 42) X(SQUEEZE, 43) X(UNIDIRECTIONAL_SEQUENCE_LSTM, 44)              \
  X(STRIDED_SLICE, 45) X(EXP, 47) X(SPLIT, 49)      \
  X(LOG_SOFTMAX, 50) X(CAST, 53) X(PRELU, 54) X(MAXIMUM, 55)                  \
  X(MINIMUM, 57) X(LESS, 58) X(NEG, 59) X(PADV2, 60) X(GREATER, 61)           \
  X(SLICE, 65) X(TRANSPOSE_CONV, 67) X(EQUAL, 71) X(LOG, 73) X(SUM, 74)       \
  X(SQRT, 75) X(RSQRT, 76) X(POW, 78) X(REDUCE_MAX, 82) X(REDUCE_MIN, 89)     \
  X(RESIZE_NEAREST_NEIGHBOR, 97) X(LEAKY_RELU, 98)                          \
  X(SQUARED_DIFFERENCE, 99) X(MIRROR_PAD, 100)                                \
  X(ABS, 101) X(SPLIT_V, 102) X(CEIL, 104) X(QUANTIZE, 114)                   \
  X(HARD_SWISH, 117) X(SELECT_V2, 123) X(BATCH_MATMUL, 126)                   \
  X(PLACEHOLDER_FOR_GREATER_OP_CODES, 127) X(GELU, 150) X(RELU_0_TO_1, 152)

enum {
#define TFL_ENUM_BUILTIN(name, code) TFL_OP_##name = code,
  TFL_BUILTINS(TFL_ENUM_BUILTIN)
#undef TFL_ENUM_BUILTIN
};

/* union BuiltinOptions: the 1-based member index (0 = NONE) of the
 * options tables Quill writes. TFL_OPTION(Name, index) */
#define TFL_OPTIONS(X)                                                        \
  X(Conv2DOptions, 1) X(DepthwiseConv2DOptions, 2) X(Pool2DOptions, 5)        \
  X(FullyConnectedOptions, 8) X(SoftmaxOptions, 9)                            \
  X(ConcatenationOptions, 10) X(AddOptions, 11)                               \
  X(ResizeBilinearOptions, 15) X(ReshapeOptions, 17) X(MulOptions, 21)        \
  X(PadOptions, 22) X(GatherOptions, 23) X(TransposeOptions, 26)              \
  X(ReducerOptions, 27) X(SubOptions, 28) X(DivOptions, 29)                   \
  X(SqueezeOptions, 30) X(StridedSliceOptions, 32) X(ExpOptions, 33)          \
  X(SplitOptions, 35) X(LogSoftmaxOptions, 36) X(CastOptions, 37)             \
  X(DequantizeOptions, 38) X(MaximumMinimumOptions, 39) X(LessOptions, 41)    \
  X(NegOptions, 42) X(PadV2Options, 43) X(GreaterOptions, 44)                 \
  X(SliceOptions, 48) X(TransposeConvOptions, 49) X(EqualOptions, 53)         \
  X(PowOptions, 56) X(ResizeNearestNeighborOptions, 74)                       \
  X(LeakyReluOptions, 75) X(MirrorPadOptions, 77) X(AbsOptions, 78)           \
  X(UnidirectionalSequenceLSTMOptions, 71)                                    \
  X(SplitVOptions, 79) X(QuantizeOptions, 89) X(HardSwishOptions, 91)         \
  X(SelectV2Options, 98) X(BatchMatMulOptions, 101) X(GeluOptions, 116)

enum {
  TFL_OPT_NONE = 0,
#define TFL_ENUM_OPTION(name, index) TFL_OPT_##name = index,
  TFL_OPTIONS(TFL_ENUM_OPTION)
#undef TFL_ENUM_OPTION
};

/* enum Padding : byte */
enum { TFL_PADDING_SAME = 0, TFL_PADDING_VALID = 1 };
/* enum ActivationFunctionType : byte */
enum {
  TFL_ACT_NONE = 0, TFL_ACT_RELU = 1, TFL_ACT_RELU_N1_TO_1 = 2,
  TFL_ACT_RELU6 = 3, TFL_ACT_TANH = 4, TFL_ACT_SIGN_BIT = 5,
};
/* enum MirrorPadMode : byte */
enum { TFL_MIRROR_REFLECT = 0, TFL_MIRROR_SYMMETRIC = 1 };

/* ---- tables: field ids ------------------------------------------------------ */

/* table Model */
enum {
  TFL_MODEL_VERSION = 0,         /* uint */
  TFL_MODEL_OPERATOR_CODES = 1,  /* [OperatorCode] */
  TFL_MODEL_SUBGRAPHS = 2,       /* [SubGraph] */
  TFL_MODEL_DESCRIPTION = 3,     /* string */
  TFL_MODEL_BUFFERS = 4,         /* [Buffer]; buffers[0] is empty */
  TFL_MODEL_METADATA_BUFFER = 5, /* [int] (deprecated in favour of 6) */
  TFL_MODEL_METADATA = 6,        /* [Metadata] */
  TFL_MODEL_SIGNATURE_DEFS = 7,  /* [SignatureDef] */
};
/* table OperatorCode */
enum {
  TFL_OPCODE_DEPRECATED_BUILTIN_CODE = 0, /* byte: min(code, 127) */
  TFL_OPCODE_CUSTOM_CODE = 1,             /* string */
  TFL_OPCODE_VERSION = 2,                 /* int = 1 */
  TFL_OPCODE_BUILTIN_CODE = 3,            /* BuiltinOperator (int32) */
};
#define TFL_OPCODE_VERSION_DEFAULT 1
/* table SubGraph */
enum {
  TFL_SUBGRAPH_TENSORS = 0, TFL_SUBGRAPH_INPUTS = 1, TFL_SUBGRAPH_OUTPUTS = 2,
  TFL_SUBGRAPH_OPERATORS = 3, TFL_SUBGRAPH_NAME = 4,
};
/* table Tensor */
enum {
  TFL_TENSOR_SHAPE = 0,        /* [int] */
  TFL_TENSOR_TYPE = 1,         /* TensorType (byte) */
  TFL_TENSOR_BUFFER = 2,       /* uint: index into Model.buffers, 0 = none */
  TFL_TENSOR_NAME = 3,         /* string */
  TFL_TENSOR_QUANTIZATION = 4, /* QuantizationParameters */
  TFL_TENSOR_IS_VARIABLE = 5,  /* bool */
  TFL_TENSOR_SPARSITY = 6,
  TFL_TENSOR_SHAPE_SIGNATURE = 7, /* [int], -1 = unknown dim */
  TFL_TENSOR_HAS_RANK = 8,        /* bool */
  TFL_TENSOR_VARIANT_TENSORS = 9,
};
/* table QuantizationParameters */
enum {
  TFL_QUANT_MIN = 0, TFL_QUANT_MAX = 1,
  TFL_QUANT_SCALE = 2,               /* [float] */
  TFL_QUANT_ZERO_POINT = 3,          /* [long] */
  TFL_QUANT_DETAILS_TYPE = 4, TFL_QUANT_DETAILS = 5,
  TFL_QUANT_QUANTIZED_DIMENSION = 6, /* int */
};
/* table Operator */
enum {
  TFL_OPERATOR_OPCODE_INDEX = 0,          /* uint */
  TFL_OPERATOR_INPUTS = 1,                /* [int], -1 = absent optional */
  TFL_OPERATOR_OUTPUTS = 2,               /* [int] */
  TFL_OPERATOR_BUILTIN_OPTIONS_TYPE = 3,  /* union BuiltinOptions */
  TFL_OPERATOR_BUILTIN_OPTIONS = 4,
  TFL_OPERATOR_CUSTOM_OPTIONS = 5,        /* [ubyte] */
  TFL_OPERATOR_CUSTOM_OPTIONS_FORMAT = 6, /* CustomOptionsFormat (byte) */
  TFL_OPERATOR_MUTATING_VARIABLE_INPUTS = 7,
  TFL_OPERATOR_INTERMEDIATES = 8,
  TFL_OPERATOR_LARGE_CUSTOM_OPTIONS_OFFSET = 9,
  TFL_OPERATOR_LARGE_CUSTOM_OPTIONS_SIZE = 10,
  TFL_OPERATOR_BUILTIN_OPTIONS_2_TYPE = 11,
  TFL_OPERATOR_BUILTIN_OPTIONS_2 = 12,
};
/* table Buffer */
enum {
  TFL_BUFFER_DATA = 0,   /* [ubyte] (force_align: 16) */
  TFL_BUFFER_OFFSET = 1, /* ulong (models over 2 GB) */
  TFL_BUFFER_SIZE = 2,   /* ulong */
};
#define TFL_BUFFER_DATA_ALIGN 16
/* table Metadata */
enum { TFL_METADATA_NAME = 0, TFL_METADATA_BUFFER = 1 };
/* table TensorMap */
enum { TFL_TENSORMAP_NAME = 0, TFL_TENSORMAP_TENSOR_INDEX = 1 };
/* table SignatureDef */
enum {
  TFL_SIGDEF_INPUTS = 0, TFL_SIGDEF_OUTPUTS = 1, TFL_SIGDEF_SIGNATURE_KEY = 2,
  TFL_SIGDEF_DEPRECATED_TAG = 3, TFL_SIGDEF_SUBGRAPH_INDEX = 4,
};

/* ---- options tables: field ids ------------------------------------------------ */

/* Conv2DOptions */
enum {
  TFL_CONV2D_PADDING = 0, TFL_CONV2D_STRIDE_W = 1, TFL_CONV2D_STRIDE_H = 2,
  TFL_CONV2D_FUSED_ACTIVATION = 3,
  TFL_CONV2D_DILATION_W = 4, /* int = 1 */
  TFL_CONV2D_DILATION_H = 5, /* int = 1 */
  TFL_CONV2D_QUANTIZED_BIAS_TYPE = 6,
};
/* DepthwiseConv2DOptions */
enum {
  TFL_DWCONV_PADDING = 0, TFL_DWCONV_STRIDE_W = 1, TFL_DWCONV_STRIDE_H = 2,
  TFL_DWCONV_DEPTH_MULTIPLIER = 3, TFL_DWCONV_FUSED_ACTIVATION = 4,
  TFL_DWCONV_DILATION_W = 5, /* int = 1 */
  TFL_DWCONV_DILATION_H = 6, /* int = 1 */
};
#define TFL_DILATION_DEFAULT 1
/* Pool2DOptions */
enum {
  TFL_POOL_PADDING = 0, TFL_POOL_STRIDE_W = 1, TFL_POOL_STRIDE_H = 2,
  TFL_POOL_FILTER_WIDTH = 3, TFL_POOL_FILTER_HEIGHT = 4,
  TFL_POOL_FUSED_ACTIVATION = 5,
};
/* FullyConnectedOptions */
enum {
  TFL_FC_FUSED_ACTIVATION = 0, TFL_FC_WEIGHTS_FORMAT = 1,
  TFL_FC_KEEP_NUM_DIMS = 2, TFL_FC_ASYMMETRIC_QUANTIZE_INPUTS = 3,
  TFL_FC_QUANTIZED_BIAS_TYPE = 4,
};
/* SoftmaxOptions */
enum { TFL_SOFTMAX_BETA = 0 /* float */ };
/* ConcatenationOptions */
enum { TFL_CONCAT_AXIS = 0, TFL_CONCAT_FUSED_ACTIVATION = 1 };
/* AddOptions, SubOptions */
enum {
  TFL_ADD_FUSED_ACTIVATION = 0,
  TFL_ADD_POT_SCALE_INT16 = 1, /* bool = true */
};
#define TFL_POT_SCALE_INT16_DEFAULT true
/* MulOptions, DivOptions */
enum { TFL_MUL_FUSED_ACTIVATION = 0 };
/* ReshapeOptions */
enum { TFL_RESHAPE_NEW_SHAPE = 0 /* [int] */ };
/* ReducerOptions */
enum { TFL_REDUCER_KEEP_DIMS = 0 };
/* ResizeBilinearOptions (new_height, new_width deprecated) */
enum {
  TFL_RESIZE_BILINEAR_ALIGN_CORNERS = 2,
  TFL_RESIZE_BILINEAR_HALF_PIXEL_CENTERS = 3,
};
/* ResizeNearestNeighborOptions */
enum {
  TFL_RESIZE_NEAREST_ALIGN_CORNERS = 0,
  TFL_RESIZE_NEAREST_HALF_PIXEL_CENTERS = 1,
};
/* BatchMatMulOptions */
enum {
  TFL_BMM_ADJ_X = 0, TFL_BMM_ADJ_Y = 1, TFL_BMM_ASYMMETRIC_QUANTIZE_INPUTS = 2,
};
/* LeakyReluOptions */
enum { TFL_LEAKY_RELU_ALPHA = 0 /* float */ };
/* GatherOptions */
enum { TFL_GATHER_AXIS = 0, TFL_GATHER_BATCH_DIMS = 1 };
/* SplitOptions, SplitVOptions */
enum { TFL_SPLIT_NUM_SPLITS = 0 };
/* SqueezeOptions */
enum { TFL_SQUEEZE_DIMS = 0 };
/* StridedSliceOptions */
enum {
  TFL_STRIDED_SLICE_BEGIN_MASK = 0, TFL_STRIDED_SLICE_END_MASK = 1,
  TFL_STRIDED_SLICE_ELLIPSIS_MASK = 2, TFL_STRIDED_SLICE_NEW_AXIS_MASK = 3,
  TFL_STRIDED_SLICE_SHRINK_AXIS_MASK = 4, TFL_STRIDED_SLICE_OFFSET = 5,
};
/* CastOptions */
enum { TFL_CAST_IN_DATA_TYPE = 0, TFL_CAST_OUT_DATA_TYPE = 1 };
/* MirrorPadOptions */
enum { TFL_MIRROR_PAD_MODE = 0 };
/* GeluOptions */
enum { TFL_GELU_APPROXIMATE = 0 };
/* TransposeConvOptions */
enum {
  TFL_TCONV_PADDING = 0, TFL_TCONV_STRIDE_W = 1, TFL_TCONV_STRIDE_H = 2,
  TFL_TCONV_FUSED_ACTIVATION = 3,
};
/* UnidirectionalSequenceLSTMOptions */
enum {
  TFL_USLSTM_FUSED_ACTIVATION = 0, TFL_USLSTM_CELL_CLIP = 1, /* float */
  TFL_USLSTM_PROJ_CLIP = 2,                                  /* float */
  TFL_USLSTM_TIME_MAJOR = 3, TFL_USLSTM_ASYMMETRIC_QUANTIZE_INPUTS = 4,
  TFL_USLSTM_DIAGONAL_RECURRENT_TENSORS = 5,
};

#endif /* QUILL_TARGETS_TFLITE_SCHEMA_H */
