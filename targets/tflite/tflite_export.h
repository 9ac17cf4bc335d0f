/*
 * tflite_export.h - the TFLite target: write one Quill graph as a TFLite
 * FlatBuffer (.tflite, schema version 3) that the TFLite interpreter and
 * vendor NPU/DSP toolchains load. No TensorFlow is involved: the buffer is
 * built directly (targets/tflite/flatbuf.c) from Quill's IR, keeping its
 * quantization parameters.
 *
 *   quill                                  TFLite
 *   float graph                            float32 tensors, builtin ops
 *   integer graph (qconv2d, qmatmul,       int8 tensors with scales and
 *     quantize/dequantize/requantize,        zero points (per tensor or
 *     pooling/data movement on quantized     per axis), int32 biases,
 *     tensors)                               fused activations
 *   reference QDQ form (dequantize ->      the same int8 builtin: the
 *     float op -> quantize)                  pattern is folded
 *
 * Layout: Quill is NCHW (ONNX); TFLite's spatial ops are NHWC. A layout
 * pass decides per value: 4-D values feeding or produced by spatial ops
 * (and the values connected to them through layout-agnostic ops) become
 * NHWC, constants are transposed at compile time (conv weights OIHW ->
 * OHWI, depthwise -> [1, H, W, C*M], fully connected [N, K]), axes of
 * concat/pad/mean/softmax are remapped. Such graph inputs and outputs are
 * NHWC in the .tflite; the "quill" metadata entry lists them:
 *
 *   quill <version>
 *   input <name> perm 0,2,3,1        (.tflite dim i = Quill dim perm[i])
 *   output <name> perm 0,2,3,1
 *
 * A TRANSPOSE is inserted only where a value is needed in both layouts
 * (with a warning naming the op).
 *
 * The int8 spec (backends/tflite-int8.json) is checked, and IR that breaks
 * it is refused with an error naming the op and the rule: weights int8
 * symmetric (zero point 0, values in [-127, 127]) per tensor or per output
 * channel, activations int8, biases int32 with scale s_in * s_w[c] and
 * zero point 0, equal input/output quantization where TFLite's kernel does
 * not rescale, the fixed output parameters of LOGISTIC, TANH and SOFTMAX.
 *
 * Other problems (an op without a TFLite builtin, a shape TFLite cannot
 * express, a model over 2 GB) are errors at the op's location:
 *   "op 'X' cannot be exported to TFLite: <reason>"
 * All of them are reported before the export fails. Nothing aborts.
 */
#ifndef QUILL_TARGETS_TFLITE_TFLITE_EXPORT_H
#define QUILL_TARGETS_TFLITE_TFLITE_EXPORT_H

#include <stdio.h>

#include "../../ir/ir.h"

QUILL_BEGIN_DECLS

/* The version string written into the "quill" metadata entry. */
#define QUILL_TFLITE_PRODUCER "quill 0.1"

typedef struct quill_tflite_export_options {
  /* Ops without a TFLite builtin become CUSTOM ops with custom_code
   * "quill.<mnemonic>" (a warning each; the runtime then needs a
   * registered kernel) instead of errors. */
  bool allow_custom_ops;
  /* Upper bound of the FlatBuffer in bytes; 0 means FlatBuffers' limit
   * of 2^31 - 1 (2 GB). Smaller values exist for tests. */
  size_t max_size;
} quill_tflite_export_options;

/* Export graph g to a new buffer. On success *data gets the FlatBuffer
 * (allocated through the context's allocator: release it with
 * quill_free(ctx, *data, *len)) and *len its size. On failure (error
 * diagnostics emitted; QUILL_ERR_NOMEM possibly without one) *data is
 * NULL and *len 0. opts may be NULL (defaults). The graph should have
 * passed the verifier. */
quill_status quill_tflite_export_buffer(quill_context *ctx,
                                        const quill_graph *g,
                                        const quill_tflite_export_options *opts,
                                        void **data, size_t *len);

/* Export graph g to the file at `path` (created or truncated). Same
 * failure behaviour; a file that cannot be written is QUILL_ERR_IO with a
 * diagnostic naming it, and nothing is written when the export fails. */
quill_status quill_tflite_export_file(quill_context *ctx, const quill_graph *g,
                                      const char *path,
                                      const quill_tflite_export_options *opts);

/* ---- op coverage (for tools and tests) ------------------------------------ */

/* The TFLite builtin(s) an opcode is written as ("CONV_2D/DEPTHWISE_CONV_2D"),
 * or NULL if it has no writer. */
const char *quill_tflite_export_builtin(quill_opcode opc);
/* True if the opcode is on the documented list of ops that cannot be
 * written; *why (if non-NULL) gets the reason. Every opcode has a writer
 * or a reason (a unit test walks 0..QUILL_OP_COUNT). */
bool quill_tflite_export_op_excluded(quill_opcode opc, const char **why);

/* ---- reading back ------------------------------------------------------------ */

/* Print a readable summary of a .tflite buffer to `out`: operator codes
 * with versions, tensors (type, shape, buffer size, quantization), ops
 * with inputs, outputs and options, the signature def and metadata.
 * Reads through the bounds-checked reader; returns QUILL_ERR_INVALID
 * (with a diagnostic) for a buffer it cannot read. */
quill_status quill_tflite_dump(quill_context *ctx, const void *data,
                               size_t len, FILE *out);

QUILL_END_DECLS

#endif /* QUILL_TARGETS_TFLITE_TFLITE_EXPORT_H */
