/*
 * quill-opt - run textual IR through named passes, like mlir-opt.
 *
 *   quill-opt in.qir --canonicalize --cse -o out.qir
 *   quill-opt in.qir --pass-pipeline='constant-fold,dce'
 *   quill-opt in.qir --split-input-file --verify-diagnostics
 *   quill-opt --check-backend=tflite-int8     (validate + print a config)
 *   quill-opt --load-pass-plugin=libx.so in.qir --pass-pipeline='x-pass'
 *   quill-opt in.qir --view-graph=g.svg       (also draw it: ir/dot.h)
 *
 * Flow per input (or per `// -----` chunk with --split-input-file):
 *   read -> parse -> verify -> pass manager (verifies after each pass)
 *        -> print (-o or stdout)
 * With --verify-diagnostics the diagnostics are collected instead of
 * printed and checked against `// expected-error@+1 {{...}}` comments
 * (see diag_verify.c). Exit code: 0 ok, 1 error in the input or a
 * diagnostic mismatch, 2 bad command line.
 *
 * Pass plugins (--load-pass-plugin=PATH, repeatable, as in LLVM's opt)
 * are loaded into the context before the rest of the command line is read,
 * so their passes work as --NAME flags and in --pass-pipeline, and --help
 * lists them under "PLUGIN PASSES". A plugin that cannot be loaded is a
 * diagnostic located at its path and exit 1.
 *
 * This file is the only place where a status turns into an exit code.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "ir/dot.h"
#include "ir/readfile.h"
#include "ir/writefile.h"
#include "passes/pass.h"
#include "passes/plugin.h"
#include "tools/quill-opt/opt.h"

typedef struct opt_args {
  const char *input;
  const char *output;
  bool split_input;
  bool verify_diagnostics;
  bool verify_roundtrip;
  bool print_locs;
  const char *debug_only;
  const char *check_backend;
  const char *view_graph; /* --view-graph=FILE (.dot or .svg) */
  quill_pass_manager_options pm_opts;
  /* pipeline pieces in command-line order: pass names or pipeline strings */
  const char **pipeline;
  bool *is_pipeline;
  unsigned npipeline;
} opt_args;

static void print_pass(FILE *out, const quill_pass *p) {
  fprintf(out, "  --%-24s %s\n", p->name, p->summary ? p->summary : "");
  if (p->options)
    fprintf(out, "  %-26s   options: %s\n", "", p->options);
}

static void print_help(quill_context *ctx, FILE *out) {
  fprintf(out,
          "OVERVIEW: Quill IR optimizer driver\n\n"
          "USAGE: quill-opt [options] <input.qir | ->\n\n"
          "OPTIONS:\n"
          "  -o <file>                 Write output to <file> (default: stdout)\n"
          "  --pass-pipeline=<p>       Run a pipeline, e.g. 'canonicalize{max-iterations=4},cse'\n"
          "  --split-input-file        Split the input at '// -----' and process each chunk alone\n"
          "  --verify-diagnostics      Check diagnostics against expected-* comments\n"
          "  --verify-roundtrip        Check that print -> parse -> print is byte-identical\n"
          "  --no-verify-each          Do not run the verifier after each pass\n"
          "  --print-ir-after-all      Print the IR after every pass\n"
          "  --print-ir-before-all     Print the IR before every pass\n"
          "  --print-ir-before=<names> Print the IR before the named passes\n"
          "  --print-ir-after=<names>  Print the IR after the named passes\n"
          "  --print-locs              Print file locations too\n"
          "  --time-passes             Report the time each pass took\n"
          "  --pass-statistics         Report pass statistics\n"
          "  --debug-only=<channels>   Enable debug output of the named channels\n"
          "  --check-backend=<b>       Load and validate a backend config (a shipped\n"
          "                            name or a .json path), print its summary, exit\n"
          "  --load-pass-plugin=<lib>  Load a pass plugin (a shared object); may be\n"
          "                            repeated. Its passes are listed below\n"
          "  --view-graph=<file>       Also write the graph (after the passes) as\n"
          "                            Graphviz DOT, or SVG if <file> ends in .svg\n"
          "                            (runs 'dot', or $QUILL_DOT, -Tsvg)\n"
          "  --help                    Print this help\n\n"
          "PASSES:\n");
  for (unsigned i = 0; i < quill_pass_registry_size(); i++)
    print_pass(out, quill_pass_registry_at(i));
  unsigned n = quill_pass_num_registered(ctx);
  if (n)
    fprintf(out, "\nPLUGIN PASSES:\n");
  for (unsigned i = 0; i < n; i++) {
    const char *origin = quill_pass_registered_origin(ctx, i);
    print_pass(out, quill_pass_registered(ctx, i));
    fprintf(out, "  %-26s   (plugin '%s')\n", "", origin ? origin : "?");
  }
  n = quill_patterns_num_registered(ctx);
  if (n)
    fprintf(out, "\nPLUGIN PATTERN SETS (for the pass apply-patterns{sets=NAME}):\n");
  for (unsigned i = 0; i < n; i++) {
    unsigned np = 0;
    const char *name = quill_patterns_registered_name(ctx, i);
    quill_patterns_find(ctx, name, &np);
    fprintf(out, "  %-26s   %u pattern%s\n", name, np, np == 1 ? "" : "s");
  }
  n = quill_custom_op_num_registered(ctx);
  if (n)
    fprintf(out, "\nPLUGIN CUSTOM OPS (custom {name = NAME}):\n");
  for (unsigned i = 0; i < n; i++) {
    const quill_custom_op *k = quill_custom_op_registered(ctx, i);
    const char *origin = quill_custom_op_registered_origin(ctx, i);
    fprintf(out, "  %-26s   %s%s\n", k->name, k->summary ? k->summary : "",
            k->eval ? "" : " (no reference evaluator)");
    fprintf(out, "  %-26s   (plugin '%s')\n", "", origin ? origin : "?");
  }
  n = quill_exporter_num_registered(ctx);
  if (n)
    fprintf(out, "\nPLUGIN EXPORTERS (quill export NAME, quill quantize "
                 "--export=NAME:FILE):\n");
  for (unsigned i = 0; i < n; i++) {
    const quill_exporter *e = quill_exporter_registered(ctx, i);
    const char *origin = quill_exporter_registered_origin(ctx, i);
    fprintf(out, "  %-26s   %s\n", e->name, e->summary ? e->summary : "");
    fprintf(out, "  %-26s   (plugin '%s')\n", "", origin ? origin : "?");
  }
}

/* Is argv[*i] --load-pass-plugin (=PATH or PATH in the next argument)?
 * Sets *path (NULL if the value is missing) and advances *i past it. */
static bool plugin_arg(int argc, char **argv, int *i, const char **path) {
  static const char flag[] = "--load-pass-plugin";
  const char *s = argv[*i];
  if (strncmp(s, flag, sizeof flag - 1) != 0)
    return false;
  if (s[sizeof flag - 1] == '=') {
    *path = s + sizeof flag;
    return true;
  }
  if (s[sizeof flag - 1] != '\0')
    return false;
  *path = *i + 1 < argc ? argv[++*i] : NULL;
  return true;
}

/* Load every --load-pass-plugin first. 0, 1 (a plugin failed to load,
 * diagnosed) or 2 (missing path). */
static int load_plugins(quill_context *ctx, int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *path;
    if (!plugin_arg(argc, argv, &i, &path))
      continue;
    if (!path) {
      fprintf(stderr, "quill-opt: --load-pass-plugin needs a file name\n");
      return 2;
    }
    if (quill_plugin_load(ctx, path) != QUILL_OK)
      return 1;
  }
  return 0;
}

/* Parse argv into args. Returns 0, 2 after printing a usage error, or -1
 * after printing --help. */
static int parse_args(quill_context *ctx, int argc, char **argv, opt_args *a) {
  a->pm_opts.verify_each = true;
  a->pipeline = calloc((size_t)argc, sizeof *a->pipeline);
  a->is_pipeline = calloc((size_t)argc, sizeof *a->is_pipeline);
  if (!a->pipeline || !a->is_pipeline) {
    fprintf(stderr, "quill-opt: out of memory\n");
    return 2;
  }
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    const char *v;
#define FLAG(name) (strcmp(s, name) == 0)
#define VALUE(name) (strncmp(s, name "=", sizeof(name)) == 0 && (v = s + sizeof(name)))
    const char *plugin;
    if (FLAG("--help") || FLAG("-h")) {
      print_help(ctx, stdout);
      return -1;
    } else if (plugin_arg(argc, argv, &i, &plugin)) {
      /* loaded already (load_plugins) */
    } else if (FLAG("-o")) {
      if (++i >= argc) {
        fprintf(stderr, "quill-opt: -o needs a file name\n");
        return 2;
      }
      a->output = argv[i];
    } else if (FLAG("--split-input-file")) {
      a->split_input = true;
    } else if (FLAG("--verify-diagnostics")) {
      a->verify_diagnostics = true;
    } else if (FLAG("--verify-roundtrip")) {
      a->verify_roundtrip = true;
    } else if (FLAG("--no-verify-each")) {
      a->pm_opts.verify_each = false;
    } else if (FLAG("--print-ir-after-all")) {
      a->pm_opts.print_ir_after_all = true;
    } else if (FLAG("--print-ir-before-all")) {
      a->pm_opts.print_ir_before_all = true;
    } else if (VALUE("--print-ir-before")) {
      a->pm_opts.print_ir_before = v;
    } else if (VALUE("--print-ir-after")) {
      a->pm_opts.print_ir_after = v;
    } else if (FLAG("--print-locs")) {
      a->print_locs = true;
    } else if (FLAG("--time-passes")) {
      a->pm_opts.time_passes = true;
    } else if (FLAG("--pass-statistics")) {
      a->pm_opts.statistics = true;
    } else if (VALUE("--debug-only")) {
      a->debug_only = v;
    } else if (VALUE("--check-backend")) {
      a->check_backend = v;
    } else if (VALUE("--view-graph")) {
      if (!*v) {
        fprintf(stderr, "quill-opt: --view-graph needs a file name\n");
        return 2;
      }
      a->view_graph = v;
    } else if (VALUE("--pass-pipeline")) {
      a->pipeline[a->npipeline] = v;
      a->is_pipeline[a->npipeline++] = true;
    } else if (s[0] == '-' && s[1] == '-' &&
               quill_pass_find(ctx, s + 2, strlen(s + 2))) {
      a->pipeline[a->npipeline] = s + 2;
      a->is_pipeline[a->npipeline++] = false;
    } else if (s[0] == '-' && s[1] != '\0') {
      fprintf(stderr, "quill-opt: unknown option '%s' (see --help)\n", s);
      return 2;
    } else if (!a->input) {
      a->input = s;
    } else {
      fprintf(stderr, "quill-opt: more than one input file ('%s')\n", s);
      return 2;
    }
#undef FLAG
#undef VALUE
  }
  if (!a->input)
    a->input = "-";
  if (a->view_graph && a->split_input) {
    fprintf(stderr, "quill-opt: --view-graph does not combine with "
                    "--split-input-file\n");
    return 2;
  }
  return 0;
}

/* Build the pass manager for one module run. */
static quill_pass_manager *build_pm(quill_context *ctx, const opt_args *a,
                                    FILE *dump) {
  quill_pass_manager *pm = quill_pass_manager_create(ctx);
  if (!pm)
    return NULL;
  quill_pass_manager_options o = a->pm_opts;
  o.dump_stream = dump;
  quill_pass_manager_set_options(pm, &o);
  for (unsigned i = 0; i < a->npipeline; i++) {
    quill_status st =
        a->is_pipeline[i]
            ? quill_pass_manager_parse_pipeline(pm, a->pipeline[i])
            : quill_pass_manager_add(pm, a->pipeline[i], NULL);
    if (st != QUILL_OK) {
      quill_pass_manager_destroy(pm);
      return NULL;
    }
  }
  return pm;
}

/* Check that printing, parsing and printing again gives the same text. */
static quill_status check_roundtrip(quill_context *ctx, quill_module *m,
                                    const quill_print_options *po) {
  quill_strbuf a, b;
  quill_strbuf_init(&a, ctx);
  quill_strbuf_init(&b, ctx);
  quill_print_module(m, &a, po);
  quill_status st = QUILL_OK;
  quill_module *m2 = quill_parse_module(ctx, quill_strbuf_str(&a), a.len,
                                        "<roundtrip>", 0);
  if (!m2) {
    st = quill_error(ctx, quill_loc_unknown(),
                     "roundtrip: the printed IR does not parse back");
  } else {
    quill_print_module(m2, &b, po);
    if (a.len != b.len || memcmp(a.data, b.data, a.len) != 0) {
      size_t i = 0;
      while (i < a.len && i < b.len && a.data[i] == b.data[i])
        i++;
      st = quill_error(ctx, quill_loc_unknown(),
                       "roundtrip: reprinted IR differs at byte %zu", i);
    }
    quill_module_destroy(m2);
  }
  quill_strbuf_free(&a);
  quill_strbuf_free(&b);
  return st;
}

/* Process one chunk of input; append printed output to `out`. */
static quill_status process_chunk(quill_context *ctx, const opt_args *a,
                                  const char *text, size_t len,
                                  uint32_t line_offset, quill_strbuf *out,
                                  FILE *dump) {
  quill_module *m =
      quill_parse_module(ctx, text, len, a->input, line_offset);
  if (!m)
    return QUILL_ERR_INVALID;
  quill_status st = quill_verify_module(m);
  quill_pass_manager *pm = NULL;
  if (st == QUILL_OK) {
    pm = build_pm(ctx, a, dump);
    st = pm ? quill_pass_manager_run(pm, m) : QUILL_ERR_INVALID;
  }
  quill_print_options po = {.print_locs = a->print_locs};
  if (st == QUILL_OK && a->verify_roundtrip)
    st = check_roundtrip(ctx, m, &po);
  if (st == QUILL_OK && a->view_graph) {
    quill_dot_options dot = {.dot_program = getenv("QUILL_DOT")};
    st = quill_dot_write_file(m, a->view_graph, &dot);
  }
  if (st == QUILL_OK)
    quill_print_module(m, out, &po);
  if (pm) {
    quill_pass_manager_report(pm);
    quill_pass_manager_destroy(pm);
  }
  quill_module_destroy(m);
  return st;
}

static int run(quill_context *ctx, const opt_args *a, const char *text,
               size_t len) {
  quill_strbuf out;
  quill_strbuf_init(&out, ctx);
  opt_chunk *chunks = NULL;
  size_t nchunks = opt_split_input(text, len, a->split_input, &chunks);
  if (!chunks) {
    fprintf(stderr, "quill-opt: out of memory\n");
    return 1;
  }
  opt_diag_collector *dc = NULL;
  if (a->verify_diagnostics) {
    dc = opt_diag_collector_create(ctx);
    if (!dc) {
      free(chunks);
      fprintf(stderr, "quill-opt: out of memory\n");
      return 1;
    }
  }
  bool failed = false;
  for (size_t i = 0; i < nchunks; i++) {
    if (i > 0)
      quill_strbuf_puts(&out, "// -----\n");
    quill_status st = process_chunk(ctx, a, chunks[i].text, chunks[i].len,
                                    chunks[i].line_offset, &out, stderr);
    if (dc) {
      if (opt_diag_collector_check(dc, a->input, chunks[i].text,
                                   chunks[i].len, chunks[i].line_offset) !=
          QUILL_OK)
        failed = true;
    } else if (st != QUILL_OK) {
      failed = true;
    }
  }
  int rc = failed ? 1 : 0;
  if (quill_strbuf_failed(&out)) {
    fprintf(stderr, "quill-opt: out of memory\n");
    rc = 1;
  } else if (!failed || a->verify_diagnostics) {
    if (quill_write_file(ctx, a->output ? a->output : "-",
                         quill_strbuf_str(&out), out.len) != QUILL_OK)
      rc = 1;
  }
  opt_diag_collector_destroy(dc);
  free(chunks);
  quill_strbuf_free(&out);
  return rc;
}

/* --check-backend: 0 if the config is valid (summary on stdout), 1 if
 * not (diagnostics on stderr). */
static int check_backend(const char *name) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  if (!ctx) {
    fprintf(stderr, "quill-opt: out of memory\n");
    return 1;
  }
  const quill_backend *b = quill_backend_get(ctx, name);
  if (b)
    quill_backend_print(b, stdout);
  quill_context_destroy(ctx);
  return b ? 0 : 1;
}

static int opt_main(int argc, char **argv) {
  opt_args a = {0};
  quill_context *ctx = quill_context_create(NULL, NULL);
  if (!ctx) {
    fprintf(stderr, "quill-opt: out of memory\n");
    return 1;
  }
  int rc = load_plugins(ctx, argc, argv);
  if (rc == 0)
    rc = parse_args(ctx, argc, argv, &a);
  char *text = NULL;
  size_t len = 0, cap = 0;
  if (rc == 0 && a.check_backend) {
    rc = check_backend(a.check_backend);
  } else if (rc == 0 &&
             quill_write_check_outputs(ctx,
                                       (const char *[]){a.output,
                                                        a.view_graph},
                                       2, &a.input, 1) != QUILL_OK) {
    rc = 1; /* an output would overwrite the input: refused up front */
  } else if (rc == 0) {
    bool opened;
    int err = quill_read_file(ctx, a.input, QUILL_READ_STDIN, &text, &len,
                              &cap, &opened);
    if (err) {
      fprintf(stderr, "quill-opt: cannot read '%s': %s\n", a.input,
              quill_read_strerror(err, QUILL_READ_STDIN));
      rc = 1;
    } else if (a.debug_only &&
               quill_debug_enable(ctx, a.debug_only) != QUILL_OK) {
      rc = 2;
    } else {
      rc = run(ctx, &a, text, len);
    }
  }
  if (text)
    quill_free(ctx, text, cap);
  quill_context_destroy(ctx);
  free(a.pipeline);
  free(a.is_pipeline);
  return rc < 0 ? 0 : rc;
}

/* Output to stdout (the printed IR, help, summaries) is checked once
 * here: output lost to a full disk or a closed pipe is exit status 1. */
int main(int argc, char **argv) {
  int rc = opt_main(argc, argv);
  int err = quill_write_flush(stdout);
  if (err && rc == 0) { /* else the failure is reported already */
    fprintf(stderr, "quill-opt: error: cannot write standard output: %s\n",
            strerror(err));
    rc = 1;
  }
  return rc;
}
