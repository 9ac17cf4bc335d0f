/*
 * doc_tables.c - print Quill's tables as JSON, for the generated reference
 * docs (scripts/gen_ref_docs.py: docs/ref-ops.md, docs/ref-passes.md,
 * docs/ref-backend-config.md). Built by ctest's build (test/CMakeLists.txt,
 * `doc-tables`), never installed.
 *
 *   {"targets": ["reference", "tflite", "onnx"(, "llvm")],
 *    "ops": [{"mnemonic", "min_operands", "max_operands", "num_results",
 *             "flags": [...], "support": {target: "yes" | builtin | null},
 *             "excluded": {target: reason}}, ...],
 *    "passes": [{"name", "summary", "options", "requires", "establishes",
 *                "preserves"}, ...],
 *    "config_keys": [{"section", "key", "type", "default", "meaning"}]}
 *
 * Everything comes from the opcode-indexed tables and registries the code
 * itself uses (ir/ops.def through quill_op_infos, the reference kernel
 * table, the TFLite and ONNX exporters' tables, passes/passes.def,
 * backends/config_keys.def), so the docs cannot disagree with the code.
 * The LLVM target's lowering table is printed when this program is built
 * with it (QUILL_HAVE_LLVM_TARGET: the target `quill_llvm` exists).
 */
#include <stdio.h>
#include <string.h>

#include "backends/validate.h"
#include "passes/pass.h"
#include "targets/onnx/onnx_export.h"
#include "targets/reference/ref.h"
#include "targets/tflite/tflite_export.h"
#ifdef QUILL_HAVE_LLVM_TARGET
#include "targets/llvm/cg.h"
#endif

static void str(const char *s) {
  if (!s) {
    fputs("null", stdout);
    return;
  }
  putchar('"');
  for (; *s; ++s) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      printf("\\%c", c);
    else if (c == '\n')
      fputs("\\n", stdout);
    else if (c < 0x20)
      printf("\\u%04x", c);
    else
      putchar(c);
  }
  putchar('"');
}

static void flags(unsigned f) {
  static const struct {
    unsigned bit;
    const char *name;
  } names[] = {{QUILL_OPF_PURE, "pure"},
               {QUILL_OPF_COMMUTATIVE, "commutative"},
               {QUILL_OPF_TERMINATOR, "terminator"},
               {QUILL_OPF_ELEMENTWISE, "elementwise"},
               {QUILL_OPF_CONSTANT, "constant"},
               {QUILL_OPF_QUANT, "quant"}};
  putchar('[');
  bool first = true;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
    if (f & names[i].bit) {
      printf("%s\"%s\"", first ? "" : ", ", names[i].name);
      first = false;
    }
  putchar(']');
}

static void props(unsigned p) {
  static const struct {
    unsigned bit;
    const char *name;
  } names[] = {{QUILL_PROP_NO_DEAD_OPS, "no-dead-ops"},
               {QUILL_PROP_NO_COMMON_SUBEXPR, "no-common-subexpr"},
               {QUILL_PROP_CONSTANTS_FOLDED, "constants-folded"},
               {QUILL_PROP_CANONICAL, "canonical"}};
  if (p == QUILL_PROP_ALL) {
    fputs("[\"all\"]", stdout);
    return;
  }
  putchar('[');
  bool first = true;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
    if (p & names[i].bit) {
      printf("%s\"%s\"", first ? "" : ", ", names[i].name);
      first = false;
    }
  putchar(']');
}

/* One op's support by each target: a string (what it is written as), or
 * null with a reason in "excluded". */
static void op_support(quill_opcode o) {
  const char *why = NULL;
  fputs(", \"support\": {\"reference\": ", stdout);
  str(quill_ref_kernels[o].eval ? "yes" : NULL);
  fputs(", \"tflite\": ", stdout);
  str(quill_tflite_export_builtin(o));
  fputs(", \"onnx\": ", stdout);
  str(quill_onnx_export_op_type(o));
#ifdef QUILL_HAVE_LLVM_TARGET
  fputs(", \"llvm\": ", stdout);
  str(cg_lowerings[o].lower ? "yes" : NULL);
#endif
  fputs("}, \"excluded\": {", stdout);
  bool first = true;
  if (quill_tflite_export_op_excluded(o, &why)) {
    fputs("\"tflite\": ", stdout);
    str(why);
    first = false;
  }
  if (quill_onnx_export_op_excluded(o, &why)) {
    fputs(first ? "\"onnx\": " : ", \"onnx\": ", stdout);
    str(why);
  }
  putchar('}');
}

int main(void) {
  fputs("{\"targets\": [\"reference\", \"tflite\", \"onnx\"", stdout);
#ifdef QUILL_HAVE_LLVM_TARGET
  fputs(", \"llvm\"", stdout);
#endif
  fputs("],\n \"ops\": [", stdout);
  for (unsigned o = 0; o < QUILL_OP_COUNT; ++o) {
    const quill_op_info *i = quill_opcode_info((quill_opcode)o);
    printf("%s\n  {\"mnemonic\": ", o ? "," : "");
    str(i->mnemonic);
    printf(", \"min_operands\": %d, \"max_operands\": %d, "
           "\"num_results\": %d, \"flags\": ",
           i->min_operands, i->max_operands, i->num_results);
    flags(i->flags);
    op_support((quill_opcode)o);
    putchar('}');
  }
  fputs("],\n \"passes\": [", stdout);
  for (unsigned k = 0; k < quill_pass_registry_size(); ++k) {
    const quill_pass *p = quill_pass_registry_at(k);
    printf("%s\n  {\"name\": ", k ? "," : "");
    str(p->name);
    fputs(", \"summary\": ", stdout);
    str(p->summary);
    fputs(", \"options\": ", stdout);
    str(p->options);
    fputs(", \"requires\": ", stdout);
    props(p->requires);
    fputs(", \"establishes\": ", stdout);
    props(p->establishes);
    fputs(", \"preserves\": ", stdout);
    props(p->preserves);
    putchar('}');
  }
  fputs("],\n \"config_keys\": [", stdout);
  for (unsigned k = 0; k < quill_backend_num_keys; ++k) {
    const quill_bkey *b = &quill_backend_keys[k];
    printf("%s\n  {\"section\": ", k ? "," : "");
    str(b->section_name);
    fputs(", \"key\": ", stdout);
    str(b->key);
    fputs(", \"type\": ", stdout);
    str(b->type);
    fputs(", \"default\": ", stdout);
    str(b->dflt);
    fputs(", \"meaning\": ", stdout);
    str(b->meaning);
    putchar('}');
  }
  fputs("]}\n", stdout);
  return 0;
}
