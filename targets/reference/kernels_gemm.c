/*
 * kernels_gemm.c - the reference target's matmul (numpy semantics) and
 * gemm (ONNX Gemm) kernels, on top of the blocked f32 GEMM of sgemm.c.
 *
 * The kernels: f32, f16 and bf16 tensors go through sgemm (f16/bf16 via
 * float staging buffers); f64 tensors use a plain triple loop in double and
 * integer tensors one in int64 (wrapping to the result type, as ONNX's
 * integer MatMul does). matmul handles 1-D operands (a [K] is [1,K] with
 * the 1 dropped afterwards; b [K] is [K,1]) and broadcasts batch dims:
 *
 *   a [2,1,M,K] x b [3,K,N] -> [2,3,M,N]   (batch a: stride 0 along dim 1)
 */
#include <string.h>

#include "targets/reference/kernels.h"

/* ---- shared by matmul and gemm -------------------------------------------- */

const char *quill_ref_supports_linalg(const quill_op *op) {
  for (unsigned i = 0; i < quill_op_num_operands(op); i++) {
    quill_type *e = quill_type_elem(quill_value_type(quill_op_operand(op, i)));
    if (quill_type_is_quant(e))
      return "quantized element types";
    if (quill_type_kind_of(e) == QUILL_TYPE_BOOL)
      return "bool tensors";
  }
  return NULL;
}

typedef enum domain { DOM_F32, DOM_F64, DOM_INT } domain;

static domain domain_of(const quill_tensor *t) {
  switch (quill_tensor_elem_kind(t)) {
  case QUILL_TYPE_F32: case QUILL_TYPE_F16: case QUILL_TYPE_BF16:
    return DOM_F32;
  case QUILL_TYPE_F64:
    return DOM_F64;
  default:
    return DOM_INT;
  }
}

/* Generic C[M,N] = A * B on element offsets (f64 or int64 accumulation),
 * A(i,k) at a0 + i*rsa + k*csa, B(k,j) at b0 + k*rsb + j*csb. */
static void generic_mm(domain dom, const quill_tensor *a, size_t a0,
                       ptrdiff_t rsa, ptrdiff_t csa, const quill_tensor *b,
                       size_t b0, ptrdiff_t rsb, ptrdiff_t csb, quill_tensor *c,
                       size_t c0, size_t M, size_t N, size_t K) {
  for (size_t i = 0; i < M; i++)
    for (size_t j = 0; j < N; j++) {
      double facc = 0;
      int64_t iacc = 0;
      for (size_t k = 0; k < K; k++) {
        size_t ai = a0 + (size_t)((ptrdiff_t)i * rsa + (ptrdiff_t)k * csa);
        size_t bi = b0 + (size_t)((ptrdiff_t)k * rsb + (ptrdiff_t)j * csb);
        if (dom == DOM_INT)
          iacc += (int64_t)((uint64_t)quill_tensor_get_i64(a, ai) *
                            (uint64_t)quill_tensor_get_i64(b, bi));
        else
          facc += quill_tensor_get_f64(a, ai) * quill_tensor_get_f64(b, bi);
      }
      if (dom == DOM_INT)
        quill_tensor_set_i64(c, c0 + i * N + j, iacc);
      else
        quill_tensor_set_f64(c, c0 + i * N + j, facc);
    }
}

/* ---- matmul --------------------------------------------------------------- */

quill_status quill_ref_matmul_plan_init(quill_context *ctx, const quill_op *op,
                                        const quill_tensor *a,
                                        const quill_tensor *b,
                                        const quill_tensor *y,
                                        quill_ref_matmul_plan *p) {
  memset(p, 0, sizeof *p);
  unsigned ra = quill_type_rank(a->type), rb = quill_type_rank(b->type);
  unsigned ry = quill_type_rank(y->type);
  if (ra == 0 || rb == 0)
    return quill_ref_op_error(ctx, op, "operands must have rank >= 1");
  bool a1 = ra == 1, b1 = rb == 1;
  p->M = a1 ? 1 : (size_t)quill_type_dim(a->type, ra - 2);
  p->K = (size_t)quill_type_dim(a->type, ra - 1);
  size_t Kb = (size_t)quill_type_dim(b->type, b1 ? 0 : rb - 2);
  p->N = b1 ? 1 : (size_t)quill_type_dim(b->type, rb - 1);
  unsigned ba = a1 ? 0 : ra - 2, bb = b1 ? 0 : rb - 2;
  unsigned nb = ba > bb ? ba : bb;
  if (p->K != Kb || ry != nb + !a1 + !b1)
    return quill_ref_op_error(ctx, op, "operand shapes do not match the "
                                       "result");
  /* Check the result's dims and collect the batch shape; a batch dim of
   * size 1 (or missing) in an operand gets stride 0. */
  p->num_batch_dims = nb;
  p->batches = 1;
  size_t sa = 1, sb = 1;
  for (unsigned d = nb; d-- > 0;) {
    int64_t da = d + ba >= nb ? quill_type_dim(a->type, d + ba - nb) : 1;
    int64_t db = d + bb >= nb ? quill_type_dim(b->type, d + bb - nb) : 1;
    if (da != db && da != 1 && db != 1)
      return quill_ref_op_error(ctx, op, "batch dims do not broadcast");
    p->batch_dims[d] = da == 1 ? db : da;
    if (quill_type_dim(y->type, d) != p->batch_dims[d])
      return quill_ref_op_error(ctx, op, "result batch dims are wrong");
    p->a_stride[d] = da == 1 ? 0 : sa;
    p->b_stride[d] = db == 1 ? 0 : sb;
    sa *= (size_t)da;
    sb *= (size_t)db;
    p->batches *= (size_t)p->batch_dims[d];
  }
  if ((!a1 && (size_t)quill_type_dim(y->type, nb) != p->M) ||
      (!b1 && (size_t)quill_type_dim(y->type, ry - 1) != p->N))
    return quill_ref_op_error(ctx, op, "result matrix dims are wrong");
  return QUILL_OK;
}

void quill_ref_matmul_offsets(const quill_ref_matmul_plan *p, size_t t,
                              size_t *oa, size_t *ob) {
  size_t ia = 0, ib = 0;
  for (unsigned d = p->num_batch_dims; d-- > 0;) {
    size_t i = t % (size_t)p->batch_dims[d];
    t /= (size_t)p->batch_dims[d];
    ia += i * p->a_stride[d];
    ib += i * p->b_stride[d];
  }
  *oa = ia * p->M * p->K;
  *ob = ib * p->K * p->N;
}

QUILL_REF_KERNEL(quill_ref_kernel_matmul) {
  const quill_tensor *a = &in[0], *b = &in[1];
  quill_tensor *y = &out[0];
  quill_ref_matmul_plan p;
  quill_status st = quill_ref_matmul_plan_init(ctx, op, a, b, y, &p);
  if (st)
    return st;
  size_t M = p.M, N = p.N, K = p.K;
  domain dom = domain_of(y);
  quill_ref_fbuf fa = {0}, fb = {0}, fy = {0};
  if (dom == DOM_F32 && ((st = quill_ref_fbuf_read(ctx, a, &fa)) ||
                         (st = quill_ref_fbuf_read(ctx, b, &fb)) ||
                         (st = quill_ref_fbuf_write(ctx, y, &fy))))
    goto done;
  for (size_t t = 0; t < p.batches && st == QUILL_OK; t++) {
    size_t oa, ob, oy = t * M * N;
    quill_ref_matmul_offsets(&p, t, &oa, &ob);
    if (dom == DOM_F32)
      st = quill_ref_sgemm(ctx, M, N, K, fa.p + oa, (ptrdiff_t)K, 1,
                           fb.p + ob, (ptrdiff_t)N, 1, fy.p + oy, N, false);
    else
      generic_mm(dom, a, oa, (ptrdiff_t)K, 1, b, ob, (ptrdiff_t)N, 1, y, oy,
                 M, N, K);
  }
done:
  quill_ref_fbuf_release(ctx, NULL, &fa);
  quill_ref_fbuf_release(ctx, NULL, &fb);
  quill_ref_fbuf_release(ctx, st == QUILL_OK ? y : NULL, &fy);
  return st;
}

/* ---- gemm ----------------------------------------------------------------- */

/* Y = alpha * A' * B' + beta * C, A' = trans_a ? A^T : A (likewise B'), C
 * unidirectionally broadcast to [M, N]. */
QUILL_REF_KERNEL(quill_ref_kernel_gemm) {
  const quill_tensor *a = &in[0], *b = &in[1];
  quill_tensor *y = &out[0];
  bool ta = quill_op_attr_int(op, "trans_a", 0) != 0;
  bool tb = quill_op_attr_int(op, "trans_b", 0) != 0;
  double alpha = quill_op_attr_number(op, "alpha", 1.0);
  double beta = quill_op_attr_number(op, "beta", 1.0);
  if (quill_type_rank(a->type) != 2 || quill_type_rank(b->type) != 2 ||
      quill_type_rank(y->type) != 2)
    return quill_ref_op_error(ctx, op, "operands and result must be 2-D");
  size_t a0 = (size_t)quill_type_dim(a->type, 0);
  size_t a1 = (size_t)quill_type_dim(a->type, 1);
  size_t b0 = (size_t)quill_type_dim(b->type, 0);
  size_t b1 = (size_t)quill_type_dim(b->type, 1);
  size_t M = ta ? a1 : a0, K = ta ? a0 : a1;
  size_t Kb = tb ? b1 : b0, N = tb ? b0 : b1;
  if (K != Kb || (size_t)quill_type_dim(y->type, 0) != M ||
      (size_t)quill_type_dim(y->type, 1) != N)
    return quill_ref_op_error(ctx, op, "operand shapes do not match the "
                                       "result");
  quill_ref_bcast it;
  bool has_c = quill_op_num_operands(op) > 2;
  if (has_c) {
    const quill_type *ct = in[2].type;
    if (!quill_ref_bcast_init(&it, y->type, 1, &ct))
      return quill_ref_op_error(ctx, op, "C does not broadcast to [M, N]");
  }
  /* strides of A (row-major [a0, a1]) as seen by A' */
  ptrdiff_t rsa = ta ? 1 : (ptrdiff_t)a1, csa = ta ? (ptrdiff_t)a1 : 1;
  ptrdiff_t rsb = tb ? 1 : (ptrdiff_t)b1, csb = tb ? (ptrdiff_t)b1 : 1;
  domain dom = domain_of(y);
  quill_status st = QUILL_OK;
  if (dom != DOM_F32) {
    generic_mm(dom, a, 0, rsa, csa, b, 0, rsb, csb, y, 0, M, N, K);
    for (size_t i = 0; i < M * N; i++) {
      double c = 0;
      if (has_c) {
        c = quill_tensor_get_f64(&in[2], it.offset[0]);
        quill_ref_bcast_next(&it);
      }
      if (dom == DOM_INT)
        quill_tensor_set_i64(y, i,
                             (int64_t)(alpha * (double)quill_tensor_get_i64(y, i) +
                                       beta * c));
      else
        quill_tensor_set_f64(y, i, alpha * quill_tensor_get_f64(y, i) + beta * c);
    }
    return QUILL_OK;
  }
  quill_ref_fbuf fa = {0}, fb = {0}, fy = {0};
  if ((st = quill_ref_fbuf_read(ctx, a, &fa)) ||
      (st = quill_ref_fbuf_read(ctx, b, &fb)) ||
      (st = quill_ref_fbuf_write(ctx, y, &fy)))
    goto done;
  st = quill_ref_sgemm(ctx, M, N, K, fa.p, rsa, csa, fb.p, rsb, csb, fy.p, N,
                       false);
  if (st)
    goto done;
  for (size_t i = 0; i < M * N; i++) {
    float v = (float)alpha * fy.p[i];
    if (has_c) {
      v += (float)beta * (float)quill_tensor_get_f64(&in[2], it.offset[0]);
      quill_ref_bcast_next(&it);
    }
    fy.p[i] = v;
  }
done:
  quill_ref_fbuf_release(ctx, NULL, &fa);
  quill_ref_fbuf_release(ctx, NULL, &fb);
  quill_ref_fbuf_release(ctx, st == QUILL_OK ? y : NULL, &fy);
  return st;
}
