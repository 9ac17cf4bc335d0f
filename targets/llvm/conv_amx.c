/*
 * conv_amx.c - the AMX kernel behind qconv2d and qmatmul on the `amx`
 * instruction path (Sapphire Rapids and later): tdpbusd multiplies a tile
 * of TR pixels x Kc u8 inputs by a tile of Kc x 16 s8 weights into TR x 16
 * i32 accumulators, TR * 16 * Kc MACs per instruction (TR <= 16 rows,
 * Kc <= 64 bytes).
 *
 *   A tile  TR rows = TR pixels, Kc bytes of one tap's channels each:
 *           loaded straight from the input panel (panel.c) with the row
 *           stride of one pixel step (sw * s_col bytes)
 *   B tile  Kc/4 rows x 16 channels x 4 bytes (the VNNI order), pre-packed
 *           at compile time: [G][channel block][steps][NB][Kc/4][16][4]
 *   C tile  TR pixels x 16 channels, i32, NA x NB of them per block (<= 4:
 *           with NA A and NB B tiles, 8 tile registers)
 *
 * A block is NA * TR consecutive "virtual pixels" times NB * 16 channels:
 *
 *   C[a][b] = bias' of its 16 channels in every row (a stride-0 load)
 *   for s in KH * KW * (Cg / Kc) steps (fewer with row windows):
 *     A[a] = load, B[b] = load, C[a][b] += A[a] . B[b]
 *   then each C tile goes to a stack buffer and the epilogue (amx_epi.c:
 *   requantization, a fused residual qadd (fuse_add.c), store, masked
 *   for a partial channel block)
 *
 * Kc is the largest multiple of 4 up to 64 dividing Cg. Channels that do
 * not fill 4-byte groups (the first conv, C = 3) use row windows as the
 * VNNI kernel does: the KW * Cg contiguous panel bytes of a window row,
 * rounded up to 4, are one K chunk (the extra bytes meet zero weights).
 * So do few channels in 4-byte groups when that takes fewer steps (Cg =
 * 16: a 3-tap row of 48 bytes is one chunk; Cg = 32: 96 bytes are chunks
 * of 64 and 32, the last read as 64 with zero weights past the row).
 * When a window row has at most 32 bytes (stems of 3 channels), R rows of
 * the window share one chunk: the tiles read a stacked copy of the panel
 * whose pixel holds R input rows' channels (stack_emit), so a 7x7 stem
 * takes 3 steps of 63 bytes, not 7 of 24, and a 3x3 one 1 of 27.
 *
 * Virtual pixels: with strides 1 the panel is read as one long row of width
 * Wp, pixel (oh, ow) being virtual pixel oh * Wp + ow, so a tile may span
 * output rows (the Wp - OW columns between them are computed and not
 * stored); with a larger stride each output row is its own virtual row.
 * TR is 16, or the pixel count of a shorter virtual row (7 for a 7x7
 * output with stride 2; then a block is two virtual rows, an A tile each:
 * a B tile serves both). The last block of a virtual row starts at
 * count - NA * TR (overlapping the one before, whose pixels it does not
 * store again), so no load leaves the panel and the panel can be the
 * network's own haloed buffer; when it has at most TR pixels of its own
 * (197 = 6 x 32 + 5) it is one A tile row at count - TR instead. A
 * strided conv's virtual row of 17-31 pixels is one block of a 16-row
 * and a shorter A tile (28 = 16 + 12; each tile's shape is its own):
 * every block pays its tile stores and their reloads, which in the 1x1
 * convs of a K step or two cost more than the tdpbusd.
 *
 * Weights of more than 512 KiB a conv (1 MiB with more than one thread:
 * amx_chunk_outer) do not stay in L2 between a channel tile's pixel
 * chunks (tasks: channel tile outer), so the first chunk of each tile
 * would wait on L3; each task prefetches its share of the next tile's
 * weights into L2, a few lines a K step.
 *
 * Numerics are those of the VNNI kernel: u8-domain inputs (x + 128 for i8
 * storage), centered weights, bias' = bias - zpu * sum(wc) (modulo 2^32),
 * the same requantization code.
 *
 * AMX needs the kernel's permission (arch_prctl, asked once by the entry
 * function, codegen.c) and a tile configuration, which LLVM's tile passes
 * emit at the stage's entry (stages that use AMX are not inlined and
 * release the tiles on return).
 */
#include <string.h>

#include "targets/llvm/conv_amx.h"

/* Fewest pixels per tile: tdpbusd takes about as long for any row count,
 * and below 6 rows AMX is not clearly ahead of vpdpbusd. */
#define MIN_ROWS 6

enum { X_PANEL, X_PLANAR, X_NHWC }; /* where the stacked panel comes from */

/* Bytes of one tap's channels per tdpbusd: the largest multiple of 4 that
 * divides Cg and is at most 64 (0 when Cg is not a multiple of 4). */
static int64_t k_chunk(int64_t Cg) {
  if (Cg % 4)
    return 0;
  for (int64_t k = 64; k >= 4; k -= 4)
    if (Cg % k == 0)
      return k;
  return 0;
}

/* Whether a conv's tasks go pixel chunk by pixel chunk (each thread's
 * home then holds its own rows, written by it the stage before) or
 * channel tile by channel tile (each tile's weights stay in L2 across
 * its chunks). One thread: tiles outer above 512 KiB of weights
 * (cg_conv_chunk_outer). More threads: chunks outer up to 1 MiB, so that
 * a thread of ResNet-18's layer3 (576 KiB) streams all the weights but
 * reads only its rows of the input panel, not all of it, half from the
 * other core (2 threads 2.5-4% faster; one thread slower, which keeps
 * the 512 KiB). */
static bool amx_chunk_outer(const cg *c, int64_t wbytes) {
  return cg_conv_chunk_outer(wbytes) ||
         (c->opts.threads > 1 && wbytes <= (int64_t)1024 * 1024);
}

static bool plan(const cg_dot_args *a, amx_plan *p) {
  const cg_conv_geom *g = &a->g;
  memset(p, 0, sizeof *p);
  /* channels that do not fill 4-byte groups (the first conv, C = 3): the
   * KW * Cg contiguous bytes of a window row, rounded up to 4, are one K
   * chunk (the bytes past it meet zero weights) */
  int64_t rowb = g->KW * g->Cg; /* bytes of a window row */
  p->rowwin = g->G == 1 && g->dw == 1 && g->KW > 1 && g->Cg % 4 != 0 &&
              rowb <= 64;
  /* few channels in 4-byte groups (SqueezeNet's 16 and 32): a window row
   * in 64-byte chunks takes fewer tdpbusd than a tap per chunk (3x3 of
   * 16 channels: 3 steps of 48 bytes, not 9 of 16); below 16 channels a
   * tap the VNNI kernel keeps them, as before */
  int64_t kt = k_chunk(g->Cg);
  if (g->G == 1 && g->dw == 1 && g->KW > 1 && kt >= 16 && kt < 64 &&
      cg_ceil_div(rowb, 64) < g->KW * (g->Cg / kt))
    p->rowwin = true;
  /* few bytes a window row (the stem: 7 taps x 3 channels = 21): R rows
   * of the window stacked in one K chunk (63 of 64 bytes, 3 tdpbusd steps
   * for 7 rows instead of 7 of 24 bytes); the stacked panel's pixel holds
   * R input rows' channels (stack_emit) */
  p->R = 1;
  int64_t rmax = 64 / rowb < 8 ? 64 / rowb : 8; /* stack_emit's arrays */
  if (p->rowwin && g->Cg < 4 && g->dh == 1 && g->KH > 1 && rmax > 1 &&
      (g->OW - 1) * g->sw + g->KW >= 16) { /* stack_emit's 16 columns */
    int64_t ng = cg_ceil_div(g->KH, rmax);
    p->R = cg_ceil_div(g->KH, ng);
    rowb *= p->R;
  }
  p->KHk = cg_ceil_div(g->KH, p->R);
  p->Kc = !p->rowwin ? kt : rowb > 64 ? 64 : (rowb + 3) / 4 * 4;
  /* small K chunks waste the tile unit: below 16 the VNNI kernel wins */
  if (p->Kc < 16 || g->Mg < 8)
    return false;
  p->nkc = p->rowwin ? cg_ceil_div(rowb, p->Kc) : g->Cg / p->Kc;
  p->KWk = p->rowwin ? 1 : g->KW;
  p->nsteps = p->KHk * p->KWk * p->nkc;
  p->flat = g->sw == 1 && g->sh == 1;
  if (p->flat) {
    p->nvrows = 1; /* vcount: plan_pixels, once the panel is planned */
  } else {
    p->nvrows = g->OH;
    p->vcount = g->OW;
  }
  p->NB = g->Mg > 16 ? 2 : 1;
  p->TWB = 16 * (int64_t)p->NB;
  p->ntiles = cg_ceil_div(g->Mg, p->TWB);
  return true;
}

/* The virtual pixel count once the panel's width is known. */
static bool plan_pixels(const cg_conv_geom *g, amx_plan *p) {
  if (p->flat)
    p->vcount = (g->OH - 1) * p->pn.Wp + g->OW;
  if (p->vcount < MIN_ROWS)
    return false;
  p->TR = p->vcount < 16 ? p->vcount : 16;
  p->NA = p->vcount >= 2 * p->TR ? 2 : 1;
  /* a strided conv's rows of 17-31 pixels (28 in ResNet-18's layer2
   * convs /2): one block of 16 + the rest, not two of 16 overlapping
   * (half the blocks, each paying its tile stores and reloads) */
  p->split = !p->flat && p->vcount > p->TR && p->vcount < 2 * p->TR;
  if (p->split)
    p->NA = 2;
  /* a strided conv's rows of at most 16 pixels (ResNet-18's 14 and 7):
   * one A tile a row would load each B tile for one tdpbusd and leave NB
   * accumulators to cover tdpbusd's latency, so a block takes 2 rows (an
   * odd last row: the pair before it again, its first row not stored
   * twice) */
  p->rows2 = !p->flat && p->NA == 1 && p->nvrows >= 2;
  if (p->rows2)
    p->NA = 2;
  p->nrb = p->rows2 ? cg_ceil_div(p->nvrows, 2) : p->nvrows;
  p->PB = p->split ? p->vcount
          : p->rows2 ? p->TR
                     : p->TR * (int64_t)p->NA;
  p->nblk = cg_ceil_div(p->vcount, p->PB);
  int64_t blocks = p->nrb * p->nblk;
  int64_t per = cg_ceil_div(blocks, 8);
  p->chunk = per;
  p->nchunks = cg_ceil_div(blocks, per);
  return true;
}

bool cg_amx_applies(cg *c, const cg_dot_args *a) {
  amx_plan p;
  /* pixels for an A tile of MIN_ROWS rows (the panel is at least OW wide) */
  return c->tgt->isa == QUILL_LLVM_ISA_AMX && plan(a, &p) &&
         (p.flat ? a->g.OH * a->g.OW : a->g.OW) >= MIN_ROWS;
}

/* The weight of K byte k at step (i, j) (cg_dot_weight's, i a row group
 * when rows are stacked: byte k = (tap, stacked row, channel)). */
static int32_t weight(const cg_dot_args *a, const amx_plan *p, int64_t gr,
                      int64_t mg, int64_t i, int64_t j, int64_t k) {
  const cg_conv_geom *g = &a->g;
  if (p->R == 1)
    return cg_dot_weight(a, p->rowwin, gr, mg, i, j, k);
  int64_t pix = p->R * g->Cg, q = k % pix / g->Cg, row = i * p->R + q;
  if (k >= g->KW * pix || row >= g->KH)
    return 0;
  return cg_dot_weight(a, false, gr, mg, row, k / pix, k % g->Cg);
}

/* B tiles, in the order the kernel reads them. */
static LLVMValueRef pack_weights(cg *c, const cg_dot_args *a,
                                 const amx_plan *p) {
  const cg_conv_geom *g = &a->g;
  int64_t krow = p->Kc / 4;
  size_t n = (size_t)(g->G * p->ntiles * p->nsteps * p->NB * krow * 64);
  unsigned char *buf = quill_calloc(c->ctx, n, 1);
  if (!buf) {
    c->status = QUILL_ERR_NOMEM;
    return NULL;
  }
  size_t e = 0;
  for (int64_t gr = 0; gr < g->G; gr++)
    for (int64_t t = 0; t < p->ntiles; t++)
      for (int64_t i = 0; i < p->KHk; i++)
        for (int64_t j0 = 0; j0 < p->KWk; j0++)
          for (int64_t kc = 0; kc < p->nkc; kc++)
            for (unsigned b = 0; b < p->NB; b++)
              for (int64_t r = 0; r < krow; r++)
                for (int64_t col = 0; col < 16; col++)
                  for (int64_t q = 0; q < 4; q++, e++)
                    buf[e] = (unsigned char)(int8_t)weight(
                        a, p, gr, t * p->TWB + b * 16 + col, i, j0,
                        kc * p->Kc + r * 4 + q);
  LLVMValueRef gl = cg_const_global(c, "wamx", buf, n);
  quill_free(c->ctx, buf, n);
  return gl;
}

/* A's offset (bytes) at each K step: the tap and the channel chunk. */
static LLVMValueRef step_offsets(cg *c, const cg_conv_geom *g,
                                 const amx_plan *p) {
  size_t n = (size_t)p->nsteps;
  int64_t *off = quill_calloc(c->ctx, n, sizeof *off);
  if (!off) {
    c->status = QUILL_ERR_NOMEM;
    return NULL;
  }
  size_t e = 0;
  for (int64_t i = 0; i < p->KHk; i++)
    for (int64_t j = 0; j < p->KWk; j++)
      for (int64_t kc = 0; kc < p->nkc; kc++)
        off[e++] = i * p->R * g->dh * p->pn.s_row + j * g->dw * p->pn.s_col +
                   kc * p->Kc;
  LLVMValueRef gl = cg_const_global(c, "amxoff", off, n * sizeof *off);
  quill_free(c->ctx, off, n * sizeof *off);
  return gl;
}

static LLVMValueRef tile_load(cg *c, int64_t rows, int64_t colsb,
                              LLVMValueRef ptr, int64_t stride) {
  return cg_intrinsic(c, "llvm.x86.tileloadd64.internal", NULL, 0,
                      (LLVMValueRef[]){cg_i16c(c, rows), cg_i16c(c, colsb), ptr,
                                       cg_i64c(c, stride)},
                      4);
}

/* One block: NA x NB accumulator tiles over every K step, then stored. */
static void block(cg *c, const amx_block *k, LLVMValueRef vr, LLVMValueRef f0,
                  LLVMValueRef from, unsigned NA) {
  const cg_dot_args *a = k->a;
  const amx_plan *p = k->p;
  const cg_conv_geom *g = &a->g;
  const cg_panel *pn = &p->pn;
  unsigned NB = p->NB, nc = NA * NB;
  int64_t krow = p->Kc / 4, bbytes = krow * 64;
  int64_t astride = g->sw * pn->s_col;
  /* panel offset of the block's first pixel */
  LLVMValueRef base = LLVMBuildMul(c->b, k->n, cg_i64c(c, pn->s_n), "");
  if (!p->flat)
    base = LLVMBuildAdd(
        c->b, base, LLVMBuildMul(c->b, vr, cg_i64c(c, g->sh * pn->s_row), ""),
        "");
  base = LLVMBuildAdd(c->b, base,
                      LLVMBuildMul(c->b, f0, cg_i64c(c, astride), ""), "");
  LLVMValueRef zero[4], phis[4], cur[4];
  /* the accumulators start at bias' (a stride-0 load repeats its row) */
  for (unsigned t = 0; t < nc; t++)
    zero[t] = tile_load(
        c, tile_rows(p, t / NB), 64,
        cg_gep(c, c->t_i32, k->biasp,
               LLVMBuildAdd(c->b, k->chbase, cg_i64c(c, 16 * (t % NB)), "")),
        0);
  LLVMValueRef fn = c->st->fn;
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(c->b);
  LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(c->lc, fn, "amx.k");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(c->lc, fn, "amx.body");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(c->lc, fn, "amx.done");
  LLVMBuildBr(c->b, head);
  LLVMPositionBuilderAtEnd(c->b, head);
  LLVMTypeRef amx = LLVMX86AMXTypeInContext(c->lc);
  LLVMValueRef s = LLVMBuildPhi(c->b, c->t_i64, "s");
  LLVMAddIncoming(s, (LLVMValueRef[]){cg_i64c(c, 0)}, &pre, 1);
  for (unsigned t = 0; t < nc; t++) {
    phis[t] = LLVMBuildPhi(c->b, amx, "acc");
    LLVMAddIncoming(phis[t], &zero[t], &pre, 1);
  }
  LLVMBuildCondBr(c->b,
                  LLVMBuildICmp(c->b, LLVMIntSLT, s, cg_i64c(c, p->nsteps), ""),
                  body, done);
  LLVMPositionBuilderAtEnd(c->b, body);
  LLVMValueRef so = cg_load(c, c->t_i64, cg_gep(c, c->t_i64, k->offs, s), 8);
  LLVMValueRef ap = cg_gep8(c, k->panel, LLVMBuildAdd(c->b, base, so, ""));
  LLVMValueRef wp =
      cg_gep8(c, k->wtile, LLVMBuildMul(c->b, s, cg_i64c(c, NB * bbytes), ""));
  LLVMValueRef A[2], B[2];
  for (unsigned ai = 0; ai < NA; ai++)
    A[ai] = tile_load(c, tile_rows(p, ai), p->Kc,
                      cg_gep8(c, ap,
                              cg_i64c(c, p->rows2 ? ai * g->sh * pn->s_row
                                                  : p->TR * ai * astride)),
                      astride);
  for (unsigned b = 0; b < NB; b++)
    B[b] = tile_load(c, krow, 64, cg_gep8(c, wp, cg_i64c(c, b * bbytes)), 64);
  if (k->pf) {
    LLVMValueRef pl = cg_gep8(
        c, k->pf, LLVMBuildMul(c->b, s, cg_i64c(c, p->pfl * 64), ""));
    for (int64_t l = 0; l < p->pfl; l++)
      cg_prefetch_l2(c, cg_gep8(c, pl, cg_i64c(c, l * 64)));
  }
  for (unsigned ai = 0; ai < NA; ai++)
    for (unsigned b = 0; b < NB; b++) {
      unsigned t = ai * NB + b;
      cur[t] = cg_intrinsic(c, "llvm.x86.tdpbusd.internal", NULL, 0,
                            (LLVMValueRef[]){cg_i16c(c, tile_rows(p, ai)),
                                             cg_i16c(c, 64), cg_i16c(c, p->Kc),
                                             phis[t], A[ai],
                                             B[b]},
                            6);
    }
  LLVMValueRef s1 = LLVMBuildAdd(c->b, s, cg_i64c(c, 1), "");
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(c->b);
  LLVMBuildBr(c->b, head);
  LLVMAddIncoming(s, &s1, &latch, 1);
  for (unsigned t = 0; t < nc; t++)
    LLVMAddIncoming(phis[t], &cur[t], &latch, 1);
  LLVMPositionBuilderAtEnd(c->b, done);
  for (unsigned t = 0; t < nc; t++)
    cg_intrinsic(c, "llvm.x86.tilestored64.internal", NULL, 0,
                 (LLVMValueRef[]){cg_i16c(c, tile_rows(p, t / NB)),
                                  cg_i16c(c, 64),
                                  cg_gep8(c, k->cbuf, cg_i64c(c, t * 1024)),
                                  cg_i64c(c, 64), phis[t]},
                 5);
  cg_amx_epilogue(c, k, vr, f0, from, NA);
}

/* Stacked rows: the tiles read a panel whose pixel (r, col) holds the R
 * rows r .. r + R - 1 of the usual panel's column col, so that a window
 * row of R stacked pixels (KW taps x R rows x Cg bytes) is one K chunk.
 * Rows past the usual panel repeat its last (they meet zero weights).
 * 16 columns a step: R rows' bytes loaded, one shuffle a 64-byte piece.
 * When x's rows are contiguous (a stem's NCHW input) they are read from x
 * itself (masked at the pads, Cg loads of 16 columns a row), else from the
 * usual panel (p->src, its own stage). */
static void stack_plan(cg *c, const cg_conv_geom *g, const cg_view *x,
                       amx_plan *p) {
  p->src = p->pn;
  cg_panel *d = &p->pn;
  /* (with fromx, the usual panel's workspace stays unused) */
  p->fromx = X_PANEL;
  if (quill_type_elem_bytes(cg_storage(x->elem)) == 1 && g->G == 1)
    p->fromx = x->strides[3] == 1                                ? X_PLANAR
               : x->strides[1] == 1 && x->strides[3] == g->Cg ? X_NHWC
                                                                 : X_PANEL;
  d->s_col = p->R * p->src.s_col;
  d->s_row = d->Wp * d->s_col;
  d->s_n = d->Hp * d->s_row;
  /* + 64: the last pixel's K chunk reads past it */
  d->slot = cg_workspace(c, (size_t)(g->N * d->s_n) + 64);
}

/* Row q's 16 columns from w0 read from x (the panel's values, u8
 * domain, zpu at the pads): X_NHWC one masked load of 16 pixels (pixel-
 * major, as a panel row), X_PLANAR Cg of 16 bytes side by side (channel-
 * major). */
static LLVMValueRef stack_row_x(cg *c, const cg_conv_geom *g,
                                const cg_view *x, const amx_plan *p,
                                LLVMValueRef xb, LLVMValueRef n,
                                LLVMValueRef ih, LLVMValueRef w0) {
  unsigned Cg = (unsigned)g->Cg, nl = p->fromx == X_NHWC ? 16 * Cg : 16;
  LLVMTypeRef v16 = LLVMVectorType(c->t_i8, nl);
  LLVMValueRef lanes[64], m[64];
  for (unsigned l = 0; l < nl; l++) /* a lane's column from w0 */
    lanes[l] = cg_i32c(c, p->fromx == X_NHWC ? l / Cg : l);
  LLVMValueRef iw0 = LLVMBuildSub(c->b, w0, cg_i64c(c, g->pl), "");
  LLVMValueRef iw0v =
      cg_splat(c, LLVMBuildTrunc(c->b, iw0, c->t_i32, ""), nl);
  LLVMValueRef iwv =
      LLVMBuildAdd(c->b, iw0v, LLVMConstVector(lanes, nl), "");
  LLVMValueRef rowok =
      LLVMBuildICmp(c->b, LLVMIntULT, ih, cg_i64c(c, g->H), "");
  LLVMValueRef mask = LLVMBuildAnd(
      c->b,
      LLVMBuildICmp(c->b, LLVMIntULT, iwv, cg_splat(c, cg_i32c(c, g->W), nl),
                    ""),
      cg_splat(c, rowok, nl), "");
  bool flip = quill_type_is_signed(cg_storage(x->elem));
  LLVMValueRef pad = cg_splat(c, cg_i8c(c, p->pn.zpu), nl);
  LLVMValueRef base = LLVMBuildAdd(
      c->b,
      LLVMBuildAdd(c->b, LLVMBuildMul(c->b, n, cg_i64c(c, x->strides[0]), ""),
                   LLVMBuildMul(c->b, ih, cg_i64c(c, x->strides[2]), ""), ""),
      LLVMBuildMul(c->b, iw0, cg_i64c(c, x->strides[3]), ""), "");
  LLVMValueRef all = NULL;
  for (unsigned ch = 0; ch < (p->fromx == X_NHWC ? 1 : Cg); ch++) {
    LLVMValueRef ptr = cg_gep8(
        c, xb,
        LLVMBuildAdd(c->b, base, cg_i64c(c, ch * x->strides[1]), ""));
    LLVMTypeRef olt[2] = {v16, c->t_ptr};
    LLVMValueRef v = cg_intrinsic(
        c, "llvm.masked.load", olt, 2,
        (LLVMValueRef[]){ptr, cg_i32c(c, 1), mask, LLVMGetPoison(v16)}, 4);
    if (flip)
      v = LLVMBuildXor(c->b, v, cg_splat(c, cg_i8c(c, 0x80), nl), "");
    v = LLVMBuildSelect(c->b, mask, v, pad, "");
    if (p->fromx == X_NHWC)
      return v;
    /* appended: all holds channels 0 .. ch - 1 */
    unsigned len = 16 * Cg;
    for (unsigned e = 0; e < len; e++)
      m[e] = e < 16 ? cg_i32c(c, e) : LLVMGetUndef(c->t_i32);
    v = LLVMBuildShuffleVector(c->b, v, LLVMGetPoison(v16),
                               LLVMConstVector(m, len), "");
    if (all) {
      for (unsigned e = 0; e < len; e++)
        m[e] = e < 16 * ch         ? cg_i32c(c, e)
               : e < 16 * (ch + 1) ? cg_i32c(c, len + e - 16 * ch)
                                   : LLVMGetUndef(c->t_i32);
      v = LLVMBuildShuffleVector(c->b, all, v, LLVMConstVector(m, len), "");
    }
    all = v;
  }
  return all;
}

static void stack_emit(cg *c, const cg_conv_geom *g, const cg_view *x,
                       const amx_plan *p) {
  const cg_panel *s = &p->src, *d = &p->pn;
  int64_t R = p->R, pb = s->s_col, n16 = 16 * pb, T = R * n16;
  LLVMTypeRef vt = LLVMVectorType(c->t_i8, (unsigned)n16);
  LLVMValueRef m[64], sel[64];
  /* one K step (a 3x3 stem): the tiles read rows oh * sh only */
  int64_t rstep = p->KHk == 1 ? g->sh : 1, nr = cg_ceil_div(d->Hp, rstep);
  cg_stage_begin(c, "stack", g->N * nr);
  LLVMValueRef sb = p->fromx ? cg_view_base(c, x) : cg_slot_ptr(c, s->slot);
  LLVMValueRef db = cg_slot_ptr(c, d->slot);
  cg_loop lt, lw;
  cg_loop_begin(c, &lt, c->t0, c->t1, 1);
  LLVMValueRef n = LLVMBuildUDiv(c->b, lt.i, cg_i64c(c, nr), "");
  LLVMValueRef r =
      LLVMBuildMul(c->b, LLVMBuildURem(c->b, lt.i, cg_i64c(c, nr), ""),
                   cg_i64c(c, rstep), "");
  LLVMValueRef srow[8];
  for (int64_t q = 0; q < R; q++)
    srow[q] = LLVMBuildAdd(
        c->b, LLVMBuildMul(c->b, n, cg_i64c(c, s->s_n), ""),
        LLVMBuildMul(c->b,
                     cg_min_s(c, LLVMBuildAdd(c->b, r, cg_i64c(c, q), ""),
                              cg_i64c(c, s->Hp - 1)),
                     cg_i64c(c, s->s_row), ""),
        "");
  LLVMValueRef drow = LLVMBuildAdd(
      c->b, LLVMBuildMul(c->b, n, cg_i64c(c, d->s_n), ""),
      LLVMBuildMul(c->b, r, cg_i64c(c, d->s_row), ""), "");
  cg_for(c, &lw, 0, cg_ceil_div(d->Wp, 16), 1);
  /* the last step overlaps the one before (Wp >= 16: plan) */
  LLVMValueRef w0 = cg_min_s(c, LLVMBuildMul(c->b, lw.i, cg_i64c(c, 16), ""),
                             cg_i64c(c, d->Wp - 16));
  LLVMValueRef v[8];
  for (int64_t q = 0; q < R; q++) {
    LLVMValueRef ih = LLVMBuildSub(
        c->b, LLVMBuildAdd(c->b, r, cg_i64c(c, q), ""), cg_i64c(c, g->pt), "");
    LLVMValueRef col = LLVMBuildMul(c->b, w0, cg_i64c(c, pb), "");
    LLVMValueRef sp = cg_gep8(c, sb, LLVMBuildAdd(c->b, srow[q], col, ""));
    v[q] = p->fromx ? stack_row_x(c, g, x, p, sb, n, ih, w0)
                    : cg_load(c, vt, sp, 1);
  }
  LLVMValueRef dst = cg_gep8(
      c, db,
      LLVMBuildAdd(c->b, drow, LLVMBuildMul(c->b, w0, cg_i64c(c, R * pb), ""),
                   ""));
  /* 64-byte pieces of the R * 16 stacked pixels' bytes, e = (pixel, row q,
   * byte): a one-source shuffle of each row's 16 pixels (vpermb), blended */
  for (int64_t o = 0; o < T; o += 64) {
    int64_t len = T - o < 64 ? T - o : 64;
    LLVMValueRef piece = NULL;
    for (int64_t q = 0; q < R; q++) {
      for (int64_t e = 0; e < len; e++) {
        int64_t k = o + e, px = k / (R * pb), ch = k % pb;
        /* the row's bytes: pixel-major (a panel) or channel-major (x) */
        int64_t from = p->fromx == X_PLANAR ? ch * 16 + px : px * pb + ch;
        m[e] = k / pb % R == q ? cg_i32c(c, from) : LLVMGetUndef(c->t_i32);
        sel[e] = LLVMConstInt(c->t_i1, k / pb % R == q, 0);
      }
      LLVMValueRef sq = LLVMBuildShuffleVector(
          c->b, v[q], LLVMGetPoison(vt), LLVMConstVector(m, (unsigned)len), "");
      piece = piece ? LLVMBuildSelect(c->b,
                                      LLVMConstVector(sel, (unsigned)len), sq,
                                      piece, "")
                    : sq;
    }
    cg_store(c, piece, cg_gep8(c, dst, cg_i64c(c, o)), 1);
  }
  cg_loop_end(c, &lw);
  cg_loop_end(c, &lt);
  cg_stage_end(c);
}

static void emit_compute(cg *c, const cg_dot_args *a, const amx_plan *p,
                         LLVMValueRef wg, LLVMValueRef bg, LLVMValueRef og) {
  const cg_conv_geom *g = &a->g;
  int64_t ntasks = g->N * g->G * p->ntiles * p->nchunks;
  cg_stage_begin(c, "amx", ntasks);
  cg_stage_use_amx(c);
  /* tdpbusd at about a quarter of its peak, and an epilogue that
   * requantizes 16 x 16 tiles through memory: MobileNetV2's 1x1 convs with
   * 16-24 input channels take 10x what their MACs alone predict */
  cg_conv_work(c, g, 1000.0, 0.2);
  amx_block k;
  memset(&k, 0, sizeof k);
  k.a = a;
  k.p = p;
  k.yb = cg_view_base(c, &a->y);
  if (a->add)
    k.ob = cg_view_base(c, &a->add->other);
  k.biasp = bg;
  k.offs = og;
  k.cbuf = cg_var(c, LLVMArrayType2(c->t_i32, 4 * 256), "cbuf");
  LLVMSetAlignment(k.cbuf, 64);
  LLVMValueRef panel = cg_panel_base(c, &p->pn, &a->x);
  cg_loop lt;
  cg_loop_begin(c, &lt, c->t0, c->t1, 1);
  int64_t tile_bytes = p->tile_bytes;
  LLVMValueRef chunk, tile, gr;
  cg_conv_task(c, lt.i, g->G, p->ntiles, p->nchunks, p->outer, &k.n, &gr,
               &tile, &chunk);
  k.wtile = cg_gep8(
      c, wg,
      LLVMBuildMul(
          c->b,
          LLVMBuildAdd(c->b, LLVMBuildMul(c->b, gr, cg_i64c(c, p->ntiles), ""),
                       tile, ""),
          cg_i64c(c, tile_bytes), ""));
  LLVMValueRef tch = LLVMBuildMul(c->b, tile, cg_i64c(c, p->TWB), "");
  k.chbase = LLVMBuildAdd(c->b, LLVMBuildMul(c->b, gr, cg_i64c(c, g->Mg), ""),
                          tch, "");
  k.valid = LLVMBuildSub(c->b, cg_i64c(c, g->Mg), tch, "");
  k.panel =
      cg_gep8(c, panel, LLVMBuildMul(c->b, gr, cg_i64c(c, p->pn.Cgp), ""));
  LLVMValueRef lo = LLVMBuildMul(c->b, chunk, cg_i64c(c, p->chunk), "");
  LLVMValueRef hi =
      cg_min_s(c, LLVMBuildAdd(c->b, lo, cg_i64c(c, p->chunk), ""),
               cg_i64c(c, p->nrb * p->nblk));
  LLVMValueRef pf0 = NULL;
  if (p->pfl) {
    /* this task's part of the next tile's weights (the last tile's own) */
    LLVMValueRef nt = cg_min_s(
        c,
        LLVMBuildAdd(c->b,
                     LLVMBuildMul(c->b, gr, cg_i64c(c, p->ntiles), ""),
                     LLVMBuildAdd(c->b, tile, cg_i64c(c, 1), ""), ""),
        cg_i64c(c, g->G * p->ntiles - 1));
    pf0 = cg_gep8(
        c, wg,
        LLVMBuildAdd(c->b, LLVMBuildMul(c->b, nt, cg_i64c(c, tile_bytes), ""),
                     LLVMBuildMul(c->b, chunk,
                                  cg_i64c(c, p->chunk * p->nsteps * p->pfl *
                                                 64),
                                  ""),
                     ""));
  }
  cg_loop lb;
  cg_loop_begin(c, &lb, lo, hi, 1);
  if (pf0)
    k.pf = cg_gep8(c, pf0,
                   LLVMBuildMul(c->b, LLVMBuildSub(c->b, lb.i, lo, ""),
                                cg_i64c(c, p->nsteps * p->pfl * 64), ""));
  LLVMValueRef vr = LLVMBuildUDiv(c->b, lb.i, cg_i64c(c, p->nblk), "");
  LLVMValueRef from =
      LLVMBuildMul(c->b, LLVMBuildURem(c->b, lb.i, cg_i64c(c, p->nblk), ""),
                   cg_i64c(c, p->PB), "");
  if (p->rows2) {
    /* rows 2j and 2j + 1; an odd count's last pair is the rows before the
     * last, its first row (the pair before's) not stored again */
    LLVMValueRef r0 = cg_min_s(c, LLVMBuildMul(c->b, vr, cg_i64c(c, 2), ""),
                               cg_i64c(c, p->nvrows - 2));
    LLVMValueRef again = LLVMBuildICmp(
        c->b, LLVMIntSLT, r0, LLVMBuildMul(c->b, vr, cg_i64c(c, 2), ""), "");
    block(c, &k, r0, cg_i64c(c, 0),
          LLVMBuildSelect(c->b, again, cg_i64c(c, p->vcount), cg_i64c(c, 0),
                          ""),
          2);
  } else if (p->NA > 1 && p->vcount - (p->nblk - 1) * p->PB <= p->TR) {
    /* the last block of a virtual row has at most TR new pixels (ViT's
     * 197 rows: 6 x 32 + 5): one A tile row, not NA overlapping ones */
    cg_if fl;
    cg_if_begin(c, &fl,
                LLVMBuildICmp(c->b, LLVMIntSGE, from,
                              cg_i64c(c, p->vcount - p->TR), ""));
    block(c, &k, vr, cg_i64c(c, p->vcount - p->TR), from, 1);
    cg_if_else(c, &fl);
    block(c, &k, vr, from, from, p->NA);
    cg_if_end(c, &fl);
  } else {
    LLVMValueRef f0 = cg_min_s(c, from, cg_i64c(c, p->vcount - p->PB));
    block(c, &k, vr, f0, from, p->NA);
  }
  cg_loop_end(c, &lb);
  cg_loop_end(c, &lt);
  cg_stage_end(c);
}

quill_status cg_amx_emit(cg *c, const cg_dot_args *a) {
  amx_plan p;
  if (!plan(a, &p))
    return QUILL_ERR_INTERNAL;
  const cg_conv_geom *g = &a->g;
  /* row windows read past a row (up to 3 bytes, or the rest of a 64-byte
   * chunk): never in place, the copy has 64 bytes to spare */
  cg_panel_plan(c, g, &a->x, p.rowwin ? NULL : a->xv, true, g->Cg, a->zpx,
                &p.pn, p.rowwin);
  if (p.R > 1)
    stack_plan(c, g, &a->x, &p);
  if (!plan_pixels(g, &p))
    return QUILL_ERR_INTERNAL;
  if (p.R == 1 || !p.fromx)
    cg_panel_emit(c, g, &a->x, p.R > 1 ? &p.src : &p.pn);
  if (p.R > 1)
    stack_emit(c, g, &a->x, &p);
  /* weights too large to stay in L2 from one pixel chunk to the next
   * (ResNet-18's layer3 and layer4 on one thread, 576 KiB - 2.3 MiB a
   * conv; layer4 on more) go channel tile by channel tile and come from
   * L3 once, in the first block of their tile; each task prefetches its
   * part of the next tile's into L2 (prefetcht1), pfl lines a K step, so
   * that the tile unit does not wait on them (emit_compute) */
  p.tile_bytes = p.nsteps * p.NB * (p.Kc / 4) * 64;
  p.outer = amx_chunk_outer(c, g->G * p.ntiles * p.tile_bytes);
  if (!p.outer && g->G * p.ntiles > 1) {
    int64_t part = cg_ceil_div(cg_ceil_div(p.tile_bytes, 64), p.nchunks);
    p.pfl = cg_ceil_div(part, p.chunk * p.nsteps);
  }
  a->rq->pad = (size_t)p.TWB + 16;
  cg_requant_bound(a->rq, a->wc, a->bias, g->M, g->Cg * g->KH * g->KW);
  LLVMValueRef wg = pack_weights(c, a, &p);
  LLVMValueRef bg = cg_dot_bias(c, a, p.pn.zpu, p.TWB);
  LLVMValueRef og = step_offsets(c, g, &p);
  if (c->status)
    return c->status;
  emit_compute(c, a, &p, wg, bg, og);
  return c->status;
}
