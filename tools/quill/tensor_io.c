/*
 * tensor_io.c - tensor files and tensor printing for the quill tools.
 *
 *   .npy        NumPy arrays (frontends/npy), read and written
 *   .pb         ONNX TensorProto (frontends/onnx/tensor_file.h), read only
 *   other names read as .npy if they start with the .npy magic
 * bf16 tensors are written as uint16 bit patterns (numpy has no bf16).
 *
 * Printing (quill run --print) shows the name and type, then the values in
 * numpy-like nested brackets for small tensors, or the first values and
 * min / max / mean for large ones:
 *
 *   y: tensor<2x2xf32>
 *   [[1, 2],
 *    [3, 4.5]]
 */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "frontends/npy/npy.h"
#include "frontends/onnx/tensor_file.h"
#include "ir/readfile.h"
#include "tools/quill/quill.h"

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && !strcmp(s + n - m, suffix);
}

/* Whether the file starts with the .npy magic (false if unreadable or
 * not a regular file: the reader then says why, and a FIFO never blocks
 * this peek). */
static bool has_npy_magic(const char *path) {
  unsigned char b[6];
  int fd;
  uint64_t size;
  if (quill_open_regular(path, QUILL_READ_MAX_DATA, &fd, &size))
    return false;
  bool yes = read(fd, b, 6) == 6 && !memcmp(b, "\x93NUMPY", 6);
  close(fd);
  return yes;
}

quill_status quill_tool_read_tensor(quill_context *ctx, const char *path,
                                    quill_tensor *out) {
  memset(out, 0, sizeof *out);
  if (ends_with(path, ".npy") || has_npy_magic(path))
    return quill_npy_read_file(ctx, path, out);
  return quill_onnx_tensor_read_file(ctx, path, out, NULL);
}

quill_status quill_tool_write_tensor(quill_context *ctx, const char *path,
                                     const quill_tensor *t) {
  if (ends_with(path, ".pb")) {
    quill_error(ctx, quill_loc_file(ctx, path, 0, 0),
                "cannot write ONNX TensorProto files: outputs are written as "
                ".npy");
    return QUILL_ERR_UNSUPPORTED;
  }
  quill_type *elem = quill_type_elem(t->type);
  if (quill_type_kind_of(elem) == QUILL_TYPE_BF16) {
    /* numpy has no bf16: write the bit patterns as uint16, as ONNX's
     * numpy_helper does */
    quill_tensor bits = *t;
    bits.type = quill_type_with_elem(
        ctx, t->type, quill_type_scalar(ctx, QUILL_TYPE_U16));
    if (!bits.type)
      return QUILL_ERR_NOMEM;
    return quill_npy_write_file(ctx, path, &bits);
  }
  return quill_npy_write_file(ctx, path, t);
}

void quill_tool_type_str(quill_context *ctx, const quill_type *t, char *buf,
                         size_t cap) {
  quill_strbuf sb;
  quill_strbuf_init(&sb, ctx);
  if (t)
    quill_type_print(t, &sb);
  else
    quill_strbuf_puts(&sb, "<none>");
  snprintf(buf, cap, "%s", quill_strbuf_str(&sb));
  quill_strbuf_free(&sb);
}

/* ---- printing ------------------------------------------------------------- */

static void print_elem(FILE *out, const quill_tensor *t, size_t i) {
  quill_type_kind k = quill_tensor_elem_kind(t);
  switch (k) {
  case QUILL_TYPE_F32: case QUILL_TYPE_F16: case QUILL_TYPE_BF16:
  case QUILL_TYPE_F64: {
    double v = quill_tensor_get_f64(t, i);
    if (isnan(v))
      fputs("nan", out);
    else if (isinf(v))
      fputs(v > 0 ? "inf" : "-inf", out);
    else
      fprintf(out, k == QUILL_TYPE_F64 ? "%.10g" : "%.7g", v);
    break;
  }
  case QUILL_TYPE_BOOL:
    fputs(quill_tensor_get_i64(t, i) ? "True" : "False", out);
    break;
  case QUILL_TYPE_U64:
    fprintf(out, "%llu", (unsigned long long)quill_tensor_get_i64(t, i));
    break;
  default:
    fprintf(out, "%lld", (long long)quill_tensor_get_i64(t, i));
    break;
  }
}

/* Nested brackets for dims d.. starting at element *i. */
static void print_nested(FILE *out, const quill_tensor *t, unsigned d,
                         size_t *i) {
  unsigned rank = quill_type_rank(t->type);
  int64_t n = quill_type_dim(t->type, d);
  fputc('[', out);
  for (int64_t j = 0; j < n; j++) {
    if (d + 1 == rank) {
      if (j)
        fputs(", ", out);
      print_elem(out, t, (*i)++);
    } else {
      if (j)
        fprintf(out, ",\n%*s", (int)d + 1, "");
      print_nested(out, t, d + 1, i);
    }
  }
  fputc(']', out);
}

void quill_tool_print_tensor(FILE *out, quill_context *ctx, const char *name,
                             const quill_tensor *t, size_t max_full) {
  char ty[256];
  quill_tool_type_str(ctx, t->type, ty, sizeof ty);
  fprintf(out, "%s: %s\n", name, ty);
  size_t n = quill_tensor_num_elements(t);
  unsigned rank = quill_type_rank(t->type);
  if (rank == 0) {
    print_elem(out, t, 0);
    fputc('\n', out);
    return;
  }
  if (n <= max_full) {
    size_t i = 0;
    print_nested(out, t, 0, &i);
    fputc('\n', out);
    return;
  }
  size_t shown = 8;
  fprintf(out, "first %zu of %zu: [", shown, n);
  for (size_t i = 0; i < shown; i++) {
    if (i)
      fputs(", ", out);
    print_elem(out, t, i);
  }
  fputs(", ...]\n", out);
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  size_t nans = 0;
  for (size_t i = 0; i < n; i++) {
    double v = quill_tensor_get_f64(t, i);
    if (isnan(v)) {
      nans++;
      continue;
    }
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
    sum += v;
  }
  fprintf(out, "min %.7g, max %.7g, mean %.7g", lo, hi,
          n > nans ? sum / (double)(n - nans) : NAN);
  if (nans)
    fprintf(out, ", %zu nan", nans);
  fputc('\n', out);
}
