/*
 * emit.c - output files of the LLVM target: the object file, assembly or
 * LLVM IR (through the TargetMachine), a static library (a GNU ar archive
 * with a symbol index, holding the object), the C header, and the
 * thread-pool shim's C source.
 *
 * Every file goes through quill_write_file (ir/writefile.c): a temporary
 * file in the destination's folder, renamed into place only when complete,
 * so a failure (unwritable directory, full disk, codegen error) never
 * leaves a half-written or stale output behind.
 *
 * The header (generated at compile time, while the graph is at hand, by
 * cg_header_text) declares NAME_run with one typed pointer per input and
 * output, and describes each: shape, element type, quantization params.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/strbuf.h"
#include "ir/writefile.h"
#include "targets/llvm/cg_compiled.h"

/* The shim's source, embedded at build time (gen/quill_rt_src.c). */
extern const char quill_llvm_rt_source[];

/* ---- static libraries ------------------------------------------------------ */

static void put_be32(unsigned char *p, uint32_t v) {
  p[0] = (unsigned char)(v >> 24);
  p[1] = (unsigned char)(v >> 16);
  p[2] = (unsigned char)(v >> 8);
  p[3] = (unsigned char)v;
}

/* One 60-byte ar member header. */
static void ar_header(unsigned char *h, const char *name, size_t size) {
  char buf[96];
  snprintf(buf, sizeof buf, "%-16.16s%-12s%-6s%-6s%-8s%-10zu`\n", name, "0",
           "0", "0", "644", size % 10000000000u);
  memcpy(h, buf, 60);
}

/* A GNU ar archive holding `obj` as the member NAME.o, with the symbol
 * index the linker needs (every function the module defines for export).
 * Returns a quill_alloc'd buffer of *size bytes, or NULL. */
static unsigned char *make_archive(quill_context *ctx,
                                   const quill_llvm_compiled *c,
                                   const void *obj, size_t objsize,
                                   size_t *size) {
  size_t nsym = 0, names = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(c->mod); f;
       f = LLVMGetNextFunction(f))
    if (!LLVMIsDeclaration(f) && LLVMGetLinkage(f) == LLVMExternalLinkage) {
      nsym++;
      names += strlen(LLVMGetValueName(f)) + 1;
    }
  size_t symsize = 4 + 4 * nsym + names;
  size_t sympad = symsize & 1;
  size_t objoff = 8 + 60 + symsize + sympad;
  *size = objoff + 60 + objsize + (objsize & 1);
  unsigned char *a = quill_calloc(ctx, 1, *size);
  if (!a)
    return NULL;
  memcpy(a, "!<arch>\n", 8);
  ar_header(a + 8, "/", symsize);
  unsigned char *p = a + 68;
  put_be32(p, (uint32_t)nsym);
  p += 4;
  for (size_t i = 0; i < nsym; i++, p += 4)
    put_be32(p, (uint32_t)objoff);
  for (LLVMValueRef f = LLVMGetFirstFunction(c->mod); f;
       f = LLVMGetNextFunction(f))
    if (!LLVMIsDeclaration(f) && LLVMGetLinkage(f) == LLVMExternalLinkage) {
      size_t n = strlen(LLVMGetValueName(f)) + 1;
      memcpy(p, LLVMGetValueName(f), n);
      p += n;
    }
  if (sympad)
    *p = '\n';
  char member[32];
  snprintf(member, sizeof member, "%.14s.o/", c->name);
  ar_header(a + objoff, member, objsize);
  memcpy(a + objoff + 60, obj, objsize);
  if (objsize & 1)
    a[objoff + 60 + objsize] = '\n';
  return a;
}

quill_status quill_llvm_emit_file(quill_context *ctx,
                                  const quill_llvm_compiled *c,
                                  quill_llvm_emit kind, const char *path) {
  if (kind == QUILL_LLVM_EMIT_IR) {
    char *s = LLVMPrintModuleToString(c->mod);
    quill_status st = quill_write_file(ctx, path, s, strlen(s));
    LLVMDisposeMessage(s);
    return st;
  }
  char *err = NULL;
  LLVMMemoryBufferRef buf = NULL;
  LLVMCodeGenFileType ft =
      kind == QUILL_LLVM_EMIT_ASM ? LLVMAssemblyFile : LLVMObjectFile;
  if (LLVMTargetMachineEmitToMemoryBuffer(c->tm, c->mod, ft, &err, &buf)) {
    quill_error(ctx, quill_loc_file(ctx, path, 0, 0),
                "llvm: code generation failed: %s", err ? err : "unknown");
    LLVMDisposeMessage(err);
    return QUILL_ERR_INTERNAL;
  }
  quill_status st;
  if (kind == QUILL_LLVM_EMIT_LIB) {
    size_t asize;
    unsigned char *a = make_archive(ctx, c, LLVMGetBufferStart(buf),
                                    LLVMGetBufferSize(buf), &asize);
    st = a ? quill_write_file(ctx, path, a, asize) : QUILL_ERR_NOMEM;
    if (a)
      quill_free(ctx, a, asize);
  } else {
    st = quill_write_file(ctx, path, LLVMGetBufferStart(buf),
                          LLVMGetBufferSize(buf));
  }
  LLVMDisposeMemoryBuffer(buf);
  return st;
}

quill_status quill_llvm_emit_header(quill_context *ctx,
                                    const quill_llvm_compiled *c,
                                    const char *path) {
  return quill_write_file(ctx, path, c->header, strlen(c->header));
}

quill_status quill_llvm_emit_runtime(quill_context *ctx, const char *path) {
  return quill_write_file(ctx, path, quill_llvm_rt_source,
                          strlen(quill_llvm_rt_source));
}

/* ---- the header ------------------------------------------------------------ */

static const char *c_type(const quill_type *elem) {
  quill_type *s = cg_storage(elem);
  switch (quill_type_kind_of(s)) {
  case QUILL_TYPE_F32: return "float";
  case QUILL_TYPE_F64: return "double";
  case QUILL_TYPE_F16: case QUILL_TYPE_BF16: case QUILL_TYPE_U16:
    return "uint16_t";
  case QUILL_TYPE_I4: case QUILL_TYPE_I8: return "int8_t";
  case QUILL_TYPE_BOOL: case QUILL_TYPE_U4: case QUILL_TYPE_U8:
    return "uint8_t";
  case QUILL_TYPE_I16: return "int16_t";
  case QUILL_TYPE_I32: return "int32_t";
  case QUILL_TYPE_U32: return "uint32_t";
  case QUILL_TYPE_U64: return "uint64_t";
  default: return "int64_t";
  }
}

/* The header's parameter names, one per input then output. */
#define IO_IDENT_CAP 128
typedef char io_ident_buf[IO_IDENT_CAP];

static bool ident_taken(const io_ident_buf *ids, unsigned n, const char *s) {
  if (!strcmp(s, "scratch"))
    return true;
  for (unsigned j = 0; j < n; j++)
    if (!strcmp(ids[j], s))
      return true;
  return false;
}

/* ids[k], a C identifier for IO k's name: other characters become '_'; an
 * empty name, or one an earlier IO already has (an output that returns an
 * input or another output, or two names equal after the '_' mapping),
 * falls back to inN/outN, with '_' appended while that is taken too. */
static void io_ident(const quill_value *v, const char *fallback, unsigned i,
                     io_ident_buf *ids, unsigned k) {
  char *buf = ids[k];
  const char *n = quill_value_name(v);
  size_t m = 0;
  if (n && *n && !(*n >= '0' && *n <= '9')) {
    for (; n[m] && m + 1 < IO_IDENT_CAP; m++) {
      char ch = n[m];
      bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                (ch >= '0' && ch <= '9') || ch == '_';
      buf[m] = ok ? ch : '_';
    }
    buf[m] = '\0';
    if (quill_llvm_is_c_identifier(buf) && !ident_taken(ids, k, buf))
      return;
  }
  int len = snprintf(buf, IO_IDENT_CAP, "%s%u", fallback, i);
  while (ident_taken(ids, k, buf) && len + 1 < IO_IDENT_CAP) {
    buf[len++] = '_';
    buf[len] = '\0';
  }
}

static void describe(quill_strbuf *sb, const char *name, const char *what,
                     unsigned i, const quill_value *v, const char *ident) {
  quill_type *t = quill_value_type(v);
  quill_type *e = quill_type_elem(t);
  unsigned r = quill_type_rank(t);
  char up[16];
  snprintf(up, sizeof up, "%s%u", what, i);
  for (char *p = up; *p; p++)
    *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
  quill_strbuf_printf(sb, "/* %s %u '%s': %s [", what, i, ident, c_type(e));
  for (unsigned d = 0; d < r; d++)
    quill_strbuf_printf(sb, "%s%lld", d ? ", " : "",
                        (long long)quill_type_dim(t, d));
  quill_strbuf_puts(sb, "] ");
  quill_type_print(t, sb);
  quill_strbuf_puts(sb, " */\n");
  quill_strbuf_printf(sb, "#define %s_%s_RANK %u\n", name, up, r);
  quill_strbuf_printf(sb, "#define %s_%s_SIZE %lld /* elements */\n", name, up,
                      (long long)quill_type_num_elements(t));
  quill_strbuf_printf(sb, "#define %s_%s_SHAPE {", name, up);
  for (unsigned d = 0; d < r; d++)
    quill_strbuf_printf(sb, "%s%lld", d ? ", " : "",
                        (long long)quill_type_dim(t, d));
  quill_strbuf_puts(sb, r ? "}\n" : "1}\n");
  if (quill_type_is_quant(e) && quill_type_quant_axis_of(e) < 0) {
    quill_strbuf_printf(sb, "#define %s_%s_SCALE ", name, up);
    quill_strbuf_put_double(sb, quill_type_quant_scales(e)[0]);
    quill_strbuf_printf(sb, "\n#define %s_%s_ZERO_POINT %lld\n", name, up,
                        (long long)quill_type_quant_zero_points(e)[0]);
    quill_strbuf_printf(sb, "#define %s_%s_QMIN %lld\n#define %s_%s_QMAX "
                            "%lld\n",
                        name, up, (long long)quill_type_quant_qmin(e), name, up,
                        (long long)quill_type_quant_qmax(e));
  }
}

quill_status cg_header_text(cg *c, quill_llvm_compiled *r) {
  const char *name = c->opts.name;
  const quill_graph *g = c->g;
  quill_op *ret = quill_graph_return(g);
  unsigned n_in = quill_graph_num_args(g), n_out = quill_op_num_operands(ret);
  quill_strbuf sb;
  quill_strbuf_init(&sb, c->ctx);
  char guard[256];
  snprintf(guard, sizeof guard, "%s", name);
  for (char *p = guard; *p; p++)
    *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
  bool libm = c->libm;
  for (LLVMValueRef f = LLVMGetFirstFunction(c->mod); f;
       f = LLVMGetNextFunction(f))
    if (LLVMIsDeclaration(f) && !LLVMGetIntrinsicID(f) &&
        strncmp(LLVMGetValueName(f), "quill_rt_", 9))
      libm = true;
  quill_strbuf_printf(
      &sb,
      "/*\n * %s.h - generated by quill from graph '%s': do not edit.\n"
      " *\n * Target %s, cpu %s, integer kernels: %s, %u thread%s.\n"
      " *\n * Usage:\n *\n *   #include \"%s.h\"\n"
      " *   static unsigned char scratch[%s_SCRATCH_SIZE]\n"
      " *       __attribute__((aligned(%s_SCRATCH_ALIGN)));\n"
      " *   ... fill the inputs, then\n"
      " *   int status = %s_run(",
      name, quill_graph_name(g), c->tgt->triple, c->tgt->cpu,
      quill_llvm_isa_name(c->tgt->isa), c->opts.threads,
      c->opts.threads == 1 ? "" : "s", name, guard, guard, name);
  io_ident_buf *ids =
      quill_alloc(c->ctx, (size_t)(n_in + n_out + 1) * sizeof *ids);
  if (!ids) {
    quill_strbuf_free(&sb);
    return QUILL_ERR_NOMEM;
  }
  for (unsigned i = 0; i < n_in; i++)
    io_ident(quill_graph_arg(g, i), "in", i, ids, i);
  for (unsigned i = 0; i < n_out; i++)
    io_ident(quill_op_operand(ret, i), "out", i, ids, n_in + i);
  for (unsigned k = 0; k < n_in + n_out; k++)
    quill_strbuf_printf(&sb, "%s, ", ids[k]);
  quill_strbuf_printf(
      &sb,
      "scratch);  // 0 on success\n *\n"
      " * Link: cc main.c %s.o%s%s\n"
      " * Buffers are dense row-major (the model's NCHW order); quantized\n"
      " * tensors hold their storage integers. Outputs must not overlap\n"
      " * inputs. The scratch buffer is reused across calls; calls on one\n"
      " * scratch buffer must not run concurrently. Any number of threads\n"
      " * may call the model at once, each with its own scratch buffer.\n"
      " */\n",
      name, libm ? " -lm" : "",
      c->opts.threads > 1 ? " quill_rt.c -lpthread  (quill compile writes "
                            "quill_rt.c next to the object; or define "
                            "quill_rt_parallel_for yourself)"
                          : "");
  quill_strbuf_printf(&sb, "#ifndef %s_H\n#define %s_H\n\n#include "
                           "<stdint.h>\n\n#ifdef __cplusplus\nextern \"C\" "
                           "{\n#endif\n\n",
                      guard, guard);
  quill_strbuf_printf(&sb, "#define %s_SCRATCH_SIZE %zu /* bytes */\n", guard,
                      c->scratch_size);
  quill_strbuf_printf(&sb, "#define %s_SCRATCH_ALIGN 64\n", guard);
  quill_strbuf_printf(&sb, "#define %s_NUM_INPUTS %u\n#define %s_NUM_OUTPUTS "
                           "%u\n#define %s_NUM_THREADS %u\n\n",
                      guard, n_in, guard, n_out, guard, c->opts.threads);
  for (unsigned i = 0; i < n_in; i++) {
    describe(&sb, guard, "in", i, quill_graph_arg(g, i), ids[i]);
    quill_strbuf_putc(&sb, '\n');
  }
  for (unsigned i = 0; i < n_out; i++) {
    describe(&sb, guard, "out", i, quill_op_operand(ret, i), ids[n_in + i]);
    quill_strbuf_putc(&sb, '\n');
  }
  quill_strbuf_printf(&sb,
                      c->amx ? "/* Run the model: returns 0, or -1 when Linux "
                               "refuses the AMX tile state\n   (arch_prctl "
                               "ARCH_REQ_XCOMP_PERM; asked on the first run). "
                               "*/\nint %s_run("
                             : "/* Run the model: returns 0. */\nint %s_run(",
                      name);
  for (unsigned i = 0; i < n_in; i++)
    quill_strbuf_printf(&sb, "const %s *%s, ",
                        c_type(quill_type_elem(
                            quill_value_type(quill_graph_arg(g, i)))),
                        ids[i]);
  for (unsigned i = 0; i < n_out; i++)
    quill_strbuf_printf(&sb, "%s *%s, ",
                        c_type(quill_type_elem(
                            quill_value_type(quill_op_operand(ret, i)))),
                        ids[n_in + i]);
  quill_free(c->ctx, ids, (size_t)(n_in + n_out + 1) * sizeof *ids);
  quill_strbuf_puts(&sb, "void *scratch);\n");
  quill_strbuf_printf(&sb, "/* The same with ptrs = {inputs..., outputs..., "
                           "scratch}. */\nint %s_run_argv(void **ptrs);\n",
                      name);
  if (c->opts.threads > 1)
    quill_strbuf_puts(&sb, "\n/* Provided by quill_rt.c (or by the host): "
                           "run fn(args, t0, t1) over [0, ntasks)\n * split "
                           "into ranges on up to nthreads threads, and "
                           "return when all are done. */\nvoid "
                           "quill_rt_parallel_for(void (*fn)(void *, int64_t, "
                           "int64_t), void *args,\n                           "
                           "int64_t ntasks, int32_t nthreads);\n");
  quill_strbuf_printf(&sb, "\n#ifdef __cplusplus\n}\n#endif\n\n#endif /* "
                           "%s_H */\n",
                      guard);
  quill_status st = QUILL_OK;
  if (quill_strbuf_failed(&sb) ||
      !(r->header = quill_strdup(c->ctx, quill_strbuf_str(&sb))))
    st = QUILL_ERR_NOMEM;
  quill_strbuf_free(&sb);
  return st;
}
