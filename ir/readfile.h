/*
 * readfile.h - reading a whole file through the context's allocator, for
 * every loader that takes a path (models, .qir text, TensorProto and .npy
 * files, ONNX external data, backend configs, calibration lists).
 *
 * Reads are bounded: only regular files are read (a FIFO, a device such as
 * /dev/zero or a socket is refused without blocking: the open is
 * non-blocking), and never more than a size cap, so that no input can hang
 * a tool or make it read until memory runs out. Standard input ("-", only
 * where a tool asks for it with QUILL_READ_STDIN) may be a pipe, and is
 * read with the same cap.
 *
 * It prints nothing: each caller words its own diagnostic ("cannot open
 * ONNX model 'm.onnx': not a regular file ...") from the error value it
 * returns (quill_read_strerror), and knows from *opened whether opening or
 * reading failed.
 */
#ifndef QUILL_IR_READFILE_H
#define QUILL_IR_READFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "context.h" /* quill_free, for the buffers it returns */
#include "types_fwd.h"

QUILL_BEGIN_DECLS

/* The size caps, in bytes: 4 GiB for models, .qir text, tensors and
 * weights (ONNX's own protobuf limit is 2 GiB; larger weights live in
 * external data files, each read under this cap), 64 MiB for text lists
 * and configs (calibration lists, backend configs). */
#define QUILL_READ_MAX_DATA (UINT64_C(4) << 30)
#define QUILL_READ_MAX_TEXT (UINT64_C(64) << 20)

/* Errors beyond errno values (which are positive). */
#define QUILL_READ_ENOTREG (-1) /* not a regular file (FIFO, device, ...) */
#define QUILL_READ_ETOOBIG (-2) /* larger than the cap */

/* Flags of quill_read_file. */
#define QUILL_READ_TEXT 1u  /* use QUILL_READ_MAX_TEXT (else _DATA) */
#define QUILL_READ_STDIN 2u /* "-" reads standard input */

/* Open path for reading if it is a regular file of at most max bytes:
 * open(O_RDONLY | O_NONBLOCK | O_CLOEXEC), so a FIFO does not block, then
 * fstat. Returns 0 with *fd (blocking again; the caller closes it) and
 * *size set, or an error: an errno value from open, EISDIR for a
 * directory, QUILL_READ_ENOTREG, QUILL_READ_ETOOBIG (*fd is then -1). */
int quill_open_regular(const char *path, uint64_t max, int *fd,
                       uint64_t *size);

/* Read the file at path (flags: QUILL_READ_*). On success returns 0 and
 * *data holds its *len bytes plus a terminating NUL, in a block of *cap
 * bytes (*cap > *len) that the caller frees with quill_free(ctx, *data,
 * *cap). On failure returns an errno value (ENOMEM when allocation
 * failed) or QUILL_READ_ENOTREG / QUILL_READ_ETOOBIG, *data is NULL and
 * *opened tells whether the file could be opened (a directory or a file
 * over the cap counts as opened; a FIFO or device does not). */
int quill_read_file(quill_context *ctx, const char *path, unsigned flags,
                    char **data, size_t *len, size_t *cap, bool *opened);

/* The text for an error of quill_open_regular / quill_read_file read with
 * flags: strerror for errno values, "not a regular file (...)", "larger
 * than the 4 GiB limit (...)". A static string; never NULL. */
const char *quill_read_strerror(int err, unsigned flags);

QUILL_END_DECLS

#endif
