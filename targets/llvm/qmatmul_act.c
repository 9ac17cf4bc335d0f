/*
 * qmatmul_act.c - qmatmul whose B is computed at run time (a matmul of two
 * activations, quantized per tensor: attention's Q x K^T and P x V), on
 * the VNNI and avx2 instruction paths. Two stages per op:
 *
 *   pack    per output batch b, B[b] (K x N, any strides) into a workspace
 *           in the order the kernel reads it, N rounded up to vectors of
 *           VL columns and K to groups of kg (zeros past N and K):
 *
 *             Bp[b][jv][kq][VL][kg]    jv = j / VL, kq = k / kg
 *
 *           tile by tile, no division in the loop; plus, for VNNI, the
 *           column sums colsum[b][j] of what it packed (vpdpbusd of the
 *           packed vectors with all-ones bytes). A B broadcast over every
 *           batch dim is packed once, not once per batch.
 *   rows    per row i of every batch: A's row packed into a local buffer,
 *           then for each group of up to 4 column vectors
 *
 *             acc[v] += broadcast(arow[kq*kg .. +kg)) . Bp[b][jv+v][kq]
 *
 *           and a scalar epilogue: corrections, bias, requantization.
 *
 *   kind   instruction        kg  arow          Bp
 *   VNNI   vpdpbusd zmm/ymm   4   au (u8)       bs (s8)
 *   WD     vpmaddwd ymm       2   a - zp_a i16  b - zp_b i16
 *
 * vpdpbusd multiplies u8 by s8, so VNNI shifts both operands into those
 * domains: au = a + oa (oa = 128 for i8 storage, a ^ 0x80; 0 for u8) and
 * bs = b - ob (ob = 128 for u8 storage, b ^ 0x80; 0 for i8). With
 * ca = oa + zp_a and cb = ob - zp_b,
 *
 *   sum_k (a - zp_a)(b - zp_b) = S + cb * sum(au) - ca * colsum(bs) - K ca cb
 *
 * where S = sum_k au * bs is what the instruction sums. Every term is
 * computed modulo 2^32, so the result equals the reference's exact int32
 * accumulator whenever that fits (the op is not accumulator = "i64"), and
 * the requantization is the portable loop's (cg_qlinear_acc_requant): the
 * output is bit-exact with the interpreter. Padding lanes are zero in both
 * au and bs and add nothing. WD needs no correction: 2 x 255 x 255 fits
 * the i32 pair sum of vpmaddwd. (vpmaddubsw is not used: its i16 pair sum
 * saturates for B values unknown at compile time.)
 *
 * The amx path takes the VNNI kernel (an AMX tile kernel for run-time B
 * is not written); the portable path keeps lower_matmul.c's loop.
 */
#include <string.h>

#include "targets/llvm/conv.h"

typedef enum act_kind { ACT_VNNI, ACT_WD } act_kind;

typedef struct act_plan {
  act_kind kind;
  unsigned VL, kg, es;   /* lanes, k per lane step, packed element bytes */
  int64_t nvec, Np, Kq;  /* column vectors, padded N, k groups */
  int64_t oa, ob;        /* VNNI domain offsets of A and B */
  bool a_s8, b_u8;       /* storage signedness */
  int ws_b, ws_sum;      /* workspace slots: packed B, column sums */
} act_plan;

static quill_type_kind storage_kind(const quill_type *elem) {
  return quill_type_kind_of(cg_storage(elem));
}

static bool is_8bit(const quill_type *elem) {
  quill_type_kind k = storage_kind(elem);
  return k == QUILL_TYPE_I8 || k == QUILL_TYPE_U8;
}

static bool plan(cg *c, const cg_view *a, const cg_view *b,
                 const cg_mm_geom *g, const cg_qlinear *q, act_plan *p) {
  memset(p, 0, sizeof *p);
  const cg_target *t = c->tgt;
  if (q->wconst || q->wide || q->nw != 1 || (q->has_bias && !q->bconst) ||
      !is_8bit(a->elem) || !is_8bit(b->elem) || g->K == 0)
    return false;
  switch (t->isa) {
  case QUILL_LLVM_ISA_AMX:
  case QUILL_LLVM_ISA_AVX512_VNNI:
    p->kind = ACT_VNNI;
    p->VL = 16;
    break;
  case QUILL_LLVM_ISA_AVX_VNNI:
    p->kind = ACT_VNNI;
    p->VL = 8;
    break;
  case QUILL_LLVM_ISA_AVX2:
    p->kind = ACT_WD;
    p->VL = 8;
    break;
  default:
    return false;
  }
  p->kg = p->kind == ACT_VNNI ? 4 : 2;
  p->es = p->kind == ACT_VNNI ? 1 : 2;
  p->nvec = (g->N + p->VL - 1) / p->VL;
  p->Np = p->nvec * p->VL;
  p->Kq = (g->K + p->kg - 1) / p->kg;
  p->a_s8 = storage_kind(a->elem) == QUILL_TYPE_I8;
  p->b_u8 = storage_kind(b->elem) == QUILL_TYPE_U8;
  p->oa = p->a_s8 ? 128 : 0;
  p->ob = p->b_u8 ? 128 : 0;
  return true;
}

/* Bytes of one batch's packed B. */
static int64_t packed_bytes(const act_plan *p) {
  return p->nvec * p->Kq * (int64_t)(p->VL * p->kg * p->es);
}

static LLVMValueRef dot_step(cg *c, const act_plan *p, LLVMValueRef acc,
                             LLVMValueRef xb, LLVMValueRef w) {
  if (p->kind == ACT_VNNI) {
    const char *nm = p->VL == 16 ? "llvm.x86.avx512.vpdpbusd.512"
                                 : "llvm.x86.avx512.vpdpbusd.256";
    return cg_intrinsic(c, nm, NULL, 0, (LLVMValueRef[]){acc, xb, w}, 3);
  }
  LLVMTypeRef h = LLVMVectorType(c->t_i16, 2 * p->VL);
  LLVMValueRef s = cg_intrinsic(
      c, "llvm.x86.avx2.pmadd.wd", NULL, 0,
      (LLVMValueRef[]){LLVMBuildBitCast(c->b, xb, h, ""),
                       LLVMBuildBitCast(c->b, w, h, "")},
      2);
  return LLVMBuildAdd(c->b, acc, s, "");
}

/* ---- stage 1: pack B ------------------------------------------------------ */

/* The B matrices to pack: one when B is broadcast over every batch dim (a
 * 2-D B under a batched A: packing it per batch would repeat the same
 * work batches times), else one per batch. */
static int64_t packed_count(const cg_mm_geom *g) {
  for (unsigned d = 0; d < g->nb; d++)
    if (g->b_bs[d] != 0 && g->bdims[d] > 1)
      return g->batches;
  return 1;
}

/* Per packed matrix: every tile (jv, kq) of VL x kg elements, the lanes l
 * and k steps e unrolled (constant trip counts), positions past N or K
 * read a clamped in-range element and store 0, so the buffer needs no
 * clearing and the loop no division. VNNI then sums each packed column
 * vector with vpdpbusd against all-ones bytes (colsum). */
static void emit_pack(cg *c, const cg_view *b, const cg_mm_geom *g,
                      const cg_qlinear *q, const act_plan *p) {
  int64_t pb = packed_bytes(p), nmat = packed_count(g);
  cg_stage_begin(c, "qmatmul.packb", nmat);
  cg_stage_work(c, (double)(nmat * pb) * 0.3);
  LLVMValueRef bb = cg_view_base(c, b);
  LLVMValueRef wsb = cg_slot_ptr(c, p->ws_b);
  LLVMTypeRef et = p->es == 1 ? c->t_i8 : c->t_i16;
  LLVMTypeRef vt = LLVMVectorType(c->t_i32, p->VL);
  cg_loop lt, ljv, lkq, ll, le;
  cg_loop_begin(c, &lt, c->t0, c->t1, 1);
  LLVMValueRef i, oa, ob, oy;
  cg_mm_offsets(c, g, LLVMBuildMul(c->b, lt.i, cg_i64c(c, g->M), ""), &i, &oa,
                &ob, &oy);
  LLVMValueRef dst =
      cg_gep8(c, wsb, LLVMBuildMul(c->b, lt.i, cg_i64c(c, pb), ""));
  cg_for(c, &ljv, 0, p->nvec, 1);
  cg_for(c, &lkq, 0, p->Kq, 1);
  /* tile (jv, kq): Bp[jv][kq][l][e] at ((jv * Kq + kq) * VL + l) * kg + e */
  LLVMValueRef tile = LLVMBuildMul(
      c->b,
      LLVMBuildAdd(c->b, LLVMBuildMul(c->b, ljv.i, cg_i64c(c, p->Kq), ""),
                   lkq.i, ""),
      cg_i64c(c, (int64_t)(p->VL * p->kg)), "");
  cg_for(c, &ll, 0, p->VL, 1);
  LLVMValueRef j = LLVMBuildAdd(
      c->b, LLVMBuildMul(c->b, ljv.i, cg_i64c(c, p->VL), ""), ll.i, "");
  LLVMValueRef jin = LLVMBuildICmp(c->b, LLVMIntSLT, j, cg_i64c(c, g->N), "");
  LLVMValueRef jc = LLVMBuildSelect(c->b, jin, j, cg_i64c(c, g->N - 1), "");
  LLVMValueRef jo = LLVMBuildAdd(
      c->b, ob, LLVMBuildMul(c->b, jc, cg_i64c(c, g->b_cs), ""), "");
  cg_for(c, &le, 0, p->kg, 1);
  LLVMValueRef k = LLVMBuildAdd(
      c->b, LLVMBuildMul(c->b, lkq.i, cg_i64c(c, p->kg), ""), le.i, "");
  LLVMValueRef kin = LLVMBuildICmp(c->b, LLVMIntSLT, k, cg_i64c(c, g->K), "");
  LLVMValueRef kc = LLVMBuildSelect(c->b, kin, k, cg_i64c(c, g->K - 1), "");
  LLVMValueRef sp = cg_gep(
      c, cg_elem_type(c, b->elem), bb,
      LLVMBuildAdd(c->b, jo, LLVMBuildMul(c->b, kc, cg_i64c(c, g->b_rs), ""),
                   ""));
  LLVMValueRef v;
  if (p->kind == ACT_VNNI) {
    v = cg_load(c, c->t_i8, sp, 1);
    if (p->b_u8)
      v = LLVMBuildXor(c->b, v, cg_i8c(c, 0x80), "");
  } else {
    v = LLVMBuildSub(c->b, cg_load_int(c, b->elem, sp, c->t_i32),
                     cg_i32c(c, q->zpw[0]), "");
    v = LLVMBuildTrunc(c->b, v, c->t_i16, "");
  }
  v = LLVMBuildSelect(c->b, LLVMBuildAnd(c->b, jin, kin, ""), v,
                      LLVMConstNull(et), "");
  LLVMValueRef e = LLVMBuildAdd(
      c->b, tile,
      LLVMBuildAdd(c->b, LLVMBuildMul(c->b, ll.i, cg_i64c(c, p->kg), ""),
                   le.i, ""),
      "");
  cg_store(c, v, cg_gep(c, et, dst, e), p->es);
  cg_loop_end(c, &le);
  cg_loop_end(c, &ll);
  cg_loop_end(c, &lkq);
  /* colsum[jv * VL + l] = sum over the column's packed bytes */
  if (p->kind == ACT_VNNI) {
    LLVMValueRef sums = cg_gep(
        c, c->t_i32, cg_slot_ptr(c, p->ws_sum),
        LLVMBuildMul(c->b, lt.i, cg_i64c(c, p->Np), ""));
    LLVMValueRef ones = cg_intc(vt, 0x01010101);
    LLVMValueRef acc = cg_var(c, vt, "colsum");
    cg_store(c, LLVMConstNull(vt), acc, 64);
    LLVMValueRef col = cg_gep8(
        c, dst, LLVMBuildMul(c->b, ljv.i, cg_i64c(c, p->Kq * p->VL * 4), ""));
    cg_loop lk;
    cg_for(c, &lk, 0, p->Kq, 1);
    LLVMValueRef w = cg_load(
        c, vt,
        cg_gep8(c, col, LLVMBuildMul(c->b, lk.i, cg_i64c(c, p->VL * 4), "")),
        4);
    cg_store(c, dot_step(c, p, cg_load(c, vt, acc, 64), ones, w), acc, 64);
    cg_loop_end(c, &lk);
    cg_store(c, cg_load(c, vt, acc, 64),
             cg_gep(c, c->t_i32, sums,
                    LLVMBuildMul(c->b, ljv.i, cg_i64c(c, p->VL), "")),
             4);
  }
  cg_loop_end(c, &ljv);
  cg_loop_end(c, &lt);
  cg_stage_end(c);
}

/* ---- stage 2: rows ---------------------------------------------------------- */

typedef struct rstate {
  const act_plan *p;
  LLVMValueRef arow, bpk, accrow; /* packed row, batch's packed B, i32 row */
  LLVMTypeRef vt;                 /* <VL x i32> */
} rstate;

/* nv column vectors from vector jv0 on: accumulate over K, store the sums
 * to accrow[jv0 * VL ..). */
static void emit_group(cg *c, const rstate *s, unsigned nv, LLVMValueRef jv0) {
  const act_plan *p = s->p;
  int64_t wvec = (int64_t)p->VL * 4; /* bytes of one packed vector step */
  LLVMValueRef acc[4];
  for (unsigned v = 0; v < nv; v++) {
    acc[v] = cg_var(c, s->vt, "acc");
    cg_store(c, LLVMConstNull(s->vt), acc[v], 64);
  }
  LLVMValueRef wb = cg_gep8(
      c, s->bpk, LLVMBuildMul(c->b, jv0, cg_i64c(c, p->Kq * wvec), ""));
  cg_loop lk;
  cg_for(c, &lk, 0, p->Kq, 1);
  LLVMValueRef xs = cg_load(
      c, c->t_i32, cg_gep8(c, s->arow, LLVMBuildMul(c->b, lk.i,
                                                    cg_i64c(c, 4), "")),
      4);
  LLVMValueRef xb = cg_splat(c, xs, p->VL);
  LLVMValueRef wk = cg_gep8(c, wb, LLVMBuildMul(c->b, lk.i,
                                                cg_i64c(c, wvec), ""));
  for (unsigned v = 0; v < nv; v++) {
    LLVMValueRef w = cg_load(
        c, s->vt, cg_gep8(c, wk, cg_i64c(c, (int64_t)v * p->Kq * wvec)), 4);
    cg_store(c, dot_step(c, p, cg_load(c, s->vt, acc[v], 64), xb, w), acc[v],
             64);
  }
  cg_loop_end(c, &lk);
  LLVMValueRef j0 = LLVMBuildMul(c->b, jv0, cg_i64c(c, p->VL), "");
  for (unsigned v = 0; v < nv; v++)
    cg_store(c, cg_load(c, s->vt, acc[v], 64),
             cg_gep(c, c->t_i32, s->accrow,
                    LLVMBuildAdd(c->b, j0, cg_i64c(c, (int64_t)v * p->VL),
                                 "")),
             4);
}

static void emit_rows(cg *c, const cg_view *a, const cg_view *y,
                      const cg_mm_geom *g, cg_qlinear *q, const act_plan *p,
                      LLVMValueRef biastab) {
  int64_t pb = packed_bytes(p), Kp = p->Kq * p->kg;
  cg_stage_begin(c, "qmatmul.act", g->batches * g->M);
  cg_stage_work(c, (double)(g->batches * g->M * p->Np * Kp) /
                       (p->kind == ACT_VNNI ? 64.0 : 16.0) +
                       (double)(g->batches * g->M * g->N) * 2.0);
  rstate s;
  s.p = p;
  s.vt = LLVMVectorType(c->t_i32, p->VL);
  LLVMValueRef ab = cg_view_base(c, a), yb = cg_view_base(c, y);
  LLVMValueRef wsb = cg_slot_ptr(c, p->ws_b);
  LLVMValueRef wss = p->kind == ACT_VNNI ? cg_slot_ptr(c, p->ws_sum) : NULL;
  LLVMTypeRef et = p->es == 1 ? c->t_i8 : c->t_i16;
  s.arow = cg_var(c, LLVMArrayType2(c->t_i32, (uint64_t)(Kp * p->es / 4 + 1)),
                  "arow");
  s.accrow = cg_var(c, LLVMArrayType2(c->t_i32, (uint64_t)p->Np), "accrow");
  LLVMValueRef rsum = cg_var(c, c->t_i32, "rowsum");
  cg_loop lt, lk, lj, lg;
  cg_loop_begin(c, &lt, c->t0, c->t1, 1);
  LLVMValueRef i, oa, ob, oy;
  cg_mm_offsets(c, g, lt.i, &i, &oa, &ob, &oy);
  /* the packed matrix of this row's batch (the only one when B is
   * broadcast) */
  LLVMValueRef bt = packed_count(g) > 1
                        ? LLVMBuildUDiv(c->b, lt.i, cg_i64c(c, g->M), "")
                        : cg_i64c(c, 0);
  s.bpk = cg_gep8(c, wsb, LLVMBuildMul(c->b, bt, cg_i64c(c, pb), ""));
  /* A's row: padded with zeros to Kp, its sum (VNNI) */
  LLVMBuildMemSet(c->b, s.arow, cg_i8c(c, 0), cg_i64c(c, Kp * p->es), 4);
  cg_store(c, cg_i32c(c, 0), rsum, 4);
  cg_for(c, &lk, 0, g->K, 1);
  LLVMValueRef ap = cg_gep(c, cg_elem_type(c, a->elem), ab,
                           LLVMBuildAdd(c->b, oa,
                                        LLVMBuildMul(c->b, lk.i,
                                                     cg_i64c(c, g->a_cs), ""),
                                        ""));
  LLVMValueRef v;
  if (p->kind == ACT_VNNI) {
    v = cg_load(c, c->t_i8, ap, 1);
    if (p->a_s8)
      v = LLVMBuildXor(c->b, v, cg_i8c(c, 0x80), "");
    cg_store(c, LLVMBuildAdd(c->b, cg_load(c, c->t_i32, rsum, 4),
                             LLVMBuildZExt(c->b, v, c->t_i32, ""), ""),
             rsum, 4);
  } else {
    v = LLVMBuildSub(c->b, cg_load_int(c, a->elem, ap, c->t_i32),
                     cg_i32c(c, q->zpx), "");
    v = LLVMBuildTrunc(c->b, v, c->t_i16, "");
  }
  cg_store(c, v, cg_gep(c, et, s.arow, lk.i), p->es);
  cg_loop_end(c, &lk);
  /* column vectors in groups of up to 4 (4 independent accumulators hide
   * the dot instruction's latency) */
  unsigned O = p->nvec < 4 ? (unsigned)p->nvec : 4;
  int64_t ng = p->nvec / O, rem = p->nvec % O;
  cg_for(c, &lg, 0, ng, 1);
  emit_group(c, &s, O, LLVMBuildMul(c->b, lg.i, cg_i64c(c, O), ""));
  cg_loop_end(c, &lg);
  if (rem)
    emit_group(c, &s, (unsigned)rem, cg_i64c(c, ng * O));
  /* epilogue: corrections, bias, requantization */
  int64_t ca = p->oa + q->zpx, cb = p->ob - q->zpw[0];
  LLVMValueRef rowterm = NULL;
  if (p->kind == ACT_VNNI)
    rowterm = LLVMBuildSub(
        c->b, LLVMBuildMul(c->b, cg_load(c, c->t_i32, rsum, 4),
                           cg_i32c(c, (int32_t)(uint32_t)cb), ""),
        cg_i32c(c, (int32_t)(uint32_t)((uint64_t)g->K * (uint64_t)ca *
                                       (uint64_t)cb)),
        "");
  cg_for(c, &lj, 0, g->N, 1);
  LLVMValueRef acc = cg_load(c, c->t_i32, cg_gep(c, c->t_i32, s.accrow, lj.i),
                             4);
  if (rowterm) {
    LLVMValueRef cs = cg_load(
        c, c->t_i32,
        cg_gep(c, c->t_i32, wss,
               LLVMBuildAdd(c->b, LLVMBuildMul(c->b, bt, cg_i64c(c, p->Np), ""),
                            lj.i, "")),
        4);
    acc = LLVMBuildAdd(c->b, acc, rowterm, "");
    acc = LLVMBuildSub(c->b, acc,
                       LLVMBuildMul(c->b, cs,
                                    cg_i32c(c, (int32_t)(uint32_t)ca), ""),
                       "");
  }
  if (biastab)
    acc = LLVMBuildAdd(c->b, acc,
                       cg_load(c, c->t_i32,
                               cg_gep(c, c->t_i32, biastab, lj.i), 4),
                       "");
  LLVMValueRef r = cg_qlinear_acc_requant(c, q, acc, lj.i);
  LLVMValueRef yo = LLVMBuildAdd(c->b, oy,
                                 LLVMBuildMul(c->b, lj.i, cg_i64c(c, g->y_cs),
                                              ""),
                                 "");
  cg_store_result(c, y->elem, r, cg_gep(c, cg_elem_type(c, y->elem), yb, yo));
  cg_loop_end(c, &lj);
  cg_loop_end(c, &lt);
  cg_stage_end(c);
}

bool cg_qmatmul_act(cg *c, const quill_op *op, const cg_view *a,
                    const cg_view *b, const cg_view *y, const cg_mm_geom *g,
                    cg_qlinear *q) {
  (void)op;
  act_plan p;
  if (!plan(c, a, b, g, q, &p))
    return false;
  LLVMValueRef biastab = NULL;
  if (q->has_bias) {
    int32_t *t = quill_alloc(c->ctx, (size_t)g->N * sizeof *t);
    if (!t) {
      c->status = QUILL_ERR_NOMEM;
      return true;
    }
    for (int64_t j = 0; j < g->N; j++)
      t[j] = cg_qlinear_bias(q, (size_t)j);
    biastab = cg_const_global(c, "bias", t, (size_t)g->N * sizeof *t);
    quill_free(c->ctx, t, (size_t)g->N * sizeof *t);
  }
  int64_t nmat = packed_count(g);
  p.ws_b = cg_workspace(c, (size_t)(nmat * packed_bytes(&p)));
  p.ws_sum = p.kind == ACT_VNNI
                 ? cg_workspace(c, (size_t)(nmat * p.Np) * 4)
                 : -1;
  emit_pack(c, b, g, q, &p);
  emit_rows(c, a, y, g, q, &p, biastab);
  return true;
}
