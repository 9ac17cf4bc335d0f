/*
 * writefile.h - writing an output file so that a failure never leaves a
 * truncated or half-written file behind, for every writer that takes a
 * path (models, .qir text, .npy tensors, reports, graph pictures, object
 * files and headers), and the checks around outputs: stdout write errors
 * and an output path that names an input.
 *
 *   quill_write_file(ctx, "m.tflite", data, size)
 *   quill_write_file_stream(ctx, "m.qir", print_fn, arg)
 *
 * write PATH.tmp.PID.N in PATH's folder, flush, fsync, check, then rename
 * it over PATH; on any error remove the temp file, leave PATH as it was,
 * and emit "PATH: error: cannot write output file: <strerror>".
 */
#ifndef QUILL_IR_WRITEFILE_H
#define QUILL_IR_WRITEFILE_H

#include <stdio.h>

#include "types_fwd.h"

QUILL_BEGIN_DECLS

/* Writes the contents of an output file to f; returns QUILL_OK or a status
 * (after its own diagnostics). Write errors on f need no check here: the
 * caller of the callback looks at the stream afterwards. */
typedef quill_status (*quill_write_fn)(quill_context *ctx, FILE *f,
                                       void *arg);

/* Write the file at path through fn(ctx, f, arg). A regular (or new) path
 * is written atomically: to a temporary file in the same folder (mode
 * 0666 minus the umask, or the old file's mode), flushed with fflush and
 * fsync and checked with ferror and fclose, then renamed over path (a
 * symbolic link is followed: its target is replaced). A path that exists
 * and is not a regular file (/dev/stdout, /dev/null, a FIFO) is written in
 * place, with the same checks. "-" is standard output (flushed and
 * checked, not closed). On failure the temporary file is removed, the old
 * file is untouched, and unless fn failed, a diagnostic located at path
 * names the system error; returns QUILL_ERR_IO (or fn's status). */
quill_status quill_write_file_stream(quill_context *ctx, const char *path,
                                     quill_write_fn fn, void *arg);
/* The same for `size` bytes at data. */
quill_status quill_write_file(quill_context *ctx, const char *path,
                              const void *data, size_t size);

/* Flush f and check its error flag: 0 when everything written to it so
 * far reached the system, otherwise the errno value (EIO when none was
 * recorded). The tools call it on stdout before exiting, so that output
 * lost to a full disk or a closed pipe is an error, not exit status 0. */
int quill_write_flush(FILE *f);

/* True if the paths name the same file: the same device and inode when
 * both exist, otherwise the same real folder and the same last component
 * ("-", standard output, is never the same as anything). */
bool quill_path_same_file(const char *a, const char *b);
/* Refuse an output path that names an input (or another output): returns
 * QUILL_ERR_INVALID after "OUT: error: the output file is the WHAT 'IN';
 * refusing to overwrite it" when quill_path_same_file(out, in), else
 * QUILL_OK. Either path may be NULL (then QUILL_OK). */
quill_status quill_write_check_distinct(quill_context *ctx, const char *out,
                                        const char *in, const char *what);
/* The same for a command's outputs outs[0..nout) against its input files
 * ins[0..nin) ("input file"), and against each other ("OUT: error: two
 * outputs name the same file ('A' and 'OUT')"), stopping at the first
 * clash; NULL entries are skipped. The tools call it before they read
 * anything. */
quill_status quill_write_check_outputs(quill_context *ctx,
                                       const char *const *outs, unsigned nout,
                                       const char *const *ins, unsigned nin);

QUILL_END_DECLS

#endif /* QUILL_IR_WRITEFILE_H */
