/*
 * test_ref_qops_pool.c - exactness of the reference kernels of the
 * quantized pooling and data-movement ops: avgpool, global_avgpool,
 * maxpool and global_maxpool on quantized tensors, pad, resize, concat and
 * transpose (targets/reference/kernels_pool.c, kernels_shape.c,
 * kernels_resize.c).
 *
 * Hand-checked values: every rounding policy on the average's exact ties
 * (an odd zero point too: tflite rounds the stored sum), a requantizing
 * global mean, count_include_pad (padding counts as the zero point),
 * maxpool on storage, pad's zero-point fill and edge mode, nearest resize
 * and concat moving stored values. Then 40 random quantized avgpools
 * (rand() seeded here) against a naive average with the policy's tie rule.
 *
 * Each case is a one-op .qir function run by ref_qops_harness.h (setup,
 * EXPECT1/EXPECT2: one check per case). The elementwise ops and the
 * parameter arithmetic are test_ref_qops.c.
 */
#include "test/unit/ref_qops_harness.h"

/* ---- quantized pooling and data movement --------------------------------- */

static void test_qpool(void) {
  char src[1024];
  /* 1x1x2x4, 2x2 windows stride 2: sums 2+3+6+7 = 18 -> 4.5,
   * -1-2-3-4 = -10 -> -2.5 */
  const double x[] = {2, 3, -1, -2, 6, 7, -3, -4};
  const double *want[] = {V(4, -2), V(5, -3), V(5, -2), V(5, -3)};
  for (int p = 0; p < 4; p++) {
    snprintf(src, sizeof src,
             "func @f(%%x: tensor<1x1x2x4x!quant.uniform<i8:f32, 0.1:0>>) -> "
             "tensor<1x1x1x2x!quant.uniform<i8:f32, 0.1:0>> {\n"
             "  %%y = avgpool %%x {kernel_shape = [2, 2], strides = [2, 2], "
             "rounding = \"%s\"} : "
             "tensor<1x1x1x2x!quant.uniform<i8:f32, 0.1:0>>\n  return %%y\n}\n",
             policies[p]);
    expect(src, x, 8, NULL, 0, want[p], 2, __LINE__);
    snprintf(src, sizeof src,
             "func @f(%%x: tensor<1x2x1x2x!quant.uniform<i8:f32, 0.1:0>>) -> "
             "tensor<1x2x1x1x!quant.uniform<i8:f32, 0.1:0>> {\n"
             "  %%y = global_avgpool %%x {rounding = \"%s\"} : "
             "tensor<1x2x1x1x!quant.uniform<i8:f32, 0.1:0>>\n  return %%y\n}\n",
             policies[p]);
    /* planes [2, 3] -> 2.5 and [-1, -2] -> -1.5 */
    const double *gw[] = {V(2, -2), V(3, -2), V(3, -1), V(3, -2)};
    expect(src, x, 4, NULL, 0, gw[p], 2, __LINE__);
  }
  /* An odd zero point: tflite rounds the stored sum (2+3+4+5 = 14: (14 +
   * 2) / 4 = 4), the other policies the centered average (14 + 20 = 34:
   * 8.5, half_even 8, so 8 - 5 = 3). */
  const double *zw[] = {V(3), V(4), V(4), V(4)};
  for (int p = 0; p < 4; p++) {
    snprintf(src, sizeof src,
             "func @f(%%x: tensor<1x1x2x2x!quant.uniform<i8:f32, 0.1:-5>>) -> "
             "tensor<1x1x1x1x!quant.uniform<i8:f32, 0.1:-5>> {\n"
             "  %%y = avgpool %%x {kernel_shape = [2, 2], rounding = \"%s\"} "
             ": tensor<1x1x1x1x!quant.uniform<i8:f32, 0.1:-5>>\n"
             "  return %%y\n}\n",
             policies[p]);
    expect(src, V(2, 3, 4, 5), 4, NULL, 0, zw[p], 1, __LINE__);
  }
  /* A requantizing global mean: (x - 3) sums 2+4+6+8 = 20 and 0; s_x / (n
   * s_y) = 0.5 / (4 * 0.25) = 0.5: 10 and 0, + zp 7. Fixed point with
   * multiplier 2^30, shift 0 (0.5), tflite: the second plane sums -3, and
   * gemmlowp's doubling high multiply rounds -1.5 toward zero: -1. */
  EXPECT1("func @f(%x: tensor<1x2x2x2x!quant.uniform<i8:f32, 0.5:3>>) -> "
          "tensor<1x2x1x1x!quant.uniform<i8:f32, 0.25:7>> {\n"
          "  %y = global_avgpool %x : "
          "tensor<1x2x1x1x!quant.uniform<i8:f32, 0.25:7>>\n  return %y\n}\n",
          V(5, 7, 9, 11, 3, 3, 3, 3), V(17, 7));
  EXPECT1("func @f(%x: tensor<1x2x2x2x!quant.uniform<i8:f32, 0.5:3>>) -> "
          "tensor<1x2x1x1x!quant.uniform<i8:f32, 0.25:7>> {\n"
          "  %y = global_avgpool %x {multiplier = [1073741824], shift = [0], "
          "rounding = \"tflite\"} : "
          "tensor<1x2x1x1x!quant.uniform<i8:f32, 0.25:7>>\n  return %y\n}\n",
          V(5, 7, 9, 11, 0, 3, 3, 3), V(17, 6));
  /* count_include_pad: padding counts as the zero point (-5). 1x1x1x2,
   * kernel [1, 3], pads [0, 1, 0, 1]: windows (pad, 4, 6) and (4, 6, pad):
   * (-5 + 4 + 6) / 3 = 1.67 -> 2 ; without: (4 + 6) / 2 = 5 */
  EXPECT1("func @f(%x: tensor<1x1x1x2x!quant.uniform<i8:f32, 0.1:-5>>) -> "
          "tensor<1x1x1x2x!quant.uniform<i8:f32, 0.1:-5>> {\n"
          "  %y = avgpool %x {kernel_shape = [1, 3], pads = [0, 1, 0, 1], "
          "count_include_pad = 1} : "
          "tensor<1x1x1x2x!quant.uniform<i8:f32, 0.1:-5>>\n  return %y\n}\n",
          V(4, 6), V(2, 2));
  EXPECT1("func @f(%x: tensor<1x1x1x2x!quant.uniform<i8:f32, 0.1:-5>>) -> "
          "tensor<1x1x1x2x!quant.uniform<i8:f32, 0.1:-5>> {\n"
          "  %y = avgpool %x {kernel_shape = [1, 3], pads = [0, 1, 0, 1]} : "
          "tensor<1x1x1x2x!quant.uniform<i8:f32, 0.1:-5>>\n  return %y\n}\n",
          V(4, 6), V(5, 5));
  /* maxpool on storage (u8) */
  EXPECT1("func @f(%x: tensor<1x1x2x2x!quant.uniform<u8:f32, 0.1:100>>) -> "
          "tensor<1x1x1x1x!quant.uniform<u8:f32, 0.1:100>> {\n"
          "  %y = maxpool %x {kernel_shape = [2, 2]} : "
          "tensor<1x1x1x1x!quant.uniform<u8:f32, 0.1:100>>\n  return %y\n}\n",
          V(3, 250, 99, 100), V(250));
  EXPECT1("func @f(%x: tensor<1x2x1x2x!quant.uniform<i8:f32, 0.1:0>>) -> "
          "tensor<1x2x1x1x!quant.uniform<i8:f32, 0.1:0>> {\n"
          "  %y = global_maxpool %x : "
          "tensor<1x2x1x1x!quant.uniform<i8:f32, 0.1:0>>\n  return %y\n}\n",
          V(-3, -7, 5, 1), V(-3, 5));
}

static void test_qdata(void) {
  /* pad: the zero point fills */
  EXPECT1("func @f(%x: tensor<2x!quant.uniform<u8:f32, 0.1:17>>) -> "
          "tensor<4x!quant.uniform<u8:f32, 0.1:17>> {\n"
          "  %y = pad %x {pads = [1, 1]} : "
          "tensor<4x!quant.uniform<u8:f32, 0.1:17>>\n  return %y\n}\n",
          V(3, 200), V(17, 3, 200, 17));
  EXPECT1("func @f(%x: tensor<2x!quant.uniform<u8:f32, 0.1:17>>) -> "
          "tensor<4x!quant.uniform<u8:f32, 0.1:17>> {\n"
          "  %y = pad %x {pads = [1, 1], mode = \"edge\"} : "
          "tensor<4x!quant.uniform<u8:f32, 0.1:17>>\n  return %y\n}\n",
          V(3, 200), V(3, 3, 200, 200));
  /* resize nearest: stored values picked */
  EXPECT1("func @f(%x: tensor<1x1x1x2x!quant.uniform<i8:f32, 0.1:3>>) -> "
          "tensor<1x1x1x4x!quant.uniform<i8:f32, 0.1:3>> {\n"
          "  %y = resize %x {mode = \"nearest\", "
          "coordinate_transformation_mode = \"asymmetric\", nearest_mode = "
          "\"floor\"} : tensor<1x1x1x4x!quant.uniform<i8:f32, 0.1:3>>\n"
          "  return %y\n}\n",
          V(-7, 9), V(-7, -7, 9, 9));
  /* concat and transpose move stored bytes */
  EXPECT2("func @f(%a: tensor<2x!quant.uniform<i8:f32, 0.1:3>>, "
          "%b: tensor<1x!quant.uniform<i8:f32, 0.1:3>>) -> "
          "tensor<3x!quant.uniform<i8:f32, 0.1:3>> {\n"
          "  %y = concat %a, %b {axis = 0} : "
          "tensor<3x!quant.uniform<i8:f32, 0.1:3>>\n  return %y\n}\n",
          V(-1, 2), V(-128), V(-1, 2, -128));
  EXPECT1("func @f(%x: tensor<2x2x!quant.uniform<i8:f32, 0.1:3>>) -> "
          "tensor<2x2x!quant.uniform<i8:f32, 0.1:3>> {\n"
          "  %y = transpose %x {perm = [1, 0]} : "
          "tensor<2x2x!quant.uniform<i8:f32, 0.1:3>>\n  return %y\n}\n",
          V(1, 2, 3, 4), V(1, 3, 2, 4));
}

/* Randomized quantized avgpool against a naive formula. */
static void test_qpool_random(void) {
  srand(9);
  char src[1024];
  for (int it = 0; it < 40; it++) {
    int h = rand() % 5 + 3, w = rand() % 5 + 3, k = rand() % 2 + 2;
    int pad = rand() % 2, zp = rand() % 40 - 20;
    int inc = rand() % 2;
    quill_rounding pol = (quill_rounding)(it % 4);
    int oh = (h + 2 * pad - k) / 1 + 1, ow = (w + 2 * pad - k) + 1;
    snprintf(src, sizeof src,
             "func @f(%%x: tensor<1x1x%dx%dx!quant.uniform<i8:f32, 0.1:%d>>) "
             "-> tensor<1x1x%dx%dx!quant.uniform<i8:f32, 0.1:%d>> {\n"
             "  %%y = avgpool %%x {kernel_shape = [%d, %d], pads = [%d, %d, "
             "%d, %d], count_include_pad = %d, rounding = \"%s\"} : "
             "tensor<1x1x%dx%dx!quant.uniform<i8:f32, 0.1:%d>>\n"
             "  return %%y\n}\n",
             h, w, zp, oh, ow, zp, k, k, pad, pad, pad, pad, inc,
             policies[pol], oh, ow, zp);
    run r;
    if (!setup(&r, src)) {
      CHECK(!"setup");
      run_free(&r);
      continue;
    }
    int xv[64];
    for (int i = 0; i < h * w; i++) {
      xv[i] = rand() % 256 - 128;
      quill_tensor_set_i64(&r.args[0], (size_t)i, xv[i]);
    }
    CHECK(quill_ref_eval_op(r.ctx, r.op, r.in, r.out) == QUILL_OK);
    int bad = 0;
    for (int oy = 0; oy < oh; oy++)
      for (int ox = 0; ox < ow; ox++) {
        long s = 0, n = 0;
        for (int i = 0; i < k; i++)
          for (int j = 0; j < k; j++) {
            int y = oy - pad + i, x = ox - pad + j;
            if (y >= 0 && y < h && x >= 0 && x < w) {
              s += xv[y * w + x];
              n++;
            } else if (inc) {
              s += zp;
              n++;
            }
          }
        long want;
        if (pol == QUILL_ROUND_TFLITE)
          want = s > 0 ? (s + n / 2) / n : (s - n / 2) / n;
        else {
          /* the centered average, exact enough to find ties */
          double q = (double)(s - n * zp) / (double)n;
          double fl = floor(q);
          if (q - fl != 0.5)
            want = (long)floor(q + 0.5);
          else
            want = pol == QUILL_ROUND_HALF_UP     ? (long)fl + 1
                   : pol == QUILL_ROUND_HALF_AWAY ? (fl >= 0 ? (long)fl + 1
                                                             : (long)fl)
                   : ((long)fl & 1)               ? (long)fl + 1
                                                  : (long)fl;
          want += zp;
        }
        bad += quill_tensor_get_i64(&r.out[0], (size_t)(oy * ow + ox)) != want;
      }
    CHECK(bad == 0);
    run_free(&r);
  }
}

int main(void) {
  test_qpool();
  test_qdata();
  test_qpool_random();
  printf("test_ref_qops_pool: %d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}
