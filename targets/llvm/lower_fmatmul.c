/*
 * lower_fmatmul.c - the float matmul and gemm (f32 arithmetic; f16/bf16
 * operands converted on load), summing in exactly the reference's order so
 * that a float matmul/gemm gives the interpreter's bits. x86-vnni keeps an
 * unrolled LSTM float (`rnn_float`), gemms included, and its compiled model
 * must equal the interpreter's.
 *
 * The reference's f32 GEMM (targets/reference/sgemm.c, its order in
 * sgemm_order.h) adds each y(i, j)'s K blocks of KC = 256 terms in
 * block order and each block in one of two ways, which this lowering
 * mirrors per (batch, row i) task:
 *
 *   sequential (matmul; a gemm with M >= 4, or without trans_b)
 *     blk[j] = 0;  for k in block: blk[j] += A(i,k) * B(k,j)   (j inner,
 *     y[j] = blk0[j] (+ blk1[j] ...)                             vectorized)
 *
 *   8 lanes (a gemm with trans_b, K > 1 and M < 4: the reference's dot
 *   products of its unpacked small-M path, e.g. an RNN step's H R^T)
 *     for j:  lane = <0 x 8>
 *             for k in block by 8:  lane += A(i,k..k+7) * B(k..k+7,j)
 *             tail k:               lane[k mod 8] += A(i,k) * B(k,j)
 *             blk = ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7))
 *             y[j] = blk0 (+ blk1 ...)
 *
 * The blocks after the first are added to a total that starts at -0.0
 * (x + -0.0 == x for every x, so the first block is stored as is, like
 * the reference's copy); full blocks run in a loop, the last partial one
 * after it. Then the epilogue, as the reference kernel: y = alpha * s
 * (alpha != 1), + beta * C (C broadcast to [M, N]), the fused activation.
 * Every multiply and add is a separate IEEE f32 operation (no contraction:
 * the IR carries no fast-math flags); vector lanes are exact per lane.
 */
#include "targets/llvm/conv.h"
#include "targets/reference/sgemm_order.h"

enum {
  KC = QUILL_REF_SGEMM_KC,
  SMALL_M = QUILL_REF_SGEMM_SMALL_M,
  LANES = QUILL_REF_SGEMM_LANES
};
_Static_assert(LANES == 8, "lane_block's reduction adds 8 lanes");

/* base + i*si + j*sj */
static LLVMValueRef idx2(cg *c, LLVMValueRef base, LLVMValueRef i,
                         int64_t si, LLVMValueRef j, int64_t sj) {
  LLVMValueRef o = LLVMBuildAdd(c->b, base,
                                LLVMBuildMul(c->b, i, cg_i64c(c, si), ""), "");
  return LLVMBuildAdd(c->b, o, LLVMBuildMul(c->b, j, cg_i64c(c, sj), ""), "");
}

/* What the per-task code of one float_mm needs. */
typedef struct fmm {
  const cg_mm_geom *g;
  const cg_view *a, *b;
  LLVMValueRef ab, bb;   /* operand bases */
  LLVMValueRef oa, ob;   /* this task's offsets of A's row i and B */
  LLVMValueRef acc;      /* [N] f32: the current block's sums */
} fmm;

/* A(i, k) as f32 */
static LLVMValueRef load_a(cg *c, const fmm *m, LLVMValueRef k) {
  return cg_load_f32(
      c, m->a->elem,
      cg_gep(c, cg_elem_type(c, m->a->elem), m->ab,
             LLVMBuildAdd(c->b, m->oa,
                          LLVMBuildMul(c->b, k, cg_i64c(c, m->g->a_cs), ""),
                          "")));
}

/* B(k, j) as f32 */
static LLVMValueRef load_b(cg *c, const fmm *m, LLVMValueRef k,
                           LLVMValueRef j) {
  return cg_load_f32(c, m->b->elem,
                     cg_gep(c, cg_elem_type(c, m->b->elem), m->bb,
                            idx2(c, m->ob, k, m->g->b_rs, j, m->g->b_cs)));
}

/* acc[j] = sum over k in [k0, k0 + kb) of A(i,k) * B(k,j), in k order
 * from 0 (the sequential block). */
static void seq_block(cg *c, const fmm *m, LLVMValueRef k0, int64_t kb) {
  cg_loop lj, lk;
  cg_for(c, &lj, 0, m->g->N, 1);
  cg_store(c, cg_f32c(c, 0.0), cg_gep(c, c->t_f32, m->acc, lj.i), 4);
  cg_loop_end(c, &lj);
  cg_loop_begin(c, &lk, k0,
                LLVMBuildAdd(c->b, k0, cg_i64c(c, kb), ""), 1);
  LLVMValueRef av = load_a(c, m, lk.i);
  cg_for(c, &lj, 0, m->g->N, 1);
  LLVMValueRef bv = load_b(c, m, lk.i, lj.i);
  LLVMValueRef p = cg_gep(c, c->t_f32, m->acc, lj.i);
  cg_store(c, LLVMBuildFAdd(c->b, cg_load(c, c->t_f32, p, 4),
                            LLVMBuildFMul(c->b, av, bv, ""), ""),
           p, 4);
  cg_loop_end(c, &lj);
  cg_loop_end(c, &lk);
}

/* tot[j] += acc[j] */
static void add_block(cg *c, const fmm *m, LLVMValueRef tot) {
  cg_loop lj;
  cg_for(c, &lj, 0, m->g->N, 1);
  LLVMValueRef p = cg_gep(c, c->t_f32, tot, lj.i);
  cg_store(c, LLVMBuildFAdd(c->b, cg_load(c, c->t_f32, p, 4),
                            cg_load(c, c->t_f32,
                                    cg_gep(c, c->t_f32, m->acc, lj.i), 4),
                            ""),
           p, 4);
  cg_loop_end(c, &lj);
}

static bool is_f32(const quill_type *elem) {
  return quill_type_kind_of(cg_storage(elem)) == QUILL_TYPE_F32;
}

/* The 8-lane sum of A(i,k) * B(k,j) over k in [k0, k0 + kb), reduced as
 * the reference does (an f32 value). lane is an <8 x f32> variable. Eight
 * consecutive k are one vector load where the operand is f32 and
 * contiguous along k (A row-major, B transposed: an RNN step's h and R). */
static LLVMValueRef lane_block(cg *c, const fmm *m, LLVMValueRef lane,
                               LLVMValueRef j, LLVMValueRef k0, int64_t kb) {
  LLVMTypeRef vt = cg_vec(c->t_f32, LANES);
  cg_store(c, LLVMConstNull(vt), lane, 4);
  int64_t full = kb / LANES * LANES;
  bool va_vec = is_f32(m->a->elem) && m->g->a_cs == 1;
  bool vb_vec = is_f32(m->b->elem) && m->g->b_rs == 1;
  if (full) {
    cg_loop lk;
    cg_loop_begin(c, &lk, k0, LLVMBuildAdd(c->b, k0, cg_i64c(c, full), ""),
                  LANES);
    LLVMValueRef va = LLVMGetUndef(vt), vb = LLVMGetUndef(vt);
    if (va_vec)
      va = cg_load(c, vt,
                   cg_gep(c, c->t_f32, m->ab,
                          LLVMBuildAdd(c->b, m->oa, lk.i, "")),
                   4);
    if (vb_vec)
      vb = cg_load(c, vt,
                   cg_gep(c, c->t_f32, m->bb,
                          idx2(c, m->ob, lk.i, 1, j, m->g->b_cs)),
                   4);
    for (int t = 0; t < LANES && !(va_vec && vb_vec); t++) {
      LLVMValueRef k = LLVMBuildAdd(c->b, lk.i, cg_i64c(c, t), "");
      if (!va_vec)
        va = LLVMBuildInsertElement(c->b, va, load_a(c, m, k), cg_i32c(c, t),
                                    "");
      if (!vb_vec)
        vb = LLVMBuildInsertElement(c->b, vb, load_b(c, m, k, j),
                                    cg_i32c(c, t), "");
    }
    cg_store(c, LLVMBuildFAdd(c->b, cg_load(c, vt, lane, 4),
                              LLVMBuildFMul(c->b, va, vb, ""), ""),
             lane, 4);
    cg_loop_end(c, &lk);
  }
  LLVMValueRef v = cg_load(c, vt, lane, 4);
  for (int64_t t = 0; t < kb - full; t++) {
    LLVMValueRef k = LLVMBuildAdd(c->b, k0, cg_i64c(c, full + t), "");
    LLVMValueRef l = LLVMBuildExtractElement(c->b, v, cg_i32c(c, t), "");
    l = LLVMBuildFAdd(c->b, l,
                      LLVMBuildFMul(c->b, load_a(c, m, k), load_b(c, m, k, j),
                                    ""),
                      "");
    v = LLVMBuildInsertElement(c->b, v, l, cg_i32c(c, t), "");
  }
  LLVMValueRef l[LANES];
  for (int t = 0; t < LANES; t++)
    l[t] = LLVMBuildExtractElement(c->b, v, cg_i32c(c, t), "");
  LLVMValueRef lo = LLVMBuildFAdd(c->b, LLVMBuildFAdd(c->b, l[0], l[1], ""),
                                  LLVMBuildFAdd(c->b, l[2], l[3], ""), "");
  LLVMValueRef hi = LLVMBuildFAdd(c->b, LLVMBuildFAdd(c->b, l[4], l[5], ""),
                                  LLVMBuildFAdd(c->b, l[6], l[7], ""), "");
  return LLVMBuildFAdd(c->b, lo, hi, "");
}

/* The sums of task (batch, row i) into sum[0..N): sequential blocks. */
static void seq_sums(cg *c, const fmm *m, LLVMValueRef sum) {
  int64_t K = m->g->K, nfull = K / KC, rem = K % KC;
  if (K <= KC) {
    seq_block(c, m, cg_i64c(c, 0), K); /* acc == sum */
    return;
  }
  cg_loop lj, lp;
  cg_for(c, &lj, 0, m->g->N, 1);
  cg_store(c, cg_f32c(c, -0.0), cg_gep(c, c->t_f32, sum, lj.i), 4);
  cg_loop_end(c, &lj);
  cg_for(c, &lp, 0, nfull * KC, KC);
  seq_block(c, m, lp.i, KC);
  add_block(c, m, sum);
  cg_loop_end(c, &lp);
  if (rem) {
    seq_block(c, m, cg_i64c(c, nfull * KC), rem);
    add_block(c, m, sum);
  }
}

/* The same with 8-lane blocks, one column j at a time. */
static void lane_sums(cg *c, const fmm *m, LLVMValueRef sum,
                      LLVMValueRef lane, LLVMValueRef tot) {
  int64_t K = m->g->K, nfull = K / KC, rem = K % KC;
  cg_loop lj, lp;
  cg_for(c, &lj, 0, m->g->N, 1);
  LLVMValueRef s;
  if (K <= KC) {
    s = lane_block(c, m, lane, lj.i, cg_i64c(c, 0), K);
  } else {
    cg_store(c, cg_f32c(c, -0.0), tot, 4);
    cg_for(c, &lp, 0, nfull * KC, KC);
    LLVMValueRef blk = lane_block(c, m, lane, lj.i, lp.i, KC);
    cg_store(c, LLVMBuildFAdd(c->b, cg_load(c, c->t_f32, tot, 4), blk, ""),
             tot, 4);
    cg_loop_end(c, &lp);
    if (rem) {
      LLVMValueRef blk2 =
          lane_block(c, m, lane, lj.i, cg_i64c(c, nfull * KC), rem);
      cg_store(c, LLVMBuildFAdd(c->b, cg_load(c, c->t_f32, tot, 4), blk2, ""),
               tot, 4);
    }
    s = cg_load(c, c->t_f32, tot, 4);
  }
  cg_store(c, s, cg_gep(c, c->t_f32, sum, lj.i), 4);
  cg_loop_end(c, &lj);
}

/* y = alpha * A B + beta * C (C broadcast to [M, N], may be absent), then
 * the fused activation; `dots`: the reference's 8-lane dot products (a
 * gemm with trans_b). */
static quill_status float_mm(cg *c, const quill_op *op, bool ta, bool tb,
                             double alpha, double beta, const cg_view *cv) {
  cg_view a = cg_value_view(c, quill_op_operand(op, 0));
  cg_view b = cg_value_view(c, quill_op_operand(op, 1));
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  cg_mm_geom g;
  quill_status st = cg_mm_geom_init(c, &a, &b, &y, ta, tb, &g);
  if (st)
    return st;
  if (g.batches * g.M * g.N == 0)
    return QUILL_OK;
  /* the reference's dot-product path: gemm's B transposed (its column
   * stride K, not 1) and fewer than SMALL_M rows */
  bool dots = quill_op_opcode(op) == QUILL_OP_GEMM && tb && g.M < SMALL_M &&
              g.K > 1;
  cg_stage_begin(c, quill_op_name(op), g.batches * g.M);
  fmm m = {.g = &g, .a = &a, .b = &b};
  m.ab = cg_view_base(c, &a);
  m.bb = cg_view_base(c, &b);
  LLVMValueRef yb = cg_view_base(c, &y);
  LLVMValueRef cb = cv ? cg_view_base(c, cv) : NULL;
  LLVMTypeRef rowt = LLVMArrayType2(c->t_f32, (uint64_t)g.N);
  m.acc = cg_var(c, rowt, "acc");
  /* the sums: acc itself for one sequential block */
  LLVMValueRef sum = dots || g.K > KC ? cg_var(c, rowt, "sum") : m.acc;
  LLVMValueRef lane = dots ? cg_var(c, cg_vec(c->t_f32, LANES), "lane") : NULL;
  LLVMValueRef tot = dots ? cg_var(c, c->t_f32, "tot") : NULL;
  cg_loop lt, lj;
  cg_loop_begin(c, &lt, c->t0, c->t1, 1);
  LLVMValueRef i, oy;
  cg_mm_offsets(c, &g, lt.i, &i, &m.oa, &m.ob, &oy);
  if (dots)
    lane_sums(c, &m, sum, lane, tot);
  else
    seq_sums(c, &m, sum);
  cg_for(c, &lj, 0, g.N, 1);
  LLVMValueRef s = cg_load(c, c->t_f32, cg_gep(c, c->t_f32, sum, lj.i), 4);
  if (alpha != 1.0)
    s = LLVMBuildFMul(c->b, s, cg_f32c(c, (float)alpha), "");
  if (cv) {
    LLVMValueRef co = idx2(c, cg_i64c(c, 0), i, cv->strides[0], lj.i,
                           cv->strides[1]);
    LLVMValueRef cval = cg_load_f32(c, cv->elem,
                                    cg_gep(c, cg_elem_type(c, cv->elem), cb, co));
    if (beta != 1.0)
      cval = LLVMBuildFMul(c->b, cval, cg_f32c(c, (float)beta), "");
    s = LLVMBuildFAdd(c->b, s, cval, "");
  }
  s = cg_float_activation(c, op, s);
  LLVMValueRef yo = LLVMBuildAdd(c->b, oy,
                                 LLVMBuildMul(c->b, lj.i, cg_i64c(c, g.y_cs), ""),
                                 "");
  LLVMTypeRef yt = cg_elem_type(c, y.elem);
  if (yt != c->t_f32)
    s = LLVMBuildFPCast(c->b, s, yt, "");
  cg_store(c, s, cg_gep(c, yt, yb, yo),
           (unsigned)quill_type_elem_bytes(y.elem));
  cg_loop_end(c, &lj);
  cg_loop_end(c, &lt);
  cg_stage_end(c);
  return c->status;
}

CG_LOWER(cg_lower_matmul) {
  return float_mm(c, op, false, false, 1.0, 1.0, NULL);
}

CG_LOWER(cg_lower_gemm) {
  double alpha = quill_op_attr_float(op, "alpha", 1.0);
  double beta = quill_op_attr_float(op, "beta", 1.0);
  bool ta = quill_op_attr_int(op, "trans_a", 0) != 0;
  bool tb = quill_op_attr_int(op, "trans_b", 0) != 0;
  if (quill_op_num_operands(op) < 3)
    return float_mm(c, op, ta, tb, alpha, beta, NULL);
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  cg_view cv = cg_value_view(c, quill_op_operand(op, 2));
  cg_view cb = cg_view_broadcast(&cv, 2, y.dims);
  return float_mm(c, op, ta, tb, alpha, beta, &cb);
}
