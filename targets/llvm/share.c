/*
 * share.c - stages with identical code share one function.
 *
 * Many graphs lower to stages that differ only in the buffers they are
 * handed: a chain of equal elementwise ops, the same reshape or softmax
 * in every block of a transformer, the copies of one concat (each part's
 * offset in the output is in the pointer the caller passes, irb.c). After lowering, each small stage
 * (at most DEDUP_MAX_SIZE instructions; big ones reference their own
 * weight globals and never match) gets a structural key, and a stage whose
 * key equals an earlier one's deletes its function and calls the earlier
 * one with its own pointers (its cg_stage keeps its own slot bindings).
 * The shared function is marked noinline, so -O3 and the code generator
 * work on it once however many stages call it: compile time stays linear
 * in the number of distinct stages, not in the number of ops.
 *
 * The key is not the printed IR: printing one function numbers the
 * metadata of the whole module, which is quadratic over all stages.
 */
#include <string.h>

#include "ir/hmap.h"
#include "targets/llvm/cg.h"

/* Instructions in fn, as built (before optimization). */
unsigned cg_fn_size(LLVMValueRef fn) {
  unsigned n = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb;
       bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i;
         i = LLVMGetNextInstruction(i))
      n++;
  return n;
}

/* Stages of at most this many instructions are compared with the earlier
 * ones: a copy (same code, other buffers) calls the first instead. */
#define DEDUP_MAX_SIZE 400u

/* ---- structural keys of stage functions ----
 *
 * A stage's key is a sequence of 64-bit words: per instruction its opcode,
 * type, the data that is not an operand (predicates, flags, alignment,
 * masks, source types, phi blocks) and its operands, where arguments,
 * blocks and instructions of the function are numbered in order and
 * constants (uniqued by the LLVMContext, globals included) are their
 * addresses. Equal keys mean the same code. Functions with metadata (loop
 * hints) or opcodes not listed here get no key. */
typedef struct key_buf {
  quill_context *ctx;
  uint64_t *w;
  size_t n, cap;
  bool fail;
} key_buf;

static void put(key_buf *k, uint64_t x) {
  if (k->n == k->cap) {
    size_t cap = k->cap ? 2 * k->cap : 256;
    uint64_t *nw = quill_realloc(k->ctx, k->w, k->cap * sizeof *nw,
                                 cap * sizeof *nw);
    if (!nw) {
      k->fail = true;
      return;
    }
    k->w = nw;
    k->cap = cap;
  }
  k->w[k->n++] = x;
}

static void put_ref(key_buf *k, quill_hmap *local, LLVMValueRef v) {
  void *i = quill_hmap_get(local, v, false);
  if (i)
    put(k, 1ull << 63 | (uint64_t)(uintptr_t)i);
  else if (LLVMIsConstant(v)) /* globals too: uniqued, compared by address */
    put(k, (uint64_t)(uintptr_t)v);
  else
    k->fail = true; /* another function's value: cannot happen */
}

static bool keyable_opcode(LLVMOpcode op) {
  switch (op) {
  case LLVMRet: case LLVMBr: case LLVMFNeg: case LLVMAdd: case LLVMFAdd:
  case LLVMSub: case LLVMFSub: case LLVMMul: case LLVMFMul: case LLVMUDiv:
  case LLVMSDiv: case LLVMFDiv: case LLVMURem: case LLVMSRem: case LLVMFRem:
  case LLVMShl: case LLVMLShr: case LLVMAShr: case LLVMAnd: case LLVMOr:
  case LLVMXor: case LLVMAlloca: case LLVMLoad: case LLVMStore:
  case LLVMGetElementPtr: case LLVMTrunc: case LLVMZExt: case LLVMSExt:
  case LLVMFPToUI: case LLVMFPToSI: case LLVMUIToFP: case LLVMSIToFP:
  case LLVMFPTrunc: case LLVMFPExt: case LLVMPtrToInt: case LLVMIntToPtr:
  case LLVMBitCast: case LLVMICmp: case LLVMFCmp: case LLVMPHI:
  case LLVMCall: case LLVMSelect: case LLVMExtractElement:
  case LLVMInsertElement: case LLVMShuffleVector: case LLVMExtractValue:
  case LLVMInsertValue: case LLVMFreeze:
    return true;
  default:
    return false;
  }
}

/* The non-operand data of instruction i. */
static void put_inst_data(key_buf *k, quill_hmap *local, LLVMValueRef i,
                          LLVMOpcode op) {
  switch (op) {
  case LLVMAdd: case LLVMSub: case LLVMMul: case LLVMShl:
    put(k, (uint64_t)LLVMGetNUW(i) << 1 | (uint64_t)LLVMGetNSW(i));
    break;
  case LLVMUDiv: case LLVMSDiv: case LLVMLShr: case LLVMAShr:
    put(k, (uint64_t)LLVMGetExact(i));
    break;
  case LLVMOr:
    put(k, (uint64_t)LLVMGetIsDisjoint(i));
    break;
  case LLVMZExt: case LLVMUIToFP:
    put(k, (uint64_t)LLVMGetNNeg(i));
    break;
  case LLVMICmp:
    put(k, (uint64_t)LLVMGetICmpPredicate(i));
    break;
  case LLVMFCmp:
    put(k, (uint64_t)LLVMGetFCmpPredicate(i));
    break;
  case LLVMLoad: case LLVMStore:
    put(k, (uint64_t)LLVMGetAlignment(i) << 8 |
               (uint64_t)LLVMGetVolatile(i) << 7 |
               (uint64_t)LLVMGetOrdering(i));
    break;
  case LLVMAlloca:
    put(k, (uint64_t)(uintptr_t)LLVMGetAllocatedType(i));
    put(k, LLVMGetAlignment(i));
    break;
  case LLVMGetElementPtr:
    put(k, (uint64_t)(uintptr_t)LLVMGetGEPSourceElementType(i));
    put(k, (uint64_t)LLVMIsInBounds(i));
    break;
  case LLVMShuffleVector: {
    unsigned n = LLVMGetNumMaskElements(i);
    put(k, n);
    for (unsigned e = 0; e < n; e++)
      put(k, (uint64_t)(int64_t)LLVMGetMaskValue(i, e));
    break;
  }
  case LLVMExtractValue: case LLVMInsertValue: {
    unsigned n = LLVMGetNumIndices(i);
    const unsigned *ix = LLVMGetIndices(i);
    put(k, n);
    for (unsigned e = 0; e < n; e++)
      put(k, ix[e]);
    break;
  }
  case LLVMCall: {
    put(k, (uint64_t)(uintptr_t)LLVMGetCalledFunctionType(i));
    put(k, (uint64_t)LLVMGetTailCallKind(i));
    unsigned na = LLVMGetNumArgOperands(i);
    put(k, LLVMGetCallSiteAttributeCount(i, LLVMAttributeFunctionIndex));
    for (unsigned a = 0; a <= na; a++) /* 0: the return value */
      put(k, LLVMGetCallSiteAttributeCount(i, a));
    break;
  }
  case LLVMPHI: {
    unsigned n = LLVMCountIncoming(i);
    for (unsigned e = 0; e < n; e++)
      put_ref(k, local, LLVMBasicBlockAsValue(LLVMGetIncomingBlock(i, e)));
    break;
  }
  default:
    break;
  }
  if (LLVMCanValueUseFastMathFlags(i))
    put(k, (uint64_t)LLVMGetFastMathFlags(i));
}

/* The key of fn into k (k->fail when fn has none). */
static void stage_key(key_buf *k, LLVMValueRef fn) {
  quill_hmap local = {0};
  uintptr_t next = 1;
  for (unsigned a = 0; a < LLVMCountParams(fn); a++)
    if (!quill_hmap_put(k->ctx, &local, LLVMGetParam(fn, a),
                        (void *)next++, false))
      k->fail = true;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb && !k->fail;
       bb = LLVMGetNextBasicBlock(bb)) {
    if (!quill_hmap_put(k->ctx, &local, LLVMBasicBlockAsValue(bb),
                        (void *)next++, false))
      k->fail = true;
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i && !k->fail;
         i = LLVMGetNextInstruction(i))
      if (!quill_hmap_put(k->ctx, &local, i, (void *)next++, false))
        k->fail = true;
  }
  put(k, (uint64_t)(uintptr_t)LLVMGlobalGetValueType(fn));
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb && !k->fail;
       bb = LLVMGetNextBasicBlock(bb)) {
    put(k, ~0ull);
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i && !k->fail;
         i = LLVMGetNextInstruction(i)) {
      LLVMOpcode op = LLVMGetInstructionOpcode(i);
      size_t nmd = 0;
      LLVMValueMetadataEntry *md =
          LLVMInstructionGetAllMetadataOtherThanDebugLoc(i, &nmd);
      if (md)
        LLVMDisposeValueMetadataEntries(md);
      if (nmd || !keyable_opcode(op)) {
        k->fail = true;
        break;
      }
      put(k, (uint64_t)op);
      put(k, (uint64_t)(uintptr_t)LLVMTypeOf(i));
      put_inst_data(k, &local, i, op);
      int n = LLVMGetNumOperands(i);
      put(k, (uint64_t)n);
      for (int o = 0; o < n; o++)
        put_ref(k, &local, LLVMGetOperand(i, (unsigned)o));
    }
  }
  quill_hmap_free(k->ctx, &local);
}

static uint64_t key_hash(const uint64_t *w, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull ^ n;
  for (size_t i = 0; i < n; i++) {
    h ^= w[i];
    h *= 0x100000001b3ull;
    h ^= h >> 29;
  }
  return h;
}

typedef struct key_entry {
  uint64_t hash;
  uint64_t *w; /* NULL: empty */
  size_t n;
  LLVMValueRef fn;
} key_entry;

/* Share the code of identical small stages (a chain of equal elementwise
 * ops, equal blocks of a network): the second and later copies call the
 * first, which is kept out of line so that -O3 works on it once, however
 * many stages call it. */
quill_status cg_share_stages(cg *c) {
  unsigned cap = 16;
  while (cap < 2 * c->nstages + 2)
    cap *= 2;
  key_entry *tab = quill_calloc(c->ctx, cap, sizeof *tab);
  if (!tab)
    return QUILL_ERR_NOMEM;
  quill_status st = QUILL_OK;
  unsigned noinline = LLVMGetEnumAttributeKindForName("noinline", 8);
  key_buf k = {.ctx = c->ctx};
  for (unsigned s = 0; s < c->nstages && !st; s++) {
    cg_stage *sg = &c->stages[s];
    if (sg->amx || LLVMGetFirstUse(sg->fn) ||
        cg_fn_size(sg->fn) > DEDUP_MAX_SIZE)
      continue;
    k.n = 0;
    k.fail = false;
    stage_key(&k, sg->fn);
    if (k.fail) {
      if (!k.w)
        st = QUILL_ERR_NOMEM;
      continue;
    }
    uint64_t h = key_hash(k.w, k.n);
    unsigned slot = (unsigned)h & (cap - 1);
    while (tab[slot].w && !(tab[slot].hash == h && tab[slot].n == k.n &&
                            !memcmp(tab[slot].w, k.w, k.n * sizeof *k.w)))
      slot = (slot + 1) & (cap - 1);
    if (tab[slot].w) {
      LLVMDeleteFunction(sg->fn);
      sg->fn = tab[slot].fn;
      LLVMAddAttributeAtIndex(sg->fn, LLVMAttributeFunctionIndex,
                              LLVMCreateEnumAttribute(c->lc, noinline, 0));
      continue;
    }
    tab[slot].w = quill_alloc(c->ctx, k.n * sizeof *k.w);
    if (!tab[slot].w) {
      st = QUILL_ERR_NOMEM;
      break;
    }
    memcpy(tab[slot].w, k.w, k.n * sizeof *k.w);
    tab[slot].n = k.n;
    tab[slot].hash = h;
    tab[slot].fn = sg->fn;
  }
  for (unsigned i = 0; i < cap; i++)
    if (tab[i].w)
      quill_free(c->ctx, tab[i].w, tab[i].n * sizeof *tab[i].w);
  quill_free(c->ctx, tab, cap * sizeof *tab);
  quill_free(c->ctx, k.w, k.cap * sizeof *k.w);
  return st;
}

