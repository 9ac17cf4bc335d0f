/*
 * test_ref_qkernels_random.c - randomized cross-check of the reference
 * target's qconv2d and qmatmul kernels (targets/reference/kernels_qlinear.c)
 * against a naive formula written here.
 *
 * 400 random qconv2d cases (groups, depthwise, strides, dilations, pads,
 * auto_pad) and 400 random qmatmul cases (batched and broadcast shapes),
 * from one seeded xorshift stream: random storage types (u8, i8, i16 -
 * which takes the int64 fallback when products get large - and u4), zero
 * points, per-tensor or per-channel weights, requantization parameters
 * (every rounding policy, float or fixed point) and biases, each output
 * compared element for element with
 *
 *   acc = (int32)(sum (x - zp_x)(w - zp_w) + bias)   (exact, then mod 2^32)
 *   y   = clamp(zp_y + quill_requant_{float,fixed}(acc, ...), qmin, qmax)
 *
 * Each case is a one-op .qir function whose operands are graph arguments,
 * filled with random values and evaluated by the harness
 * (ref_qkernels_harness.h); one check per case. The hand-checked cases are
 * test_ref_qkernels.c.
 */
#include "test/unit/ref_qkernels_harness.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void) { return xorshift64(&rng); }
static int64_t rnd_in(int64_t lo, int64_t hi) {
  return xorshift_in(&rng, lo, hi);
}

/* A storage type with its range and a value range to draw from. */
typedef struct storage {
  const char *name;
  int64_t lo, hi;
} storage;
static const storage storages[] = {
    {"u8", 0, 255}, {"i8", -128, 127}, {"i16", -32768, 32767}, {"u4", 0, 15},
};

static storage pick_storage(bool wide) {
  /* mostly 8-bit; i16 sometimes (full range takes the int64 path,
   * a narrow value range the f32 engine with short K blocks) */
  int64_t r = rnd_in(0, 9);
  storage s = storages[r < 5 ? 0 : r < 8 ? 1 : r < 9 && wide ? 2 : 3];
  if (s.lo == -32768 && rnd() % 2) {
    s.lo = -1500;
    s.hi = 1500;
  }
  return s;
}

/* Append printf output to a growing text buffer. */
typedef struct text {
  char buf[16384];
  size_t n;
} text;
static void put(text *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(t->buf + t->n, sizeof t->buf - t->n, fmt, ap);
  va_end(ap);
  if (k > 0)
    t->n += (size_t)k < sizeof t->buf - t->n ? (size_t)k : sizeof t->buf - t->n - 1;
}

/* Quantization of one operand: per tensor or per axis (n params). */
typedef struct qparam {
  storage st;
  size_t n;
  double scale[16];
  int64_t zp[16];
} qparam;

static void make_qparam(qparam *q, storage st, size_t n) {
  q->st = st;
  q->n = n;
  for (size_t i = 0; i < n; i++) {
    q->scale[i] = (double)rnd_in(1, 1000) / 4096.0;
    q->zp[i] = rnd_in(st.lo, st.hi);
    if (rnd() % 3 == 0) /* quantized ranges often center on 0 */
      q->zp[i] = st.lo < 0 ? 0 : (st.hi + 1) / 2;
  }
}

static void put_qtype(text *t, const qparam *q, int axis) {
  const char *base = q->st.name;
  if (axis < 0) {
    put(t, "!quant.uniform<%s:f32, %.17g:%lld>", base, q->scale[0],
        (long long)q->zp[0]);
    return;
  }
  put(t, "!quant.uniform<%s:f32:%d, {", base, axis);
  for (size_t i = 0; i < q->n; i++)
    put(t, "%s%.17g:%lld", i ? ", " : "", q->scale[i], (long long)q->zp[i]);
  put(t, "}>");
}

/* The result: i32 or quantized, with a requantization policy. */
typedef struct result {
  bool raw;
  qparam q;          /* per tensor */
  quill_rounding r;
  bool fixed;
  size_t nfixed;
  int64_t mult[16], shift[16];
} result;

static void make_result(result *res, size_t nch) {
  memset(res, 0, sizeof *res);
  res->raw = rnd() % 3 == 0;
  if (res->raw)
    return;
  make_qparam(&res->q, storages[rnd() % 2], 1);
  res->q.scale[0] = (double)rnd_in(1, 1000) / 64.0;
  res->r = (quill_rounding)(rnd() % 4);
  res->fixed = rnd() % 2;
  res->nfixed = rnd() % 2 ? 1 : nch;
  for (size_t i = 0; i < res->nfixed; i++) {
    res->mult[i] = rnd_in(INT64_C(1) << 30, (INT64_C(1) << 31) - 1);
    res->shift[i] = rnd_in(-14, 1);
  }
}

static void put_result_attrs(text *t, const result *res) {
  if (res->raw)
    return;
  static const char *names[] = {"half_even", "half_away", "half_up", "tflite"};
  put(t, "rounding = \"%s\"", names[res->r]);
  if (!res->fixed)
    return;
  put(t, ", multiplier = [");
  for (size_t i = 0; i < res->nfixed; i++)
    put(t, "%s%lld", i ? ", " : "", (long long)res->mult[i]);
  put(t, "], shift = [");
  for (size_t i = 0; i < res->nfixed; i++)
    put(t, "%s%lld", i ? ", " : "", (long long)res->shift[i]);
  put(t, "]");
}

static void put_result_type(text *t, const result *res) {
  if (res->raw)
    put(t, "i32");
  else
    put_qtype(t, &res->q, -1);
}

/* The naive requantization of an exact sum for channel c. */
static int64_t naive_finish(const result *res, double s_x, const qparam *wq,
                            size_t c, int64_t sum, int64_t bias) {
  int32_t acc = (int32_t)(uint32_t)(uint64_t)(sum + bias);
  if (res->raw)
    return acc;
  int64_t v;
  if (res->fixed) {
    size_t i = res->nfixed == 1 ? 0 : c;
    v = quill_requant_fixed(acc, (int32_t)res->mult[i], (int)res->shift[i],
                            res->r);
  } else {
    float s = quill_requant_scale_f32(s_x, wq->scale[wq->n == 1 ? 0 : c],
                                      res->q.scale[0]);
    v = quill_requant_float(acc, s, res->r);
  }
  int64_t lo = res->q.st.lo, hi = res->q.st.hi;
  v = quill_clamp_i64(v, -(INT64_C(1) << 40), INT64_C(1) << 40) + res->q.zp[0];
  return quill_clamp_i64(v, lo, hi);
}

static void fill_random(quill_tensor *t, int64_t *vals, storage st) {
  size_t n = quill_tensor_num_elements(t);
  for (size_t i = 0; i < n; i++) {
    vals[i] = rnd_in(st.lo, st.hi);
    quill_tensor_set_i64(t, i, vals[i]);
  }
}

static bool compare_all(run *r, const int64_t *want, size_t n,
                        const char *src) {
  if (r->st != QUILL_OK || quill_tensor_num_elements(&r->out[0]) != n) {
    fprintf(stderr, "  status %d '%s'\n%s", (int)r->st, r->diag, src);
    return false;
  }
  for (size_t i = 0; i < n; i++)
    if (quill_tensor_get_i64(&r->out[0], i) != want[i]) {
      fprintf(stderr, "  element %zu: got %lld, want %lld\n%s", i,
              (long long)quill_tensor_get_i64(&r->out[0], i),
              (long long)want[i], src);
      return false;
    }
  return true;
}

static void random_qconv(void) {
  size_t group = (size_t)rnd_in(1, 3), Cg = (size_t)rnd_in(1, 4);
  size_t Mg = (size_t)rnd_in(1, 3);
  if (rnd() % 3 == 0) { /* depthwise */
    Cg = 1;
    group = (size_t)rnd_in(1, 6);
    Mg = (size_t)rnd_in(1, 2);
  }
  size_t C = group * Cg, M = group * Mg, N = (size_t)rnd_in(1, 2);
  size_t H = (size_t)rnd_in(1, 9), W = (size_t)rnd_in(1, 9);
  size_t kh = (size_t)rnd_in(1, 4), kw = (size_t)rnd_in(1, 4);
  int64_t sh = rnd_in(1, 3), sw = rnd_in(1, 3), dh = rnd_in(1, 2),
          dw = rnd_in(1, 2);
  int64_t pads[4] = {rnd_in(0, 2), rnd_in(0, 2), rnd_in(0, 2), rnd_in(0, 2)};
  int auto_pad = rnd() % 5 == 0 ? (int)rnd_in(1, 2) : 0; /* UPPER, LOWER */
  if (auto_pad) {
    int64_t in[2] = {(int64_t)H, (int64_t)W}, k[2] = {(int64_t)kh, (int64_t)kw};
    int64_t s[2] = {sh, sw}, d[2] = {dh, dw};
    for (int a = 0; a < 2; a++) {
      int64_t out = (in[a] + s[a] - 1) / s[a];
      int64_t total = (out - 1) * s[a] + d[a] * (k[a] - 1) + 1 - in[a];
      total = total < 0 ? 0 : total;
      pads[a] = auto_pad == 1 ? total / 2 : total - total / 2;
      pads[a + 2] = total - pads[a];
    }
  }
  int64_t eh = dh * ((int64_t)kh - 1) + 1, ew = dw * ((int64_t)kw - 1) + 1;
  if ((int64_t)H + pads[0] + pads[2] < eh || (int64_t)W + pads[1] + pads[3] < ew)
    return; /* no output */
  size_t OH = (size_t)(((int64_t)H + pads[0] + pads[2] - eh) / sh + 1);
  size_t OW = (size_t)(((int64_t)W + pads[1] + pads[3] - ew) / sw + 1);
  qparam xq, wq;
  make_qparam(&xq, pick_storage(true), 1);
  bool per_ch = rnd() % 2;
  make_qparam(&wq, pick_storage(true), per_ch ? M : 1);
  if (rnd() % 8 == 0) /* a scale product that hits ties often */
    wq.scale[0] = xq.scale[0] = 0.5;
  result res;
  make_result(&res, M);
  bool has_bias = rnd() % 2;

  text t = {{0}, 0};
  put(&t, "func @f(%%x: tensor<%zux%zux%zux%zux", N, C, H, W);
  put_qtype(&t, &xq, -1);
  put(&t, ">, %%w: tensor<%zux%zux%zux%zux", M, Cg, kh, kw);
  put_qtype(&t, &wq, per_ch ? 0 : -1);
  put(&t, ">");
  if (has_bias)
    put(&t, ", %%b: tensor<%zuxi32>", M);
  put(&t, ") -> tensor<%zux%zux%zux%zux", N, M, OH, OW);
  put_result_type(&t, &res);
  put(&t, "> {\n  %%y = qconv2d %%x, %%w%s {strides = [%lld, %lld], "
          "dilations = [%lld, %lld], group = %zu",
      has_bias ? ", %b" : "", (long long)sh, (long long)sw, (long long)dh,
      (long long)dw, group);
  if (auto_pad)
    put(&t, ", auto_pad = \"%s\"", auto_pad == 1 ? "SAME_UPPER" : "SAME_LOWER");
  else
    put(&t, ", pads = [%lld, %lld, %lld, %lld]", (long long)pads[0],
        (long long)pads[1], (long long)pads[2], (long long)pads[3]);
  if (!res.raw)
    put(&t, ", ");
  put_result_attrs(&t, &res);
  put(&t, "} : tensor<%zux%zux%zux%zux", N, M, OH, OW);
  put_result_type(&t, &res);
  put(&t, ">\n  return %%y\n}\n");

  run r;
  if (!setup(&r, t.buf)) {
    CHECK(!"setup");
    run_free(&r);
    return;
  }
  size_t nx = N * C * H * W, nw = M * Cg * kh * kw, ny = N * M * OH * OW;
  int64_t *x = malloc(nx * sizeof *x), *w = malloc(nw * sizeof *w);
  int64_t *b = calloc(M, sizeof *b), *want = malloc(ny * sizeof *want);
  fill_random(&r.args[0], x, xq.st);
  fill_random(&r.args[1], w, wq.st);
  if (has_bias)
    for (size_t m = 0; m < M; m++) {
      b[m] = rnd() % 8 ? rnd_in(-100000, 100000)
                       : rnd_in(INT32_MIN, INT32_MAX); /* wraps */
      quill_tensor_set_i64(&r.args[2], m, b[m]);
    }
  for (size_t n = 0; n < N; n++)
    for (size_t m = 0; m < M; m++)
      for (size_t oh = 0; oh < OH; oh++)
        for (size_t ow = 0; ow < OW; ow++) {
          int64_t sum = 0, zw = wq.zp[per_ch ? m : 0];
          size_t gr = m / Mg;
          for (size_t c = 0; c < Cg; c++)
            for (size_t i = 0; i < kh; i++)
              for (size_t j = 0; j < kw; j++) {
                int64_t ih = (int64_t)oh * sh - pads[0] + (int64_t)i * dh;
                int64_t iw = (int64_t)ow * sw - pads[1] + (int64_t)j * dw;
                if (ih < 0 || iw < 0 || ih >= (int64_t)H || iw >= (int64_t)W)
                  continue;
                int64_t xv = x[((n * C + gr * Cg + c) * H + (size_t)ih) * W +
                               (size_t)iw];
                int64_t wv = w[((m * Cg + c) * kh + i) * kw + j];
                sum += (xv - xq.zp[0]) * (wv - zw);
              }
          want[((n * M + m) * OH + oh) * OW + ow] =
              naive_finish(&res, xq.scale[0], &wq, m, sum, b[m]);
        }
  eval(&r);
  CHECK(compare_all(&r, want, ny, t.buf));
  free(x);
  free(w);
  free(b);
  free(want);
  run_free(&r);
}

static void put_dims(text *t, const size_t *d, unsigned r) {
  for (unsigned i = 0; i < r; i++)
    put(t, "%zux", d[i]);
}

static void random_qmatmul(void) {
  /* batch dims of a and b (right-aligned, each 1 or the full size) */
  unsigned nbatch = (unsigned)rnd_in(0, 2);
  size_t full[2] = {(size_t)rnd_in(1, 3), (size_t)rnd_in(1, 3)};
  size_t M = (size_t)rnd_in(1, 9), K = (size_t)rnd_in(1, 12),
         Nn = (size_t)rnd_in(1, 9);
  if (rnd() % 6 == 0)
    K = (size_t)rnd_in(200, 700); /* several f32 blocks */
  bool a1 = nbatch == 0 && rnd() % 5 == 0, b1 = nbatch == 0 && rnd() % 5 == 0;
  size_t ad[4], bd[4], yd[4];
  unsigned ra = 0, rb = 0, ry = 0;
  unsigned nba = nbatch ? (unsigned)rnd_in(0, nbatch) : 0;
  unsigned nbb = nbatch ? (unsigned)rnd_in(0, nbatch) : 0;
  for (unsigned d = nbatch - nba; d < nbatch; d++)
    ad[ra++] = rnd() % 3 ? full[d] : 1;
  for (unsigned d = nbatch - nbb; d < nbatch; d++)
    bd[rb++] = rnd() % 3 ? full[d] : 1;
  unsigned nb = nba > nbb ? nba : nbb;
  for (unsigned d = 0; d < nb; d++) {
    size_t da = d + nba >= nb ? ad[d + nba - nb] : 1;
    size_t db = d + nbb >= nb ? bd[d + nbb - nb] : 1;
    yd[ry++] = da > db ? da : db;
  }
  if (!a1)
    ad[ra++] = M;
  ad[ra++] = K;
  bd[rb++] = K;
  if (!b1)
    bd[rb++] = Nn;
  if (!a1)
    yd[ry++] = M;
  if (!b1)
    yd[ry++] = Nn;
  if (a1)
    M = 1;
  if (b1)
    Nn = 1;
  size_t cols = ry ? yd[ry - 1] : 1;
  qparam aq, bq;
  make_qparam(&aq, pick_storage(true), 1);
  bool per_col = !b1 && Nn <= 16 && rnd() % 2;
  make_qparam(&bq, pick_storage(true), per_col ? Nn : 1);
  result res;
  make_result(&res, cols <= 16 ? cols : 1);
  if (res.nfixed > 1 && res.nfixed != cols)
    res.nfixed = 1;
  bool has_bias = rnd() % 2;

  text t = {{0}, 0};
  put(&t, "func @f(%%a: tensor<");
  put_dims(&t, ad, ra);
  put_qtype(&t, &aq, -1);
  put(&t, ">, %%b: tensor<");
  put_dims(&t, bd, rb);
  put_qtype(&t, &bq, per_col ? (int)rb - 1 : -1);
  put(&t, ">");
  if (has_bias)
    put(&t, ", %%c: tensor<%zuxi32>", cols);
  put(&t, ") -> tensor<");
  put_dims(&t, yd, ry);
  put_result_type(&t, &res);
  put(&t, "> {\n  %%y = qmatmul %%a, %%b%s {", has_bias ? ", %c" : "");
  put_result_attrs(&t, &res);
  put(&t, "} : tensor<");
  put_dims(&t, yd, ry);
  put_result_type(&t, &res);
  put(&t, ">\n  return %%y\n}\n");

  run r;
  if (!setup(&r, t.buf)) {
    CHECK(!"setup");
    run_free(&r);
    return;
  }
  size_t na = quill_tensor_num_elements(&r.args[0]);
  size_t nbv = quill_tensor_num_elements(&r.args[1]);
  size_t ny = quill_tensor_num_elements(&r.out[0]);
  int64_t *a = malloc(na * sizeof *a), *b = malloc(nbv * sizeof *b);
  int64_t *bias = calloc(cols, sizeof *bias), *want = malloc(ny * sizeof *want);
  fill_random(&r.args[0], a, aq.st);
  fill_random(&r.args[1], b, bq.st);
  if (has_bias)
    for (size_t c = 0; c < cols; c++) {
      bias[c] = rnd_in(-100000, 100000);
      quill_tensor_set_i64(&r.args[2], c, bias[c]);
    }
  /* Naive: for each output index, decode the batch index and broadcast. */
  size_t batches = ny / (M * Nn);
  for (size_t tb = 0; tb < batches; tb++) {
    size_t ia = 0, ib = 0, sa = 1, sb = 1, rem = tb;
    for (unsigned d = nb; d-- > 0;) {
      size_t idx = rem % yd[d];
      rem /= yd[d];
      if (d + nba >= nb) {
        size_t da = ad[d + nba - nb];
        ia += (da == 1 ? 0 : idx) * sa;
        sa *= da;
      }
      if (d + nbb >= nb) {
        size_t db = bd[d + nbb - nb];
        ib += (db == 1 ? 0 : idx) * sb;
        sb *= db;
      }
    }
    for (size_t i = 0; i < M; i++)
      for (size_t j = 0; j < Nn; j++) {
        int64_t sum = 0, zb = bq.zp[per_col ? j : 0];
        for (size_t k = 0; k < K; k++)
          sum += (a[ia * M * K + i * K + k] - aq.zp[0]) *
                 (b[ib * K * Nn + k * Nn + j] - zb);
        size_t yi = tb * M * Nn + i * Nn + j;
        size_t c = yi % cols;
        want[yi] = naive_finish(&res, aq.scale[0], &bq, c, sum, bias[c]);
      }
  }
  eval(&r);
  CHECK(compare_all(&r, want, ny, t.buf));
  free(a);
  free(b);
  free(bias);
  free(want);
  run_free(&r);
}

int main(void) {
  for (int i = 0; i < 400; i++)
    random_qconv();
  for (int i = 0; i < 400; i++)
    random_qmatmul();
  printf("test_ref_qkernels_random: %d checks, %d failures\n", checks,
         failures);
  return failures ? 1 : 0;
}
