/*
 * onnx.h - the ONNX frontend: import an ONNX model (protobuf) into a Quill
 * module.
 *
 * The model's main graph becomes one Quill graph named after the ONNX graph
 * (sanitised to [A-Za-z0-9_.$]): its arguments are the graph inputs that are
 * not initializers, its results the graph outputs. Initializers become
 * `constant` ops, node names become op locations (`loc("conv1")`, or
 * "<OpType>_<index>" for unnamed nodes) and ONNX tensor names become value
 * names. Result types come from static shape inference (ir/shape.h) and are
 * checked against the model's value_info when present.
 *
 * Graph inputs can be bound to constant tensors (options.bindings).
 *
 * Every problem (corrupt protobuf, unknown ops, bad attributes, shapes that
 * do not fit, dangling edges, cycles, symbolic dims without a user shape) is
 * reported through the context's diagnostic handler, located at the node;
 * the import then returns NULL. Nothing aborts.
 */
#ifndef QUILL_FRONTENDS_ONNX_ONNX_H
#define QUILL_FRONTENDS_ONNX_ONNX_H

#include "../../ir/ir.h"
#include "../../targets/reference/ref.h"

QUILL_BEGIN_DECLS

/* A graph input bound to a constant at import time (see
 * quill_onnx_options.bindings). */
typedef struct quill_onnx_binding {
  const char *name;           /* the ONNX graph input's name */
  const quill_tensor *value;  /* borrowed; copied during the import */
} quill_onnx_binding;

typedef struct quill_onnx_options {
  /* User shapes for graph inputs, each "name=d0,d1,..." (e.g.
   * "x=1,3,224,224"; "x=" is a scalar). They override the model's dims and
   * are required for inputs with symbolic or missing dims. */
  const char *const *input_shapes;
  unsigned num_input_shapes;
  /* Directory that `location` paths of external tensor data are relative
   * to. NULL: the model file's directory (import_file) or the current
   * directory (import_buffer). Paths that leave this directory (absolute
   * paths, "..") are rejected. */
  const char *base_dir;
  /* Graph inputs bound to constants. Each bound input becomes a `constant`
   * op holding a copy of the tensor (a dense attr) and is no longer a graph
   * argument; a binding also overrides an initializer of the same name.
   * This lets the importer see values it needs as constants (ONNX's node
   * tests pass weights, shapes, scales and zero points as graph inputs,
   * while Quill keeps quantization parameters in types). A binding naming
   * no graph input, or whose element type or shape contradicts the
   * input's declared type, is an error. The tensors are only read during
   * the call. */
  const quill_onnx_binding *bindings;
  unsigned num_bindings;
  /* Keep each LSTM node that Quill's `lstm` op can state (one forward
   * layer; zero or absent initial states; the default activations; no
   * peepholes, clip or input_forget; Y_c unused) as one `lstm` op, for
   * the TFLite target's UNIDIRECTIONAL_SEQUENCE_LSTM (float, or integer
   * once quantized for tflite-int8: qlstm). false: every RNN,
   * GRU and LSTM node is unrolled into gemm, slice, sigmoid, tanh, mul and
   * add, which every target and the quantizer take. */
  bool rnn_ops;
  /* Give every op of an unrolled RNN, GRU or LSTM node but its gemms
   * {keep_float = true}, so that quantization leaves its gates and states
   * float (a backend's `rnn_float`: quill_backend_rnn_float()). */
  bool rnn_float;
} quill_onnx_options;

/* Import the model in file `path`. opts may be NULL. Returns a new module
 * (pair with quill_module_destroy()) or NULL after emitting diagnostics (or
 * on allocation failure). */
quill_module *quill_onnx_import_file(quill_context *ctx, const char *path,
                                     const quill_onnx_options *opts);

/* Import a model from memory (`len` bytes, not retained). `name` is used in
 * messages ("failed to parse ONNX model 'name': ..."); NULL means "<buffer>".
 * Same ownership and failure behaviour as quill_onnx_import_file(). */
quill_module *quill_onnx_import_buffer(quill_context *ctx, const void *data,
                                       size_t len, const char *name,
                                       const quill_onnx_options *opts);

QUILL_END_DECLS

#endif /* QUILL_FRONTENDS_ONNX_ONNX_H */
