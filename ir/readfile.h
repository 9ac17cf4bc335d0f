/*
 * readfile.h - reading a whole file through the context's allocator, for
 * every loader that takes a path (models, .qir text, TensorProto and .npy
 * files, backend configs, calibration lists).
 *
 * It prints nothing: each caller words its own diagnostic ("cannot open
 * ONNX model 'm.onnx': No such file or directory") from the errno value
 * it returns, and knows from *opened whether opening or reading failed.
 */
#ifndef QUILL_IR_READFILE_H
#define QUILL_IR_READFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "ir/context.h"

/* Read the file at path. On success returns 0 and *data holds its *len
 * bytes plus a terminating NUL, in a block of *cap bytes (*cap > *len)
 * that the caller frees with quill_free(ctx, *data, *cap). On failure
 * returns the errno value (ENOMEM when allocation failed), *data is NULL
 * and *opened tells whether the file could be opened (a directory opens,
 * then fails to read with EISDIR). */
int quill_read_file(quill_context *ctx, const char *path, char **data,
                    size_t *len, size_t *cap, bool *opened);

#endif
