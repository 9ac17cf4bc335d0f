/*
 * compile.c - `quill compile`: compile a model ahead of time with the LLVM
 * target into an object file (or assembly, or LLVM IR) plus a C header; an
 * output ending in .tflite goes to the TFLite target (compile_tflite.c).
 *
 *   quill compile MODEL (.onnx | .qir) -o OUT [--emit=obj|asm|llvm-ir]
 *         [--header H] [--name NAME] [--target T] [--mcpu C] [--mattr F]
 *         [--isa PATH] [--threads N] [--io=model|int8|float] [-O N]
 *         [--entry FUNC] [--backend B --calib PATH [--max-samples N]]
 *         [--input-shape NAME=D,..]...
 *
 * Flow:
 *
 *   model --load--> graph [--backend/--calib: the quantization pipeline of
 *   `quill quantize`] --io adaptation--> quill_llvm_compile (every
 *   unsupported op reported, nothing written) --> OUT (+ H for obj/asm,
 *   + quill_rt.c for threads)
 *
 * Files are written through temporaries renamed into place; if a later
 * file fails, the ones this run already wrote are removed again, so a
 * failed compile leaves nothing behind.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backend.h"
#include "passes/calib_data.h"
#include "passes/quantize_pipeline.h"
#include "targets/llvm/llvm_target.h"
#include "tools/quill/quill.h"

typedef struct compile_args {
  const char *model, *out, *header, *name, *entry;
  const char *triple, *cpu, *features, *backend, *calib;
  long long max_samples;
  long long adaround_iters; /* 0: off */
  quill_llvm_emit emit;
  quill_llvm_io io;
  quill_llvm_isa isa;
  unsigned threads, opt;
  bool no_header, noinline, parallel_all;
  const char *plugins[16]; /* --load-pass-plugin */
  unsigned nplugins;
  const char **shapes; /* --input-shape, argc entries */
  unsigned nshapes;
  int equalize, bias_correction; /* QUILL_ACCURACY_* */
} compile_args;

static void print_help(FILE *out) {
  fputs(
      "USAGE: quill compile MODEL -o OUT [options]\n\n"
      "Compile MODEL (.onnx, or .qir textual IR) ahead of time with the LLVM\n"
      "target: one entry function NAME_run(inputs..., outputs..., scratch),\n"
      "weights as constants, no runtime library.\n\n"
      "OPTIONS:\n"
      "  -o FILE               the output file (required)\n"
      "  --emit=KIND           obj (default; lib when OUT ends in .a), asm,\n"
      "                        llvm-ir, or lib (a static library .a)\n"
      "  --header FILE         the C header (default: OUT with .h; written\n"
      "                        for obj, lib and asm)\n"
      "  --no-header           do not write a header\n"
      "  --name NAME           entry prefix, a C identifier (default: the\n"
      "                        output's base name, else 'model')\n"
      "  --target TRIPLE       target triple (default: the host)\n"
      "  --mcpu CPU            target CPU (default: the host's)\n"
      "  --mattr FEATURES      target features, e.g. +avx2,-avx512f\n"
      "  --isa PATH            integer kernel path: auto (default), portable,\n"
      "                        avx2, avx-vnni, avx512-vnni, amx, neon-dot,\n"
      "                        neon-i8mm\n"
      "  --threads N           split kernels over N threads (N > 1 needs\n"
      "                        quill_rt.c, written next to OUT)\n"
      "  --io=MODE             model (default): the graph's IO types; int8:\n"
      "                        quantized IO (drops input quantize / output\n"
      "                        dequantize); float: float IO\n"
      "  -O N                  LLVM optimization level 0..3 (default 3)\n"
      "  --noinline-stages     one function per kernel stage (q.<op>.<kind>\n"
      "                        symbols, for profilers)\n"
      "  --parallel-all        with --threads, hand every stage of several\n"
      "                        tasks to the pool, however small (profiling:\n"
      "                        bench/stage_profile.py)\n"
      "  --entry FUNC          function to compile in a .qir module\n"
      "  --backend B --calib PATH quantize a float model first, as 'quill\n"
      "                        quantize' does (integer ops); B a shipped\n"
      "                        config or a JSON file\n"
      "  --max-samples N       calibrate on the first N samples only\n"
      "  --equalize[=relu6], --bias-correction (and --no-...),\n"
      "  --adaround-iters N    the accuracy passes, as for 'quill quantize'\n"
      "  --input-shape NAME=D,.. static shape of an ONNX graph input (for\n"
      "                        dynamic dims); may be repeated\n"
      "  --load-pass-plugin LIB load a plugin (e.g. the one a backend config\n"
      "                        names); may be repeated\n"
      "  -h, --help            show this help\n\n"
      "An output ending in .tflite selects the TFLite target, which has\n"
      "its own options: see 'quill compile -o OUT.tflite --help'.\n\n"
      "Exit codes: 0 success, 1 an error in the model or target (nothing\n"
      "is written), 2 bad usage.\n",
      out);
}

static int parse_args(int argc, char **argv, compile_args *a, bool *help) {
  quill_cli c;
  quill_cli_init(&c, argc, argv, "quill compile");
  memset(a, 0, sizeof *a);
  a->shapes = calloc((size_t)argc, sizeof *a->shapes);
  if (!a->shapes) {
    fputs("quill compile: error: out of memory\n", stderr);
    return QUILL_EXIT_ERROR;
  }
  a->threads = 1;
  a->opt = 3;
  const char *v;
  bool emit_given = false;
  while (quill_cli_peek(&c) && !c.bad) {
    const char *s = quill_cli_peek(&c);
    if (quill_cli_flag(&c, "--help") || quill_cli_flag(&c, "-h")) {
      *help = true;
      return QUILL_EXIT_OK;
    } else if (quill_cli_value(&c, "-o", &v)) {
      a->out = v;
    } else if (quill_cli_value(&c, "--emit", &v)) {
      if (!v)
        continue;
      emit_given = true;
      if (!strcmp(v, "obj"))
        a->emit = QUILL_LLVM_EMIT_OBJ;
      else if (!strcmp(v, "asm"))
        a->emit = QUILL_LLVM_EMIT_ASM;
      else if (!strcmp(v, "llvm-ir"))
        a->emit = QUILL_LLVM_EMIT_IR;
      else if (!strcmp(v, "lib"))
        a->emit = QUILL_LLVM_EMIT_LIB;
      else
        quill_cli_usage_error(&c, "--emit must be obj, asm, llvm-ir or lib, "
                                  "got '%s'",
                              v);
    } else if (quill_cli_value(&c, "--header", &v)) {
      a->header = v;
    } else if (quill_cli_flag(&c, "--no-header")) {
      a->no_header = true;
    } else if (quill_cli_flag(&c, "--noinline-stages")) {
      a->noinline = true;
    } else if (quill_cli_flag(&c, "--parallel-all")) {
      a->parallel_all = true;
    } else if (quill_cli_value(&c, "--name", &v)) {
      a->name = v;
    } else if (quill_cli_value(&c, "--target", &v)) {
      a->triple = v;
    } else if (quill_cli_value(&c, "--mcpu", &v)) {
      a->cpu = v;
    } else if (quill_cli_value(&c, "--mattr", &v)) {
      a->features = v;
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
    } else if (quill_cli_value(&c, "--io", &v)) {
      if (!v)
        continue;
      if (!strcmp(v, "model"))
        a->io = QUILL_LLVM_IO_MODEL;
      else if (!strcmp(v, "int8"))
        a->io = QUILL_LLVM_IO_INT8;
      else if (!strcmp(v, "float"))
        a->io = QUILL_LLVM_IO_FLOAT;
      else
        quill_cli_usage_error(&c, "--io must be model, int8 or float, got "
                                  "'%s'",
                              v);
    } else if (quill_cli_value(&c, "-O", &v)) {
      if (v && (strlen(v) != 1 || v[0] < '0' || v[0] > '3'))
        quill_cli_usage_error(&c, "-O needs 0..3, got '%s'", v);
      else if (v)
        a->opt = (unsigned)(v[0] - '0');
    } else if (quill_cli_value(&c, "--load-pass-plugin", &v)) {
      if (v && a->nplugins == sizeof a->plugins / sizeof a->plugins[0])
        quill_cli_usage_error(&c, "at most 16 --load-pass-plugin options");
      else if (v)
        a->plugins[a->nplugins++] = v;
    } else if (quill_cli_value(&c, "--entry", &v)) {
      a->entry = v;
    } else if (quill_cli_value(&c, "--backend", &v)) {
      a->backend = v;
    } else if (quill_cli_value(&c, "--calib", &v)) {
      a->calib = v;
    } else if (quill_cli_max_samples(&c, &a->max_samples)) {
    } else if (quill_cli_adaround_iters(&c, &a->adaround_iters)) {
    } else if (quill_cli_input_shape(&c, a->shapes, &a->nshapes)) {
    } else if (quill_cli_accuracy(&c, &a->equalize, &a->bias_correction)) {
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
  if (!c.bad && !a->model)
    quill_cli_usage_error(&c, "no model given (see 'quill compile --help')");
  if (!c.bad && a->out && !emit_given) {
    size_t n = strlen(a->out);
    if (n > 2 && !strcmp(a->out + n - 2, ".a"))
      a->emit = QUILL_LLVM_EMIT_LIB;
  }
  if (!c.bad && !a->out)
    quill_cli_usage_error(&c, "no output file given (-o FILE)");
  if (!c.bad && a->entry && !quill_tool_is_qir(a->model))
    quill_cli_usage_error(&c, "--entry applies to .qir models only");
  if (!c.bad && a->nshapes && quill_tool_is_qir(a->model))
    quill_cli_usage_error(&c, "--input-shape applies to ONNX models only");
  if (!c.bad && (a->backend || a->calib) && !(a->backend && a->calib))
    quill_cli_usage_error(&c, "--backend and --calib go together");
  return c.bad ? QUILL_EXIT_USAGE : QUILL_EXIT_OK;
}

/* OUT with its extension replaced by ext (malloc'd). */
static char *sibling(const char *out, const char *ext) {
  const char *slash = strrchr(out, '/');
  const char *dot = strrchr(out, '.');
  size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - out)
                                               : strlen(out);
  char *r = malloc(stem + strlen(ext) + 1);
  if (r) {
    memcpy(r, out, stem);
    strcpy(r + stem, ext);
  }
  return r;
}

/* dirname(out) + "/" + file (malloc'd). */
static char *beside(const char *out, const char *file) {
  const char *slash = strrchr(out, '/');
  size_t d = slash ? (size_t)(slash - out + 1) : 0;
  char *r = malloc(d + strlen(file) + 1);
  if (r) {
    memcpy(r, out, d);
    strcpy(r + d, file);
  }
  return r;
}

/* The default entry name: the output's base name made an identifier. */
static void default_name(const char *out, char *buf, size_t cap) {
  const char *b = strrchr(out, '/');
  b = b ? b + 1 : out;
  size_t k = 0;
  for (; b[k] && b[k] != '.' && k + 1 < cap; k++) {
    char ch = b[k];
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
              (ch >= '0' && ch <= '9') || ch == '_';
    buf[k] = ok ? ch : '_';
  }
  buf[k] = '\0';
  if (!quill_llvm_is_c_identifier(buf))
    snprintf(buf, cap, "model");
}

static int compile(compile_args *a) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  if (!ctx)
    return QUILL_EXIT_ERROR;
  char name[128];
  if (a->name && !quill_llvm_is_c_identifier(a->name)) {
    fprintf(stderr, "quill compile: error: --name '%s' is not a valid C "
                    "identifier\n",
            a->name);
    quill_context_destroy(ctx);
    return QUILL_EXIT_ERROR;
  }
  if (a->name)
    snprintf(name, sizeof name, "%s", a->name);
  else
    default_name(a->out, name, sizeof name);
  bool want_header = !a->no_header && a->emit != QUILL_LLVM_EMIT_IR;
  bool want_rt = a->threads > 1 && a->emit != QUILL_LLVM_EMIT_IR;
  char *hdr = a->header ? strdup(a->header) : sibling(a->out, ".h");
  char *rt = beside(a->out, "quill_rt.c");
  quill_status st = hdr && rt ? QUILL_OK : QUILL_ERR_NOMEM;
  const char *outs[] = {a->out, want_header ? hdr : NULL,
                        want_rt ? rt : NULL};
  const char *ins[] = {a->model, a->calib};
  if (st == QUILL_OK)
    st = quill_write_check_outputs(ctx, outs, 3, ins, a->calib ? 2 : 1);
  quill_onnx_options oo;
  memset(&oo, 0, sizeof oo);
  oo.input_shapes = a->shapes;
  oo.num_input_shapes = a->nshapes;
  quill_module *m = NULL;
  if (st == QUILL_OK && quill_tool_load_plugins(ctx, a->plugins, a->nplugins))
    st = QUILL_ERR_INVALID;
  if (st == QUILL_OK && a->backend) {
    /* imported as quill quantize imports for the backend */
    const quill_backend *qb = quill_backend_get(ctx, a->backend);
    st = qb ? QUILL_OK : QUILL_ERR_INVALID;
    oo.rnn_float = quill_backend_rnn_float(qb);
  }
  if (st == QUILL_OK)
    m = quill_tool_load_model(ctx, a->model, &oo);
  quill_graph *g = m ? quill_tool_entry_graph(ctx, m, a->model, a->entry)
                     : NULL;
  if (st == QUILL_OK && !g)
    st = QUILL_ERR_INVALID;
  if (st == QUILL_OK && a->backend) {
    /* the quantization pipeline of `quill quantize` (passes/
     * quantize_pipeline.h), ending in fuse-qdq */
    quill_quantize_options qo;
    memset(&qo, 0, sizeof qo);
    qo.backend = a->backend;
    qo.calib_path =
        a->calib && quill_quantize_option_safe(a->calib) ? a->calib : NULL;
    qo.max_samples = (size_t)a->max_samples;
    qo.adaround_iters = (unsigned)a->adaround_iters;
    qo.equalize = a->equalize;
    qo.bias_correction = a->bias_correction;
    quill_calib_dataset *ds = NULL;
    if (!qo.calib_path) {
      ds = quill_calib_dataset_create(ctx, g);
      st = ds ? QUILL_OK : QUILL_ERR_INVALID;
      if (st == QUILL_OK) {
        quill_calib_dataset_set_max_samples(ds, (size_t)a->max_samples);
        st = quill_calib_dataset_load(ds, a->calib);
      }
    }
    if (st == QUILL_OK)
      st = quill_quantize_module(ctx, m, &qo, QUILL_QUANTIZE_ALL, ds, NULL);
    quill_calib_dataset_destroy(ds);
    if (st == QUILL_OK) /* the pipeline ran on the whole module */
      g = quill_tool_entry_graph(ctx, m, a->model, a->entry);
    if (st == QUILL_OK && !g)
      st = QUILL_ERR_INVALID;
  }
  if (st == QUILL_OK)
    st = quill_llvm_adapt_io(ctx, g, a->io);
  quill_llvm_options o;
  quill_llvm_options_init(&o);
  o.triple = a->triple;
  o.cpu = a->cpu;
  o.features = a->features;
  o.opt_level = a->opt;
  o.threads = a->threads;
  o.name = name;
  o.isa = a->isa;
  o.noinline = a->noinline;
  o.parallel_all = a->parallel_all;
  quill_llvm_compiled *cm = NULL;
  if (st == QUILL_OK)
    st = quill_llvm_compile(ctx, g, &o, &cm);
  /* Write everything or nothing. */
  bool wrote_out = false, wrote_hdr = false;
  if (st == QUILL_OK) {
    st = quill_llvm_emit_file(ctx, cm, a->emit, a->out);
    wrote_out = st == QUILL_OK;
  }
  if (st == QUILL_OK && want_header) {
    st = quill_llvm_emit_header(ctx, cm, hdr);
    wrote_hdr = st == QUILL_OK;
  }
  if (st == QUILL_OK && want_rt)
    st = quill_llvm_emit_runtime(ctx, rt);
  if (st != QUILL_OK) {
    if (wrote_out)
      unlink(a->out);
    if (wrote_hdr)
      unlink(hdr);
  }
  if (st == QUILL_ERR_NOMEM)
    fputs("quill compile: error: out of memory\n", stderr);
  free(hdr);
  free(rt);
  quill_llvm_compiled_destroy(cm);
  if (m)
    quill_module_destroy(m);
  quill_context_destroy(ctx);
  return st == QUILL_OK ? QUILL_EXIT_OK : QUILL_EXIT_ERROR;
}

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
  /* OUT.tflite: the TFLite target (compile_tflite.c, its own options) */
  const char *out = output_of(argc, argv);
  if (out && ends_with(out, ".tflite"))
    return quill_tool_compile_tflite(argc, argv);
  compile_args a;
  bool help = false;
  int rc = parse_args(argc, argv, &a, &help);
  if (help)
    print_help(stdout);
  else if (rc == QUILL_EXIT_OK)
    rc = compile(&a);
  free(a.shapes);
  return rc;
}
