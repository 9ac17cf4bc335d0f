/*
 * onnx_export.h - the ONNX target: export one Quill graph as an ONNX model
 * (protobuf) that onnxruntime and other ONNX consumers run.
 *
 * Float graphs become plain ONNX graphs (opset 13, raised to 14 or 17 when
 * an op needs it). Quantized graphs in Quill's reference form (float ops
 * between `dequantize` and `quantize`, integer constants for weights and
 * biases; docs/quantization.md section 2) become ONNX QDQ graphs:
 *
 *   quill                                   ONNX
 *   quantize %x : !quant.uniform<i8..>      QuantizeLinear(x, scale, zp)
 *   dequantize %q                           DequantizeLinear(q, scale, zp)
 *   constant : tensor<..x!quant.uniform>    integer initializer (storage)
 *   qconv2d / qmatmul                       QLinearConv / QLinearMatMul
 *                                           (ConvInteger / MatMulInteger
 *                                           for an i32 result)
 *
 * Quantized values are ONNX tensors of their storage type (int8, uint8,
 * int32); scales and zero points become initializers. Tensor names are the
 * values' names (an imported model's tensor names come back unchanged;
 * control characters become '_', duplicates get _1, _2...); unnamed values
 * are numbered as the .qir printer numbers them (%0 -> "0", an unnamed
 * argument #1 -> "arg1"), except that an unnamed quantized constant
 * feeding a dequantize %w is named "w_quantized". Node names are the ops'
 * location names (made unique with "#2", "#3"...), or "<mnemonic>_<index>"
 * for ops without one.
 *
 * Problems (an op without an ONNX counterpart, a type ONNX cannot hold, an
 * attribute value ONNX cannot express) are reported as error diagnostics
 * at the op's location, all of them before the export gives up:
 *   "op 'X' cannot be exported to ONNX: <reason>".
 * Nothing aborts. The graph should have passed the verifier.
 */
#ifndef QUILL_TARGETS_ONNX_ONNX_EXPORT_H
#define QUILL_TARGETS_ONNX_ONNX_EXPORT_H

#include "ir/ir.h"

/* Lowest and highest default-domain opset the exporter writes. */
#define QUILL_ONNX_EXPORT_MIN_OPSET 13
#define QUILL_ONNX_EXPORT_MAX_OPSET 17
/* The ModelProto ir_version written (ONNX 1.12 / onnxruntime 1.19 read
 * it). */
#define QUILL_ONNX_EXPORT_IR_VERSION 8

typedef struct quill_onnx_export_options {
  /* Default-domain opset to write: 0 picks the lowest one (>= 13) that
   * every op of the graph needs; otherwise 13..17, and an op needing a
   * newer opset is an error. */
  int64_t opset;
  /* Do not write value_info (types and shapes) for intermediate values;
   * graph inputs and outputs always get theirs. */
  bool omit_value_info;
} quill_onnx_export_options;

/* Export graph g as an ONNX model to a new buffer. On success *data gets
 * the serialized ModelProto (allocated through the context's allocator)
 * and *len its size: release it with quill_free(ctx, *data, *len). On
 * failure (diagnostics emitted; QUILL_ERR_NOMEM possibly without one)
 * *data is NULL and *len 0. opts may be NULL (defaults). */
quill_status quill_onnx_export_buffer(quill_context *ctx, const quill_graph *g,
                                      const quill_onnx_export_options *opts,
                                      void **data, size_t *len);

/* Export graph g as an ONNX model to the file at `path` (created or
 * truncated). Same failure behaviour as quill_onnx_export_buffer(); a file
 * that cannot be written is QUILL_ERR_IO with a diagnostic naming it. On
 * failure the file is not written (it may exist, truncated, if the write
 * itself failed). */
quill_status quill_onnx_export_file(quill_context *ctx, const quill_graph *g,
                                    const char *path,
                                    const quill_onnx_export_options *opts);

/* ---- op coverage (for tools and tests) ---------------------------------- */

/* The ONNX op type an opcode exports to ("Conv"), a short description for
 * ops that export as several nodes ("QuantizeLinear+DequantizeLinear"), or
 * NULL if the opcode has no exporter. */
const char *quill_onnx_export_op_type(quill_opcode opc);

/* True if the opcode is on the documented list of ops that cannot be
 * exported; *why (if non-NULL) gets the reason. Every opcode either has an
 * exporter or is on this list (a unit test walks 0..QUILL_OP_COUNT). */
bool quill_onnx_export_op_excluded(quill_opcode opc, const char **why);

#endif /* QUILL_TARGETS_ONNX_ONNX_EXPORT_H */
