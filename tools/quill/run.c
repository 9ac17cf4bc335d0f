/*
 * run.c - `quill run`: run a model on input tensors with the reference
 * interpreter and write or print its outputs.
 *
 *   quill run MODEL (.onnx | .qir) [--input [NAME=]FILE]... [--output
 *             [NAME=]FILE]... [--input-shape NAME=D,..]... [--const
 *             NAME=FILE]... [--entry FUNC] [--print] [--time]
 *             [--load-pass-plugin=LIB]... [--pass-pipeline=P]
 *             [--pass-statistics]
 *             [--jit [--isa PATH] [--threads N]]
 *
 * Flow:
 *
 *   argv --parse_args--> run_args           (bad syntax: exit 2)
 *   model --load (onnx import | parse+verify)--> module
 *   --pass-pipeline (passes, plugin passes of --load-pass-plugin)--> graph
 *   --input  --bind_inputs--> one tensor per graph argument
 *            (NAME=FILE binds by name, FILE binds the next unbound
 *            argument in order; types must match exactly)
 *   quill_ref_run (targets/reference/interp.c) --> output tensors
 *   (--jit: the LLVM target's code, compiled in process: quill_llvm_jit_run)
 *   --output --bind_outputs--> .npy files;  --print --> stdout
 *
 * Every problem with the model or the files is a located diagnostic and
 * exit 1; only a malformed command line is exit 2.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "targets/llvm/llvm_target.h"
#include "tools/quill/quill.h"

typedef struct binding {
  const char *name; /* graph input/result name; NULL: bind by position */
  const char *file;
  const char *arg;  /* the argument as written */
} binding;

typedef struct run_args {
  const char *model;
  const char *entry;
  binding *inputs, *outputs, *consts;
  unsigned ninputs, noutputs, nconsts;
  const char **shapes;
  unsigned nshapes;
  const char **plugins;
  unsigned nplugins;
  const char *pipeline;
  bool print, time, statistics;
  bool jit;
  unsigned threads;
  quill_llvm_isa isa;
} run_args;

static void print_help(FILE *out) {
  fputs(
      "USAGE: quill run MODEL [options]\n\n"
      "Run MODEL (.onnx, or .qir textual IR) on input tensors with the\n"
      "reference interpreter, and write or print its outputs.\n\n"
      "OPTIONS:\n"
      "  --input NAME=FILE        bind graph input NAME to a tensor file\n"
      "  --input FILE             bind the next unbound graph input, in order\n"
      "                           (files: NumPy .npy or ONNX TensorProto .pb)\n"
      "  --output NAME=FILE       write graph output NAME to FILE (.npy)\n"
      "  --output FILE            write the next unwritten output, in order\n"
      "  --input-shape NAME=D,..  static shape of an ONNX graph input (for\n"
      "                           symbolic dims); may be repeated\n"
      "  --const NAME=FILE        bind an ONNX graph input to a constant at\n"
      "                           import time (needs frontend support)\n"
      "  --entry FUNC             function to run in a .qir module (default:\n"
      "                           the first)\n"
      "  --print                  print every output (shape, type, values);\n"
      "                           the default when no --output is given\n"
      "  --time                   report import and run times on stderr\n"
      "  --load-pass-plugin LIB   load a pass plugin (may be repeated)\n"
      "  --pass-pipeline P        run pipeline P on the model before running\n"
      "                           it (e.g. 'canonicalize,my-plugin-pass')\n"
      "  --pass-statistics        report pass statistics on stderr\n"
      "  --jit                    run the code the LLVM target generates\n"
      "                           (compiled in process) instead of the\n"
      "                           reference interpreter\n"
      "  --isa PATH               with --jit: auto, portable, avx2, avx-vnni,\n"
      "                           avx512-vnni, amx, neon-dot, neon-i8mm\n"
      "  --threads N              with --jit: threads for the kernels\n"
      "  -h, --help               show this help\n\n"
      "Input types must equal the model's input types (shape and element\n"
      "type). Exit codes: 0 success, 1 an error in the model, the files or\n"
      "their types, 2 bad usage.\n",
      out);
}

/* Split "NAME=FILE" (NAME non-empty) or keep "FILE" positional. */
static binding split_binding(const char *arg) {
  binding b = {NULL, arg, arg};
  const char *eq = strchr(arg, '=');
  if (eq && eq != arg) {
    size_t n = (size_t)(eq - arg);
    char *name = malloc(n + 1);
    if (name) {
      memcpy(name, arg, n);
      name[n] = '\0';
      b.name = name;
      b.file = eq + 1;
    }
  }
  return b;
}

static void free_bindings(binding *b, unsigned n) {
  for (unsigned i = 0; i < n; i++)
    free((char *)b[i].name);
  free(b);
}

static void free_args(run_args *a) {
  free_bindings(a->inputs, a->ninputs);
  free_bindings(a->outputs, a->noutputs);
  free_bindings(a->consts, a->nconsts);
  free(a->shapes);
  free(a->plugins);
}

/* Returns QUILL_EXIT_OK, or QUILL_EXIT_USAGE after a message; *help is set
 * for --help. */
static int parse_args(int argc, char **argv, run_args *a, bool *help) {
  quill_cli c;
  quill_cli_init(&c, argc, argv, "quill run");
  memset(a, 0, sizeof *a);
  a->inputs = calloc((size_t)argc, sizeof *a->inputs);
  a->outputs = calloc((size_t)argc, sizeof *a->outputs);
  a->consts = calloc((size_t)argc, sizeof *a->consts);
  a->shapes = calloc((size_t)argc, sizeof *a->shapes);
  a->plugins = calloc((size_t)argc, sizeof *a->plugins);
  if (!a->inputs || !a->outputs || !a->consts || !a->shapes || !a->plugins) {
    fputs("quill run: error: out of memory\n", stderr);
    return QUILL_EXIT_USAGE;
  }
  const char *v;
  while (quill_cli_peek(&c) && !c.bad) {
    const char *s = quill_cli_peek(&c);
    if (quill_cli_flag(&c, "--help") || quill_cli_flag(&c, "-h")) {
      *help = true;
      return QUILL_EXIT_OK;
    } else if (quill_cli_value(&c, "--input", &v)) {
      if (v && !*v)
        quill_cli_usage_error(&c, "--input needs [NAME=]FILE");
      else if (v)
        a->inputs[a->ninputs++] = split_binding(v);
    } else if (quill_cli_value(&c, "--output", &v)) {
      if (v && !*v)
        quill_cli_usage_error(&c, "--output needs [NAME=]FILE");
      else if (v) {
        binding b = split_binding(v);
        if (b.name && !*b.file)
          quill_cli_usage_error(&c, "--output %s: no file name", v);
        a->outputs[a->noutputs++] = b;
      }
    } else if (quill_cli_value(&c, "--const", &v)) {
      if (v) {
        binding b = split_binding(v);
        a->consts[a->nconsts++] = b;
        if (!b.name || !*b.file)
          quill_cli_usage_error(&c, "--const needs NAME=FILE, got '%s'", v);
      }
    } else if (quill_cli_input_shape(&c, a->shapes, &a->nshapes)) {
    } else if (quill_cli_value(&c, "--entry", &v)) {
      a->entry = v;
    } else if (quill_cli_flag(&c, "--print")) {
      a->print = true;
    } else if (quill_cli_flag(&c, "--time")) {
      a->time = true;
    } else if (quill_cli_value(&c, "--load-pass-plugin", &v)) {
      if (v)
        a->plugins[a->nplugins++] = v;
    } else if (quill_cli_value(&c, "--pass-pipeline", &v)) {
      a->pipeline = v;
    } else if (quill_cli_flag(&c, "--pass-statistics")) {
      a->statistics = true;
    } else if (quill_cli_flag(&c, "--jit")) {
      a->jit = true;
    } else if (quill_cli_value(&c, "--isa", &v)) {
      if (v && !quill_llvm_isa_parse(v, &a->isa))
        quill_cli_usage_error(&c, "--isa must be auto, portable, avx2, "
                                  "avx-vnni, avx512-vnni, amx, neon-dot or "
                                  "neon-i8mm, got '%s'",
                              v);
    } else if (quill_cli_value(&c, "--threads", &v)) {
      char *end;
      long n = v ? strtol(v, &end, 10) : 0;
      if (v && (*end || n < 1 || n > 1024))
        quill_cli_usage_error(&c, "--threads needs a number in [1, 1024], got "
                                  "'%s'",
                              v);
      a->threads = (unsigned)n;
    } else if (s[0] == '-' && s[1] != '\0') {
      quill_cli_usage_error(&c, "unknown option '%s' (see 'quill run --help')",
                            s);
    } else if (!a->model) {
      a->model = s;
      c.i++;
    } else {
      quill_cli_usage_error(&c,
                            "more than one model ('%s' and '%s'); inputs "
                            "are given with --input",
                            a->model, s);
    }
  }
  if (!c.bad && !a->model)
    quill_cli_usage_error(&c, "no model given (see 'quill run --help')");
  if (!c.bad && a->nshapes && quill_tool_is_qir(a->model))
    quill_cli_usage_error(&c, "--input-shape applies to ONNX models only");
  if (!c.bad && a->nconsts && quill_tool_is_qir(a->model))
    quill_cli_usage_error(&c, "--const applies to ONNX models only");
  if (!c.bad && !a->jit && (a->threads || a->isa))
    quill_cli_usage_error(&c, "--isa and --threads apply to --jit only");
  if (!c.bad && a->entry && !quill_tool_is_qir(a->model))
    quill_cli_usage_error(&c, "--entry applies to .qir models only");
  return c.bad ? QUILL_EXIT_USAGE : QUILL_EXIT_OK;
}

/* ---- binding ------------------------------------------------------------------ */

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static bool file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

static const char *value_name(const quill_value *v) {
  const char *n = quill_value_name(v);
  return n ? n : "";
}

/* Index of the graph argument or result named `name`, or -1. */
static int find_name(const quill_graph *g, const char *name, bool results) {
  if (results) {
    quill_op *ret = quill_graph_return(g);
    for (unsigned i = 0; ret && i < quill_op_num_operands(ret); i++)
      if (!strcmp(value_name(quill_op_operand(ret, i)), name))
        return (int)i;
    return -1;
  }
  for (unsigned i = 0; i < quill_graph_num_args(g); i++)
    if (!strcmp(value_name(quill_graph_arg(g, i)), name))
      return (int)i;
  return -1;
}

/* "'a', 'b'" list of the graph's input or output names. */
static void list_names(const quill_graph *g, bool results, char *buf,
                       size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  quill_op *ret = quill_graph_return(g);
  unsigned n = results ? (ret ? quill_op_num_operands(ret) : 0)
                       : quill_graph_num_args(g);
  for (unsigned i = 0; i < n && len < cap; i++) {
    const quill_value *v =
        results ? quill_op_operand(ret, i) : quill_graph_arg(g, i);
    len += (size_t)snprintf(buf + len, cap - len, "%s'%s'", i ? ", " : "",
                            value_name(v));
  }
  if (!n)
    snprintf(buf, cap, "none");
}

/* Resolve bindings to graph slots: named ones first, then positional ones
 * to the unbound slots in order. slot_file[i] gets the file for slot i. A
 * binding written NAME=FILE whose NAME is unknown is taken as a positional
 * file name if such a file exists (input side only). */
static quill_status resolve(quill_context *ctx, const quill_graph *g,
                            binding *b, unsigned nb, bool results,
                            const char **slot_file, unsigned nslots) {
  const char *what = results ? "output" : "input";
  char names[1024];
  for (unsigned k = 0; k < nb; k++) {
    if (!b[k].name)
      continue;
    int idx = find_name(g, b[k].name, results);
    if (idx < 0 && !results && file_exists(b[k].arg)) {
      free((char *)b[k].name);
      b[k].name = NULL;
      b[k].file = b[k].arg;
      continue;
    }
    if (idx < 0) {
      list_names(g, results, names, sizeof names);
      return quill_error(ctx, quill_graph_loc(g),
                         "--%s %s: the model has no %s named '%s' (its "
                         "%ss: %s)",
                         what, b[k].arg, what, b[k].name, what, names);
    }
    if (slot_file[idx])
      return quill_error(ctx, quill_graph_loc(g),
                         "--%s %s: %s '%s' is bound twice", what, b[k].arg,
                         what, b[k].name);
    slot_file[idx] = b[k].file;
  }
  unsigned next = 0;
  for (unsigned k = 0; k < nb; k++) {
    if (b[k].name)
      continue;
    while (next < nslots && slot_file[next])
      next++;
    if (next >= nslots)
      return quill_error(ctx, quill_graph_loc(g),
                         "--%s %s: too many %ss, the model has %u", what,
                         b[k].arg, what, nslots);
    slot_file[next++] = b[k].file;
  }
  return QUILL_OK;
}

/* Whether a tensor of type `have` may stand for an argument of type `want`
 * bit for bit: a quantized argument takes its storage integers, a bf16
 * argument u16 bit patterns (numpy has no bf16; ONNX's test data and
 * numpy_helper store bf16 as uint16). Shapes must be equal. */
static bool same_bits(quill_context *ctx, quill_type *have, quill_type *want) {
  quill_type *we = quill_type_elem(want), *he = quill_type_elem(have);
  quill_type *storage = NULL;
  if (quill_type_is_quant(we))
    storage = quill_type_quant_storage(we);
  else if (quill_type_kind_of(we) == QUILL_TYPE_BF16)
    storage = quill_type_scalar(ctx, QUILL_TYPE_U16);
  return storage && he == storage &&
         quill_type_with_elem(ctx, want, storage) == have;
}

/* Load one tensor per graph argument and check its type. */
static quill_status load_inputs(quill_context *ctx, const quill_graph *g,
                                run_args *a, quill_tensor *in) {
  unsigned nargs = quill_graph_num_args(g);
  const char **files = calloc(nargs ? nargs : 1, sizeof *files);
  if (!files)
    return QUILL_ERR_NOMEM;
  quill_status st = resolve(ctx, g, a->inputs, a->ninputs, false, files, nargs);
  for (unsigned i = 0; st == QUILL_OK && i < nargs; i++) {
    const quill_value *arg = quill_graph_arg(g, i);
    quill_type *want = quill_value_type(arg);
    if (!files[i]) {
      char ty[256];
      quill_tool_type_str(ctx, want, ty, sizeof ty);
      st = quill_error(ctx, quill_graph_loc(g),
                       "no tensor for input '%s' (input %u of %u, %s): give "
                       "it with --input",
                       value_name(arg), i + 1, nargs, ty);
      break;
    }
    st = quill_tool_read_tensor(ctx, files[i], &in[i]);
    if (st != QUILL_OK)
      break;
    if (in[i].type != want && same_bits(ctx, in[i].type, want))
      in[i].type = want;
    if (in[i].type != want) {
      char got[256], exp[256];
      quill_tool_type_str(ctx, in[i].type, got, sizeof got);
      quill_tool_type_str(ctx, want, exp, sizeof exp);
      st = quill_error(ctx, quill_loc_file(ctx, files[i], 0, 0),
                       "input '%s' has type %s, but the model expects %s",
                       value_name(arg), got, exp);
    }
  }
  free(files);
  return st;
}

static quill_status write_outputs(quill_context *ctx, const quill_graph *g,
                                  run_args *a, const quill_tensor *out,
                                  unsigned nout) {
  const char **files = calloc(nout ? nout : 1, sizeof *files);
  if (!files)
    return QUILL_ERR_NOMEM;
  quill_status st =
      resolve(ctx, g, a->outputs, a->noutputs, true, files, nout);
  for (unsigned i = 0; st == QUILL_OK && i < nout; i++)
    if (files[i])
      st = quill_tool_write_tensor(ctx, files[i], &out[i]);
  free(files);
  return st;
}

/* ---- the command ------------------------------------------------------------ */

/* --output files against the model, the --input and --const files and
 * each other. */
static quill_status check_outputs(quill_context *ctx, const run_args *a) {
  unsigned nin = 1 + a->ninputs + a->nconsts;
  const char **outs = calloc(a->noutputs ? a->noutputs : 1, sizeof *outs);
  const char **ins = calloc(nin, sizeof *ins);
  quill_status st = outs && ins ? QUILL_OK : QUILL_ERR_NOMEM;
  if (!st) {
    for (unsigned i = 0; i < a->noutputs; i++)
      outs[i] = a->outputs[i].file;
    ins[0] = a->model;
    for (unsigned i = 0; i < a->ninputs; i++)
      ins[1 + i] = a->inputs[i].file;
    for (unsigned i = 0; i < a->nconsts; i++)
      ins[1 + a->ninputs + i] = a->consts[i].file;
    st = quill_write_check_outputs(ctx, outs, a->noutputs, ins, nin);
  }
  free(outs);
  free(ins);
  return st;
}

static int run(run_args *a) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  if (!ctx)
    return QUILL_EXIT_ERROR;
  double t0 = now_ms();
  quill_onnx_options opts;
  memset(&opts, 0, sizeof opts);
  opts.input_shapes = a->shapes;
  opts.num_input_shapes = a->nshapes;
  /* --const NAME=FILE: graph inputs that become constants at import. */
  quill_tensor *ctensors = calloc(a->nconsts ? a->nconsts : 1,
                                  sizeof *ctensors);
  quill_onnx_binding *cb = calloc(a->nconsts ? a->nconsts : 1, sizeof *cb);
  quill_status cst = ctensors && cb ? QUILL_OK : QUILL_ERR_NOMEM;
  if (cst == QUILL_OK)
    cst = check_outputs(ctx, a);
  if (cst == QUILL_OK)
    cst = quill_tool_load_plugins(ctx, a->plugins, a->nplugins);
  for (unsigned i = 0; cst == QUILL_OK && i < a->nconsts; i++) {
    cb[i].name = a->consts[i].name;
    cb[i].value = &ctensors[i];
    cst = quill_tool_read_tensor(ctx, a->consts[i].file, &ctensors[i]);
  }
  opts.bindings = cb;
  opts.num_bindings = a->nconsts;
  quill_module *m =
      cst == QUILL_OK ? quill_tool_load_model(ctx, a->model, &opts) : NULL;
  if (ctensors)
    quill_ref_tensors_free(ctx, ctensors, a->nconsts);
  free(ctensors);
  free(cb);
  if (m && a->pipeline &&
      quill_tool_run_pipeline(ctx, m, a->pipeline, a->statistics)) {
    quill_module_destroy(m);
    m = NULL;
  }
  quill_graph *g = m ? quill_tool_entry_graph(ctx, m, a->model, a->entry)
                     : NULL;
  double t1 = now_ms();
  quill_status st = g ? QUILL_OK : QUILL_ERR_INVALID;
  unsigned nin = g ? quill_graph_num_args(g) : 0;
  unsigned nout = g ? quill_graph_num_results(g) : 0;
  quill_tensor *in = calloc(nin ? nin : 1, sizeof *in);
  quill_tensor *out = calloc(nout ? nout : 1, sizeof *out);
  if (st == QUILL_OK && (!in || !out))
    st = QUILL_ERR_NOMEM;
  quill_llvm_jit *jit = NULL;
  if (st == QUILL_OK && a->jit) { /* compile first: unsupported ops */
    quill_llvm_options o;
    quill_llvm_options_init(&o);
    o.isa = a->isa;
    o.threads = a->threads ? a->threads : 1;
    st = quill_llvm_jit_create(ctx, g, &o, &jit);
  } else if (st == QUILL_OK) { /* unsupported ops first: no need to read inputs */
    st = quill_ref_check_graph(ctx, g);
  }
  double tc = now_ms();
  if (st == QUILL_OK)
    st = load_inputs(ctx, g, a, in);
  double t2 = now_ms(), t3 = t2;
  if (st == QUILL_OK) {
    st = jit ? quill_llvm_jit_run(jit, in, nin, out, nout)
             : quill_ref_run(ctx, g, in, nin, out, nout);
    t3 = now_ms();
  }
  quill_llvm_jit_destroy(jit);
  if (st == QUILL_OK)
    st = write_outputs(ctx, g, a, out, nout);
  if (st == QUILL_OK && (a->print || a->noutputs == 0)) {
    quill_op *ret = quill_graph_return(g);
    for (unsigned i = 0; i < nout; i++)
      quill_tool_print_tensor(stdout, ctx,
                              value_name(quill_op_operand(ret, i)), &out[i],
                              100);
  }
  if (st == QUILL_OK && a->time) {
    if (a->jit)
      fprintf(stderr, "quill run: load %.1f ms, jit compile %.1f ms, inputs "
                      "%.1f ms, run %.1f ms\n",
              t1 - t0, tc - t1, t2 - tc, t3 - t2);
    else
      fprintf(stderr, "quill run: load %.1f ms, inputs %.1f ms, run %.1f "
                      "ms\n",
              t1 - t0, t2 - t1, t3 - t2);
  }
  if (st == QUILL_ERR_NOMEM)
    fputs("quill run: error: out of memory\n", stderr);
  if (in)
    quill_ref_tensors_free(ctx, in, nin);
  if (out)
    quill_ref_tensors_free(ctx, out, nout);
  free(in);
  free(out);
  if (m)
    quill_module_destroy(m);
  quill_context_destroy(ctx);
  return st == QUILL_OK ? QUILL_EXIT_OK : QUILL_EXIT_ERROR;
}

int quill_cmd_run(int argc, char **argv) {
  run_args a;
  bool help = false;
  int rc = parse_args(argc, argv, &a, &help);
  if (help) {
    print_help(stdout);
  } else if (rc == QUILL_EXIT_OK) {
    rc = run(&a);
  }
  free_args(&a);
  return rc;
}
