/*
 * test_llvm_acc64.c - the int64 accumulator (qconv2d/qmatmul with
 * accumulator = "i64", which fuse-qdq writes when the worst-case sum may
 * leave int32) on the LLVM JIT, bit for bit against the reference
 * interpreter.
 *
 * Each case is a one-op graph of 16-bit operands drawn over the whole
 * storage range (llvm_harness.h fills inputs; constants are drawn here),
 * with every rounding policy, fixed-point (multiplier/shift from the
 * scales) or f32 requantization, per-tensor or per-channel weights,
 * constant or runtime weights and bias, groups, batches and fused
 * activation clamps. Each runs on every instruction path host_isas()
 * reports (the int64 path is the same portable loop on all of them).
 *
 * That a case exercises the wide path is checked, not assumed: the same
 * graph without the attribute (int32 modulo 2^32) must give different
 * reference bytes, i.e. the sums really leave int32.
 */
#include "ir/quant.h"
#include "llvm_harness.h"

static const char *const roundings[] = {"half_even", "half_away", "half_up",
                                        "tflite"};

typedef struct buf {
  char s[65536];
  size_t n;
} buf;

static void put(buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(b->s + b->n, sizeof b->s - b->n, fmt, ap);
  va_end(ap);
  if (k > 0 && (size_t)k < sizeof b->s - b->n)
    b->n += (size_t)k;
}

/* Random 16-bit values as a dense list. */
static void dense_i16(buf *b, int64_t n) {
  put(b, "dense<[");
  for (int64_t i = 0; i < n; i++)
    put(b, "%s%lld", i ? ", " : "", (long long)rnd_int(-32768, 32767));
  put(b, "]>");
}

/* Weight type: i16, per tensor (scale 1) or along `axis` (nch scales). */
static void wtype(buf *b, bool per_ch, int axis, int64_t nch) {
  if (!per_ch) {
    put(b, "!quant.uniform<i16:f32, 1.0:3>");
    return;
  }
  put(b, "!quant.uniform<i16:f32:%d, {", axis);
  for (int64_t c = 0; c < nch; c++)
    put(b, "%s%.2f:%d", c ? ", " : "", 1.0 + 0.25 * (double)(c % 4),
        (int)(c % 3) - 1);
  put(b, "}>");
}

/* Requantization attributes for input scale 1, weight scales as wtype
 * writes them, output scale sy; `wide` adds the accumulator attribute. */
static void requant(buf *b, const char *r, bool fixed, bool per_ch,
                    int64_t nch, double sy, bool act, bool wide) {
  put(b, "rounding = \"%s\"", r);
  if (fixed) {
    int64_t n = per_ch ? nch : 1;
    int32_t m[64];
    int sh[64];
    for (int64_t c = 0; c < n; c++) {
      double sw = per_ch ? 1.0 + 0.25 * (double)(c % 4) : 1.0;
      quill_quantize_multiplier(sw / sy, &m[c], &sh[c]);
    }
    put(b, ", multiplier = [");
    for (int64_t c = 0; c < n; c++)
      put(b, "%s%d", c ? ", " : "", m[c]);
    put(b, "], shift = [");
    for (int64_t c = 0; c < n; c++)
      put(b, "%s%d", c ? ", " : "", sh[c]);
    put(b, "]");
  }
  if (act)
    put(b, ", act_min = -20000, act_max = 30000");
  if (wide)
    put(b, ", accumulator = \"i64\"");
}

typedef struct acase {
  bool conv;          /* qconv2d, else qmatmul */
  int64_t C, M, H, K; /* conv: channels in/out, image H x H, kernel K x K;
                         matmul: [batch=H][M x C] x [C x K] */
  int64_t group;
  bool wconst, bconst, bias, per_ch, fixed, act;
  const char *r;
} acase;

/* The graph of case a (with or without the accumulator attribute); the
 * constants are drawn from the current rng state. */
static void gen_case(buf *b, const acase *a, bool wide) {
  b->n = 0;
  b->s[0] = '\0';
  if (a->conv) {
    int64_t OH = a->H; /* pads K/2, stride 1 */
    int64_t Cg = a->C / a->group, nch = a->M;
    double sy = sqrt((double)(Cg * a->K * a->K)) * 32768.0;
    put(b, "func @f(%%x: tensor<1x%lldx%lldx%lldx!quant.uniform<i16:f32, "
           "1.0:-7>>",
        (long long)a->C, (long long)a->H, (long long)a->H);
    if (!a->wconst) {
      put(b, ", %%w: tensor<%lldx%lldx%lldx%lldx", (long long)nch,
          (long long)Cg, (long long)a->K, (long long)a->K);
      wtype(b, a->per_ch, 0, nch);
      put(b, ">");
    }
    if (a->bias && !a->bconst)
      put(b, ", %%b: tensor<%lldxi32>", (long long)nch);
    put(b, ") -> tensor<1x%lldx%lldx%lldx!quant.uniform<i16:f32, %.9g:5>> "
           "{\n",
        (long long)nch, (long long)OH, (long long)OH, sy);
    if (a->wconst) {
      put(b, "  %%w = constant {value = ");
      dense_i16(b, nch * Cg * a->K * a->K);
      put(b, " : tensor<%lldx%lldx%lldx%lldx", (long long)nch, (long long)Cg,
          (long long)a->K, (long long)a->K);
      wtype(b, a->per_ch, 0, nch);
      put(b, ">} : tensor<%lldx%lldx%lldx%lldx", (long long)nch,
          (long long)Cg, (long long)a->K, (long long)a->K);
      wtype(b, a->per_ch, 0, nch);
      put(b, ">\n");
    }
    if (a->bias && a->bconst) {
      put(b, "  %%b = constant {value = dense<[");
      for (int64_t c = 0; c < nch; c++)
        put(b, "%s%lld", c ? ", " : "",
            (long long)rnd_int(-2000000000, 2000000000));
      put(b, "]> : tensor<%lldxi32>} : tensor<%lldxi32>\n", (long long)nch,
          (long long)nch);
    }
    int64_t p = a->K / 2;
    put(b, "  %%y = qconv2d %%x, %%w%s {pads = [%lld, %lld, %lld, %lld], "
           "group = %lld, ",
        a->bias ? ", %b" : "", (long long)p, (long long)p, (long long)p,
        (long long)p, (long long)a->group);
    requant(b, a->r, a->fixed, a->per_ch, nch, sy, a->act, wide);
    put(b, "} : tensor<1x%lldx%lldx%lldx!quant.uniform<i16:f32, %.9g:5>>\n"
           "  return %%y\n}\n",
        (long long)nch, (long long)OH, (long long)OH, sy);
    return;
  }
  /* qmatmul: a [H, M, C], b [C, K] per column */
  double sy = sqrt((double)a->C) * 32768.0;
  put(b, "func @f(%%a: tensor<%lldx%lldx%lldx!quant.uniform<i16:f32, "
         "1.0:-7>>",
      (long long)a->H, (long long)a->M, (long long)a->C);
  if (!a->wconst) {
    put(b, ", %%w: tensor<%lldx%lldx", (long long)a->C, (long long)a->K);
    wtype(b, a->per_ch, 1, a->K);
    put(b, ">");
  }
  if (a->bias && !a->bconst)
    put(b, ", %%b: tensor<%lldxi32>", (long long)a->K);
  put(b, ") -> tensor<%lldx%lldx%lldx!quant.uniform<i16:f32, %.9g:5>> {\n",
      (long long)a->H, (long long)a->M, (long long)a->K, sy);
  if (a->wconst) {
    put(b, "  %%w = constant {value = ");
    dense_i16(b, a->C * a->K);
    put(b, " : tensor<%lldx%lldx", (long long)a->C, (long long)a->K);
    wtype(b, a->per_ch, 1, a->K);
    put(b, ">} : tensor<%lldx%lldx", (long long)a->C, (long long)a->K);
    wtype(b, a->per_ch, 1, a->K);
    put(b, ">\n");
  }
  if (a->bias && a->bconst) {
    put(b, "  %%b = constant {value = dense<[");
    for (int64_t c = 0; c < a->K; c++)
      put(b, "%s%lld", c ? ", " : "",
          (long long)rnd_int(-2000000000, 2000000000));
    put(b, "]> : tensor<%lldxi32>} : tensor<%lldxi32>\n", (long long)a->K,
        (long long)a->K);
  }
  put(b, "  %%y = qmatmul %%a, %%w%s {", a->bias ? ", %b" : "");
  requant(b, a->r, a->fixed, a->per_ch, a->K, sy, a->act, wide);
  put(b, "} : tensor<%lldx%lldx%lldx!quant.uniform<i16:f32, %.9g:5>>\n"
         "  return %%y\n}\n",
      (long long)a->H, (long long)a->M, (long long)a->K, sy);
}

/* Reference outputs of a module on inputs drawn from `seed`. */
static bool ref_bytes(const char *text, uint64_t seed, quill_tensor *out) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  quill_diag_set_handler(ctx, diag_capture, (void *)1);
  quill_module *m = quill_parse_module(ctx, text, strlen(text), "acc", 0);
  bool ok = m && !quill_verify_module(m);
  quill_tensor in[4], res;
  memset(in, 0, sizeof in);
  memset(&res, 0, sizeof res);
  unsigned nin = 0;
  if (ok) {
    quill_graph *g = quill_module_graph(m, 0);
    nin = quill_graph_num_args(g);
    rng_state = seed;
    for (unsigned i = 0; i < nin; i++) {
      quill_tensor_alloc(ctx, quill_value_type(quill_graph_arg(g, i)), &in[i]);
      fill_random(&in[i], 4.0);
    }
    ok = !quill_ref_run(ctx, g, in, nin, &res, 1);
  }
  if (ok) { /* copy out of the context */
    out->size = res.size;
    out->data = malloc(res.size ? res.size : 1);
    memcpy(out->data, res.data, res.size);
    quill_ref_tensors_free(ctx, &res, 1);
  }
  quill_ref_tensors_free(ctx, in, nin);
  if (m)
    quill_module_destroy(m);
  quill_context_destroy(ctx);
  return ok;
}

int main(void) {
  quill_llvm_isa isas[QUILL_LLVM_ISA_COUNT];
  unsigned nisa = host_isas(isas);
  printf("test_llvm_acc64: on");
  for (unsigned k = 0; k < nisa; k++)
    printf(" %s", quill_llvm_isa_name(isas[k]));
  printf("\n");
  static const acase shapes[] = {
      /* conv C M H K group wconst bconst bias per_ch fixed act */
      {true, 4, 3, 5, 3, 1, true, true, true, true, true, false, NULL},
      {true, 4, 4, 4, 3, 2, false, false, true, false, false, true, NULL},
      {true, 32, 2, 4, 1, 1, true, false, false, true, true, true, NULL},
      {true, 6, 6, 3, 3, 6, true, true, true, true, false, false, NULL},
      /* matmul C M batch K */
      {false, 40, 3, 2, 5, 1, true, true, true, true, true, false, NULL},
      {false, 33, 2, 2, 7, 1, false, false, true, false, false, true, NULL},
      {false, 64, 4, 3, 3, 1, true, false, false, false, true, true, NULL},
  };
  enum { NS = sizeof shapes / sizeof shapes[0] };
  int wrapped = 0, n = 0;
  static buf wide, narrow;
  for (unsigned s = 0; s < NS; s++)
    for (unsigned r = 0; r < 4; r++)
      for (int fx = 0; fx < 2; fx++) {
        acase a = shapes[s];
        a.r = roundings[r];
        a.fixed = fx;
        uint64_t seed = 0x1234567ull * (s * 8 + r * 2 + (unsigned)fx + 1);
        rng_state = seed;
        gen_case(&wide, &a, true);
        rng_state = seed;
        gen_case(&narrow, &a, false);
        char name[64];
        snprintf(name, sizeof name, "%s#%u-%s-%s", a.conv ? "qconv2d" : "qmatmul",
                 s, a.r, fx ? "fixed" : "float");
        /* the int32 contract gives other bytes: the case needs int64 */
        quill_tensor tw, tn;
        memset(&tw, 0, sizeof tw);
        memset(&tn, 0, sizeof tn);
        bool okw = ref_bytes(wide.s, seed, &tw);
        bool okn = ref_bytes(narrow.s, seed, &tn);
        CHECK(okw && okn);
        if (okw && okn && (tw.size != tn.size ||
                           memcmp(tw.data, tn.data, tw.size) != 0))
          wrapped++;
        else
          fprintf(stderr, "%s: int32 accumulation gives the same bytes\n",
                  name);
        free(tw.data);
        free(tn.data);
        n++;
        bool bad = false;
        for (unsigned k = 0; k < nisa; k++) {
          rng_state = seed;
          llvm_case c = {name, wide.s, 0, isas[k], (s % 3 == 1) ? 2 : 1, 0,
                         false};
          bool ok = run_case(&c);
          CHECK(ok);
          bad |= !ok;
        }
        if (bad)
          fprintf(stderr, "---- failing case %s:\n%s\n", name, wide.s);
      }
  /* every case must leave int32 somewhere */
  printf("test_llvm_acc64: %d of %d cases differ from int32 accumulation\n",
         wrapped, n);
  CHECK(wrapped == n);
  printf("test_llvm_acc64: %d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}
