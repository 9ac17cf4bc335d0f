/*
 * test_ref_onnx_qdata.c - the reference target's integer kernels against
 * ONNX's own node test data (libonnx-testdata): QLinearConv, QLinearMatMul
 * (2-D and 3-D), ConvInteger (with and without padding), MatMulInteger and
 * DynamicQuantizeLinear (three cases).
 *
 * For each test the inputs are read from test_data_set_0/input_N.pb
 * (frontends/onnx/tensor_file.h). The scale and zero point inputs become
 * the quantized types of a one-op .qir function (qconv2d / qmatmul /
 * dynamic_quantize; ConvInteger and MatMulInteger are the i32-result forms
 * with scale 1), the data inputs its arguments. Every output must equal
 * output_N.pb byte for byte.
 */
#include <stdio.h>
#include <string.h>

#include "frontends/onnx/tensor_file.h"
#include "test/unit/check.h"

#define DATA "/usr/share/libonnx-testdata/data/node/"

typedef struct onnx_case {
  quill_context *ctx;
  const char *name;
  quill_tensor in[8], out[3];
  unsigned nin, nout;
} onnx_case;

static void print_diag(void *ud, quill_loc loc, quill_diag_severity sev,
                       const char *msg) {
  (void)ud;
  (void)loc;
  (void)sev;
  fprintf(stderr, "  diagnostic: %s\n", msg);
}

/* Read the test's input_i.pb and output_i.pb files. */
static bool load(onnx_case *c, quill_context *ctx, const char *name,
                 unsigned nin, unsigned nout) {
  memset(c, 0, sizeof *c);
  c->ctx = ctx;
  c->name = name;
  char path[512];
  for (unsigned i = 0; i < nin; i++) {
    snprintf(path, sizeof path, DATA "%s/test_data_set_0/input_%u.pb", name, i);
    if (quill_onnx_tensor_read_file(ctx, path, &c->in[i], NULL))
      return false;
    c->nin++;
  }
  for (unsigned i = 0; i < nout; i++) {
    snprintf(path, sizeof path, DATA "%s/test_data_set_0/output_%u.pb", name,
             i);
    if (quill_onnx_tensor_read_file(ctx, path, &c->out[i], NULL))
      return false;
    c->nout++;
  }
  return true;
}

static void unload(onnx_case *c) {
  for (unsigned i = 0; i < c->nin; i++)
    quill_onnx_tensor_free(c->ctx, &c->in[i]);
  for (unsigned i = 0; i < c->nout; i++)
    quill_onnx_tensor_free(c->ctx, &c->out[i]);
}

/* "1x1x7x7x" for a tensor's dims (empty for a scalar). */
static const char *dims(const quill_tensor *t, char *buf, size_t n) {
  size_t k = 0;
  buf[0] = 0;
  for (unsigned d = 0; d < quill_type_rank(t->type) && k < n; d++)
    k += (size_t)snprintf(buf + k, n - k, "%lldx",
                          (long long)quill_type_dim(t->type, d));
  return buf;
}

static const char *kind_name(const quill_tensor *t) {
  return quill_type_scalar_name(quill_tensor_elem_kind(t));
}

/* The quant element type of data tensor t with scale/zp tensors (NULL:
 * scale 1, zp 0); per axis `axis` if the scale has more than one element. */
static const char *qtype(const quill_tensor *t, const quill_tensor *scale,
                         const quill_tensor *zp, int axis, char *buf,
                         size_t n) {
  size_t np = scale ? quill_tensor_num_elements(scale) : 1;
  if (np <= 1) {
    snprintf(buf, n, "!quant.uniform<%s:f32, %.17g:%lld>", kind_name(t),
             scale ? quill_tensor_get_f64(scale, 0) : 1.0,
             zp ? (long long)quill_tensor_get_i64(zp, 0) : 0LL);
    return buf;
  }
  size_t k = (size_t)snprintf(buf, n, "!quant.uniform<%s:f32:%d, {",
                              kind_name(t), axis);
  for (size_t i = 0; i < np && k < n; i++)
    k += (size_t)snprintf(buf + k, n - k, "%s%.17g:%lld", i ? ", " : "",
                          quill_tensor_get_f64(scale, i),
                          (long long)quill_tensor_get_i64(zp, i));
  if (k < n)
    snprintf(buf + k, n - k, "}>");
  return buf;
}

/* Parse src (one op on graph arguments), bind args[i] to argument i (same
 * bytes, possibly another element type), run it and compare each result
 * with c->out. */
static void check_run(onnx_case *c, const char *src,
                      const quill_tensor *const *args, unsigned nargs) {
  quill_module *m =
      quill_parse_module(c->ctx, src, strlen(src), c->name, 0);
  bool ok = m && quill_verify_module(m) == QUILL_OK;
  if (!ok) {
    fprintf(stderr, "%s: invalid IR\n%s", c->name, src);
    CHECK(ok);
    if (m)
      quill_module_destroy(m);
    return;
  }
  quill_graph *g = quill_module_graph(m, 0);
  quill_op *op = NULL;
  QUILL_GRAPH_FOREACH(g, o) {
    op = o;
    break;
  }
  quill_tensor in[8], out[3];
  for (unsigned i = 0; i < nargs; i++) {
    in[i] = *args[i];
    in[i].type = quill_value_type(quill_graph_arg(g, i));
  }
  CHECK(quill_ref_outputs_alloc(c->ctx, op, out) == QUILL_OK);
  quill_status st = quill_ref_eval_op(c->ctx, op, in, out);
  CHECK(st == QUILL_OK);
  for (unsigned k = 0; k < quill_op_num_results(op) && !st; k++) {
    bool same = out[k].size == c->out[k].size &&
                !memcmp(out[k].data, c->out[k].data, out[k].size);
    if (!same) {
      fprintf(stderr, "%s: output %u differs from output_%u.pb\n", c->name, k,
              k);
      for (size_t i = 0; i < quill_tensor_num_elements(&out[k]); i++)
        fprintf(stderr, "  [%zu] got %g want %g\n", i,
                quill_tensor_get_f64(&out[k], i),
                quill_tensor_get_f64(&c->out[k], i));
    }
    CHECK(same);
  }
  quill_ref_outputs_free(c->ctx, op, out);
  quill_module_destroy(m);
}

/* QLinearConv / QLinearMatMul: x, s_x, zp_x, w, s_w, zp_w, s_y, zp_y. */
static void test_qlinear(quill_context *ctx, const char *name,
                         const char *mnemonic, int waxis) {
  onnx_case c;
  if (!load(&c, ctx, name, 8, 1)) {
    CHECK(!"test data");
    unload(&c);
    return;
  }
  char d0[64], d1[64], dy[64], t0[1024], t1[1024], ty[256], src[4096];
  qtype(&c.in[0], &c.in[1], &c.in[2], 0, t0, sizeof t0);
  qtype(&c.in[3], &c.in[4], &c.in[5], waxis, t1, sizeof t1);
  qtype(&c.in[7], &c.in[6], &c.in[7], 0, ty, sizeof ty);
  snprintf(src, sizeof src,
           "func @f(%%x: tensor<%s%s>, %%w: tensor<%s%s>) -> tensor<%s%s> {\n"
           "  %%y = %s %%x, %%w : tensor<%s%s>\n  return %%y\n}\n",
           dims(&c.in[0], d0, sizeof d0), t0, dims(&c.in[3], d1, sizeof d1),
           t1, dims(&c.out[0], dy, sizeof dy), ty, mnemonic, dy, ty);
  const quill_tensor *args[] = {&c.in[0], &c.in[3]};
  check_run(&c, src, args, 2);
  unload(&c);
}

/* ConvInteger / MatMulInteger: x, w, zp_x [, zp_w] -> i32. */
static void test_integer(quill_context *ctx, const char *name,
                         const char *mnemonic, unsigned nin,
                         const char *attrs) {
  onnx_case c;
  if (!load(&c, ctx, name, nin, 1)) {
    CHECK(!"test data");
    unload(&c);
    return;
  }
  char d0[64], d1[64], dy[64], t0[256], t1[256], src[2048];
  qtype(&c.in[0], NULL, &c.in[2], 0, t0, sizeof t0);
  qtype(&c.in[1], NULL, nin > 3 ? &c.in[3] : NULL, 0, t1, sizeof t1);
  snprintf(src, sizeof src,
           "func @f(%%x: tensor<%s%s>, %%w: tensor<%s%s>) -> tensor<%si32> {\n"
           "  %%y = %s %%x, %%w %s : tensor<%si32>\n  return %%y\n}\n",
           dims(&c.in[0], d0, sizeof d0), t0, dims(&c.in[1], d1, sizeof d1),
           t1, dims(&c.out[0], dy, sizeof dy), mnemonic, attrs, dy);
  const quill_tensor *args[] = {&c.in[0], &c.in[1]};
  check_run(&c, src, args, 2);
  unload(&c);
}

static void test_dynamic(quill_context *ctx, const char *name) {
  onnx_case c;
  if (!load(&c, ctx, name, 1, 3)) {
    CHECK(!"test data");
    unload(&c);
    return;
  }
  char d0[64], src[1024];
  dims(&c.in[0], d0, sizeof d0);
  snprintf(src, sizeof src,
           "func @f(%%x: tensor<%sf32>) -> tensor<%su8> {\n"
           "  %%y, %%s, %%z = dynamic_quantize %%x : tensor<%su8>, "
           "tensor<f32>, tensor<u8>\n  return %%y\n}\n",
           d0, d0, d0);
  const quill_tensor *args[] = {&c.in[0]};
  check_run(&c, src, args, 1);
  unload(&c);
}

int main(void) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  quill_diag_set_handler(ctx, print_diag, NULL);
  test_qlinear(ctx, "test_qlinearconv", "qconv2d", 0);
  test_qlinear(ctx, "test_qlinearmatmul_2D", "qmatmul", 1);
  test_qlinear(ctx, "test_qlinearmatmul_3D", "qmatmul", 2);
  test_integer(ctx, "test_convinteger_without_padding", "qconv2d", 3, "");
  test_integer(ctx, "test_convinteger_with_padding", "qconv2d", 3,
               "{pads = [1, 1, 1, 1]}");
  test_integer(ctx, "test_matmulinteger", "qmatmul", 4, "");
  test_dynamic(ctx, "test_dynamicquantizelinear");
  test_dynamic(ctx, "test_dynamicquantizelinear_max_adjusted");
  test_dynamic(ctx, "test_dynamicquantizelinear_min_adjusted");
  quill_context_destroy(ctx);
  printf("test_ref_onnx_qdata: %d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}
