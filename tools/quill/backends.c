/*
 * backends.c - `quill backends`: list the shipped backend configs, or
 * validate one config and print its summary.
 *
 *   quill backends                 every shipped config: name, description
 *   quill backends NAME|FILE       quill_backend_print of that config
 *                                  (exit 1 with diagnostics if invalid)
 *
 * Configs and their format: docs/quantization.md section 1 and
 * docs/backends.md.
 */
#include <string.h>

#include "backends/backend.h"
#include "tools/quill/quill.h"

static void print_help(FILE *out) {
  fputs("USAGE: quill backends [NAME|FILE]\n\n"
        "Without an argument, list the shipped backend configs. With one,\n"
        "load that config (a shipped name, or a JSON file: an argument\n"
        "containing '/' or ending in .json), validate it and print its\n"
        "summary.\n\n"
        "Exit codes: 0 success, 1 an invalid or unknown config, 2 bad "
        "usage.\n",
        out);
}

static int list(quill_context *ctx) {
  printf("Shipped backend configs (quill backends NAME for details):\n");
  int width = 0; /* the longest name: descriptions in one column */
  for (unsigned i = 0; i < quill_backend_num_shipped(); i++) {
    int n = (int)strlen(quill_backend_shipped_name(i));
    width = n > width ? n : width;
  }
  for (unsigned i = 0; i < quill_backend_num_shipped(); i++) {
    const quill_backend *b =
        quill_backend_get(ctx, quill_backend_shipped_name(i));
    if (!b)
      return QUILL_EXIT_ERROR; /* a broken build: diagnosed */
    const char *d = quill_backend_description(b);
    printf("  %-*s %s\n", width, quill_backend_name(b), d ? d : "");
  }
  return QUILL_EXIT_OK;
}

int quill_cmd_backends(int argc, char **argv) {
  const char *name = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      print_help(stdout);
      return QUILL_EXIT_OK;
    }
    if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "quill backends: error: unknown option '%s' (see "
                      "'quill backends --help')\n",
              argv[i]);
      return QUILL_EXIT_USAGE;
    }
    if (name) {
      fprintf(stderr, "quill backends: error: more than one config ('%s' "
                      "and '%s')\n",
              name, argv[i]);
      return QUILL_EXIT_USAGE;
    }
    name = argv[i];
  }
  quill_context *ctx = quill_context_create(NULL, NULL);
  if (!ctx)
    return QUILL_EXIT_ERROR;
  int rc;
  if (!name) {
    rc = list(ctx);
  } else {
    const quill_backend *b = quill_backend_get(ctx, name);
    if (b)
      quill_backend_print(b, stdout);
    rc = b ? QUILL_EXIT_OK : QUILL_EXIT_ERROR;
  }
  quill_context_destroy(ctx);
  return rc;
}
