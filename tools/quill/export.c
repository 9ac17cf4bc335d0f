/*
 * export.c - `quill export`: write a model with an exporter registered by
 * a plugin (passes/plugin.h), e.g. a vendor's quantization parameter file.
 *
 *   quill export NAME MODEL (.qir | .onnx) -o FILE --load-pass-plugin=LIB...
 *   quill export --list --load-pass-plugin=LIB...
 *
 * Flow: load the plugins, load the model (parsed and verified, or
 * imported), quill_exporter_run(NAME, FILE) ("-": stdout). An unknown
 * exporter lists the registered ones. `quill quantize --export=NAME:FILE`
 * runs exporters on the model it has just quantized.
 */
#include <stdlib.h>
#include <string.h>

#include "passes/plugin.h"
#include "tools/quill/quill.h"

typedef struct export_args {
  const char *name, *model, *output;
  const char **plugins;
  unsigned nplugins;
  bool list;
} export_args;

static void print_help(FILE *out) {
  fputs("USAGE: quill export NAME MODEL -o FILE --load-pass-plugin LIB\n"
        "       quill export --list --load-pass-plugin LIB\n\n"
        "Write MODEL (.qir textual IR, or .onnx) with the exporter NAME,\n"
        "which a plugin registers (e.g. a vendor's quantization parameter\n"
        "file; examples/backends/acme-npu/). Quantize first with 'quill\n"
        "quantize', or in one go: quill quantize ... --export=NAME:FILE.\n\n"
        "OPTIONS:\n"
        "  -o FILE                  the output file ('-': stdout)\n"
        "  --load-pass-plugin LIB   load a plugin; may be repeated\n"
        "  --list                   list the registered exporters\n"
        "  -h, --help               show this help\n\n"
        "Exit codes: 0 success, 1 an error in the model, the plugin or the\n"
        "export, 2 bad usage.\n",
        out);
}

static int parse_args(int argc, char **argv, export_args *a, bool *help) {
  quill_cli c;
  quill_cli_init(&c, argc, argv, "quill export");
  memset(a, 0, sizeof *a);
  a->plugins = calloc((size_t)argc, sizeof *a->plugins);
  if (!a->plugins) {
    fputs("quill export: error: out of memory\n", stderr);
    return QUILL_EXIT_USAGE;
  }
  const char *v;
  while (quill_cli_peek(&c) && !c.bad) {
    const char *s = quill_cli_peek(&c);
    if (quill_cli_flag(&c, "--help") || quill_cli_flag(&c, "-h")) {
      *help = true;
      return QUILL_EXIT_OK;
    } else if (quill_cli_flag(&c, "--list")) {
      a->list = true;
    } else if (quill_cli_value(&c, "-o", &v)) {
      a->output = v;
    } else if (quill_cli_value(&c, "--load-pass-plugin", &v)) {
      if (v)
        a->plugins[a->nplugins++] = v;
    } else if (s[0] == '-' && s[1] != '\0') {
      quill_cli_usage_error(&c, "unknown option '%s' (see 'quill export "
                                "--help')",
                            s);
    } else if (!a->name) {
      a->name = s;
      c.i++;
    } else if (!a->model) {
      a->model = s;
      c.i++;
    } else {
      quill_cli_usage_error(&c, "unexpected argument '%s'", s);
    }
  }
  if (!c.bad && !a->list) {
    if (!a->name || !a->model)
      quill_cli_usage_error(&c, "expected an exporter name and a model (see "
                                "'quill export --help')");
    else if (!a->output)
      quill_cli_usage_error(&c, "no output file given (-o FILE)");
  }
  return c.bad ? QUILL_EXIT_USAGE : QUILL_EXIT_OK;
}

static void list(quill_context *ctx) {
  unsigned n = quill_exporter_num_registered(ctx);
  if (!n)
    printf("No exporters registered (they come from plugins: "
           "--load-pass-plugin LIB).\n");
  for (unsigned i = 0; i < n; i++) {
    const quill_exporter *e = quill_exporter_registered(ctx, i);
    const char *origin = quill_exporter_registered_origin(ctx, i);
    printf("  %-20s %s (plugin '%s')\n", e->name, e->summary ? e->summary : "",
           origin ? origin : "?");
  }
}

int quill_cmd_export(int argc, char **argv) {
  export_args a;
  bool help = false;
  int rc = parse_args(argc, argv, &a, &help);
  if (help || rc != QUILL_EXIT_OK) {
    if (help)
      print_help(stdout);
    free(a.plugins);
    return rc;
  }
  quill_context *ctx = quill_context_create(NULL, NULL);
  if (!ctx) {
    fputs("quill export: error: out of memory\n", stderr);
    free(a.plugins);
    return QUILL_EXIT_ERROR;
  }
  quill_status st = quill_write_check_outputs(
      ctx, &a.output, a.list ? 0 : 1, &a.model, 1);
  if (!st)
    st = quill_tool_load_plugins(ctx, a.plugins, a.nplugins);
  if (!st && a.list) {
    list(ctx);
  } else if (!st) {
    quill_module *m = quill_tool_load_model(ctx, a.model, NULL);
    st = m ? quill_exporter_run(ctx, m, a.name, a.output) : QUILL_ERR_INVALID;
    if (m)
      quill_module_destroy(m);
  }
  if (st == QUILL_ERR_NOMEM)
    fputs("quill export: error: out of memory\n", stderr);
  quill_context_destroy(ctx);
  free(a.plugins);
  return st ? QUILL_EXIT_ERROR : QUILL_EXIT_OK;
}
