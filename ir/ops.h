/*
 * ops.h - the opcode enum and the op info table, both generated from
 * ir/ops.def by the X-macro.
 *
 * Anything that behaves per op (printing, verifying, folding, lowering)
 * indexes a table by opcode rather than switching over the enum:
 *
 *   static const lower_fn lowerers[QUILL_OP_COUNT] = {
 *     [QUILL_OP_ADD] = lower_add, ...
 *   };
 *
 * A NULL entry means "not supported here" and is reported by op name.
 */
#ifndef QUILL_IR_OPS_H
#define QUILL_IR_OPS_H

#include "types_fwd.h"

QUILL_BEGIN_DECLS

/* Op flags. */
enum {
  QUILL_OPF_PURE = 1u << 0,        /* no side effects: CSE/DCE may act */
  QUILL_OPF_COMMUTATIVE = 1u << 1, /* binary op, operands may be swapped */
  QUILL_OPF_TERMINATOR = 1u << 2,  /* must be the last op of a graph */
  QUILL_OPF_ELEMENTWISE = 1u << 3, /* result[i] depends on operands[i] */
  QUILL_OPF_CONSTANT = 1u << 4,    /* produces a constant from its attrs */
  QUILL_OPF_QUANT = 1u << 5,       /* a quantization op */
};

typedef enum quill_opcode {
#define QUILL_OP(ID, mn, mino, maxo, nres, fl, ver) QUILL_OP_##ID,
#include "ops.def"
#undef QUILL_OP
  QUILL_OP_COUNT
} quill_opcode;

/* An op-specific verifier: emits diagnostics at the op's location and
 * returns QUILL_ERR_INVALID if the op is malformed. Runs only after the
 * generic checks (arity, non-null types, dominance) have passed. */
typedef quill_status (*quill_op_verify_fn)(quill_context *ctx,
                                           const quill_op *op);

typedef struct quill_op_info {
  const char *mnemonic;
  int min_operands;
  int max_operands; /* -1: variadic */
  int num_results;  /* -1: variadic (>= 1) */
  unsigned flags;
  quill_op_verify_fn verify;
} quill_op_info;

/* The table, indexed by opcode. */
extern const quill_op_info quill_op_infos[QUILL_OP_COUNT];

static inline const quill_op_info *quill_opcode_info(quill_opcode opc) {
  return &quill_op_infos[opc];
}
static inline const char *quill_opcode_name(quill_opcode opc) {
  return quill_op_infos[opc].mnemonic;
}
/* Find an opcode by mnemonic; returns false if there is none. */
bool quill_opcode_lookup(const char *mnemonic, size_t len, quill_opcode *out);

QUILL_END_DECLS

#endif /* QUILL_IR_OPS_H */
