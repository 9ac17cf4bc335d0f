/*
 * quantize.c - `quill quantize`: float model + backend config + calibration
 * data -> a quantized model: integer ops (fuse-qdq) or the reference QDQ
 * form.
 *
 *   quill quantize MODEL (.onnx | .qir) --backend NAME|FILE --calib PATH
 *                  [-o OUT.qir] [--keep-float=a,b] [--max-samples N]
 *                  [--input-shape NAME=D,..]... [--print-pipeline] [--time]
 *
 * Flow:
 *
 *   argv --parse_args--> quantize_args               (bad syntax: exit 2)
 *   --backend --quill_backend_get--> validated config (exit 1 if invalid)
 *   MODEL --load (onnx import | parse+verify)--> module
 *   quantize_pipeline() --> the pass pipeline (the one place it is spelled)
 *   pass manager: fold-batchnorm, fuse-activation, insert-observers,
 *                 calibrate, quantize, canonicalize, dce [, fuse-qdq, dce]
 *   -o OUT.qir (or stdout) <-- print;  -o OUT.onnx <-- the ONNX exporter
 *
 * The calibration path goes into the pipeline as calibrate{data=PATH} when
 * it can be written there (no blanks or braces); otherwise the driver loads
 * the dataset itself (passes/calib_data.h) and hands it to the pass manager
 * as the input "calibration-data". --print-pipeline prints the pipeline and
 * exits without reading the model, so `quill-opt --pass-pipeline=...`
 * reproduces a run.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "targets/onnx/onnx_export.h"
#include "passes/calib_data.h"
#include "passes/pass.h"
#include "tools/quill/quill.h"

typedef struct quantize_args {
  const char *model, *backend, *calib, *output, *keep_float;
  long long max_samples; /* 0: all */
  const char **shapes;
  unsigned nshapes;
  bool print_pipeline, time;
  int form; /* FORM_* */
} quantize_args;

/* What `quill quantize` produces: integer ops (fuse-qdq), or the reference
 * QDQ form; by default integer, except for ONNX output (QDQ is what ONNX
 * consumers such as onnxruntime expect). */
enum { FORM_DEFAULT, FORM_INTEGER, FORM_REFERENCE };

static void print_help(FILE *out) {
  fputs(
      "USAGE: quill quantize MODEL --backend NAME|FILE --calib PATH "
      "[options]\n\n"
      "Quantize MODEL (.onnx, or .qir textual IR) for a backend config and\n"
      "write the reference quantized model (quantize/dequantize around float\n"
      "ops, integer weights, int32 biases).\n\n"
      "OPTIONS:\n"
      "  --backend NAME|FILE      a shipped config (see 'quill backends') or\n"
      "                           a JSON config file\n"
      "  --calib PATH             calibration data: a directory of .npy\n"
      "                           files (one-input models; a file may hold a\n"
      "                           batch), a directory of sample directories\n"
      "                           with <input>.npy each, an .npy file, or a\n"
      "                           .txt list of files; PATH,PATH joins several\n"
      "  -o FILE                  output: .qir textual IR (default: stdout)\n"
      "                           or .onnx (ONNX QDQ model)\n"
      "  --form integer|reference integer ops (fuse-qdq; the default for\n"
      "                           .qir) or the reference quantize/dequantize\n"
      "                           form (the default for .onnx)\n"
      "  --keep-float a,b         ops to keep float (by location name or\n"
      "                           result value name)\n"
      "  --max-samples N          calibrate on the first N samples only\n"
      "  --input-shape NAME=D,..  static shape of an ONNX graph input (for\n"
      "                           symbolic dims); may be repeated\n"
      "  --print-pipeline         print the pass pipeline and exit\n"
      "  --time                   report the time of each pass on stderr\n"
      "  -h, --help               show this help\n\n"
      "Exit codes: 0 success, 1 an error in the model, the config or the\n"
      "data, 2 bad usage.\n",
      out);
}

static int parse_args(int argc, char **argv, quantize_args *a, bool *help) {
  quill_cli c;
  quill_cli_init(&c, argc, argv, "quill quantize");
  memset(a, 0, sizeof *a);
  a->shapes = calloc((size_t)argc, sizeof *a->shapes);
  if (!a->shapes) {
    fputs("quill quantize: error: out of memory\n", stderr);
    return QUILL_EXIT_USAGE;
  }
  const char *v;
  while (quill_cli_peek(&c) && !c.bad) {
    const char *s = quill_cli_peek(&c);
    if (quill_cli_flag(&c, "--help") || quill_cli_flag(&c, "-h")) {
      *help = true;
      return QUILL_EXIT_OK;
    } else if (quill_cli_value(&c, "--backend", &v)) {
      a->backend = v;
    } else if (quill_cli_value(&c, "--calib", &v)) {
      a->calib = v;
    } else if (quill_cli_value(&c, "-o", &v)) {
      a->output = v;
    } else if (quill_cli_value(&c, "--keep-float", &v)) {
      a->keep_float = v;
    } else if (quill_cli_value(&c, "--max-samples", &v)) {
      char *end = NULL;
      a->max_samples = v ? strtoll(v, &end, 10) : 0;
      if (v && (!*v || *end || a->max_samples < 1))
        quill_cli_usage_error(&c, "--max-samples needs a positive integer, "
                                  "got '%s'",
                              v);
    } else if (quill_cli_value(&c, "--input-shape", &v)) {
      if (v && !strchr(v, '='))
        quill_cli_usage_error(&c, "--input-shape needs NAME=D,.., got '%s'",
                              v);
      else if (v)
        a->shapes[a->nshapes++] = v;
    } else if (quill_cli_value(&c, "--form", &v)) {
      if (v && !strcmp(v, "integer"))
        a->form = FORM_INTEGER;
      else if (v && !strcmp(v, "reference"))
        a->form = FORM_REFERENCE;
      else if (v)
        quill_cli_usage_error(&c, "--form needs 'integer' or 'reference', "
                                  "got '%s'",
                              v);
    } else if (quill_cli_flag(&c, "--print-pipeline")) {
      a->print_pipeline = true;
    } else if (quill_cli_flag(&c, "--time")) {
      a->time = true;
    } else if (s[0] == '-' && s[1] != '\0') {
      quill_cli_usage_error(
          &c, "unknown option '%s' (see 'quill quantize --help')", s);
    } else if (!a->model) {
      a->model = s;
      c.i++;
    } else {
      quill_cli_usage_error(&c, "more than one model ('%s' and '%s')",
                            a->model, s);
    }
  }
  if (c.bad)
    return QUILL_EXIT_USAGE;
  if (a->form == FORM_DEFAULT) {
    size_t n = a->output ? strlen(a->output) : 0;
    a->form = n >= 5 && !strcmp(a->output + n - 5, ".onnx") ? FORM_REFERENCE
                                                             : FORM_INTEGER;
  }
  if (!a->backend)
    quill_cli_usage_error(&c, "no backend given (--backend NAME|FILE; see "
                              "'quill backends')");
  else if (strpbrk(a->backend, " \t\n{}"))
    quill_cli_usage_error(&c, "--backend %s: a config path may not contain "
                              "blanks or braces",
                          a->backend);
  else if (a->keep_float && strpbrk(a->keep_float, " \t\n{}"))
    quill_cli_usage_error(&c, "--keep-float %s: names may not contain blanks "
                              "or braces",
                          a->keep_float);
  else if (!a->print_pipeline && !a->model)
    quill_cli_usage_error(&c, "no model given (see 'quill quantize --help')");
  else if (!a->print_pipeline && !a->calib)
    quill_cli_usage_error(&c, "no calibration data given (--calib PATH)");
  else if (a->nshapes && a->model && quill_tool_is_qir(a->model))
    quill_cli_usage_error(&c, "--input-shape applies to ONNX models only");
  return c.bad ? QUILL_EXIT_USAGE : QUILL_EXIT_OK;
}

/* Can `s` be written as a pass option value? */
static bool option_safe(const char *s) { return !strpbrk(s, " \t\n{}"); }

/* printf into a new malloc'd string (NULL on allocation failure). */
static char *format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *format(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *p = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (p) {
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
  }
  return p;
}

/* The quantization pipeline, spelled in this one place. With inline_data
 * the calibration path is the option data=; otherwise the dataset is handed
 * over as the pass-manager input "calibration-data". Returns a malloc'd
 * string (NULL on allocation failure). */
static char *quantize_pipeline(const quantize_args *a, bool inline_data) {
  const char *b = a->backend;
  char *calib = inline_data && a->max_samples
                    ? format("calibrate{data=%s max-samples=%lld}", a->calib,
                             a->max_samples)
                : inline_data ? format("calibrate{data=%s}", a->calib)
                : a->max_samples
                    ? format("calibrate{max-samples=%lld}", a->max_samples)
                    : format("calibrate");
  char *keep = a->keep_float ? format(" keep-float=%s", a->keep_float)
                             : format("%s", "");
  char *p = NULL;
  if (calib && keep)
    p = format("fold-batchnorm,"
               "fuse-activation{backend=%s},"
               "insert-observers{backend=%s%s},"
               "%s,"
               "quantize{backend=%s%s},"
               "canonicalize,dce%s%s%s",
               b, b, keep, calib, b, keep,
               a->form == FORM_INTEGER ? ",fuse-qdq{backend=" : "",
               a->form == FORM_INTEGER ? b : "",
               a->form == FORM_INTEGER ? "},dce" : "");
  free(calib);
  free(keep);
  return p;
}

/* Write the (reference, QDQ) model as ONNX through targets/onnx. */
static quill_status write_onnx(quill_context *ctx, quill_module *m,
                               const char *path) {
  if (quill_module_num_graphs(m) != 1)
    return quill_error(ctx, quill_loc_file(ctx, path, 0, 0),
                       "ONNX output needs a module with one graph, got %u",
                       quill_module_num_graphs(m));
  return quill_onnx_export_file(ctx, quill_module_graph(m, 0), path, NULL);
}

static quill_status write_output(quill_context *ctx, quill_module *m,
                                 const char *path) {
  size_t n = path ? strlen(path) : 0;
  if (n >= 5 && !strcmp(path + n - 5, ".onnx"))
    return write_onnx(ctx, m, path);
  if (!path || !strcmp(path, "-"))
    return quill_module_dump(m, stdout, NULL);
  FILE *f = fopen(path, "w");
  if (!f)
    return quill_error(ctx, quill_loc_file(ctx, path, 0, 0),
                       "cannot open output file");
  quill_status st = quill_module_dump(m, f, NULL);
  if (fclose(f) != 0 && !st)
    st = QUILL_ERR_IO;
  if (st)
    quill_error(ctx, quill_loc_file(ctx, path, 0, 0), "cannot write file");
  return st;
}

quill_status quill_tool_quantize_module(quill_context *ctx, quill_module *m,
                                        const char *pipeline, bool inline_data,
                                        const char *calib,
                                        long long max_samples, bool time) {
  quill_calib_dataset *ds = NULL;
  quill_pass_manager *pm = quill_pass_manager_create(ctx);
  quill_status st = pm ? QUILL_OK : QUILL_ERR_NOMEM;
  if (!st)
    st = quill_pass_manager_parse_pipeline(pm, pipeline);
  if (!st && !inline_data) {
    ds = quill_calib_dataset_create(ctx, quill_module_graph(m, 0));
    st = ds ? QUILL_OK : QUILL_ERR_INVALID;
    if (!st) {
      quill_calib_dataset_set_max_samples(ds, (size_t)max_samples);
      st = quill_calib_dataset_load(ds, calib);
    }
    if (!st)
      st = quill_pass_manager_set_input(pm, "calibration-data", ds);
  }
  if (!st) {
    quill_pass_manager_options o;
    memset(&o, 0, sizeof o);
    o.verify_each = true;
    o.time_passes = time;
    quill_pass_manager_set_options(pm, &o);
    st = quill_pass_manager_run(pm, m);
    if (time)
      quill_pass_manager_report(pm);
  }
  quill_pass_manager_destroy(pm);
  quill_calib_dataset_destroy(ds);
  return st;
}

char *quill_tool_quantize_pipeline(const char *backend, const char *calib,
                                   long long max_samples, bool *inline_data) {
  quantize_args a;
  memset(&a, 0, sizeof a);
  a.backend = backend;
  a.calib = calib;
  a.max_samples = max_samples;
  a.form = FORM_INTEGER;
  *inline_data = calib && option_safe(calib);
  return quantize_pipeline(&a, *inline_data);
}

static int run(const quantize_args *a) {
  bool inline_data = a->calib && option_safe(a->calib);
  char *pipeline = quantize_pipeline(a, inline_data);
  if (!pipeline) {
    fputs("quill quantize: error: out of memory\n", stderr);
    return QUILL_EXIT_ERROR;
  }
  if (a->print_pipeline) {
    printf("%s\n", pipeline);
    free(pipeline);
    return QUILL_EXIT_OK;
  }
  quill_context *ctx = quill_context_create(NULL, NULL);
  if (!ctx) {
    free(pipeline);
    return QUILL_EXIT_ERROR;
  }
  quill_module *m = NULL;
  quill_status st =
      quill_backend_get(ctx, a->backend) ? QUILL_OK : QUILL_ERR_INVALID;
  if (!st) {
    quill_onnx_options opts;
    memset(&opts, 0, sizeof opts);
    opts.input_shapes = a->shapes;
    opts.num_input_shapes = a->nshapes;
    m = quill_tool_load_model(ctx, a->model, &opts);
    if (!m)
      st = QUILL_ERR_INVALID;
    else if (!quill_module_num_graphs(m))
      st = quill_error(ctx, quill_loc_file(ctx, a->model, 0, 0),
                       "the model has no function");
  }
  if (!st)
    st = quill_tool_quantize_module(ctx, m, pipeline, inline_data, a->calib,
                                    a->max_samples, a->time);
  if (!st)
    st = write_output(ctx, m, a->output);
  if (st == QUILL_ERR_NOMEM)
    fputs("quill quantize: error: out of memory\n", stderr);
  if (m)
    quill_module_destroy(m);
  quill_context_destroy(ctx);
  free(pipeline);
  return st ? QUILL_EXIT_ERROR : QUILL_EXIT_OK;
}

int quill_cmd_quantize(int argc, char **argv) {
  quantize_args a;
  bool help = false;
  int rc = parse_args(argc, argv, &a, &help);
  if (help)
    print_help(stdout);
  else if (rc == QUILL_EXIT_OK)
    rc = run(&a);
  free(a.shapes);
  return rc;
}
