/*
 * test_llvm_qrandom.c - randomized bit-exactness of the LLVM target's
 * integer kernels against the reference interpreter.
 *
 * A generator draws one-op graphs:
 *
 *   qconv2d  N, C, H, W, kernel, strides, dilations, pads (asymmetric),
 *            groups (1, depthwise with channel multiplier, or any divisor),
 *            u8/i8 activations with any zero point, i8/u8 weights per
 *            tensor or per output channel with zero or random zero points,
 *            constant or runtime weights and bias, no bias, quantized u8/i8
 *            or raw i32 results; deep 3x3 convs (256-320 channels, 49-96
 *            out: K blocking on the zmm paths)
 *   qmatmul  batched A, constant or runtime B (2-D or batched), per-column
 *            weights, bias
 *   qadd/qmul  the float form, u8/i8 operands with numpy broadcasting
 *   qmatmul-act  two activations (runtime B per tensor, u8/i8, any zero
 *            points), batched or broadcast B, B through a transpose view,
 *            attention shapes (64 x 64 x ~64): qmatmul_act.c's kernels
 *   qnorm    dequantize -> softmax / layer_norm -> quantize, the fused
 *            loops of fuse_qdq.c (a third as many cases: f32 passes), or
 *            (a third of those) the integer qlayer_norm: rows of 1..800,
 *            u8/i8/i16 in, random gamma, beta, epsilon and scales folded
 *            by quill_qnorm_fold or random in the verifier's ranges,
 *            rows of one or a few distinct values (variance 0) through a
 *            gather
 *   epi      qmatmul (constant B) -> qadd of a per-column constant / lut
 *            chains computed in the qmatmul's epilogue (fuse_epi.c)
 *   qlut     dequantize -> elementwise f32 ops -> quantize, one table
 *            lookup (fuse_lut.c)
 *            (qnorm, epi and qlut: a third as many cases each)
 *   qdw      depthwise qconv2d with the f32 half_even requantization and
 *            s8-range weights (conv_dw4.c's vpdpbusd kernel on the zmm
 *            paths), channels 1..150, kernels up to 5x5 (a tenth as many)
 *   qconv-add  qconv2d -> qadd (+ relu) -> 1x1 qconv2d, the residual add
 *            in the conv's epilogue (fuse_add.c), or its own stage where
 *            the path or the graph does not allow it (half as many cases)
 *   qmatmul-tall  qmatmul with 33-48 or 197 rows: the AMX kernel's last
 *            block of one A tile row (a twentieth as many cases)
 *   qlstm    TFLite's integer LSTM (lower_qlstm.c): hidden 8/16/32, 1 or 5
 *            steps, batch 1 or 2, any cell_shift, a third saturating (a
 *            fifteenth as many cases)
 *
 * and a requantization: every rounding policy, fixed point (multiplier and
 * shift from the scales, or random within the verifier's range) or f32
 * scale, fused activation clamps (act_min/act_max), output scales spread
 * so that results both fit and saturate. Each
 * graph runs on every instruction path this machine can execute (portable,
 * avx2, avx-vnni, avx512-vnni, amx) and every output byte must equal the
 * reference's. QUILL_LLVM_RANDOM_CASES scales the number of graphs,
 * QUILL_LLVM_RANDOM_SEED changes the seed; a failing case prints its .qir.
 *
 * `test_llvm_qrandom --write DIR` runs nothing: it writes the same graphs
 * (QUILL_LLVM_RANDOM_CASES per op, cycling qconv2d, qmatmul, qadd/qmul,
 * qmatmul-act)
 * as DIR/caseNNN.qir with random inputs DIR/caseNNN.inK.npy and the
 * reference's outputs DIR/caseNNN.refK.npy, plus DIR/big.qir, a 3x3 conv large enough that `--threads 2` code hands it
 * to the thread pool. scripts/test-qemu.sh compiles them for other CPUs
 * and runs them under qemu against `quill run`.
 */
#include "ir/qnorm.h"
#include "ir/quant.h"
#include "ir/strbuf.h"
#include "llvm_harness.h"

static const char *const roundings[] = {"half_even", "half_away", "half_up",
                                        "tflite"};

typedef struct gen {
  char *buf;
  size_t len, cap;
  bool wsparse; /* s8 weights mostly small, a few large (emit_rand_weights) */
} gen;

static void emit(gen *g, const char *fmt, ...) {
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    int n = vsnprintf(g->buf + g->len, g->cap - g->len, fmt, ap);
    va_end(ap);
    if ((size_t)n < g->cap - g->len) {
      g->len += (size_t)n;
      return;
    }
    g->cap = g->cap * 2 + (size_t)n + 64;
    g->buf = realloc(g->buf, g->cap);
  }
}

static double rnd_range(double lo, double hi) {
  return lo + (hi - lo) * rnd_unit();
}

/* An 8-bit quant type: "!quant.uniform<u8:f32, s:zp>" or per axis. */
static void qtype(gen *g, bool u8, double scale, int64_t zp) {
  emit(g, "!quant.uniform<%s:f32, %.9g:%lld>", u8 ? "u8" : "i8", scale,
       (long long)zp);
}

static void qtype_axis(gen *g, bool u8, int axis, int64_t n,
                       const double *scales, const int64_t *zps) {
  emit(g, "!quant.uniform<%s:f32:%d, {", u8 ? "u8" : "i8", axis);
  for (int64_t i = 0; i < n; i++)
    emit(g, "%s%.9g:%lld", i ? ", " : "", scales[i], (long long)zps[i]);
  emit(g, "}>");
}

static void hex_bytes(gen *g, const uint8_t *p, size_t n) {
  emit(g, "\"0x");
  for (size_t i = 0; i < n; i++)
    emit(g, "%02X", p[i]);
  emit(g, "\"");
}

/* The weight element type (quant, per tensor or axis). */
typedef struct wparams {
  bool u8, axis;
  int64_t n;
  double scales[512];
  int64_t zps[512];
} wparams;

static void wtype(gen *g, const wparams *w, int axis);

/* "  %w = constant" of random 4-D weights [d0, d1, d2, d3] of type w
 * (per axis 0): u8 in [0, 255], i8 in [lo, 127]. */
static void emit_rand_weights(gen *g, const wparams *w, const int64_t d[4],
                              int lo) {
  size_t nw = (size_t)(d[0] * d[1] * d[2] * d[3]);
  uint8_t *b = malloc(nw);
  for (size_t i = 0; i < nw; i++)
    b[i] = (uint8_t)(w->u8 ? rnd_int(0, 255) : rnd_int(lo, 127));
  /* wsparse: |w| <= 40 but 2% in 90..127, so that a few vpmaddubsw pairs
   * could saturate: the avx2 path splits them (conv_ubsw.c) */
  for (size_t i = 0; g->wsparse && !w->u8 && i < nw; i++)
    b[i] = (uint8_t)(rnd() % 50 == 0 ? (rnd() % 2 ? 1 : -1) * rnd_int(90, 127)
                                     : rnd_int(-40, 40));
  emit(g, "  %%w = constant {value = dense<");
  hex_bytes(g, b, nw);
  for (int k = 0; k < 2; k++) {
    emit(g, "%s : tensor<%lldx%lldx%lldx%lldx", k ? ">}" : ">",
         (long long)d[0], (long long)d[1], (long long)d[2], (long long)d[3]);
    wtype(g, w, 0);
  }
  emit(g, ">\n");
  free(b);
}

static void wtype(gen *g, const wparams *w, int axis) {
  if (w->axis)
    qtype_axis(g, w->u8, axis, w->n, w->scales, w->zps);
  else
    qtype(g, w->u8, w->scales[0], w->zps[0]);
}

static void random_wparams(wparams *w, int64_t nch) {
  w->u8 = rnd() % 6 == 0;
  w->axis = nch <= 512 && rnd() % 2 == 0;
  w->n = w->axis ? nch : 1;
  int zmode = (int)(rnd() % 4); /* 0: symmetric, else sometimes random */
  for (int64_t i = 0; i < w->n; i++) {
    w->scales[i] = rnd_range(0.002, 0.05);
    if (w->u8)
      w->zps[i] = zmode == 0 ? 128 : rnd_int(100, 156);
    else
      w->zps[i] = zmode == 0 ? 0 : rnd_int(-20, 20);
  }
}

/* Requantization attributes (and the result's quant params). */
static void requant_attrs(gen *g, bool *fixed_out, double sx,
                          const wparams *w, double sy, int64_t nch,
                          const char *rounding, bool yu8) {
  bool tfl = !strcmp(rounding, "tflite");
  if (rnd() % 3 == 0) { /* a fused relu/clip: act_min <= act_max */
    int64_t qmin = yu8 ? 0 : -128, qmax = yu8 ? 255 : 127;
    int64_t lo = rnd_int(qmin, (qmin + qmax) / 2), hi = rnd_int(lo, qmax);
    emit(g, "act_min = %lld, act_max = %lld, ", (long long)lo, (long long)hi);
  }
  bool fixed = tfl || rnd() % 2;
  *fixed_out = fixed;
  emit(g, "rounding = \"%s\"", rounding);
  if (!fixed)
    return;
  bool per = w->axis && rnd() % 3 != 0;
  int64_t n = per ? nch : 1;
  bool random_ms = rnd() % 5 == 0;
  int32_t *m = malloc((size_t)n * sizeof *m);
  int *sh = malloc((size_t)n * sizeof *sh);
  for (int64_t c = 0; c < n; c++) {
    if (random_ms) {
      m[c] = (int32_t)rnd_int(0, INT32_MAX);
      sh[c] = (int)rnd_int(-31, 8);
    } else {
      double real = sx * w->scales[per ? c : 0] / sy;
      quill_quantize_multiplier(real, &m[c], &sh[c]);
    }
  }
  emit(g, ", multiplier = [");
  for (int64_t c = 0; c < n; c++)
    emit(g, "%s%lld", c ? ", " : "", (long long)m[c]);
  emit(g, "], shift = [");
  for (int64_t c = 0; c < n; c++)
    emit(g, "%s%d", c ? ", " : "", sh[c]);
  emit(g, "]");
  free(m);
  free(sh);
}

/* %<name> = a constant i32 bias of N random values in [-20000, 20000]. */
static void emit_bias(gen *g, const char *name, int64_t N) {
  int32_t *b = malloc((size_t)N * 4);
  for (int64_t i = 0; i < N; i++)
    b[i] = (int32_t)rnd_int(-20000, 20000);
  emit(g, "  %%%s = constant {value = dense<", name);
  hex_bytes(g, (const uint8_t *)b, (size_t)N * 4);
  emit(g, "> : tensor<%lldxi32>} : tensor<%lldxi32>\n", (long long)N,
       (long long)N);
  free(b);
}

/* ---- qconv2d ------------------------------------------------------------- */

static void gen_qconv(gen *g) {
  int64_t N = rnd_int(1, 2), G, Cg, Mg;
  int kind = (int)(rnd() % 8);
  if (g->wsparse) /* small plain or grouped convs: pairs of channels */
    kind = kind % 4 == 3 ? 5 : kind % 4;
  if (kind == 7) { /* deep 3x3 convs: K blocking (conv_dot.c) on zmm paths */
    G = 1;
    Cg = rnd() % 2 ? 4 * rnd_int(64, 80) : rnd_int(256, 320);
    Mg = rnd_int(49, 96);
  } else if (kind == 6) { /* wide rows and K chunks (the amx path's cases) */
    G = 1;
    int r = (int)(rnd() % 4);
    Cg = r == 0 ? rnd_int(2, 3) /* 7x7 row windows */
         : r == 1 ? 16 * rnd_int(1, 6) : 12 * rnd_int(2, 8);
    Mg = rnd() % 2 ? 16 * rnd_int(1, 3) : rnd_int(8, 40);
  } else if (kind <= 2) { /* plain */
    G = 1;
    Cg = rnd() % 3 == 0 ? rnd_int(1, 5) : 4 * rnd_int(1, 8);
    Mg = rnd() % 3 == 0 ? rnd_int(1, 40) : 16 * rnd_int(1, 5);
  } else if (kind <= 4) { /* depthwise */
    G = rnd_int(1, 40);
    Cg = 1;
    Mg = rnd() % 4 == 0 ? 2 : 1;
  } else { /* grouped */
    G = rnd_int(2, 4);
    Cg = rnd_int(1, 9);
    Mg = rnd_int(1, 20);
  }
  int64_t C = G * Cg, M = G * Mg;
  int64_t KH = rnd_int(1, 4), KW = rnd_int(1, 4);
  if (rnd() % 3 == 0)
    KH = KW = rnd() % 2 ? 3 : 1;
  if (kind == 6 && Cg < 4)
    KH = KW = 7;
  if (kind == 7)
    KH = KW = 3;
  int64_t sh = rnd_int(1, 3), sw = rnd_int(1, 3);
  int64_t dh = rnd() % 4 == 0 ? 2 : 1, dw = rnd() % 4 == 0 ? 2 : 1;
  int64_t pt = rnd_int(0, 2), pl = rnd_int(0, 2), pb = rnd_int(0, 2),
          pr = rnd_int(0, 2);
  int64_t hw = kind == 6 ? 36 : kind == 7 ? 9 : 14;
  int64_t H = rnd_int((KH - 1) * dh + 1, hw), W = rnd_int((KW - 1) * dw + 1, hw);
  if (kind != 6 && rnd() % 5 == 0)
    H = W = 1 + ((KH - 1) * dh > (KW - 1) * dw ? (KH - 1) * dh : (KW - 1) * dw);
  int64_t OH = (H + pt + pb - ((KH - 1) * dh + 1)) / sh + 1;
  int64_t OW = (W + pl + pr - ((KW - 1) * dw + 1)) / sw + 1;
  bool xu8 = rnd() % 2;
  int64_t zpx = xu8 ? rnd_int(0, 255) : rnd_int(-128, 127);
  double sx = rnd_range(0.005, 0.05);
  wparams *w = malloc(sizeof *w);
  random_wparams(w, M);
  if (g->wsparse) { /* symmetric s8: the weights stay those of wsparse */
    w->u8 = false;
    for (int64_t i = 0; i < w->n; i++)
      w->zps[i] = 0;
  }
  bool wconst = rnd() % 5 != 0 || g->wsparse;
  int bias_mode = (int)(rnd() % 4); /* 0 none, 1 runtime, 2-3 constant */
  bool raw = rnd() % 8 == 0;
  bool yu8 = rnd() % 2;
  const char *rounding = roundings[rnd() % 4];
  double K = (double)(Cg * KH * KW);
  double sy = sx * w->scales[0] * sqrt(K) * 60.0 * rnd_range(0.2, 3.0) / 127;
  int64_t zpy = yu8 ? rnd_int(0, 255) : rnd_int(-128, 127);
  /* signature */
  emit(g, "func @f(%%x: tensor<%lldx%lldx%lldx%lldx", (long long)N,
       (long long)C, (long long)H, (long long)W);
  qtype(g, xu8, sx, zpx);
  emit(g, ">");
  if (!wconst) {
    emit(g, ", %%w: tensor<%lldx%lldx%lldx%lldx", (long long)M, (long long)Cg,
         (long long)KH, (long long)KW);
    wtype(g, w, 0);
    emit(g, ">");
  }
  if (bias_mode == 1)
    emit(g, ", %%b: tensor<%lldxi32>", (long long)M);
  emit(g, ") -> tensor<%lldx%lldx%lldx%lldx", (long long)N, (long long)M,
       (long long)OH, (long long)OW);
  if (raw)
    emit(g, "i32");
  else
    qtype(g, yu8, sy, zpy);
  emit(g, "> {\n");
  if (wconst) {
    int64_t wd[4] = {M, Cg, KH, KW};
    emit_rand_weights(g, w, wd, -127);
  }
  if (bias_mode >= 2)
    emit_bias(g, "b", M);
  emit(g, "  %%y = qconv2d %%x, %%w%s {group = %lld, strides = [%lld, %lld], "
          "dilations = [%lld, %lld], pads = [%lld, %lld, %lld, %lld]",
       bias_mode ? ", %b" : "", (long long)G, (long long)sh, (long long)sw,
       (long long)dh, (long long)dw, (long long)pt, (long long)pl,
       (long long)pb, (long long)pr);
  if (!raw) {
    bool fixed;
    emit(g, ", ");
    requant_attrs(g, &fixed, sx, w, sy, M, rounding, yu8);
  }
  emit(g, "} : tensor<%lldx%lldx%lldx%lldx", (long long)N, (long long)M,
       (long long)OH, (long long)OW);
  if (raw)
    emit(g, "i32");
  else
    qtype(g, yu8, sy, zpy);
  emit(g, ">\n  return %%y\n}\n");
  free(w);
}

/* ---- depthwise, f32 half_even ---------------------------------------------
 *
 * conv_dw4.c's cases: depthwise qconv2d with the f32 half_even
 * requantization to 8 bits and weights that fit s8 (the vpdpbusd kernel
 * on the zmm paths), channels 1..150 (whole 64-channel blocks and strips
 * of 16-channel slots with a partial last group), kernels up to 5x5 (two
 * row groups), strides, dilations, pads, u8/i8 operands, act clamps;
 * sometimes weights with a zero point outside s8's reach (conv_dw.c). */
static void gen_qdw(gen *g) {
  int64_t N = rnd_int(1, 2);
  int r = (int)(rnd() % 4);
  int64_t C = r == 0 ? rnd_int(1, 40) : r == 1 ? 16 * rnd_int(1, 6)
              : r == 2 ? 64 * rnd_int(1, 2) : rnd_int(40, 150);
  int64_t KH = rnd() % 2 ? 3 : rnd_int(1, 5), KW = rnd() % 3 ? KH
                                                            : rnd_int(1, 5);
  int64_t sh = rnd_int(1, 2), sw = rnd_int(1, 2);
  int64_t dh = rnd() % 5 == 0 ? 2 : 1, dw = rnd() % 5 == 0 ? 2 : 1;
  int64_t pt = rnd_int(0, 2), pl = rnd_int(0, 2), pb = rnd_int(0, 2),
          pr = rnd_int(0, 2);
  int64_t H = rnd_int((KH - 1) * dh + 1, 12), W = rnd_int((KW - 1) * dw + 1, 12);
  int64_t OH = (H + pt + pb - ((KH - 1) * dh + 1)) / sh + 1;
  int64_t OW = (W + pl + pr - ((KW - 1) * dw + 1)) / sw + 1;
  bool xu8 = rnd() % 2, yu8 = rnd() % 2;
  int64_t zpx = xu8 ? rnd_int(0, 255) : rnd_int(-128, 127);
  double sx = rnd_range(0.005, 0.05);
  wparams *w = malloc(sizeof *w);
  random_wparams(w, C);
  if (rnd() % 4 && !w->u8) /* mostly symmetric: every weight fits s8 */
    for (int64_t i = 0; i < w->n; i++)
      w->zps[i] = 0;
  double sy = sx * w->scales[0] * (double)(KH * KW) * 40.0 *
              rnd_range(0.1, 2.0) / 127;
  int64_t zpy = yu8 ? rnd_int(0, 255) : rnd_int(-128, 127);
  bool bias = rnd() % 4 != 0;
  emit(g, "func @f(%%x: tensor<%lldx%lldx%lldx%lldx", (long long)N,
       (long long)C, (long long)H, (long long)W);
  qtype(g, xu8, sx, zpx);
  emit(g, ">) -> tensor<%lldx%lldx%lldx%lldx", (long long)N, (long long)C,
       (long long)OH, (long long)OW);
  qtype(g, yu8, sy, zpy);
  emit(g, "> {\n");
  int64_t wd[4] = {C, 1, KH, KW};
  emit_rand_weights(g, w, wd, -128);
  if (bias)
    emit_bias(g, "b", C);
  emit(g, "  %%y = qconv2d %%x, %%w%s {group = %lld, strides = [%lld, %lld], "
          "dilations = [%lld, %lld], pads = [%lld, %lld, %lld, %lld], ",
       bias ? ", %b" : "", (long long)C, (long long)sh, (long long)sw,
       (long long)dh, (long long)dw, (long long)pt, (long long)pl,
       (long long)pb, (long long)pr);
  if (rnd() % 3 == 0) { /* a fused relu/clip */
    int64_t qmin = yu8 ? 0 : -128, qmax = yu8 ? 255 : 127;
    int64_t lo = rnd_int(qmin, (qmin + qmax) / 2), hi = rnd_int(lo, qmax);
    emit(g, "act_min = %lld, act_max = %lld, ", (long long)lo, (long long)hi);
  }
  emit(g, "rounding = \"half_even\"} : tensor<%lldx%lldx%lldx%lldx",
       (long long)N, (long long)C, (long long)OH, (long long)OW);
  qtype(g, yu8, sy, zpy);
  emit(g, ">\n  return %%y\n}\n");
  free(w);
}

/* ---- qmatmul ------------------------------------------------------------- */

/* m rows of A (0: drawn, 1-9) */
static void gen_qmatmul_m(gen *g, int64_t m) {
  int64_t B = rnd() % 3 == 0 ? rnd_int(2, 3) : 0; /* batch of A */
  int64_t M = m ? m : rnd_int(1, 9),
          K = rnd() % 2 ? 4 * rnd_int(1, 24) : rnd_int(1, 70);
  int64_t N = rnd() % 2 ? 16 * rnd_int(1, 4) : rnd_int(1, 50);
  bool bbatch = B && rnd() % 3 == 0;
  bool xu8 = rnd() % 2;
  int64_t zpx = xu8 ? rnd_int(0, 255) : rnd_int(-128, 127);
  double sx = rnd_range(0.005, 0.05);
  wparams *w = malloc(sizeof *w);
  random_wparams(w, N);
  bool wconst = rnd() % 5 != 0;
  int bias_mode = (int)(rnd() % 4);
  bool raw = rnd() % 8 == 0;
  bool yu8 = rnd() % 2;
  const char *rounding = roundings[rnd() % 4];
  double sy = sx * w->scales[0] * sqrt((double)K) * 60.0 * rnd_range(0.2, 3.0) /
              127;
  int64_t zpy = yu8 ? rnd_int(0, 255) : rnd_int(-128, 127);
  char ash[64], bsh[64], ysh[64];
  if (B)
    snprintf(ash, sizeof ash, "%lldx%lldx%lld", (long long)B, (long long)M,
             (long long)K);
  else
    snprintf(ash, sizeof ash, "%lldx%lld", (long long)M, (long long)K);
  if (bbatch)
    snprintf(bsh, sizeof bsh, "%lldx%lldx%lld", (long long)B, (long long)K,
             (long long)N);
  else
    snprintf(bsh, sizeof bsh, "%lldx%lld", (long long)K, (long long)N);
  if (B)
    snprintf(ysh, sizeof ysh, "%lldx%lldx%lld", (long long)B, (long long)M,
             (long long)N);
  else
    snprintf(ysh, sizeof ysh, "%lldx%lld", (long long)M, (long long)N);
  int baxis = bbatch ? 2 : 1;
  emit(g, "func @f(%%a: tensor<%sx", ash);
  qtype(g, xu8, sx, zpx);
  emit(g, ">");
  if (!wconst) {
    emit(g, ", %%b: tensor<%sx", bsh);
    wtype(g, w, baxis);
    emit(g, ">");
  }
  if (bias_mode == 1)
    emit(g, ", %%c: tensor<%lldxi32>", (long long)N);
  emit(g, ") -> tensor<%sx", ysh);
  if (raw)
    emit(g, "i32");
  else
    qtype(g, yu8, sy, zpy);
  emit(g, "> {\n");
  if (wconst) {
    size_t nb = (size_t)((bbatch ? B : 1) * K * N);
    uint8_t *d = malloc(nb);
    for (size_t i = 0; i < nb; i++)
      d[i] = (uint8_t)(w->u8 ? rnd_int(0, 255) : rnd_int(-127, 127));
    emit(g, "  %%b = constant {value = dense<");
    hex_bytes(g, d, nb);
    emit(g, "> : tensor<%sx", bsh);
    wtype(g, w, baxis);
    emit(g, ">} : tensor<%sx", bsh);
    wtype(g, w, baxis);
    emit(g, ">\n");
    free(d);
  }
  if (bias_mode >= 2) {
    int32_t *b = malloc((size_t)N * 4);
    for (int64_t i = 0; i < N; i++)
      b[i] = (int32_t)rnd_int(-20000, 20000);
    emit(g, "  %%c = constant {value = dense<");
    hex_bytes(g, (const uint8_t *)b, (size_t)N * 4);
    emit(g, "> : tensor<%lldxi32>} : tensor<%lldxi32>\n", (long long)N,
         (long long)N);
    free(b);
  }
  emit(g, "  %%y = qmatmul %%a, %%b%s {", bias_mode ? ", %c" : "");
  if (!raw) {
    bool fixed;
    requant_attrs(g, &fixed, sx, w, sy, N, rounding, yu8);
  }
  emit(g, "} : tensor<%sx", ysh);
  if (raw)
    emit(g, "i32");
  else
    qtype(g, yu8, sy, zpy);
  emit(g, ">\n  return %%y\n}\n");
  free(w);
}

static void gen_qmatmul(gen *g) { gen_qmatmul_m(g, 0); }

/* qmatmul of two activations (runtime B per tensor, as attention's
 * Q x K^T and P x V): batched or 2-D, B batched or broadcast, sometimes
 * read through a transpose (a strided view), attention-sized shapes,
 * constant or no bias, quantized u8/i8 or raw i32 results. */
static void gen_qmatmul_act(gen *g) {
  bool attn = rnd() % 4 == 0;
  int64_t B = attn ? rnd_int(1, 4) : rnd() % 2 ? rnd_int(1, 3) : 0;
  int64_t M = attn ? 64 : rnd_int(1, 20);
  int64_t K = attn ? 64 : rnd() % 2 ? 4 * rnd_int(1, 20) : rnd_int(1, 90);
  int64_t N = attn ? rnd_int(60, 70) : rnd_int(1, 90);
  bool bbatch = B && rnd() % 4 != 0, btrans = rnd() % 3 == 0;
  bool xu8 = rnd() % 2, bu8 = rnd() % 3 == 0;
  int64_t zpx = xu8 ? rnd_int(0, 255) : rnd_int(-128, 127);
  double sx = rnd_range(0.005, 0.05);
  wparams *w = malloc(sizeof *w);
  w->u8 = bu8;
  w->axis = false;
  w->n = 1;
  w->scales[0] = rnd_range(0.005, 0.05);
  w->zps[0] = bu8 ? rnd_int(0, 255) : rnd_int(-128, 127);
  bool bias = rnd() % 3 == 0, raw = rnd() % 8 == 0, yu8 = rnd() % 2;
  const char *rounding = roundings[rnd() % 4];
  double sy = sx * w->scales[0] * sqrt((double)K) * 60.0 * rnd_range(0.2, 3.0) /
              127;
  int64_t zpy = yu8 ? rnd_int(0, 255) : rnd_int(-128, 127);
  char ash[64], bsh[64], btsh[64], ysh[64], pre[16];
  pre[0] = '\0';
  if (B)
    snprintf(pre, sizeof pre, "%lldx", (long long)B);
  snprintf(ash, sizeof ash, "%s%lldx%lld", pre, (long long)M, (long long)K);
  snprintf(bsh, sizeof bsh, "%s%lldx%lld", bbatch ? pre : "", (long long)K,
           (long long)N);
  snprintf(btsh, sizeof btsh, "%s%lldx%lld", bbatch ? pre : "", (long long)N,
           (long long)K);
  snprintf(ysh, sizeof ysh, "%s%lldx%lld", pre, (long long)M, (long long)N);
  emit(g, "func @f(%%a: tensor<%sx", ash);
  qtype(g, xu8, sx, zpx);
  emit(g, ">, %%b0: tensor<%sx", btrans ? btsh : bsh);
  wtype(g, w, 0);
  emit(g, ">) -> tensor<%sx", ysh);
  if (raw)
    emit(g, "i32");
  else
    qtype(g, yu8, sy, zpy);
  emit(g, "> {\n");
  if (btrans) {
    emit(g, "  %%b = transpose %%b0 {perm = [%s]} : tensor<%sx",
         bbatch ? "0, 2, 1" : "1, 0", bsh);
    wtype(g, w, 0);
    emit(g, ">\n");
  }
  if (bias)
    emit_bias(g, "c", N);
  emit(g, "  %%y = qmatmul %%a, %s%s {", btrans ? "%b" : "%b0",
       bias ? ", %c" : "");
  if (!raw) {
    bool fixed;
    requant_attrs(g, &fixed, sx, w, sy, N, rounding, yu8);
  }
  emit(g, "} : tensor<%sx", ysh);
  if (raw)
    emit(g, "i32");
  else
    qtype(g, yu8, sy, zpy);
  emit(g, ">\n  return %%y\n}\n");
  free(w);
}

/* %<res> = dequantize of the graph argument %x, or with perm of
 * %t = transpose %x {perm}; d0 x d1 x d2: the dequantized shape. */
static void emit_dequant3(gen *g, const char *perm, int64_t d0, int64_t d1,
                          int64_t d2, bool xu8, double sx, int64_t zpx,
                          const char *res) {
  if (perm) {
    emit(g, "  %%t = transpose %%x {perm = [%s]} : tensor<%lldx%lldx%lldx",
         perm, (long long)d0, (long long)d1, (long long)d2);
    qtype(g, xu8, sx, zpx);
    emit(g, ">\n");
  }
  emit(g, "  %%%s = dequantize %s : tensor<%lldx%lldx%lldxf32>\n", res,
       perm ? "%t" : "%x", (long long)d0, (long long)d1, (long long)d2);
}

/* dequantize -> softmax / layer_norm -> quantize (fuse_qdq.c's fused
 * loops): rows of 1 to 300, u8/i8 in and out with any zero points, every
 * rounding, the input sometimes through a transpose (a strided view), the
 * float result sometimes returned too (then not fused), layer_norm with a
 * random constant scale, sometimes a bias, in either numerics (f64 or f32
 * steps), softmax along the last or
 * the middle axis. */
static void gen_qnorm(gen *g) {
  bool ln = rnd() % 2, trans = rnd() % 4 == 0, both = rnd() % 5 == 0;
  bool xu8 = rnd() % 2, yu8 = rnd() % 2, bias = rnd() % 2;
  int64_t B = rnd_int(1, 3), M = rnd_int(1, 12);
  int64_t N = rnd() % 4 == 0 ? rnd_int(200, 300) : rnd_int(1, 70);
  int axis = !ln && rnd() % 4 == 0 ? 1 : 2;
  double sx = rnd_range(0.01, 0.2);
  int64_t zpx = xu8 ? rnd_int(0, 255) : rnd_int(-128, 127);
  double sy = ln ? rnd_range(0.01, 0.05) : rnd_range(0.002, 0.006);
  int64_t zpy = ln ? (yu8 ? rnd_int(100, 156) : rnd_int(-28, 28))
                   : (yu8 ? rnd_int(0, 10) : rnd_int(-128, -118));
  const char *rounding = roundings[rnd() % 4];
  emit(g, "func @f(%%x: tensor<%lldx%lldx%lldx", (long long)B,
       (long long)(trans ? N : M), (long long)(trans ? M : N));
  qtype(g, xu8, sx, zpx);
  emit(g, ">) -> (tensor<%lldx%lldx%lldx", (long long)B, (long long)M,
       (long long)N);
  qtype(g, yu8, sy, zpy);
  emit(g, ">%s", both ? ", tensor<" : ")");
  if (both)
    emit(g, "%lldx%lldx%lldxf32>)", (long long)B, (long long)M, (long long)N);
  emit(g, " {\n");
  emit_dequant3(g, trans ? "0, 2, 1" : NULL, B, M, N, xu8, sx, zpx, "f");
  if (ln) {
    for (int k = 0; k < 1 + bias; k++) {
      float *v = malloc((size_t)N * sizeof *v);
      for (int64_t i = 0; i < N; i++)
        v[i] = (float)(k ? rnd_range(-0.5, 0.5) : rnd_range(0.5, 1.5));
      emit(g, "  %%p%d = constant {value = dense<", k);
      hex_bytes(g, (const uint8_t *)v, (size_t)N * sizeof *v);
      emit(g, "> : tensor<%lldxf32>} : tensor<%lldxf32>\n", (long long)N,
           (long long)N);
      free(v);
    }
    bool f32n = rnd() % 2; /* TFLite's f32 steps (tflite-int8) */
    emit(g, "  %%g = layer_norm %%f, %%p0%s {axis = -1, epsilon = 1e-05%s} : "
            "tensor<%lldx%lldx%lldxf32>\n",
         bias ? ", %p1" : "", f32n ? ", numerics = \"f32\"" : "",
         (long long)B, (long long)M, (long long)N);
  } else {
    emit(g, "  %%g = softmax %%f {axis = %d} : tensor<%lldx%lldx%lldxf32>\n",
         axis, (long long)B, (long long)M, (long long)N);
  }
  emit(g, "  %%h = quantize %%g {rounding = \"%s\"} : tensor<%lldx%lldx%lldx",
       rounding, (long long)B, (long long)M, (long long)N);
  qtype(g, yu8, sy, zpy);
  emit(g, ">\n  return %%h%s\n}\n", both ? ", %g" : "");
}

/* The quant type of a qlayer_norm operand: u8/i8 (qtype) or i16. */
static void qtype16(gen *g, int kind, double scale, int64_t zp) {
  if (kind == 2)
    emit(g, "!quant.uniform<i16:f32, %.9g:%lld>", scale, (long long)zp);
  else
    qtype(g, kind == 1, scale, zp);
}

/* qlayer_norm x, g, b (ir/qnorm.h) on rows of 1..800: x u8/i8/i16 with
 * any zero point, sometimes through a gather of 1..3 columns (rows of one
 * value: variance 0, or of a few: large ones), the constants folded from
 * random gamma, beta, epsilon and scales (quill_qnorm_fold), or a sixth of
 * the time random anywhere in the verifier's ranges (the results then
 * saturate or wrap, identically). */
static void gen_qlnorm(gen *g) {
  int xk = (int)(rnd() % 5) % 3, yk = (int)(rnd() % 2);
  int64_t B = rnd_int(1, 2), M = rnd_int(1, 6);
  int64_t N = rnd() % 4 == 0 ? rnd_int(700, 800) : rnd_int(1, 70);
  int64_t K = rnd() % 3 == 0 ? rnd_int(1, 3) : 0; /* gather columns */
  double sx = rnd_range(0.01, 0.2), sy = rnd_range(0.01, 0.05);
  int64_t zx = xk == 1 ? rnd_int(0, 255) : xk == 0 ? rnd_int(-128, 127)
                                                   : rnd_int(-300, 300);
  int64_t zy = yk ? rnd_int(100, 156) : rnd_int(-28, 28);
  int32_t *gv = malloc((size_t)N * 2 * sizeof *gv), *bv = gv + N;
  double *gam = malloc((size_t)N * 2 * sizeof *gam), *bet = gam + N;
  double gs = rnd() % 4 == 0 ? rnd_range(0.001, 0.05) : rnd_range(0.2, 3.0);
  for (int64_t i = 0; i < N; i++) {
    gam[i] = gs * rnd_range(rnd() % 8 ? 0.5 : -1.5, 1.5);
    bet[i] = rnd_range(-1.0, 1.0);
  }
  static const double eps[4] = {1e-5, 1e-12, 1e-6, 0.5};
  const char *why = NULL;
  int G = 0, F = 0;
  int64_t E = 0;
  if (rnd() % 6 == 0 ||
      !quill_qnorm_fold((size_t)N, eps[rnd() % 4], sx, sy, gam,
                        rnd() % 4 ? bet : NULL, gv, bv, &G, &F, &E, &why)) {
    G = (int)rnd_int(0, 61 - QUILL_QNORM_Z_BITS);
    F = (int)rnd_int(0, QUILL_QNORM_Z_BITS + G);
    E = rnd() % 2 ? rnd_int(0, 1000) : (int64_t)(rnd() % QUILL_QNORM_MAX_EPS);
    for (int64_t i = 0; i < 2 * N; i++)
      gv[i] = (int32_t)(uint32_t)rnd();
  }
  emit(g, "func @f(%%x: tensor<%lldx%lldx%lldx", (long long)B, (long long)M,
       (long long)(K ? K : N));
  qtype16(g, xk, sx, zx);
  emit(g, ">) -> tensor<%lldx%lldx%lldx", (long long)B, (long long)M,
       (long long)N);
  qtype16(g, yk, sy, zy);
  emit(g, "> {\n");
  if (K) {
    emit(g, "  %%i = constant {value = dense<[");
    for (int64_t i = 0; i < N; i++)
      emit(g, "%s%lld", i ? ", " : "", (long long)rnd_int(0, K - 1));
    emit(g, "]> : tensor<%lldxi64>} : tensor<%lldxi64>\n", (long long)N,
         (long long)N);
    emit(g, "  %%v = gather %%x, %%i {axis = 2} : tensor<%lldx%lldx%lldx",
         (long long)B, (long long)M, (long long)N);
    qtype16(g, xk, sx, zx);
    emit(g, ">\n");
  }
  for (int k = 0; k < 2; k++) {
    emit(g, "  %%%c = constant {value = dense<", k ? 'b' : 'g');
    hex_bytes(g, (const uint8_t *)(gv + k * N), (size_t)N * 4);
    emit(g, "> : tensor<%lldxi32>} : tensor<%lldxi32>\n", (long long)N,
         (long long)N);
  }
  emit(g, "  %%y = qlayer_norm %s, %%g, %%b {axis = -1, epsilon_q = %lld, "
          "shift = %d, bias_shift = %d} : tensor<%lldx%lldx%lldx",
       K ? "%v" : "%x", (long long)E, G, F, (long long)B, (long long)M,
       (long long)N);
  qtype16(g, yk, sy, zy);
  emit(g, ">\n  return %%y\n}\n");
  free(gv);
  free(gam);
}

/* qadd / qmul in the float form: random shapes with numpy broadcasting of
 * b, u8/i8 operands and result with any zero points and scales, every
 * rounding, sometimes an activation clamp. */
static void gen_qbin(gen *g) {
  bool add = rnd() % 2;
  int64_t d[4] = {rnd_int(1, 2), rnd_int(1, 9), rnd_int(1, 9), rnd_int(1, 40)};
  int64_t bd[4];
  for (int i = 0; i < 4; i++)
    bd[i] = rnd() % 3 == 0 ? 1 : d[i];
  bool u8[3] = {rnd() % 2, rnd() % 2, rnd() % 2};
  double s[3] = {rnd_range(0.002, 0.1), rnd_range(0.002, 0.1), 0};
  int64_t zp[3];
  for (int i = 0; i < 3; i++)
    zp[i] = u8[i] ? rnd_int(0, 255) : rnd_int(-128, 127);
  s[2] = (add ? s[0] + s[1] : s[0] * s[1] * 128.0) * rnd_range(0.2, 2.5);
  const char *rounding = roundings[rnd() % 3]; /* tflite: fixed point only */
  char sh[3][64];
  for (int k = 0; k < 3; k++) {
    const int64_t *x = k == 1 ? bd : d;
    snprintf(sh[k], sizeof sh[k], "%lldx%lldx%lldx%lld", (long long)x[0],
             (long long)x[1], (long long)x[2], (long long)x[3]);
  }
  emit(g, "func @f(%%a: tensor<%sx", sh[0]);
  qtype(g, u8[0], s[0], zp[0]);
  emit(g, ">, %%b: tensor<%sx", sh[1]);
  qtype(g, u8[1], s[1], zp[1]);
  emit(g, ">) -> tensor<%sx", sh[2]);
  qtype(g, u8[2], s[2], zp[2]);
  emit(g, "> {\n  %%y = %s %%a, %%b {rounding = \"%s\"", add ? "qadd" : "qmul",
       rounding);
  if (rnd() % 3 == 0) {
    int64_t qmin = u8[2] ? 0 : -128, qmax = u8[2] ? 255 : 127;
    int64_t lo = zp[2] - rnd_int(0, 20), hi = zp[2] + rnd_int(5, 60);
    emit(g, ", act_min = %lld, act_max = %lld",
         (long long)(lo < qmin ? qmin : lo), (long long)(hi > qmax ? qmax : hi));
  }
  emit(g, "} : tensor<%sx", sh[2]);
  qtype(g, u8[2], s[2], zp[2]);
  emit(g, ">\n  return %%y\n}\n");
}

/* qmatmul (constant 2-D B) followed by a chain of elementwise ops that
 * fuse_epi.c computes in its epilogue: a qadd (float form, either operand
 * order) of a per-column constant ([N], [1xN] or [1x1xN]) and/or luts,
 * u8/i8 everywhere with any zero points; sometimes the qadd's result is
 * returned too (then the lut after it is not fused). Rows up to 40 so
 * that the AMX kernel's 32-row blocks and partial tiles are reached. */
static void gen_epi(gen *g) {
  int64_t B = rnd() % 3 == 0 ? rnd_int(2, 3) : 0;
  int64_t M = rnd_int(1, 40), K = rnd() % 2 ? 4 * rnd_int(4, 24) : rnd_int(1, 70);
  int64_t N = rnd() % 2 ? 16 * rnd_int(1, 4) : rnd_int(1, 50);
  bool xu8 = rnd() % 2, yu8 = rnd() % 2, cu8 = rnd() % 2, au8 = rnd() % 2;
  bool lu8 = rnd() % 2, bias = rnd() % 2, both = rnd() % 6 == 0;
  int mode = (int)(rnd() % 4); /* qadd, qadd+lut, lut, qadd+lut+lut */
  bool add = mode != 2;
  int nlut = mode == 0 ? 0 : mode == 3 ? 2 : 1;
  unsigned cdims = (unsigned)rnd_int(1, B ? 3 : 2), slot = rnd() % 2;
  const char *rounding = roundings[rnd() % 3];
  int64_t zpx = xu8 ? rnd_int(0, 255) : rnd_int(-128, 127);
  double sx = rnd_range(0.005, 0.05);
  wparams *w = malloc(sizeof *w);
  random_wparams(w, N);
  double sy = sx * w->scales[0] * sqrt((double)K) * 60.0 * rnd_range(0.2, 3.0) /
              127;
  int64_t zpy = yu8 ? rnd_int(0, 255) : rnd_int(-128, 127);
  double sc = rnd_range(0.2, 2.0) * sy, sa = (sy + sc) * rnd_range(0.3, 1.5);
  int64_t zpc = cu8 ? rnd_int(0, 255) : rnd_int(-128, 127);
  int64_t zpa = au8 ? rnd_int(0, 255) : rnd_int(-128, 127);
  char pre[16] = "", ysh[64];
  if (B)
    snprintf(pre, sizeof pre, "%lldx", (long long)B);
  snprintf(ysh, sizeof ysh, "%s%lldx%lld", pre, (long long)M, (long long)N);
  bool lastu8 = nlut ? lu8 : au8;
  emit(g, "func @f(%%a: tensor<%s%lldx%lldx", pre, (long long)M, (long long)K);
  qtype(g, xu8, sx, zpx);
  emit(g, ">) -> (tensor<%sx", ysh);
  qtype(g, lastu8, nlut ? 0.02 : sa, nlut ? 3 : zpa);
  if (both && add && nlut) {
    emit(g, ">, tensor<%sx", ysh);
    qtype(g, au8, sa, zpa);
  }
  emit(g, ">) {\n");
  size_t nb = (size_t)(K * N);
  uint8_t *d = malloc(nb > 256 ? nb : 256);
  for (size_t i = 0; i < nb; i++)
    d[i] = (uint8_t)(w->u8 ? rnd_int(0, 255) : rnd_int(-127, 127));
  emit(g, "  %%b = constant {value = dense<");
  hex_bytes(g, d, nb);
  emit(g, "> : tensor<%lldx%lldx", (long long)K, (long long)N);
  wtype(g, w, 1);
  emit(g, ">} : tensor<%lldx%lldx", (long long)K, (long long)N);
  wtype(g, w, 1);
  emit(g, ">\n");
  if (bias)
    emit_bias(g, "c", N);
  emit(g, "  %%v0 = qmatmul %%a, %%b%s {", bias ? ", %c" : "");
  bool fixed;
  requant_attrs(g, &fixed, sx, w, sy, N, rounding, yu8);
  emit(g, "} : tensor<%sx", ysh);
  qtype(g, yu8, sy, zpy);
  emit(g, ">\n");
  int v = 0;
  if (add) {
    for (int64_t i = 0; i < N; i++)
      d[i] = (uint8_t)rnd_int(cu8 ? 0 : -128, cu8 ? 255 : 127);
    char csh[64];
    snprintf(csh, sizeof csh, "%s%lld", cdims == 3 ? "1x1x" : cdims == 2 ? "1x" : "",
             (long long)N);
    emit(g, "  %%k = constant {value = dense<");
    hex_bytes(g, d, (size_t)N);
    emit(g, "> : tensor<%sx", csh);
    qtype(g, cu8, sc, zpc);
    emit(g, ">} : tensor<%sx", csh);
    qtype(g, cu8, sc, zpc);
    emit(g, ">\n  %%v1 = qadd %s, %s {rounding = \"%s\"} : tensor<%sx",
         slot ? "%k" : "%v0", slot ? "%v0" : "%k", rounding, ysh);
    qtype(g, au8, sa, zpa);
    emit(g, ">\n");
    v = 1;
  }
  for (int l = 0; l < nlut; l++, v++) {
    for (int i = 0; i < 256; i++)
      d[i] = (uint8_t)rnd_int(lu8 ? 0 : -128, lu8 ? 255 : 127);
    emit(g, "  %%v%d = lut %%v%d {table = dense<", v + 1, v);
    hex_bytes(g, d, 256);
    emit(g, "> : tensor<256x%s>} : tensor<%sx", lu8 ? "u8" : "i8", ysh);
    qtype(g, lu8, 0.02, 3);
    emit(g, ">\n");
  }
  emit(g, "  return %%v%d%s\n}\n", v, both && add && nlut ? ", %v1" : "");
  free(d);
  free(w);
}

/* dequantize -> 1 to 3 elementwise f32 ops (mul / add / sub / div by a
 * one-element constant, sigmoid, tanh, relu) -> quantize: fuse_lut.c's
 * table lookup; u8/i8 in and out with any zero points, the input sometimes
 * through a transpose (a strided view), every float rounding. */
static void gen_qlut(gen *g) {
  int64_t A = rnd_int(1, 4), Bd = rnd_int(1, 9), C = rnd_int(1, 40);
  bool xu8 = rnd() % 2, yu8 = rnd() % 2, trans = rnd() % 3 == 0;
  double sx = rnd_range(0.005, 0.1), sy = rnd_range(0.002, 0.05);
  int64_t zpx = xu8 ? rnd_int(0, 255) : rnd_int(-128, 127);
  int64_t zpy = yu8 ? rnd_int(0, 255) : rnd_int(-128, 127);
  const char *rounding = roundings[rnd() % 3];
  int nops = (int)rnd_int(1, 3);
  emit(g, "func @f(%%x: tensor<%lldx%lldx%lldx", (long long)(trans ? Bd : A),
       (long long)(trans ? A : Bd), (long long)C);
  qtype(g, xu8, sx, zpx);
  emit(g, ">) -> tensor<%lldx%lldx%lldx", (long long)A, (long long)Bd,
       (long long)C);
  qtype(g, yu8, sy, zpy);
  emit(g, "> {\n");
  emit_dequant3(g, trans ? "1, 0, 2" : NULL, A, Bd, C, xu8, sx, zpx, "v0");
  static const char *const bin[4] = {"mul", "add", "sub", "div"};
  static const char *const un[3] = {"sigmoid", "tanh", "relu"};
  for (int i = 0; i < nops; i++) {
    int k = (int)(rnd() % 7);
    if (k < 4) {
      double v = k == 3 ? rnd_range(0.5, 8.0) : rnd_range(-2.0, 2.0);
      bool first = k != 3 && rnd() % 2;
      const char *csh = rnd() % 2 ? "1x" : "";
      emit(g, "  %%c%d = constant {value = dense<%.6g> : tensor<%sf32>} : "
              "tensor<%sf32>\n",
           i, v, csh, csh);
      emit(g, "  %%v%d = %s %s%d, %s%d : tensor<%lldx%lldx%lldxf32>\n", i + 1,
           bin[k], first ? "%c" : "%v", i, first ? "%v" : "%c", i,
           (long long)A, (long long)Bd, (long long)C);
    } else {
      emit(g, "  %%v%d = %s %%v%d : tensor<%lldx%lldx%lldxf32>\n", i + 1,
           un[k - 4], i, (long long)A, (long long)Bd, (long long)C);
    }
  }
  emit(g, "  %%y = quantize %%v%d {rounding = \"%s\"} : tensor<%lldx%lldx%lldx",
       nops, rounding, (long long)A, (long long)Bd, (long long)C);
  qtype(g, yu8, sy, zpy);
  emit(g, ">\n  return %%y\n}\n");
}

/* ---- qconv2d -> qadd (a residual block's end, fuse_add.c) --------------- */

/* A constant weight of M x Cg x K x K (i8 per tensor, centered). */
static void const_weight(gen *g, const char *name, int64_t M, int64_t Cg,
                         int64_t K, double scale) {
  size_t n = (size_t)(M * Cg * K * K);
  uint8_t *d = malloc(n);
  for (size_t i = 0; i < n; i++)
    d[i] = (uint8_t)rnd_int(-127, 127);
  emit(g, "  %%%s = constant {value = dense<", name);
  hex_bytes(g, d, n);
  emit(g, "> : tensor<%lldx%lldx%lldx%lldx", (long long)M, (long long)Cg,
       (long long)K, (long long)K);
  qtype(g, false, scale, 0);
  emit(g, ">} : tensor<%lldx%lldx%lldx%lldx", (long long)M, (long long)Cg,
       (long long)K, (long long)K);
  qtype(g, false, scale, 0);
  emit(g, ">\n");
  free(d);
}

/* A conv whose one user is a qadd with a tensor computed before it (a 1x1
 * conv of a second input, so channels-last like a ResNet skip) and whose
 * sum feeds a 1x1 conv: the qadd runs in the conv's epilogue on the dot
 * and amx paths (with the two convs' order swapped, or the sum also
 * returned, it is its own stage). Any conv geometry and requantization,
 * M channels with partial vectors, u8/i8 everywhere, the qadd's float
 * form with every rounding and sometimes a relu-like clamp. */
static void gen_qconv_add(gen *g) {
  int64_t N = rnd_int(1, 2);
  int64_t C = rnd() % 2 ? 4 * rnd_int(1, 12) : rnd_int(1, 20);
  int64_t M = rnd() % 2 ? 16 * rnd_int(1, 4) : rnd_int(1, 70);
  int64_t K = rnd() % 3 ? 3 : 1, st = rnd_int(1, 2);
  int64_t pad = K == 3 ? rnd_int(0, 1) : 0;
  int64_t H = rnd_int(K, 13), W = rnd_int(K, 13);
  int64_t OH = (H + 2 * pad - K) / st + 1, OW = (W + 2 * pad - K) / st + 1;
  int64_t C2 = rnd_int(1, 24), M3 = rnd_int(1, 20);
  bool u8x = rnd() % 2, u8r = rnd() % 2, u8y = rnd() % 2, u8s = rnd() % 2,
       u8a = rnd() % 2;
  double sx = rnd_range(0.005, 0.05), sr = rnd_range(0.005, 0.05);
  double sy = rnd_range(0.02, 0.3), ss = rnd_range(0.02, 0.3);
  double sa = (sy + ss) * rnd_range(0.3, 1.5), sz = rnd_range(0.05, 0.5);
  int64_t zpx = u8x ? rnd_int(0, 255) : rnd_int(-128, 127);
  int64_t zpr = u8r ? rnd_int(0, 255) : rnd_int(-128, 127);
  int64_t zpy = u8y ? rnd_int(0, 255) : rnd_int(-128, 127);
  int64_t zps = u8s ? rnd_int(0, 255) : rnd_int(-128, 127);
  int64_t zpa = u8a ? rnd_int(0, 255) : rnd_int(-128, 127);
  bool skip_first = rnd() % 4 != 0, conv_lhs = rnd() % 2,
       ret_sum = rnd() % 5 == 0;
  const char *rnd_a = roundings[rnd() % 3]; /* the float form */
  char xs[64], rs[64], ys[64], zs[64];
  snprintf(xs, sizeof xs, "%lldx%lldx%lldx%lld", (long long)N, (long long)C,
           (long long)H, (long long)W);
  snprintf(rs, sizeof rs, "%lldx%lldx%lldx%lld", (long long)N, (long long)C2,
           (long long)OH, (long long)OW);
  snprintf(ys, sizeof ys, "%lldx%lldx%lldx%lld", (long long)N, (long long)M,
           (long long)OH, (long long)OW);
  snprintf(zs, sizeof zs, "%lldx%lldx%lldx%lld", (long long)N, (long long)M3,
           (long long)OH, (long long)OW);
  emit(g, "func @f(%%x: tensor<%sx", xs);
  qtype(g, u8x, sx, zpx);
  emit(g, ">, %%r: tensor<%sx", rs);
  qtype(g, u8r, sr, zpr);
  emit(g, ">) -> (tensor<%sx", zs);
  qtype(g, true, sz, 0);
  if (ret_sum) {
    emit(g, ">, tensor<%sx", ys);
    qtype(g, u8a, sa, zpa);
  }
  emit(g, ">) {\n");
  const_weight(g, "w1", M, C2, 1, rnd_range(0.002, 0.02));
  const_weight(g, "w", M, C, K, rnd_range(0.002, 0.02));
  const_weight(g, "w3", M3, M, 1, rnd_range(0.002, 0.02));
  for (int k = 0; k < 2; k++) {
    if ((k == 0) == skip_first) {
      emit(g, "  %%s = qconv2d %%r, %%w1 {rounding = \"half_even\"} : "
              "tensor<%sx", ys);
      qtype(g, u8s, ss, zps);
      emit(g, ">\n");
    } else {
      emit(g, "  %%y = qconv2d %%x, %%w {strides = [%lld, %lld], pads = "
              "[%lld, %lld, %lld, %lld], ",
           (long long)st, (long long)st, (long long)pad, (long long)pad,
           (long long)pad, (long long)pad);
      wparams *w = malloc(sizeof *w);
      random_wparams(w, M);
      w->u8 = false;
      w->axis = false;
      w->n = 1;
      w->zps[0] = 0;
      bool fixed;
      requant_attrs(g, &fixed, sx, w, sy, M, roundings[rnd() % 4], u8y);
      free(w);
      emit(g, "} : tensor<%sx", ys);
      qtype(g, u8y, sy, zpy);
      emit(g, ">\n");
    }
  }
  emit(g, "  %%a = qadd %s {rounding = \"%s\"",
       conv_lhs ? "%y, %s" : "%s, %y", rnd_a);
  if (rnd() % 2) { /* relu: the result's zero point as act_min */
    int64_t qmax = u8a ? 255 : 127;
    emit(g, ", act_min = %lld, act_max = %lld", (long long)zpa,
         (long long)qmax);
  }
  emit(g, "} : tensor<%sx", ys);
  qtype(g, u8a, sa, zpa);
  emit(g, ">\n  %%z = qconv2d %%a, %%w3 {rounding = \"half_even\"} : "
          "tensor<%sx", zs);
  qtype(g, true, sz, 0);
  emit(g, ">\n  return %%z%s\n}\n", ret_sum ? ", %a" : "");
}

/* A deterministic conv big enough that its stage is estimated above the
 * threaded entry's minimum and goes through quill_rt_parallel_for:
 * 1x32x24x24 u8 -> 64 channels, 3x3, pads 1, per-channel i8 weights in
 * [-64, 64], so that no pair can saturate 16 bits and the avx2 path takes
 * vpmaddubsw (the random graphs' weights take vpmaddwd there). */
static void gen_big_conv(gen *g) {
  const int64_t C = 32, M = 64, H = 24, W = 24;
  wparams *w = malloc(sizeof *w);
  random_wparams(w, M);
  w->u8 = false;
  w->axis = true;
  w->n = M;
  for (int64_t c = 0; c < M; c++) {
    w->scales[c] = rnd_range(0.002, 0.05);
    w->zps[c] = 0;
  }
  double sx = 0.02, sy = sx * w->scales[0] * sqrt(9.0 * C) * 60.0 / 127;
  emit(g, "func @f(%%x: tensor<1x%lldx%lldx%lldx", (long long)C, (long long)H,
       (long long)W);
  qtype(g, true, sx, 3);
  emit(g, ">) -> tensor<1x%lldx%lldx%lldx", (long long)M, (long long)H,
       (long long)W);
  qtype(g, true, sy, 128);
  emit(g, "> {\n  %%w = constant {value = dense<");
  size_t nw = (size_t)(M * C * 9);
  uint8_t *d = malloc(nw);
  for (size_t i = 0; i < nw; i++)
    d[i] = (uint8_t)rnd_int(-64, 64);
  hex_bytes(g, d, nw);
  free(d);
  emit(g, "> : tensor<%lldx%lldx3x3x", (long long)M, (long long)C);
  wtype(g, w, 0);
  emit(g, ">} : tensor<%lldx%lldx3x3x", (long long)M, (long long)C);
  wtype(g, w, 0);
  emit(g, ">\n  %%y = qconv2d %%x, %%w {group = 1, strides = [1, 1], "
          "dilations = [1, 1], pads = [1, 1, 1, 1], ");
  bool fixed;
  requant_attrs(g, &fixed, sx, w, sy, M, "half_even", true);
  emit(g, "} : tensor<1x%lldx%lldx%lldx", (long long)M, (long long)H,
       (long long)W);
  qtype(g, true, sy, 128);
  emit(g, ">\n  return %%y\n}\n");
  free(w);
}

/* ---- qlstm ----------------------------------------------------------------- */

/* TFLite's integer LSTM (lower_qlstm.c): hidden 8/16/32, 1 or 5 steps,
 * batch 1 or 2, any cell_shift; a third saturating (weights up to 127:
 * saturated gate sums and cell states, y at 1/256 saturating too). */
static void gen_qlstm(gen *g) {
  static const int64_t hs[3] = {8, 16, 32};
  int64_t h = hs[rnd() % 3], seq = rnd() % 2 ? 5 : 1, batch = rnd_int(1, 2);
  int64_t nin = rnd_int(1, 24), cell = rnd_int(-15, -9);
  bool sat = rnd() % 3 == 0;
  int lim = sat ? 127 : 40;
  double sx = rnd_range(0.02, 0.1), sw = rnd_range(0.002, 0.008);
  double sr = rnd_range(0.002, 0.008), sy = sat ? 1.0 / 256 : 1.0 / 128;
  int64_t zx = rnd_int(-20, 20), zy = rnd_int(-10, 10);
  emit(g, "func @f(%%x: tensor<%lldx%lldx%lldx", (long long)seq,
       (long long)batch, (long long)nin);
  qtype(g, false, sx, zx);
  emit(g, ">) -> tensor<%lldx%lldx%lldx", (long long)seq, (long long)batch,
       (long long)h);
  qtype(g, false, sy, zy);
  emit(g, "> {\n");
  for (int k = 0; k < 2; k++) {
    int64_t cols = k ? h : nin;
    size_t n = (size_t)(4 * h * cols);
    uint8_t *d = malloc(n);
    for (size_t i = 0; i < n; i++)
      d[i] = (uint8_t)rnd_int(-lim, lim);
    emit(g, "  %%%c = constant {value = dense<", k ? 'r' : 'w');
    hex_bytes(g, d, n);
    for (int t = 0; t < 2; t++)
      emit(g, "%s : tensor<%lldx%lldx!quant.uniform<i8<-127:127>:f32, "
              "%.9g:0>>",
           t ? "}" : ">", (long long)(4 * h), (long long)cols, k ? sr : sw);
    emit(g, "\n");
    free(d);
  }
  emit_bias(g, "b", 4 * h);
  emit(g, "  %%y = qlstm %%x, %%w, %%r, %%b {cell_shift = %lld} : "
          "tensor<%lldx%lldx%lldx",
       (long long)cell, (long long)seq, (long long)batch, (long long)h);
  qtype(g, false, sy, zy);
  emit(g, ">\n  return %%y\n}\n");
}

/* --write DIR: the graphs as files (llvm_harness.h's write_case). */
static int write_cases(const char *dir, int ncases) {
  int bad = 0;
  for (int i = 0; i <= 4 * ncases; i++) {
    gen g = {malloc(4096), 0, 4096, false};
    g.buf[0] = '\0';
    char name[32];
    if (i == 4 * ncases) {
      gen_big_conv(&g);
      snprintf(name, sizeof name, "big");
    } else {
      if (i % 4 == 0)
        gen_qconv(&g);
      else if (i % 4 == 1)
        gen_qmatmul(&g);
      else if (i % 4 == 2)
        gen_qbin(&g);
      else
        gen_qmatmul_act(&g);
      snprintf(name, sizeof name, "case%03d", i);
    }
    llvm_case c = {name, g.buf, 0, QUILL_LLVM_ISA_AUTO, 1, 0, false};
    bad += !write_case(dir, name, &c);
    free(g.buf);
  }
  printf("test_llvm_qrandom: wrote %d cases and big.qir to %s\n", 4 * ncases,
         dir);
  return bad != 0;
}

int main(int argc, char **argv) {
  const char *e = getenv("QUILL_LLVM_RANDOM_CASES");
  int ncases = e ? atoi(e) : 60;
  e = getenv("QUILL_LLVM_RANDOM_SEED");
  rng_state ^= e ? (uint64_t)strtoull(e, NULL, 10) * 0x9E3779B97F4A7C15ull : 0;
  if (!rng_state)
    rng_state = 1;
  if (argc == 3 && !strcmp(argv[1], "--write"))
    return write_cases(argv[2], ncases);
  quill_llvm_isa isas[QUILL_LLVM_ISA_COUNT];
  unsigned nisa = host_isas(isas);
  printf("test_llvm_qrandom: %d cases per op on", ncases);
  for (unsigned k = 0; k < nisa; k++)
    printf(" %s", quill_llvm_isa_name(isas[k]));
  printf("\n");
  for (int op = 0; op < 12; op++)
    for (int i = 0; i < (op == 11  ? (ncases + 14) / 15
                         : op == 10 ? (ncases + 9) / 10
                         : op == 9 ? (ncases + 19) / 20
                         : op == 8 ? (ncases + 9) / 10
                         : op == 7 ? (ncases + 1) / 2
                         : op >= 4 ? (ncases + 2) / 3
                                   : ncases);
         i++) {
      gen g = {NULL, 0, 0, false};
      g.cap = 4096;
      g.buf = malloc(g.cap);
      g.buf[0] = '\0';
      if (op == 0)
        gen_qconv(&g);
      else if (op == 1)
        gen_qmatmul(&g);
      else if (op == 2)
        gen_qbin(&g);
      else if (op == 3)
        gen_qmatmul_act(&g);
      else if (op == 4 && rnd() % 3 == 0)
        gen_qlnorm(&g);
      else if (op == 4)
        gen_qnorm(&g);
      else if (op == 5)
        gen_epi(&g);
      else if (op == 6)
        gen_qlut(&g);
      else if (op == 7)
        gen_qconv_add(&g);
      else if (op == 8)
        gen_qdw(&g);
      else if (op == 9) /* 33-48 rows (32 + a partial tile) or ViT's 197 */
        gen_qmatmul_m(&g, rnd() % 2 ? 197 : rnd_int(33, 48));
      else if (op == 10) { /* weights whose few unsafe pairs avx2 splits */
        g.wsparse = true;
        gen_qconv(&g);
      } else
        gen_qlstm(&g);
      char name[64];
      static const char *const opn[12] = {"qconv2d", "qmatmul", "qadd/qmul",
                                          "qmatmul-act", "qnorm", "epi",
                                          "qlut", "qconv-add", "qdw",
                                          "qmatmul-tall", "qconv-ubsw",
                                          "qlstm"};
      snprintf(name, sizeof name, "%s#%d", opn[op], i);
      bool bad = false;
      for (unsigned k = 0; k < nisa; k++) {
        llvm_case c = {name, g.buf, 0, isas[k], (i % 7 == 0) ? 2 : 1, 0,
                       false};
        bool ok = run_case(&c);
        CHECK(ok);
        bad |= !ok;
      }
      if (bad)
        fprintf(stderr, "---- failing case %s:\n%s\n", name, g.buf);
      free(g.buf);
    }
  printf("test_llvm_qrandom: %d checks, %d failures\n", checks, failures);
  return failures != 0;
}
