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
/* Estimated single-thread time (cg_stage_work, which decides whether a
 * stage goes to the pool): ns per element of an arithmetic map; ns per
 * byte of a copy or fill whose inner loop is contiguous in every view
 * (vector loads and stores: the encoder's 16-64K-byte slices and reshapes
 * took 0.4-0.6 us, about 0.03 ns per byte, where 0.5 ns per element sent
 * them to the pool at 8-32 us); ns per element of any other copy
 * (strided or tiled). */
#define NS_MAP 0.5
#define NS_COPY_CONTIG_BYTE 0.03
#define NS_COPY_STRIDED 0.25

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

static LLVMValueRef copy_fn(cg *c, void *ud, LLVMValueRef *in);
static LLVMValueRef fill_fn(cg *c, void *ud, LLVMValueRef *in);

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

typedef struct map_ctx {
  cg *c;
  const cg_view *out, *ins;
  unsigned nin, na, m;
  cg_map_fn fn;
  void *ud;
  const LLVMValueRef *base;
  const LLVMTypeRef *et;
  const int64_t *D;
  int64_t (*S)[QUILL_MAX_RANK + 1];
} map_ctx;

/* out[p0] = fn(in[p1], ...), converted to the output's element type. */
static void map_store(map_ctx *k, LLVMValueRef *in, LLVMValueRef optr) {
  cg *c = k->c;
  LLVMValueRef v = k->fn(c, k->ud, in);
  if (!v)
    return;
  LLVMTypeRef vt = LLVMTypeOf(v);
  if (LLVMGetTypeKind(vt) == LLVMIntegerTypeKind) {
    cg_store_int(c, k->out->elem, v, optr);
  } else {
    if (vt != k->et[0])
      v = LLVMBuildFPCast(c->b, v, k->et[0], "");
    cg_store(c, v, optr,
             (unsigned)quill_type_elem_bytes(cg_storage(k->out->elem)));
  }
}

/* The element loops: k over [k0, k1) of dim tk (when tk >= 0), then the
 * inner dim over [jlo, jhi), from the views' offsets `off`. */
static void map_loops(map_ctx *k, const LLVMValueRef *off0, int tk,
                      LLVMValueRef k0, LLVMValueRef k1, LLVMValueRef jlo,
                      LLVMValueRef jhi) {
  cg *c = k->c;
  unsigned na = k->na, m = k->m;
  LLVMValueRef off[MAXV];
  memcpy(off, off0, na * sizeof *off);
  cg_loop lk;
  if (tk >= 0) {
    cg_loop_begin(c, &lk, k0, k1, 1);
    for (unsigned a = 0; a < na; a++)
      if (k->S[a][tk])
        off[a] = LLVMBuildAdd(
            c->b, off[a],
            LLVMBuildMul(c->b, lk.i, cg_i64c(c, k->S[a][tk]), ""), "");
  }
  cg_loop lj;
  cg_loop_begin(c, &lj, jlo, jhi, 1);
  LLVMValueRef in[MAXV], ptr[MAXV];
  for (unsigned a = 0; a < na; a++) {
    LLVMValueRef e = off[a];
    int64_t st = k->S[a][m - 1];
    if (st)
      e = LLVMBuildAdd(c->b, e,
                       st == 1 ? lj.i
                               : LLVMBuildMul(c->b, lj.i, cg_i64c(c, st), ""),
                       "");
    ptr[a] = cg_gep(c, k->et[a], k->base[a], e);
  }
  for (unsigned i = 0; i < k->nin; i++) {
    unsigned bytes = (unsigned)quill_type_elem_bytes(cg_storage(k->ins[i].elem));
    in[i] = cg_load(c, k->et[i + 1], ptr[i + 1], bytes);
  }
  map_store(k, in, ptr[0]);
  cg_loop_end(c, &lj);
  if (tk >= 0)
    cg_loop_end(c, &lk);
}

/* Can full tiles of a transposing map go through registers? One input,
 * contiguous along tk, the output contiguous along the inner dim, byte-
 * addressable elements of at most 4 bytes on both sides. */
static bool transpose_tiles(const map_ctx *k, int tk) {
  if (k->nin != 1 || k->S[1][tk] != 1 || k->S[0][k->m - 1] != 1)
    return false;
  for (unsigned a = 0; a < 2; a++) {
    const cg_view *v = a ? &k->ins[0] : k->out;
    quill_type *st = cg_storage(v->elem);
    size_t b = quill_type_elem_bytes(st);
    quill_type_kind kd = quill_type_kind_of(st);
    if (b < 1 || b > 4 || kd == QUILL_TYPE_I4 || kd == QUILL_TYPE_U4 ||
        kd == QUILL_TYPE_BOOL || LLVMGetTypeKind(k->et[a]) ==
                                     LLVMPointerTypeKind)
      return false;
  }
  return true;
}

/* One TILE x TILE tile at (k0, j0): TILE vector loads of the input along
 * tk, a transpose by four rounds of two-vector shuffles (round b swaps the
 * off-diagonal b x b blocks of every 2b x 2b block), the rows stored to a
 * stack buffer, then fn element by element over it with both sides
 * contiguous (LLVM vectorizes that loop). */
static void tile_through_registers(map_ctx *k, const LLVMValueRef *off,
                                   int tk, LLVMValueRef k0, LLVMValueRef j0) {
  cg *c = k->c;
  unsigned m = k->m;
  LLVMTypeRef it = k->et[1], vt = LLVMVectorType(it, TILE);
  unsigned ib = (unsigned)quill_type_elem_bytes(cg_storage(k->ins[0].elem));
  LLVMValueRef r[TILE];
  LLVMValueRef ibase = LLVMBuildAdd(
      c->b, off[1],
      LLVMBuildAdd(c->b, k0,
                   LLVMBuildMul(c->b, j0, cg_i64c(c, k->S[1][m - 1]), ""), ""),
      "");
  for (unsigned q = 0; q < TILE; q++)
    r[q] = cg_load(
        c, vt,
        cg_gep(c, it, k->base[1],
               LLVMBuildAdd(c->b, ibase, cg_i64c(c, (int64_t)q * k->S[1][m - 1]),
                            "")),
        ib);
  for (unsigned b = TILE / 2; b >= 1; b /= 2) {
    LLVMValueRef lo[TILE], hi[TILE];
    for (unsigned j = 0; j < TILE; j++) {
      lo[j] = cg_i32c(c, (j & b) ? TILE + j - b : j);
      hi[j] = cg_i32c(c, (j & b) ? TILE + j : j + b);
    }
    LLVMValueRef ml = LLVMConstVector(lo, TILE), mh = LLVMConstVector(hi, TILE);
    for (unsigned i = 0; i < TILE; i++) {
      if (i & b)
        continue;
      LLVMValueRef x = r[i], y = r[i + b];
      r[i] = LLVMBuildShuffleVector(c->b, x, y, ml, "");
      r[i + b] = LLVMBuildShuffleVector(c->b, x, y, mh, "");
    }
  }
  /* r[q] now holds input elements (k0 + q, j0 .. j0 + TILE) */
  LLVMValueRef buf = cg_var(c, LLVMArrayType2(it, TILE * TILE), "tile");
  LLVMSetAlignment(buf, 64);
  for (unsigned q = 0; q < TILE; q++)
    cg_store(c, r[q], cg_gep(c, it, buf, cg_i64c(c, (int64_t)q * TILE)), ib);
  cg_loop lq, lj;
  cg_for(c, &lq, 0, TILE, 1);
  LLVMValueRef orow = LLVMBuildAdd(
      c->b, off[0],
      LLVMBuildAdd(c->b,
                   LLVMBuildMul(c->b, LLVMBuildAdd(c->b, k0, lq.i, ""),
                                cg_i64c(c, k->S[0][tk]), ""),
                   j0, ""),
      "");
  LLVMValueRef brow = LLVMBuildMul(c->b, lq.i, cg_i64c(c, TILE), "");
  cg_for(c, &lj, 0, TILE, 1);
  LLVMValueRef in = cg_load(
      c, it, cg_gep(c, it, buf, LLVMBuildAdd(c->b, brow, lj.i, "")), ib);
  map_store(k, &in,
            cg_gep(c, k->et[0], k->base[0], LLVMBuildAdd(c->b, orow, lj.i, "")));
  cg_loop_end_vectorized(c, &lj, TILE);
  cg_loop_end(c, &lq);
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
  /* this map's own elements: a halo or a concat part is a small share of
   * the op's result that cg_stage_begin estimates from */
  double elems = 1;
  for (unsigned k = 0; k < m; k++)
    elems *= (double)D[k];
  double per = NS_MAP;
  if (fn == copy_fn || fn == fill_fn) {
    bool contig = tk < 0;
    for (unsigned a = 0; a < na; a++)
      contig = contig && (S[a][m - 1] == 1 || (a > 0 && S[a][m - 1] == 0));
    per = contig ? NS_COPY_CONTIG_BYTE *
                       (double)quill_type_elem_bytes(cg_storage(out->elem))
                 : NS_COPY_STRIDED;
  }
  cg_stage_work(c, per * elems);
  LLVMValueRef base[MAXV];
  LLVMTypeRef et[MAXV];
  for (unsigned a = 0; a < na; a++) {
    base[a] = cg_view_base(c, vw[a]);
    et[a] = cg_elem_type(c, vw[a]->elem);
  }
  map_ctx mc = {c, out, ins, nin, na, m, fn, ud, base, et, D, S};
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
  if (tk < 0) {
    map_loops(&mc, off, -1, NULL, NULL, lo, hi);
  } else {
    LLVMValueRef k0 = LLVMBuildMul(c->b, blk, cg_i64c(c, TILE), "");
    LLVMValueRef k1 =
        cg_min_s(c, LLVMBuildAdd(c->b, k0, cg_i64c(c, TILE), ""),
                 cg_i64c(c, D[tk]));
    if (transpose_tiles(&mc, tk)) {
      /* full TILE x TILE tiles through registers, the rest element-wise */
      LLVMValueRef nfull = LLVMBuildMul(
          c->b,
          LLVMBuildUDiv(c->b, LLVMBuildSub(c->b, hi, lo, ""),
                        cg_i64c(c, TILE), ""),
          cg_i64c(c, TILE), "");
      LLVMValueRef jmid = LLVMBuildAdd(c->b, lo, nfull, "");
      cg_if fk;
      cg_if_begin(c, &fk, LLVMBuildICmp(c->b, LLVMIntEQ,
                                        LLVMBuildSub(c->b, k1, k0, ""),
                                        cg_i64c(c, TILE), ""));
      cg_loop lb;
      cg_loop_begin(c, &lb, lo, jmid, TILE);
      tile_through_registers(&mc, off, tk, k0, lb.i);
      cg_loop_end(c, &lb);
      map_loops(&mc, off, tk, k0, k1, jmid, hi);
      cg_if_else(c, &fk);
      map_loops(&mc, off, tk, k0, k1, lo, hi);
      cg_if_end(c, &fk);
    } else {
      map_loops(&mc, off, tk, k0, k1, lo, hi);
    }
  }
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
