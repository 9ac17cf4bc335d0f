/*
 * irb.c - a small layer over the LLVM C API builder that keeps the
 * lowerings readable: stage functions, counted loops with a phi, if/else,
 * locals, constants, intrinsic calls, element loads and stores.
 *
 * A stage is an internal function
 *
 *   void q.<op>.<name>(ptr noalias p0, ..., ptr noalias pN, i64 t0, i64 t1)
 *
 *   entry:  allocas and nothing else (cg_var), then `br body`
 *   body:   the lowering's code (loops append blocks after it)
 *
 * Each pointer parameter is bound to one buffer slot the first time the
 * lowering asks for that slot (cg_slot_ptr), at the byte offset of that
 * first request (a concat's part, a haloed buffer's interior); later
 * requests for the slot are GEPs from it, and the entry function passes
 * the slot's address plus that offset. So the stage's code does not depend
 * on where its views sit in their buffers, only on their shapes and
 * strides, and equal stages share one function (share.c). Distinct slots
 * never overlap while the op runs (memplan.c), which is what makes
 * `noalias` true.
 *
 * Loops (cg_loop_begin/_end) have the shape
 *
 *   pre: br head
 *   head: i = phi [begin, pre], [i + step, latch]; br (i < end), body, exit
 *   body: ...  latch: br head
 *   exit:
 */
#include <string.h>

#include <llvm-c/DebugInfo.h>

#include "targets/llvm/cg.h"

/* ---- stages ------------------------------------------------------------ */

/* The next stage record; on allocation failure the lowering keeps
 * building into c->dummy (never called) and the compile fails with NOMEM. */
static cg_stage *new_stage(cg *c) {
  if (c->nstages == c->cap_stages) {
    unsigned cap = c->cap_stages ? c->cap_stages * 2 : 32;
    cg_stage *ns = quill_realloc(c->ctx, c->stages,
                                 c->cap_stages * sizeof *ns, cap * sizeof *ns);
    if (!ns) {
      c->status = QUILL_ERR_NOMEM;
      return &c->dummy;
    }
    c->stages = ns;
    c->cap_stages = cap;
  }
  return &c->stages[c->nstages++];
}

void cg_stage_begin(cg *c, const char *name, int64_t ntasks) {
  cg_stage *st = new_stage(c);
  memset(st, 0, sizeof *st);
  st->ntasks = ntasks < 1 ? 1 : ntasks;
  st->op_index = c->op_index;
  st->work_ns = 0;
  for (unsigned r = 0; c->op && r < quill_op_num_results(c->op); r++) {
    int64_t n = quill_type_num_elements(quill_value_type(quill_op_result(c->op, r)));
    st->work_ns += 0.5 * (double)(n > 0 ? n : 0);
  }
  unsigned np = c->op ? quill_op_num_operands(c->op) +
                            quill_op_num_results(c->op) + 8
                      : 4;
  st->param_slot = quill_alloc(c->ctx, np * sizeof(int));
  st->param_off = quill_calloc(c->ctx, np, sizeof(int64_t));
  LLVMTypeRef *pt = quill_alloc(c->ctx, (np + 2) * sizeof *pt);
  c->params = quill_alloc(c->ctx, np * sizeof *c->params);
  if (!st->param_slot || !st->param_off || !pt || !c->params) {
    c->status = QUILL_ERR_NOMEM;
    quill_free(c->ctx, st->param_slot, np * sizeof(int));
    quill_free(c->ctx, st->param_off, np * sizeof(int64_t));
    quill_free(c->ctx, c->params, np * sizeof *c->params);
    quill_free(c->ctx, pt, (np + 2) * sizeof *pt);
    st->param_slot = NULL;
    st->param_off = NULL;
    c->params = NULL;
    pt = NULL;
    np = 0;
  }
  st->nparams = np;
  for (unsigned i = 0; i < np; i++) {
    st->param_slot[i] = -1;
    pt[i] = c->t_ptr;
  }
  LLVMTypeRef it[2] = {c->t_i64, c->t_i64};
  LLVMTypeRef fty;
  if (np) {
    pt[np] = c->t_i64;
    pt[np + 1] = c->t_i64;
    fty = LLVMFunctionType(c->t_void, pt, np + 2, 0);
  } else {
    fty = LLVMFunctionType(c->t_void, it, 2, 0);
  }
  if (pt)
    quill_free(c->ctx, pt, (np + 2) * sizeof *pt);
  char fname[96];
  snprintf(fname, sizeof fname, "q.%d.%s", c->op_index, name);
  st->fn = LLVMAddFunction(c->mod, fname, fty);
  LLVMSetLinkage(st->fn, LLVMInternalLinkage);
  unsigned noalias = LLVMGetEnumAttributeKindForName("noalias", 7);
  unsigned nounwind = LLVMGetEnumAttributeKindForName("nounwind", 8);
  for (unsigned i = 0; i < np; i++)
    LLVMAddAttributeAtIndex(st->fn, i + 1,
                            LLVMCreateEnumAttribute(c->lc, noalias, 0));
  LLVMAddAttributeAtIndex(st->fn, LLVMAttributeFunctionIndex,
                          LLVMCreateEnumAttribute(c->lc, nounwind, 0));
  if (c->opts.noinline)
    LLVMAddAttributeAtIndex(
        st->fn, LLVMAttributeFunctionIndex,
        LLVMCreateEnumAttribute(c->lc,
                                LLVMGetEnumAttributeKindForName("noinline", 8),
                                0));
  c->st = st;
  for (unsigned i = 0; i < np; i++)
    c->params[i] = LLVMGetParam(st->fn, i);
  c->t0 = LLVMGetParam(st->fn, np);
  c->t1 = LLVMGetParam(st->fn, np + 1);
  c->entry_bb = LLVMAppendBasicBlockInContext(c->lc, st->fn, "entry");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(c->lc, st->fn, "body");
  LLVMPositionBuilderAtEnd(c->eb, c->entry_bb);
  LLVMPositionBuilderAtEnd(c->b, body);
}

void cg_stage_work(cg *c, double ns) {
  if (c->st)
    c->st->work_ns = ns;
}

void cg_stage_use_amx(cg *c) {
  if (!c->st)
    return;
  c->st->amx = true;
  c->amx = true;
  if (!c->opts.noinline)
    LLVMAddAttributeAtIndex(
      c->st->fn, LLVMAttributeFunctionIndex,
      LLVMCreateEnumAttribute(
          c->lc, LLVMGetEnumAttributeKindForName("noinline", 8), 0));
}

void cg_stage_end(cg *c) {
  if (c->st->amx) /* LLVM's tile passes load the configuration on entry */
    cg_intrinsic(c, "llvm.x86.tilerelease", NULL, 0, NULL, 0);
  LLVMBuildRetVoid(c->b);
  LLVMBasicBlockRef body = LLVMGetNextBasicBlock(c->entry_bb);
  LLVMPositionBuilderAtEnd(c->eb, c->entry_bb);
  LLVMBuildBr(c->eb, body);
  if (c->params)
    quill_free(c->ctx, c->params, c->st->nparams * sizeof *c->params);
  c->params = NULL;
  c->st = NULL;
}

LLVMValueRef cg_slot_ptr_at(cg *c, int slot, int64_t off) {
  cg_stage *st = c->st;
  for (unsigned i = 0; i < st->nparams; i++) {
    if (st->param_slot[i] == slot) {
      int64_t d = off - st->param_off[i];
      return d ? cg_gep8(c, c->params[i], cg_i64c(c, d)) : c->params[i];
    }
    if (st->param_slot[i] < 0) {
      st->param_slot[i] = slot;
      st->param_off[i] = off;
      return c->params[i];
    }
  }
  /* More distinct buffers than the stage has parameters: a lowering bug. */
  c->status = QUILL_ERR_INTERNAL;
  return LLVMConstNull(c->t_ptr);
}

LLVMValueRef cg_slot_ptr(cg *c, int slot) {
  return cg_slot_ptr_at(c, slot, 0);
}

LLVMValueRef cg_view_base(cg *c, const cg_view *v) {
  int64_t off = v->offset * (int64_t)quill_type_elem_bytes(v->elem);
  if (v->slot >= 0)
    return cg_slot_ptr_at(c, v->slot, off);
  return off ? cg_gep8(c, v->global, cg_i64c(c, off)) : v->global;
}

/* ---- control flow -------------------------------------------------------- */

void cg_loop_begin(cg *c, cg_loop *l, LLVMValueRef begin, LLVMValueRef end,
                   int64_t step) {
  LLVMValueRef fn = c->st->fn;
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(c->b);
  l->head = LLVMAppendBasicBlockInContext(c->lc, fn, "loop");
  l->body = LLVMAppendBasicBlockInContext(c->lc, fn, "body");
  l->exit = LLVMAppendBasicBlockInContext(c->lc, fn, "exit");
  l->step = step;
  LLVMBuildBr(c->b, l->head);
  LLVMPositionBuilderAtEnd(c->b, l->head);
  l->phi = LLVMBuildPhi(c->b, c->t_i64, "i");
  LLVMAddIncoming(l->phi, &begin, &pre, 1);
  LLVMValueRef cond = LLVMBuildICmp(c->b, LLVMIntSLT, l->phi, end, "");
  LLVMBuildCondBr(c->b, cond, l->body, l->exit);
  LLVMPositionBuilderAtEnd(c->b, l->body);
  l->i = l->phi;
}

/* !llvm.loop on the latch: no unrolling, vectorize by `width` lanes (a
 * short constant-trip loop would otherwise be unrolled before the loop
 * vectorizer sees it, leaving the SLP vectorizer to pick a worse shape);
 * width 0: no unrolling only. */
static void loop_hints(cg *c, LLVMValueRef br, unsigned width) {
  LLVMMetadataRef i32w = LLVMValueAsMetadata(cg_i32c(c, width));
  LLVMMetadataRef one = LLVMValueAsMetadata(LLVMConstInt(c->t_i1, 1, 0));
  static const char *const k[3] = {"llvm.loop.unroll.disable",
                                   "llvm.loop.vectorize.width",
                                   "llvm.loop.vectorize.enable"};
  LLVMMetadataRef ops[4];
  ops[1] = LLVMMDNodeInContext2(
      c->lc, (LLVMMetadataRef[]){LLVMMDStringInContext2(c->lc, k[0], strlen(k[0]))},
      1);
  ops[2] = LLVMMDNodeInContext2(
      c->lc,
      (LLVMMetadataRef[]){LLVMMDStringInContext2(c->lc, k[1], strlen(k[1])),
                          i32w},
      2);
  ops[3] = LLVMMDNodeInContext2(
      c->lc,
      (LLVMMetadataRef[]){LLVMMDStringInContext2(c->lc, k[2], strlen(k[2])), one},
      2);
  LLVMMetadataRef tmp = LLVMTemporaryMDNode(c->lc, NULL, 0);
  ops[0] = tmp;
  LLVMMetadataRef node = LLVMMDNodeInContext2(c->lc, ops, width ? 4 : 2);
  LLVMMetadataReplaceAllUsesWith(tmp, node);
  LLVMSetMetadata(br, LLVMGetMDKindIDInContext(c->lc, "llvm.loop", 9),
                  LLVMMetadataAsValue(c->lc, node));
}

void cg_loop_end_vectorized(cg *c, cg_loop *l, unsigned width) {
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(c->b);
  cg_loop_end(c, l);
  loop_hints(c, LLVMGetBasicBlockTerminator(latch), width);
}

void cg_loop_end_nounroll(cg *c, cg_loop *l) {
  cg_loop_end_vectorized(c, l, 0);
}

void cg_loop_end(cg *c, cg_loop *l) {
  LLVMValueRef next =
      LLVMBuildAdd(c->b, l->phi, cg_i64c(c, l->step), "i.next");
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(c->b);
  LLVMBuildBr(c->b, l->head);
  LLVMAddIncoming(l->phi, &next, &latch, 1);
  /* Keep block order readable: move exit after the latch. */
  LLVMMoveBasicBlockAfter(l->exit, latch);
  LLVMPositionBuilderAtEnd(c->b, l->exit);
}

void cg_for(cg *c, cg_loop *l, int64_t begin, int64_t end, int64_t step) {
  cg_loop_begin(c, l, cg_i64c(c, begin), cg_i64c(c, end), step);
}

void cg_if_begin(cg *c, cg_if *f, LLVMValueRef cond) {
  LLVMValueRef fn = c->st->fn;
  f->then_bb = LLVMAppendBasicBlockInContext(c->lc, fn, "then");
  f->else_bb = LLVMAppendBasicBlockInContext(c->lc, fn, "else");
  f->merge = NULL;
  LLVMBuildCondBr(c->b, cond, f->then_bb, f->else_bb);
  LLVMPositionBuilderAtEnd(c->b, f->then_bb);
}

void cg_if_else(cg *c, cg_if *f) {
  f->merge = LLVMAppendBasicBlockInContext(c->lc, c->st->fn, "merge");
  LLVMBuildBr(c->b, f->merge);
  LLVMMoveBasicBlockAfter(f->else_bb, LLVMGetInsertBlock(c->b));
  LLVMPositionBuilderAtEnd(c->b, f->else_bb);
}

void cg_if_end(cg *c, cg_if *f) {
  if (!f->merge) { /* no else part: the else block is the merge point */
    LLVMBuildBr(c->b, f->else_bb);
    LLVMMoveBasicBlockAfter(f->else_bb, LLVMGetInsertBlock(c->b));
    LLVMPositionBuilderAtEnd(c->b, f->else_bb);
    return;
  }
  LLVMBuildBr(c->b, f->merge);
  LLVMMoveBasicBlockAfter(f->merge, LLVMGetInsertBlock(c->b));
  LLVMPositionBuilderAtEnd(c->b, f->merge);
}

LLVMValueRef cg_var(cg *c, LLVMTypeRef t, const char *name) {
  return LLVMBuildAlloca(c->eb, t, name);
}

/* ---- constants and memory ---------------------------------------------- */

LLVMValueRef cg_i8c(cg *c, int64_t v) {
  return LLVMConstInt(c->t_i8, (unsigned long long)v, 1);
}
LLVMValueRef cg_i16c(cg *c, int64_t v) {
  return LLVMConstInt(c->t_i16, (unsigned long long)v, 1);
}
LLVMValueRef cg_i32c(cg *c, int64_t v) {
  return LLVMConstInt(c->t_i32, (unsigned long long)v, 1);
}
LLVMValueRef cg_i64c(cg *c, int64_t v) {
  return LLVMConstInt(c->t_i64, (unsigned long long)v, 1);
}
LLVMValueRef cg_f32c(cg *c, double v) { return LLVMConstReal(c->t_f32, v); }
LLVMValueRef cg_f64c(cg *c, double v) { return LLVMConstReal(c->t_f64, v); }

LLVMTypeRef cg_vec(LLVMTypeRef t, unsigned n) {
  return n == 1 ? t : LLVMVectorType(t, n);
}

LLVMValueRef cg_intc(LLVMTypeRef t, int64_t v) {
  if (LLVMGetTypeKind(t) == LLVMVectorTypeKind) {
    unsigned n = LLVMGetVectorSize(t);
    LLVMValueRef s = LLVMConstInt(LLVMGetElementType(t),
                                  (unsigned long long)v, 1);
    LLVMValueRef e[64];
    for (unsigned i = 0; i < n && i < 64; i++)
      e[i] = s;
    return LLVMConstVector(e, n < 64 ? n : 64);
  }
  return LLVMConstInt(t, (unsigned long long)v, 1);
}

LLVMValueRef cg_splat(cg *c, LLVMValueRef s, unsigned n) {
  if (n == 1)
    return s;
  LLVMTypeRef vt = LLVMVectorType(LLVMTypeOf(s), n);
  LLVMValueRef v = LLVMBuildInsertElement(c->b, LLVMGetPoison(vt), s,
                                          cg_i32c(c, 0), "");
  LLVMValueRef mask = LLVMConstNull(LLVMVectorType(c->t_i32, n));
  return LLVMBuildShuffleVector(c->b, v, LLVMGetPoison(vt), mask, "splat");
}

LLVMValueRef cg_lane_mask(cg *c, LLVMValueRef left, unsigned n) {
  LLVMValueRef lanes[64];
  for (unsigned l = 0; l < n; l++)
    lanes[l] = cg_i64c(c, l);
  return LLVMBuildICmp(c->b, LLVMIntSLT, LLVMConstVector(lanes, n),
                       cg_splat(c, left, n), "");
}

/* cg_pack_bytes (VL 16) and cg_pack_bytes8 (VL 8): vpackssdw pairs,
 * vpacksswb/vpackuswb, then the dwords out of their 128-bit lanes; the
 * first `out` dwords of the result. */
static LLVMValueRef pack_bytes(cg *c, const LLVMValueRef *v, unsigned n,
                               bool is_signed, unsigned VL, unsigned out) {
  bool z = VL == 16;
  LLVMTypeRef vt = LLVMVectorType(c->t_i32, VL);
  const char *dw = z ? "llvm.x86.avx512.packssdw.512" : "llvm.x86.avx2.packssdw";
  const char *wb =
      z ? (is_signed ? "llvm.x86.avx512.packsswb.512"
                     : "llvm.x86.avx512.packuswb.512")
        : (is_signed ? "llvm.x86.avx2.packsswb" : "llvm.x86.avx2.packuswb");
  LLVMValueRef w[4];
  for (unsigned i = 0; i < 4; i++)
    w[i] = i < n ? v[i] : LLVMGetUndef(vt);
  /* per 128-bit lane L: words v0[4L..4L+3] v1[4L..] | v2[4L..] v3[4L..] */
  LLVMValueRef ab =
      cg_intrinsic(c, dw, NULL, 0, (LLVMValueRef[]){w[0], w[1]}, 2);
  LLVMValueRef cd =
      n > 2 ? cg_intrinsic(c, dw, NULL, 0, (LLVMValueRef[]){w[2], w[3]}, 2)
            : ab;
  LLVMValueRef b = cg_intrinsic(c, wb, NULL, 0, (LLVMValueRef[]){ab, cd}, 2);
  /* dword 4L + j of the packs holds v_j[4L..4L+3]: put it at j nl + L */
  unsigned nl = VL / 4;
  LLVMValueRef idx[16];
  for (unsigned i = 0; i < out; i++)
    idx[i] = cg_i32c(c, (int32_t)(4 * (i % nl) + i / nl));
  LLVMValueRef d = LLVMBuildBitCast(c->b, b, vt, "");
  d = LLVMBuildShuffleVector(c->b, d, LLVMGetUndef(vt),
                             LLVMConstVector(idx, out), "");
  return LLVMBuildBitCast(c->b, d, LLVMVectorType(c->t_i8, 4 * out), "");
}

LLVMValueRef cg_pack_bytes(cg *c, const LLVMValueRef *v, unsigned n,
                           bool is_signed) {
  return pack_bytes(c, v, n, is_signed, 16, 16);
}

LLVMValueRef cg_pack_bytes8(cg *c, const LLVMValueRef *v, unsigned n,
                            bool is_signed) {
  return pack_bytes(c, v, n, is_signed, 8, 2 * n);
}

LLVMValueRef cg_fclamp(cg *c, LLVMValueRef v, LLVMValueRef lo,
                       LLVMValueRef hi) {
  v = LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, LLVMRealOLT, v, lo, ""), lo, v,
                      "");
  return LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, LLVMRealOGT, v, hi, ""), hi,
                         v, "");
}

LLVMValueRef cg_gep8(cg *c, LLVMValueRef ptr, LLVMValueRef off) {
  return LLVMBuildInBoundsGEP2(c->b, c->t_i8, ptr, &off, 1, "");
}

LLVMValueRef cg_gep(cg *c, LLVMTypeRef t, LLVMValueRef ptr, LLVMValueRef idx) {
  return LLVMBuildInBoundsGEP2(c->b, t, ptr, &idx, 1, "");
}

LLVMValueRef cg_load(cg *c, LLVMTypeRef t, LLVMValueRef ptr, unsigned align) {
  LLVMValueRef l = LLVMBuildLoad2(c->b, t, ptr, "");
  LLVMSetAlignment(l, align ? align : 1);
  return l;
}

void cg_store(cg *c, LLVMValueRef v, LLVMValueRef ptr, unsigned align) {
  LLVMValueRef s = LLVMBuildStore(c->b, v, ptr);
  LLVMSetAlignment(s, align ? align : 1);
}

LLVMValueRef cg_min_s(cg *c, LLVMValueRef a, LLVMValueRef b) {
  LLVMTypeRef t = LLVMTypeOf(a);
  return cg_intrinsic(c, "llvm.smin", &t, 1, (LLVMValueRef[]){a, b}, 2);
}

LLVMValueRef cg_tree_sum(cg *c, LLVMTypeRef t, LLVMValueRef part, int n) {
  unsigned al = (unsigned)(LLVMGetTypeKind(t) == LLVMDoubleTypeKind ? 8 : 4);
  for (int w = n / 2; w >= 1; w /= 2)
    for (int l = 0; l < w; l++) {
      LLVMValueRef a = cg_gep(c, t, part, cg_i64c(c, l));
      LLVMValueRef b = cg_gep(c, t, part, cg_i64c(c, l + w));
      cg_store(c, LLVMBuildFAdd(c->b, cg_load(c, t, a, al),
                                cg_load(c, t, b, al), ""),
               a, al);
    }
  return cg_load(c, t, part, al);
}

LLVMValueRef cg_max_s(cg *c, LLVMValueRef a, LLVMValueRef b) {
  LLVMTypeRef t = LLVMTypeOf(a);
  return cg_intrinsic(c, "llvm.smax", &t, 1, (LLVMValueRef[]){a, b}, 2);
}

LLVMValueRef cg_intrinsic(cg *c, const char *name, LLVMTypeRef *over,
                          unsigned nover, LLVMValueRef *args, unsigned nargs) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  if (!id) {
    c->status = QUILL_ERR_INTERNAL;
    return LLVMGetUndef(c->t_i32);
  }
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(c->mod, id, over, nover);
  LLVMTypeRef fty = LLVMIntrinsicGetType(c->lc, id, over, nover);
  return LLVMBuildCall2(c->b, fty, fn, args, nargs, "");
}

void cg_prefetch_l2(cg *c, LLVMValueRef ptr) {
  cg_intrinsic(c, "llvm.prefetch", (LLVMTypeRef[]){c->t_ptr}, 1,
               (LLVMValueRef[]){ptr, cg_i32c(c, 0), cg_i32c(c, 2),
                                cg_i32c(c, 1)},
               4);
}

LLVMValueRef cg_call_extern(cg *c, const char *name, LLVMTypeRef fty,
                            LLVMValueRef *args, unsigned nargs) {
  LLVMValueRef fn = LLVMGetNamedFunction(c->mod, name);
  if (!fn)
    fn = LLVMAddFunction(c->mod, name, fty);
  return LLVMBuildCall2(c->b, fty, fn, args, nargs, "");
}

LLVMValueRef cg_const_global(cg *c, const char *name, const void *data,
                             size_t size) {
  LLVMTypeRef at = LLVMArrayType2(c->t_i8, size ? size : 1);
  char gname[96];
  snprintf(gname, sizeof gname, "q.%s.%u", name, c->nglobals++);
  LLVMValueRef g = LLVMAddGlobal(c->mod, at, gname);
  unsigned char zero = 0;
  LLVMSetInitializer(g, LLVMConstStringInContext2(
                            c->lc, size ? data : (const void *)&zero,
                            size ? size : 1, 1));
  LLVMSetGlobalConstant(g, 1);
  LLVMSetLinkage(g, LLVMPrivateLinkage);
  LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
  LLVMSetAlignment(g, 64);
  return g;
}

/* ---- elements ------------------------------------------------------------ */

quill_type *cg_storage(const quill_type *elem) {
  return quill_type_is_quant(elem) ? quill_type_quant_storage(elem)
                                   : (quill_type *)elem;
}

bool cg_same_shape(const quill_type *a, const quill_type *b) {
  unsigned r = quill_type_rank(a);
  if (r != quill_type_rank(b))
    return false;
  for (unsigned d = 0; d < r; d++)
    if (quill_type_dim(a, d) != quill_type_dim(b, d))
      return false;
  return true;
}

LLVMTypeRef cg_elem_type(cg *c, const quill_type *elem) {
  quill_type *s = cg_storage(elem);
  switch (quill_type_kind_of(s)) {
  case QUILL_TYPE_F32: return c->t_f32;
  case QUILL_TYPE_F64: return c->t_f64;
  case QUILL_TYPE_F16: return LLVMHalfTypeInContext(c->lc);
  case QUILL_TYPE_BF16: return LLVMBFloatTypeInContext(c->lc);
  default: break;
  }
  switch (quill_type_elem_bytes(s)) {
  case 1: return c->t_i8;
  case 2: return c->t_i16;
  case 4: return c->t_i32;
  default: return c->t_i64;
  }
}

LLVMValueRef cg_widen_int(cg *c, const quill_type *elem, LLVMValueRef v,
                          LLVMTypeRef to) {
  quill_type *s = cg_storage(elem);
  quill_type_kind k = quill_type_kind_of(s);
  LLVMTypeRef et = LLVMTypeOf(v);
  LLVMTypeRef st = LLVMGetTypeKind(et) == LLVMVectorTypeKind
                       ? LLVMGetElementType(et) : et;
  if (LLVMGetTypeKind(to) == LLVMVectorTypeKind)
    to = LLVMGetElementType(to);
  if (LLVMGetTypeKind(et) == LLVMVectorTypeKind)
    to = LLVMVectorType(to, LLVMGetVectorSize(et));
  if (k == QUILL_TYPE_I4) {
    v = LLVMBuildShl(c->b, v, cg_intc(et, 4), "");
    v = LLVMBuildAShr(c->b, v, cg_intc(et, 4), "");
  } else if (k == QUILL_TYPE_U4) {
    v = LLVMBuildAnd(c->b, v, cg_intc(et, 15), "");
  } else if (k == QUILL_TYPE_BOOL) {
    v = LLVMBuildZExt(c->b,
                      LLVMBuildICmp(c->b, LLVMIntNE, v, LLVMConstNull(et), ""),
                      et, "");
  }
  unsigned w = LLVMGetIntTypeWidth(st);
  unsigned tw = LLVMGetIntTypeWidth(LLVMGetTypeKind(to) == LLVMVectorTypeKind
                                        ? LLVMGetElementType(to) : to);
  if (w == tw)
    return v;
  if (w > tw)
    return LLVMBuildTrunc(c->b, v, to, "");
  return quill_type_is_signed(s) ? LLVMBuildSExt(c->b, v, to, "")
                                 : LLVMBuildZExt(c->b, v, to, "");
}

LLVMValueRef cg_load_int(cg *c, const quill_type *elem, LLVMValueRef ptr,
                         LLVMTypeRef to) {
  quill_type *s = cg_storage(elem);
  LLVMValueRef v = cg_load(c, cg_elem_type(c, elem), ptr,
                           (unsigned)quill_type_elem_bytes(s));
  return cg_widen_int(c, elem, v, to);
}

void cg_store_int(cg *c, const quill_type *elem, LLVMValueRef v,
                  LLVMValueRef ptr) {
  quill_type *s = cg_storage(elem);
  quill_type_kind k = quill_type_kind_of(s);
  LLVMTypeRef et = cg_elem_type(c, elem);
  unsigned w = LLVMGetIntTypeWidth(LLVMTypeOf(v)), ew = LLVMGetIntTypeWidth(et);
  if (k == QUILL_TYPE_BOOL)
    v = LLVMBuildZExt(c->b,
                      LLVMBuildICmp(c->b, LLVMIntNE, v,
                                    LLVMConstNull(LLVMTypeOf(v)), ""),
                      et, "");
  else if (w > ew)
    v = LLVMBuildTrunc(c->b, v, et, "");
  else if (w < ew)
    v = LLVMBuildSExt(c->b, v, et, "");
  if (k == QUILL_TYPE_I4) {
    v = LLVMBuildShl(c->b, v, cg_i8c(c, 4), "");
    v = LLVMBuildAShr(c->b, v, cg_i8c(c, 4), "");
  } else if (k == QUILL_TYPE_U4) {
    v = LLVMBuildAnd(c->b, v, cg_i8c(c, 15), "");
  }
  cg_store(c, v, ptr, (unsigned)quill_type_elem_bytes(s));
}

LLVMValueRef cg_load_f32(cg *c, const quill_type *elem, LLVMValueRef ptr) {
  quill_type *s = cg_storage(elem);
  quill_type_kind k = quill_type_kind_of(s);
  LLVMTypeRef et = cg_elem_type(c, elem);
  if (k == QUILL_TYPE_F32)
    return cg_load(c, et, ptr, 4);
  if (quill_type_is_float(s))
    return LLVMBuildFPCast(c->b, cg_load(c, et, ptr, 1), c->t_f32, "");
  if (k == QUILL_TYPE_U64 || k == QUILL_TYPE_U32)
    return LLVMBuildUIToFP(c->b, cg_load_int(c, elem, ptr, c->t_i64),
                           c->t_f32, "");
  return LLVMBuildSIToFP(c->b, cg_load_int(c, elem, ptr, c->t_i64), c->t_f32,
                         "");
}
