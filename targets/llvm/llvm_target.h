/*
 * llvm_target.h - the LLVM target: whole-model ahead-of-time compilation of
 * a Quill graph to an object file plus a C header, and in-process JIT
 * execution of the same code, through the LLVM 19 C API.
 *
 *   graph --quill_llvm_compile--> quill_llvm_compiled (an LLVM module,
 *         |                        optimized for the chosen target)
 *         |                          |--quill_llvm_emit_file--> .o / .s / .ll
 *         |                          '--quill_llvm_emit_header--> .h
 *         '--quill_llvm_jit_create--> quill_llvm_jit --quill_llvm_jit_run-->
 *                                     output tensors (like quill_ref_run)
 *
 * The generated code has one entry point per model,
 *
 *   int NAME_run(const T0 *in0, ..., T0 *out0, ..., void *scratch);
 *
 * with one pointer per graph input and result (dense row-major data, the
 * layout of quill_tensor; quantized tensors hold their storage integers)
 * and one scratch buffer of NAME_SCRATCH_SIZE bytes, 64-byte aligned, that
 * holds every intermediate tensor (a static, liveness-based memory plan).
 * It returns 0. Weights are constant globals, pre-packed at compile time.
 * There is no runtime library: with threads > 1 the code calls
 * quill_rt_parallel_for (targets/llvm/runtime/quill_rt.c, shipped as C
 * source next to the object), and float ops may call libm.
 *
 * Also NAME_run_argv(void **ptrs) takes the same pointers as an array
 * (inputs, outputs, scratch), for hosts that bind models generically (the
 * JIT calls this one).
 */
#ifndef QUILL_TARGETS_LLVM_LLVM_TARGET_H
#define QUILL_TARGETS_LLVM_LLVM_TARGET_H

#include "../reference/ref.h"

QUILL_BEGIN_DECLS

/* Instruction paths for the integer conv/matmul kernels. AUTO picks the
 * best one the target's features allow; forcing a path the features lack
 * is an error. */
typedef enum quill_llvm_isa {
  QUILL_LLVM_ISA_AUTO,
  QUILL_LLVM_ISA_PORTABLE,    /* plain LLVM vector IR, any target */
  QUILL_LLVM_ISA_AVX2,        /* vpmaddubsw / vpmaddwd, 256-bit */
  QUILL_LLVM_ISA_AVX_VNNI,    /* vpdpbusd ymm (VEX) */
  QUILL_LLVM_ISA_AVX512_VNNI, /* vpdpbusd zmm */
  QUILL_LLVM_ISA_AMX,         /* avx512-vnni, convs and matmuls on AMX tiles
                                 (tdpbusd; x86-64 Linux) */
  QUILL_LLVM_ISA_NEON_DOT,    /* AArch64 sdot (dotprod), 128-bit */
  QUILL_LLVM_ISA_NEON_I8MM,   /* AArch64 smmla (i8mm): 2 pixels x 2
                                 channels x 8 inputs per instruction */
  QUILL_LLVM_ISA_COUNT
} quill_llvm_isa;

/* "portable", "avx2", "avx-vnni", "avx512-vnni", "amx", "neon-dot",
 * "neon-i8mm" ("auto" parses too). */
const char *quill_llvm_isa_name(quill_llvm_isa isa);
bool quill_llvm_isa_parse(const char *name, quill_llvm_isa *out);

typedef struct quill_llvm_options {
  const char *triple;   /* NULL: the host's */
  const char *cpu;      /* NULL: the host CPU for the host triple, else
                           "generic" */
  const char *features; /* NULL: the host's features for the host triple
                           (and cpu unset), else none; "+avx2,-avx512f" */
  unsigned opt_level;   /* 0..3, default 3 */
  unsigned threads;     /* 1 (default): single-threaded code; N > 1: work
                           is split over N threads via quill_rt_parallel_for */
  const char *name;     /* entry prefix, a C identifier; default "model" */
  quill_llvm_isa isa;   /* default AUTO */
  bool noinline;        /* keep every kernel stage a separate function
                           (for profilers: one symbol per stage) */
  bool parallel_all;    /* with threads > 1, split every stage that has
                           several tasks, even ones too small to gain
                           (tests of the threaded code) */
} quill_llvm_options;

/* Set the defaults above. */
void quill_llvm_options_init(quill_llvm_options *o);

/* The instruction paths the target in `o` (triple, cpu, features; isa is
 * ignored) can run: bit (1u << QUILL_LLVM_ISA_X) of *paths for each, and
 * in *best the one AUTO picks (either pointer may be NULL). This is the
 * one source of truth the compiler itself uses: for the host (no triple,
 * no cpu) it reads the running CPU's features and, for amx, asks the
 * running kernel for the tile state. Errors: a bad triple or cpu
 * (QUILL_ERR_INVALID, with a diagnostic). */
quill_status quill_llvm_isa_paths(quill_context *ctx,
                                  const quill_llvm_options *o,
                                  unsigned *paths, quill_llvm_isa *best);

/* True if `name` is a C identifier (letters, digits, '_', not starting
 * with a digit, not a C keyword). */
bool quill_llvm_is_c_identifier(const char *name);

/* ---- IO adaptation ------------------------------------------------------- */

typedef enum quill_llvm_io {
  QUILL_LLVM_IO_MODEL, /* the graph's own argument and result types */
  QUILL_LLVM_IO_INT8,  /* quantized IO: a float input whose every use is a
                          `quantize` to one type becomes that quantized
                          input; a result produced by `dequantize` is
                          returned quantized */
  QUILL_LLVM_IO_FLOAT, /* float IO: quantized inputs get a `quantize` (and
                          quantized results a `dequantize`) inside the
                          model */
} quill_llvm_io;

/* Rewrite g's signature in place for the IO mode (no-op for MODEL).
 * Returns QUILL_ERR_NOMEM on allocation failure. */
quill_status quill_llvm_adapt_io(quill_context *ctx, quill_graph *g,
                                 quill_llvm_io mode);

/* ---- ahead-of-time compilation -------------------------------------------- */

typedef struct quill_llvm_compiled quill_llvm_compiled;

/* Compile graph g (not modified; it must stay alive until the compiled
 * object is destroyed only for the header writer) for the target in
 * `opts` (NULL: defaults). Before generating anything, every op is checked
 * against the target's lowering table, and each unsupported one is
 * reported as "op 'X' is not supported by target 'llvm'" at the op
 * (QUILL_ERR_UNSUPPORTED). A bad triple, CPU, feature string, ISA or name
 * is an error naming it (QUILL_ERR_INVALID). On success *out must be
 * destroyed with quill_llvm_compiled_destroy(). */
quill_status quill_llvm_compile(quill_context *ctx, const quill_graph *g,
                                const quill_llvm_options *opts,
                                quill_llvm_compiled **out);
void quill_llvm_compiled_destroy(quill_llvm_compiled *c);

/* Bytes of scratch memory the entry point needs (NAME_SCRATCH_SIZE). */
size_t quill_llvm_scratch_size(const quill_llvm_compiled *c);
/* The ISA path the integer kernels use. */
quill_llvm_isa quill_llvm_compiled_isa(const quill_llvm_compiled *c);

typedef enum quill_llvm_emit {
  QUILL_LLVM_EMIT_OBJ,
  QUILL_LLVM_EMIT_ASM,
  QUILL_LLVM_EMIT_IR,
  QUILL_LLVM_EMIT_LIB, /* a static library (ar archive) holding the object */
} quill_llvm_emit;

/* Write the object file, assembly or textual LLVM IR to `path`. The file
 * is written to a temporary name next to it and renamed into place, so on
 * any failure (an unwritable directory: QUILL_ERR_IO, with a diagnostic)
 * nothing is left behind. */
quill_status quill_llvm_emit_file(quill_context *ctx,
                                  const quill_llvm_compiled *c,
                                  quill_llvm_emit kind, const char *path);
/* Write the C header: the entry points, each input's and output's shape,
 * element type and quantization parameters, the scratch size and a usage
 * comment. Same failure behaviour as quill_llvm_emit_file. */
quill_status quill_llvm_emit_header(quill_context *ctx,
                                    const quill_llvm_compiled *c,
                                    const char *path);
/* Write the thread-pool shim (quill_rt.c, the C source that defines
 * quill_rt_parallel_for with pthreads) to `path`. */
quill_status quill_llvm_emit_runtime(quill_context *ctx, const char *path);

/* ---- JIT --------------------------------------------------------------- */

typedef struct quill_llvm_jit quill_llvm_jit;

/* Compile g for the host (opts' triple must be unset or the host's) and
 * load it into an in-process LLJIT. Errors as quill_llvm_compile. On
 * success *out must be destroyed with quill_llvm_jit_destroy(). */
quill_status quill_llvm_jit_create(quill_context *ctx, const quill_graph *g,
                                   const quill_llvm_options *opts,
                                   quill_llvm_jit **out);
void quill_llvm_jit_destroy(quill_llvm_jit *j);
quill_llvm_isa quill_llvm_jit_isa(const quill_llvm_jit *j);

/* Run the compiled graph, with the contract of quill_ref_run: one input
 * tensor per graph argument (types must equal the argument types), one
 * output per result allocated through the context (free them with
 * quill_ref_tensors_free). Errors leave the outputs zeroed. Runs on one
 * JIT object must not overlap (they share its scratch buffer); use one
 * object per thread. An overlapping run is refused (QUILL_ERR_INVALID,
 * with a diagnostic), never run on the shared scratch. */
quill_status quill_llvm_jit_run(quill_llvm_jit *j, const quill_tensor *inputs,
                                unsigned n_in, quill_tensor *outputs,
                                unsigned n_out);

/* The same into caller-allocated outputs (types equal to the result
 * types; e.g. for repeated runs in benchmarks). */
quill_status quill_llvm_jit_run_into(quill_llvm_jit *j,
                                     const quill_tensor *inputs, unsigned n_in,
                                     quill_tensor *outputs, unsigned n_out);

QUILL_END_DECLS

#endif /* QUILL_TARGETS_LLVM_LLVM_TARGET_H */
