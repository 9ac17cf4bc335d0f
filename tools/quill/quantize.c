/*
 * quantize.c - `quill quantize`: float model + backend config + calibration
 * data -> a quantized model: integer ops (fuse-qdq) or the reference QDQ
 * form.
 *
 *   quill quantize MODEL (.onnx | .qir) --backend NAME|FILE --calib PATH
 *                  [-o OUT.qir] [--keep-float=a,b] [--max-samples N]
 *                  [--input-shape NAME=D,..]... [--print-pipeline] [--time]
 *                  [--load-pass-plugin=LIB]... [--before-quantize=P]
 *                  [--after-quantize=P] [--pass-statistics]
 *                  [--export=NAME:FILE]... [--equalize[=relu6]]
 *                  [--bias-correction] [--no-equalize]
 *                  [--no-bias-correction] [--adaround-iters N]
 *                  [--sensitivity[=float]] [--target-sqnr DB]
 *                  [--override SPEC]...
 *
 * Flow:
 *
 *   argv --parse_args--> quantize_args               (bad syntax: exit 2)
 *   --load-pass-plugin --quill_plugin_load--> plugin passes (exit 1 if bad)
 *   --backend --quill_backend_get--> validated config (exit 1 if invalid)
 *   MODEL --load (onnx import | parse+verify)--> module
 *   [--before-quantize pipeline (e.g. plugin passes) on the float model]
 *   quill_quantize_module() (passes/quantize_pipeline.h, where the
 *   pipeline is spelled): fold-batchnorm, fuse-activation,
 *                 insert-observers, calibrate, quantize, canonicalize, dce
 *                 [, fuse-qdq, dce for --form integer]
 *   [--after-quantize pipeline on the quantized model]
 *   -o OUT.qir (or stdout) <-- print;  -o OUT.onnx <-- the ONNX exporter
 *   --export=NAME:FILE <-- the exporter NAME registered by a plugin
 *                          (quill_exporter_run), for each one given
 *
 * --sensitivity (passes/sensitivity.h) ranks the ops by the output SQNR
 * each one costs quantized alone (on stderr) before quantizing; with
 * --target-sqnr DB it raises the fewest worst-ranked ops that bring the
 * model to DB, to int16 activations where the backend can run them so and
 * else float (=float: float only), and quantizes that way.
 *
 * --override SPEC adds per-op overrides (the config key `overrides`) to the
 * backend: a JSON override object or array, or GLOB=int16 / GLOB=float
 * for the ops whose name matches GLOB. The driver derives the config
 * (quill_backend_derive) and quantizes with it.
 *
 * The calibration path goes into the pipeline as calibrate{data=PATH} when
 * it can be written there (no blanks or braces); otherwise the driver loads
 * the dataset itself (passes/calib_data.h) and hands it to the pass manager
 * as the input "calibration-data". --print-pipeline prints the pipeline and
 * exits without reading the model, so `quill-opt --pass-pipeline=...`
 * reproduces a run.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "ir/readfile.h"
#include "targets/onnx/onnx_export.h"
#include "passes/calib_data.h"
#include "passes/plugin.h"
#include "passes/quantize_pipeline.h"
#include "passes/sensitivity.h"
#include "tools/quill/quill.h"

typedef struct quantize_args {
  const char *model, *backend, *calib, *output, *keep_float;
  long long max_samples; /* 0: all */
  long long adaround_iters; /* 0: off */
  const char *before, *after; /* --before-quantize, --after-quantize */
  const char **shapes;
  unsigned nshapes;
  const char **plugins;
  unsigned nplugins;
  const char **exports; /* --export values, "NAME:FILE" */
  unsigned nexports;
  const char **overrides; /* --override values */
  unsigned noverrides;
  bool print_pipeline, time, statistics, sensitivity, float_only;
  double target_sqnr; /* -inf: none */
  int form; /* FORM_* */
  int equalize, bias_correction; /* QUILL_ACCURACY_* */
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
      "  --print-pipeline         print the pass pipeline and exit\n",
      out);
  fputs(quill_cli_accuracy_help, out);
  fputs(
      "  --time                   report the time of each pass on stderr\n"
      "  --load-pass-plugin LIB   load a pass plugin (a shared object; see\n"
      "                           docs/c-api.md); may be repeated\n"
      "  --before-quantize P      run pipeline P (e.g. plugin passes) on the\n"
      "                           float model first\n"
      "  --after-quantize P       run pipeline P on the quantized model last\n"
      "  --pass-statistics        report pass statistics on stderr\n"
      "  --export NAME:FILE       also write FILE with the exporter NAME of a\n"
      "                           plugin (see 'quill export'); may be repeated\n"
      "  --sensitivity[=float]    first rank the ops by the output SQNR each\n"
      "                           costs quantized alone (on stderr)\n"
      "  --target-sqnr DB         with --sensitivity: raise the fewest worst\n"
      "                           ops to reach DB (output SQNR vs the float\n"
      "                           model on the calibration samples): to int16\n"
      "                           activations where the backend can, else\n"
      "                           float (=float: float only)\n"
      "  --override SPEC          a per-op override of the backend (config\n"
      "                           key `overrides`): a JSON object or array,\n"
      "                           @FILE holding one, or GLOB=int16 /\n"
      "                           GLOB=float on op names; may be repeated\n"
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
  a->plugins = calloc((size_t)argc, sizeof *a->plugins);
  a->exports = calloc((size_t)argc, sizeof *a->exports);
  a->overrides = calloc((size_t)argc, sizeof *a->overrides);
  if (!a->shapes || !a->plugins || !a->exports || !a->overrides) {
    fputs("quill quantize: error: out of memory\n", stderr);
    return QUILL_EXIT_USAGE;
  }
  const char *v;
  a->target_sqnr = -INFINITY;
  while (quill_cli_peek(&c) && !c.bad) {
    const char *s = quill_cli_peek(&c);
    if (quill_cli_flag(&c, "--help") || quill_cli_flag(&c, "-h")) {
      *help = true;
      return QUILL_EXIT_OK;
    } else if (quill_cli_flag(&c, "--sensitivity")) {
      a->sensitivity = true;
    } else if (strcmp(s, "--sensitivity=float") == 0) {
      a->sensitivity = a->float_only = true;
      c.i++;
    } else if (quill_cli_value(&c, "--override", &v)) {
      if (v)
        a->overrides[a->noverrides++] = v;
    } else if (quill_cli_value(&c, "--target-sqnr", &v)) {
      char *end = NULL;
      a->target_sqnr = v ? strtod(v, &end) : NAN;
      if (!v || end == v || *end || !isfinite(a->target_sqnr))
        quill_cli_usage_error(&c, "--target-sqnr %s: a number of dB expected",
                              v ? v : "");
    } else if (quill_cli_value(&c, "--backend", &v)) {
      a->backend = v;
    } else if (quill_cli_value(&c, "--calib", &v)) {
      a->calib = v;
    } else if (quill_cli_value(&c, "-o", &v)) {
      a->output = v;
    } else if (quill_cli_value(&c, "--keep-float", &v)) {
      a->keep_float = v;
    } else if (quill_cli_max_samples(&c, &a->max_samples)) {
    } else if (quill_cli_adaround_iters(&c, &a->adaround_iters)) {
    } else if (quill_cli_input_shape(&c, a->shapes, &a->nshapes)) {
    } else if (quill_cli_accuracy(&c, &a->equalize, &a->bias_correction)) {
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
    } else if (quill_cli_value(&c, "--load-pass-plugin", &v)) {
      if (v)
        a->plugins[a->nplugins++] = v;
    } else if (quill_cli_value(&c, "--before-quantize", &v)) {
      a->before = v;
    } else if (quill_cli_value(&c, "--after-quantize", &v)) {
      a->after = v;
    } else if (quill_cli_flag(&c, "--pass-statistics")) {
      a->statistics = true;
    } else if (quill_cli_value(&c, "--export", &v)) {
      const char *colon = v ? strchr(v, ':') : NULL;
      if (v && (!colon || colon == v || !colon[1]))
        quill_cli_usage_error(&c, "--export needs NAME:FILE, got '%s'", v);
      else if (v)
        a->exports[a->nexports++] = v;
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
  else if (a->noverrides && a->print_pipeline)
    quill_cli_usage_error(&c, "--print-pipeline cannot spell --override (the "
                              "derived config lives in memory): put the "
                              "overrides into a config file's `overrides`");
  else if (a->target_sqnr > -INFINITY && !a->sensitivity)
    quill_cli_usage_error(&c, "--target-sqnr needs --sensitivity");
  else if (a->nshapes && a->model && quill_tool_is_qir(a->model))
    quill_cli_usage_error(&c, "--input-shape applies to ONNX models only");
  return c.bad ? QUILL_EXIT_USAGE : QUILL_EXIT_OK;
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

static quill_status dump_module(quill_context *ctx, FILE *f, void *m) {
  return quill_module_dump(m, f, NULL);
}

static quill_status write_output(quill_context *ctx, quill_module *m,
                                 const char *path) {
  size_t n = path ? strlen(path) : 0;
  if (n >= 5 && !strcmp(path + n - 5, ".onnx"))
    return write_onnx(ctx, m, path);
  return quill_write_file_stream(ctx, path ? path : "-", dump_module, m);
}

/* --export=NAME:FILE: the plugin exporter NAME on the quantized model. */
static quill_status run_export(quill_context *ctx, quill_module *m,
                               const char *spec) {
  const char *colon = strchr(spec, ':');
  char name[256];
  size_t n = (size_t)(colon - spec);
  if (n >= sizeof name)
    return quill_error(ctx, quill_loc_unknown(), "--export: name too long");
  memcpy(name, spec, n);
  name[n] = '\0';
  return quill_exporter_run(ctx, m, name, colon + 1);
}

/* -o and every --export file against the model, the calibration data and
 * each other. */
static quill_status check_outputs(quill_context *ctx, const quantize_args *a) {
  const char **outs = calloc(a->nexports + 1, sizeof *outs);
  if (!outs)
    return QUILL_ERR_NOMEM;
  outs[0] = a->output;
  for (unsigned i = 0; i < a->nexports; i++)
    outs[i + 1] = strchr(a->exports[i], ':') + 1;
  const char *ins[] = {a->model, a->calib};
  quill_status st =
      quill_write_check_outputs(ctx, outs, a->nexports + 1, ins, 2);
  free(outs);
  return st;
}

/* The --override values as one JSON array of overrides into sb: JSON
 * objects and arrays as given (@FILE: read from FILE), GLOB=int16|float
 * as the override it stands for (GLOB a JSON string: quotes and
 * backslashes escaped). */
static quill_status overrides_json(quill_context *ctx, const quantize_args *a,
                                   quill_strbuf *sb) {
  quill_strbuf_puts(sb, "[");
  for (unsigned i = 0; i < a->noverrides; i++) {
    const char *v = a->overrides[i], *eq = strrchr(v, '=');
    char *text = NULL;
    size_t len = 0, cap = 0;
    if (*v == '@') {
      bool opened;
      int err = quill_read_file(ctx, v + 1, QUILL_READ_TEXT, &text, &len,
                                &cap, &opened);
      if (err)
        return quill_error(ctx, quill_loc_file(ctx, v + 1, 0, 0),
                           "--override: cannot read: %s",
                           quill_read_strerror(err, QUILL_READ_TEXT));
      while (len && (text[len - 1] == '\n' || text[len - 1] == ' '))
        text[--len] = '\0';
      v = text;
    }
    if (i)
      quill_strbuf_puts(sb, ", ");
    if (*v == '{' || *v == '[') {
      size_t n = strlen(v);
      /* an array's entries go into ours */
      if (*v == '[' && n >= 2 && v[n - 1] == ']')
        quill_strbuf_printf(sb, "%.*s", (int)(n - 2), v + 1);
      else
        quill_strbuf_puts(sb, v);
      quill_free(ctx, text, cap);
      continue;
    }
    if (text) {
      quill_free(ctx, text, cap);
      return quill_error(ctx, quill_loc_file(ctx, a->overrides[i] + 1, 0, 0),
                         "--override: expected a JSON override object or "
                         "array");
    }
    bool i16 = eq && (!strcmp(eq + 1, "int16") || !strcmp(eq + 1, "i16"));
    if (!eq || eq == v || (!i16 && strcmp(eq + 1, "float") != 0))
      return quill_error(ctx, quill_loc_unknown(),
                         "--override %s: expected a JSON override, or "
                         "GLOB=int16 or GLOB=float",
                         v);
    quill_strbuf_puts(sb, "{\"match\": {\"name\": \"");
    for (const char *p = v; p < eq; p++) {
      if (*p == '"' || *p == '\\')
        quill_strbuf_putc(sb, '\\');
      quill_strbuf_putc(sb, *p);
    }
    quill_strbuf_puts(sb, i16 ? "\"}, \"activation\": {\"dtype\": \"i16\", "
                                "\"symmetric\": true}}"
                              : "\"}, \"keep_float\": true}");
  }
  quill_strbuf_puts(sb, "]");
  return quill_strbuf_failed(sb) ? QUILL_ERR_NOMEM : QUILL_OK;
}

/* The sensitivity analysis' progress bar on stderr. */
static void progress(void *ud, size_t done, size_t total) {
  (void)ud;
  int width = 30, fill = total ? (int)(width * done / total) : width;
  fprintf(stderr, "\rsensitivity [%.*s%*s] %zu/%zu", fill,
          "##############################", width - fill, "", done, total);
}

static int run(const quantize_args *a) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  if (!ctx) {
    fputs("quill quantize: error: out of memory\n", stderr);
    return QUILL_EXIT_ERROR;
  }
  bool inline_data = a->calib && quill_quantize_option_safe(a->calib);
  quill_quantize_options qo = {
      .backend = a->backend,
      .keep_float = a->keep_float,
      .calib_path = inline_data ? a->calib : NULL,
      .max_samples = (size_t)a->max_samples,
      .adaround_iters = (unsigned)a->adaround_iters,
      .equalize = a->equalize,
      .bias_correction = a->bias_correction,
  };
  unsigned stages = a->form == FORM_INTEGER
                        ? QUILL_QUANTIZE_ALL
                        : QUILL_QUANTIZE_PREPARE | QUILL_QUANTIZE_QUANTIZE;
  quill_status st = a->print_pipeline ? QUILL_OK : check_outputs(ctx, a);
  if (!st)
    st = quill_tool_load_plugins(ctx, a->plugins, a->nplugins);
  if (!st && a->noverrides) { /* the backend with the --override entries */
    quill_strbuf ov;
    quill_strbuf_init(&ov, ctx);
    st = overrides_json(ctx, a, &ov);
    if (!st)
      st = (qo.backend = quill_backend_derive(ctx, a->backend,
                                              quill_strbuf_str(&ov)))
               ? QUILL_OK
               : QUILL_ERR_INVALID;
    quill_strbuf_free(&ov);
  }
  if (!st && a->print_pipeline) {
    char *pipeline = NULL;
    st = quill_quantize_pipeline(ctx, &qo, stages, &pipeline);
    if (!st)
      printf("%s%s%s%s%s\n", a->before ? a->before : "",
             a->before ? "," : "", pipeline, a->after ? "," : "",
             a->after ? a->after : "");
    quill_string_free(ctx, pipeline);
  } else if (!st) {
    quill_module *m = NULL;
    quill_calib_dataset *ds = NULL;
    st = quill_backend_get(ctx, qo.backend) ? QUILL_OK : QUILL_ERR_INVALID;
    if (!st) {
      quill_onnx_options opts;
      memset(&opts, 0, sizeof opts);
      opts.input_shapes = a->shapes;
      opts.num_input_shapes = a->nshapes;
      /* LSTMs whole where fuse-qdq makes TFLite's integer LSTM of them */
      opts.rnn_ops = quill_backend_makes_qlstm(quill_backend_get(ctx, qo.backend));
      /* unrolled recurrent nodes float where the backend keeps them so */
      opts.rnn_float = quill_backend_rnn_float(quill_backend_get(ctx, qo.backend));
      m = quill_tool_load_model(ctx, a->model, &opts);
      if (!m)
        st = QUILL_ERR_INVALID;
      else if (!quill_module_num_graphs(m))
        st = quill_error(ctx, quill_loc_file(ctx, a->model, 0, 0),
                         "the model has no function");
    }
    if (!st && a->before)
      st = quill_tool_run_pipeline(ctx, m, a->before, a->statistics);
    if (!st && (!inline_data || a->sensitivity)) {
      ds = quill_calib_dataset_create(ctx, quill_module_graph(m, 0));
      st = ds ? QUILL_OK : QUILL_ERR_INVALID;
      if (!st) {
        quill_calib_dataset_set_max_samples(ds, (size_t)a->max_samples);
        st = quill_calib_dataset_load(ds, a->calib);
      }
    }
    quill_sensitivity *sens = NULL;
    if (!st && a->sensitivity) {
      st = quill_sensitivity_run(ctx, m, &qo, ds, a->target_sqnr,
                                 a->float_only, progress, NULL, &sens);
      fputc('\n', stderr);
      if (!st) {
        quill_strbuf sb;
        quill_strbuf_init(&sb, ctx);
        quill_sensitivity_print(sens, &sb);
        fputs(quill_strbuf_str(&sb), stderr);
        quill_strbuf_free(&sb);
        const char *keep = quill_sensitivity_keep_float(sens);
        qo.keep_float = *keep ? keep : NULL;
        qo.backend = quill_sensitivity_backend(sens);
      }
    }
    if (!st) {
      quill_pass_manager_options o;
      memset(&o, 0, sizeof o);
      o.verify_each = true;
      o.time_passes = a->time;
      o.statistics = a->statistics;
      st = quill_quantize_module(ctx, m, &qo, stages, ds, &o);
    }
    if (!st && a->after)
      st = quill_tool_run_pipeline(ctx, m, a->after, a->statistics);
    if (!st)
      st = write_output(ctx, m, a->output);
    for (unsigned i = 0; !st && i < a->nexports; i++)
      st = run_export(ctx, m, a->exports[i]);
    quill_sensitivity_destroy(sens);
    quill_calib_dataset_destroy(ds);
    if (m)
      quill_module_destroy(m);
  }
  if (st == QUILL_ERR_NOMEM)
    fputs("quill quantize: error: out of memory\n", stderr);
  quill_context_destroy(ctx);
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
  free(a.plugins);
  free(a.exports);
  free(a.overrides);
  return rc;
}
