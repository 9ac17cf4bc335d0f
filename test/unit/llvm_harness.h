/*
 * llvm_harness.h - shared by the LLVM target's unit tests: parse a .qir
 * module, fill its graph arguments with seeded random data, run it with the
 * reference interpreter and with the LLVM JIT (optionally forcing an ISA
 * path and a thread count), and compare every output: bit for bit for
 * integer and quantized results, within a tolerance for float results when
 * the test allows it. write_case() writes a case as files instead (.qir,
 * random .npy inputs, the reference's .npy outputs) for runs in another
 * process or under an emulator (scripts/test-qemu.sh).
 */
#ifndef QUILL_TEST_UNIT_LLVM_HARNESS_H
#define QUILL_TEST_UNIT_LLVM_HARNESS_H

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "frontends/npy/npy.h"
#include "ir/ir.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "targets/llvm/llvm_target.h"
#include "targets/reference/ref.h"
#include "test/unit/check.h"

/* xorshift64*: deterministic across platforms. */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ull;
}
/* uniform in [lo, hi] */
static int64_t rnd_int(int64_t lo, int64_t hi) {
  return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}
static double rnd_unit(void) { return (double)(rnd() >> 11) / 9007199254740992.0; }

/* Fill a tensor with random values of its element type (storage range for
 * integers and quantized types, [-fr, fr] for floats). */
static void fill_random(quill_tensor *t, double fr) {
  quill_type *e = quill_type_elem(t->type);
  quill_type *s = quill_type_is_quant(e) ? quill_type_quant_storage(e) : e;
  size_t n = quill_tensor_num_elements(t);
  for (size_t i = 0; i < n; i++) {
    if (quill_type_is_float(s))
      quill_tensor_set_f64(t, i, (rnd_unit() * 2 - 1) * fr);
    else {
      int64_t lo = quill_type_int_min(s), hi = quill_type_int_max(s);
      if (lo < -100000)
        lo = -100000;
      if (hi > 100000)
        hi = 100000;
      quill_tensor_set_i64(t, i, rnd_int(lo, hi));
    }
  }
}

typedef struct llvm_case {
  const char *name;
  const char *text;       /* .qir module; the first graph is run */
  double float_tol;       /* relative tolerance for float outputs (0: exact) */
  quill_llvm_isa isa;
  unsigned threads;
  double frange;          /* float input range (default 4) */
  bool quiet;
} llvm_case;

static void diag_capture(void *ud, quill_loc loc, quill_diag_severity sev,
                         const char *msg) {
  (void)loc;
  if (sev == QUILL_DIAG_ERROR && ud)
    fprintf(stderr, "  diag: %s\n", msg);
}

static bool values_match(const quill_tensor *a, const quill_tensor *b,
                         double tol, size_t *bad) {
  size_t n = quill_tensor_num_elements(a);
  quill_type *e = quill_type_elem(a->type);
  bool fl = !quill_type_is_quant(e) && quill_type_is_float(e);
  if (!fl || tol == 0)
    return a->size == b->size &&
           (a->size == 0 || !memcmp(a->data, b->data, a->size)) &&
           ((*bad = 0), true);
  for (size_t i = 0; i < n; i++) {
    double x = quill_tensor_get_f64(a, i), y = quill_tensor_get_f64(b, i);
    if (isnan(x) && isnan(y))
      continue;
    double d = fabs(x - y), m = fmax(fabs(x), fabs(y));
    if (d > tol * (m > 1 ? m : 1)) {
      *bad = i;
      return false;
    }
  }
  return true;
}

/* Features every JIT of the test adds to the host's: $QUILL_TEST_MATTR
 * ("-avxvnni,-amx-int8" makes this host look like a CPU with fewer
 * paths, e.g. AMD Zen 4), or none. */
static const char *test_mattr(void) {
  const char *m = getenv("QUILL_TEST_MATTR");
  return m && *m ? m : NULL;
}

/* The paths the host (narrowed by $QUILL_TEST_MATTR) offers, as the
 * library answers it: bit (1u << isa) for each. */
static unsigned host_path_mask(const char *extra) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  quill_diag_set_handler(ctx, diag_capture, NULL);
  quill_llvm_options o;
  quill_llvm_options_init(&o);
  char f[256];
  const char *m = test_mattr();
  snprintf(f, sizeof f, "%s%s%s", m ? m : "", m && extra ? "," : "",
           extra ? extra : "");
  o.features = *f ? f : NULL;
  unsigned mask = 0;
  if (quill_llvm_isa_paths(ctx, &o, &mask, NULL))
    mask = 0;
  quill_context_destroy(ctx);
  return mask;
}

/* The features to generate code for `isa` with: as a machine whose best
 * path is `isa` would run it, where the library says the path survives
 * turning the wider extensions off (avx2 without AVX-512 and AVX-VNNI,
 * avx-vnni without AVX-512); otherwise the host's own (on AMD Zen 4 the
 * avx-vnni path is the EVEX form and needs AVX-512). */
static const char *isa_features(quill_llvm_isa isa, char *buf, size_t size) {
  const char *narrow = isa == QUILL_LLVM_ISA_AVX2       ? "-avx512f,-avxvnni"
                       : isa == QUILL_LLVM_ISA_AVX_VNNI ? "-avx512f"
                                                        : NULL;
  const char *m = test_mattr();
  if (!narrow || !(host_path_mask(narrow) & (1u << isa)))
    return m;
  snprintf(buf, size, "%s%s%s", m ? m : "", m ? "," : "", narrow);
  return buf;
}

/* Allocate and fill g's arguments in[0..nargs) with random values
 * (floats in [-frange, frange], default 4). */
static void make_inputs(quill_context *ctx, const quill_graph *g,
                        quill_tensor *in, double frange) {
  for (unsigned i = 0; i < quill_graph_num_args(g); i++) {
    quill_tensor_alloc(ctx, quill_value_type(quill_graph_arg(g, i)), &in[i]);
    fill_random(&in[i], frange ? frange : 4.0);
  }
}

/* Compile g with the JIT on `isa` (features: isa_features's, plus
 * `extra` if not NULL), `threads` threads and every stage handed to the
 * pool, and run it on in[0..nin) into got[0..nout); false, with a
 * message, if compiling or running fails. */
static bool jit_on_path(quill_context *ctx, const quill_graph *g,
                        const quill_tensor *in, unsigned nin,
                        quill_tensor *got, unsigned nout, quill_llvm_isa isa,
                        unsigned threads, const char *extra) {
  quill_llvm_options o;
  quill_llvm_options_init(&o);
  o.isa = isa;
  o.threads = threads ? threads : 1;
  o.parallel_all = true; /* small graphs: exercise the pool anyway */
  char fb[256], f[512];
  const char *base = isa_features(isa, fb, sizeof fb);
  snprintf(f, sizeof f, "%s%s%s", base ? base : "", base && extra ? "," : "",
           extra ? extra : "");
  o.features = *f ? f : NULL;
  quill_llvm_jit *jit = NULL;
  if (quill_llvm_jit_create(ctx, g, &o, &jit)) {
    fprintf(stderr, "jit compile failed (isa %s)\n", quill_llvm_isa_name(isa));
    return false;
  }
  bool ok = !quill_llvm_jit_run(jit, in, nin, got, nout);
  if (!ok)
    fprintf(stderr, "jit run failed (isa %s)\n", quill_llvm_isa_name(isa));
  quill_llvm_jit_destroy(jit);
  return ok;
}

/* The first element where a and b differ (their element count if none). */
static size_t first_diff(const quill_tensor *a, const quill_tensor *b) {
  size_t n = quill_tensor_num_elements(a), e = 0;
  while (e < n && quill_tensor_get_f64(a, e) == quill_tensor_get_f64(b, e))
    e++;
  return e;
}

/* Run one case; returns true if every output matched. */
static bool run_case(const llvm_case *k) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  quill_diag_set_handler(ctx, diag_capture, (void *)1);
  bool ok = false;
  quill_module *m = quill_parse_module(ctx, k->text, strlen(k->text), k->name,
                                       0);
  quill_tensor in[8], ref[8], got[8];
  memset(in, 0, sizeof in);
  memset(ref, 0, sizeof ref);
  memset(got, 0, sizeof got);
  unsigned nin = 0, nout = 0;
  if (!m || quill_verify_module(m)) {
    fprintf(stderr, "%s: does not parse/verify\n", k->name);
    goto done;
  }
  quill_graph *g = quill_module_graph(m, 0);
  nin = quill_graph_num_args(g);
  nout = quill_graph_num_results(g);
  make_inputs(ctx, g, in, k->frange);
  if (quill_ref_run(ctx, g, in, nin, ref, nout)) {
    fprintf(stderr, "%s: reference failed\n", k->name);
    goto done;
  }
  if (!jit_on_path(ctx, g, in, nin, got, nout, k->isa, k->threads, NULL)) {
    fprintf(stderr, "%s: the jit failed\n", k->name);
    goto done;
  }
  ok = true;
  for (unsigned i = 0; i < nout; i++) {
    size_t bad = 0;
    if (!values_match(&ref[i], &got[i], k->float_tol, &bad)) {
      ok = false;
      if (!k->quiet) {
        size_t n = quill_tensor_num_elements(&ref[i]);
        if (k->float_tol == 0)
          bad = first_diff(&ref[i], &got[i]);
        fprintf(stderr, "%s (isa %s): output %u differs at element %zu: ref "
                        "%.9g, llvm %.9g\n",
                k->name, quill_llvm_isa_name(k->isa), i, bad,
                bad < n ? quill_tensor_get_f64(&ref[i], bad) : 0.0,
                bad < n ? quill_tensor_get_f64(&got[i], bad) : 0.0);
      }
    }
  }
done:
  quill_ref_tensors_free(ctx, in, nin);
  quill_ref_tensors_free(ctx, ref, nout);
  quill_ref_tensors_free(ctx, got, nout);
  if (m)
    quill_module_destroy(m);
  quill_context_destroy(ctx);
  return ok;
}

/* Write case k as DIR/NAME.qir, its random inputs (as run_case draws
 * them) as DIR/NAME.inI.npy and the reference interpreter's outputs as
 * DIR/NAME.refI.npy, creating DIR if needed; k's name and isa are not
 * used. Returns false, with a message, if the module does not verify, the
 * reference fails or a tensor has no .npy form. */
static inline bool write_case(const char *dir, const char *name,
                       const llvm_case *k) {
  char path[4096];
  bool ok = false;
  quill_tensor in[8], ref[8];
  memset(in, 0, sizeof in);
  memset(ref, 0, sizeof ref);
  unsigned nin = 0, nout = 0;
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "cannot create %s\n", dir);
    return false;
  }
  quill_context *ctx = quill_context_create(NULL, NULL);
  quill_diag_set_handler(ctx, diag_capture, (void *)1);
  quill_module *m = quill_parse_module(ctx, k->text, strlen(k->text), name,
                                       0);
  if (!m || quill_verify_module(m)) {
    fprintf(stderr, "%s: does not parse/verify\n", name);
    goto done;
  }
  quill_graph *g = quill_module_graph(m, 0);
  nin = quill_graph_num_args(g);
  nout = quill_graph_num_results(g);
  if (nin > 8 || nout > 8)
    goto done;
  make_inputs(ctx, g, in, k->frange);
  if (quill_ref_run(ctx, g, in, nin, ref, nout)) {
    fprintf(stderr, "%s: reference failed\n", name);
    goto done;
  }
  snprintf(path, sizeof path, "%s/%s.qir", dir, name);
  FILE *f = fopen(path, "w");
  if (!f || fputs(k->text, f) < 0 || fclose(f) != 0) {
    fprintf(stderr, "cannot write %s\n", path);
    goto done;
  }
  ok = true;
  for (unsigned i = 0; ok && i < nin + nout; i++) {
    bool is_in = i < nin;
    snprintf(path, sizeof path, "%s/%s.%s%u.npy", dir, name,
             is_in ? "in" : "ref", is_in ? i : i - nin);
    ok = !quill_npy_write_file(ctx, path, is_in ? &in[i] : &ref[i - nin]);
  }
done:
  quill_ref_tensors_free(ctx, in, nin);
  quill_ref_tensors_free(ctx, ref, nout);
  if (m)
    quill_module_destroy(m);
  quill_context_destroy(ctx);
  return ok;
}

/* The ISA paths this machine can run (portable always first), as the
 * library's quill_llvm_isa_paths answers for the host. */
static inline unsigned host_isas(quill_llvm_isa *out) {
  unsigned n = 0, mask = host_path_mask(NULL);
  for (unsigned i = QUILL_LLVM_ISA_PORTABLE; i < QUILL_LLVM_ISA_COUNT; i++)
    if (mask & (1u << i))
      out[n++] = (quill_llvm_isa)i;
  return n;
}

#endif /* QUILL_TEST_UNIT_LLVM_HARNESS_H */
