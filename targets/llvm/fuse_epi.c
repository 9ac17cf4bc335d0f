/*
 * fuse_epi.c - the elementwise integer ops after a qmatmul with constant
 * weights, computed in its requantization epilogue as one table lookup:
 * no tensor between them is written.
 *
 * A transformer's linear layers quantize to
 *
 *   %m = qmatmul %x, %W          (constant 2-D W: the dot / AMX kernels)
 *   %a = qadd %m, %bias          (the bias: a constant per column)
 *   %g = lut %a                  (GELU, after the first MLP matmul)
 *
 * Lowered op by op, that is three stages, each reading and writing the
 * whole 197 x 3072 activation. Every value after the qmatmul is a function
 * of two bytes: the qmatmul's stored value r and the bias constant's
 * stored value b of the column. So at compile time the chain is evaluated
 * by the reference kernels themselves (quill_ref_eval_op) on all 256 x 256
 * pairs, and the epilogue looks the final storage value up:
 *
 *   tab[(b - bmin) * 256 + (r - rmin)]     bytes (64 KB; 256 without a qadd)
 *   off[ch] = (b[ch] - bmin) * 256          i32 per column, padded
 *   v = tab[off[ch] + r - rmin]             a vpgatherdd of the lanes (a
 *                                           scalar load for one element)
 *
 * after cg_requant_apply's requantization (the lanes are channels ch,
 * ch+1, ... as there). Bit-exact with the interpreter by construction, on
 * every instruction path (lit qmatmul-epi.test; randomized cases:
 * unit.test_llvm_qrandom_fused, epi). The fused ops emit nothing
 * themselves (cg_epi_is_fused) and memplan makes the chain's last value
 * live from the qmatmul on.
 *
 * A step joins the chain when the value before it has that one use (not
 * the return), its result has the same shape and every type is per
 * tensor, 8-bit, expressed in f32: at most one qadd whose other operand is
 * a constant with dims 1 but the last (the column count), and any number
 * of luts (up to EPI_MAX steps). The qmatmul must have a constant 2-D B,
 * an i32 accumulator and a result of rank <= 3 (no NHWC layout).
 */
#include <string.h>

#include "targets/llvm/cg.h"
#include "targets/reference/ref.h"

#define EPI_MAX 4 /* steps per chain */

typedef struct cg_epi {
  const quill_op *mm, *last;
  const quill_op *ops[EPI_MAX];
  unsigned slots[EPI_MAX], n;
  const quill_op *qadd;    /* the step with a constant, or NULL */
  const quill_attr *cst;   /* its constant */
  int64_t rmin;            /* the qmatmul result's storage minimum */
  bool sgn;                /* the last result's storage is signed */
  LLVMValueRef tab, off;   /* globals (lazy: off needs the kernel's pad) */
} cg_epi;

/* The single user of v, or NULL (no use, several, or the return). */
static quill_op *only_user(const quill_value *v) {
  if (!quill_value_has_one_use(v))
    return NULL;
  quill_op *user = quill_use_user(quill_value_first_use(v));
  return quill_op_opcode(user) == QUILL_OP_RETURN ? NULL : user;
}

static bool per_tensor8(const quill_type *e) {
  return quill_type_is_quant(e) && quill_type_quant_axis_of(e) < 0 &&
         quill_type_bit_width(quill_type_quant_storage(e)) == 8 &&
         quill_type_kind_of(quill_type_quant_expressed(e)) == QUILL_TYPE_F32;
}

/* cv: a constant of one value per column of v (every dim 1 but the last). */
static bool column_const(const quill_value *cv, const quill_value *v) {
  const quill_type *t = quill_value_type(cv), *vt = quill_value_type(v);
  unsigned r = quill_type_rank(t), rv = quill_type_rank(vt);
  if (!quill_value_constant(cv) || r == 0 || r > rv ||
      !per_tensor8(quill_type_elem(t)))
    return false;
  for (unsigned d = 0; d + 1 < r; d++)
    if (quill_type_dim(t, d) != 1)
      return false;
  return quill_type_dim(t, r - 1) == quill_type_dim(vt, rv - 1);
}

/* Whether op can follow chain value v; *slot: v's operand index. */
static bool step_ok(const quill_op *op, const quill_value *v, unsigned *slot) {
  const quill_type *yt = quill_value_type(quill_op_result(op, 0));
  if (!per_tensor8(quill_type_elem(yt)) ||
      !cg_same_shape(yt, quill_value_type(v)))
    return false;
  if (quill_op_opcode(op) == QUILL_OP_QADD) {
    if (quill_op_num_operands(op) != 2 || quill_op_attr(op, "multiplier"))
      return false;
    unsigned i = quill_op_operand(op, 0) == v ? 0 : 1;
    *slot = i;
    return quill_op_operand(op, i) == v &&
           column_const(quill_op_operand(op, 1 - i), v);
  }
  if (quill_op_opcode(op) == QUILL_OP_LUT) {
    const quill_attr *t = quill_op_attr(op, "table");
    *slot = 0;
    return t && quill_attr_kind_of(t) == QUILL_ATTR_DENSE &&
           quill_attr_dense_size(t) == 256 &&
           quill_type_num_elements(quill_attr_dense_type(t)) == 256;
  }
  return false;
}

/* The chain after qmatmul mm: its ops and slots; the step count. */
static unsigned chain(const quill_op *mm, const quill_op **ops,
                      unsigned *slots) {
  if (quill_op_opcode(mm) != QUILL_OP_QMATMUL ||
      quill_op_num_operands(mm) < 2 || quill_op_acc_i64(mm))
    return 0;
  const quill_value *b = quill_op_operand(mm, 1), *v = quill_op_result(mm, 0);
  if (!quill_value_constant(b) || quill_type_rank(quill_value_type(b)) != 2 ||
      quill_type_rank(quill_value_type(v)) > 3 ||
      !per_tensor8(quill_type_elem(quill_value_type(v))))
    return 0;
  unsigned n = 0, nadd = 0;
  while (n < EPI_MAX) {
    quill_op *u = only_user(v);
    if (!u || !step_ok(u, v, &slots[n]))
      break;
    if (quill_op_opcode(u) == QUILL_OP_QADD && nadd++)
      break; /* one constant per chain: the table is 256 x 256 */
    ops[n++] = u;
    v = quill_op_result(u, 0);
  }
  return n;
}

const quill_op *cg_epi_head(const quill_op *op) {
  quill_opcode k = quill_op_opcode(op);
  if (k != QUILL_OP_QADD && k != QUILL_OP_LUT)
    return NULL;
  const quill_op *cur = op;
  for (unsigned depth = 0; depth < EPI_MAX; depth++) {
    /* the chain value: the first operand that is not a constant */
    const quill_value *in = NULL;
    for (unsigned i = 0; i < quill_op_num_operands(cur) && !in; i++)
      if (!quill_value_constant(quill_op_operand(cur, i)))
        in = quill_op_operand(cur, i);
    const quill_op *d = in ? quill_value_def(in) : NULL;
    if (!d)
      return NULL;
    quill_opcode dk = quill_op_opcode(d);
    if (dk == QUILL_OP_QMATMUL) {
      const quill_op *ops[EPI_MAX];
      unsigned slots[EPI_MAX];
      unsigned n = chain(d, ops, slots);
      for (unsigned j = 0; j < n; j++)
        if (ops[j] == op)
          return d;
      return NULL;
    }
    if (dk != QUILL_OP_QADD && dk != QUILL_OP_LUT)
      return NULL;
    cur = d;
  }
  return NULL;
}

bool cg_epi_is_fused(const quill_op *op) { return cg_epi_head(op) != NULL; }

const quill_op *cg_epi_last(const quill_op *mm) {
  const quill_op *ops[EPI_MAX];
  unsigned slots[EPI_MAX];
  unsigned n = chain(mm, ops, slots);
  return n ? ops[n - 1] : NULL;
}

void cg_epi_free(cg *c, cg_epi *e) {
  if (e)
    quill_free(c->ctx, e, sizeof *e);
}

quill_status cg_epi_attach(cg *c, const quill_op *mm, cg_requant *rq) {
  const quill_op *ops[EPI_MAX];
  unsigned slots[EPI_MAX];
  unsigned n = chain(mm, ops, slots);
  if (!n || rq->raw)
    return QUILL_OK;
  cg_epi *e = quill_calloc(c->ctx, 1, sizeof *e);
  if (!e)
    return c->status = QUILL_ERR_NOMEM;
  rq->epi = e;
  e->mm = mm;
  e->n = n;
  e->last = ops[n - 1];
  for (unsigned i = 0; i < n; i++) {
    e->ops[i] = ops[i];
    e->slots[i] = slots[i];
    if (quill_op_opcode(ops[i]) == QUILL_OP_QADD) {
      e->qadd = ops[i];
      e->cst = quill_value_constant(quill_op_operand(ops[i], 1 - slots[i]));
    }
  }
  e->rmin = quill_type_int_min(quill_type_quant_storage(
      quill_type_elem(quill_value_type(quill_op_result(mm, 0)))));
  e->sgn = quill_type_is_signed(quill_type_quant_storage(
      quill_type_elem(quill_value_type(quill_op_result(e->last, 0)))));
  return QUILL_OK;
}

/* A [rows x 256] tensor of v's element type. */
static quill_status grid(quill_context *ctx, const quill_value *v,
                         int64_t rows, int64_t cols, quill_tensor *t) {
  int64_t dims[2] = {rows, cols};
  quill_type *ty = quill_type_tensor(
      ctx, quill_type_elem(quill_value_type(v)), 2, dims);
  if (!ty)
    return QUILL_ERR_NOMEM;
  return quill_tensor_alloc(ctx, ty, t);
}

/* The chain's final storage values for every (b, r) pair, evaluated by the
 * reference kernels: tab[bi * 256 + ri] (bi only with a qadd). */
static quill_status eval_table(cg *c, cg_epi *e, unsigned char *tab) {
  quill_context *ctx = c->ctx;
  int64_t nb = e->qadd ? 256 : 1;
  quill_tensor cur, nxt, cst;
  memset(&cst, 0, sizeof cst);
  quill_status st = grid(ctx, quill_op_result(e->mm, 0), 1, 256, &cur);
  if (st)
    return st;
  for (int64_t ri = 0; ri < 256; ri++)
    quill_tensor_set_i64(&cur, (size_t)ri, e->rmin + ri);
  for (unsigned i = 0; i < e->n && !st; i++) {
    const quill_op *op = e->ops[i];
    if ((st = grid(ctx, quill_op_result(op, 0), nb, 256, &nxt)))
      break;
    if (op == e->qadd) {
      const quill_value *cv = quill_op_operand(op, 1 - e->slots[i]);
      int64_t bmin = quill_type_int_min(quill_type_quant_storage(
          quill_type_elem(quill_value_type(cv))));
      if (!(st = grid(ctx, cv, 256, 1, &cst))) {
        for (int64_t bi = 0; bi < 256; bi++)
          quill_tensor_set_i64(&cst, (size_t)bi, bmin + bi);
        quill_tensor in[2];
        in[e->slots[i]] = cur;
        in[1 - e->slots[i]] = cst;
        st = quill_ref_eval_op(ctx, op, in, &nxt);
        quill_tensor_free(ctx, &cst);
      }
    } else {
      st = quill_ref_eval_op(ctx, op, &cur, &nxt);
    }
    quill_tensor_free(ctx, &cur);
    cur = nxt;
  }
  for (size_t i = 0; !st && i < (size_t)(nb * 256); i++)
    tab[i] = (unsigned char)quill_tensor_get_i64(&cur, i);
  quill_tensor_free(ctx, &cur);
  return st;
}

/* The table (3 bytes past the end: each lane loads 4) and the per-column
 * offsets (padded by `pad` copies of the last for full-vector loads). */
static bool make_globals(cg *c, cg_epi *e, size_t pad) {
  if (e->tab)
    return true;
  size_t nt = (e->qadd ? 256 : 1) * 256 + 3;
  unsigned char *tab = quill_calloc(c->ctx, nt, 1);
  if (!tab) {
    c->status = QUILL_ERR_NOMEM;
    return false;
  }
  quill_status st = eval_table(c, e, tab);
  if (!st)
    e->tab = cg_const_global(c, "epitab", tab, nt);
  quill_free(c->ctx, tab, nt);
  if (st) {
    c->status = st;
    return false;
  }
  if (!e->qadd)
    return true;
  const quill_value *cv = NULL;
  for (unsigned i = 0; i < e->n; i++)
    if (e->ops[i] == e->qadd)
      cv = quill_op_operand(e->qadd, 1 - e->slots[i]);
  int64_t bmin = quill_type_int_min(quill_type_quant_storage(
      quill_type_elem(quill_value_type(cv))));
  size_t n = quill_type_num_elements(quill_value_type(cv));
  int32_t *off = quill_alloc(c->ctx, (n + pad) * sizeof *off);
  if (!off) {
    c->status = QUILL_ERR_NOMEM;
    return false;
  }
  quill_tensor t = quill_tensor_from_attr(e->cst);
  for (size_t i = 0; i < n + pad; i++)
    off[i] = (int32_t)(
        (quill_tensor_get_i64(&t, i < n ? i : n - 1) - bmin) * 256);
  e->off = cg_const_global(c, "epioff", off, (n + pad) * sizeof *off);
  quill_free(c->ctx, off, (n + pad) * sizeof *off);
  return true;
}

LLVMValueRef cg_epi_apply(cg *c, cg_requant *rq, LLVMValueRef v,
                          LLVMValueRef ch, bool lanes_are_channels) {
  cg_epi *e = rq->epi;
  LLVMTypeRef vt = LLVMTypeOf(v);
  unsigned w =
      LLVMGetTypeKind(vt) == LLVMVectorTypeKind ? LLVMGetVectorSize(vt) : 1;
  LLVMTypeRef it = cg_vec(c->t_i32, w);
  if (!make_globals(c, e, rq->pad + (size_t)w))
    return v;
  /* the byte index: off[ch] + r - rmin */
  LLVMValueRef idx = LLVMBuildSub(c->b, v, cg_intc(it, e->rmin), "");
  if (e->qadd) {
    LLVMValueRef op = cg_gep(c, c->t_i32, e->off, ch);
    LLVMValueRef o = lanes_are_channels && w > 1
                         ? cg_load(c, it, op, 4)
                         : cg_splat(c, cg_load(c, c->t_i32, op, 4), w);
    idx = LLVMBuildAdd(c->b, idx, o, "");
  }
  LLVMValueRef p = LLVMBuildGEP2(c->b, c->t_i8, e->tab, &idx, 1, "");
  LLVMValueRef r;
  if (w == 1) {
    r = cg_load(c, c->t_i32, p, 1);
  } else {
    LLVMTypeRef ov[2] = {it, LLVMTypeOf(p)};
    r = cg_intrinsic(
        c, "llvm.masked.gather", ov, 2,
        (LLVMValueRef[]){p, cg_i32c(c, 1),
                         cg_intc(cg_vec(LLVMInt1TypeInContext(c->lc), w), -1),
                         LLVMGetUndef(it)},
        4);
  }
  /* the first byte (little endian), widened as the storage is */
  r = LLVMBuildShl(c->b, r, cg_intc(it, 24), "");
  return e->sgn ? LLVMBuildAShr(c->b, r, cg_intc(it, 24), "")
                : LLVMBuildLShr(c->b, r, cg_intc(it, 24), "");
}
