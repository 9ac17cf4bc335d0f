/*
 * main.c - the `quill` driver: `quill <command> [options]`.
 *
 *   quill run model.onnx --input x=in.npy --output y.npy
 *   quill --help            every command
 *   quill <command> --help  that command's options
 *
 * The subcommands come from commands.def (one row each, one file each:
 * tools/quill/<id>.c); this file only dispatches. Exit codes are in
 * quill.h: 0 ok, 1 an error in the input (or output that could not be
 * written, stdout included), 2 bad usage.
 */
#include <string.h>

#include "tools/quill/quill.h"

typedef struct command {
  const char *name;
  const char *summary;
  int (*main)(int argc, char **argv);
} command;

static const command commands[] = {
#define QUILL_CMD(id, name, summary) {name, summary, quill_cmd_##id},
#include "tools/quill/commands.def"
#undef QUILL_CMD
};

static void print_help(FILE *out) {
  fputs("OVERVIEW: Quill, a quantizing compiler for neural networks\n\n"
        "USAGE: quill <command> [options]\n\n"
        "COMMANDS:\n",
        out);
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
  fputs("\nRun 'quill <command> --help' for the options of a command.\n"
        "Exit codes: 0 success, 1 an error in the input, 2 bad usage.\n",
        out);
}

static int dispatch(int argc, char **argv) {
  if (argc < 2) {
    print_help(stderr);
    return QUILL_EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
    if (!strcmp(cmd, "help") && argc > 2) { /* quill help run */
      char help[] = "--help";
      char *sub[] = {argv[2], help, NULL};
      for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(commands[i].name, argv[2]))
          return commands[i].main(2, sub);
      fprintf(stderr, "quill: error: unknown command '%s'\n", argv[2]);
      return QUILL_EXIT_USAGE;
    }
    print_help(stdout);
    return QUILL_EXIT_OK;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (!strcmp(commands[i].name, cmd))
      return commands[i].main(argc - 1, argv + 1);
  fprintf(stderr, "quill: error: unknown command '%s' (see 'quill --help')\n",
          cmd);
  return QUILL_EXIT_USAGE;
}

/* Every command's stdout output (--print, reports, help) is checked here:
 * output lost to a full disk or a closed pipe is an error. */
int main(int argc, char **argv) {
  int rc = dispatch(argc, argv);
  int err = quill_write_flush(stdout);
  if (err && rc == QUILL_EXIT_OK) { /* else the failure is reported */
    fprintf(stderr, "quill: error: cannot write standard output: %s\n",
            strerror(err));
    rc = QUILL_EXIT_ERROR;
  }
  return rc;
}
