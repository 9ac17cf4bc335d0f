/*
 * lower_reduce.c - float reductions and layer normalization:
 * reduce_mean, reduce_sum, reduce_max, reduce_min and layer_norm on f32 or
 * f64 tensors, computing what the reference does (kernels_norm.c).
 *
 *   reduce_*    over `axes` (negative axes count from the end; absent or
 *               empty: all dims, or a plain copy when noop_with_empty_axes
 *               is 1), keepdims 0 or 1. One task per output element: the
 *               task index is split over the kept dims (logical order,
 *               last fastest) into an input and an output offset, then a
 *               loop nest over the reduced dims, in logical order (the
 *               order of the reference's odometer), accumulates in double:
 *               sum and mean add (mean divides by the reduced count once,
 *               NaN for an empty reduction), max and min keep NaN as the
 *               reference does: a = (v > a || isnan(v)) && !isnan(a) ? v
 *               : a. The result is rounded once to the element type.
 *   layer_norm  over dims [axis, rank) (axis default -1): one task per row
 *               (an index over the dims before axis): the row copied as
 *               doubles into a dense buffer (a fused dequantize's
 *               quantized input dequantized on the way), then over it in
 *               double: mean and variance (mean of squared deviations),
 *               each as 8 partial sums added as a tree in the reference's
 *               order (row_sum8, vectorized), then
 *                 y = (x - mean) * (1 / sqrt(var + eps)) * scale + bias
 *               evaluated left to right as the reference does (+ 0.0 when
 *               there is no bias); scale and bias are read through views
 *               broadcast to the normalized shape, so they may be graph
 *               inputs as well as constants. With numerics = "f32" every
 *               step is f32 instead, the sums one accumulator each in row
 *               order (row_sum_f32), as the reference's layer_norm_f32.
 *   qlayer_norm the integer layer_norm of ir/qnorm.h, one task per row:
 *               xi = x - zx into a dense i32 row, the int64 sums S and Q
 *               (exact, so vectorized in any order), the row's multiplier
 *               from an exact integer square root (isqrt_i64), then each
 *               element in i64 lanes: the reference's integers, bit for bit.
 *
 * Operands are views with any strides (transposes, NHWC layouts, slices).
 * The loop nests drop dims of size 1 and merge a dim into the one before
 * it when every view the nest walks steps over both contiguously, so a
 * row-major row is a single loop. Accumulating in double in the
 * reference's order gives the reference's results (the tests still allow
 * the usual float tolerance). Quantized and integer operands are not
 * lowered (the check names them).
 */
#include <math.h>
#include <string.h>

#include "ir/qnorm.h"
#include "targets/llvm/cg.h"

/* f32 and f64 operands and results, all of one element type. */
CG_SUPPORTS(cg_supports_reduce) {
  quill_type *e0 = quill_type_elem(quill_value_type(quill_op_operand(op, 0)));
  if (quill_type_is_quant(e0))
    return "quantized operands";
  quill_type_kind k = quill_type_kind_of(e0);
  if (k != QUILL_TYPE_F32 && k != QUILL_TYPE_F64)
    return "operands other than f32 or f64";
  unsigned nin = quill_op_num_operands(op);
  for (unsigned i = 0; i < nin + quill_op_num_results(op); i++) {
    const quill_value *v =
        i < nin ? quill_op_operand(op, i) : quill_op_result(op, i - nin);
    quill_type *e = quill_type_elem(quill_value_type(v));
    if (quill_type_is_quant(e) || quill_type_kind_of(e) != k)
      return "mixed element types";
  }
  return NULL;
}

/* ---- helpers ------------------------------------------------------------- */

/* The LLVM type of a view's (f32 or f64) elements. */
static LLVMTypeRef float_type(cg *c, const cg_view *v) {
  return quill_type_kind_of(v->elem) == QUILL_TYPE_F64 ? c->t_f64 : c->t_f32;
}

/* base[off] of type t, as a double. */
static LLVMValueRef load_d(cg *c, LLVMTypeRef t, LLVMValueRef base,
                           LLVMValueRef off) {
  unsigned al = t == c->t_f64 ? 8 : 4;
  LLVMValueRef v = cg_load(c, t, cg_gep(c, t, base, off), al);
  return t == c->t_f64 ? v : LLVMBuildFPExt(c->b, v, c->t_f64, "");
}

/* base[off] = (t)v for a double v. */
static void store_d(cg *c, LLVMTypeRef t, LLVMValueRef v, LLVMValueRef base,
                    LLVMValueRef off) {
  unsigned al = t == c->t_f64 ? 8 : 4;
  if (t != c->t_f64)
    v = LLVMBuildFPTrunc(c->b, v, t, "");
  cg_store(c, v, cg_gep(c, t, base, off), al);
}

/* off + i * stride (stride 0 and 1 without the multiply). */
static LLVMValueRef add_scaled(cg *c, LLVMValueRef off, LLVMValueRef i,
                               int64_t stride) {
  if (stride == 0)
    return off;
  if (stride != 1)
    i = LLVMBuildMul(c->b, i, cg_i64c(c, stride), "");
  return LLVMBuildAdd(c->b, off, i, "");
}

/* Split a task index t over dims[0..nd) (row-major, last fastest) and add
 * each index times str[v][d] to off[v], for nv views. */
static void split_index(cg *c, LLVMValueRef t, unsigned nd,
                        const int64_t *dims, unsigned nv,
                        int64_t (*str)[QUILL_MAX_RANK], LLVMValueRef *off) {
  int outer = -1; /* the first dim of size > 1 takes the quotient as is */
  for (unsigned d = 0; d < nd && outer < 0; d++)
    if (dims[d] != 1)
      outer = (int)d;
  LLVMValueRef rem = t;
  for (unsigned d = nd; d-- > 0;) {
    if (dims[d] == 1)
      continue;
    LLVMValueRef i = rem;
    if ((int)d != outer) {
      i = LLVMBuildURem(c->b, rem, cg_i64c(c, dims[d]), "");
      rem = LLVMBuildUDiv(c->b, rem, cg_i64c(c, dims[d]), "");
    }
    for (unsigned v = 0; v < nv; v++)
      off[v] = add_scaled(c, off[v], i, str[v][d]);
  }
}

/* A loop nest over some dims of up to NEST_V views. */
#define NEST_V 4

typedef struct nest {
  unsigned n, nv;                         /* loops, views */
  int64_t dims[QUILL_MAX_RANK];
  int64_t str[NEST_V][QUILL_MAX_RANK];
  cg_loop l[QUILL_MAX_RANK];
  LLVMValueRef off[NEST_V];               /* element offsets in the body */
} nest;

/* The nest over dims[0..nd) (outermost first) walked by nv views with
 * strides str[v][0..nd): dims of size 1 are dropped, and a dim is merged
 * into the loop before it when str[v][prev] == str[v][d] * dims[d] for
 * every view (a zero-size dim still makes the nest run zero times). */
static void nest_init(nest *s, unsigned nv, unsigned nd, const int64_t *dims,
                      int64_t (*str)[QUILL_MAX_RANK]) {
  s->n = 0;
  s->nv = nv;
  for (unsigned d = 0; d < nd; d++) {
    if (dims[d] == 1)
      continue;
    bool merge = s->n > 0;
    for (unsigned v = 0; v < nv && merge; v++)
      merge = s->str[v][s->n - 1] == str[v][d] * dims[d];
    if (merge) {
      s->dims[s->n - 1] *= dims[d];
      for (unsigned v = 0; v < nv; v++)
        s->str[v][s->n - 1] = str[v][d];
      continue;
    }
    s->dims[s->n] = dims[d];
    for (unsigned v = 0; v < nv; v++)
      s->str[v][s->n] = str[v][d];
    s->n++;
  }
}

/* Open the loops; s->off[v] = base[v] + the views' offsets of the current
 * element. */
static void nest_begin(cg *c, nest *s, const LLVMValueRef *base) {
  for (unsigned v = 0; v < s->nv; v++)
    s->off[v] = base[v];
  for (unsigned k = 0; k < s->n; k++) {
    cg_for(c, &s->l[k], 0, s->dims[k], 1);
    for (unsigned v = 0; v < s->nv; v++)
      s->off[v] = add_scaled(c, s->off[v], s->l[k].i, s->str[v][k]);
  }
}

static void nest_end(cg *c, nest *s) {
  for (unsigned k = s->n; k-- > 0;)
    cg_loop_end(c, &s->l[k]);
}

/* nest_end with the innermost loop vectorized `width` wide (LLVM's own
 * choice for loops that mix f64 and f32 is 4 lanes). */
static void nest_end_vectorized(cg *c, nest *s, unsigned width) {
  for (unsigned k = s->n; k-- > 0;) {
    if (k == s->n - 1)
      cg_loop_end_vectorized(c, &s->l[k], width);
    else
      cg_loop_end(c, &s->l[k]);
  }
}

/* ---- reductions ---------------------------------------------------------- */

/* The reference's NaN-keeping max (gt) or min (!gt) step on doubles. */
static LLVMValueRef minmax_step(cg *c, bool gt, LLVMValueRef a,
                                LLVMValueRef v) {
  LLVMValueRef better = LLVMBuildFCmp(c->b, gt ? LLVMRealOGT : LLVMRealOLT, v,
                                      a, "");
  LLVMValueRef vnan = LLVMBuildFCmp(c->b, LLVMRealUNO, v, v, "");
  LLVMValueRef anum = LLVMBuildFCmp(c->b, LLVMRealORD, a, a, "");
  LLVMValueRef take =
      LLVMBuildAnd(c->b, LLVMBuildOr(c->b, better, vnan, ""), anum, "");
  return LLVMBuildSelect(c->b, take, v, a, "");
}

CG_LOWER(cg_lower_reduce) {
  cg_view x = cg_value_view(c, quill_op_operand(op, 0));
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  quill_opcode opc = quill_op_opcode(op);
  unsigned r = x.rank;
  int64_t axes[QUILL_MAX_RANK];
  int64_t n = quill_op_attr_ints(op, "axes", axes, QUILL_MAX_RANK);
  bool keep = quill_op_attr_int(op, "keepdims", 1) != 0;
  bool noop = quill_op_attr_int(op, "noop_with_empty_axes", 0) != 0;
  if (n > (int64_t)r)
    return cg_op_error(c, "'axes' lists more axes than the operand has");
  if (n <= 0 && noop) { /* identity */
    if (y.rank != x.rank || memcmp(y.dims, x.dims, r * sizeof *x.dims))
      return cg_op_error(c, "result shape differs from operand");
    cg_copy(c, quill_op_name(op), &y, &x);
    return c->status;
  }
  bool reduced[QUILL_MAX_RANK] = {false};
  for (unsigned d = 0; d < r && n <= 0; d++)
    reduced[d] = true;
  for (int64_t i = 0; i < n; i++) {
    int64_t a = axes[i] < 0 ? axes[i] + (int64_t)r : axes[i];
    if (a < 0 || a >= (int64_t)r)
      return cg_op_error(c, "'axes' is out of range");
    reduced[a] = true;
  }
  /* kept dims: x and y strides; reduced dims: x strides */
  int64_t kdims[QUILL_MAX_RANK], kstr[2][QUILL_MAX_RANK];
  int64_t rdims[QUILL_MAX_RANK], rstr[1][QUILL_MAX_RANK];
  unsigned nk = 0, nr = 0, od = 0;
  int64_t ny = 1, count = 1;
  for (unsigned d = 0; d < r; d++) {
    if (reduced[d]) {
      rdims[nr] = x.dims[d];
      rstr[0][nr++] = x.strides[d];
      count *= x.dims[d];
      if (keep && (od >= y.rank || y.dims[od++] != 1))
        return cg_op_error(c, "result shape does not match 'axes'");
      continue;
    }
    if (od >= y.rank || y.dims[od] != x.dims[d])
      return cg_op_error(c, "result shape does not match 'axes'");
    kdims[nk] = x.dims[d];
    kstr[0][nk] = x.strides[d];
    kstr[1][nk++] = y.strides[od++];
    ny *= x.dims[d];
  }
  if (od != y.rank)
    return cg_op_error(c, "result rank does not match 'axes' and 'keepdims'");
  if (ny == 0)
    return QUILL_OK;
  nest s;
  nest_init(&s, 1, nr, rdims, rstr);
  double init = opc == QUILL_OP_REDUCE_MAX   ? -INFINITY
                : opc == QUILL_OP_REDUCE_MIN ? INFINITY
                                             : 0.0;
  LLVMTypeRef tx = float_type(c, &x), ty = float_type(c, &y);

  cg_stage_begin(c, quill_op_name(op), ny);
  cg_stage_work(c, (double)ny * (double)(count + 1));
  LLVMValueRef xb = cg_view_base(c, &x), yb = cg_view_base(c, &y);
  LLVMValueRef accv = cg_var(c, c->t_f64, "acc");
  cg_loop lt;
  cg_loop_begin(c, &lt, c->t0, c->t1, 1);
  LLVMValueRef off[2] = {cg_i64c(c, 0), cg_i64c(c, 0)};
  split_index(c, lt.i, nk, kdims, 2, kstr, off);
  cg_store(c, cg_f64c(c, init), accv, 8);
  nest_begin(c, &s, off);
  {
    LLVMValueRef v = load_d(c, tx, xb, s.off[0]);
    LLVMValueRef a = cg_load(c, c->t_f64, accv, 8);
    if (opc == QUILL_OP_REDUCE_MAX || opc == QUILL_OP_REDUCE_MIN)
      a = minmax_step(c, opc == QUILL_OP_REDUCE_MAX, a, v);
    else
      a = LLVMBuildFAdd(c->b, a, v, "");
    cg_store(c, a, accv, 8);
  }
  nest_end(c, &s);
  LLVMValueRef res = cg_load(c, c->t_f64, accv, 8);
  if (opc == QUILL_OP_REDUCE_MEAN)
    res = count ? LLVMBuildFDiv(c->b, res, cg_f64c(c, (double)count), "")
                : cg_f64c(c, NAN);
  store_d(c, ty, res, yb, off[1]);
  cg_loop_end(c, &lt);
  cg_stage_end(c);
  return c->status;
}

/* ---- layer_norm ---------------------------------------------------------- */

/* The sum of a dense row of n doubles (with mean: of (v - mean)^2), as the
 * reference's layer_norm adds them: 8 partial sums, element i into lane
 * i % 8 in order, then lane l += lane l + w for w = 4, 2, 1. The 8-lane
 * loop vectorizes (no reassociation: every lane keeps its order). */
static LLVMValueRef row_sum8(cg *c, LLVMValueRef row, int64_t n,
                             LLVMValueRef part, LLVMValueRef mean) {
  for (int l = 0; l < 8; l++)
    cg_store(c, cg_f64c(c, 0.0), cg_gep(c, c->t_f64, part, cg_i64c(c, l)), 8);
  int64_t nb = n / 8, tail = n % 8;
  for (int t = 0; t < 2; t++) {
    if ((t == 0 && !nb) || (t == 1 && !tail))
      continue;
    cg_loop lb, ll;
    LLVMValueRef base = cg_i64c(c, nb * 8);
    if (t == 0) {
      cg_for(c, &lb, 0, nb, 1);
      base = LLVMBuildMul(c->b, lb.i, cg_i64c(c, 8), "");
    }
    cg_for(c, &ll, 0, t == 0 ? 8 : tail, 1);
    LLVMValueRef v = cg_load(
        c, c->t_f64,
        cg_gep(c, c->t_f64, row, LLVMBuildAdd(c->b, base, ll.i, "")), 8);
    if (mean) {
      v = LLVMBuildFSub(c->b, v, mean, "");
      v = LLVMBuildFMul(c->b, v, v, "");
    }
    LLVMValueRef pp = cg_gep(c, c->t_f64, part, ll.i);
    cg_store(c, LLVMBuildFAdd(c->b, cg_load(c, c->t_f64, pp, 8), v, ""), pp,
             8);
    if (t == 0) {
      cg_loop_end_vectorized(c, &ll, 8);
      cg_loop_end(c, &lb);
    } else {
      cg_loop_end(c, &ll);
    }
  }
  return cg_tree_sum(c, c->t_f64, part, 8);
}

/* numerics = "f32": the sum of a dense row of n doubles (each an f32
 * value; with mean: of the f32 (v - mean)^2) added in order into one f32
 * sum, as TFLite's MEAN does (the reference's layer_norm_f32). Not
 * vectorized: the order is sequential. */
static LLVMValueRef row_sum_f32(cg *c, LLVMValueRef row, int64_t n,
                                LLVMValueRef acc, LLVMValueRef mean) {
  cg_store(c, cg_f32c(c, 0.0), acc, 4);
  cg_loop l;
  cg_for(c, &l, 0, n, 1);
  LLVMValueRef v = LLVMBuildFPTrunc(
      c->b, cg_load(c, c->t_f64, cg_gep(c, c->t_f64, row, l.i), 8), c->t_f32,
      "");
  if (mean) {
    v = LLVMBuildFSub(c->b, v, mean, "");
    v = LLVMBuildFMul(c->b, v, v, "");
  }
  cg_store(c, LLVMBuildFAdd(c->b, cg_load(c, c->t_f32, acc, 4), v, ""), acc,
           4);
  cg_loop_end(c, &l);
  return cg_load(c, c->t_f32, acc, 4);
}

CG_LOWER(cg_lower_layer_norm) {
  cg_view x = cg_value_view(c, quill_op_operand(op, 0));
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  cg_fused_out fo;
  quill_status fst = cg_fused_out_init(c, op, &fo);
  if (fst)
    return fst;
  if (fo.q)
    y = fo.view; /* store into the fused quantize's result */
  unsigned r = x.rank, ax;
  quill_status ast = cg_op_axis(c, r, &ax);
  if (ast)
    return ast;
  unsigned nd = r - ax;
  if (y.rank != r || memcmp(y.dims, x.dims, r * sizeof *x.dims))
    return cg_op_error(c, "result shape differs from operand");
  double eps = quill_op_attr_number(op, "epsilon", 1e-5);
  bool has_bias = quill_op_num_operands(op) > 2;
  const quill_attr *na = quill_op_attr(op, "numerics");
  bool f32 = na && strcmp(quill_attr_string_value(na, NULL), "f32") == 0;
  /* scale and bias broadcast to the normalized dims x.dims[ax..r) */
  cg_view p[2];
  for (unsigned i = 0; i < 1u + has_bias; i++) {
    cg_view v = cg_value_view(c, quill_op_operand(op, 1 + i));
    for (unsigned d = 0; d + nd < v.rank; d++)
      if (v.dims[d] != 1)
        return cg_op_error(c, "scale or bias does not broadcast to the "
                              "normalized shape");
    for (unsigned d = 0; d < v.rank && d < nd; d++) {
      int64_t vd = v.dims[v.rank - 1 - d], xd = x.dims[r - 1 - d];
      if (vd != 1 && vd != xd)
        return cg_op_error(c, "scale or bias does not broadcast to the "
                              "normalized shape");
    }
    p[i] = cg_view_broadcast(&v, nd, x.dims + ax);
  }
  int64_t outer = 1, inner = 1;
  for (unsigned d = 0; d < r; d++)
    *(d < ax ? &outer : &inner) *= x.dims[d];
  if (outer * inner == 0)
    return QUILL_OK;
  /* pass 0 copies each row of x (any strides; a fused dequantize's
   * quantized view dequantized on the way, fuse_qdq.c) as doubles into a
   * dense row: on the stack, or for rows longer than CG_FUSED_ROW_MAX in a
   * workspace row per task. The statistics then run over that row with 8
   * partial sums (the reference's order), which LLVM vectorizes; the
   * output pass reads it as x. */
  int64_t rstr[QUILL_MAX_RANK];
  cg_row_major(nd, x.dims + ax, rstr);
  int64_t ostr[2][QUILL_MAX_RANK], qostr[1][QUILL_MAX_RANK];
  int64_t istr[NEST_V][QUILL_MAX_RANK], qistr[2][QUILL_MAX_RANK];
  for (unsigned d = 0; d < r; d++) {
    if (d < ax) {
      qostr[0][d] = x.strides[d];
      ostr[0][d] = 0;
      ostr[1][d] = y.strides[d];
      continue;
    }
    qistr[0][d - ax] = x.strides[d];
    qistr[1][d - ax] = rstr[d - ax];
    istr[0][d - ax] = rstr[d - ax];
    istr[1][d - ax] = y.strides[d];
    istr[2][d - ax] = p[0].strides[d - ax];
    istr[3][d - ax] = has_bias ? p[1].strides[d - ax] : 0;
  }
  nest s0, sy;
  nest_init(&s0, 2, nd, x.dims + ax, qistr);
  nest_init(&sy, 2u + 1u + has_bias, nd, x.dims + ax, istr);
  bool xq = quill_type_is_quant(x.elem);
  LLVMTypeRef tx = float_type(c, &x), ty = float_type(c, &y);
  LLVMTypeRef tp = float_type(c, &p[0]);
  bool onstack = inner <= CG_FUSED_ROW_MAX;
  int ws = onstack ? -1 : cg_workspace(c, (size_t)(outer * inner) * 8);

  cg_stage_begin(c, quill_op_name(op), outer);
  cg_stage_work(c, (double)(outer * inner) * 1.5);
  LLVMValueRef qb = cg_view_base(c, &x);
  LLVMValueRef yb = cg_view_base(c, &y);
  LLVMValueRef sb = cg_view_base(c, &p[0]);
  LLVMValueRef bb = has_bias ? cg_view_base(c, &p[1]) : NULL;
  LLVMValueRef rowv =
      onstack ? cg_var(c, LLVMArrayType2(c->t_f64, (uint64_t)inner), "xrow")
              : NULL;
  LLVMValueRef part = cg_var(c, LLVMArrayType2(c->t_f64, 8), "part");
  LLVMValueRef acc = f32 ? cg_var(c, c->t_f32, "acc") : NULL;
  LLVMValueRef n = cg_f64c(c, (double)inner);
  cg_loop lt;
  cg_loop_begin(c, &lt, c->t0, c->t1, 1);
  LLVMValueRef zero = cg_i64c(c, 0);
  LLVMValueRef off[NEST_V] = {zero, zero, zero, zero};
  split_index(c, lt.i, ax, x.dims, 2, ostr, off);
  LLVMValueRef xb =
      onstack ? rowv
              : cg_gep(c, c->t_f64, cg_slot_ptr(c, ws),
                       LLVMBuildMul(c->b, lt.i, cg_i64c(c, inner), ""));
  {
    LLVMValueRef qoff[2] = {zero, zero};
    split_index(c, lt.i, ax, x.dims, 1, qostr, qoff);
    nest_begin(c, &s0, qoff);
    LLVMValueRef v =
        xq ? LLVMBuildFPExt(c->b, cg_load_f32_dq(c, &x, qb, s0.off[0]),
                            c->t_f64, "")
           : load_d(c, tx, qb, s0.off[0]);
    cg_store(c, v, cg_gep(c, c->t_f64, xb, s0.off[1]), 8);
    nest_end_vectorized(c, &s0, 16);
  }
  /* f32: each step rounded to f32 as in the reference's layer_norm_f32
   * (the statistics' sums in order, 1.0f / sqrtf) */
  LLVMTypeRef ts = f32 ? c->t_f32 : c->t_f64;
  LLVMValueRef mean, var;
  if (f32) {
    mean = row_sum_f32(c, xb, inner, acc, NULL);
    mean = LLVMBuildFDiv(c->b, mean, cg_f32c(c, (double)(float)inner), "mean");
    var = row_sum_f32(c, xb, inner, acc, mean);
    var = LLVMBuildFDiv(c->b, var, cg_f32c(c, (double)(float)inner), "var");
  } else {
    mean = LLVMBuildFDiv(c->b, row_sum8(c, xb, inner, part, NULL), n, "mean");
    var = LLVMBuildFDiv(c->b, row_sum8(c, xb, inner, part, mean), n, "var");
  }
  LLVMValueRef se = LLVMBuildFAdd(
      c->b, var, f32 ? cg_f32c(c, (double)(float)eps) : cg_f64c(c, eps), "");
  LLVMValueRef sq = cg_intrinsic(c, "llvm.sqrt", &ts, 1, &se, 1);
  LLVMValueRef inv = LLVMBuildFDiv(
      c->b, f32 ? cg_f32c(c, 1.0) : cg_f64c(c, 1.0), sq, "inv");
  /* y = (x - mean) * inv * scale + bias */
  nest_begin(c, &sy, off);
  {
    LLVMValueRef v =
        cg_load(c, c->t_f64, cg_gep(c, c->t_f64, xb, sy.off[0]), 8);
    LLVMValueRef sv = load_d(c, tp, sb, sy.off[2]);
    LLVMValueRef bv = has_bias ? load_d(c, tp, bb, sy.off[3]) : cg_f64c(c, 0.0);
    if (f32) {
      v = LLVMBuildFPTrunc(c->b, v, c->t_f32, "");
      sv = LLVMBuildFPTrunc(c->b, sv, c->t_f32, "");
      bv = LLVMBuildFPTrunc(c->b, bv, c->t_f32, "");
    }
    v = LLVMBuildFSub(c->b, v, mean, "");
    v = LLVMBuildFMul(c->b, v, inv, "");
    v = LLVMBuildFMul(c->b, v, sv, "");
    v = LLVMBuildFAdd(c->b, v, bv, "");
    if (f32)
      v = LLVMBuildFPExt(c->b, v, c->t_f64, "");
    if (fo.q)
      cg_fused_store(c, &fo, LLVMBuildFPTrunc(c->b, v, c->t_f32, ""), yb,
                     sy.off[1]);
    else
      store_d(c, ty, v, yb, sy.off[1]);
  }
  nest_end_vectorized(c, &sy, 16);
  cg_loop_end(c, &lt);
  cg_stage_end(c);
  return c->status;
}

/* ---- qlayer_norm --------------------------------------------------------- */

/* floor(sqrt(w)) for an i64 w in [0, 2^62]: the f64 square root truncated
 * (off by at most one: (double)w rounds), then one step down while r^2 > w
 * and one up while (r + 1)^2 <= w, twice each: exact, as quill_isqrt_u64. */
static LLVMValueRef isqrt_i64(cg *c, LLVMValueRef w) {
  LLVMValueRef f = LLVMBuildUIToFP(c->b, w, c->t_f64, "");
  f = cg_intrinsic(c, "llvm.sqrt", &c->t_f64, 1, &f, 1);
  LLVMValueRef r = LLVMBuildFPToUI(c->b, f, c->t_i64, "");
  LLVMValueRef one = cg_i64c(c, 1);
  for (int i = 0; i < 2; i++) {
    LLVMValueRef hi = LLVMBuildICmp(c->b, LLVMIntUGT,
                                    LLVMBuildMul(c->b, r, r, ""), w, "");
    r = LLVMBuildSub(c->b, r, LLVMBuildZExt(c->b, hi, c->t_i64, ""), "");
  }
  for (int i = 0; i < 2; i++) {
    LLVMValueRef r1 = LLVMBuildAdd(c->b, r, one, "");
    LLVMValueRef le = LLVMBuildICmp(c->b, LLVMIntULE,
                                    LLVMBuildMul(c->b, r1, r1, ""), w, "");
    r = LLVMBuildAdd(c->b, r, LLVMBuildZExt(c->b, le, c->t_i64, ""), "");
  }
  return r;
}

/* qlayer_norm x g b (ir/qnorm.h): one task per row. Pass 0 copies the
 * row's xi = x - zx (any strides) into a dense i32 row; the row's S and Q
 * are int64 sums (exact in any order, so LLVM vectorizes them freely);
 * the row's m and s are scalar code (isqrt_i64); the output pass computes
 * quill_qnorm_elem's steps in i64 lanes, 16 wide. */
CG_LOWER(cg_lower_qlayer_norm) {
  cg_view x = cg_value_view(c, quill_op_operand(op, 0));
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  cg_view g = cg_value_view(c, quill_op_operand(op, 1));
  cg_view bv = cg_value_view(c, quill_op_operand(op, 2));
  if (!quill_type_is_quant(x.elem) || !quill_type_is_quant(y.elem))
    return cg_op_error(c, "expects a quantized operand and result");
  unsigned r = x.rank, ax;
  quill_status ast = cg_op_axis(c, r, &ax);
  if (ast)
    return ast;
  unsigned nd = r - ax;
  if (y.rank != r || memcmp(y.dims, x.dims, r * sizeof *x.dims))
    return cg_op_error(c, "result shape differs from operand");
  int64_t outer = 1, inner = 1;
  for (unsigned d = 0; d < r; d++)
    *(d < ax ? &outer : &inner) *= x.dims[d];
  if (g.rank != 1 || bv.rank != 1 || g.dims[0] != inner ||
      bv.dims[0] != inner || g.strides[0] != 1 || bv.strides[0] != 1)
    return cg_op_error(c, "g and b must be dense tensor<Nxi32>, one per row "
                          "element");
  if (outer * inner == 0)
    return QUILL_OK;
  int64_t E = quill_op_attr_int(op, "epsilon_q", 0);
  int G = (int)quill_op_attr_int(op, "shift", 0);
  int F = (int)quill_op_attr_int(op, "bias_shift", 0);
  int zs = QUILL_QNORM_Z_BITS + G;
  int64_t zx = quill_type_quant_zero_points(x.elem)[0];
  int64_t zy = quill_type_quant_zero_points(y.elem)[0];
  int64_t qmin = quill_type_quant_qmin(y.elem);
  int64_t qmax = quill_type_quant_qmax(y.elem);
  int64_t rstr[QUILL_MAX_RANK], ostr[2][QUILL_MAX_RANK];
  int64_t qistr[2][QUILL_MAX_RANK], istr[2][QUILL_MAX_RANK];
  cg_row_major(nd, x.dims + ax, rstr);
  for (unsigned d = 0; d < r; d++) {
    if (d < ax) {
      ostr[0][d] = x.strides[d];
      ostr[1][d] = y.strides[d];
      continue;
    }
    qistr[0][d - ax] = x.strides[d];
    qistr[1][d - ax] = rstr[d - ax];
    istr[0][d - ax] = rstr[d - ax];
    istr[1][d - ax] = y.strides[d];
  }
  nest s0, sy;
  nest_init(&s0, 2, nd, x.dims + ax, qistr);
  nest_init(&sy, 2, nd, x.dims + ax, istr);
  bool onstack = inner <= CG_FUSED_ROW_MAX;
  int ws = onstack ? -1 : cg_workspace(c, (size_t)(outer * inner) * 4);
  LLVMTypeRef tx = cg_elem_type(c, x.elem), ty = cg_elem_type(c, y.elem);

  cg_stage_begin(c, quill_op_name(op), outer);
  cg_stage_work(c, (double)(outer * inner) * 0.5);
  LLVMValueRef xb = cg_view_base(c, &x), yb = cg_view_base(c, &y);
  LLVMValueRef gb = cg_view_base(c, &g), bb = cg_view_base(c, &bv);
  LLVMValueRef rowv =
      onstack ? cg_var(c, LLVMArrayType2(c->t_i32, (uint64_t)inner), "xrow")
              : NULL;
  LLVMValueRef sv = cg_var(c, c->t_i64, "sum"), qv = cg_var(c, c->t_i64, "sq");
  cg_loop lt;
  cg_loop_begin(c, &lt, c->t0, c->t1, 1);
  LLVMValueRef zero = cg_i64c(c, 0);
  LLVMValueRef off[2] = {zero, zero};
  split_index(c, lt.i, ax, x.dims, 2, ostr, off);
  LLVMValueRef row =
      onstack ? rowv
              : cg_gep(c, c->t_i32, cg_slot_ptr(c, ws),
                       LLVMBuildMul(c->b, lt.i, cg_i64c(c, inner), ""));
  LLVMValueRef zoff[2] = {off[0], zero};
  nest_begin(c, &s0, zoff);
  {
    LLVMValueRef v = cg_load_int(c, x.elem, cg_gep(c, tx, xb, s0.off[0]),
                                 c->t_i32);
    v = LLVMBuildSub(c->b, v, cg_i32c(c, zx), "");
    cg_store(c, v, cg_gep(c, c->t_i32, row, s0.off[1]), 4);
  }
  nest_end_vectorized(c, &s0, 16);
  /* S and Q */
  cg_store(c, zero, sv, 8);
  cg_store(c, zero, qv, 8);
  cg_loop ls;
  cg_for(c, &ls, 0, inner, 1);
  {
    LLVMValueRef v = LLVMBuildSExt(
        c->b, cg_load(c, c->t_i32, cg_gep(c, c->t_i32, row, ls.i), 4),
        c->t_i64, "");
    cg_store(c, LLVMBuildAdd(c->b, cg_load(c, c->t_i64, sv, 8), v, ""), sv, 8);
    cg_store(c,
             LLVMBuildAdd(c->b, cg_load(c, c->t_i64, qv, 8),
                          LLVMBuildMul(c->b, v, v, ""), ""),
             qv, 8);
  }
  cg_loop_end_vectorized(c, &ls, 16);
  LLVMValueRef S = cg_load(c, c->t_i64, sv, 8);
  LLVMValueRef Q = cg_load(c, c->t_i64, qv, 8);
  LLVMValueRef n = cg_i64c(c, inner);
  /* the row's m and s (quill_qnorm_row) */
  LLVMValueRef V = LLVMBuildAdd(
      c->b,
      LLVMBuildSub(c->b, LLVMBuildMul(c->b, n, Q, ""),
                   LLVMBuildMul(c->b, S, S, ""), ""),
      cg_i64c(c, E), "V");
  LLVMValueRef pos = LLVMBuildICmp(c->b, LLVMIntSGT, V, zero, "");
  LLVMValueRef Vp = LLVMBuildSelect(c->b, pos, V, cg_i64c(c, 1), "");
  LLVMValueRef ctl[2] = {Vp, LLVMConstInt(c->t_i1, 0, 0)};
  LLVMValueRef bits = LLVMBuildSub(
      c->b, cg_i64c(c, 64), cg_intrinsic(c, "llvm.ctlz", &c->t_i64, 1, ctl, 2),
      "");
  LLVMValueRef k = LLVMBuildSDiv(c->b, LLVMBuildSub(c->b, cg_i64c(c, 62),
                                                    bits, ""),
                                 cg_i64c(c, 2), "k");
  LLVMValueRef W = LLVMBuildShl(c->b, Vp, LLVMBuildAdd(c->b, k, k, ""), "");
  LLVMValueRef R = isqrt_i64(c, W);
  LLVMValueRef m = LLVMBuildSelect(
      c->b, pos, LLVMBuildUDiv(c->b, cg_i64c(c, INT64_C(1) << 61), R, ""),
      zero, "m");
  LLVMValueRef s = LLVMBuildSelect(
      c->b, pos, LLVMBuildSub(c->b, cg_i64c(c, 37), k, ""), cg_i64c(c, 37),
      "s");
  LLVMValueRef half = LLVMBuildShl(c->b, cg_i64c(c, 1),
                                   LLVMBuildSub(c->b, s, cg_i64c(c, 1), ""),
                                   "");
  /* y = clamp(zy + ((z * g + (b << (zs - F)) + 2^(zs-1)) >> zs)) */
  LLVMValueRef yoff[2] = {zero, off[1]};
  nest_begin(c, &sy, yoff);
  {
    LLVMValueRef xi = LLVMBuildSExt(
        c->b, cg_load(c, c->t_i32, cg_gep(c, c->t_i32, row, sy.off[0]), 4),
        c->t_i64, "");
    LLVMValueRef d = LLVMBuildSub(c->b, LLVMBuildMul(c->b, xi, n, ""), S, "");
    LLVMValueRef z = LLVMBuildAShr(
        c->b, LLVMBuildAdd(c->b, LLVMBuildMul(c->b, d, m, ""), half, ""), s,
        "z");
    LLVMValueRef gi = LLVMBuildSExt(
        c->b, cg_load(c, c->t_i32, cg_gep(c, c->t_i32, gb, sy.off[0]), 4),
        c->t_i64, "");
    LLVMValueRef bi = LLVMBuildSExt(
        c->b, cg_load(c, c->t_i32, cg_gep(c, c->t_i32, bb, sy.off[0]), 4),
        c->t_i64, "");
    LLVMValueRef acc = LLVMBuildAdd(
        c->b, LLVMBuildMul(c->b, z, gi, ""),
        LLVMBuildShl(c->b, bi, cg_i64c(c, zs - F), ""), "");
    acc = LLVMBuildAdd(c->b, acc, cg_i64c(c, INT64_C(1) << (zs - 1)), "");
    LLVMValueRef v = LLVMBuildAdd(
        c->b, LLVMBuildAShr(c->b, acc, cg_i64c(c, zs), ""), cg_i64c(c, zy), "");
    v = cg_max_s(c, cg_min_s(c, v, cg_i64c(c, qmax)), cg_i64c(c, qmin));
    cg_store_int(c, y.elem, v, cg_gep(c, ty, yb, sy.off[1]));
  }
  nest_end_vectorized(c, &sy, 16);
  cg_loop_end(c, &lt);
  cg_stage_end(c);
  return c->status;
}
