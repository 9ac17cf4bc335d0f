/*
 * main.c - quill-translate: convert models between other formats and
 * Quill IR.
 *
 *   quill-translate --import-onnx model.onnx [--input-shape x=1,3,8,8]...
 *                   [--const NAME=FILE.pb]... [--base-dir DIR] [-o out.qir]
 *                   [--export-onnx out.onnx]
 *   quill-translate in.qir --export-onnx out.onnx [--graph NAME]
 *                   [--opset N] [--no-value-info]
 *   quill-translate in.qir --export-tflite out.tflite [--allow-custom-ops]
 *   quill-translate --dump-tflite model.tflite
 *
 * The input is an ONNX model (frontends/onnx, which verifies the result)
 * or a .qir file ("-" reads stdin), which is parsed and verified. Without
 * --export-onnx the IR is printed to stdout or the -o file; with it the
 * graph is written as an ONNX model (targets/onnx), with --export-tflite as
 * a TFLite FlatBuffer (targets/tflite), and the IR is printed only if -o is
 * given. --dump-tflite prints a summary of a .tflite file. Exit status 0 on success, 1 on any error
 * (diagnostics go to stderr), 2 on bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontends/onnx/onnx.h"
#include "ir/writefile.h"
#include "frontends/onnx/tensor_file.h"
#include "ir/readfile.h"
#include "targets/onnx/onnx_export.h"
#include "targets/tflite/tflite_export.h"

static void usage(FILE *out) {
  fputs("usage: quill-translate --import-onnx MODEL.onnx [options]\n"
        "       quill-translate INPUT.qir --export-onnx OUT.onnx [options]\n"
        "       quill-translate INPUT.qir --export-tflite OUT.tflite [options]\n"
        "       quill-translate --dump-tflite MODEL.tflite\n"
        "\n"
        "Import a model into Quill IR and print it, or export Quill IR as an\n"
        "ONNX model.\n"
        "\n"
        "options:\n"
        "  --import-onnx FILE       import an ONNX model (protobuf)\n"
        "  --input-shape NAME=D,..  static shape for a graph input (needed for\n"
        "                           symbolic dims); may be repeated\n"
        "  --const NAME=FILE.pb     bind graph input NAME to the tensor in\n"
        "                           FILE.pb (an ONNX TensorProto); it becomes\n"
        "                           a constant. May be repeated\n"
        "  --base-dir DIR           directory for external tensor data\n"
        "                           (default: the model's directory)\n"
        "  --rnn-ops                keep LSTM nodes that the lstm op states\n"
        "                           as one op (for --export-tflite) instead\n"
        "                           of unrolling them\n"
        "  --export-onnx FILE       write the graph as an ONNX model\n"
        "  --graph NAME             the graph to export (default: the only\n"
        "                           one, or @main)\n"
        "  --opset N                ONNX opset to write (13-17; default: the\n"
        "                           lowest the graph needs)\n"
        "  --no-value-info          omit value_info of intermediate values\n"
        "  --export-tflite FILE     write the graph as a TFLite FlatBuffer\n"
        "  --allow-custom-ops       write ops without a TFLite builtin as\n"
        "                           custom ops 'quill.<op>' (else an error)\n"
        "  --dump-tflite FILE       print a summary of a .tflite file\n"
        "  -o FILE                  write the IR to FILE instead of stdout\n"
        "  --print-locs             also print file locations\n"
        "  -h, --help               show this help\n",
        out);
}

/* Read a whole file (or stdin for "-"), bounded (ir/readfile.h); NULL
 * after a message. Freed with quill_free(ctx, text, *cap). */
static char *read_text(quill_context *ctx, const char *path, size_t *len,
                       size_t *cap) {
  char *text;
  bool opened;
  int err = quill_read_file(ctx, path, QUILL_READ_STDIN, &text, len, cap,
                            &opened);
  if (err)
    fprintf(stderr, "quill-translate: cannot read '%s': %s\n", path,
            quill_read_strerror(err, QUILL_READ_STDIN));
  return text;
}

static quill_module *load_qir(quill_context *ctx, const char *path) {
  size_t len, cap;
  char *text = read_text(ctx, path, &len, &cap);
  if (!text)
    return NULL;
  quill_module *m = quill_parse_module(ctx, text, len,
                                       strcmp(path, "-") ? path : "<stdin>", 0);
  quill_free(ctx, text, cap);
  if (m && quill_verify_module(m) != QUILL_OK) {
    quill_module_destroy(m);
    m = NULL;
  }
  return m;
}

/* --dump-tflite FILE: print the summary; exit status as main's. */
static int dump_tflite(const char *path) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  if (!ctx) {
    fprintf(stderr, "quill-translate: out of memory\n");
    return 1;
  }
  size_t len, cap;
  char *data = read_text(ctx, path, &len, &cap);
  int rc = data && quill_tflite_dump(ctx, data, len, stdout) == QUILL_OK ? 0 : 1;
  if (data)
    quill_free(ctx, data, cap);
  quill_context_destroy(ctx);
  return rc;
}

/* The graph to export: --graph NAME, else the only graph, else @main. */
static const quill_graph *pick_graph(quill_module *m, const char *name) {
  if (name) {
    quill_graph *g = quill_module_find_graph(m, name);
    if (!g)
      fprintf(stderr, "quill-translate: no graph named '%s'\n", name);
    return g;
  }
  if (quill_module_num_graphs(m) == 1)
    return quill_module_graph(m, 0);
  quill_graph *g = quill_module_find_graph(m, "main");
  if (!g)
    fprintf(stderr, "quill-translate: the module has %u graphs; choose one "
                    "with --graph NAME\n",
            quill_module_num_graphs(m));
  return g;
}

typedef struct dump_args {
  quill_module *m;
  quill_print_options po;
} dump_args;

static quill_status dump_module(quill_context *ctx, FILE *f, void *arg) {
  dump_args *d = arg;
  return quill_module_dump(d->m, f, &d->po);
}

static int translate_main(int argc, char **argv) {
  const char *model = NULL, *qir = NULL, *out_path = NULL, *base_dir = NULL;
  const char *export_path = NULL, *graph_name = NULL;
  const char *tflite_path = NULL, *dump_path = NULL;
  quill_tflite_export_options to = {false, 0};
  const char **shapes = calloc((size_t)argc, sizeof *shapes);
  const char **consts = calloc((size_t)argc, sizeof *consts);
  unsigned nshapes = 0, nconsts = 0;
  bool print_locs = false;
  bool rnn_ops = false; /* --rnn-ops: LSTM nodes as lstm ops */
  quill_onnx_export_options eo = {0, false};
  int rc = 1;
  quill_context *ctx = NULL;
  quill_module *m = NULL;
  quill_tensor *tensors = NULL;
  quill_onnx_binding *bindings = NULL;
  if (!shapes || !consts)
    goto done;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *val = NULL;
    bool takes = !strcmp(a, "--import-onnx") || !strcmp(a, "--input-shape") ||
                 !strcmp(a, "-o") || !strcmp(a, "--base-dir") ||
                 !strcmp(a, "--export-onnx") || !strcmp(a, "--graph") ||
                 !strcmp(a, "--opset") || !strcmp(a, "--const") ||
                 !strcmp(a, "--export-tflite") || !strcmp(a, "--dump-tflite");
    if (takes) {
      if (i + 1 >= argc) {
        fprintf(stderr, "quill-translate: %s needs a value\n", a);
        rc = 2;
        goto done;
      }
      val = argv[++i];
    } else if (!strncmp(a, "--const=", 8)) {
      a = "--const";
      val = argv[i] + 8;
    } else if (!strncmp(a, "--input-shape=", 14)) {
      a = "--input-shape";
      val = argv[i] + 14;
    } else if (!strncmp(a, "--import-onnx=", 14)) {
      a = "--import-onnx";
      val = argv[i] + 14;
    } else if (!strncmp(a, "--export-onnx=", 14)) {
      a = "--export-onnx";
      val = argv[i] + 14;
    } else if (!strncmp(a, "--export-tflite=", 16)) {
      a = "--export-tflite";
      val = argv[i] + 16;
    }
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      rc = 0;
      goto done;
    } else if (!strcmp(a, "--import-onnx")) {
      model = val;
    } else if (!strcmp(a, "--input-shape")) {
      shapes[nshapes++] = val;
    } else if (!strcmp(a, "--const")) {
      const char *eq = strchr(val, '=');
      if (!eq || eq == val || !eq[1]) {
        fprintf(stderr, "quill-translate: --const needs NAME=FILE.pb, got "
                        "'%s'\n",
                val);
        rc = 2;
        goto done;
      }
      consts[nconsts++] = val;
    } else if (!strcmp(a, "-o")) {
      out_path = val;
    } else if (!strcmp(a, "--base-dir")) {
      base_dir = val;
    } else if (!strcmp(a, "--export-onnx")) {
      export_path = val;
    } else if (!strcmp(a, "--export-tflite")) {
      tflite_path = val;
    } else if (!strcmp(a, "--dump-tflite")) {
      dump_path = val;
    } else if (!strcmp(a, "--rnn-ops")) {
      rnn_ops = true;
    } else if (!strcmp(a, "--allow-custom-ops")) {
      to.allow_custom_ops = true;
    } else if (!strcmp(a, "--graph")) {
      graph_name = val;
    } else if (!strcmp(a, "--opset")) {
      char *end;
      eo.opset = strtoll(val, &end, 10);
      if (!*val || *end || eo.opset <= 0) {
        fprintf(stderr, "quill-translate: invalid --opset '%s'\n", val);
        rc = 2;
        goto done;
      }
    } else if (!strcmp(a, "--no-value-info")) {
      eo.omit_value_info = true;
    } else if (!strcmp(a, "--print-locs")) {
      print_locs = true;
    } else if ((a[0] != '-' || !strcmp(a, "-")) && !qir) {
      qir = a;
    } else {
      fprintf(stderr, "quill-translate: unknown argument '%s'\n", a);
      usage(stderr);
      rc = 2;
      goto done;
    }
  }
  if (dump_path) {
    if (model || qir || export_path || tflite_path) {
      fprintf(stderr, "quill-translate: --dump-tflite takes no other input "
                      "or output\n");
      rc = 2;
    } else {
      rc = dump_tflite(dump_path);
    }
    goto done;
  }
  if (!model && !qir) {
    fprintf(stderr, "quill-translate: no input (use --import-onnx FILE or "
                    "give a .qir file)\n");
    usage(stderr);
    rc = 2;
    goto done;
  }
  if (model && qir) {
    fprintf(stderr, "quill-translate: give either --import-onnx FILE or a "
                    ".qir file, not both\n");
    rc = 2;
    goto done;
  }
  if (qir && nconsts) {
    fprintf(stderr, "quill-translate: --const applies to ONNX imports only\n");
    rc = 2;
    goto done;
  }
  ctx = quill_context_create(NULL, NULL);
  tensors = calloc(nconsts ? nconsts : 1, sizeof *tensors);
  bindings = calloc(nconsts ? nconsts : 1, sizeof *bindings);
  if (!ctx || !tensors || !bindings)
    goto done;
  /* outputs that name an input (the model, --const files) or each
   * other are refused before anything is read */
  const char *outs[] = {out_path, export_path, tflite_path};
  const char **ins = calloc(nconsts + 1, sizeof *ins);
  if (!ins)
    goto done;
  ins[0] = model ? model : qir;
  for (unsigned i = 0; i < nconsts; i++)
    ins[i + 1] = strchr(consts[i], '=') + 1;
  quill_status cst = quill_write_check_outputs(ctx, outs, 3, ins, nconsts + 1);
  free(ins);
  if (cst)
    goto done;
  /* --const NAME=FILE: split at the first '=' (names may not contain one). */
  for (unsigned i = 0; i < nconsts; i++) {
    const char *eq = strchr(consts[i], '=');
    size_t len = (size_t)(eq - consts[i]);
    char *name = malloc(len + 1);
    if (!name)
      goto done;
    memcpy(name, consts[i], len);
    name[len] = 0;
    bindings[i].name = name;
    bindings[i].value = &tensors[i];
    if (quill_onnx_tensor_read_file(ctx, eq + 1, &tensors[i], NULL))
      goto done;
  }
  quill_onnx_options opts = {shapes, nshapes, base_dir, bindings, nconsts,
                             rnn_ops, false};
  m = model ? quill_onnx_import_file(ctx, model, &opts) : load_qir(ctx, qir);
  rc = m ? 0 : 1;
  if (m && export_path) {
    const quill_graph *g = pick_graph(m, graph_name);
    if (!g || quill_onnx_export_file(ctx, g, export_path, &eo) != QUILL_OK)
      rc = 1;
  }
  if (m && rc == 0 && tflite_path) {
    const quill_graph *g = pick_graph(m, graph_name);
    if (!g || quill_tflite_export_file(ctx, g, tflite_path, &to) != QUILL_OK)
      rc = 1;
  }
  if (m && rc == 0 && ((!export_path && !tflite_path) || out_path)) {
    dump_args d = {m, {print_locs}};
    if (quill_write_file_stream(ctx, out_path ? out_path : "-", dump_module,
                                &d) != QUILL_OK)
      rc = 1;
  }
done:
  if (m)
    quill_module_destroy(m);
  for (unsigned i = 0; bindings && i < nconsts; i++) {
    free((char *)bindings[i].name);
    if (ctx)
      quill_onnx_tensor_free(ctx, &tensors[i]);
  }
  free(bindings);
  free(tensors);
  if (ctx)
    quill_context_destroy(ctx);
  free(shapes);
  free(consts);
  return rc;
}

/* Output to stdout (the printed IR, help, summaries) is checked once
 * here: output lost to a full disk or a closed pipe is exit status 1. */
int main(int argc, char **argv) {
  int rc = translate_main(argc, argv);
  int err = quill_write_flush(stdout);
  if (err && rc == 0) { /* else the failure is reported already */
    fprintf(stderr, "quill-translate: error: cannot write standard output: %s\n",
            strerror(err));
    rc = 1;
  }
  return rc;
}
