/*
 * conv_cmap.c - a depthwise 1x1 qconv2d with 8-bit input and result (a
 * BatchNorm folded to a scale and a shift per channel: DenseNet's BN-ReLU
 * before every 1x1 conv) as a map of one byte to one byte per channel,
 * fitted at compile time to integer arithmetic. The general depthwise
 * kernels take an i32 sum, two conversions and a multiply per vector of 16
 * to requantize; the two forms here take two multiply-like instructions
 * per 16 (narrow) or per 32 (wide) values.
 *
 *   wide (AVX-512BW), 64 channels a step, u16 lanes:
 *     u' = u ^ flip[c]                 (255 - u where the slope is < 0)
 *     h  = vpmulhuw(u' << 8, M[c])     = floor(u' M / 256), M < 2^16
 *     v  = (h +sat KP[c]) -sat KN[c]   (K = KP - KN, saturating at 0, 2^16)
 *     y  = packus(v >> F[c])           (vpunpck{l,h}bw with zero make the
 *                                       u' << 8 words; vpackuswb restores
 *                                       the byte order)
 *   narrow (AVX2, and channels the wide form misses), 16 (8) a vector:
 *     y  = sat((u * M[c] + K[c]) >> S[c])   |M| < 2^15: vpmaddwd's product
 *                                       of a zero-extended byte and an i16
 *                                       (vpdpwssd with K on VNNI), vpsravd,
 *                                       saturating packs (cg_pack_bytes)
 *
 * u is the input byte in the u8 domain (i8 storage: x + 128); an i8 result
 * is computed as y + 128 in the wide form (then ^ 0x80) and directly in the
 * narrow one; a clamp inside the storage range (act_min / act_max) is one
 * more max and min.
 *
 * The fit: a channel's result is a function of its input byte alone, so
 * the requantization contract (cg_requant_eval) is evaluated for all 256
 * inputs. For a shift, every target t(u) bounds the sum before the shift
 * to an interval ([t 2^S, (t + 1) 2^S), or one side of it where t is a
 * bound the saturation or the clamp makes); M is tried near the contract's
 * slope times 2^S, and K is any integer in the intersection. The largest
 * shift that keeps M in range comes first (the finest steps). Every fit is
 * checked against all 256 results by emulating the instructions. A channel
 * the wide form misses (steep slopes leave it few fraction bits) puts the
 * op in the narrow form; one that misses both (TFLite's double rounding
 * half away from zero is not one floor of a line) leaves the op to the
 * depthwise kernels (conv_dw.c, conv_dw4.c): nothing is approximate.
 *
 * The loop: a task is an output row (N * OH tasks); each pixel's channels
 * in groups (64, or 4 vectors of the narrow form), the last group masked.
 * x and y may be views whose pixels are further apart than their channels
 * (DenseNet's block buffers). The x86 paths (avx2 and up) only; on the
 * portable path and elsewhere the op stays with the depthwise kernels.
 */
#include <math.h>
#include <string.h>

#include "targets/llvm/conv.h"

/* Narrow form: S at most 22 keeps u * M + K inside i32. */
#define S_MAX 22
#define M16_MAX 32767
#define MU_MAX 65535 /* wide form's M */
#define WIN 16       /* M tried within M0 +- WIN */

typedef struct cmap {
  const cg_dot_args *a;
  int64_t C, Cp;    /* channels, padded to whole groups */
  bool xs, ys;      /* signed storage */
  int64_t lb, ub;   /* the results' range (storage values) */
  bool clamp;       /* the op clamps inside the storage range */
  int16_t *t;       /* [C][256] the contract's results */
  double *A;        /* [C] the contract's slopes */
} cmap;

/* ---- the fits ------------------------------------------------------------ */

/* Both forms shift h[u] + K right by S (floor) to give t[u]: each target
 * bounds K to [t 2^S - h, (t + 1) 2^S - 1 - h], or one side of it where t
 * is the bound lb or ub (saturation or clamp does the rest). The middle
 * of the intersection with [kmin, kmax], or false if it is empty. */
static bool k_mid(const int16_t *t, const int64_t *h, int64_t lb, int64_t ub,
                  int S, int64_t kmin, int64_t kmax, int64_t *K) {
  int64_t one = (int64_t)1 << S, lo = kmin, hi = kmax;
  for (int u = 0; u < 256 && lo <= hi; u++) {
    if (t[u] > lb && lo < t[u] * one - h[u])
      lo = t[u] * one - h[u];
    if (t[u] < ub && hi > (t[u] + 1) * one - 1 - h[u])
      hi = (t[u] + 1) * one - 1 - h[u];
  }
  *K = lo + (hi - lo) / 2;
  return lo <= hi;
}

/* Narrow form for channel t[256] with slope A. */
static bool fit_narrow(const int16_t *t, double A, int64_t lb, int64_t ub,
                       int16_t *Mo, int32_t *Ko, int32_t *So) {
  int s0 = S_MAX;
  while (s0 > 0 && fabs(A) * ldexp(1.0, s0) > M16_MAX - WIN)
    s0--;
  for (int S = s0; S >= 0 && S > s0 - 4; S--) {
    int64_t M0 = llround(A * ldexp(1.0, S));
    for (int d = -WIN; d <= WIN; d++) {
      int64_t M = M0 + d, h[256], K;
      if (M < -M16_MAX || M > M16_MAX)
        continue;
      for (int64_t u = 0; u < 256; u++)
        h[u] = u * M;
      if (!k_mid(t, h, lb, ub, S, INT32_MIN, INT32_MAX, &K))
        continue;
      bool ok = true;
      for (int64_t u = 0; u < 256 && ok; u++) {
        int64_t w = u * M + K, v = w >> S; /* arithmetic: floor */
        v = v < lb ? lb : v > ub ? ub : v;
        ok = v == t[u] && w >= INT32_MIN && w <= INT32_MAX;
      }
      if (ok) {
        *Mo = (int16_t)M;
        *Ko = (int32_t)K;
        *So = S;
        return true;
      }
    }
  }
  return false;
}

/* The wide form's result for input u (u8 domain, results T in [0, 255]). */
static int64_t wide_eval(int64_t u, bool neg, int64_t M, int64_t K, int F,
                         int64_t lb, int64_t ub) {
  int64_t up = neg ? 255 - u : u, v = (up * M >> 8) + K;
  v = v < 0 ? 0 : v > 65535 ? 65535 : v;
  v >>= F;
  v = v > 255 ? 255 : v;
  return v < lb ? lb : v > ub ? ub : v;
}

/* Wide form for channel T[256] (u8-domain results, range [lb, ub]). */
static bool fit_wide(const int16_t *T, double A, int64_t lb, int64_t ub,
                     uint16_t *Mo, int32_t *Ko, uint16_t *Fo, bool *no) {
  bool neg = A < 0;
  for (int F = 8; F >= 1; F--) {
    int64_t M0 = llround(fabs(A) * ldexp(1.0, 8 + F));
    if (M0 > MU_MAX + WIN)
      continue;
    for (int d = -WIN; d <= WIN; d++) {
      int64_t M = M0 + d, h[256], K;
      if (M < 0 || M > MU_MAX)
        continue;
      for (int64_t u = 0; u < 256; u++)
        h[u] = (neg ? 255 - u : u) * M >> 8;
      if (!k_mid(T, h, lb, ub, F, -65535, 65535, &K))
        continue;
      bool ok = true;
      for (int64_t u = 0; u < 256 && ok; u++)
        ok = wide_eval(u, neg, M, K, F, lb, ub) == T[u];
      if (ok) {
        *Mo = (uint16_t)M;
        *Ko = (int32_t)K;
        *Fo = (uint16_t)F;
        *no = neg;
        return true;
      }
    }
  }
  return false;
}

/* Geometry and types this kernel takes (before the fit). */
static bool shape_ok(cg *c, const cg_dot_args *a) {
  const cg_conv_geom *g = &a->g;
  const cg_target *tg = c->tgt;
  if (!tg->x86 || !tg->avx2 || tg->isa == QUILL_LLVM_ISA_PORTABLE || !a->wc ||
      a->rq->raw || a->rq->epi || a->add)
    return false;
  if (g->Cg != 1 || g->Mg != 1 || g->G != g->C || g->KH != 1 || g->KW != 1)
    return false;
  if (g->pt || g->pl || (g->OH - 1) * g->sh >= g->H ||
      (g->OW - 1) * g->sw >= g->W)
    return false;
  quill_type *xs = cg_storage(a->x.elem), *ys = cg_storage(a->y.elem);
  return quill_type_bit_width(xs) == 8 && quill_type_bit_width(ys) == 8 &&
         quill_type_is_integer(xs) && quill_type_is_integer(ys) &&
         a->x.strides[1] == 1 && a->y.strides[1] == 1;
}

/* Every channel's 256 results and slope; false if a result leaves the
 * range (it cannot: cg_requant_eval clamps) or out of memory. */
static bool targets(cg *c, cmap *m) {
  const cg_dot_args *a = m->a;
  const cg_requant *rq = a->rq;
  m->t = quill_alloc(c->ctx, (size_t)m->C * 256 * sizeof *m->t);
  m->A = quill_alloc(c->ctx, (size_t)m->C * sizeof *m->A);
  if (!m->t || !m->A) {
    c->status = QUILL_ERR_NOMEM;
    return false;
  }
  for (int64_t ch = 0; ch < m->C; ch++) {
    int32_t w = a->wc[ch], b = a->bias ? a->bias[ch] : 0;
    for (int64_t u = 0; u < 256; u++) {
      int64_t x = m->xs ? u - 128 : u;
      int32_t acc = (int32_t)(uint32_t)((uint64_t)((x - a->zpx) * w) +
                                        (uint64_t)(int64_t)b);
      int64_t v = cg_requant_eval(rq, (size_t)ch, acc);
      if (v < m->lb || v > m->ub)
        return false;
      m->t[ch * 256 + u] = (int16_t)v;
    }
    size_t p = rq->n == 1 ? 0 : (size_t)ch;
    m->A[ch] = rq->fixed ? w * ldexp(rq->mult[p], rq->shift[p] - 31)
                         : w * (double)rq->scale[p];
  }
  return true;
}

/* ---- the loop ------------------------------------------------------------ */

typedef struct cmap_emit {
  const cmap *m;
  bool wide;
  unsigned VL, GV;       /* narrow: lanes a vector; bytes a group */
  LLVMValueRef g16, g32, gb; /* the tables (below) */
  bool one_shift;        /* one shift for all channels: an immediate */
  int64_t shift;
  bool flip;             /* some channel flips its input */
} cmap_emit;

/* len bytes of x at xp in the u8 domain, the first `valid` of them read
 * (a masked load when fewer than len). */
static LLVMValueRef load_x(cg *c, const cmap_emit *e, LLVMValueRef xp,
                           unsigned len, int64_t valid) {
  LLVMTypeRef bt = LLVMVectorType(c->t_i8, len);
  LLVMValueRef v;
  if (valid < (int64_t)len) {
    LLVMTypeRef olt[2] = {bt, c->t_ptr};
    v = cg_intrinsic(c, "llvm.masked.load", olt, 2,
                     (LLVMValueRef[]){xp, cg_i32c(c, 1),
                                      cg_lane_mask(c, cg_i64c(c, valid), len),
                                      LLVMConstNull(bt)},
                     4);
  } else {
    v = cg_load(c, bt, xp, 1);
  }
  if (e->m->xs)
    v = LLVMBuildXor(c->b, v, cg_splat(c, cg_i8c(c, -128), len), "");
  return v;
}

/* Wide form: the 64 result bytes of channels ch .. ch + 63 (group gi, an
 * i64 value). Tables: g16 [group][8][32] u16: M, KP, KN, F for the low
 * (channels 16 L + 0..7 of each 128-bit lane L) and the high words (16 L
 * + 8..15); gb [Cp] bytes: 0xff where the input flips. */
static LLVMValueRef group_wide(cg *c, const cmap_emit *e, LLVMValueRef xp,
                               LLVMValueRef ch, LLVMValueRef gi,
                               int64_t valid) {
  LLVMTypeRef wt = LLVMVectorType(c->t_i16, 32);
  LLVMValueRef x = load_x(c, e, xp, 64, valid);
  if (e->flip)
    x = LLVMBuildXor(
        c->b, x, cg_load(c, LLVMVectorType(c->t_i8, 64), cg_gep8(c, e->gb, ch), 1),
        "");
  LLVMValueRef tab = cg_gep8(c, e->g16, LLVMBuildMul(c->b, gi, cg_i64c(c, 512), ""));
  LLVMValueRef half[2];
  LLVMValueRef zero = LLVMConstNull(LLVMVectorType(c->t_i8, 64));
  for (int h = 0; h < 2; h++) {
    LLVMValueRef idx[64];
    for (unsigned l = 0; l < 4; l++)
      for (unsigned i = 0; i < 8; i++) { /* vpunpck{l,h}bw zero, x */
        idx[16 * l + 2 * i] = cg_i32c(c, 0);
        idx[16 * l + 2 * i + 1] = cg_i32c(c, 64 + 16 * l + 8 * h + i);
      }
    LLVMValueRef w = LLVMBuildBitCast(
        c->b, LLVMBuildShuffleVector(c->b, zero, x, LLVMConstVector(idx, 64), ""),
        wt, "");
    LLVMValueRef M = cg_load(c, wt, cg_gep8(c, tab, cg_i64c(c, h * 256)), 2);
    LLVMValueRef KP = cg_load(c, wt, cg_gep8(c, tab, cg_i64c(c, h * 256 + 64)), 2);
    LLVMValueRef KN = cg_load(c, wt, cg_gep8(c, tab, cg_i64c(c, h * 256 + 128)), 2);
    /* floor(u' M / 256): the high half of (u' << 8) M */
    LLVMValueRef v = cg_intrinsic(c, "llvm.x86.avx512.pmulhu.w.512", NULL, 0,
                                  (LLVMValueRef[]){w, M}, 2);
    v = cg_intrinsic(c, "llvm.uadd.sat", &wt, 1, (LLVMValueRef[]){v, KP}, 2);
    v = cg_intrinsic(c, "llvm.usub.sat", &wt, 1, (LLVMValueRef[]){v, KN}, 2);
    LLVMValueRef F =
        e->one_shift
            ? cg_splat(c, LLVMConstInt(c->t_i16, (unsigned long long)e->shift, 0), 32)
            : cg_load(c, wt, cg_gep8(c, tab, cg_i64c(c, h * 256 + 192)), 2);
    half[h] = LLVMBuildLShr(c->b, v, F, "");
  }
  LLVMValueRef y = cg_intrinsic(c, "llvm.x86.avx512.packuswb.512", NULL, 0,
                                half, 2);
  if (e->m->ys)
    y = LLVMBuildXor(c->b, y, cg_splat(c, cg_i8c(c, -128), 64), "");
  return y;
}

/* Narrow form: the GV result bytes of channels ch .. (4 vectors). Tables:
 * g16 [Cp] i16 M; g32 [2][Cp] i32 K, then S. */
static LLVMValueRef group_narrow(cg *c, const cmap_emit *e, LLVMValueRef xp,
                                 LLVMValueRef ch, int64_t valid) {
  const cmap *m = e->m;
  unsigned VL = e->VL, nv = valid < (int64_t)e->GV
                                ? (unsigned)cg_ceil_div(valid, VL)
                                : 4;
  LLVMTypeRef vt = LLVMVectorType(c->t_i32, VL);
  LLVMTypeRef hvt = LLVMVectorType(c->t_i16, VL);
  LLVMValueRef v[4];
  for (unsigned k = 0; k < nv; k++) {
    LLVMValueRef cv = LLVMBuildAdd(c->b, ch, cg_i64c(c, k * VL), "");
    int64_t left = valid - (int64_t)(k * VL);
    LLVMValueRef xv = load_x(c, e, cg_gep8(c, xp, cg_i64c(c, k * VL)), VL,
                             left < (int64_t)VL ? left : VL);
    LLVMValueRef M = LLVMBuildSExt(
        c->b, cg_load(c, hvt, cg_gep(c, c->t_i16, e->g16, cv), 2), vt, "");
    LLVMValueRef K = cg_load(c, vt, cg_gep(c, c->t_i32, e->g32, cv), 4);
    LLVMValueRef S =
        e->one_shift
            ? cg_splat(c, cg_i32c(c, (int32_t)e->shift), VL)
            : cg_load(c, vt,
                      cg_gep(c, c->t_i32, e->g32,
                             LLVMBuildAdd(c->b, cv, cg_i64c(c, m->Cp), "")),
                      4);
    LLVMValueRef r = LLVMBuildAdd(
        c->b, LLVMBuildMul(c->b, LLVMBuildZExt(c->b, xv, vt, ""), M, ""), K,
        "");
    v[k] = LLVMBuildAShr(c->b, r, S, "");
  }
  LLVMValueRef bytes = VL == 16 ? cg_pack_bytes(c, v, nv, m->ys)
                                : cg_pack_bytes8(c, v, nv, m->ys);
  unsigned nb = nv * VL;
  if (nb < e->GV || VL == 8) { /* as GV bytes (the rest undefined) */
    LLVMValueRef idx[64];
    for (unsigned l = 0; l < e->GV; l++)
      idx[l] = l < nb ? cg_i32c(c, (int32_t)l) : LLVMGetUndef(c->t_i32);
    bytes = LLVMBuildShuffleVector(c->b, bytes, LLVMGetUndef(LLVMTypeOf(bytes)),
                                   LLVMConstVector(idx, e->GV), "");
  }
  return bytes;
}

static void emit_loop(cg *c, const cmap_emit *e) {
  const cmap *m = e->m;
  const cg_dot_args *a = m->a;
  const cg_conv_geom *g = &a->g;
  unsigned GV = e->GV;
  LLVMTypeRef gvt = LLVMVectorType(c->t_i8, GV);
  cg_stage_begin(c, "cmap", g->N * g->OH);
  cg_stage_work(c, (double)(g->N * g->C * g->OH * g->OW) / (e->wide ? 10.0 : 6.0));
  LLVMValueRef xb = cg_view_base(c, &a->x), yb = cg_view_base(c, &a->y);
  const cg_view *x = &a->x, *y = &a->y;
  cg_loop lt, lw, lc;
  cg_loop_begin(c, &lt, c->t0, c->t1, 1);
  LLVMValueRef n = LLVMBuildUDiv(c->b, lt.i, cg_i64c(c, g->OH), "n");
  LLVMValueRef oh = LLVMBuildURem(c->b, lt.i, cg_i64c(c, g->OH), "oh");
  LLVMValueRef xrow = LLVMBuildAdd(
      c->b, LLVMBuildMul(c->b, n, cg_i64c(c, x->strides[0]), ""),
      LLVMBuildMul(c->b, oh, cg_i64c(c, g->sh * x->strides[2]), ""), "");
  LLVMValueRef yrow = LLVMBuildAdd(
      c->b, LLVMBuildMul(c->b, n, cg_i64c(c, y->strides[0]), ""),
      LLVMBuildMul(c->b, oh, cg_i64c(c, y->strides[2]), ""), "");
  cg_for(c, &lw, 0, g->OW, 1);
  LLVMValueRef xpix = LLVMBuildAdd(
      c->b, xrow,
      LLVMBuildMul(c->b, lw.i, cg_i64c(c, g->sw * x->strides[3]), ""), "");
  LLVMValueRef ypix = LLVMBuildAdd(
      c->b, yrow, LLVMBuildMul(c->b, lw.i, cg_i64c(c, y->strides[3]), ""), "");
  /* whole groups, then the rest (pass 1: masked) */
  int64_t full = m->C / GV * GV, rest = m->C - full;
  for (int pass = 0; pass < 2; pass++) {
    if ((pass == 0 && !full) || (pass == 1 && !rest))
      continue;
    LLVMValueRef ch;
    if (pass == 0) {
      cg_loop_begin(c, &lc, cg_i64c(c, 0), cg_i64c(c, full), GV);
      ch = lc.i;
    } else {
      ch = cg_i64c(c, full);
    }
    int64_t valid = pass ? rest : GV;
    LLVMValueRef xp = cg_gep(c, c->t_i8, xb, LLVMBuildAdd(c->b, xpix, ch, ""));
    LLVMValueRef bytes =
        e->wide ? group_wide(c, e, xp, ch,
                             LLVMBuildUDiv(c->b, ch, cg_i64c(c, GV), ""), valid)
                : group_narrow(c, e, xp, ch, valid);
    if (m->clamp) {
      LLVMValueRef lo = cg_splat(c, cg_i8c(c, (int)m->lb), GV);
      LLVMValueRef hi = cg_splat(c, cg_i8c(c, (int)m->ub), GV);
      const char *mx = m->ys ? "llvm.smax" : "llvm.umax";
      const char *mn = m->ys ? "llvm.smin" : "llvm.umin";
      bytes = cg_intrinsic(c, mx, &gvt, 1, (LLVMValueRef[]){bytes, lo}, 2);
      bytes = cg_intrinsic(c, mn, &gvt, 1, (LLVMValueRef[]){bytes, hi}, 2);
    }
    LLVMValueRef yp = cg_gep(c, c->t_i8, yb, LLVMBuildAdd(c->b, ypix, ch, ""));
    if (pass == 0) {
      cg_store(c, bytes, yp, 1);
      cg_loop_end(c, &lc);
    } else {
      LLVMTypeRef ov[2] = {gvt, c->t_ptr};
      cg_intrinsic(c, "llvm.masked.store", ov, 2,
                   (LLVMValueRef[]){bytes, yp, cg_i32c(c, 1),
                                    cg_lane_mask(c, cg_i64c(c, rest), GV)},
                   4);
    }
  }
  cg_loop_end(c, &lw);
  cg_loop_end(c, &lt);
  cg_stage_end(c);
}

/* ---- the two forms' tables ------------------------------------------------ */

/* The wide form's tables, or false if a channel does not fit. */
static bool tables_wide(cg *c, const cmap *m, cmap_emit *e) {
  int64_t ng = m->Cp / 64, off = m->ys ? 128 : 0;
  size_t n16 = (size_t)ng * 256;
  uint16_t *t16 = quill_calloc(c->ctx, n16, sizeof *t16);
  uint8_t *fl = quill_calloc(c->ctx, (size_t)m->Cp, 1);
  bool ok = t16 && fl;
  if (!ok)
    c->status = QUILL_ERR_NOMEM;
  int16_t T[256];
  e->one_shift = true;
  e->flip = false;
  for (int64_t ch = 0; ok && ch < m->C; ch++) {
    for (int u = 0; u < 256; u++)
      T[u] = (int16_t)(m->t[ch * 256 + u] + off);
    uint16_t M, F;
    int32_t K;
    bool neg;
    ok = fit_wide(T, m->A[ch], m->lb + off, m->ub + off, &M, &K, &F, &neg);
    if (!ok)
      break;
    /* word lane of channel ch in its group's low or high half */
    int64_t gi = ch / 64, k = ch % 64, h = k % 16 / 8;
    int64_t lane = k / 16 * 8 + k % 8;
    uint16_t *tab = t16 + gi * 256 + h * 128;
    tab[lane] = M;
    tab[32 + lane] = (uint16_t)(K > 0 ? K : 0);
    tab[64 + lane] = (uint16_t)(K < 0 ? -K : 0);
    tab[96 + lane] = F;
    fl[ch] = neg ? 0xff : 0;
    e->flip = e->flip || neg;
    if (ch == 0)
      e->shift = F;
    e->one_shift = e->one_shift && F == e->shift;
  }
  if (ok) {
    e->g16 = cg_const_global(c, "cmapw", t16, n16 * sizeof *t16);
    e->gb = cg_const_global(c, "cmapf", fl, (size_t)m->Cp);
  }
  quill_free(c->ctx, t16, n16 * sizeof *t16);
  quill_free(c->ctx, fl, (size_t)m->Cp);
  return ok;
}

/* The narrow form's tables, or false if a channel does not fit. */
static bool tables_narrow(cg *c, const cmap *m, cmap_emit *e) {
  int16_t *M = quill_calloc(c->ctx, (size_t)m->Cp, sizeof *M);
  int32_t *KS = quill_calloc(c->ctx, 2 * (size_t)m->Cp, sizeof *KS);
  bool ok = M && KS;
  if (!ok)
    c->status = QUILL_ERR_NOMEM;
  e->one_shift = true;
  for (int64_t ch = 0; ok && ch < m->C; ch++) {
    ok = fit_narrow(m->t + ch * 256, m->A[ch], m->lb, m->ub, &M[ch], &KS[ch],
                    &KS[m->Cp + ch]);
    if (ok && ch == 0)
      e->shift = KS[m->Cp];
    e->one_shift = e->one_shift && ok && KS[m->Cp + ch] == e->shift;
  }
  if (ok) {
    e->g16 = cg_const_global(c, "cmapm", M, (size_t)m->Cp * sizeof *M);
    e->g32 = cg_const_global(c, "cmapk", KS, 2 * (size_t)m->Cp * sizeof *KS);
  }
  quill_free(c->ctx, M, (size_t)m->Cp * sizeof *M);
  quill_free(c->ctx, KS, 2 * (size_t)m->Cp * sizeof *KS);
  return ok;
}

bool cg_cmap_try(cg *c, const cg_dot_args *a, quill_status *st) {
  if (!shape_ok(c, a))
    return false;
  const cg_target *tg = c->tgt;
  cmap m;
  memset(&m, 0, sizeof m);
  m.a = a;
  m.C = a->g.C;
  m.xs = quill_type_is_signed(cg_storage(a->x.elem));
  m.ys = quill_type_is_signed(cg_storage(a->y.elem));
  int64_t smin = m.ys ? -128 : 0, smax = m.ys ? 127 : 255;
  m.lb = a->rq->lo > smin ? a->rq->lo : smin;
  m.ub = a->rq->hi < smax ? a->rq->hi : smax;
  m.clamp = m.lb > smin || m.ub < smax;
  cmap_emit e;
  memset(&e, 0, sizeof e);
  e.m = &m;
  bool done = false;
  if (targets(c, &m)) {
    e.wide = tg->avx512f && tg->avx512bw;
    e.VL = e.wide ? 16 : 8;
    e.GV = 4 * e.VL;
    m.Cp = cg_ceil_div(m.C, e.GV) * e.GV;
    if (!(e.wide && tables_wide(c, &m, &e)) && !c->status) {
      e.wide = false;
      done = tables_narrow(c, &m, &e);
    } else {
      done = !c->status;
    }
  }
  quill_free(c->ctx, m.t, (size_t)m.C * 256 * sizeof *m.t);
  quill_free(c->ctx, m.A, (size_t)m.C * sizeof *m.A);
  if (c->status) {
    *st = c->status;
    return true;
  }
  if (!done)
    return false;
  emit_loop(c, &e);
  *st = c->status;
  return true;
}
