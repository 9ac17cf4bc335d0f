/*
 * tensor_file.c - ONNX TensorProto files (.pb) -> quill_tensor.
 *
 *   file bytes --onnx__tensor_proto__unpack (protobuf-c)--> TensorProto
 *     --onnx_tensor_to_attr (tensor.c, shared with initializers)--> dense
 *     attr --copy--> quill_tensor (quill_tensor_alloc, owned by the caller)
 *
 * The data type table, raw_data / typed-field decoding, bool
 * normalisation, external data and the size checks are the importer's
 * (tensor.c), so an initializer and a test-data tensor are read the same
 * way. The dense attr it produces is uniqued in the context, so the data
 * is held twice until the context goes away; callers that read many large
 * tensors (the conformance runner) use a context per model.
 *
 * protobuf-c allocates through the context funnel, with a size header in
 * front of each block (protobuf-c's free does not pass sizes).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/readfile.h"
#include "frontends/onnx/onnx_impl.h"
#include "frontends/onnx/tensor_file.h"

/* ---- decoding --------------------------------------------------------------- */

quill_status quill_onnx_tensor_read_buffer(quill_context *ctx, const void *data,
                                           size_t len, const char *name,
                                           const char *base_dir,
                                           quill_tensor *out,
                                           const char **tensor_name) {
  memset(out, 0, sizeof *out);
  if (tensor_name)
    *tensor_name = NULL;
  if (!name)
    name = "<buffer>";
  quill_loc loc = quill_loc_file(ctx, name, 0, 0);
  ProtobufCAllocator al = onnx_pb_allocator(ctx);
  Onnx__TensorProto *tp =
      onnx__tensor_proto__unpack(&al, len, (const uint8_t *)data);
  if (!tp)
    return quill_error(ctx, loc,
                       "failed to parse ONNX TensorProto: corrupt or "
                       "truncated protobuf (%zu bytes)",
                       len);

  onnx_importer im;
  memset(&im, 0, sizeof im);
  im.ctx = ctx;
  im.model_name = name;
  im.base_dir = base_dir ? base_dir : ".";
  const quill_attr *attr = NULL;
  quill_status st = onnx_tensor_to_attr(&im, tp, loc, &attr);
  if (!st && tensor_name) {
    *tensor_name = quill_ident_get(ctx, tp->name ? tp->name : "");
    if (!*tensor_name)
      st = QUILL_ERR_NOMEM;
  }
  onnx__tensor_proto__free_unpacked(tp, &al);
  if (st)
    return st;

  quill_tensor view = quill_tensor_from_attr(attr);
  st = quill_tensor_alloc(ctx, view.type, out);
  if (st == QUILL_ERR_INVALID)
    return quill_error(ctx, loc, "TensorProto does not have a static tensor "
                                 "type");
  if (st)
    return st;
  if (view.size != out->size) {
    quill_tensor_free(ctx, out);
    return quill_error(ctx, loc, "TensorProto data has %zu bytes, expected "
                                 "%zu",
                       view.size, out->size);
  }
  if (out->size)
    memcpy(out->data, view.data, out->size);
  return QUILL_OK;
}

/* ---- files -------------------------------------------------------------------- */

quill_status quill_onnx_tensor_read_file(quill_context *ctx, const char *path,
                                         quill_tensor *out,
                                         const char **tensor_name) {
  memset(out, 0, sizeof *out);
  if (tensor_name)
    *tensor_name = NULL;
  quill_loc loc = quill_loc_file(ctx, path, 0, 0);
  char *buf;
  size_t len, cap;
  bool opened;
  int err = quill_read_file(ctx, path, 0, &buf, &len, &cap, &opened);
  if (err == ENOMEM)
    return QUILL_ERR_NOMEM;
  if (err) {
    quill_error(ctx, loc, "cannot %s TensorProto file: %s",
                opened ? "read" : "open", quill_read_strerror(err, 0));
    return QUILL_ERR_IO;
  }

  /* External data lives next to the .pb file: "." for "x.pb", "/" for
   * "/x.pb", "a/b" for "a/b/x.pb". */
  const char *slash = strrchr(path, '/');
  size_t dlen = !slash ? 1 : slash == path ? 1 : (size_t)(slash - path);
  char *dir = quill_alloc(ctx, dlen + 1);
  if (!dir) {
    quill_free(ctx, buf, cap);
    return QUILL_ERR_NOMEM;
  }
  memcpy(dir, !slash ? "." : slash == path ? "/" : path, dlen);
  dir[dlen] = '\0';

  quill_status st = quill_onnx_tensor_read_buffer(ctx, buf, len, path, dir,
                                                  out, tensor_name);
  quill_free(ctx, dir, dlen + 1);
  quill_free(ctx, buf, cap);
  return st;
}

void quill_onnx_tensor_free(quill_context *ctx, quill_tensor *t) {
  quill_tensor_free(ctx, t);
}
