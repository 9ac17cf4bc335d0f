/*
 * main.c - quill-translate: convert models from other formats to Quill IR.
 *
 *   quill-translate --import-onnx model.onnx [--input-shape x=1,3,8,8]...
 *                   [--const NAME=FILE.pb]... [--base-dir DIR] [-o out.qir]
 *
 * Imports the model (frontends/onnx), which verifies the result, and prints
 * the IR to stdout or the -o file. Exit status 0 on success, 1 on any error
 * (diagnostics go to stderr), 2 on bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontends/onnx/onnx.h"
#include "frontends/onnx/tensor_file.h"

static void usage(FILE *out) {
  fputs("usage: quill-translate --import-onnx MODEL.onnx [options]\n"
        "\n"
        "Import a model into Quill IR and print it.\n"
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
        "  -o FILE                  write the IR to FILE instead of stdout\n"
        "  --print-locs             also print file locations\n"
        "  -h, --help               show this help\n",
        out);
}

int main(int argc, char **argv) {
  const char *model = NULL, *out_path = NULL, *base_dir = NULL;
  const char **shapes = calloc((size_t)argc, sizeof *shapes);
  const char **consts = calloc((size_t)argc, sizeof *consts);
  unsigned nshapes = 0, nconsts = 0;
  bool print_locs = false;
  int rc = 1;
  quill_context *ctx = NULL;
  quill_tensor *tensors = NULL;
  quill_onnx_binding *bindings = NULL;
  if (!shapes || !consts)
    goto done;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *val = NULL;
    bool takes = !strcmp(a, "--import-onnx") || !strcmp(a, "--input-shape") ||
                 !strcmp(a, "-o") || !strcmp(a, "--base-dir") ||
                 !strcmp(a, "--const");
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
    } else if (!strcmp(a, "--print-locs")) {
      print_locs = true;
    } else {
      fprintf(stderr, "quill-translate: unknown argument '%s'\n", a);
      usage(stderr);
      rc = 2;
      goto done;
    }
  }
  if (!model) {
    fprintf(stderr, "quill-translate: no input (use --import-onnx FILE)\n");
    usage(stderr);
    rc = 2;
    goto done;
  }
  ctx = quill_context_create(NULL, NULL);
  tensors = calloc(nconsts ? nconsts : 1, sizeof *tensors);
  bindings = calloc(nconsts ? nconsts : 1, sizeof *bindings);
  if (!ctx || !tensors || !bindings)
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
  quill_onnx_options opts = {shapes, nshapes, base_dir, bindings, nconsts};
  quill_module *m = quill_onnx_import_file(ctx, model, &opts);
  if (m) {
    FILE *out = out_path ? fopen(out_path, "w") : stdout;
    if (!out) {
      perror(out_path);
    } else {
      quill_print_options po = {print_locs};
      if (quill_module_dump(m, out, &po) == QUILL_OK)
        rc = 0;
      if (out != stdout && fclose(out) != 0)
        rc = 1;
    }
    quill_module_destroy(m);
  }
done:
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
