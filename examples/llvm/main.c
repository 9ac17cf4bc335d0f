/*
 * main.c - a C program that links a model compiled by `quill compile` and
 * runs it: the digits classifier (examples/digits) on its test set.
 *
 *   quill quantize examples/digits/model.onnx --backend x86-vnni \
 *       --calib examples/digits/calib -o digits_int.qir
 *   quill compile digits_int.qir -o digits.o --name digits
 *   cc -O2 -I. examples/llvm/main.c digits.o -o digits_demo
 *   ./digits_demo examples/digits/test_x.npy examples/digits/test_y.npy
 *
 * With --threads N at compile time, also link the shim quill compile wrote
 * next to the object: cc ... digits.o quill_rt.c -lpthread.
 *
 * No runtime library, no Python, no model file: the weights are inside
 * digits.o, digits.h says the input/output shapes and the scratch size.
 * --dump I FILE writes the logits of test image I as an .npy file (the
 * build's ctest compares them with `quill run`).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "digits.h"

/* A minimal .npy reader: version 1/2 headers, little-endian, C order.
 * Returns the data (malloc'd) and its byte size, or NULL. */
static void *read_npy(const char *path, const char *descr, size_t *bytes) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  unsigned char pre[12];
  void *data = NULL;
  if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6))
    goto done;
  size_t hlen = pre[8] | (size_t)pre[9] << 8;
  if (pre[6] >= 2) { /* 4-byte header length */
    if (fread(pre + 10, 1, 2, f) != 2)
      goto done;
    hlen = pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 |
           (size_t)pre[11] << 24;
  }
  char *h = malloc(hlen + 1);
  if (!h || fread(h, 1, hlen, f) != hlen) {
    free(h);
    goto done;
  }
  h[hlen] = '\0';
  if (!strstr(h, descr) || strstr(h, "'fortran_order': True")) {
    free(h);
    goto done;
  }
  free(h);
  long pos = ftell(f);
  fseek(f, 0, SEEK_END);
  *bytes = (size_t)(ftell(f) - pos);
  fseek(f, pos, SEEK_SET);
  data = malloc(*bytes ? *bytes : 1);
  if (data && fread(data, 1, *bytes, f) != *bytes) {
    free(data);
    data = NULL;
  }
done:
  fclose(f);
  return data;
}

static int write_npy_f32(const char *path, const float *v, int n) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return -1;
  char h[118];
  int len = snprintf(h, sizeof h,
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (1, "
                     "%d), }",
                     n);
  while (len < 117) /* pad so that 10 + header is a multiple of 64 */
    h[len++] = ' ';
  h[117] = '\n';
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 118, 0};
  int ok = fwrite(pre, 1, 10, f) == 10 && fwrite(h, 1, 118, f) == 118 &&
           fwrite(v, sizeof *v, (size_t)n, f) == (size_t)n;
  return fclose(f) == 0 && ok ? 0 : -1;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s TEST_X.npy TEST_Y.npy [--dump I FILE.npy]\n",
            argv[0]);
    return 2;
  }
  long dump = -1;
  const char *dump_file = NULL;
  if (argc == 6 && !strcmp(argv[3], "--dump")) {
    dump = strtol(argv[4], NULL, 10);
    dump_file = argv[5];
  }
  size_t xb, yb;
  float *x = read_npy(argv[1], "'<f4'", &xb);
  int64_t *labels = read_npy(argv[2], "'<i8'", &yb);
  if (!x || !labels) {
    fprintf(stderr, "cannot read %s / %s\n", argv[1], argv[2]);
    return 1;
  }
  size_t n = xb / (sizeof(float) * DIGITS_IN0_SIZE);
  if (n != yb / sizeof(int64_t)) {
    fprintf(stderr, "images and labels disagree\n");
    return 1;
  }
  /* the model's working memory: DIGITS_SCRATCH_SIZE bytes, 64-aligned */
  static unsigned char scratch[DIGITS_SCRATCH_SIZE]
      __attribute__((aligned(DIGITS_SCRATCH_ALIGN)));
  float logits[DIGITS_OUT0_SIZE];
  size_t correct = 0;
  double t0 = now_ms();
  for (size_t i = 0; i < n; i++) {
    if (digits_run(x + i * DIGITS_IN0_SIZE, logits, scratch) != 0) {
      fprintf(stderr, "digits_run failed\n");
      return 1;
    }
    int best = 0;
    for (int k = 1; k < DIGITS_OUT0_SIZE; k++)
      if (logits[k] > logits[best])
        best = k;
    correct += best == labels[i];
    if ((long)i == dump && write_npy_f32(dump_file, logits,
                                          DIGITS_OUT0_SIZE) != 0) {
      fprintf(stderr, "cannot write %s\n", dump_file);
      return 1;
    }
  }
  double t = now_ms() - t0;
  printf("accuracy %.4f (%zu/%zu), %.3f ms per image\n",
         (double)correct / (double)n, correct, n, t / (double)n);
  free(x);
  free(labels);
  return 0;
}
