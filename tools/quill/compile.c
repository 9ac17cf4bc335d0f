/*
 * compile.c - `quill compile`: compile a model ahead of time. The output
 * file's extension picks the target:
 *
 *   quill compile MODEL -o OUT.tflite [...]   TFLite FlatBuffer
 *                                             (compile_tflite.c)
 *   quill compile MODEL -o OUT.o [...]        object file + C header (the
 *                                             LLVM target, not in this
 *                                             build yet)
 *
 * This file only dispatches; each target's options live with it.
 */
#include <string.h>

#include "tools/quill/quill.h"

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && !strcmp(s + n - k, suffix);
}

/* The value of -o (either "-o F" or "-o=F"), or NULL. */
static const char *output_of(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-o") && i + 1 < argc)
      return argv[i + 1];
    if (!strncmp(argv[i], "-o=", 3))
      return argv[i] + 3;
  }
  return NULL;
}

int quill_cmd_compile(int argc, char **argv) {
  const char *out = output_of(argc, argv);
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      if (out && !ends_with(out, ".tflite"))
        break;
      fputs("quill compile: the output's extension picks the target: "
            ".tflite (TFLite); object files need the LLVM target.\n\n",
            stdout);
      return quill_tool_compile_tflite(argc, argv);
    }
  if (out && ends_with(out, ".tflite"))
    return quill_tool_compile_tflite(argc, argv);
  if (!out) {
    fputs("quill compile: error: -o OUT is required (OUT.tflite for "
          "TFLite)\n",
          stderr);
    return QUILL_EXIT_USAGE;
  }
  fprintf(stderr, "quill compile: error: '%s': the LLVM target (object "
                  "files) is not built yet; use -o OUT.tflite\n",
          out);
  return QUILL_EXIT_ERROR;
}
