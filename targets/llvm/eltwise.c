/*
 * eltwise.c - the generic strided elementwise engine behind every
 * elementwise, quantization and data-movement lowering.
 *
 * cg_map(out, ins, fn) computes out[i] = fn(ins[0][i], ins[1][i], ...) for
 * every logical index i of out, where each view maps indices to memory
 * through its own strides (0 along broadcast dims). Views make layouts,
 * transposes, slices and broadcasts one mechanism:
 *
 *   1. order the dims by the output's strides (its physical order), drop
 *      size-1 dims, and merge neighbours that are contiguous in every view
 *      (NHWC -> NHWC copies become one flat loop);
 *   2. the innermost remaining dim is a plain counted loop with constant
 *      strides, which LLVM's loop vectorizer turns into vector code when
 *      every view is contiguous (or broadcast) there;
 *   3. the outer dims (times chunks of a long inner dim) are the stage's
 *      tasks, so threads split them;
 *   4. a transposing map (an input strided along the output's inner dim
 *      but contiguous along another, e.g. NCHW <-> NHWC at the graph's
 *      boundary) is tiled: a task is TILE indices of that other dim times
 *      TILE_INNER of the inner dim, so the strided input's cache lines
 *      are reused across the tile instead of being fetched once per
 *      element.
 */
#include <string.h>

#include "targets/llvm/cg.h"

#define MAXV 8 /* views per map (the output plus up to 7 inputs) */
#define CHUNK 16384
#define TILE 16
#define TILE_INNER 64

/* The dim (of the merged D/S, m dims) to tile a transposing map along,
 * or -1: an input that is neither contiguous nor broadcast along the
 * inner dim but contiguous along an outer one. */
static int tile_dim(unsigned m, unsigned na, int64_t S[][QUILL_MAX_RANK + 1],
                    const int64_t *D) {
  if (m < 2 || S[0][m - 1] != 1)
    return -1;
  for (unsigned a = 1; a < na; a++) {
    int64_t si = S[a][m - 1];
    if (si == 0 || si == 1)
      continue;
    for (unsigned k = 0; k + 1 < m; k++)
      if (S[a][k] == 1 && D[k] > 1)
        return (int)k;
  }
  return -1;
}

cg_view cg_view_broadcast(const cg_view *v, unsigned rank,
                          const int64_t *dims) {
  cg_view r = *v;
  r.rank = rank;
  for (unsigned d = 0; d < rank; d++) {
    int k = (int)d - (int)(rank - v->rank);
    r.dims[d] = dims[d];
    if (k < 0 || (v->dims[k] == 1 && dims[d] != 1))
      r.strides[d] = 0;
    else
      r.strides[d] = v->strides[k];
  }
  return r;
}

void cg_map(cg *c, const char *name, const cg_view *out, unsigned nin,
            const cg_view *ins, cg_map_fn fn, void *ud) {
  unsigned na = nin + 1;
  if (na > MAXV) {
    c->status = QUILL_ERR_INTERNAL;
    return;
  }
  const cg_view *vw[MAXV];
  vw[0] = out;
  for (unsigned i = 0; i < nin; i++)
    vw[i + 1] = &ins[i];
  /* 1. physical order of the output (stable sort by stride, descending) */
  unsigned r = out->rank, order[QUILL_MAX_RANK];
  for (unsigned d = 0; d < r; d++) {
    unsigned j = d;
    while (j > 0 && out->strides[order[j - 1]] < out->strides[d]) {
      order[j] = order[j - 1];
      j--;
    }
    order[j] = d;
  }
  int64_t D[QUILL_MAX_RANK + 1], S[MAXV][QUILL_MAX_RANK + 1];
  unsigned m = 0;
  for (unsigned k = 0; k < r; k++) {
    unsigned d = order[k];
    if (out->dims[d] == 1)
      continue;
    if (m > 0) { /* merge with the previous dim if contiguous everywhere */
      bool merge = true;
      for (unsigned a = 0; a < na; a++)
        if (S[a][m - 1] != vw[a]->strides[d] * out->dims[d])
          merge = false;
      if (merge) {
        D[m - 1] *= out->dims[d];
        for (unsigned a = 0; a < na; a++)
          S[a][m - 1] = vw[a]->strides[d];
        continue;
      }
    }
    D[m] = out->dims[d];
    for (unsigned a = 0; a < na; a++)
      S[a][m] = vw[a]->strides[d];
    m++;
  }
  if (m == 0) {
    D[0] = 1;
    for (unsigned a = 0; a < na; a++)
      S[a][0] = 0;
    m = 1;
  }
  for (unsigned k = 0; k < m; k++)
    if (D[k] == 0)
      return; /* empty: nothing to do */
  /* 3. tasks: outer index x chunks of the inner dim */
  int64_t outer = 1, inner = D[m - 1];
  for (unsigned k = 0; k + 1 < m; k++)
    outer *= D[k];
  int64_t nchunks = 1, chunk = inner;
  int tk = tile_dim(m, na, S, D);
  int64_t nblk = 1;
  if (tk >= 0) {
    nblk = (D[tk] + TILE - 1) / TILE;
    outer = outer / D[tk] * nblk;
    if (inner > TILE_INNER) {
      nchunks = (inner + TILE_INNER - 1) / TILE_INNER;
      chunk = TILE_INNER;
    }
  } else if (outer < 8 && inner > 2 * CHUNK) {
    nchunks = (inner + CHUNK - 1) / CHUNK;
    chunk = CHUNK;
  }
  cg_stage_begin(c, name, outer * nchunks);
  LLVMValueRef base[MAXV];
  LLVMTypeRef et[MAXV];
  for (unsigned a = 0; a < na; a++) {
    base[a] = cg_view_base(c, vw[a]);
    et[a] = cg_elem_type(c, vw[a]->elem);
  }
  cg_loop lt;
  cg_loop_begin(c, &lt, c->t0, c->t1, 1);
  LLVMValueRef o = lt.i, lo = cg_i64c(c, 0), hi = cg_i64c(c, inner);
  if (nchunks > 1) {
    LLVMValueRef ch = LLVMBuildSRem(c->b, o, cg_i64c(c, nchunks), "");
    o = LLVMBuildSDiv(c->b, o, cg_i64c(c, nchunks), "");
    lo = LLVMBuildMul(c->b, ch, cg_i64c(c, chunk), "");
    hi = cg_min_s(c, LLVMBuildAdd(c->b, lo, cg_i64c(c, chunk), ""), hi);
  }
  LLVMValueRef off[MAXV];
  for (unsigned a = 0; a < na; a++)
    off[a] = cg_i64c(c, 0);
  LLVMValueRef blk = NULL;
  if (tk >= 0) {
    blk = LLVMBuildURem(c->b, o, cg_i64c(c, nblk), "");
    o = LLVMBuildUDiv(c->b, o, cg_i64c(c, nblk), "");
  }
  for (unsigned k = m - 1; k-- > 0;) {
    if ((int)k == tk)
      continue;
    LLVMValueRef coord = LLVMBuildURem(c->b, o, cg_i64c(c, D[k]), "");
    o = LLVMBuildUDiv(c->b, o, cg_i64c(c, D[k]), "");
    for (unsigned a = 0; a < na; a++)
      if (S[a][k])
        off[a] = LLVMBuildAdd(
            c->b, off[a], LLVMBuildMul(c->b, coord, cg_i64c(c, S[a][k]), ""),
            "");
  }
  cg_loop lk; /* the tile (tk >= 0) */
  if (tk >= 0) {
    LLVMValueRef k0 = LLVMBuildMul(c->b, blk, cg_i64c(c, TILE), "");
    LLVMValueRef k1 =
        cg_min_s(c, LLVMBuildAdd(c->b, k0, cg_i64c(c, TILE), ""),
                 cg_i64c(c, D[tk]));
    cg_loop_begin(c, &lk, k0, k1, 1);
    for (unsigned a = 0; a < na; a++)
      if (S[a][tk])
        off[a] = LLVMBuildAdd(
            c->b, off[a],
            LLVMBuildMul(c->b, lk.i, cg_i64c(c, S[a][tk]), ""), "");
  }
  cg_loop lj;
  cg_loop_begin(c, &lj, lo, hi, 1);
  LLVMValueRef in[MAXV];
  LLVMValueRef ptr[MAXV];
  for (unsigned a = 0; a < na; a++) {
    LLVMValueRef e = off[a];
    if (S[a][m - 1])
      e = LLVMBuildAdd(c->b, e,
                       S[a][m - 1] == 1
                           ? lj.i
                           : LLVMBuildMul(c->b, lj.i,
                                          cg_i64c(c, S[a][m - 1]), ""),
                       "");
    ptr[a] = cg_gep(c, et[a], base[a], e);
  }
  for (unsigned i = 0; i < nin; i++) {
    unsigned bytes = (unsigned)quill_type_elem_bytes(cg_storage(ins[i].elem));
    in[i] = cg_load(c, et[i + 1], ptr[i + 1], bytes);
  }
  LLVMValueRef v = fn(c, ud, in);
  if (v) {
    LLVMTypeRef vt = LLVMTypeOf(v);
    LLVMTypeKind vk = LLVMGetTypeKind(vt);
    if (vk == LLVMIntegerTypeKind) {
      cg_store_int(c, out->elem, v, ptr[0]);
    } else {
      if (vt != et[0])
        v = LLVMBuildFPCast(c->b, v, et[0], "");
      cg_store(c, v, ptr[0],
               (unsigned)quill_type_elem_bytes(cg_storage(out->elem)));
    }
  }
  cg_loop_end(c, &lj);
  if (tk >= 0)
    cg_loop_end(c, &lk);
  cg_loop_end(c, &lt);
  cg_stage_end(c);
}

static LLVMValueRef copy_fn(cg *c, void *ud, LLVMValueRef *in) {
  (void)c;
  (void)ud;
  return in[0];
}

void cg_copy(cg *c, const char *name, const cg_view *dst, const cg_view *src) {
  cg_map(c, name, dst, 1, src, copy_fn, NULL);
}

static LLVMValueRef fill_fn(cg *c, void *ud, LLVMValueRef *in) {
  (void)c;
  (void)in;
  return (LLVMValueRef)ud;
}

void cg_fill(cg *c, const char *name, const cg_view *dst, LLVMValueRef value) {
  cg_map(c, name, dst, 0, NULL, fill_fn, value);
}
