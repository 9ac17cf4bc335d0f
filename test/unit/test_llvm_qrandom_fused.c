/*
 * test_llvm_qrandom_fused.c - randomized bit-exactness of the LLVM
 * target's fused integer chains against the reference interpreter.
 *
 * A generator (qrandom_gen.h's text emitter) draws, in this order:
 *
 *   qnorm    dequantize -> softmax / layer_norm -> quantize, the fused
 *            loops of fuse_qdq.c, or (a third of those) the integer
 *            qlayer_norm: rows of 1..800, u8/i8/i16 in, random gamma,
 *            beta, epsilon and scales folded by quill_qnorm_fold or random
 *            in the verifier's ranges, rows of one or a few distinct
 *            values (variance 0) through a gather
 *   epi      qmatmul (constant B) -> qadd of a per-column constant / lut
 *            chains computed in the qmatmul's epilogue (fuse_epi.c)
 *   qlut     dequantize -> elementwise f32 ops -> quantize, one table
 *            lookup (fuse_lut.c)
 *            (qnorm, epi and qlut: a third as many cases each as the
 *            one-op graphs of test_llvm_qrandom.c)
 *   qconv-add  qconv2d -> qadd (+ relu) -> 1x1 qconv2d, the residual add
 *            in the conv's epilogue (fuse_add.c), or its own stage where
 *            the path or the graph does not allow it (half as many cases)
 *
 * with u8/i8 operands and any zero points, every rounding policy and
 * fixed-point or f32 requantizations. Each graph runs on every
 * instruction path this machine can execute (portable, avx2, avx-vnni,
 * avx512-vnni, amx), every 7th with 2 threads, and every output byte must
 * equal the reference's (qrandom_gen.h's driver). QUILL_LLVM_RANDOM_CASES
 * scales the number of graphs, QUILL_LLVM_RANDOM_SEED changes the seed; a
 * failing case prints its .qir.
 */
#include "ir/qnorm.h"
#include "qrandom_gen.h"

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

static void draw(gen *g, int op) {
  if (op == 0 && rnd() % 3 == 0)
    gen_qlnorm(g);
  else if (op == 0)
    gen_qnorm(g);
  else if (op == 1)
    gen_epi(g);
  else if (op == 2)
    gen_qlut(g);
  else
    gen_qconv_add(g);
}

int main(void) {
  int ncases = qrandom_setup();
  static const char *const names[4] = {"qnorm", "epi", "qlut", "qconv-add"};
  static const int share[4] = {3, 3, 3, 2};
  return qrandom_run("test_llvm_qrandom_fused", ncases, 4, names, share,
                     draw);
}
