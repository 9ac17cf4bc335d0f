/*
 * test_llvm_table.c - the LLVM target's lowering table against ir/ops.def:
 * every opcode either has a lowering or is in the list below of ops the
 * target reports as unsupported (so a new op in ops.def fails here until
 * it is lowered or listed), and the reported message names the op.
 */
#include <stdio.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/parser.h"
#include "targets/llvm/cg.h"
#include "test/unit/check.h"

/* Ops without a lowering (float ops nobody quantizes, training-time ops). */
static const quill_opcode unsupported[] = {
    QUILL_OP_FAKE_QUANT,
    /* a plugin's op: its meaning is registered at run time (reference
     * evaluator), there is no code to generate for it */
    QUILL_OP_CUSTOM,
    /* kept whole for the TFLite writer (UNIDIRECTIONAL_SEQUENCE_LSTM); the
     * ONNX importer unrolls LSTM nodes into lowered ops */
    QUILL_OP_LSTM,
};

static bool listed(quill_opcode o) {
  for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; i++)
    if (unsupported[i] == o)
      return true;
  return false;
}

static char last[512];
static void capture(void *ud, quill_loc loc, quill_diag_severity sev,
                    const char *msg) {
  (void)ud;
  (void)loc;
  (void)sev;
  snprintf(last, sizeof last, "%s", msg);
}

int main(void) {
  for (unsigned o = 0; o < QUILL_OP_COUNT; o++) {
    bool has = cg_lowerings[o].lower != NULL;
    if (has == listed((quill_opcode)o))
      fprintf(stderr, "op '%s': %s\n", quill_opcode_name((quill_opcode)o),
              has ? "lowered but listed as unsupported"
                  : "neither lowered nor listed as unsupported");
    CHECK(has != listed((quill_opcode)o));
  }
  /* the message for an op lowered for other operands: it names the op and
   * says why */
  quill_context *ctx = quill_context_create(NULL, NULL);
  quill_diag_set_handler(ctx, capture, NULL);
  const char *t = "func @f(%x: tensor<2x3xi32>) -> tensor<2x1xi32> {\n"
                  "  %y = reduce_max %x {axes = [1]} : tensor<2x1xi32>\n"
                  "  return %y\n}\n";
  quill_module *m = quill_parse_module(ctx, t, strlen(t), "t.qir", 0);
  quill_llvm_compiled *cm = NULL;
  CHECK(m != NULL);
  CHECK(quill_llvm_compile(ctx, quill_module_graph(m, 0), NULL, &cm) ==
        QUILL_ERR_UNSUPPORTED);
  CHECK(cm == NULL);
  CHECK(strstr(last, "op 'reduce_max' is not supported by target 'llvm' "
                     "(operands other than f32 or f64)"));
  /* options: the name must be a C identifier */
  quill_llvm_options o;
  quill_llvm_options_init(&o);
  CHECK(o.threads == 1 && o.opt_level == 3 && !strcmp(o.name, "model"));
  CHECK(quill_llvm_is_c_identifier("resnet_18"));
  CHECK(!quill_llvm_is_c_identifier("resnet-18"));
  CHECK(!quill_llvm_is_c_identifier("9lives"));
  CHECK(!quill_llvm_is_c_identifier("while"));
  CHECK(!quill_llvm_is_c_identifier(""));
  quill_llvm_isa isa;
  CHECK(quill_llvm_isa_parse("avx512-vnni", &isa) &&
        isa == QUILL_LLVM_ISA_AVX512_VNNI);
  CHECK(!quill_llvm_isa_parse("sse9", &isa));
  quill_module_destroy(m);
  quill_context_destroy(ctx);
  printf("test_llvm_table: %d checks, %d failures\n", checks, failures);
  return failures != 0;
}
