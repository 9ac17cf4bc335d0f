/*
 * quill.h - private to tools/quill: the subcommand entry points and the
 * helpers every subcommand shares (option matching, model loading, tensor
 * files, printing).
 *
 * Exit codes, for every subcommand:
 *   QUILL_EXIT_OK (0)     success
 *   QUILL_EXIT_ERROR (1)  an error in the input (model, tensor files,
 *                         types, unsupported ops), reported as diagnostics
 *   QUILL_EXIT_USAGE (2)  a bad command line
 * Only this tool turns a quill_status into an exit code.
 */
#ifndef QUILL_TOOLS_QUILL_QUILL_H
#define QUILL_TOOLS_QUILL_QUILL_H

#include <stdio.h>

#include "frontends/onnx/onnx.h"
#include "ir/writefile.h"
#include "targets/reference/ref.h"

enum { QUILL_EXIT_OK = 0, QUILL_EXIT_ERROR = 1, QUILL_EXIT_USAGE = 2 };

/* One int quill_cmd_<id>(int argc, char **argv) per row of commands.def. */
#define QUILL_CMD(id, name, summary) int quill_cmd_##id(int argc, char **argv);
#include "tools/quill/commands.def"
#undef QUILL_CMD

/* `quill compile ... -o OUT.tflite` (compile_tflite.c); called by the
 * compile command for a .tflite output, with the compile command's argv. */
int quill_tool_compile_tflite(int argc, char **argv);

/* ---- command-line helpers (options.c) ------------------------------------- */

/* Walks argv[1..argc) of a subcommand. */
typedef struct quill_cli {
  int argc;
  char **argv;
  int i;            /* index of the current argument */
  const char *prog; /* "quill run", for messages */
  bool bad;         /* a usage error was printed */
} quill_cli;

void quill_cli_init(quill_cli *c, int argc, char **argv, const char *prog);
/* The current argument, or NULL at the end (then nothing is left). */
const char *quill_cli_peek(const quill_cli *c);
/* If the current argument is `flag`, consume it and return true. */
bool quill_cli_flag(quill_cli *c, const char *flag);
/* If the current argument is `flag VALUE` or `flag=VALUE`, consume it, set
 * *val and return true. A missing value prints a usage error, sets c->bad
 * and returns true with *val = NULL. */
bool quill_cli_value(quill_cli *c, const char *flag, const char **val);
/* Print "PROG: error: MSG" (a usage error) to stderr and set c->bad. */
void quill_cli_usage_error(quill_cli *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The options several subcommands share. If the current argument is the
 * option, consume it and return true; a bad value is a usage error.
 *   --max-samples N        *n = N (a positive integer)
 *   --input-shape NAME=D,..  appended to shapes[*n] (the caller sizes
 *                            shapes for argc entries) */
bool quill_cli_max_samples(quill_cli *c, long long *n);
/* --adaround-iters N (0..10^6; 0: off): AdaRound after calibration. */
bool quill_cli_adaround_iters(quill_cli *c, long long *n);
bool quill_cli_input_shape(quill_cli *c, const char **shapes, unsigned *n);
/* The accuracy passes (quantize, report, compile): QUILL_ACCURACY_* into
 * *equalize / *bias_correction (passes/quantize_pipeline.h).
 *   --equalize[=relu6]  --no-equalize  --bias-correction
 *   --no-bias-correction
 * quill_cli_accuracy_help is their --help text. */
bool quill_cli_accuracy(quill_cli *c, int *equalize, int *bias_correction);
extern const char quill_cli_accuracy_help[];

/* ---- models (model.c) ------------------------------------------------------- */

/* Load a model: `.qir` text (parsed and verified) or anything else as an
 * ONNX protobuf (imported with onnx_opts, which may be NULL). Returns the
 * module (destroy with quill_module_destroy) or NULL after diagnostics. */
quill_module *quill_tool_load_model(quill_context *ctx, const char *path,
                                    const quill_onnx_options *onnx_opts);
/* Load the pass plugins of --load-pass-plugin options, in order
 * (quill_plugin_load); stops at the first failure (diagnosed). */
quill_status quill_tool_load_plugins(quill_context *ctx,
                                     const char *const *paths, unsigned n);
/* Run a pass pipeline (--pass-pipeline) on m, verifying after each pass;
 * with `statistics` print the pass statistics to stderr. A status after
 * diagnostics. */
quill_status quill_tool_run_pipeline(quill_context *ctx, quill_module *m,
                                     const char *pipeline, bool statistics);
/* True if the path names textual IR (ends in .qir). */
bool quill_tool_is_qir(const char *path);
/* Pick the graph to run: the one named `entry`, or the module's first.
 * NULL after a diagnostic. */
quill_graph *quill_tool_entry_graph(quill_context *ctx, quill_module *m,
                                    const char *path, const char *entry);

/* ---- quantization (quantize.c) ---------------------------------------------- */

/* The integer quantization pipeline (`quill quantize`'s, ending in
 * fuse-qdq) for a backend and calibration path; *inline_data says whether
 * the path went into the pipeline text. Returns a malloc'd string or NULL. */
char *quill_tool_quantize_pipeline(const char *backend, const char *calib,
                                   long long max_samples, bool *inline_data);
/* Run such a pipeline on m (loading the calibration data when it is not
 * inline). Diagnostics on failure. */
quill_status quill_tool_quantize_module(quill_context *ctx, quill_module *m,
                                        const char *pipeline, bool inline_data,
                                        const char *calib,
                                        long long max_samples, bool time);

/* ---- tensor files (tensor_io.c) -------------------------------------------- */

/* Read a tensor from a NumPy .npy or an ONNX TensorProto .pb file (chosen
 * by extension, or by the .npy magic for other names). Free it with
 * quill_tensor_free. Returns a status after a diagnostic located at the
 * file. */
quill_status quill_tool_read_tensor(quill_context *ctx, const char *path,
                                    quill_tensor *out);
/* Write a tensor as .npy (the only output format; a .pb name is an error
 * with a diagnostic). bf16 is written as uint16 bit patterns, quantized
 * tensors as their storage integers. */
quill_status quill_tool_write_tensor(quill_context *ctx, const char *path,
                                     const quill_tensor *t);
/* Print "NAME: TYPE" and the values to out: every value for up to
 * `max_full` elements (numpy-style nested brackets), otherwise the first
 * values and min/max/mean. */
void quill_tool_print_tensor(FILE *out, quill_context *ctx, const char *name,
                             const quill_tensor *t, size_t max_full);
/* The textual type of t into buf (truncated to cap). */
void quill_tool_type_str(quill_context *ctx, const quill_type *t, char *buf,
                         size_t cap);

#endif /* QUILL_TOOLS_QUILL_QUILL_H */
