/*
 * entry.c - the entry points of a compiled graph: NAME_run, which calls
 * every stage in program order, and NAME_run_argv.
 *
 * Each stage call binds the stage's pointer parameters to the user's
 * input/output pointers or to scratch + offset:
 *
 *   define i32 @NAME_run(ptr %in0, .., ptr %out0, .., ptr %scratch) {
 *     call void @q.3.qconv2d(ptr %in0, ptr %scratch+4096, .., i64 0, i64 56)
 *     ...
 *     ret i32 0
 *   }
 *
 * -O3 inlines the stages into their caller. One function holding every
 * stage of a big graph (densenet121: thousands of loops) makes LLVM's
 * optimizer and code generator super-linear, so the calls are grouped in
 * order into chunks of at most CHUNK_BUDGET instructions of stage code:
 *
 *   NAME_run ──> q.chunk.0 (noinline) ──> stages 0..k     (inlined here)
 *            ──> q.chunk.1 (noinline) ──> stages k+1..m
 *            ──> ...
 *
 * Each chunk takes NAME_run's own pointers, so a stage sees the same
 * constant offsets into the scratch buffer either way. A graph whose
 * stages fit one chunk (most models below ~50 ops) calls them from
 * NAME_run directly, as before. Stages shared by several calls
 * (share.c) count with their full size: chunks stay small.
 *
 * With threads > 1 a stage with several tasks goes through a trampoline
 * void(ptr args, i64 t0, i64 t1) handed to quill_rt_parallel_for (or, in
 * the JIT, quill_rt_pool_run with the JIT's own pool). An AMX stage's
 * tasks are handed over in groups (pool_tasks: every call of it costs a
 * tile configuration), the trampoline mapping the pool's task range to
 * the stage's.
 */
#include <string.h>

#include "targets/llvm/cg.h"

/* Instructions of stage code (before optimization) per chunk function:
 * -O3 time grows faster than linearly in a function's size; a few
 * thousand keeps each function quick while the call overhead stays
 * negligible next to the stages' loops. */
#define CHUNK_BUDGET 4000u

/* ---- entry points ------------------------------------------------------------- */

/* The pointer for byte `off` of a slot inside the entry function (or a
 * chunk: the same parameters). */
static LLVMValueRef entry_slot_ptr(cg *c, LLVMValueRef fn, int slot,
                                   int64_t off, unsigned n_in) {
  if (slot < 0)
    return LLVMConstNull(c->t_ptr);
  const cg_slot *s = &c->slots[slot];
  LLVMValueRef base;
  switch (s->kind) {
  case CG_SLOT_INPUT:
    base = LLVMGetParam(fn, s->io_index);
    break;
  case CG_SLOT_OUTPUT:
    base = LLVMGetParam(fn, n_in + s->io_index);
    break;
  default:
    base = LLVMGetParam(fn, LLVMCountParams(fn) - 1);
    off += (int64_t)s->offset;
    break;
  }
  if (!off)
    return base;
  LLVMValueRef o = cg_i64c(c, off);
  return LLVMBuildInBoundsGEP2(c->b, c->t_i8, base, &o, 1, "");
}

/* Pool task t's first stage task when the stage's n tasks are grouped
 * into m pool tasks: t n / m (m < n: sizes within one task). */
static LLVMValueRef group_start(cg *c, LLVMBuilderRef b, LLVMValueRef t,
                                int64_t n, int64_t m) {
  if (m >= n)
    return t;
  return LLVMBuildUDiv(b, LLVMBuildMul(b, t, cg_i64c(c, n), ""),
                       cg_i64c(c, m), "");
}

/* void tramp(ptr args, i64 t0, i64 t1): unpack and call the stage, over
 * stage tasks [t0 n / m, t1 n / m) when its n tasks go to the pool as m. */
static LLVMValueRef make_trampoline(cg *c, const cg_stage *st, unsigned k,
                                    int64_t m) {
  LLVMTypeRef pt[3] = {c->t_ptr, c->t_i64, c->t_i64};
  LLVMTypeRef fty = LLVMFunctionType(c->t_void, pt, 3, 0);
  char name[160]; /* q.task.K.<stage>: profiles name the stage's op */
  size_t len;
  snprintf(name, sizeof name, "q.task.%u.%s", k,
           LLVMGetValueName2(st->fn, &len));
  LLVMValueRef fn = LLVMAddFunction(c->mod, name, fty);
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(c->lc);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(c->lc, fn, ""));
  LLVMValueRef *args = quill_alloc(c->ctx, (st->nparams + 2) * sizeof *args);
  if (!args) {
    c->status = QUILL_ERR_NOMEM;
    LLVMBuildRetVoid(b);
    LLVMDisposeBuilder(b);
    return fn;
  }
  for (unsigned i = 0; i < st->nparams; i++) {
    LLVMValueRef idx = cg_i64c(c, i);
    LLVMValueRef p =
        LLVMBuildInBoundsGEP2(b, c->t_ptr, LLVMGetParam(fn, 0), &idx, 1, "");
    args[i] = LLVMBuildLoad2(b, c->t_ptr, p, "");
  }
  args[st->nparams] = group_start(c, b, LLVMGetParam(fn, 1), st->ntasks, m);
  args[st->nparams + 1] =
      group_start(c, b, LLVMGetParam(fn, 2), st->ntasks, m);
  LLVMBuildCall2(b, LLVMGlobalGetValueType(st->fn), st->fn, args,
                 st->nparams + 2, "");
  LLVMBuildRetVoid(b);
  LLVMDisposeBuilder(b);
  quill_free(c->ctx, args, (st->nparams + 2) * sizeof *args);
  return fn;
}

/* The AMX stages' permission: the first run asks Linux for the tile data
 * state (arch_prctl(ARCH_REQ_XCOMP_PERM, XTILEDATA), process-wide and
 * idempotent; the flag only saves the system call on later runs). When
 * the kernel refuses, NAME_run returns -1 and runs nothing. */
static void ask_amx(cg *c) {
  LLVMValueRef fn = LLVMGetBasicBlockParent(LLVMGetInsertBlock(c->b));
  LLVMValueRef flag = LLVMAddGlobal(c->mod, c->t_i32, "q.amx.granted");
  LLVMSetLinkage(flag, LLVMInternalLinkage);
  LLVMSetInitializer(flag, cg_i32c(c, 0));
  LLVMBasicBlockRef ask = LLVMAppendBasicBlockInContext(c->lc, fn, "amx.ask");
  LLVMBasicBlockRef no = LLVMAppendBasicBlockInContext(c->lc, fn, "amx.no");
  LLVMBasicBlockRef yes = LLVMAppendBasicBlockInContext(c->lc, fn, "amx.yes");
  LLVMBasicBlockRef go = LLVMAppendBasicBlockInContext(c->lc, fn, "amx.go");
  LLVMValueRef f = LLVMBuildLoad2(c->b, c->t_i32, flag, "");
  LLVMSetOrdering(f, LLVMAtomicOrderingMonotonic);
  LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, f, cg_i32c(c, 0), ""),
                  ask, go);
  LLVMPositionBuilderAtEnd(c->b, ask);
  LLVMTypeRef at[3] = {c->t_i64, c->t_i64, c->t_i64};
  LLVMTypeRef aty = LLVMFunctionType(c->t_i64, at, 3, 0);
  static const char cons[] = "={ax},{ax},{di},{si},~{rcx},~{r11},~{memory}";
  LLVMValueRef sys = LLVMGetInlineAsm(aty, "syscall", 7, (char *)cons,
                                      sizeof cons - 1, 1, 0,
                                      LLVMInlineAsmDialectATT, 0);
  LLVMValueRef r = LLVMBuildCall2(
      c->b, aty, sys,
      (LLVMValueRef[]){cg_i64c(c, 158 /* SYS_arch_prctl */),
                       cg_i64c(c, 0x1023 /* ARCH_REQ_XCOMP_PERM */),
                       cg_i64c(c, 18 /* XFEATURE_XTILEDATA */)},
      3, "");
  LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, r, cg_i64c(c, 0), ""),
                  yes, no);
  LLVMPositionBuilderAtEnd(c->b, no);
  LLVMBuildRet(c->b, cg_i32c(c, -1));
  LLVMPositionBuilderAtEnd(c->b, yes);
  LLVMValueRef st = LLVMBuildStore(c->b, cg_i32c(c, 1), flag);
  LLVMSetOrdering(st, LLVMAtomicOrderingMonotonic);
  LLVMBuildBr(c->b, go);
  LLVMPositionBuilderAtEnd(c->b, go);
}

/* Stages estimated (cg_stage_work) to take less than this on one thread
 * run on the caller: handing a stage to spinning workers costs about a
 * microsecond, and a worker that sleeps or is descheduled costs the
 * caller nothing but its claims (runtime/quill_rt.c). At 20 us, 13% of
 * MobileNetV2's one-thread time (amx path: 8-19 us 1x1 convs, depthwise
 * convs and residual adds of the last blocks) stayed on one thread
 * (bench/stage_profile.py: two-thread bound 1.68x); the zero-point halos
 * (estimated at most 5.4 us there, measured 1-2) stay below it. */
#define PARALLEL_MIN_NS 8000.0

/* An AMX stage pays for every call a thread makes of it, beyond its work:
 * the tile configuration loaded on entry (ldtilecfg), the tiles released
 * on return and the tile unit's slower first instructions after a pause.
 * With the pool's 16 chunks a thread, regnet_x_400mf's 7-15 us AMX stages
 * were split into 32 calls each and 2 threads ran no faster than one
 * (JIT, amx, under real-time priority: 1.02 ms against 1.03); with the
 * worker barred from claiming, the caller alone took 0.42 ms longer than
 * one thread (0.14 us a call, its trampoline included; 0.2 ms on the
 * avx512-vnni path, whose calls cost little more than the trampoline).
 * So an AMX stage's tasks go to the pool grouped into threads * k tasks,
 * k <= 16 (the runtime's chunks per thread), each chunk at least
 * AMX_CHUNK_MIN_NS of estimated work (k = 1: one chunk per thread, its
 * home; a late worker's is then taken whole by the caller): 20 calls'
 * cost, under 5% of the stage. regnet, 2 threads: 1.02 -> 0.87 ms (1500
 * ns: 0.91-0.96 ms; 6000 ns: 0.88-0.89 ms). */
#define AMX_CHUNK_MIN_NS 3000.0
#define POOL_CHUNKS_PER_THREAD 16 /* runtime/quill_rt.c's */

/* The number of tasks stage st hands to the pool (its own, or fewer,
 * grouped: AMX_CHUNK_MIN_NS). */
static int64_t pool_tasks(const cg *c, const cg_stage *st) {
  int64_t T = c->opts.threads;
  if (!st->amx || T < 2)
    return st->ntasks;
  double per = st->work_ns / ((double)T * AMX_CHUNK_MIN_NS);
  int64_t k = per < 1.0                      ? 1
              : per > POOL_CHUNKS_PER_THREAD ? POOL_CHUNKS_PER_THREAD
                                             : (int64_t)per;
  return T * k < st->ntasks ? T * k : st->ntasks;
}

/* Call stage k from fn (NAME_run or a chunk: the same pointer parameters),
 * directly or through the thread pool. */
static void call_stage(cg *c, LLVMValueRef fn, unsigned k, LLVMValueRef argbuf,
                       bool jit, LLVMValueRef pool) {
  unsigned n_in = quill_graph_num_args(c->g);
  const cg_stage *st = &c->stages[k];
  LLVMValueRef args[256 + 2];
  if (st->nparams > 256) {
    c->status = QUILL_ERR_INTERNAL;
    return;
  }
  for (unsigned i = 0; i < st->nparams; i++)
    args[i] = entry_slot_ptr(c, fn, st->param_slot[i], st->param_off[i],
                             n_in);
  if (argbuf && st->ntasks > 1 && !st->serial &&
      (st->work_ns >= PARALLEL_MIN_NS || c->opts.parallel_all)) {
    for (unsigned i = 0; i < st->nparams; i++) {
      LLVMValueRef idx = cg_i64c(c, i);
      cg_store(c, args[i],
               LLVMBuildInBoundsGEP2(c->b, c->t_ptr, argbuf, &idx, 1, ""), 8);
    }
    int64_t m = pool_tasks(c, st);
    LLVMValueRef tramp = make_trampoline(c, st, k, m);
    if (jit) {
      LLVMTypeRef rt[4] = {c->t_ptr, c->t_ptr, c->t_ptr, c->t_i64};
      LLVMValueRef p = LLVMBuildLoad2(c->b, c->t_ptr, pool, "pool");
      cg_call_extern(c, "quill_rt_pool_run",
                     LLVMFunctionType(c->t_void, rt, 4, 0),
                     (LLVMValueRef[]){p, tramp, argbuf,
                                      cg_i64c(c, m)},
                     4);
    } else {
      LLVMTypeRef rt[4] = {c->t_ptr, c->t_ptr, c->t_i64, c->t_i32};
      cg_call_extern(c, "quill_rt_parallel_for",
                     LLVMFunctionType(c->t_void, rt, 4, 0),
                     (LLVMValueRef[]){tramp, argbuf, cg_i64c(c, m),
                                      cg_i32c(c, c->opts.threads)},
                     4);
    }
    return;
  }
  args[st->nparams] = cg_i64c(c, 0);
  args[st->nparams + 1] = cg_i64c(c, st->ntasks);
  LLVMBuildCall2(c->b, LLVMGlobalGetValueType(st->fn), st->fn, args,
                 st->nparams + 2, "");
}

/* The thread pool's argument array of the function being built. */
static LLVMValueRef args_buffer(cg *c, unsigned first, unsigned end) {
  if (c->opts.threads <= 1)
    return NULL;
  unsigned maxp = 1;
  for (unsigned k = first; k < end; k++)
    if (c->stages[k].nparams > maxp)
      maxp = c->stages[k].nparams;
  return LLVMBuildAlloca(c->b, LLVMArrayType2(c->t_ptr, maxp), "args");
}

/* The end of the chunk of stages that starts at `first`: consecutive
 * stages whose code adds up to at most CHUNK_BUDGET instructions (at least
 * one stage). */
static unsigned chunk_end(cg *c, unsigned first) {
  unsigned size = 0, k = first;
  for (; k < c->nstages; k++) {
    unsigned n = cg_fn_size(c->stages[k].fn);
    if (k > first && size + n > CHUNK_BUDGET)
      break;
    size += n;
  }
  return k;
}

void cg_build_entry(cg *c, bool jit, LLVMValueRef pool) {
  unsigned n_in = quill_graph_num_args(c->g);
  unsigned n_out = quill_graph_num_results(c->g);
  unsigned np = n_in + n_out + 1;
  LLVMTypeRef *pt = quill_alloc(c->ctx, np * sizeof *pt);
  if (!pt) {
    c->status = QUILL_ERR_NOMEM;
    return;
  }
  for (unsigned i = 0; i < np; i++)
    pt[i] = c->t_ptr;
  char name[300];
  snprintf(name, sizeof name, "%s_run", c->opts.name);
  LLVMTypeRef fty = LLVMFunctionType(c->t_i32, pt, np, 0);
  LLVMValueRef fn = LLVMAddFunction(c->mod, name, fty);
  LLVMPositionBuilderAtEnd(c->b,
                           LLVMAppendBasicBlockInContext(c->lc, fn, "entry"));
  if (c->amx)
    ask_amx(c);
  unsigned first_end = c->opts.noinline ? c->nstages : chunk_end(c, 0);
  if (first_end >= c->nstages) {
    /* one chunk: the stages are called (and inlined) right here */
    LLVMValueRef argbuf = args_buffer(c, 0, c->nstages);
    for (unsigned k = 0; k < c->nstages && c->status == QUILL_OK; k++)
      call_stage(c, fn, k, argbuf, jit, pool);
  } else {
    /* chunks: void q.chunk.N(same pointers), noinline, each calling (and
     * inlining) a bounded amount of stage code */
    LLVMTypeRef cty = LLVMFunctionType(c->t_void, pt, np, 0);
    unsigned noinline = LLVMGetEnumAttributeKindForName("noinline", 8);
    unsigned nounwind = LLVMGetEnumAttributeKindForName("nounwind", 8);
    LLVMBasicBlockRef entry_bb = LLVMGetInsertBlock(c->b);
    LLVMValueRef *cargs = quill_alloc(c->ctx, np * sizeof *cargs);
    if (!cargs) {
      c->status = QUILL_ERR_NOMEM;
      quill_free(c->ctx, pt, np * sizeof *pt);
      return;
    }
    for (unsigned i = 0; i < np; i++)
      cargs[i] = LLVMGetParam(fn, i);
    for (unsigned first = 0, nchunk = 0;
         first < c->nstages && c->status == QUILL_OK; nchunk++) {
      unsigned end = first ? chunk_end(c, first) : first_end;
      char cname[64];
      snprintf(cname, sizeof cname, "q.chunk.%u", nchunk);
      LLVMValueRef cfn = LLVMAddFunction(c->mod, cname, cty);
      LLVMSetLinkage(cfn, LLVMInternalLinkage);
      LLVMAddAttributeAtIndex(cfn, LLVMAttributeFunctionIndex,
                              LLVMCreateEnumAttribute(c->lc, noinline, 0));
      LLVMAddAttributeAtIndex(cfn, LLVMAttributeFunctionIndex,
                              LLVMCreateEnumAttribute(c->lc, nounwind, 0));
      LLVMPositionBuilderAtEnd(
          c->b, LLVMAppendBasicBlockInContext(c->lc, cfn, "entry"));
      LLVMValueRef argbuf = args_buffer(c, first, end);
      for (unsigned k = first; k < end && c->status == QUILL_OK; k++)
        call_stage(c, cfn, k, argbuf, jit, pool);
      LLVMBuildRetVoid(c->b);
      LLVMPositionBuilderAtEnd(c->b, entry_bb);
      LLVMBuildCall2(c->b, cty, cfn, cargs, np, "");
      first = end;
    }
    quill_free(c->ctx, cargs, np * sizeof *cargs);
  }
  LLVMBuildRet(c->b, cg_i32c(c, 0));

  /* NAME_run_argv(ptr argv): the same pointers as an array. */
  snprintf(name, sizeof name, "%s_run_argv", c->opts.name);
  LLVMTypeRef aty = LLVMFunctionType(c->t_i32, &c->t_ptr, 1, 0);
  LLVMValueRef afn = LLVMAddFunction(c->mod, name, aty);
  LLVMPositionBuilderAtEnd(c->b,
                           LLVMAppendBasicBlockInContext(c->lc, afn, "entry"));
  LLVMValueRef *cargs = quill_alloc(c->ctx, np * sizeof *cargs);
  if (cargs) {
    for (unsigned i = 0; i < np; i++) {
      LLVMValueRef idx = cg_i64c(c, i);
      cargs[i] = LLVMBuildLoad2(
          c->b, c->t_ptr,
          LLVMBuildInBoundsGEP2(c->b, c->t_ptr, LLVMGetParam(afn, 0), &idx, 1,
                                ""),
          "");
    }
    LLVMBuildRet(c->b, LLVMBuildCall2(c->b, fty, fn, cargs, np, ""));
    quill_free(c->ctx, cargs, np * sizeof *cargs);
  } else {
    c->status = QUILL_ERR_NOMEM;
    LLVMBuildRet(c->b, cg_i32c(c, -1));
  }
  quill_free(c->ctx, pt, np * sizeof *pt);
}

