/*
 * jit.c - run compiled graphs in process through ORC's LLJIT.
 *
 *   ThreadSafeContext ──> cg_compile (module in its LLVMContext, optimized)
 *   TargetMachine (same triple/cpu/features) ──> JITTargetMachineBuilder
 *   LLJIT + main JITDylib:
 *     - a process symbol generator (libm for float fallbacks)
 *     - quill_rt_pool_run defined as an absolute symbol (runtime/quill_rt.c
 *       compiled into the library), called with this JIT's own pool, whose
 *       address is stored into the module's `quill.rt.pool` global
 *   lookup NAME_run_argv ──> called by quill_llvm_jit_run with the tensors'
 *   data pointers and a 64-byte aligned scratch buffer owned by the JIT.
 */
#include <stdatomic.h>
#include <string.h>

#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>

#include "targets/llvm/cg_compiled.h"
/* runtime/quill_rt.c, compiled into the library with QUILL_RT_NO_DEFAULT */
#include "targets/llvm/runtime/quill_rt_pool.h"


struct quill_llvm_jit {
  quill_context *ctx;
  LLVMOrcLLJITRef jit;
  quill_rt_pool *pool;
  int (*run_argv)(void **);
  quill_llvm_isa isa;
  unsigned n_in, n_out;
  quill_type **in_types, **out_types;
  void *scratch_raw; /* quill_alloc'd, scratch_size + 64 bytes */
  size_t scratch_size;
  atomic_int busy; /* a run is using scratch_raw */
};

static quill_status llvm_error(quill_context *ctx, LLVMErrorRef e,
                               const char *what) {
  char *m = LLVMGetErrorMessage(e);
  quill_error(ctx, quill_loc_unknown(), "llvm: %s: %s", what, m);
  LLVMDisposeErrorMessage(m);
  return QUILL_ERR_INTERNAL;
}

void quill_llvm_jit_destroy(quill_llvm_jit *j) {
  if (!j)
    return;
  quill_context *ctx = j->ctx;
  if (j->jit) {
    LLVMErrorRef e = LLVMOrcDisposeLLJIT(j->jit);
    if (e)
      LLVMConsumeError(e);
  }
  quill_rt_pool_destroy(j->pool);
  quill_free(ctx, j->in_types, (j->n_in ? j->n_in : 1) * sizeof(quill_type *));
  quill_free(ctx, j->out_types,
             (j->n_out ? j->n_out : 1) * sizeof(quill_type *));
  quill_free(ctx, j->scratch_raw, j->scratch_size + 64);
  quill_free(ctx, j, sizeof *j);
}

static quill_status define_runtime(quill_llvm_jit *j, LLVMOrcJITDylibRef jd) {
  LLVMOrcCSymbolMapPair sym;
  sym.Name = LLVMOrcLLJITMangleAndIntern(j->jit, "quill_rt_pool_run");
  sym.Sym.Address = (LLVMOrcExecutorAddress)(uintptr_t)&quill_rt_pool_run;
  sym.Sym.Flags.GenericFlags =
      LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable;
  sym.Sym.Flags.TargetFlags = 0;
  LLVMOrcMaterializationUnitRef mu = LLVMOrcAbsoluteSymbols(&sym, 1);
  LLVMErrorRef e = LLVMOrcJITDylibDefine(jd, mu);
  if (e)
    return llvm_error(j->ctx, e, "defining the runtime symbols");
  return QUILL_OK;
}

quill_status quill_llvm_jit_create(quill_context *ctx, const quill_graph *g,
                                   const quill_llvm_options *opts,
                                   quill_llvm_jit **out) {
  *out = NULL;
  quill_llvm_jit *j = quill_calloc(ctx, 1, sizeof *j);
  if (!j)
    return QUILL_ERR_NOMEM;
  j->ctx = ctx;
  j->n_in = quill_graph_num_args(g);
  j->n_out = quill_graph_num_results(g);
  j->in_types = quill_calloc(ctx, j->n_in ? j->n_in : 1, sizeof(quill_type *));
  j->out_types =
      quill_calloc(ctx, j->n_out ? j->n_out : 1, sizeof(quill_type *));
  if (!j->in_types || !j->out_types) {
    quill_llvm_jit_destroy(j);
    return QUILL_ERR_NOMEM;
  }
  for (unsigned i = 0; i < j->n_in; i++)
    j->in_types[i] = quill_value_type(quill_graph_arg(g, i));
  for (unsigned i = 0; i < j->n_out; i++)
    j->out_types[i] = quill_graph_result_type(g, i);
  LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
  quill_llvm_compiled *cm = NULL;
  quill_status st = cg_compile(ctx, g, opts, LLVMOrcThreadSafeContextGetContext(tsc),
                               true, &cm);
  if (st) {
    LLVMOrcDisposeThreadSafeContext(tsc);
    quill_llvm_jit_destroy(j);
    return st;
  }
  j->isa = cm->tgt.isa;
  j->scratch_size = cm->scratch_size;
  unsigned threads = opts ? opts->threads : 1;
  char entry[300];
  snprintf(entry, sizeof entry, "%s_run_argv", cm->name);
  /* The JIT takes a TargetMachine of its own (same triple/cpu/features). */
  LLVMTargetMachineRef tm = cg_target_machine(ctx, &cm->tgt,
                                              opts ? opts->opt_level : 3);
  LLVMOrcLLJITBuilderRef jb = LLVMOrcCreateLLJITBuilder();
  LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(
      jb, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(tm));
  LLVMErrorRef e = LLVMOrcCreateLLJIT(&j->jit, jb);
  if (e) {
    st = llvm_error(ctx, e, "cannot create the JIT");
    j->jit = NULL;
    goto fail;
  }
  LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(j->jit);
  LLVMOrcDefinitionGeneratorRef gen;
  e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
      &gen, LLVMOrcLLJITGetGlobalPrefix(j->jit), NULL, NULL);
  if (e) {
    st = llvm_error(ctx, e, "cannot search the process for symbols");
    goto fail;
  }
  LLVMOrcJITDylibAddGenerator(jd, gen);
  if ((st = define_runtime(j, jd)))
    goto fail;
  LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(cm->mod, tsc);
  cm->mod = NULL; /* owned by the JIT now */
  e = LLVMOrcLLJITAddLLVMIRModule(j->jit, jd, tsm);
  if (e) {
    LLVMOrcDisposeThreadSafeModule(tsm);
    st = llvm_error(ctx, e, "cannot add the module");
    goto fail;
  }
  LLVMOrcExecutorAddress addr = 0;
  e = LLVMOrcLLJITLookup(j->jit, &addr, entry);
  if (e) {
    st = llvm_error(ctx, e, "cannot find the entry point");
    goto fail;
  }
  j->run_argv = (int (*)(void **))(uintptr_t)addr;
  if (threads > 1) {
    LLVMOrcExecutorAddress paddr = 0;
    e = LLVMOrcLLJITLookup(j->jit, &paddr, "quill.rt.pool");
    if (e) {
      st = llvm_error(ctx, e, "cannot find the thread pool slot");
      goto fail;
    }
    j->pool = quill_rt_pool_create((int)threads);
    if (!j->pool) {
      st = QUILL_ERR_NOMEM;
      goto fail;
    }
    *(quill_rt_pool **)(uintptr_t)paddr = j->pool;
  }
  j->scratch_raw = quill_alloc(ctx, j->scratch_size + 64);
  if (!j->scratch_raw) {
    st = QUILL_ERR_NOMEM;
    goto fail;
  }
  LLVMOrcDisposeThreadSafeContext(tsc);
  quill_llvm_compiled_destroy(cm);
  *out = j;
  return QUILL_OK;
fail:
  quill_llvm_compiled_destroy(cm);
  quill_llvm_jit_destroy(j);
  LLVMOrcDisposeThreadSafeContext(tsc);
  return st;
}

quill_llvm_isa quill_llvm_jit_isa(const quill_llvm_jit *j) { return j->isa; }

static quill_status check_io(quill_llvm_jit *j, const quill_tensor *inputs,
                             unsigned n_in, unsigned n_out) {
  quill_context *ctx = j->ctx;
  if (n_in != j->n_in || n_out != j->n_out)
    return quill_error(ctx, quill_loc_unknown(),
                       "llvm jit: the model takes %u inputs and %u outputs, "
                       "got %u and %u",
                       j->n_in, j->n_out, n_in, n_out);
  for (unsigned i = 0; i < n_in; i++)
    if (inputs[i].type != j->in_types[i] ||
        (inputs[i].size && !inputs[i].data))
      return quill_error(ctx, quill_loc_unknown(),
                         "llvm jit: input %u does not have the model's input "
                         "type",
                         i);
  return QUILL_OK;
}

quill_status quill_llvm_jit_run_into(quill_llvm_jit *j,
                                     const quill_tensor *inputs, unsigned n_in,
                                     quill_tensor *outputs, unsigned n_out) {
  quill_context *ctx = j->ctx;
  quill_status st = check_io(j, inputs, n_in, n_out);
  if (st)
    return st;
  for (unsigned i = 0; i < n_out; i++)
    if (outputs[i].type != j->out_types[i] ||
        (outputs[i].size && !outputs[i].data))
      return quill_error(ctx, quill_loc_unknown(),
                         "llvm jit: output %u does not have the model's "
                         "result type",
                         i);
  void *stack[16];
  unsigned np = n_in + n_out + 1;
  void **ptrs = np <= 16 ? stack : quill_alloc(ctx, np * sizeof *ptrs);
  if (!ptrs)
    return QUILL_ERR_NOMEM;
  for (unsigned i = 0; i < n_in; i++)
    ptrs[i] = inputs[i].data;
  for (unsigned i = 0; i < n_out; i++)
    ptrs[n_in + i] = outputs[i].data;
  uintptr_t s = (uintptr_t)j->scratch_raw;
  ptrs[np - 1] = (void *)((s + 63) & ~(uintptr_t)63);
  if (atomic_exchange(&j->busy, 1)) { /* the scratch is in use */
    if (ptrs != stack)
      quill_free(ctx, ptrs, np * sizeof *ptrs);
    return quill_error(ctx, quill_loc_unknown(),
                       "llvm jit: run while another thread runs the same JIT "
                       "object (they would share its scratch buffer): use "
                       "one JIT object per thread");
  }
  int rc = j->run_argv(ptrs);
  atomic_store(&j->busy, 0);
  if (ptrs != stack)
    quill_free(ctx, ptrs, np * sizeof *ptrs);
  if (rc)
    return quill_error(ctx, quill_loc_unknown(),
                       "llvm jit: the compiled model returned %d (the amx "
                       "path: Linux refused the AMX tile state)",
                       rc);
  return QUILL_OK;
}

quill_status quill_llvm_jit_run(quill_llvm_jit *j, const quill_tensor *inputs,
                                unsigned n_in, quill_tensor *outputs,
                                unsigned n_out) {
  quill_context *ctx = j->ctx;
  for (unsigned i = 0; i < n_out; i++)
    memset(&outputs[i], 0, sizeof outputs[i]);
  quill_status st = check_io(j, inputs, n_in, n_out);
  for (unsigned i = 0; i < n_out && !st; i++)
    st = quill_tensor_alloc(ctx, j->out_types[i], &outputs[i]);
  if (!st)
    st = quill_llvm_jit_run_into(j, inputs, n_in, outputs, n_out);
  if (st)
    quill_ref_tensors_free(ctx, outputs, n_out);
  return st;
}
