/*
 * report.c - `quill report`: quantize a model as `quill quantize` does and
 * report, op by op, what was quantized (or kept float, and why), with
 * which parameters, and the SQNR of each op's output over the calibration
 * samples (passes/quant_report.h; formats in docs/report.md).
 *
 *   quill report MODEL --backend NAME|FILE --calib PATH [--max-samples N]
 *                [--keep-float=a,b] [--format text|json|csv|html] [-o FILE]
 *                [--graph FILE.dot|FILE.svg] [--eval x.npy --labels y.npy]
 *                [--input-shape NAME=D,..]... [--equalize[=relu6]]
 *                [--bias-correction] [--no-equalize] [--no-bias-correction]
 *
 * Flow: parse argv (exit 2 on bad usage) -> backend config -> load MODEL
 * -> load the calibration samples (always here: the report runs them
 * again) -> quill_quant_report_create -> optional accuracy on --eval /
 * --labels -> the "compiled" column (the lowered model on the LLVM JIT
 * against the reference form; if the JIT cannot compile it, the reason)
 * -> write the report (-o or stdout) and the --graph picture.
 * Without --format the format follows -o's extension (.json .csv .html),
 * else text.
 */
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "ir/dot.h"
#include "passes/quant_report.h"
#include "targets/llvm/llvm_target.h"
#include "tools/quill/quill.h"

typedef struct report_args {
  const char *model, *backend, *calib, *output, *keep_float, *format;
  const char *graph, *eval, *labels;
  long long max_samples; /* 0: all */
  long long adaround_iters; /* 0: off */
  const char **shapes;
  unsigned nshapes;
  const char **plugins;
  unsigned nplugins;
  int equalize, bias_correction; /* QUILL_ACCURACY_* */
} report_args;

static void print_help(FILE *out) {
  fputs(
      "USAGE: quill report MODEL --backend NAME|FILE --calib PATH "
      "[options]\n\n"
      "Quantize MODEL as 'quill quantize' does and report each op: quantized\n"
      "or kept float and why, its output's scale:zero point, its weight\n"
      "scales, and the SQNR (dB) of its output in the quantized model\n"
      "against the float model over the calibration samples; and the\n"
      "compiled model's outputs (LLVM JIT) against the reference form's.\n\n"
      "OPTIONS:\n"
      "  --backend NAME|FILE      a shipped config or a JSON config file\n"
      "  --calib PATH             calibration data (as for quill quantize)\n"
      "  --max-samples N          calibrate and measure on N samples only\n"
      "  --keep-float a,b         ops to keep float (location or value name)\n",
      out);
  fputs(quill_cli_accuracy_help, out);
  fputs(
      "  --format F               text (default), json, csv or html; without\n"
      "                           it, -o's extension decides\n"
      "  -o FILE                  write the report to FILE (default: stdout)\n"
      "  --graph FILE             also draw the quantized model with each\n"
      "                           op's SQNR: Graphviz DOT, or SVG for *.svg\n"
      "                           (runs 'dot', or $QUILL_DOT)\n"
      "  --eval X.npy --labels Y.npy\n"
      "                           also the accuracy of both models on\n"
      "                           labelled samples (arg-max of the first\n"
      "                           output's last dimension)\n"
      "  --input-shape NAME=D,..  static shape of an ONNX graph input\n"
      "  --load-pass-plugin LIB   load a plugin (e.g. the one a backend\n"
      "                           config names); may be repeated\n"
      "  -h, --help               show this help\n\n"
      "Exit codes: 0 success, 1 an error in the model, the config or the\n"
      "data, or an unwritable output, 2 bad usage.\n",
      out);
}

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && !strcmp(s + n - k, suffix);
}

static void check_args(quill_cli *c, report_args *a) {
  quill_report_format f;
  if (!a->backend)
    quill_cli_usage_error(c, "no backend given (--backend NAME|FILE; see "
                             "'quill backends')");
  else if (!quill_quantize_option_safe(a->backend))
    quill_cli_usage_error(c, "--backend %s: a config path may not contain "
                             "blanks or braces",
                          a->backend);
  else if (a->keep_float && !quill_quantize_option_safe(a->keep_float))
    quill_cli_usage_error(c, "--keep-float %s: names may not contain blanks "
                             "or braces",
                          a->keep_float);
  else if (!a->model)
    quill_cli_usage_error(c, "no model given (see 'quill report --help')");
  else if (!a->calib)
    quill_cli_usage_error(c, "no calibration data given (--calib PATH)");
  else if (a->format && !quill_report_format_parse(a->format, &f))
    quill_cli_usage_error(c, "--format must be text, json, csv or html, got "
                             "'%s'",
                          a->format);
  else if (!a->eval != !a->labels)
    quill_cli_usage_error(c, "--eval and --labels go together");
  else if (a->nshapes && quill_tool_is_qir(a->model))
    quill_cli_usage_error(c, "--input-shape applies to ONNX models only");
}

static int parse_args(int argc, char **argv, report_args *a, bool *help) {
  quill_cli c;
  quill_cli_init(&c, argc, argv, "quill report");
  memset(a, 0, sizeof *a);
  a->shapes = calloc((size_t)argc, sizeof *a->shapes);
  a->plugins = calloc((size_t)argc, sizeof *a->plugins);
  if (!a->shapes || !a->plugins) {
    fputs("quill report: error: out of memory\n", stderr);
    return QUILL_EXIT_USAGE;
  }
  const char *v;
  while (quill_cli_peek(&c) && !c.bad) {
    const char *s = quill_cli_peek(&c);
    if (quill_cli_flag(&c, "--help") || quill_cli_flag(&c, "-h")) {
      *help = true;
      return QUILL_EXIT_OK;
    } else if (quill_cli_value(&c, "--load-pass-plugin", &v)) {
      if (v)
        a->plugins[a->nplugins++] = v;
    } else if (quill_cli_value(&c, "--backend", &v)) {
      a->backend = v;
    } else if (quill_cli_value(&c, "--calib", &v)) {
      a->calib = v;
    } else if (quill_cli_value(&c, "-o", &v)) {
      a->output = v;
    } else if (quill_cli_value(&c, "--keep-float", &v)) {
      a->keep_float = v;
    } else if (quill_cli_value(&c, "--format", &v)) {
      a->format = v;
    } else if (quill_cli_value(&c, "--graph", &v)) {
      a->graph = v;
    } else if (quill_cli_value(&c, "--eval", &v)) {
      a->eval = v;
    } else if (quill_cli_value(&c, "--labels", &v)) {
      a->labels = v;
    } else if (quill_cli_accuracy(&c, &a->equalize, &a->bias_correction)) {
    } else if (quill_cli_max_samples(&c, &a->max_samples)) {
    } else if (quill_cli_adaround_iters(&c, &a->adaround_iters)) {
    } else if (quill_cli_input_shape(&c, a->shapes, &a->nshapes)) {
    } else if (s[0] == '-' && s[1] != '\0') {
      quill_cli_usage_error(
          &c, "unknown option '%s' (see 'quill report --help')", s);
    } else if (!a->model) {
      a->model = s;
      c.i++;
    } else {
      quill_cli_usage_error(&c, "more than one model ('%s' and '%s')",
                            a->model, s);
    }
  }
  if (!c.bad)
    check_args(&c, a);
  return c.bad ? QUILL_EXIT_USAGE : QUILL_EXIT_OK;
}

static quill_report_format pick_format(const report_args *a) {
  quill_report_format f = QUILL_REPORT_TEXT;
  if (a->format)
    quill_report_format_parse(a->format, &f);
  else if (a->output && ends_with(a->output, ".json"))
    f = QUILL_REPORT_JSON;
  else if (a->output && ends_with(a->output, ".csv"))
    f = QUILL_REPORT_CSV;
  else if (a->output && (ends_with(a->output, ".html") ||
                         ends_with(a->output, ".htm")))
    f = QUILL_REPORT_HTML;
  return f;
}

static quill_status write_report(quill_context *ctx, const quill_strbuf *sb,
                                 const char *path) {
  return quill_write_file(ctx, path ? path : "-", quill_strbuf_str(sb),
                          sb->len);
}

/* The first error message, kept while the JIT compiles the lowered model
 * (a model the JIT cannot compile still gets its report). */
typedef struct first_error {
  char msg[512];
} first_error;

static void keep_first_error(void *ud, quill_loc loc, quill_diag_severity sev,
                             const char *msg) {
  first_error *e = ud;
  (void)loc;
  if (sev == QUILL_DIAG_ERROR && !e->msg[0])
    snprintf(e->msg, sizeof e->msg, "%s", msg);
}

static quill_status jit_run(void *ud, const quill_tensor *in, unsigned nin,
                            quill_tensor *out, unsigned nout) {
  return quill_llvm_jit_run(ud, in, nin, out, nout);
}

/* The "compiled" column: the lowered model on the LLVM JIT (auto ISA
 * path, one thread) against the reference form, on the calibration
 * samples and, with --eval/--labels, for accuracy. */
static quill_status compiled_column(quill_context *ctx, quill_quant_report *r,
                                    const quill_calib_dataset *ds,
                                    const quill_calib_dataset *xs,
                                    const quill_tensor *labels) {
  quill_module *low = NULL;
  quill_status st = quill_quant_report_lowered(r, &low);
  if (st)
    return st;
  quill_llvm_options o;
  quill_llvm_options_init(&o);
  quill_llvm_jit *jit = NULL;
  first_error e = {{0}};
  quill_diag_set_handler(ctx, keep_first_error, &e);
  quill_status js = quill_llvm_jit_create(ctx, quill_module_graph(low, 0), &o,
                                          &jit);
  quill_diag_set_handler(ctx, NULL, NULL);
  if (js == QUILL_ERR_NOMEM) {
    st = js;
  } else if (js) {
    char why[640];
    snprintf(why, sizeof why, "the LLVM JIT cannot compile the lowered "
                              "model: %s",
             e.msg[0] ? e.msg : "no reason given");
    quill_quant_report_compiled_unavailable(r, why);
  } else {
    st = quill_quant_report_measure_compiled(r, ds, xs, labels, jit_run, jit);
  }
  quill_llvm_jit_destroy(jit);
  quill_module_destroy(low);
  return st;
}

/* Accuracy on --eval / --labels, and the compiled column. */
static quill_status eval_and_compile(quill_context *ctx, quill_quant_report *r,
                                     const quill_module *m,
                                     const quill_calib_dataset *ds,
                                     const report_args *a) {
  quill_calib_dataset *xs = NULL;
  quill_tensor labels = {0};
  quill_status st = QUILL_OK;
  if (a->eval) {
    xs = quill_calib_dataset_create(ctx, quill_module_graph(m, 0));
    st = xs ? quill_calib_dataset_load(xs, a->eval) : QUILL_ERR_INVALID;
    if (!st)
      st = quill_tool_read_tensor(ctx, a->labels, &labels);
    if (!st)
      st = quill_quant_report_eval_accuracy(r, xs, &labels);
  }
  if (!st)
    st = compiled_column(ctx, r, ds, xs, a->eval ? &labels : NULL);
  quill_tensor_free(ctx, &labels);
  quill_calib_dataset_destroy(xs);
  return st;
}

static int run(const report_args *a) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  if (!ctx) {
    fputs("quill report: error: out of memory\n", stderr);
    return QUILL_EXIT_ERROR;
  }
  quill_module *m = NULL;
  quill_calib_dataset *ds = NULL;
  quill_quant_report *r = NULL;
  quill_strbuf sb;
  quill_strbuf_init(&sb, ctx);
  const char *outs[] = {a->output, a->graph};
  const char *ins[] = {a->model, a->calib, a->eval, a->labels};
  quill_status st = quill_write_check_outputs(ctx, outs, 2, ins,
                                             a->eval ? 4 : 2);
  if (!st)
    st = quill_tool_load_plugins(ctx, a->plugins, a->nplugins);
  if (!st && !quill_backend_get(ctx, a->backend))
    st = QUILL_ERR_INVALID;
  if (!st) {
    quill_onnx_options opts;
    memset(&opts, 0, sizeof opts);
    opts.input_shapes = a->shapes;
    opts.num_input_shapes = a->nshapes;
    opts.rnn_float = quill_backend_rnn_float(quill_backend_get(ctx, a->backend));
    m = quill_tool_load_model(ctx, a->model, &opts);
    if (!m)
      st = QUILL_ERR_INVALID;
    else if (!quill_module_num_graphs(m))
      st = quill_error(ctx, quill_loc_file(ctx, a->model, 0, 0),
                       "the model has no function");
  }
  if (!st) {
    ds = quill_calib_dataset_create(ctx, quill_module_graph(m, 0));
    st = ds ? QUILL_OK : QUILL_ERR_INVALID;
    if (!st) {
      quill_calib_dataset_set_max_samples(ds, (size_t)a->max_samples);
      st = quill_calib_dataset_load(ds, a->calib);
    }
  }
  if (!st) {
    quill_quantize_options qo = {.backend = a->backend,
                                 .keep_float = a->keep_float,
                                 .max_samples = (size_t)a->max_samples,
                                 .adaround_iters =
                                     (unsigned)a->adaround_iters,
                                 .equalize = a->equalize,
                                 .bias_correction = a->bias_correction};
    st = quill_quant_report_create(ctx, m, &qo, ds, &r);
  }
  if (!st)
    st = eval_and_compile(ctx, r, m, ds, a);
  if (!st)
    st = quill_quant_report_write(r, pick_format(a), a->model, &sb);
  if (!st)
    st = write_report(ctx, &sb, a->output);
  if (!st && a->graph)
    st = quill_quant_report_write_graph(r, a->graph, getenv("QUILL_DOT"));
  if (st == QUILL_ERR_NOMEM)
    fputs("quill report: error: out of memory\n", stderr);
  quill_strbuf_free(&sb);
  quill_quant_report_destroy(r);
  quill_calib_dataset_destroy(ds);
  if (m)
    quill_module_destroy(m);
  quill_context_destroy(ctx);
  return st ? QUILL_EXIT_ERROR : QUILL_EXIT_OK;
}

int quill_cmd_report(int argc, char **argv) {
  report_args a;
  bool help = false;
  int rc = parse_args(argc, argv, &a, &help);
  if (help)
    print_help(stdout);
  else if (rc == QUILL_EXIT_OK)
    rc = run(&a);
  free(a.shapes);
  free(a.plugins);
  return rc;
}
