/*
 * npy.h - read and write NumPy .npy files as reference-interpreter tensors.
 *
 * The .npy format (numpy.lib.format), versions 1.0, 2.0 and 3.0:
 *
 *   "\x93NUMPY" major minor  header_len (u16 LE for 1.0, u32 LE for 2.0/3.0)
 *   header: a Python dict literal, ASCII (3.0: UTF-8), space padded, '\n'
 *     {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 *   data: the elements, row-major (C order)
 *
 * Element types (descr): <f4 <f8 <f2 |i1 |u1 <i2 <u2 <i4 <u4 <i8 <u8 |b1,
 * read into f32 f64 f16 i8 u8 i16 u16 i32 u64... tensors of the same width.
 * Big-endian data ('>') is byte-swapped on reading; '=' means host order
 * and '|' (or any order mark) is accepted for one-byte types. Fortran
 * order is accepted only for rank <= 1, where it is the same layout.
 * Structured dtypes, object arrays and other dtypes are errors.
 *
 * Every problem (bad magic, unknown version, malformed header, unknown key
 * or dtype, negative dim, data size that does not match the shape) is an
 * error diagnostic located at the file name ("x.npy: error: ..."), and the
 * call returns a status. Nothing aborts.
 */
#ifndef QUILL_FRONTENDS_NPY_NPY_H
#define QUILL_FRONTENDS_NPY_NPY_H

#include "../../ir/ir.h"
#include "../../targets/reference/ref.h"

QUILL_BEGIN_DECLS

/* Decode an .npy image (`len` bytes, not retained) into *out, a new tensor
 * allocated with quill_tensor_alloc (free it with quill_tensor_free). `name`
 * is the file name used in diagnostics (NULL: "<buffer>"). Returns QUILL_OK,
 * QUILL_ERR_INVALID after a diagnostic, or QUILL_ERR_NOMEM (no
 * diagnostic); on failure *out is zeroed. */
quill_status quill_npy_read_buffer(quill_context *ctx, const void *data,
                                   size_t len, const char *name,
                                   quill_tensor *out);

/* Read the .npy file `path`; as quill_npy_read_buffer(). A file that
 * cannot be read is QUILL_ERR_IO with a diagnostic. */
quill_status quill_npy_read_file(quill_context *ctx, const char *path,
                                 quill_tensor *out);

/* Encode tensor t as an .npy image (version 1.0, or 2.0 if the header
 * needs it) in a new buffer allocated through the context: *data gets the
 * buffer, *len its size; free it with quill_free(ctx, *data, *len).
 * Quantized tensors are written as their storage integers. Element types
 * NumPy has no dtype for (bf16, i4, u4) are QUILL_ERR_UNSUPPORTED with a
 * diagnostic naming `name` (NULL: "<buffer>"); allocation failure is
 * QUILL_ERR_NOMEM. On failure *data is NULL and *len 0. */
quill_status quill_npy_write_buffer(quill_context *ctx, const quill_tensor *t,
                                    const char *name, void **data,
                                    size_t *len);

/* Write tensor t to the file `path` (created or truncated). As
 * quill_npy_write_buffer(); a file that cannot be written is QUILL_ERR_IO
 * with a diagnostic. */
quill_status quill_npy_write_file(quill_context *ctx, const char *path,
                                  const quill_tensor *t);

/* The NumPy dtype string ("<f4", "|b1", ...) for a host tensor element
 * type (the storage type of a quantized one), or NULL if NumPy has none. */
const char *quill_npy_descr(const quill_type *elem);

QUILL_END_DECLS

#endif /* QUILL_FRONTENDS_NPY_NPY_H */
