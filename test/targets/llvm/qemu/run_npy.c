/*
 * run_npy.c - a generic driver for any model compiled by `quill compile
 * --name model`: reads its inputs from .npy files, calls model_run_argv
 * once and compares every output byte with an expected .npy file (the
 * reference interpreter's, written with the inputs by `test_llvm_qrandom
 * --write` and `test_llvm_ops --write`). scripts/test-qemu.sh builds
 * it per case for the CPU under test (x86-64 Haswell, AArch64) and runs it
 * under qemu-user, so it uses only the C library and the generated header:
 *
 *   cc -O2 -I CASE_DIR run_npy.c model.o [quill_rt.c -lpthread] -o run
 *   run IN0.npy [IN1.npy ...] -- EXPECTED0.npy [EXPECTED1.npy ...]
 *
 * Buffer sizes come from the header (MODEL_INk_SIZE elements) and the
 * element width from the .npy data (bytes / elements), so one source works
 * for every element type. Exit status: 0 when every output equals its
 * expected file bit for bit, 1 on a difference (the first differing
 * element is printed), 2 on bad usage or unreadable files.
 *
 * One exception to bit for bit: a NaN equals any NaN in float outputs
 * ('<f4', '<f8'). The expected files come from the reference interpreter
 * on the x86-64 host, whose default NaN (e.g. log(-1)) is negative,
 * 0xffc00000; AArch64's is 0x7fc00000. IEEE 754 leaves a NaN's sign and
 * payload to the machine, and the reference run on AArch64 gives the
 * same bits as the compiled code there.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define MAX_IO 8

/* The element count of input/output k from the header's macros. */
static const size_t in_size[] = {
    MODEL_IN0_SIZE,
#if MODEL_NUM_INPUTS > 1
    MODEL_IN1_SIZE,
#endif
#if MODEL_NUM_INPUTS > 2
    MODEL_IN2_SIZE,
#endif
#if MODEL_NUM_INPUTS > 3
    MODEL_IN3_SIZE,
#endif
#if MODEL_NUM_INPUTS > 4
    MODEL_IN4_SIZE,
#endif
#if MODEL_NUM_INPUTS > 5
    MODEL_IN5_SIZE,
#endif
#if MODEL_NUM_INPUTS > 6
    MODEL_IN6_SIZE,
#endif
#if MODEL_NUM_INPUTS > 7
    MODEL_IN7_SIZE,
#endif
};
#if MODEL_NUM_INPUTS > MAX_IO
#error "run_npy.c: more than 8 inputs"
#endif

static const size_t out_size[] = {
    MODEL_OUT0_SIZE,
#if MODEL_NUM_OUTPUTS > 1
    MODEL_OUT1_SIZE,
#endif
#if MODEL_NUM_OUTPUTS > 2
    MODEL_OUT2_SIZE,
#endif
#if MODEL_NUM_OUTPUTS > 3
    MODEL_OUT3_SIZE,
#endif
#if MODEL_NUM_OUTPUTS > 4
    MODEL_OUT4_SIZE,
#endif
#if MODEL_NUM_OUTPUTS > 5
    MODEL_OUT5_SIZE,
#endif
#if MODEL_NUM_OUTPUTS > 6
    MODEL_OUT6_SIZE,
#endif
#if MODEL_NUM_OUTPUTS > 7
    MODEL_OUT7_SIZE,
#endif
};
#if MODEL_NUM_OUTPUTS > MAX_IO
#error "run_npy.c: more than 8 outputs"
#endif

/* Read an .npy file (versions 1-3, C order): the data bytes (malloc'd) and
 * their count, or NULL; *fwidth is 4 or 8 for '<f4' / '<f8' data, else 0.
 * The header is not interpreted further: the caller checks the size
 * against the model's. */
static unsigned char *read_npy(const char *path, size_t *bytes, int *fwidth) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  unsigned char pre[12], *data = NULL;
  if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6))
    goto done;
  long hlen = pre[8] | (long)pre[9] << 8, start = 10;
  if (pre[6] >= 2) {
    if (fread(pre + 10, 1, 2, f) != 2)
      goto done;
    hlen = pre[8] | (long)pre[9] << 8 | (long)pre[10] << 16 |
           (long)pre[11] << 24;
    start = 12;
  }
  char h[256];
  size_t hn = (size_t)hlen < sizeof h - 1 ? (size_t)hlen : sizeof h - 1;
  if (fread(h, 1, hn, f) != hn)
    goto done;
  h[hn] = '\0';
  *fwidth = strstr(h, "'<f4'") ? 4 : strstr(h, "'<f8'") ? 8 : 0;
  if (fseek(f, 0, SEEK_END) != 0)
    goto done;
  long end = ftell(f);
  if (end < start + hlen || fseek(f, start + hlen, SEEK_SET) != 0)
    goto done;
  *bytes = (size_t)(end - start - hlen);
  data = malloc(*bytes ? *bytes : 1);
  if (data && fread(data, 1, *bytes, f) != *bytes) {
    free(data);
    data = NULL;
  }
done:
  fclose(f);
  return data;
}

/* Are both w-byte floats (w = 4 or 8) NaNs? */
static int both_nan(const unsigned char *x, const unsigned char *y, size_t w) {
  if (w == 4) {
    float a, b;
    memcpy(&a, x, 4);
    memcpy(&b, y, 4);
    return isnan(a) && isnan(b);
  }
  double a, b;
  memcpy(&a, x, 8);
  memcpy(&b, y, 8);
  return isnan(a) && isnan(b);
}

int main(int argc, char **argv) {
  int sep = 1;
  while (sep < argc && strcmp(argv[sep], "--"))
    sep++;
  int nin = sep - 1, nout = argc - sep - 1;
  if (sep == argc || nin != MODEL_NUM_INPUTS || nout != MODEL_NUM_OUTPUTS) {
    fprintf(stderr, "usage: %s IN0.npy.. (%d) -- EXPECTED0.npy.. (%d)\n",
            argv[0], MODEL_NUM_INPUTS, MODEL_NUM_OUTPUTS);
    return 2;
  }
  void *ptrs[MAX_IO * 2 + 1];
  unsigned char *expect[MAX_IO];
  size_t expect_bytes[MAX_IO];
  int fwidth[MAX_IO];
  for (int i = 0; i < nin; i++) {
    size_t bytes = 0;
    int fw;
    ptrs[i] = read_npy(argv[1 + i], &bytes, &fw);
    if (!ptrs[i] || bytes == 0 || bytes % in_size[i] != 0 ||
        bytes / in_size[i] > 8) {
      fprintf(stderr, "%s: cannot read, or not %zu elements\n", argv[1 + i],
              in_size[i]);
      return 2;
    }
  }
  for (int k = 0; k < nout; k++) {
    const char *p = argv[sep + 1 + k];
    expect[k] = read_npy(p, &expect_bytes[k], &fwidth[k]);
    if (!expect[k] || expect_bytes[k] == 0 ||
        expect_bytes[k] % out_size[k] != 0) {
      fprintf(stderr, "%s: cannot read, or not %zu elements\n", p,
              out_size[k]);
      return 2;
    }
    /* filled with a pattern the model must overwrite */
    ptrs[nin + k] = malloc(expect_bytes[k]);
    if (!ptrs[nin + k])
      return 2;
    memset(ptrs[nin + k], 0xA5, expect_bytes[k]);
  }
  size_t scratch_bytes = (MODEL_SCRATCH_SIZE + MODEL_SCRATCH_ALIGN - 1) /
                         MODEL_SCRATCH_ALIGN * MODEL_SCRATCH_ALIGN;
  ptrs[nin + nout] = aligned_alloc(MODEL_SCRATCH_ALIGN,
                                   scratch_bytes ? scratch_bytes
                                                 : MODEL_SCRATCH_ALIGN);
  if (!ptrs[nin + nout])
    return 2;
  int status = model_run_argv(ptrs);
  if (status != 0) {
    fprintf(stderr, "model_run_argv returned %d\n", status);
    return 1;
  }
  int bad = 0;
  for (int k = 0; k < nout && !bad; k++) {
    const unsigned char *got = ptrs[nin + k];
    size_t w = expect_bytes[k] / out_size[k];
    for (size_t e = 0; e < out_size[k] && !bad; e++) {
      const unsigned char *x = got + e * w, *y = expect[k] + e * w;
      if (!memcmp(x, y, w) || (w == (size_t)fwidth[k] && both_nan(x, y, w)))
        continue;
      fprintf(stderr, "output %d differs from %s at element %zu: compiled 0x",
              k, argv[sep + 1 + k], e);
      for (size_t b = w; b-- > 0;) /* little-endian: most significant first */
        fprintf(stderr, "%02x", x[b]);
      fprintf(stderr, ", reference 0x");
      for (size_t b = w; b-- > 0;)
        fprintf(stderr, "%02x", y[b]);
      fprintf(stderr, "\n");
      bad = 1;
    }
  }
  for (int i = 0; i < nin + nout + 1; i++)
    free(ptrs[i]);
  for (int k = 0; k < nout; k++)
    free(expect[k]);
  return bad;
}
