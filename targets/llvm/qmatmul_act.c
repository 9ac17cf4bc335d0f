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
 *           tile by tile, no division in the loop (a full tile of a B
 *           whose rows are contiguous, P x V's V: kg vector loads and one
 *           interleaving shuffle); plus, for VNNI, the
 *           column sums colsum[b][j] of what it packed (vpdpbusd of the
 *           packed vectors with all-ones bytes). A B broadcast over every
 *           batch dim is packed once, not once per batch.
 *   rows    per block of R rows (R = 4 on zmm, 2 on ymm; the last row
 *           repeated past M, not stored) of every batch: A's rows packed
 *           into a local buffer, then for each group of up to 4 column
 *           vectors, R x 4 accumulators in registers
 *
 *             acc[r][v] += broadcast(arow[r][kq*kg .. +kg)) . Bp[b][jv+v][kq]
 *
 *           (each B vector loaded once for the R rows), and a vector
 *           epilogue straight from the registers: corrections, bias,
 *           requantization, a masked store of the lanes past N.
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

#define ACT_RMAX 4 /* rows of A per task (register blocking) */

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
                 const cg_view *y, const cg_mm_geom *g, const cg_qlinear *q, act_plan *p) {
  memset(p, 0, sizeof *p);
  const cg_target *t = c->tgt;
  if (q->wconst || q->wide || q->nw != 1 || (q->has_bias && !q->bconst) ||
      q->rq.n != 1 || q->rq.epi || !is_8bit(a->elem) || !is_8bit(b->elem) ||
      g->K == 0)
    return false;
  /* the vector epilogue stores 8-bit values, or raw i32 sums */
  if (!(q->rq.raw ? storage_kind(y->elem) == QUILL_TYPE_I32
                  : is_8bit(y->elem)))
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
  /* rows of B contiguous (P x V's V): a full tile is kg vector loads of
   * VL bytes interleaved by one shuffle, the rest element by element */
  bool vec = p->kind == ACT_VNNI && g->b_cs == 1;
  cg_if fv;
  if (vec) {
    LLVMValueRef full = LLVMBuildAnd(
        c->b,
        LLVMBuildICmp(c->b, LLVMIntSLT, ljv.i, cg_i64c(c, g->N / p->VL), ""),
        LLVMBuildICmp(c->b, LLVMIntSLT, lkq.i, cg_i64c(c, g->K / p->kg), ""),
        "");
    cg_if_begin(c, &fv, full);
    LLVMTypeRef rt = LLVMVectorType(c->t_i8, p->VL);
    LLVMValueRef rows[4];
    for (unsigned e = 0; e < 4; e++) {
      LLVMValueRef k = LLVMBuildAdd(
          c->b, LLVMBuildMul(c->b, lkq.i, cg_i64c(c, 4), ""), cg_i64c(c, e),
          "");
      LLVMValueRef off = LLVMBuildAdd(
          c->b, ob,
          LLVMBuildAdd(c->b, LLVMBuildMul(c->b, k, cg_i64c(c, g->b_rs), ""),
                       LLVMBuildMul(c->b, ljv.i, cg_i64c(c, p->VL), ""), ""),
          "");
      rows[e] = cg_load(c, rt, cg_gep(c, c->t_i8, bb, off), 1);
      if (p->b_u8)
        rows[e] = LLVMBuildXor(c->b, rows[e], cg_splat(c, cg_i8c(c, 0x80),
                                                       p->VL), "");
    }
    LLVMValueRef m2[32], m4[64];
    for (unsigned l = 0; l < 2 * p->VL; l++)
      m2[l] = cg_i32c(c, (int32_t)l);
    for (unsigned l = 0; l < p->VL; l++)
      for (unsigned e = 0; e < 4; e++)
        m4[l * 4 + e] = cg_i32c(c, (int32_t)(e * p->VL + l));
    LLVMValueRef a01 = LLVMBuildShuffleVector(
        c->b, rows[0], rows[1], LLVMConstVector(m2, 2 * p->VL), "");
    LLVMValueRef a23 = LLVMBuildShuffleVector(
        c->b, rows[2], rows[3], LLVMConstVector(m2, 2 * p->VL), "");
    cg_store(c,
             LLVMBuildShuffleVector(c->b, a01, a23,
                                    LLVMConstVector(m4, 4 * p->VL), ""),
             cg_gep8(c, dst, tile), 1);
    cg_if_else(c, &fv);
  }
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
  if (vec)
    cg_if_end(c, &fv);
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
  const cg_qlinear *q;
  const cg_view *y;
  const cg_mm_geom *g;
  unsigned R;                     /* rows per task */
  int64_t arb;                    /* bytes of one packed A row */
  LLVMValueRef arow, bpk, sums;   /* packed rows, batch's B, its colsums */
  LLVMValueRef biastab, yb;       /* padded bias (or NULL), y's base */
  LLVMValueRef rowterm;           /* i32 [R]: cb * sum(au) - K ca cb */
  LLVMValueRef oy;                /* i64 [R]: each row's offset in y */
  LLVMValueRef accbuf;            /* <VL x i32> [R][4]: the sums */
  LLVMValueRef nrows;             /* rows of this task inside M */
  LLVMTypeRef vt;                 /* <VL x i32> */
} rstate;

/* Requantize and store row r's vector of columns j0 .. j0 + VL (the lanes
 * past N masked off; a strided y goes lane by lane). */
static void emit_store(cg *c, rstate *s, cg_qlinear *q, LLVMValueRef r,
                       LLVMValueRef acc, LLVMValueRef j0) {
  const act_plan *p = s->p;
  const cg_mm_geom *g = s->g;
  unsigned VL = p->VL;
  if (s->rowterm) {
    LLVMValueRef cs = cg_load(c, s->vt, cg_gep(c, c->t_i32, s->sums, j0), 4);
    LLVMValueRef rt =
        cg_load(c, c->t_i32, cg_gep(c, c->t_i32, s->rowterm, r), 4);
    acc = LLVMBuildAdd(c->b, acc, cg_splat(c, rt, VL), "");
    acc = LLVMBuildSub(
        c->b, acc,
        LLVMBuildMul(c->b, cs,
                     cg_splat(c, cg_i32c(c, (int32_t)(uint32_t)(p->oa + q->zpx)),
                              VL),
                     ""),
        "");
  }
  if (s->biastab)
    acc = LLVMBuildAdd(
        c->b, acc, cg_load(c, s->vt, cg_gep(c, c->t_i32, s->biastab, j0), 4),
        "");
  LLVMValueRef v = cg_requant_apply(c, &q->rq, acc, j0, true);
  LLVMValueRef left = LLVMBuildSub(c->b, cg_i64c(c, g->N), j0, "");
  cg_if fr;
  bool tail = g->M % s->R != 0;
  if (tail)
    cg_if_begin(c, &fr, LLVMBuildICmp(c->b, LLVMIntULT, r, s->nrows, ""));
  LLVMTypeRef et = cg_elem_type(c, s->y->elem);
  LLVMValueRef yo = LLVMBuildAdd(
      c->b, cg_load(c, c->t_i64, cg_gep(c, c->t_i64, s->oy, r), 8),
      LLVMBuildMul(c->b, j0, cg_i64c(c, g->y_cs), ""), "");
  LLVMValueRef yp = cg_gep(c, et, s->yb, yo);
  if (g->y_cs == 1) {
    LLVMValueRef mask = cg_lane_mask(c, left, VL);
    LLVMTypeRef yvt = LLVMVectorType(et, VL);
    if (LLVMGetIntTypeWidth(et) < 32)
      v = LLVMBuildTrunc(c->b, v, yvt, "");
    unsigned al = (unsigned)quill_type_elem_bytes(cg_storage(s->y->elem));
    cg_intrinsic(c, "llvm.masked.store", (LLVMTypeRef[]){yvt, c->t_ptr}, 2,
                 (LLVMValueRef[]){v, yp, cg_i32c(c, al), mask}, 4);
  } else {
    for (unsigned l = 0; l < VL; l++) {
      cg_if fl;
      cg_if_begin(c, &fl, LLVMBuildICmp(c->b, LLVMIntSLT, cg_i64c(c, l), left,
                                        ""));
      cg_store_result(c, s->y->elem,
                      LLVMBuildExtractElement(c->b, v, cg_i32c(c, (int32_t)l),
                                              ""),
                      cg_gep(c, et, yp, cg_i64c(c, (int64_t)l * g->y_cs)));
      cg_if_end(c, &fl);
    }
  }
  if (tail)
    cg_if_end(c, &fr);
}

/* nv column vectors from vector jv0 on, for the task's R rows: R x nv
 * accumulators over K (each B vector loaded once for all rows, each row's
 * 4 bytes broadcast once for all vectors), then the vector epilogue, a
 * loop over the sums parked on the stack (one copy of its code, not
 * R x nv: the compile time of ViT's 24 attention matmuls). */
static void emit_group(cg *c, rstate *s, cg_qlinear *q, unsigned nv,
                       LLVMValueRef jv0) {
  const act_plan *p = s->p;
  int64_t wvec = (int64_t)p->VL * 4; /* bytes of one packed vector step */
  LLVMValueRef acc[ACT_RMAX][4];
  for (unsigned r = 0; r < s->R; r++)
    for (unsigned v = 0; v < nv; v++) {
      acc[r][v] = cg_var(c, s->vt, "acc");
      cg_store(c, LLVMConstNull(s->vt), acc[r][v], 64);
    }
  LLVMValueRef wb = cg_gep8(
      c, s->bpk, LLVMBuildMul(c->b, jv0, cg_i64c(c, p->Kq * wvec), ""));
  cg_loop lk;
  cg_for(c, &lk, 0, p->Kq, 1);
  LLVMValueRef k4 = LLVMBuildMul(c->b, lk.i, cg_i64c(c, 4), "");
  LLVMValueRef wk = cg_gep8(c, wb, LLVMBuildMul(c->b, lk.i,
                                                cg_i64c(c, wvec), ""));
  LLVMValueRef w[4];
  for (unsigned v = 0; v < nv; v++)
    w[v] = cg_load(
        c, s->vt, cg_gep8(c, wk, cg_i64c(c, (int64_t)v * p->Kq * wvec)), 4);
  for (unsigned r = 0; r < s->R; r++) {
    LLVMValueRef xs = cg_load(
        c, c->t_i32,
        cg_gep8(c, s->arow,
                LLVMBuildAdd(c->b, k4, cg_i64c(c, (int64_t)r * s->arb), "")),
        4);
    LLVMValueRef xb = cg_splat(c, xs, p->VL);
    for (unsigned v = 0; v < nv; v++)
      cg_store(c, dot_step(c, p, cg_load(c, s->vt, acc[r][v], 64), xb, w[v]),
               acc[r][v], 64);
  }
  cg_loop_end_nounroll(c, &lk);
  for (unsigned r = 0; r < s->R; r++)
    for (unsigned v = 0; v < nv; v++)
      cg_store(c, cg_load(c, s->vt, acc[r][v], 64),
               cg_gep(c, s->vt, s->accbuf, cg_i64c(c, (int64_t)(r * 4 + v))),
               p->VL * 4);
  LLVMValueRef j0 = LLVMBuildMul(c->b, jv0, cg_i64c(c, p->VL), "");
  cg_loop lr, lv;
  cg_for(c, &lr, 0, s->R, 1);
  cg_for(c, &lv, 0, nv, 1);
  LLVMValueRef sum = cg_load(
      c, s->vt,
      cg_gep(c, s->vt, s->accbuf,
             LLVMBuildAdd(c->b, LLVMBuildMul(c->b, lr.i, cg_i64c(c, 4), ""),
                          lv.i, "")),
      p->VL * 4);
  emit_store(c, s, q, lr.i, sum,
             LLVMBuildAdd(c->b, j0,
                          LLVMBuildMul(c->b, lv.i, cg_i64c(c, p->VL), ""), ""));
  cg_loop_end_nounroll(c, &lv);
  cg_loop_end_nounroll(c, &lr);
}

static void emit_rows(cg *c, const cg_view *a, const cg_view *y,
                      const cg_mm_geom *g, cg_qlinear *q, const act_plan *p,
                      LLVMValueRef biastab) {
  int64_t pb = packed_bytes(p), Kp = p->Kq * p->kg;
  rstate s;
  memset(&s, 0, sizeof s);
  s.p = p;
  s.q = q;
  s.y = y;
  s.g = g;
  /* rows per task: R x 4 accumulators and 4 B vectors in registers (32
   * zmm; 16 ymm on the 256-bit paths) */
  s.R = p->VL == 16 ? 4 : 2;
  if ((int64_t)s.R > g->M)
    s.R = (unsigned)g->M;
  int64_t nblk = (g->M + s.R - 1) / s.R;
  cg_stage_begin(c, "qmatmul.act", g->batches * nblk);
  cg_stage_work(c, (double)(g->batches * g->M * p->Np * Kp) /
                       (p->kind == ACT_VNNI ? 128.0 : 32.0) +
                       (double)(g->batches * g->M * g->N) * 0.3);
  s.vt = LLVMVectorType(c->t_i32, p->VL);
  s.biastab = biastab;
  s.arb = Kp * p->es;
  LLVMValueRef ab = cg_view_base(c, a);
  s.yb = cg_view_base(c, y);
  LLVMValueRef wsb = cg_slot_ptr(c, p->ws_b);
  LLVMTypeRef et = p->es == 1 ? c->t_i8 : c->t_i16;
  s.arow = cg_var(c, LLVMArrayType2(c->t_i32, (uint64_t)(s.R * s.arb / 4 + 1)),
                  "arow");
  LLVMValueRef rsum = cg_var(c, c->t_i32, "rowsum");
  s.rowterm = p->kind == ACT_VNNI
                  ? cg_var(c, LLVMArrayType2(c->t_i32, ACT_RMAX), "rowterm")
                  : NULL;
  s.oy = cg_var(c, LLVMArrayType2(c->t_i64, ACT_RMAX), "oy");
  s.accbuf = cg_var(c, LLVMArrayType2(s.vt, ACT_RMAX * 4), "accbuf");
  LLVMSetAlignment(s.accbuf, 64);
  cg_loop lt, lk, lg;
  cg_loop_begin(c, &lt, c->t0, c->t1, 1);
  LLVMValueRef bt = LLVMBuildUDiv(c->b, lt.i, cg_i64c(c, nblk), "");
  LLVMValueRef i0 = LLVMBuildMul(
      c->b, LLVMBuildURem(c->b, lt.i, cg_i64c(c, nblk), ""),
      cg_i64c(c, s.R), "");
  s.nrows = LLVMBuildSub(c->b, cg_i64c(c, g->M), i0, "");
  /* the packed matrix of this task's batch (the only one when B is
   * broadcast) */
  LLVMValueRef bm = packed_count(g) > 1 ? bt : cg_i64c(c, 0);
  s.bpk = cg_gep8(c, wsb, LLVMBuildMul(c->b, bm, cg_i64c(c, pb), ""));
  if (p->kind == ACT_VNNI)
    s.sums = cg_gep(c, c->t_i32, cg_slot_ptr(c, p->ws_sum),
                    LLVMBuildMul(c->b, bm, cg_i64c(c, p->Np), ""));
  /* A's rows (the last row repeated past M): padded with zeros to Kp,
   * their sums (VNNI) */
  int64_t ca = p->oa + q->zpx, cb = p->ob - q->zpw[0];
  LLVMBuildMemSet(c->b, s.arow, cg_i8c(c, 0), cg_i64c(c, s.R * s.arb), 4);
  /* a loop over the rows, not R copies of the (vectorized) packing loop:
   * compile time */
  cg_loop lr;
  cg_for(c, &lr, 0, s.R, 1);
  {
    LLVMValueRef r = lr.i;
    LLVMValueRef ir = LLVMBuildAdd(c->b, i0, r, "");
    if (g->M % s.R)
      ir = LLVMBuildSelect(
          c->b, LLVMBuildICmp(c->b, LLVMIntULT, ir, cg_i64c(c, g->M), ""), ir,
          cg_i64c(c, g->M - 1), "");
    LLVMValueRef i, oa, ob, oy;
    cg_mm_offsets(c, g,
                  LLVMBuildAdd(c->b, LLVMBuildMul(c->b, bt, cg_i64c(c, g->M), ""),
                               ir, ""),
                  &i, &oa, &ob, &oy);
    cg_store(c, oy, cg_gep(c, c->t_i64, s.oy, r), 8);
    LLVMValueRef dst =
        cg_gep8(c, s.arow, LLVMBuildMul(c->b, r, cg_i64c(c, s.arb), ""));
    cg_store(c, cg_i32c(c, 0), rsum, 4);
    cg_for(c, &lk, 0, g->K, 1);
    LLVMValueRef ap = cg_gep(
        c, cg_elem_type(c, a->elem), ab,
        LLVMBuildAdd(c->b, oa,
                     LLVMBuildMul(c->b, lk.i, cg_i64c(c, g->a_cs), ""), ""));
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
    cg_store(c, v, cg_gep(c, et, dst, lk.i), p->es);
    cg_loop_end(c, &lk);
    if (s.rowterm)
      cg_store(c,
               LLVMBuildSub(
                   c->b,
                   LLVMBuildMul(c->b, cg_load(c, c->t_i32, rsum, 4),
                                cg_i32c(c, (int32_t)(uint32_t)cb), ""),
                   cg_i32c(c, (int32_t)(uint32_t)((uint64_t)g->K *
                                                  (uint64_t)ca * (uint64_t)cb)),
                   ""),
               cg_gep(c, c->t_i32, s.rowterm, r), 4);
  }
  cg_loop_end(c, &lr);
  /* column vectors in groups of up to 4 (R x 4 independent accumulators
   * hide the dot instruction's latency) */
  unsigned O = p->nvec < 4 ? (unsigned)p->nvec : 4;
  int64_t ng = p->nvec / O, rem = p->nvec % O;
  cg_for(c, &lg, 0, ng, 1);
  emit_group(c, &s, q, O, LLVMBuildMul(c->b, lg.i, cg_i64c(c, O), ""));
  cg_loop_end(c, &lg);
  if (rem)
    emit_group(c, &s, q, (unsigned)rem, cg_i64c(c, ng * O));
  cg_loop_end(c, &lt);
  cg_stage_end(c);
}

bool cg_qmatmul_act(cg *c, const quill_op *op, const cg_view *a,
                    const cg_view *b, const cg_view *y, const cg_mm_geom *g,
                    cg_qlinear *q) {
  (void)op;
  act_plan p;
  if (!plan(c, a, b, y, g, q, &p))
    return false;
  LLVMValueRef biastab = NULL;
  if (q->has_bias) {
    /* padded with zeros to Np: the epilogue loads whole vectors */
    size_t bytes = (size_t)p.Np * sizeof(int32_t);
    int32_t *t = quill_alloc(c->ctx, bytes);
    if (!t) {
      c->status = QUILL_ERR_NOMEM;
      return true;
    }
    for (int64_t j = 0; j < p.Np; j++)
      t[j] = j < g->N ? cg_qlinear_bias(q, (size_t)j) : 0;
    biastab = cg_const_global(c, "bias", t, bytes);
    quill_free(c->ctx, t, bytes);
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
