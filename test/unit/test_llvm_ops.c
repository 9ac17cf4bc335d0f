/*
 * test_llvm_ops.c - the LLVM target's lowerings, op by op, against the
 * reference interpreter: each case is a small .qir function run with
 * random inputs by the JIT on every instruction path this machine can run
 * (and with 2 threads), compared bit for bit (integer and quantized
 * outputs, and the float ops that mirror the reference's scalar code) or
 * within a tolerance (the float conv/matmul, whose summation order
 * differs).
 */
#include "llvm_harness.h"

#define QU8(s, z) "!quant.uniform<u8:f32, " #s ":" #z ">"
#define QI8(s, z) "!quant.uniform<i8:f32, " #s ":" #z ">"

static const llvm_case cases[] = {
    {"identity",
     "func @f(%x: tensor<2x3xi8>) -> tensor<2x3xi8> {\n"
     "  return %x\n}\n", 0, 0, 0, 0, false},
    {"quantize_dequantize",
     "func @f(%x: tensor<1x3x5x7xf32>) -> (tensor<1x3x5x7x" QU8(0.03, 17) ">, "
     "tensor<1x3x5x7xf32>) {\n"
     "  %q = quantize %x : tensor<1x3x5x7x" QU8(0.03, 17) ">\n"
     "  %d = dequantize %q : tensor<1x3x5x7xf32>\n"
     "  return %q, %d\n}\n", 0, 0, 0, 0, false},
    {"quantize_per_axis",
     "func @f(%x: tensor<3x4xf32>) -> tensor<3x4x!quant.uniform<i8:f32:0, "
     "{0.1:1, 0.02:-3, 0.5:0}>> {\n"
     "  %q = quantize %x : tensor<3x4x!quant.uniform<i8:f32:0, {0.1:1, "
     "0.02:-3, 0.5:0}>>\n"
     "  return %q\n}\n", 0, 0, 0, 0, false},
    {"requantize_float",
     "func @f(%x: tensor<2x50x" QU8(0.1, 128) ">) -> tensor<2x50x" QI8(0.07, 3)
     "> {\n"
     "  %y = requantize %x : tensor<2x50x" QI8(0.07, 3) ">\n"
     "  return %y\n}\n", 0, 0, 0, 0, false},
    {"qconv2d_basic",
     "func @f(%x: tensor<1x4x6x6x" QU8(0.05, 120) ">) -> tensor<1x8x6x6x"
     QU8(0.1, 10) "> {\n"
     "  %w = constant {value = dense<\"0x"
     "0102030405060708090A0B0C0D0E0F10F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF00"
     "0102030405060708090A0B0C0D0E0F10F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF00"
     "0102030405060708090A0B0C0D0E0F10F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF00"
     "0102030405060708090A0B0C0D0E0F10F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF00"
     "0102030405060708090A0B0C0D0E0F10F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF00"
     "0102030405060708090A0B0C0D0E0F10F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF00"
     "0102030405060708090A0B0C0D0E0F10F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF00"
     "0102030405060708090A0B0C0D0E0F10F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF00"
     "0102030405060708090A0B0C0D0E0F10F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF00\"> "
     ": tensor<8x4x3x3x" QI8(0.01, 0) ">} : tensor<8x4x3x3x" QI8(0.01, 0) ">\n"
     "  %b = constant {value = dense<[1, -2, 3, -4, 5, -6, 7, -800]> : "
     "tensor<8xi32>} : tensor<8xi32>\n"
     "  %y = qconv2d %x, %w, %b {pads = [1, 1, 1, 1]} : tensor<1x8x6x6x"
     QU8(0.1, 10) ">\n"
     "  return %y\n}\n", 0, 0, 0, 0, false},
    {"qconv2d_runtime_weights_tflite",
     "func @f(%x: tensor<2x4x5x5x" QI8(0.05, -3) ">, %w: tensor<6x2x3x2x"
     "!quant.uniform<i8:f32:0, {0.01:0, 0.02:1, 0.03:-1, 0.01:0, 0.02:0, "
     "0.01:2}>>, %b: tensor<6xi32>) -> tensor<2x6x2x2x" QI8(0.2, 5) "> {\n"
     "  %y = qconv2d %x, %w, %b {group = 2, strides = [2, 2], dilations = [1, "
     "2], pads = [0, 1, 1, 0], rounding = \"tflite\", multiplier = [1518500250, "
     "1073741824, 2000000000, 1300000000, 1100000000, 1900000000], shift = [-3, "
     "-5, -4, -6, 0, 1]} : tensor<2x6x2x2x" QI8(0.2, 5) ">\n"
     "  return %y\n}\n", 0, 0, 0, 0, false},
    {"qmatmul_const_b",
     "func @f(%a: tensor<3x16x" QU8(0.02, 100) ">) -> tensor<3x5x" QI8(0.3, -2)
     "> {\n"
     "  %b = constant {value = dense<\"0x"
     "7942BDF22106F0847762F0F3CB4D764DC7072051159A0F89F2C6DACAE344BB31"
     "1245FD6F84DF9AD7C5B3D076AC0E8F53A7356C88913F20F6F72DB022D24D0A96"
     "DAD43C1617C1A98E78129E0327371065\"> : tensor<16x5x" QI8(0.04, 0) ">} : tensor<16x5x"
     QI8(0.04, 0) ">\n"
     "  %y = qmatmul %a, %b {rounding = \"half_away\"} : tensor<3x5x"
     QI8(0.3, -2) ">\n"
     "  return %y\n}\n", 0, 0, 0, 0, false},
    {"qadd_qmul_fixed_float",
     "func @f(%a: tensor<2x3x4x5x" QU8(0.05, 120) ">, %b: tensor<3x1x5x" QU8(0.03, 7)
     ">) -> (tensor<2x3x4x5x" QI8(0.08, 3) ">, tensor<2x3x4x5x" QI8(0.08, 3) ">, "
     "tensor<2x3x4x5x" QU8(0.2, 0) ">, tensor<2x3x4x5x" QU8(0.2, 0) ">) {\n"
     "  %x = qadd %a, %b {rounding = \"tflite\", multiplier = [1431655765, "
     "1717986918, 1431655765], shift = [0, 0, -18], act_min = -50, act_max = 90} "
     ": tensor<2x3x4x5x" QI8(0.08, 3) ">\n"
     "  %y = qadd %a, %b {rounding = \"half_up\"} : tensor<2x3x4x5x" QI8(0.08, 3)
     ">\n"
     "  %z = qmul %a, %b {rounding = \"half_even\", multiplier = [1288490189], "
     "shift = [-7]} : tensor<2x3x4x5x" QU8(0.2, 0) ">\n"
     "  %w = qmul %a, %b {rounding = \"half_away\"} : tensor<2x3x4x5x"
     QU8(0.2, 0) ">\n"
     "  return %x, %y, %z, %w\n}\n", 0, 0, 0, 0, false},
    {"lut_requantize_quantize_rounding",
     "func @f(%x: tensor<4x33x" QU8(0.1, 30) ">, %f: tensor<4x33xf32>) -> "
     "(tensor<4x33x" QI8(0.3, 1) ">, tensor<4x33x" QI8(0.07, -9) ">, "
     "tensor<4x33x" QI8(0.07, -9) ">, tensor<4x33x" QU8(0.02, 11) ">) {\n"
     "  %l = lut %x {table = dense<\"0x82B70EEE7F1A5039BEF07EC2347F066ED08F5DC7512447E3404300026B6E545594A065685D64C4980BB8D4544A8721A99A01AD219EB59CF6A15EF6F15A1D830BB7CE09D6BBC004E7175C643C7DECB0B580EC37BC9712DD2E6AAEB94BAE8D2F9FA29C5A284C9EF7521829CF1079B080E9D74A1C10FCAB6A4243D33656DEBE4C1ED79648E856E8F9A2F58C95F0CE4B39C15BFFAD5C2DFB8BB820B6119CBA8FF88796AE5B05F280A68CED93B6B28CB0D1B358E6BAAB485565B9F49028D557D79A8A0E6451E15C705C15F173541B4438A25CF76312D4EEB3C2246879BF00B3CF8ED13ABF129A3097AD96B442D6D1BDEF4850C3F465442EB300C337A648A6C0DBDD73\"> : tensor<256xi8>} : tensor<4x33x"
     QI8(0.3, 1) ">\n"
     "  %r = requantize %x {rounding = \"half_up\"} : tensor<4x33x" QI8(0.07, -9)
     ">\n"
     "  %s = requantize %x {rounding = \"tflite\", multiplier = [1533916891], "
     "shift = [1]} : tensor<4x33x" QI8(0.07, -9) ">\n"
     "  %q = quantize %f {rounding = \"half_away\"} : tensor<4x33x" QU8(0.02, 11)
     ">\n"
     "  return %l, %r, %s, %q\n}\n", 0, 0, 0, 0, false},
    {"quantized_pools",
     "func @f(%x: tensor<1x19x9x7x" QU8(0.1, 37) ">) -> (tensor<1x19x5x4x"
     QU8(0.1, 37) ">, tensor<1x19x5x4x" QU8(0.1, 37) ">, tensor<1x19x4x3x"
     QU8(0.1, 37) ">, tensor<1x19x1x1x" QU8(0.1, 37) ">, tensor<1x19x1x1x"
     QI8(0.05, -3) ">, tensor<1x19x1x1x" QI8(0.05, -3) ">) {\n"
     "  %a = avgpool %x {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, "
     "1, 1], count_include_pad = 1, rounding = \"half_even\"} : tensor<1x19x5x4x"
     QU8(0.1, 37) ">\n"
     "  %b = avgpool %x {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, "
     "1, 1], rounding = \"tflite\"} : tensor<1x19x5x4x" QU8(0.1, 37) ">\n"
     "  %c = maxpool %x {kernel_shape = [3, 2], strides = [2, 2]} : "
     "tensor<1x19x4x3x" QU8(0.1, 37) ">\n"
     "  %d = global_avgpool %x {rounding = \"half_away\"} : tensor<1x19x1x1x"
     QU8(0.1, 37) ">\n"
     "  %e = global_avgpool %x : tensor<1x19x1x1x" QI8(0.05, -3) ">\n"
     "  %g = global_avgpool %x {rounding = \"tflite\", multiplier = [1200000000], "
     "shift = [-5]} : tensor<1x19x1x1x" QI8(0.05, -3) ">\n"
     "  return %a, %b, %c, %d, %e, %g\n}\n", 0, 0, 0, 0, false},
    {"quantized_data_movement",
     "func @f(%x: tensor<2x3x4x" QI8(0.1, -5) ">) -> "
     "(tensor<4x5x6x" QI8(0.1, -5) ">, tensor<2x7x8x" QI8(0.1, -5) ">, "
     "tensor<2x2x2x4x" QI8(0.1, -5) ">, tensor<2x6x12x" QI8(0.1, -5) ">) {\n"
     "  %p = pad %x {pads = [1, 1, 1, 1, 1, 1]} : tensor<4x5x6x" QI8(0.1, -5)
     ">\n"
     "  %r = pad %x {pads = [0, 2, 1, 0, 2, 3], mode = \"reflect\"} : "
     "tensor<2x7x8x" QI8(0.1, -5) ">\n"
     "  %i = constant {value = dense<[2, -1, 0, 1]> : tensor<2x2xi64>} : "
     "tensor<2x2xi64>\n"
     "  %g = gather %x, %i {axis = 1} : tensor<2x2x2x4x" QI8(0.1, -5) ">\n"
     "  %s = resize %x {mode = \"nearest\", coordinate_transformation_mode = "
     "\"asymmetric\", nearest_mode = \"floor\"} : tensor<2x6x12x" QI8(0.1, -5)
     ">\n"
     "  return %p, %r, %g, %s\n}\n", 0, 0, 0, 0, false},
    {"qconv2d_act_clamp_depthwise",
     "func @f(%x: tensor<1x20x9x9x" QU8(0.05, 3) ">) -> (tensor<1x20x9x9x"
     QU8(0.1, 10) ">, tensor<1x20x5x5x" QI8(0.1, -20) ">) {\n"
     "  %w = constant {value = dense<\"0xFFCBFB7936E2E3775B6AA91919C33E7CCE00C1EB86D2727CCFFE6ECAA5FB87A0292076F2BFCC8B49A354E584FB0910C7BF70FA498ABFFEC559A8397ECACCFF1C7FFA05265E1B623F669F8543A1CDC90936D71ECC3C0887F7DADD2F3F5118A28A81C10EF5306B9C64300CB184EE484FEE19143136752227FC5C6A58E3FAE52F5B39B367CCF8554391CE57813248EF16CA2648F96AD0A5ABFB320D64007AD50AA8ED160B508D923CBBC552964B912A7287D639EE7B\"> : tensor<20x1x3x3x" QI8(0.01, 0)
     ">} : tensor<20x1x3x3x" QI8(0.01, 0) ">\n"
     "  %y = qconv2d %x, %w {group = 20, pads = [1, 1, 1, 1], act_min = 10, "
     "act_max = 200} : tensor<1x20x9x9x" QU8(0.1, 10) ">\n"
     "  %z = qconv2d %x, %w {group = 20, strides = [2, 2], pads = [1, 1, 1, 1], "
     "rounding = \"tflite\", multiplier = [1610612736], shift = [-6], act_min = "
     "-20} : tensor<1x20x5x5x" QI8(0.1, -20) ">\n"
     "  return %y, %z\n}\n", 0, 0, 0, 0, false},
    {"maxpool_avgpool_f32",
     "func @f(%x: tensor<1x3x7x7xf32>) -> (tensor<1x3x4x4xf32>, "
     "tensor<1x3x4x4xf32>, tensor<1x3x1x1xf32>) {\n"
     "  %a = maxpool %x {kernel_shape = [3, 3], strides = [2, 2], pads = [1, "
     "1, 1, 1]} : tensor<1x3x4x4xf32>\n"
     "  %b = avgpool %x {kernel_shape = [3, 3], strides = [2, 2], pads = [1, "
     "1, 1, 1], count_include_pad = 1} : tensor<1x3x4x4xf32>\n"
     "  %c = global_avgpool %x : tensor<1x3x1x1xf32>\n"
     "  return %a, %b, %c\n}\n", 0, 0, 0, 0, false},
    {"data_movement",
     "func @f(%x: tensor<2x3x4xi8>, %y: tensor<2x1x4xi8>) -> (tensor<4x3x2xi8>, "
     "tensor<2x4x4xi8>, tensor<2x1x2xi8>, tensor<4x5x6xi8>, tensor<24xi8>) {\n"
     "  %t = transpose %x {perm = [2, 1, 0]} : tensor<4x3x2xi8>\n"
     "  %c = concat %x, %y {axis = 1} : tensor<2x4x4xi8>\n"
     "  %s = slice %x {starts = [0, 2, 3], ends = [2, 0, 0], steps = [1, -2, "
     "-2]} : tensor<2x1x2xi8>\n"
     "  %p = pad %x {pads = [1, 1, 1, 1, 1, 1], value = 7} : tensor<4x5x6xi8>\n"
     "  %r = reshape %x : tensor<24xi8>\n"
     "  return %t, %c, %s, %p, %r\n}\n", 0, 0, 0, 0, false},
    {"float_eltwise",
     "func @f(%x: tensor<2x3x4x5xf32>, %y: tensor<3x1x5xf32>) -> "
     "(tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>) {\n"
     "  %a = add %x, %y : tensor<2x3x4x5xf32>\n"
     "  %s = sigmoid %a : tensor<2x3x4x5xf32>\n"
     "  %h = hard_swish %x : tensor<2x3x4x5xf32>\n"
     "  %c = clip %a {min = -1.0, max = 0.5} : tensor<2x3x4x5xf32>\n"
     "  return %s, %h, %c\n}\n", 0, 0, 0, 0, false},
    {"float_conv_gemm_softmax",
     "func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: "
     "tensor<4xf32>, %fw: tensor<10x64xf32>) -> tensor<1x10xf32> {\n"
     "  %c = conv2d %x, %w, %b {pads = [1, 1, 1, 1], strides = [2, 2], "
     "activation = \"relu\"} : tensor<1x4x4x4xf32>\n"
     "  %f = flatten %c {axis = 1} : tensor<1x64xf32>\n"
     "  %g = gemm %f, %fw {trans_b = 1} : tensor<1x10xf32>\n"
     "  %s = softmax %g : tensor<1x10xf32>\n"
     "  return %s\n}\n", 1e-4, 0, 0, 0, false},
};

int main(void) {
  quill_llvm_isa isas[QUILL_LLVM_ISA_COUNT];
  unsigned nisa = host_isas(isas);
  CHECK(nisa >= 1);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    for (unsigned k = 0; k < nisa; k++) {
      llvm_case c = cases[i];
      c.isa = isas[k];
      CHECK(run_case(&c));
    }
    llvm_case c = cases[i];
    c.threads = 2;
    CHECK(run_case(&c));
  }
  printf("test_llvm_ops: %d checks, %d failures\n", checks, failures);
  return failures != 0;
}
