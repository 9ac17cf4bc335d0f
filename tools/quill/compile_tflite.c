/*
 * compile_tflite.c - `quill compile MODEL -o OUT.tflite`: a TFLite
 * FlatBuffer for TFLite and vendor NPU/DSP runtimes (targets/tflite).
 *
 *   quill compile MODEL (.onnx | .qir) -o OUT.tflite
 *         [--backend NAME|FILE --calib PATH [--max-samples N]]
 *         [--keep-float a,b] [--allow-custom-ops] [--entry FUNC]
 *         [--input-shape NAME=D,..]... [--print-pipeline]
 *
 * Flow:
 *
 *   MODEL --load--> module
 *     float model, --backend + --calib: quill quantize's pipeline
 *       (passes/quantize_pipeline.h, all stages: the integer form)
 *     float model without --backend: fold-batchnorm, fuse-activation
 *       (a float .tflite; ONNX LSTM nodes that Quill's lstm op states
 *       imported as that op: one UNIDIRECTIONAL_SEQUENCE_LSTM each)
 *     already quantized model (QDQ ONNX, integer .qir): its FUSE stage
 *       (fuse-qdq{backend}, dce; backend tflite-int8 unless given)
 *   --> quill_tflite_export_file (the int8 spec is checked there; reference
 *       QDQ patterns fold into int8 builtins, so fuse-qdq is optional)
 *
 * `compile` dispatches here on an output ending in .tflite
 * (tools/quill/compile.c). The pipeline text is printed by
 * --print-pipeline, so `quill-opt --pass-pipeline=...` reproduces a run.
 */
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "passes/quantize_pipeline.h"
#include "targets/tflite/tflite_export.h"
#include "tools/quill/quill.h"

typedef struct tflite_args {
  const char *model, *out, *backend, *calib, *keep_float, *entry;
  long long max_samples;
  const char **shapes;
  unsigned nshapes;
  const char **plugins;
  unsigned nplugins;
  bool allow_custom, print_pipeline;
  int equalize, bias_correction; /* QUILL_ACCURACY_* */
} tflite_args;

static void print_help(FILE *out) {
  fputs(
      "USAGE: quill compile MODEL -o OUT.tflite [options]\n\n"
      "Write MODEL (.onnx, or .qir textual IR) as a TFLite FlatBuffer. A float\n"
      "model is quantized first when --backend and --calib are given (int8\n"
      "for --backend tflite-int8); otherwise it is written in float. An\n"
      "already quantized model (QDQ ONNX, integer IR) is written as int8.\n\n"
      "OPTIONS:\n"
      "  -o FILE.tflite           the output file (required)\n"
      "  --backend NAME|FILE      quantize for this backend config (see\n"
      "                           'quill backends'; TFLite runs tflite-int8)\n"
      "  --calib PATH             calibration data (see 'quill quantize')\n"
      "  --max-samples N          calibrate on the first N samples only\n"
      "  --keep-float a,b         ops to keep float (by location or result\n"
      "                           name): they run in float between\n"
      "                           DEQUANTIZE and QUANTIZE\n",
      out);
  fputs(quill_cli_accuracy_help, out);
  fputs(
      "  --allow-custom-ops       write ops without a TFLite builtin as custom\n"
      "                           ops 'quill.<op>' instead of failing\n"
      "  --entry FUNC             the function of a .qir module to write\n"
      "  --input-shape NAME=D,..  static shape of an ONNX graph input\n"
      "  --print-pipeline         print the pass pipeline and exit\n"
      "  --load-pass-plugin LIB   load a plugin (e.g. the one a backend\n"
      "                           config names); may be repeated\n"
      "  -h, --help               show this help\n\n"
      "4-D inputs and outputs of convolutional models become NHWC; the\n"
      "model's \"quill\" metadata lists the permutation of each.\n"
      "Exit codes: 0 success, 1 an error in the model (nothing is written),\n"
      "2 bad usage.\n",
      out);
}

static int parse_args(int argc, char **argv, tflite_args *a, bool *help) {
  quill_cli c;
  quill_cli_init(&c, argc, argv, "quill compile");
  a->shapes = calloc((size_t)argc, sizeof *a->shapes);
  a->plugins = calloc((size_t)argc, sizeof *a->plugins);
  if (!a->shapes || !a->plugins) {
    fputs("quill compile: error: out of memory\n", stderr);
    return QUILL_EXIT_USAGE;
  }
  const char *v;
  while (quill_cli_peek(&c) && !c.bad) {
    const char *s = quill_cli_peek(&c);
    if (quill_cli_flag(&c, "--help") || quill_cli_flag(&c, "-h")) {
      *help = true;
      return QUILL_EXIT_OK;
    } else if (quill_cli_value(&c, "-o", &v)) {
      a->out = v;
    } else if (quill_cli_value(&c, "--load-pass-plugin", &v)) {
      if (v)
        a->plugins[a->nplugins++] = v;
    } else if (quill_cli_value(&c, "--backend", &v)) {
      a->backend = v;
    } else if (quill_cli_value(&c, "--calib", &v)) {
      a->calib = v;
    } else if (quill_cli_value(&c, "--keep-float", &v)) {
      a->keep_float = v;
    } else if (quill_cli_accuracy(&c, &a->equalize, &a->bias_correction)) {
    } else if (quill_cli_value(&c, "--entry", &v)) {
      a->entry = v;
    } else if (quill_cli_max_samples(&c, &a->max_samples)) {
    } else if (quill_cli_input_shape(&c, a->shapes, &a->nshapes)) {
    } else if (quill_cli_flag(&c, "--allow-custom-ops")) {
      a->allow_custom = true;
    } else if (quill_cli_flag(&c, "--print-pipeline")) {
      a->print_pipeline = true;
    } else if (s[0] == '-' && s[1] != '\0') {
      quill_cli_usage_error(&c, "unknown option '%s' (see 'quill compile "
                                "--help')",
                            s);
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
  if (!a->model && !a->print_pipeline)
    quill_cli_usage_error(&c, "no model given (see 'quill compile --help')");
  else if (!a->out && !a->print_pipeline)
    quill_cli_usage_error(&c, "-o OUT.tflite is required");
  else if (!a->backend != !a->calib)
    quill_cli_usage_error(&c, "--backend and --calib go together (quantize "
                              "with both, or write a float model with neither)");
  else if (a->keep_float && !a->backend)
    quill_cli_usage_error(&c, "--keep-float needs --backend and --calib");
  return c.bad ? QUILL_EXIT_USAGE : QUILL_EXIT_OK;
}

/* True if the module already holds quantized values (QDQ or integer). */
static bool is_quantized(quill_module *m) {
  for (unsigned gi = 0; gi < quill_module_num_graphs(m); gi++)
    QUILL_GRAPH_FOREACH(quill_module_graph(m, gi), op) {
      if (quill_op_has_flag(op, QUILL_OPF_QUANT))
        return true;
    }
  return false;
}

/* Fill the shared quantization options (passes/quantize_pipeline.h): the
 * calibration path goes into the pipeline text when it can. */
static void quant_options(const tflite_args *a, quill_quantize_options *o) {
  memset(o, 0, sizeof *o);
  o->backend = a->backend ? a->backend : "tflite-int8";
  o->keep_float = a->keep_float;
  o->calib_path = a->calib && quill_quantize_option_safe(a->calib) ? a->calib
                                                                  : NULL;
  o->max_samples = (size_t)a->max_samples;
  o->equalize = a->equalize;
  o->bias_correction = a->bias_correction;
}

/* The stages to run: a float model with --backend: all of quill quantize's
 * (integer form); an already quantized model: FUSE (integer ops where
 * fuse-qdq applies; the exporter folds the rest); a float model without
 * --backend: none (fold-batchnorm,fuse-activation run separately). */
static unsigned stages_for(const tflite_args *a, bool quantized) {
  if (quantized)
    return QUILL_QUANTIZE_FUSE;
  return a->backend ? QUILL_QUANTIZE_ALL : 0;
}

static const char *const float_pipeline =
    "canonicalize,fuse-patterns,fold-batchnorm,fuse-activation";

/* Print the pipeline of this run (for quill-opt --pass-pipeline). */
static quill_status print_pipeline(quill_context *ctx, const tflite_args *a,
                                   bool quantized) {
  unsigned stages = stages_for(a, quantized);
  if (!stages) {
    printf("%s\n", float_pipeline);
    return QUILL_OK;
  }
  quill_quantize_options o;
  quant_options(a, &o);
  if (!o.calib_path && !quantized)
    o.calib_path = a->calib; /* shown as given */
  char *text = NULL;
  quill_status st = quill_quantize_pipeline(ctx, &o, stages, &text);
  if (!st)
    printf("%s\n", text);
  quill_string_free(ctx, text);
  return st;
}

/* Run this run's pipeline on m. */
static quill_status run_pipeline(quill_context *ctx, quill_module *m,
                                 const tflite_args *a, bool quantized,
                                 const char *model) {
  unsigned stages = stages_for(a, quantized);
  if (!stages) {
    quill_pass_manager *pm = quill_pass_manager_create(ctx);
    quill_status st = !pm ? QUILL_ERR_NOMEM
                          : quill_pass_manager_parse_pipeline(pm,
                                                              float_pipeline);
    if (!st)
      st = quill_pass_manager_run(pm, m);
    quill_pass_manager_destroy(pm);
    return st;
  }
  quill_quantize_options o;
  quant_options(a, &o);
  quill_calib_dataset *ds = NULL;
  quill_status st = QUILL_OK;
  if ((stages & QUILL_QUANTIZE_QUANTIZE) && !o.calib_path) {
    quill_graph *g = quill_tool_entry_graph(ctx, m, model, a->entry);
    ds = g ? quill_calib_dataset_create(ctx, g) : NULL;
    st = ds ? QUILL_OK : QUILL_ERR_INVALID;
    if (!st) {
      quill_calib_dataset_set_max_samples(ds, (size_t)a->max_samples);
      st = quill_calib_dataset_load(ds, a->calib);
    }
  }
  if (!st)
    st = quill_quantize_module(ctx, m, &o, stages, ds, NULL);
  quill_calib_dataset_destroy(ds);
  return st;
}
/* Whether name is a shipped backend config's name. */
static bool is_shipped(const char *name) {
  for (unsigned i = 0; i < quill_backend_num_shipped(); i++)
    if (!strcmp(quill_backend_shipped_name(i), name))
      return true;
  return false;
}


int quill_tool_compile_tflite(int argc, char **argv) {
  tflite_args a;
  memset(&a, 0, sizeof a);
  bool help = false;
  int rc = parse_args(argc, argv, &a, &help);
  if (help) {
    print_help(stdout);
    free(a.shapes);
    free(a.plugins);
    return QUILL_EXIT_OK;
  }
  if (rc != QUILL_EXIT_OK) {
    free(a.shapes);
    free(a.plugins);
    return rc;
  }
  quill_context *ctx = quill_context_create(NULL, NULL);
  if (!ctx) {
    free(a.shapes);
    free(a.plugins);
    return QUILL_EXIT_ERROR;
  }
  rc = QUILL_EXIT_ERROR;
  const char *ins[] = {a.model, a.calib};
  if (quill_write_check_outputs(ctx, &a.out, a.out ? 1 : 0, ins,
                               a.calib ? 2 : 1) ||
      quill_tool_load_plugins(ctx, a.plugins, a.nplugins)) {
    quill_context_destroy(ctx);
    free(a.shapes);
    free(a.plugins);
    return rc;
  }
  if (a.print_pipeline && !a.model) {
    if (!print_pipeline(ctx, &a, false))
      rc = QUILL_EXIT_OK;
    quill_context_destroy(ctx);
    free(a.shapes);
    free(a.plugins);
    return rc;
  }
  quill_onnx_options oo;
  memset(&oo, 0, sizeof oo);
  oo.input_shapes = a.shapes;
  oo.num_input_shapes = a.nshapes;
  /* LSTMs as one TFLite op: float, or integer where fuse-qdq makes qlstm
   * (asked of shipped configs only: a bad name or file is reported once,
   * by the pipeline below) */
  oo.rnn_ops = !a.backend || (is_shipped(a.backend) &&
                              quill_backend_makes_qlstm(
                                  quill_backend_get(ctx, a.backend)));
  quill_module *m = quill_tool_load_model(ctx, a.model, &oo);
  if (m) {
    bool quantized = is_quantized(m);
    if (quantized && a.backend)
      fprintf(stderr, "quill compile: note: the model is already quantized: "
                      "--calib is not used\n");
    if (a.print_pipeline) {
      if (!print_pipeline(ctx, &a, quantized))
        rc = QUILL_EXIT_OK;
    } else if (!run_pipeline(ctx, m, &a, quantized, a.model)) {
      quill_graph *g = quill_tool_entry_graph(ctx, m, a.model, a.entry);
      quill_tflite_export_options to = {a.allow_custom, 0};
      if (g && quill_tflite_export_file(ctx, g, a.out, &to) == QUILL_OK)
        rc = QUILL_EXIT_OK;
    }
    quill_module_destroy(m);
  }
  quill_context_destroy(ctx);
  free(a.shapes);
  free(a.plugins);
  return rc;
}
