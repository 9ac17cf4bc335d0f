/*
 * codegen.c - compile one graph into an LLVM module: the lowering table,
 * the walk over the graph and the compile driver.
 *
 *   check ops ──> plan values ──> lower each op (stages) ──> final copies
 *       ──> allocate scratch ──> share identical stages (share.c)
 *       ──> NAME_run / NAME_run_argv (entry.c) ──> verify ──> O3
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "ir/shape.h"
#include "ir/strbuf.h"
#include "targets/llvm/cg_compiled.h"

/* LLVM's own diagnostics go to the context's handler. Remarks are
 * dropped: the loop vectorizer prints its analysis for every loop whose
 * width Quill forces (irb.c's loop hints), e.g. "Scalable vectorization
 * is explicitly disabled" on an SVE CPU such as neoverse-v1. */
static void llvm_diag(LLVMDiagnosticInfoRef di, void *ud) {
  LLVMDiagnosticSeverity sev = LLVMGetDiagInfoSeverity(di);
  if (sev == LLVMDSRemark || sev == LLVMDSNote)
    return;
  char *msg = LLVMGetDiagInfoDescription(di);
  quill_diag_emit(ud, quill_loc_unknown(),
                  sev == LLVMDSError ? QUILL_DIAG_ERROR : QUILL_DIAG_WARNING,
                  "LLVM: %s", msg ? msg : "?");
  LLVMDisposeMessage(msg);
}

/* ---- the lowering table ---------------------------------------------------- */

static CG_LOWER(lower_nop) {
  (void)c;
  (void)op;
  return QUILL_OK;
}

#define UNARY {cg_supports_unary, cg_lower_unary, CG_LAY_FOLLOW, NULL}
#define BINARY {cg_supports_binary, cg_lower_binary, CG_LAY_FOLLOW, NULL}
#define COMPARE {cg_supports_compare, cg_lower_compare, CG_LAY_FOLLOW, NULL}
#define ALIAS {NULL, cg_lower_alias, CG_ALIAS, NULL}

const cg_lowering cg_lowerings[QUILL_OP_COUNT] = {
    [QUILL_OP_CONSTANT] = {NULL, cg_lower_constant, 0, NULL},
    [QUILL_OP_RETURN] = {NULL, lower_nop, 0, NULL},
    [QUILL_OP_IDENTITY] = ALIAS,
    /* float elementwise (fallbacks) */
    [QUILL_OP_RELU] = UNARY,
    [QUILL_OP_LEAKY_RELU] = UNARY,
    [QUILL_OP_SIGMOID] = UNARY,
    [QUILL_OP_TANH] = UNARY,
    [QUILL_OP_HARD_SIGMOID] = UNARY,
    [QUILL_OP_HARD_SWISH] = UNARY,
    [QUILL_OP_SQRT] = UNARY,
    [QUILL_OP_EXP] = UNARY,
    [QUILL_OP_LOG] = UNARY,
    [QUILL_OP_NEG] = UNARY,
    [QUILL_OP_ABS] = UNARY,
    [QUILL_OP_RECIPROCAL] = UNARY,
    [QUILL_OP_FLOOR] = UNARY,
    [QUILL_OP_CEIL] = UNARY,
    [QUILL_OP_ERF] = UNARY,
    [QUILL_OP_GELU] = UNARY,
    [QUILL_OP_CLIP] = {cg_supports_unary, cg_lower_clip, CG_LAY_FOLLOW, NULL},
    [QUILL_OP_CAST] = {cg_supports_cast, cg_lower_cast, CG_LAY_FOLLOW, NULL},
    [QUILL_OP_ADD] = BINARY,
    [QUILL_OP_SUB] = BINARY,
    [QUILL_OP_MUL] = BINARY,
    [QUILL_OP_DIV] = BINARY,
    [QUILL_OP_MAX] = BINARY,
    [QUILL_OP_MIN] = BINARY,
    [QUILL_OP_POW] = BINARY,
    [QUILL_OP_PRELU] = BINARY,
    /* comparisons and select (any non-quantized element type) */
    [QUILL_OP_EQUAL] = COMPARE,
    [QUILL_OP_LESS] = COMPARE,
    [QUILL_OP_GREATER] = COMPARE,
    [QUILL_OP_WHERE] = {cg_supports_where, cg_lower_where, CG_LAY_FOLLOW, NULL},
    /* linear algebra and normalization (float) */
    [QUILL_OP_CONV2D] = {cg_supports_float, cg_lower_conv2d, CG_LAY_CHLAST, NULL},
    [QUILL_OP_CONV_TRANSPOSE2D] = {cg_supports_float,
                                   cg_lower_conv_transpose2d, 0, NULL},
    [QUILL_OP_MATMUL] = {cg_supports_float, cg_lower_matmul, 0, NULL},
    [QUILL_OP_GEMM] = {cg_supports_float, cg_lower_gemm, 0, NULL},
    [QUILL_OP_BATCH_NORM] = {cg_supports_float, cg_lower_batch_norm,
                             CG_LAY_FOLLOW, NULL},
    [QUILL_OP_SOFTMAX] = {cg_supports_softmax, cg_lower_softmax, 0, NULL},
    [QUILL_OP_LOG_SOFTMAX] = {cg_supports_float, cg_lower_softmax, 0, NULL},
    [QUILL_OP_LAYER_NORM] = {cg_supports_reduce, cg_lower_layer_norm, 0, NULL},
    /* reductions (f32, f64) */
    [QUILL_OP_REDUCE_MEAN] = {cg_supports_reduce, cg_lower_reduce, 0, NULL},
    [QUILL_OP_REDUCE_SUM] = {cg_supports_reduce, cg_lower_reduce, 0, NULL},
    [QUILL_OP_REDUCE_MAX] = {cg_supports_reduce, cg_lower_reduce, 0, NULL},
    [QUILL_OP_REDUCE_MIN] = {cg_supports_reduce, cg_lower_reduce, 0, NULL},
    /* pooling (float and quantized) */
    [QUILL_OP_MAXPOOL] = {cg_supports_pool, cg_lower_pool, CG_LAY_CHLAST, NULL},
    [QUILL_OP_AVGPOOL] = {cg_supports_pool, cg_lower_pool, CG_LAY_CHLAST, NULL},
    [QUILL_OP_GLOBAL_AVGPOOL] = {cg_supports_pool, cg_lower_global_pool,
                                 CG_LAY_CHLAST, NULL},
    [QUILL_OP_GLOBAL_MAXPOOL] = {cg_supports_pool, cg_lower_global_pool,
                                 CG_LAY_CHLAST, NULL},
    /* data movement (any element type) */
    [QUILL_OP_CONCAT] = {NULL, cg_lower_concat, CG_LAY_FOLLOW, NULL},
    [QUILL_OP_SPLIT] = {NULL, cg_lower_split, CG_LAY_FOLLOW, NULL},
    [QUILL_OP_SLICE] = {cg_supports_slice, cg_lower_slice, CG_LAY_FOLLOW, NULL},
    [QUILL_OP_PAD] = {cg_supports_pad, cg_lower_pad, CG_LAY_FOLLOW, NULL},
    [QUILL_OP_RESHAPE] = ALIAS,
    [QUILL_OP_FLATTEN] = ALIAS,
    [QUILL_OP_TRANSPOSE] = {NULL, cg_lower_transpose, 0, cg_view_transpose},
    [QUILL_OP_SQUEEZE] = ALIAS,
    [QUILL_OP_UNSQUEEZE] = ALIAS,
    [QUILL_OP_RESIZE] = {cg_supports_resize, cg_lower_resize, CG_LAY_FOLLOW, NULL},
    [QUILL_OP_GATHER] = {cg_supports_gather, cg_lower_gather, 0, NULL},
    /* quantization */
    [QUILL_OP_QUANTIZE] = {cg_supports_quant, cg_lower_quantize, CG_LAY_FOLLOW, NULL},
    [QUILL_OP_DEQUANTIZE] = {cg_supports_quant, cg_lower_dequantize,
                             CG_LAY_FOLLOW, cg_view_dequantize},
    [QUILL_OP_REQUANTIZE] = {cg_supports_quant, cg_lower_requantize,
                             CG_LAY_FOLLOW, NULL},
    [QUILL_OP_DYNAMIC_QUANTIZE] = {cg_supports_dynamic_quantize,
                                   cg_lower_dynamic_quantize, 0, NULL},
    /* integer ops */
    [QUILL_OP_QCONV2D] = {cg_supports_qconv2d, cg_lower_qconv2d,
                          CG_LAY_CHLAST, NULL},
    [QUILL_OP_QMATMUL] = {cg_supports_qmatmul, cg_lower_qmatmul, 0, NULL},
    [QUILL_OP_QADD] = {cg_supports_qbinary, cg_lower_qbinary, CG_LAY_FOLLOW, NULL},
    [QUILL_OP_QMUL] = {cg_supports_qbinary, cg_lower_qbinary, CG_LAY_FOLLOW, NULL},
    [QUILL_OP_LUT] = {NULL, cg_lower_lut, CG_LAY_FOLLOW, NULL},
    [QUILL_OP_QLAYER_NORM] = {NULL, cg_lower_qlayer_norm, 0, NULL},
    [QUILL_OP_QLSTM] = {cg_supports_qlstm, cg_lower_qlstm, 0, NULL},
    [QUILL_OP_SCAST] = ALIAS,
};

#undef UNARY
#undef BINARY
#undef COMPARE
#undef ALIAS

/* ---- value map --------------------------------------------------------------- */

static unsigned hash_ptr(const void *p, unsigned cap) {
  uintptr_t x = (uintptr_t)p;
  x ^= x >> 17;
  x *= 0x9E3779B97F4A7C15ull;
  return (unsigned)(x >> 32) & (cap - 1);
}

cg_value *cg_val(cg *c, const quill_value *v) {
  unsigned h = hash_ptr(v, c->map_cap);
  while (c->keys[h] != v) {
    assert(c->keys[h]); /* every value was registered */
    h = (h + 1) & (c->map_cap - 1);
  }
  return &c->vals[c->map_idx[h]];
}

static void map_put(cg *c, const quill_value *v, unsigned idx) {
  unsigned h = hash_ptr(v, c->map_cap);
  while (c->keys[h])
    h = (h + 1) & (c->map_cap - 1);
  c->keys[h] = v;
  c->map_idx[h] = idx;
}

static quill_status build_value_map(cg *c) {
  const quill_graph *g = c->g;
  unsigned n = quill_graph_num_args(g);
  QUILL_GRAPH_FOREACH(g, op) n += quill_op_num_results(op);
  c->map_cap = 16;
  while (c->map_cap < 2 * n + 2)
    c->map_cap *= 2;
  c->vals = quill_calloc(c->ctx, n ? n : 1, sizeof *c->vals);
  c->keys = quill_calloc(c->ctx, c->map_cap, sizeof *c->keys);
  c->map_idx = quill_calloc(c->ctx, c->map_cap, sizeof *c->map_idx);
  if (!c->vals || !c->keys || !c->map_idx)
    return QUILL_ERR_NOMEM;
  c->nvals = 0;
  for (unsigned a = 0; a < quill_graph_num_args(g); a++) {
    cg_value *cv = &c->vals[c->nvals];
    cv->v = quill_graph_arg(g, a);
    cv->type = quill_value_type(cv->v);
    cv->def = 0;
    cv->alias_of = -1;
    map_put(c, cv->v, c->nvals++);
  }
  int idx = 1;
  QUILL_GRAPH_FOREACH(g, op) {
    for (unsigned r = 0; r < quill_op_num_results(op); r++) {
      cg_value *cv = &c->vals[c->nvals];
      cv->v = quill_op_result(op, r);
      cv->type = quill_value_type(cv->v);
      cv->def = idx;
      cv->alias_of = -1;
      map_put(c, cv->v, c->nvals++);
    }
    idx++;
  }
  return QUILL_OK;
}

/* ---- checks ----------------------------------------------------------------- */

quill_status cg_op_error(cg *c, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  quill_error(c->ctx, quill_op_loc(c->op), "llvm: '%s': %s",
              quill_op_name(c->op), msg);
  return QUILL_ERR_INVALID;
}

quill_status cg_op_axis(cg *c, unsigned rank, unsigned *ax) {
  if (!quill_shape_norm_axis(quill_op_attr_int(c->op, "axis", -1), rank, ax))
    return cg_op_error(c, "'axis' is out of range");
  return QUILL_OK;
}

int64_t cg_row_count(const cg_view *x, unsigned ax) {
  int64_t rows = 1;
  for (unsigned d = 0; d < x->rank; d++)
    if (d != ax)
      rows *= x->dims[d];
  return rows;
}

void cg_row_offsets(cg *c, LLVMValueRef row, const cg_view *x,
                    const cg_view *y, unsigned ax, LLVMValueRef *ox,
                    LLVMValueRef *oy) {
  LLVMValueRef rem = row;
  *ox = cg_i64c(c, 0);
  *oy = cg_i64c(c, 0);
  for (unsigned d = x->rank; d-- > 0;) {
    if (d == ax)
      continue;
    LLVMValueRef i = LLVMBuildURem(c->b, rem, cg_i64c(c, x->dims[d]), "");
    rem = LLVMBuildUDiv(c->b, rem, cg_i64c(c, x->dims[d]), "");
    *ox = LLVMBuildAdd(c->b, *ox,
                       LLVMBuildMul(c->b, i, cg_i64c(c, x->strides[d]), ""), "");
    *oy = LLVMBuildAdd(c->b, *oy,
                       LLVMBuildMul(c->b, i, cg_i64c(c, y->strides[d]), ""), "");
  }
}

static bool static_tensor(const quill_type *t) {
  return t && quill_type_is_tensor(t) && quill_type_has_static_shape(t) &&
         quill_type_num_elements(t) >= 0;
}

/* Report every unsupported op and every value without a static shape. */
static quill_status check_graph(cg *c) {
  quill_status st = QUILL_OK;
  const quill_graph *g = c->g;
  for (unsigned a = 0; a < quill_graph_num_args(g); a++)
    if (!static_tensor(quill_value_type(quill_graph_arg(g, a)))) {
      const char *n = quill_value_name(quill_graph_arg(g, a));
      quill_error(c->ctx, quill_graph_loc(g),
                  "input %u ('%s') has no static shape: the llvm target "
                  "compiles static shapes only",
                  a, n ? n : "");
      st = QUILL_ERR_INVALID;
    }
  QUILL_GRAPH_FOREACH(g, op) {
    const cg_lowering *l = &cg_lowerings[quill_op_opcode(op)];
    const char *why = l->lower && l->supports ? l->supports(op) : NULL;
    if (!l->lower) {
      quill_error(c->ctx, quill_op_loc(op),
                  "op '%s' is not supported by target 'llvm'%s",
                  quill_op_name(op),
                  quill_op_opcode(op) == QUILL_OP_LSTM
                      ? " (not lowered yet: import the ONNX model, whose "
                        "LSTM nodes the importer unrolls into gemm, slice, "
                        "sigmoid, tanh, mul and add)"
                      : "");
      st = QUILL_ERR_UNSUPPORTED;
    } else if (why) {
      quill_error(c->ctx, quill_op_loc(op),
                  "op '%s' is not supported by target 'llvm' (%s)",
                  quill_op_name(op), why);
      st = QUILL_ERR_UNSUPPORTED;
    }
    for (unsigned r = 0; r < quill_op_num_results(op); r++)
      if (!static_tensor(quill_value_type(quill_op_result(op, r)))) {
        quill_error(c->ctx, quill_op_loc(op),
                    "result %u of '%s' has no static shape", r,
                    quill_op_name(op));
        if (st == QUILL_OK)
          st = QUILL_ERR_INVALID;
      }
  }
  if (!quill_graph_return(g)) {
    quill_error(c->ctx, quill_graph_loc(g), "graph has no return");
    st = QUILL_ERR_INVALID;
  }
  return st;
}

/* Copy every result that was not computed in place into its buffer. */
static void final_copies(cg *c) {
  quill_op *ret = quill_graph_return(c->g);
  c->op = ret;
  c->op_index = (int)quill_graph_num_ops(c->g);
  for (unsigned j = 0; j < quill_op_num_operands(ret); j++) {
    cg_value *cv = cg_val(c, quill_op_operand(ret, j));
    if (cv->view.slot >= 0 && c->slots[cv->view.slot].kind == CG_SLOT_OUTPUT &&
        c->slots[cv->view.slot].io_index == j)
      continue;
    cg_view src = cg_value_view(c, cv->v);
    cg_view dst = src;
    dst.slot = cg_new_slot(c, CG_SLOT_OUTPUT, 0, c->op_index, c->op_index);
    c->slots[dst.slot].io_index = j;
    dst.global = NULL;
    dst.offset = 0;
    cg_row_major(dst.rank, dst.dims, dst.strides);
    cg_copy(c, "output", &dst, &src);
  }
}

/* ---- the compile ------------------------------------------------------------- */

static void cg_free(cg *c) {
  for (unsigned k = 0; k < c->nstages; k++) {
    quill_free(c->ctx, c->stages[k].param_slot,
               c->stages[k].nparams * sizeof(int));
    quill_free(c->ctx, c->stages[k].param_off,
               c->stages[k].nparams * sizeof(int64_t));
  }
  quill_free(c->ctx, c->stages, c->cap_stages * sizeof *c->stages);
  quill_free(c->ctx, c->slots, c->cap_slots * sizeof *c->slots);
  quill_free(c->ctx, c->vals, (c->nvals ? c->nvals : 1) * sizeof *c->vals);
  quill_free(c->ctx, c->keys, c->map_cap * sizeof *c->keys);
  quill_free(c->ctx, c->map_idx, c->map_cap * sizeof *c->map_idx);
  if (c->b)
    LLVMDisposeBuilder(c->b);
  if (c->eb)
    LLVMDisposeBuilder(c->eb);
}

static void init_types(cg *c) {
  c->t_void = LLVMVoidTypeInContext(c->lc);
  c->t_i1 = LLVMInt1TypeInContext(c->lc);
  c->t_i8 = LLVMInt8TypeInContext(c->lc);
  c->t_i16 = LLVMInt16TypeInContext(c->lc);
  c->t_i32 = LLVMInt32TypeInContext(c->lc);
  c->t_i64 = LLVMInt64TypeInContext(c->lc);
  c->t_f32 = LLVMFloatTypeInContext(c->lc);
  c->t_f64 = LLVMDoubleTypeInContext(c->lc);
  c->t_ptr = LLVMPointerTypeInContext(c->lc, 0);
}

quill_status cg_compile(quill_context *ctx, const quill_graph *g,
                        const quill_llvm_options *opts, LLVMContextRef lc,
                        bool jit, quill_llvm_compiled **out) {
  *out = NULL;
  quill_llvm_options o;
  if (opts)
    o = *opts;
  else
    quill_llvm_options_init(&o);
  if (!o.name)
    o.name = "model";
  if (!quill_llvm_is_c_identifier(o.name))
    return quill_error(ctx, quill_graph_loc(g),
                       "'%s' is not a valid C identifier for the entry point "
                       "name",
                       o.name);
  if (o.threads < 1 || o.threads > 1024)
    return quill_error(ctx, quill_graph_loc(g),
                       "thread count %u out of range [1, 1024]", o.threads);
  if (o.opt_level > 3)
    return quill_error(ctx, quill_graph_loc(g),
                       "optimization level %u out of range [0, 3]",
                       o.opt_level);
  quill_llvm_compiled *res = quill_calloc(ctx, 1, sizeof *res);
  if (!res)
    return QUILL_ERR_NOMEM;
  res->ctx = ctx;
  quill_status st = cg_target_init(ctx, &o, &res->tgt);
  if (st) {
    quill_free(ctx, res, sizeof *res);
    return st;
  }
  if (jit && !res->tgt.host) {
    quill_error(ctx, quill_graph_loc(g), "the JIT runs on the host only, not "
                                         "on target '%s'",
                res->tgt.triple);
    quill_llvm_compiled_destroy(res);
    return QUILL_ERR_INVALID;
  }
  cg cgs;
  cg *c = &cgs;
  memset(c, 0, sizeof *c);
  c->ctx = ctx;
  c->g = g;
  c->opts = o;
  c->tgt = &res->tgt;
  if ((st = build_value_map(c)) || (st = check_graph(c)))
    goto fail;
  res->owns_lc = lc == NULL;
  res->lc = lc ? lc : LLVMContextCreate();
  c->lc = res->lc;
  LLVMContextSetDiagnosticHandler(c->lc, llvm_diag, ctx);
  res->mod = c->mod = LLVMModuleCreateWithNameInContext(o.name, c->lc);
  c->b = LLVMCreateBuilderInContext(c->lc);
  c->eb = LLVMCreateBuilderInContext(c->lc);
  init_types(c);
  res->tm = cg_target_machine(ctx, &res->tgt, o.opt_level);
  if (!res->tm) {
    st = QUILL_ERR_INVALID;
    goto fail;
  }
  LLVMSetTarget(c->mod, res->tgt.triple);
  LLVMTargetDataRef td = LLVMCreateTargetDataLayout(res->tm);
  char *dl = LLVMCopyStringRepOfTargetData(td);
  LLVMSetDataLayout(c->mod, dl);
  LLVMDisposeMessage(dl);
  LLVMDisposeTargetData(td);
  if ((st = cg_plan_values(c)))
    goto fail;
  int idx = 1;
  QUILL_GRAPH_FOREACH(g, op) {
    c->op = op;
    c->op_index = idx++;
    if (quill_op_opcode(op) == QUILL_OP_RETURN || cg_qlut_fused(op))
      continue; /* (a table lookup's chain: its quantize computes it) */
    cg_fill_halos(c, op);
    st = cg_lowerings[quill_op_opcode(op)].lower(c, op);
    if (!st)
      st = c->status;
    if (st)
      goto fail;
  }
  final_copies(c);
  if ((st = c->status) || (st = cg_plan_alloc(c)))
    goto fail;
  LLVMValueRef pool = NULL;
  if (jit && o.threads > 1) {
    pool = LLVMAddGlobal(c->mod, c->t_ptr, "quill.rt.pool");
    LLVMSetInitializer(pool, LLVMConstNull(c->t_ptr));
  }
  if ((st = cg_share_stages(c)))
    goto fail;
  cg_build_entry(c, jit, pool);
  if ((st = c->status))
    goto fail;
  char *err = NULL;
  if (LLVMVerifyModule(c->mod, LLVMReturnStatusAction, &err)) {
    quill_error(ctx, quill_graph_loc(g),
                "llvm: internal error: generated module is invalid: %.2000s",
                err ? err : "");
    LLVMDisposeMessage(err);
    st = QUILL_ERR_INTERNAL;
    goto fail;
  }
  LLVMDisposeMessage(err);
  if (o.opt_level > 0) {
    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    char pipeline[32];
    snprintf(pipeline, sizeof pipeline, "default<O%u>", o.opt_level);
    LLVMErrorRef e = LLVMRunPasses(c->mod, pipeline, res->tm, po);
    LLVMDisposePassBuilderOptions(po);
    if (e) {
      char *m = LLVMGetErrorMessage(e);
      quill_error(ctx, quill_graph_loc(g), "llvm: optimization failed: %s", m);
      LLVMDisposeErrorMessage(m);
      st = QUILL_ERR_INTERNAL;
      goto fail;
    }
  }
  res->scratch_size = c->scratch_size;
  res->n_in = quill_graph_num_args(g);
  res->n_out = quill_graph_num_results(g);
  res->name = quill_strdup(ctx, o.name);
  if (!res->name || (st = cg_header_text(c, res))) {
    st = st ? st : QUILL_ERR_NOMEM;
    goto fail;
  }
  cg_free(c);
  *out = res;
  return QUILL_OK;
fail:
  cg_free(c);
  quill_llvm_compiled_destroy(res);
  return st;
}

quill_status quill_llvm_compile(quill_context *ctx, const quill_graph *g,
                                const quill_llvm_options *opts,
                                quill_llvm_compiled **out) {
  return cg_compile(ctx, g, opts, NULL, false, out);
}

void quill_llvm_compiled_destroy(quill_llvm_compiled *r) {
  if (!r)
    return;
  quill_context *ctx = r->ctx;
  if (r->mod)
    LLVMDisposeModule(r->mod);
  if (r->tm)
    LLVMDisposeTargetMachine(r->tm);
  if (r->owns_lc && r->lc)
    LLVMContextDispose(r->lc);
  cg_target_free(ctx, &r->tgt);
  if (r->name)
    quill_string_free(ctx, r->name);
  if (r->header)
    quill_string_free(ctx, r->header);
  quill_free(ctx, r, sizeof *r);
}

size_t quill_llvm_scratch_size(const quill_llvm_compiled *c) {
  return c->scratch_size;
}

quill_llvm_isa quill_llvm_compiled_isa(const quill_llvm_compiled *c) {
  return c->tgt.isa;
}

void quill_llvm_options_init(quill_llvm_options *o) {
  memset(o, 0, sizeof *o);
  o->opt_level = 3;
  o->threads = 1;
  o->name = "model";
  o->isa = QUILL_LLVM_ISA_AUTO;
}

bool quill_llvm_is_c_identifier(const char *s) {
  static const char *const kw[] = {
      "auto", "break", "case", "char", "const", "continue", "default", "do",
      "double", "else", "enum", "extern", "float", "for", "goto", "if",
      "inline", "int", "long", "register", "restrict", "return", "short",
      "signed", "sizeof", "static", "struct", "switch", "typedef", "union",
      "unsigned", "void", "volatile", "while", "_Bool", "_Complex",
      "_Imaginary", "_Alignas", "_Alignof", "_Atomic", "_Generic",
      "_Noreturn", "_Static_assert", "_Thread_local"};
  if (!s || !*s || (*s >= '0' && *s <= '9') || strlen(s) > 200)
    return false;
  for (const char *p = s; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
          (*p >= '0' && *p <= '9') || *p == '_'))
      return false;
  for (size_t i = 0; i < sizeof kw / sizeof kw[0]; i++)
    if (!strcmp(s, kw[i]))
      return false;
  return true;
}
