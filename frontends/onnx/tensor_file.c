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

#include "frontends/onnx/onnx_impl.h"
#include "frontends/onnx/tensor_file.h"

/* ---- protobuf-c allocator over the quill funnel ------------------------- */

#define PB_HDR 16

static void *pb_alloc(void *ud, size_t size) {
  if (size > SIZE_MAX - PB_HDR)
    return NULL;
  unsigned char *p = quill_alloc(ud, size + PB_HDR);
  if (!p)
    return NULL;
  memcpy(p, &size, sizeof size);
  return p + PB_HDR;
}

static void pb_free(void *ud, void *ptr) {
  if (!ptr)
    return;
  unsigned char *p = (unsigned char *)ptr - PB_HDR;
  size_t size;
  memcpy(&size, p, sizeof size);
  quill_free(ud, p, size + PB_HDR);
}

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
  ProtobufCAllocator al = {pb_alloc, pb_free, ctx};
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

/* Read a whole file through the funnel: *buf gets `*len` bytes (+1 spare
 * so that an empty file still has a buffer), freed by the caller with size
 * *len + 1. */
static quill_status read_whole_file(quill_context *ctx, const char *path,
                                    quill_loc loc, unsigned char **buf,
                                    size_t *len) {
  *buf = NULL;
  *len = 0;
  FILE *f = fopen(path, "rb");
  if (!f) {
    quill_error(ctx, loc, "cannot open TensorProto file: %s", strerror(errno));
    return QUILL_ERR_IO;
  }
  long size = -1;
  if (fseek(f, 0, SEEK_END) == 0)
    size = ftell(f);
  if (size < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fclose(f);
    quill_error(ctx, loc, "cannot read TensorProto file: not a regular file");
    return QUILL_ERR_IO;
  }
  unsigned char *b = quill_alloc(ctx, (size_t)size + 1);
  if (!b) {
    fclose(f);
    return QUILL_ERR_NOMEM;
  }
  size_t got = fread(b, 1, (size_t)size, f);
  int err = ferror(f);
  fclose(f);
  if (err || got != (size_t)size) {
    quill_free(ctx, b, (size_t)size + 1);
    quill_error(ctx, loc, "cannot read TensorProto file: short read");
    return QUILL_ERR_IO;
  }
  *buf = b;
  *len = (size_t)size;
  return QUILL_OK;
}

quill_status quill_onnx_tensor_read_file(quill_context *ctx, const char *path,
                                         quill_tensor *out,
                                         const char **tensor_name) {
  memset(out, 0, sizeof *out);
  if (tensor_name)
    *tensor_name = NULL;
  quill_loc loc = quill_loc_file(ctx, path, 0, 0);
  unsigned char *buf;
  size_t len;
  quill_status st = read_whole_file(ctx, path, loc, &buf, &len);
  if (st)
    return st;

  /* External data lives next to the .pb file: "." for "x.pb", "/" for
   * "/x.pb", "a/b" for "a/b/x.pb". */
  const char *slash = strrchr(path, '/');
  size_t dlen = !slash ? 1 : slash == path ? 1 : (size_t)(slash - path);
  char *dir = quill_alloc(ctx, dlen + 1);
  if (!dir) {
    quill_free(ctx, buf, len + 1);
    return QUILL_ERR_NOMEM;
  }
  memcpy(dir, !slash ? "." : slash == path ? "/" : path, dlen);
  dir[dlen] = '\0';

  st = quill_onnx_tensor_read_buffer(ctx, buf, len, path, dir, out,
                                     tensor_name);
  quill_free(ctx, dir, dlen + 1);
  quill_free(ctx, buf, len + 1);
  return st;
}

void quill_onnx_tensor_free(quill_context *ctx, quill_tensor *t) {
  quill_tensor_free(ctx, t);
}
