/*
 * test_llvm_qrandom.c - randomized bit-exactness of the LLVM target's
 * integer kernels against the reference interpreter: one-op graphs.
 *
 * A generator (qrandom_gen.h's text emitter) draws, in this order:
 *
 *   qconv2d  N, C, H, W, kernel, strides, dilations, pads (asymmetric),
 *            groups (1, depthwise with channel multiplier, or any divisor),
 *            u8/i8 activations with any zero point, i8/u8 weights per
 *            tensor or per output channel with zero or random zero points,
 *            constant or runtime weights and bias, no bias, quantized u8/i8
 *            or raw i32 results; deep 3x3 convs (256-320 channels, 49-96
 *            out: K blocking on the zmm paths); wide rows, K chunks and 7x7
 *            row windows (kind 6: the amx path's cases)
 *   qmatmul  batched A, constant or runtime B (2-D or batched), per-column
 *            weights, bias
 *   qadd/qmul  the float form, u8/i8 operands with numpy broadcasting
 *   qmatmul-act  two activations (runtime B per tensor, u8/i8, any zero
 *            points), batched or broadcast B, B through a transpose view,
 *            attention shapes (64 x 64 x ~64): qmatmul_act.c's kernels
 *   qdw      depthwise qconv2d with the f32 half_even requantization and
 *            s8-range weights (conv_dw4.c's vpdpbusd kernel on the zmm
 *            paths), channels 1..150, kernels up to 5x5 (a tenth as many)
 *   qmatmul-tall  qmatmul with 33-48 or 197 rows: the AMX kernel's last
 *            block of one A tile row (a twentieth as many cases)
 *   qconv-ubsw  small qconv2d with s8 weights mostly small and a few large,
 *            whose unsafe vpmaddubsw pairs the avx2 path splits
 *            (conv_ubsw.c; a tenth as many)
 *   qlstm    TFLite's integer LSTM (lower_qlstm.c): hidden 8/16/32, 1 or 5
 *            steps, batch 1 or 2, any cell_shift, a third saturating (a
 *            fifteenth as many cases)
 *
 * and a requantization: every rounding policy, fixed point (multiplier and
 * shift from the scales, or random within the verifier's range) or f32
 * scale, fused activation clamps (act_min/act_max), output scales spread
 * so that results both fit and saturate. Each graph runs on every
 * instruction path this machine can execute (portable, avx2, avx-vnni,
 * avx512-vnni, amx) and every output byte must equal the reference's
 * (qrandom_gen.h's driver). QUILL_LLVM_RANDOM_CASES scales the number of
 * graphs, QUILL_LLVM_RANDOM_SEED changes the seed; a failing case prints
 * its .qir. The fused chains (qnorm, epi, qlut, qconv-add) are drawn by
 * test_llvm_qrandom_fused.c.
 *
 * `test_llvm_qrandom --write DIR` runs nothing: it writes the same graphs
 * (QUILL_LLVM_RANDOM_CASES per op, cycling qconv2d, qmatmul, qadd/qmul,
 * qmatmul-act) as DIR/caseNNN.qir with random inputs DIR/caseNNN.inK.npy
 * and the reference's outputs DIR/caseNNN.refK.npy, plus DIR/big.qir, a
 * 3x3 conv large enough that `--threads 2` code hands it to the thread
 * pool. scripts/test-qemu.sh compiles them for other CPUs and runs them
 * under qemu against `quill run`.
 */
#include "qrandom_gen.h"

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

static void draw(gen *g, int op) {
  if (op == 0)
    gen_qconv(g);
  else if (op == 1)
    gen_qmatmul(g);
  else if (op == 2)
    gen_qbin(g);
  else if (op == 3)
    gen_qmatmul_act(g);
  else if (op == 4)
    gen_qdw(g);
  else if (op == 5) /* 33-48 rows (32 + a partial tile) or ViT's 197 */
    gen_qmatmul_m(g, rnd() % 2 ? 197 : rnd_int(33, 48));
  else if (op == 6) { /* weights whose few unsafe pairs avx2 splits */
    g->wsparse = true;
    gen_qconv(g);
  } else
    gen_qlstm(g);
}

int main(int argc, char **argv) {
  int ncases = qrandom_setup();
  if (argc == 3 && !strcmp(argv[1], "--write"))
    return write_cases(argv[2], ncases);
  static const char *const names[8] = {"qconv2d",   "qmatmul",
                                       "qadd/qmul", "qmatmul-act",
                                       "qdw",       "qmatmul-tall",
                                       "qconv-ubsw", "qlstm"};
  static const int share[8] = {1, 1, 1, 1, 10, 20, 10, 15};
  return qrandom_run("test_llvm_qrandom", ncases, 8, names, share, draw);
}
