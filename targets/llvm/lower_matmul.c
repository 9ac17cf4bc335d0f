/*
 * lower_matmul.c - qmatmul (integer) and the strided matrix geometry with
 * numpy batch broadcasting that it shares with the float matmul/gemm
 * (lower_fmatmul.c):
 *
 *   y[b.., i, j] = sum_k A(b.., i, k) * B(b.., k, j)
 *
 * Each operand is a view; its row/column strides (swapped for gemm's
 * trans_a/trans_b) and per-batch-dim strides (0 where broadcast) address
 * it in place, so no operand is copied. 1-D operands get M = 1 / N = 1.
 *
 * qmatmul with constant B of 8-bit x 8-bit goes to the dot kernels
 * (conv_dot.c, as a 1x1 convolution whose "pixels" are the rows of A),
 * with a run-time B (two activations) to qmatmul_act.c; otherwise the
 * portable loop: per task (batch, row i)
 *
 *   acc[0..N) = bias;  for k: av = A(i,k) - zp_a; acc[j] += av * Bc(k, j)
 *   y(i, j) = requant(acc[j], channel j)
 *
 * (i64 sums of sign-extended terms and cg_requant_apply_i64 for an op with
 * accumulator = "i64", which never takes the dot kernels), where Bc is B
 * centered by its (per-column) zero point: a constant i32
 * table, or loaded and centered at run time. The j loops run over
 * contiguous memory, which LLVM vectorizes.
 */
#include <string.h>

#include "targets/llvm/conv.h"

quill_status cg_mm_geom_init(cg *c, const cg_view *a, const cg_view *b,
                             const cg_view *y, bool ta, bool tb,
                             cg_mm_geom *g) {
  memset(g, 0, sizeof *g);
  unsigned ra = a->rank, rb = b->rank, ry = y->rank;
  if (ra == 0 || rb == 0)
    return cg_op_error(c, "operands must have rank >= 1");
  bool a1 = ra == 1, b1 = rb == 1;
  if (a1) {
    g->M = 1;
    g->K = a->dims[0];
    g->a_rs = 0;
    g->a_cs = a->strides[0];
  } else {
    unsigned r0 = ta ? ra - 1 : ra - 2, r1 = ta ? ra - 2 : ra - 1;
    g->M = a->dims[r0];
    g->K = a->dims[r1];
    g->a_rs = a->strides[r0];
    g->a_cs = a->strides[r1];
  }
  int64_t Kb;
  if (b1) {
    Kb = b->dims[0];
    g->N = 1;
    g->b_rs = b->strides[0];
    g->b_cs = 0;
  } else {
    unsigned r0 = tb ? rb - 1 : rb - 2, r1 = tb ? rb - 2 : rb - 1;
    Kb = b->dims[r0];
    g->N = b->dims[r1];
    g->b_rs = b->strides[r0];
    g->b_cs = b->strides[r1];
  }
  unsigned ba = a1 ? 0 : ra - 2, bb = b1 ? 0 : rb - 2;
  unsigned nb = ba > bb ? ba : bb;
  if (Kb != g->K || ry != nb + !a1 + !b1)
    return cg_op_error(c, "operand shapes do not match the result");
  g->nb = nb;
  g->batches = 1;
  for (unsigned d = 0; d < nb; d++) {
    int64_t da = d + ba >= nb ? a->dims[d + ba - nb] : 1;
    int64_t db = d + bb >= nb ? b->dims[d + bb - nb] : 1;
    g->bdims[d] = y->dims[d];
    g->a_bs[d] = da == 1 ? 0 : a->strides[d + ba - nb];
    g->b_bs[d] = db == 1 ? 0 : b->strides[d + bb - nb];
    g->y_bs[d] = y->strides[d];
    g->batches *= y->dims[d];
  }
  g->y_rs = a1 ? 0 : y->strides[nb];
  g->y_cs = b1 ? 0 : y->strides[ry - 1];
  return QUILL_OK;
}

/* Element offsets of the current batch (t = batch * M + i). */
void cg_mm_offsets(cg *c, const cg_mm_geom *g, LLVMValueRef t,
                   LLVMValueRef *i, LLVMValueRef *oa, LLVMValueRef *ob,
                   LLVMValueRef *oy) {
  LLVMValueRef bt = LLVMBuildUDiv(c->b, t, cg_i64c(c, g->M), "");
  *i = LLVMBuildURem(c->b, t, cg_i64c(c, g->M), "i");
  *oa = *ob = *oy = cg_i64c(c, 0);
  for (unsigned d = g->nb; d-- > 0;) {
    LLVMValueRef k = LLVMBuildURem(c->b, bt, cg_i64c(c, g->bdims[d]), "");
    bt = LLVMBuildUDiv(c->b, bt, cg_i64c(c, g->bdims[d]), "");
    *oa = LLVMBuildAdd(c->b, *oa, LLVMBuildMul(c->b, k, cg_i64c(c, g->a_bs[d]), ""), "");
    *ob = LLVMBuildAdd(c->b, *ob, LLVMBuildMul(c->b, k, cg_i64c(c, g->b_bs[d]), ""), "");
    *oy = LLVMBuildAdd(c->b, *oy, LLVMBuildMul(c->b, k, cg_i64c(c, g->y_bs[d]), ""), "");
  }
  *oa = LLVMBuildAdd(c->b, *oa, LLVMBuildMul(c->b, *i, cg_i64c(c, g->a_rs), ""), "");
  *oy = LLVMBuildAdd(c->b, *oy, LLVMBuildMul(c->b, *i, cg_i64c(c, g->y_rs), ""), "");
}

static LLVMValueRef idx2(cg *c, LLVMValueRef base, LLVMValueRef i,
                         int64_t si, LLVMValueRef j, int64_t sj) {
  LLVMValueRef o = LLVMBuildAdd(c->b, base,
                                LLVMBuildMul(c->b, i, cg_i64c(c, si), ""), "");
  return LLVMBuildAdd(c->b, o, LLVMBuildMul(c->b, j, cg_i64c(c, sj), ""), "");
}

/* ---- qmatmul ---------------------------------------------------------------- */

CG_SUPPORTS(cg_supports_qmatmul) {
  quill_type *at = quill_value_type(quill_op_operand(op, 0));
  quill_type *bt = quill_value_type(quill_op_operand(op, 1));
  quill_type *ae = quill_type_elem(at), *be = quill_type_elem(bt);
  if (!quill_type_is_quant(ae) || !quill_type_is_quant(be))
    return "non-quantized operands";
  int32_t axis = quill_type_quant_axis_of(be);
  if (quill_type_quant_axis_of(ae) >= 0 ||
      (axis >= 0 && (axis != (int32_t)quill_type_rank(bt) - 1 ||
                     quill_type_rank(bt) < 2)))
    return "per-axis a, or b quantized along an axis other than its last";
  return NULL;
}

/* qmatmul as a 1x1 convolution for the dot kernels: the rows of A (all
 * batches, densely row-major) are the pixels, K the input channels, the
 * columns of a constant 2-D B the output channels. True if emitted. */
static bool try_dot(cg *c, const quill_op *op, const cg_view *a,
                    const cg_view *b, const cg_view *y, const cg_mm_geom *g,
                    cg_qlinear *q) {
  if (!q->wconst || b->rank != 2 || (q->has_bias && !q->bconst) ||
      !cg_view_is_row_major(a) || !cg_view_is_row_major(y) || g->K == 0)
    return false;
  int64_t rows = g->batches * g->M;
  cg_dot_args d;
  memset(&d, 0, sizeof d);
  cg_conv_geom *cg_ = &d.g;
  cg_->N = 1;
  cg_->C = cg_->Cg = g->K;
  cg_->H = cg_->OH = 1;
  cg_->W = cg_->OW = rows;
  cg_->M = cg_->Mg = g->N;
  cg_->KH = cg_->KW = cg_->G = 1;
  cg_->sh = cg_->sw = cg_->dh = cg_->dw = 1;
  d.x = *a;
  d.x.rank = 4;
  int64_t xd[4] = {1, g->K, 1, rows}, xs[4] = {0, 1, 0, g->K};
  memcpy(d.x.dims, xd, sizeof xd);
  memcpy(d.x.strides, xs, sizeof xs);
  d.y = *y;
  d.y.rank = 4;
  int64_t yd[4] = {1, g->N, 1, rows}, ys[4] = {0, 1, 0, g->N};
  memcpy(d.y.dims, yd, sizeof yd);
  memcpy(d.y.strides, ys, sizeof ys);
  d.zpx = q->zpx;
  d.rq = &q->rq;
  size_t n = (size_t)(g->K * g->N);
  int32_t *wc = quill_alloc(c->ctx, n * sizeof *wc);
  int32_t *bias = q->has_bias ? quill_alloc(c->ctx, (size_t)g->N * sizeof *bias)
                              : NULL;
  if (!wc || (q->has_bias && !bias)) {
    quill_free(c->ctx, wc, n * sizeof *wc);
    quill_free(c->ctx, bias, (size_t)g->N * sizeof *bias);
    c->status = QUILL_ERR_NOMEM;
    return false;
  }
  /* B^T, centered: in blocks of 64 rows of B, so that the writes of a
   * column stay contiguous and the block's reads stay in cache (a column
   * at a time over all of K wrote one cache line per element: seconds of
   * compile time on a ViT's 768 x 3072 matrices) */
  /* 8-bit weights read as bytes (what quill_attr_dense_get_i64 returns,
   * without its per-element type dispatch) */
  quill_type_kind wk = quill_type_kind_of(
      cg_storage(quill_type_elem(quill_attr_dense_type(q->wconst))));
  const uint8_t *w8 = wk == QUILL_TYPE_I8 || wk == QUILL_TYPE_U8
                          ? quill_attr_dense_data(q->wconst)
                          : NULL;
  for (int64_t k0 = 0; k0 < g->K; k0 += 64) {
    int64_t k1 = k0 + 64 < g->K ? k0 + 64 : g->K;
    for (int64_t j = 0; j < g->N; j++) {
      int64_t zw = q->zpw[q->nw == 1 ? 0 : j];
      for (int64_t k = k0; k < k1; k++) {
        size_t e = (size_t)(k * g->N + j);
        int64_t v = !w8 ? quill_attr_dense_get_i64(q->wconst, e)
                    : wk == QUILL_TYPE_I8 ? (int64_t)(int8_t)w8[e]
                                          : (int64_t)w8[e];
        wc[j * g->K + k] = (int32_t)(uint32_t)(v - zw);
      }
    }
  }
  for (int64_t j = 0; bias && j < g->N; j++)
    bias[j] = cg_qlinear_bias(q, (size_t)j);
  d.wc = wc;
  d.bias = bias;
  bool ok = cg_dot_applies(c, &d);
  if (ok)
    cg_dot_emit(c, &d);
  quill_free(c->ctx, wc, n * sizeof *wc);
  quill_free(c->ctx, bias, (size_t)g->N * sizeof *bias);
  return ok;
}

CG_LOWER(cg_lower_qmatmul) {
  cg_view a = cg_value_view(c, quill_op_operand(op, 0));
  cg_view b = cg_value_view(c, quill_op_operand(op, 1));
  /* ops fused into the epilogue (fuse_epi.c): store the last one's result */
  const quill_op *last = cg_epi_last(op);
  cg_view y = cg_value_view(c, quill_op_result(last ? last : op, 0));
  cg_mm_geom g;
  quill_status st = cg_mm_geom_init(c, &a, &b, &y, false, false, &g);
  if (st)
    return st;
  cg_qlinear q;
  if ((st = cg_qlinear_init(c, op, (size_t)g.N, &q)) ||
      (st = cg_epi_attach(c, op, &q.rq))) {
    cg_qlinear_free(c, &q);
    return st;
  }
  if (g.batches * g.M * g.N == 0) {
    cg_qlinear_free(c, &q);
    return QUILL_OK;
  }
  if (!q.wide && (try_dot(c, op, &a, &b, &y, &g, &q) ||
                  (!c->status && cg_qmatmul_act(c, op, &a, &b, &y, &g, &q)))) {
    cg_qlinear_free(c, &q);
    return c->status;
  }
  if (c->status) {
    cg_qlinear_free(c, &q);
    return c->status;
  }
  /* B centered, as a constant table [batchB][K][N] when constant. */
  LLVMValueRef btab = NULL, zptab = NULL, biastab = NULL;
  int64_t bmats = 1;
  for (unsigned d = 0; d < g.nb; d++)
    if (g.b_bs[d])
      bmats *= g.bdims[d];
  if (q.wconst) {
    size_t n = (size_t)(bmats * g.K * g.N);
    int32_t *t = quill_alloc(c->ctx, (n ? n : 1) * sizeof *t);
    if (!t) {
      cg_qlinear_free(c, &q);
      return QUILL_ERR_NOMEM;
    }
    /* B is row-major (a constant); matrix index = its batch position. */
    for (size_t e = 0; e < n; e++) {
      int64_t col = g.N == 1 ? 0 : (int64_t)(e % (size_t)g.N);
      t[e] = (int32_t)(uint32_t)(quill_attr_dense_get_i64(q.wconst, e) -
                                 q.zpw[q.nw == 1 ? 0 : col]);
    }
    btab = cg_const_global(c, "bc", t, n * sizeof *t);
    quill_free(c->ctx, t, (n ? n : 1) * sizeof *t);
  } else if (q.nw > 1) {
    int32_t *zt = quill_alloc(c->ctx, q.nw * sizeof *zt);
    if (!zt) {
      cg_qlinear_free(c, &q);
      return QUILL_ERR_NOMEM;
    }
    for (size_t i = 0; i < q.nw; i++)
      zt[i] = (int32_t)q.zpw[i];
    zptab = cg_const_global(c, "zpb", zt, q.nw * sizeof *zt);
    quill_free(c->ctx, zt, q.nw * sizeof *zt);
  }
  if (q.has_bias && q.bconst) {
    int32_t *t = quill_alloc(c->ctx, (size_t)g.N * sizeof *t);
    if (!t) {
      cg_qlinear_free(c, &q);
      return QUILL_ERR_NOMEM;
    }
    for (int64_t j = 0; j < g.N; j++)
      t[j] = cg_qlinear_bias(&q, (size_t)j);
    biastab = cg_const_global(c, "bias", t, (size_t)g.N * sizeof *t);
    quill_free(c->ctx, t, (size_t)g.N * sizeof *t);
  }
  cg_view bias = q.has_bias && !biastab
                     ? cg_value_view(c, quill_op_operand(op, 2))
                     : a;
  cg_stage_begin(c, "qmatmul.portable", g.batches * g.M);
  LLVMValueRef ab = cg_view_base(c, &a), yb = cg_view_base(c, &y);
  LLVMValueRef bb = btab ? NULL : cg_view_base(c, &b);
  LLVMValueRef biasb = q.has_bias && !biastab ? cg_view_base(c, &bias) : NULL;
  LLVMTypeRef act = cg_qlinear_acc_type(c, &q);
  unsigned asz = q.wide ? 8 : 4;
  LLVMValueRef acc = cg_var(c, LLVMArrayType2(act, (uint64_t)g.N), "acc");
  cg_loop lt, lk, lj;
  cg_loop_begin(c, &lt, c->t0, c->t1, 1);
  LLVMValueRef i, oa, ob, oy;
  cg_mm_offsets(c, &g, lt.i, &i, &oa, &ob, &oy);
  /* batch index of B's matrix in the packed table: ob / (K*N) works since
   * a constant B is row-major */
  cg_for(c, &lj, 0, g.N, 1);
  LLVMValueRef bv = cg_i32c(c, 0);
  if (biastab)
    bv = cg_load(c, c->t_i32, cg_gep(c, c->t_i32, biastab, lj.i), 4);
  else if (q.has_bias)
    bv = cg_load_int(c, bias.elem,
                     cg_gep(c, cg_elem_type(c, bias.elem), biasb,
                            LLVMBuildMul(c->b, lj.i,
                                         cg_i64c(c, bias.strides[bias.rank - 1]),
                                         "")),
                     c->t_i32);
  cg_store(c, cg_qlinear_acc_term(c, &q, bv), cg_gep(c, act, acc, lj.i), asz);
  cg_loop_end(c, &lj);
  cg_for(c, &lk, 0, g.K, 1);
  LLVMValueRef av = cg_load_int(
      c, a.elem,
      cg_gep(c, cg_elem_type(c, a.elem), ab,
             LLVMBuildAdd(c->b, oa,
                          LLVMBuildMul(c->b, lk.i, cg_i64c(c, g.a_cs), ""), "")),
      c->t_i32);
  av = LLVMBuildSub(c->b, av, cg_i32c(c, q.zpx), "");
  cg_for(c, &lj, 0, g.N, 1);
  LLVMValueRef w;
  if (btab) {
    w = cg_load(c, c->t_i32,
                cg_gep(c, c->t_i32, btab, idx2(c, ob, lk.i, g.b_rs, lj.i,
                                               g.b_cs)),
                4);
  } else {
    w = cg_load_int(c, b.elem,
                    cg_gep(c, cg_elem_type(c, b.elem), bb,
                           idx2(c, ob, lk.i, g.b_rs, lj.i, g.b_cs)),
                    c->t_i32);
    LLVMValueRef zp = zptab ? cg_load(c, c->t_i32,
                                      cg_gep(c, c->t_i32, zptab, lj.i), 4)
                            : cg_i32c(c, q.zpw[0]);
    w = LLVMBuildSub(c->b, w, zp, "");
  }
  LLVMValueRef p = cg_gep(c, act, acc, lj.i);
  cg_store(c, LLVMBuildAdd(c->b, cg_load(c, act, p, asz),
                           LLVMBuildMul(c->b, cg_qlinear_acc_term(c, &q, av),
                                        cg_qlinear_acc_term(c, &q, w), ""),
                           ""),
           p, asz);
  cg_loop_end(c, &lj);
  cg_loop_end(c, &lk);
  cg_for(c, &lj, 0, g.N, 1);
  LLVMValueRef s = cg_load(c, act, cg_gep(c, act, acc, lj.i), asz);
  LLVMValueRef v = cg_qlinear_acc_requant(c, &q, s, lj.i);
  LLVMValueRef yo = LLVMBuildAdd(c->b, oy,
                                 LLVMBuildMul(c->b, lj.i, cg_i64c(c, g.y_cs), ""),
                                 "");
  cg_store_result(c, y.elem, v, cg_gep(c, cg_elem_type(c, y.elem), yb, yo));
  cg_loop_end(c, &lj);
  cg_loop_end(c, &lt);
  cg_stage_end(c);
  cg_qlinear_free(c, &q);
  return c->status;
}
