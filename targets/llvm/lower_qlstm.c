/*
 * lower_qlstm.c - qlstm (TFLite's integer LSTM, ir/qlstm.h) on the LLVM
 * target, bit-exact with the reference kernel (kernels_qlstm.c) because
 * every constant comes from the same helpers at compile time:
 *
 *   - the fixed-point parameters: quill_qlstm_params_init;
 *   - the zero points folded into per-row int32 biases, as TFLite's
 *     Prepare and the reference do (bx = b - z_x rowsum(w), bh = -z_y
 *     rowsum(r)): one constant global [8h] (w, r and b must be constants);
 *   - w and r transposed (wt [in, 4h], rt [h, 4h]), so that the gate sums
 *     are rows of axpy steps over the 4h gates: no horizontal sums;
 *   - gemmlowp's 16-bit logistic and tanh as tables of |a| (32769
 *     entries, quill_qlstm_half_table: f(-a) from f(a) by their symmetry):
 *     logistic and the gates' tanh (3 integer bits) are the same for every
 *     qlstm, the cell's tanh depends on cell_shift only, so a module holds
 *     at most one table of each (64 KB each, shared by name by all its
 *     qlstm ops).
 *
 * One stage, one task per batch row (rows are independent; a row's steps
 * are sequential). Per task, in scratch owned by the row: the cell state
 * C [h] i16 (starts at 0), the hidden state H [h] i8 (starts at z_y) and
 * the gate sums AX, AH [4h] i32. Per step t:
 *
 *   AX = bx; AH = bh
 *   for k < in:  AX[g] += x[t,n,k] wt[k,g]   for every g     i32, scalar
 *   for k < h:   AH[g] += H[k] rt[k,g]        for every g     loops (LLVM
 *                                                              vectorizes)
 *   A(g) = sat16(sat16(MBQM(AX[g])) + MBQM(AH[g]))
 *   for j < h:   i, o, f = SIG[A(j)], SIG[A(h+j)], SIG[A(2h+j)]
 *                g = TANH3[A(3h+j)]
 *                C[j] = sat16(w16(RDPOT(f C[j], 15)) + w16(RDPOT(i g, 30+C)))
 *                H[j] = y[t,n,j] = sat8(MBQM(o TANHC[C[j]]) + z_y)
 *
 * MBQM is cg_requant_apply with the tflite rounding (requant.c), RDPOT
 * gemmlowp's RoundingDivideByPOT and w16 the int16 wrap of qlstm.c; SIG,
 * TANH3 and TANHC the table lookups. The i32 sums wrap as the reference's
 * do, so their order does not matter.
 */
#include <stdio.h>
#include <string.h>

#include "targets/llvm/cg.h"

#include "ir/qlstm.h"

CG_SUPPORTS(cg_supports_qlstm) {
  for (unsigned i = 1; i < 4; i++)
    if (!quill_value_constant(quill_op_operand(op, i)))
      return "w, r and b must be constants (the zero points are folded "
             "into the gate biases at compile time)";
  return NULL;
}

/* The table of |a| of the logistic or the tanh (ibits integer bits), one
 * global per name in the module. */
static LLVMValueRef act_table(cg *c, const char *name, bool logistic,
                              int ibits) {
  LLVMValueRef g = LLVMGetNamedGlobal(c->mod, name);
  if (g)
    return g;
  size_t bytes = QUILL_QLSTM_HALF_TABLE * sizeof(int16_t);
  int16_t *t = quill_alloc(c->ctx, bytes);
  if (!t) {
    c->status = QUILL_ERR_NOMEM;
    return NULL;
  }
  quill_qlstm_half_table(logistic, ibits, t);
  g = cg_const_global(c, name, t, bytes);
  LLVMSetValueName2(g, name, strlen(name));
  quill_free(c->ctx, t, bytes);
  return g;
}

/* f(v) for an i32 v in [-32768, 32767] from its table of |v|
 * (quill_qlstm_half_table): i32. */
static LLVMValueRef lookup(cg *c, LLVMValueRef tab, bool logistic,
                           LLVMValueRef v) {
  LLVMValueRef neg = LLVMBuildICmp(c->b, LLVMIntSLT, v, cg_i32c(c, 0), "");
  LLVMValueRef m = LLVMBuildSelect(
      c->b, neg, LLVMBuildSub(c->b, cg_i32c(c, 0), v, ""), v, "");
  LLVMValueRef t = LLVMBuildSExt(
      c->b,
      cg_load(c, c->t_i16,
              cg_gep(c, c->t_i16, tab, LLVMBuildZExt(c->b, m, c->t_i64, "")),
              2),
      c->t_i32, "");
  LLVMValueRef mirrored =
      LLVMBuildSub(c->b, cg_i32c(c, logistic ? 32767 : 0), t, "");
  return LLVMBuildSelect(c->b, neg, mirrored, t, "");
}

static LLVMValueRef sat16(cg *c, LLVMValueRef v) {
  return cg_min_s(c, cg_max_s(c, v, cg_i32c(c, -32768)), cg_i32c(c, 32767));
}

/* The int16 wrap of an i32 (C++ int16 arithmetic in gemmlowp). */
static LLVMValueRef w16(cg *c, LLVMValueRef v) {
  return LLVMBuildSExt(c->b, LLVMBuildTrunc(c->b, v, c->t_i16, ""), c->t_i32,
                       "");
}

/* gemmlowp's RoundingDivideByPOT of an i32 by 2^e (1 <= e <= 30). */
static LLVMValueRef rdpot(cg *c, LLVMValueRef x, int e) {
  int32_t mask = (int32_t)((INT64_C(1) << e) - 1);
  LLVMValueRef rem = LLVMBuildAnd(c->b, x, cg_i32c(c, mask), "");
  LLVMValueRef neg = LLVMBuildZExt(
      c->b, LLVMBuildICmp(c->b, LLVMIntSLT, x, cg_i32c(c, 0), ""), c->t_i32,
      "");
  LLVMValueRef thr = LLVMBuildAdd(c->b, cg_i32c(c, mask >> 1), neg, "");
  LLVMValueRef up = LLVMBuildZExt(
      c->b, LLVMBuildICmp(c->b, LLVMIntSGT, rem, thr, ""), c->t_i32, "");
  return LLVMBuildAdd(c->b, LLVMBuildAShr(c->b, x, cg_i32c(c, e), ""), up, "");
}

/* MBQM(acc) with TFLite's rounding, then zp and the clamp [lo, hi]. */
static cg_requant mbqm(int32_t *m, int32_t *s, int64_t zp, int64_t lo,
                       int64_t hi) {
  cg_requant rq = {.raw = false, .r = QUILL_ROUND_TFLITE, .fixed = true,
                   .n = 1, .mult = m, .shift = s, .scale = NULL, .zp = zp,
                   .lo = lo, .hi = hi, .g_mult = NULL, .g_shift = NULL,
                   .g_scale = NULL, .pad = 0, .noclamp = false, .epi = NULL};
  return rq;
}

/* acc[g] += a * wt[g] for g < n (acc i32, wt i8; a an i32 value). */
static void axpy(cg *c, LLVMValueRef acc, LLVMValueRef a, LLVMValueRef wt,
                 int64_t n) {
  cg_loop lg;
  cg_for(c, &lg, 0, n, 1);
  LLVMValueRef p = cg_gep(c, c->t_i32, acc, lg.i);
  LLVMValueRef wv = LLVMBuildSExt(
      c->b, cg_load(c, c->t_i8, cg_gep(c, c->t_i8, wt, lg.i), 1), c->t_i32,
      "");
  cg_store(c,
           LLVMBuildAdd(c->b, cg_load(c, c->t_i32, p, 4),
                        LLVMBuildMul(c->b, a, wv, ""), ""),
           p, 4);
  cg_loop_end(c, &lg);
}

/* base + i * s (elements of type t; i an i64 value). */
static LLVMValueRef at(cg *c, LLVMTypeRef t, LLVMValueRef base,
                       LLVMValueRef i, int64_t s) {
  return cg_gep(c, t, base, LLVMBuildMul(c->b, i, cg_i64c(c, s), ""));
}

/* The folded biases [bx (4h), bh (4h)] (kernels_qlstm.c's). */
static int32_t *fold_biases(cg *c, const quill_op *op,
                            const quill_qlstm_params *p, int64_t h,
                            int64_t nin) {
  const quill_attr *wa = quill_value_constant(quill_op_operand(op, 1));
  const quill_attr *ra = quill_value_constant(quill_op_operand(op, 2));
  const quill_attr *ba = quill_value_constant(quill_op_operand(op, 3));
  int32_t *bb = quill_alloc(c->ctx, (size_t)(8 * h) * sizeof *bb);
  if (!bb)
    return NULL;
  for (int64_t g = 0; g < 4 * h; g++) {
    int64_t sw = 0, sr = 0;
    for (int64_t k = 0; k < nin; k++)
      sw += quill_attr_dense_get_i64(wa, (size_t)(g * nin + k));
    for (int64_t k = 0; k < h; k++)
      sr += quill_attr_dense_get_i64(ra, (size_t)(g * h + k));
    bb[g] = (int32_t)(quill_attr_dense_get_i64(ba, (size_t)g) - p->zx * sw);
    bb[4 * h + g] = (int32_t)(-p->zy * sr);
  }
  return bb;
}

/* The constant [4h, k] operand i transposed to [k, 4h] (i8). */
static LLVMValueRef transposed(cg *c, const quill_op *op, unsigned i,
                               int64_t h, int64_t k) {
  const quill_attr *a = quill_value_constant(quill_op_operand(op, i));
  size_t n = (size_t)(4 * h * k);
  int8_t *t = quill_alloc(c->ctx, n ? n : 1);
  if (!t) {
    c->status = QUILL_ERR_NOMEM;
    return NULL;
  }
  for (int64_t g = 0; g < 4 * h; g++)
    for (int64_t j = 0; j < k; j++)
      t[j * 4 * h + g] = (int8_t)quill_attr_dense_get_i64(a, (size_t)(g * k + j));
  LLVMValueRef gl = cg_const_global(c, i == 1 ? "qlstm_wt" : "qlstm_rt", t, n);
  quill_free(c->ctx, t, n ? n : 1);
  return gl;
}

CG_LOWER(cg_lower_qlstm) {
  cg_view x = cg_value_view(c, quill_op_operand(op, 0));
  cg_view w = cg_value_view(c, quill_op_operand(op, 1));
  cg_view r = cg_value_view(c, quill_op_operand(op, 2));
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  int64_t seq = x.dims[0], batch = x.dims[1], nin = x.dims[2];
  int64_t h = r.dims[1];
  quill_qlstm_params p;
  const char *why = NULL;
  if (!quill_qlstm_params_init(
          &p, quill_type_quant_scales(x.elem)[0],
          quill_type_quant_scales(w.elem)[0],
          quill_type_quant_scales(r.elem)[0],
          quill_type_quant_scales(y.elem)[0],
          quill_type_quant_zero_points(x.elem)[0],
          quill_type_quant_zero_points(y.elem)[0],
          quill_op_attr_int(op, "cell_shift", -11), &why))
    return cg_op_error(c, "%s", why);
  if (seq * batch * h == 0)
    return QUILL_OK;
  int32_t *bb = fold_biases(c, op, &p, h, nin);
  if (!bb)
    return QUILL_ERR_NOMEM;
  LLVMValueRef gbias =
      cg_const_global(c, "qlstm_bias", bb, (size_t)(8 * h) * sizeof *bb);
  quill_free(c->ctx, bb, (size_t)(8 * h) * sizeof *bb);
  char tname[32];
  snprintf(tname, sizeof tname, "q.qlstm.tanh%d", 15 + p.cell_shift);
  LLVMValueRef sig = act_table(c, "q.qlstm.sigmoid", true, 0);
  LLVMValueRef tanh3 = act_table(c, "q.qlstm.tanh3", false, 3);
  LLVMValueRef tanhc = act_table(c, tname, false, 15 + p.cell_shift);
  LLVMValueRef wt = transposed(c, op, 1, h, nin);
  LLVMValueRef rt = transposed(c, op, 2, h, h);
  if (!sig || !tanh3 || !tanhc || !wt || !rt)
    return c->status;
  /* the rows' states: AX, AH [batch, 4h] i32, C [batch, h] i16, H [batch,
   * h] i8 */
  size_t abytes = (size_t)(batch * 4 * h) * 4, cbytes = (size_t)(batch * h) * 2;
  int ws = cg_workspace(c, 2 * abytes + cbytes + (size_t)(batch * h));
  int32_t mx = p.mx, sx = p.sx, mh = p.mh, sh = p.sh, mo = p.mhid,
          so = p.shid;
  cg_requant rx = mbqm(&mx, &sx, 0, -32768, 32767);
  cg_requant rh = mbqm(&mh, &sh, 0, INT32_MIN, INT32_MAX);
  cg_requant ro = mbqm(&mo, &so, p.zy, -128, 127);

  cg_stage_begin(c, quill_op_name(op), batch);
  cg_stage_work(c, 0.5 * (double)(seq * batch * 4 * h * (nin + h)) +
                       20.0 * (double)(seq * batch * h));
  LLVMValueRef xb = cg_view_base(c, &x), yb = cg_view_base(c, &y);
  LLVMValueRef wsp = cg_slot_ptr(c, ws);
  cg_loop ln, lt, lg, lj, lk;
  cg_loop_begin(c, &ln, c->t0, c->t1, 1);
  LLVMValueRef axn = at(c, c->t_i32, wsp, ln.i, 4 * h);
  LLVMValueRef ahn = at(c, c->t_i32, cg_gep8(c, wsp, cg_i64c(c, (int64_t)abytes)),
                        ln.i, 4 * h);
  LLVMValueRef cn = at(
      c, c->t_i16, cg_gep8(c, wsp, cg_i64c(c, (int64_t)(2 * abytes))), ln.i,
      h);
  LLVMValueRef hn = at(
      c, c->t_i8, cg_gep8(c, wsp, cg_i64c(c, (int64_t)(2 * abytes + cbytes))),
      ln.i, h);
  cg_for(c, &lj, 0, h, 1);
  cg_store(c, cg_i16c(c, 0), cg_gep(c, c->t_i16, cn, lj.i), 2);
  cg_store(c, cg_i8c(c, p.zy), cg_gep(c, c->t_i8, hn, lj.i), 1);
  cg_loop_end(c, &lj);
  cg_for(c, &lt, 0, seq, 1);
  {
    LLVMValueRef xt = cg_gep(
        c, c->t_i8, xb,
        LLVMBuildAdd(c->b, LLVMBuildMul(c->b, lt.i, cg_i64c(c, x.strides[0]), ""),
                     LLVMBuildMul(c->b, ln.i, cg_i64c(c, x.strides[1]), ""),
                     ""));
    LLVMValueRef yt = cg_gep(
        c, c->t_i8, yb,
        LLVMBuildAdd(c->b, LLVMBuildMul(c->b, lt.i, cg_i64c(c, y.strides[0]), ""),
                     LLVMBuildMul(c->b, ln.i, cg_i64c(c, y.strides[1]), ""),
                     ""));
    cg_for(c, &lg, 0, 4 * h, 1);
    cg_store(c, cg_load(c, c->t_i32, cg_gep(c, c->t_i32, gbias, lg.i), 4),
             cg_gep(c, c->t_i32, axn, lg.i), 4);
    cg_store(c,
             cg_load(c, c->t_i32,
                     cg_gep(c, c->t_i32, gbias,
                            LLVMBuildAdd(c->b, lg.i, cg_i64c(c, 4 * h), "")),
                     4),
             cg_gep(c, c->t_i32, ahn, lg.i), 4);
    cg_loop_end(c, &lg);
    cg_for(c, &lk, 0, nin, 1);
    axpy(c, axn,
         LLVMBuildSExt(c->b, cg_load(c, c->t_i8, at(c, c->t_i8, xt, lk.i,
                                                    x.strides[2]), 1),
                       c->t_i32, ""),
         at(c, c->t_i8, wt, lk.i, 4 * h), 4 * h);
    cg_loop_end(c, &lk);
    cg_for(c, &lk, 0, h, 1);
    axpy(c, ahn,
         LLVMBuildSExt(c->b, cg_load(c, c->t_i8, cg_gep(c, c->t_i8, hn, lk.i), 1),
                       c->t_i32, ""),
         at(c, c->t_i8, rt, lk.i, 4 * h), 4 * h);
    cg_loop_end(c, &lk);
    cg_for(c, &lj, 0, h, 1);
    {
      LLVMValueRef gate[4];
      for (int k = 0; k < 4; k++) {
        LLVMValueRef gi = LLVMBuildAdd(c->b, lj.i, cg_i64c(c, k * h), "");
        LLVMValueRef gx = cg_requant_apply(
            c, &rx, cg_load(c, c->t_i32, cg_gep(c, c->t_i32, axn, gi), 4),
            NULL, false);
        LLVMValueRef gh = cg_requant_apply(
            c, &rh, cg_load(c, c->t_i32, cg_gep(c, c->t_i32, ahn, gi), 4),
            NULL, false);
        gate[k] = sat16(c, LLVMBuildAdd(c->b, gh, gx, ""));
      }
      LLVMValueRef ig = lookup(c, sig, true, gate[0]);
      LLVMValueRef og = lookup(c, sig, true, gate[1]);
      LLVMValueRef fg = lookup(c, sig, true, gate[2]);
      LLVMValueRef gg = lookup(c, tanh3, false, gate[3]);
      LLVMValueRef cp = cg_gep(c, c->t_i16, cn, lj.i);
      LLVMValueRef c0 = LLVMBuildSExt(c->b, cg_load(c, c->t_i16, cp, 2),
                                      c->t_i32, "");
      LLVMValueRef fc = w16(c, rdpot(c, LLVMBuildMul(c->b, fg, c0, ""), 15));
      LLVMValueRef igg = w16(
          c, rdpot(c, LLVMBuildMul(c->b, ig, gg, ""), 30 + p.cell_shift));
      LLVMValueRef c1 = sat16(c, LLVMBuildAdd(c->b, fc, igg, ""));
      cg_store(c, LLVMBuildTrunc(c->b, c1, c->t_i16, ""), cp, 2);
      LLVMValueRef hv = cg_requant_apply(
          c, &ro, LLVMBuildMul(c->b, og, lookup(c, tanhc, false, c1), ""), NULL,
          false);
      hv = LLVMBuildTrunc(c->b, hv, c->t_i8, "");
      cg_store(c, hv, cg_gep(c, c->t_i8, hn, lj.i), 1);
      cg_store(c, hv, at(c, c->t_i8, yt, lj.i, y.strides[2]), 1);
    }
    cg_loop_end(c, &lj);
  }
  cg_loop_end(c, &lt);
  cg_loop_end(c, &ln);
  cg_stage_end(c);
  return c->status;
}
