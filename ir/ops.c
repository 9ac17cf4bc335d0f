/*
 * ops.c - the op info table and mnemonic lookup, generated from ir/ops.def.
 *
 * The table is one X-macro expansion of ops.def with designated
 * initializers, so adding a row to ops.def is the only edit needed:
 *
 *   [QUILL_OP_ADD] = {"add", 2, 2, 1, PURE|ELEMENTWISE|COMMUTATIVE,
 *                     quill_verify_binary},
 *
 * Mnemonic lookup is a linear scan: there are fewer than a hundred ops and
 * the parser calls it once per op line, which is far from any hot path.
 */
#include <string.h>

#include "ir/op_verify.h"

const quill_op_info quill_op_infos[QUILL_OP_COUNT] = {
#define QUILL_OP(ID, mn, mino, maxo, nres, fl, ver)                            \
  [QUILL_OP_##ID] = {mn, mino, maxo, nres, fl, ver},
#include "ir/ops.def"
#undef QUILL_OP
};

bool quill_opcode_lookup(const char *mnemonic, size_t len, quill_opcode *out) {
  for (int i = 0; i < QUILL_OP_COUNT; i++) {
    const char *m = quill_op_infos[i].mnemonic;
    if (strncmp(m, mnemonic, len) == 0 && m[len] == '\0') {
      if (out)
        *out = (quill_opcode)i;
      return true;
    }
  }
  return false;
}
