/*
 * tensor_file.h - read ONNX TensorProto files (the `input_0.pb` /
 * `output_0.pb` files of ONNX's test data, also accepted by `quill run`)
 * into reference-interpreter tensors.
 *
 * Every ONNX data type Quill has is read: FLOAT, DOUBLE, FLOAT16, BFLOAT16,
 * INT8/16/32/64, UINT8/16/32/64 and BOOL, from raw_data or from the typed
 * repeated fields, any rank including 0 (a scalar). External data
 * (`data_location: EXTERNAL`) is read relative to the .pb file's directory.
 * Corrupt or truncated protobuf, an unsupported data type (STRING, COMPLEX),
 * an element count that does not match the shape: each is an error
 * diagnostic located at the file, and the call returns a status. Nothing
 * aborts.
 */
#ifndef QUILL_FRONTENDS_ONNX_TENSOR_FILE_H
#define QUILL_FRONTENDS_ONNX_TENSOR_FILE_H

#include "../../ir/ir.h"
#include "../../targets/reference/ref.h"

QUILL_BEGIN_DECLS

/* Decode a serialized TensorProto (`len` bytes, not retained) into *out:
 * a statically shaped tensor whose data is allocated through the context's
 * allocator. `name` is used in messages (NULL: "<buffer>"); `base_dir` is
 * where external data paths are relative to (NULL: "."). If tensor_name is
 * non-NULL it gets the TensorProto's `name` field, interned in the context
 * ("" if unset). Returns QUILL_OK, or an error status after emitting a
 * diagnostic (QUILL_ERR_NOMEM without one); *out is then zeroed. Every
 * successful call should be paired with quill_onnx_tensor_free(). */
quill_status quill_onnx_tensor_read_buffer(quill_context *ctx, const void *data,
                                           size_t len, const char *name,
                                           const char *base_dir,
                                           quill_tensor *out,
                                           const char **tensor_name);

/* Read the TensorProto file `path`; as quill_onnx_tensor_read_buffer()
 * with the path as name and its directory as base_dir. A file that cannot
 * be read is QUILL_ERR_IO with a diagnostic. */
quill_status quill_onnx_tensor_read_file(quill_context *ctx, const char *path,
                                         quill_tensor *out,
                                         const char **tensor_name);

/* Free a tensor read by the functions above and zero it (no-op on a zeroed
 * tensor). */
void quill_onnx_tensor_free(quill_context *ctx, quill_tensor *t);

QUILL_END_DECLS

#endif /* QUILL_FRONTENDS_ONNX_TENSOR_FILE_H */
