/*
 * options.c - command-line helpers shared by the quill subcommands.
 *
 * A subcommand walks its arguments with a quill_cli cursor:
 *
 *   quill_cli c;
 *   quill_cli_init(&c, argc, argv, "quill run");
 *   while (quill_cli_peek(&c) && !c.bad) {
 *     if (quill_cli_value(&c, "--output", &v)) ...   // "--output F", "--output=F"
 *     else if (quill_cli_flag(&c, "--print")) ...
 *     else positional or quill_cli_usage_error(...)
 *   }
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "passes/quantize_pipeline.h"
#include "tools/quill/quill.h"

void quill_cli_init(quill_cli *c, int argc, char **argv, const char *prog) {
  c->argc = argc;
  c->argv = argv;
  c->i = 1;
  c->prog = prog;
  c->bad = false;
}

const char *quill_cli_peek(const quill_cli *c) {
  return c->i < c->argc ? c->argv[c->i] : NULL;
}

bool quill_cli_flag(quill_cli *c, const char *flag) {
  const char *a = quill_cli_peek(c);
  if (!a || strcmp(a, flag) != 0)
    return false;
  c->i++;
  return true;
}

bool quill_cli_value(quill_cli *c, const char *flag, const char **val) {
  const char *a = quill_cli_peek(c);
  size_t n = strlen(flag);
  if (!a || strncmp(a, flag, n) != 0)
    return false;
  if (a[n] == '=') {
    *val = a + n + 1;
    c->i++;
    return true;
  }
  if (a[n] != '\0')
    return false;
  c->i++;
  if (c->i >= c->argc) {
    *val = NULL;
    quill_cli_usage_error(c, "%s needs a value", flag);
    return true;
  }
  *val = c->argv[c->i++];
  return true;
}

void quill_cli_usage_error(quill_cli *c, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "%s: error: ", c->prog);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  c->bad = true;
}

bool quill_cli_max_samples(quill_cli *c, long long *n) {
  const char *v;
  if (!quill_cli_value(c, "--max-samples", &v))
    return false;
  char *end = NULL;
  *n = v ? strtoll(v, &end, 10) : 0;
  if (v && (!*v || *end || *n < 1))
    quill_cli_usage_error(c, "--max-samples needs a positive integer, got "
                             "'%s'",
                          v);
  return true;
}

bool quill_cli_adaround_iters(quill_cli *c, long long *n) {
  const char *v;
  if (!quill_cli_value(c, "--adaround-iters", &v))
    return false;
  char *end = NULL;
  *n = v ? strtoll(v, &end, 10) : 0;
  if (v && (!*v || *end || *n < 0 || *n > 1000000))
    quill_cli_usage_error(c, "--adaround-iters needs an integer in [0, 10^6], "
                             "got '%s'",
                          v);
  return true;
}

const char quill_cli_accuracy_help[] =
    "  --equalize[=relu6]       cross-layer equalization and high-bias\n"
    "                           absorption before quantizing (=relu6: treat\n"
    "                           relu6 as relu, the DFQ paper's choice)\n"
    "  --bias-correction[=analytic]\n"
    "                           correct each conv/gemm bias for its\n"
    "                           quantized weights' mean error on the\n"
    "                           calibration data (=analytic: from the\n"
    "                           BatchNorm statistics of its input)\n"
    "  --no-equalize, --no-bias-correction\n"
    "                           override a backend config that asks for them\n"
    "  --adaround-iters N       choose each weight's rounding on the\n"
    "                           calibration data with N steps of AdaRound\n"
    "                           (2000 is a good start; cost grows with\n"
    "                           N x weights)\n";

bool quill_cli_accuracy(quill_cli *c, int *equalize, int *bias_correction) {
  const char *a = quill_cli_peek(c);
  if (!a)
    return false;
  if (quill_cli_flag(c, "--equalize")) {
    *equalize = QUILL_ACCURACY_ON;
  } else if (strncmp(a, "--equalize=", 11) == 0) {
    c->i++;
    if (strcmp(a + 11, "relu6") == 0)
      *equalize = QUILL_ACCURACY_RELU6;
    else
      quill_cli_usage_error(c, "--equalize takes no value or 'relu6', got "
                               "'%s'", a + 11);
  } else if (quill_cli_flag(c, "--no-equalize")) {
    *equalize = QUILL_ACCURACY_OFF;
  } else if (quill_cli_flag(c, "--bias-correction")) {
    *bias_correction = QUILL_ACCURACY_ON;
  } else if (strncmp(a, "--bias-correction=", 18) == 0) {
    c->i++;
    if (strcmp(a + 18, "analytic") == 0)
      *bias_correction = QUILL_ACCURACY_ANALYTIC;
    else if (strcmp(a + 18, "empirical") == 0)
      *bias_correction = QUILL_ACCURACY_ON;
    else
      quill_cli_usage_error(c, "--bias-correction takes no value, "
                               "'empirical' or 'analytic', got '%s'",
                            a + 18);
  } else if (quill_cli_flag(c, "--no-bias-correction")) {
    *bias_correction = QUILL_ACCURACY_OFF;
  } else {
    return false;
  }
  return true;
}

bool quill_cli_input_shape(quill_cli *c, const char **shapes, unsigned *n) {
  const char *v;
  if (!quill_cli_value(c, "--input-shape", &v))
    return false;
  if (v && !strchr(v, '='))
    quill_cli_usage_error(c, "--input-shape needs NAME=D,.., got '%s'", v);
  else if (v)
    shapes[(*n)++] = v;
  return true;
}
