/*
 * lower_quant.c - quantize, dequantize and requantize, bit-exact with
 * targets/reference/kernels_quant.c (ONNX QuantizeLinear /
 * DequantizeLinear, computed in the expressed type's precision):
 *
 *   quantize    q = clamp(round_r(x / s) + zp, qmin, qmax)  (NaN -> zp)
 *               f32 expressed: (float)x / (float)s; f64: in double; r is
 *               the op's rounding (default half_even, ONNX's)
 *   dequantize  x = (float)(q - zp) * (float)s              (f64: double)
 *   requantize  without `multiplier`: quantize_2(dequantize_1(q)) with the
 *               op's rounding
 *               with `multiplier`/`shift` (fuse-qdq's fixed-point form):
 *               clamp(zp_y + R(q - zp_x)) through requant.c
 *
 * Each is one cg_map (eltwise.c) over the operand and result views, but
 * for the model input's quantize on the x86 paths (f32 NCHW to 8 bits
 * NHWC, per tensor, half_even: quant_nchw.c, 16 or 8 pixels a step).
 * Per-axis parameters become extra input views: a private global array of
 * scales (f32 or f64) and one of zero points (i32), with stride 1 along the
 * quantized axis and 0 elsewhere, so the same loop serves both forms.
 * Divisions stay divisions (no reciprocal multiply) and no fmul/fadd pair
 * is ever fused, so every rounding matches the reference's C code.
 */
#include <string.h>

#include "targets/llvm/cg.h"

CG_SUPPORTS(cg_supports_quant) {
  for (unsigned i = 0; i < quill_op_num_operands(op) + 1; i++) {
    const quill_value *v = i < quill_op_num_operands(op)
                               ? quill_op_operand(op, i)
                               : quill_op_result(op, 0);
    quill_type *e = quill_type_elem(quill_value_type(v));
    quill_type *s = quill_type_is_quant(e) ? quill_type_quant_storage(e) : e;
    if (quill_type_is_quant(e) &&
        quill_type_kind_of(quill_type_quant_expressed(e)) != QUILL_TYPE_F32 &&
        quill_type_kind_of(quill_type_quant_expressed(e)) != QUILL_TYPE_F64)
      return "expressed types other than f32 and f64";
    if (!quill_type_is_quant(e) && quill_type_kind_of(s) != QUILL_TYPE_F32 &&
        quill_type_kind_of(s) != QUILL_TYPE_F64)
      return "float tensors other than f32 and f64";
  }
  return NULL;
}

/* Quantization parameters of one tensor, as the map sees them. */
typedef struct qp {
  bool axis;          /* per axis: scale and zp come in as views */
  quill_rounding r;   /* quantize: the op's rounding */
  bool f64;           /* expressed f64 */
  double scale;       /* per tensor */
  int64_t zp, qmin, qmax;
  int sv, zv;         /* input view indices of the per-axis arrays */
} qp;

/* Set up qp for quant element type e on view v; per-axis arrays are
 * appended to ins (as broadcast views over out's dims). */
static quill_status qp_init(cg *c, qp *p, const quill_type *e,
                            const cg_view *v, const cg_view *out, cg_view *ins,
                            unsigned *nin) {
  memset(p, 0, sizeof *p);
  p->f64 = quill_type_kind_of(quill_type_quant_expressed(e)) == QUILL_TYPE_F64;
  p->qmin = quill_type_quant_qmin(e);
  p->qmax = quill_type_quant_qmax(e);
  int32_t axis = quill_type_quant_axis_of(e);
  size_t n = quill_type_quant_num_params(e);
  const double *s = quill_type_quant_scales(e);
  const int64_t *z = quill_type_quant_zero_points(e);
  if (axis < 0) {
    p->scale = s[0];
    p->zp = z[0];
    return QUILL_OK;
  }
  if ((unsigned)axis >= v->rank || v->dims[axis] != (int64_t)n)
    return cg_op_error(c, "per-axis parameters do not fit the shape");
  p->axis = true;
  float *sf = quill_alloc(c->ctx, n * sizeof *sf);
  int32_t *zi = quill_alloc(c->ctx, n * sizeof *zi);
  if (!sf || !zi) {
    quill_free(c->ctx, sf, n * sizeof *sf);
    quill_free(c->ctx, zi, n * sizeof *zi);
    return QUILL_ERR_NOMEM;
  }
  for (size_t i = 0; i < n; i++) {
    sf[i] = (float)s[i];
    zi[i] = (int32_t)z[i];
  }
  cg_view sv, zv;
  memset(&sv, 0, sizeof sv);
  sv.slot = -1;
  sv.rank = out->rank;
  memcpy(sv.dims, out->dims, sizeof sv.dims);
  sv.strides[axis] = 1;
  zv = sv;
  quill_context *ctx = c->ctx;
  if (p->f64) {
    sv.global = cg_const_global(c, "scale", s, n * sizeof(double));
    sv.elem = quill_type_scalar(ctx, QUILL_TYPE_F64);
  } else {
    sv.global = cg_const_global(c, "scale", sf, n * sizeof(float));
    sv.elem = quill_type_scalar(ctx, QUILL_TYPE_F32);
  }
  zv.global = cg_const_global(c, "zp", zi, n * sizeof(int32_t));
  zv.elem = quill_type_scalar(ctx, QUILL_TYPE_I32);
  quill_free(ctx, sf, n * sizeof *sf);
  quill_free(ctx, zi, n * sizeof *zi);
  p->sv = (int)*nin;
  ins[(*nin)++] = sv;
  p->zv = (int)*nin;
  ins[(*nin)++] = zv;
  return QUILL_OK;
}

static LLVMValueRef qp_scale(cg *c, const qp *p, LLVMValueRef *in) {
  if (p->axis)
    return in[p->sv];
  return p->f64 ? cg_f64c(c, p->scale) : cg_f32c(c, (float)p->scale);
}

static LLVMValueRef qp_zp(cg *c, const qp *p, LLVMValueRef *in) {
  return p->axis ? LLVMBuildSExt(c->b, in[p->zv], c->t_i64, "")
                 : cg_i64c(c, p->zp);
}

/* q = clamp(round_r(x / s) + zp, qmin, qmax) (quill_quantize_value); x
 * already in the expressed precision. Returns i64. */
static LLVMValueRef quantize_val(cg *c, const qp *p, LLVMValueRef x,
                                 LLVMValueRef *in) {
  LLVMValueRef q = LLVMBuildFDiv(c->b, x, qp_scale(c, p, in), "");
  q = cg_round(c, q, p->r);
  LLVMTypeRef t = LLVMTypeOf(q);
  q = LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, LLVMRealUNO, q, q, ""),
                      LLVMConstNull(t), q, "");
  int64_t lim = INT64_C(1) << 24;
  if (!p->axis && t == c->t_f32 && p->qmin - p->zp > -lim &&
      p->qmax - p->zp < lim) {
    /* per tensor, bounds exact in f32: clamp and convert in 32 bits */
    LLVMValueRef lo = cg_f32c(c, (double)(p->qmin - p->zp));
    LLVMValueRef hi = cg_f32c(c, (double)(p->qmax - p->zp));
    q = LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, LLVMRealOLT, q, lo, ""), lo,
                        q, "");
    q = LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, LLVMRealOGT, q, hi, ""), hi,
                        q, "");
    return LLVMBuildAdd(c->b, LLVMBuildFPToSI(c->b, q, c->t_i32, ""),
                        cg_i32c(c, p->zp), "");
  }
  /* compare in double: exact for every storage range */
  LLVMValueRef d = t == c->t_f64 ? q : LLVMBuildFPExt(c->b, q, c->t_f64, "");
  LLVMValueRef zp = qp_zp(c, p, in);
  LLVMValueRef lo = LLVMBuildSIToFP(
      c->b, LLVMBuildSub(c->b, cg_i64c(c, p->qmin), zp, ""), c->t_f64, "");
  LLVMValueRef hi = LLVMBuildSIToFP(
      c->b, LLVMBuildSub(c->b, cg_i64c(c, p->qmax), zp, ""), c->t_f64, "");
  d = LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, LLVMRealOLT, d, lo, ""), lo, d,
                      "");
  d = LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, LLVMRealOGT, d, hi, ""), hi, d,
                      "");
  return LLVMBuildAdd(c->b, LLVMBuildFPToSI(c->b, d, c->t_i64, ""), zp, "");
}

/* (q - zp) * s in the expressed precision. */
static LLVMValueRef dequantize_val(cg *c, const qp *p, const quill_type *e,
                                   LLVMValueRef raw, LLVMValueRef *in) {
  LLVMValueRef q = cg_widen_int(c, e, raw, c->t_i64);
  LLVMValueRef d = LLVMBuildSub(c->b, q, qp_zp(c, p, in), "");
  LLVMValueRef f = LLVMBuildSIToFP(c->b, d, p->f64 ? c->t_f64 : c->t_f32, "");
  return LLVMBuildFMul(c->b, f, qp_scale(c, p, in), "");
}

typedef struct qctx {
  qp in, out;
  const quill_type *xe, *ye;
  cg_requant rq;
  bool fixed;
} qctx;

static LLVMValueRef quantize_fn(cg *c, void *ud, LLVMValueRef *in) {
  qctx *q = ud;
  LLVMValueRef x = in[0];
  LLVMTypeRef want = q->out.f64 ? c->t_f64 : c->t_f32;
  if (LLVMTypeOf(x) != want)
    x = LLVMBuildFPCast(c->b, x, want, "");
  return quantize_val(c, &q->out, x, in);
}

static LLVMValueRef dequantize_fn(cg *c, void *ud, LLVMValueRef *in) {
  qctx *q = ud;
  return dequantize_val(c, &q->in, q->xe, in[0], in);
}

static LLVMValueRef requantize_fn(cg *c, void *ud, LLVMValueRef *in) {
  qctx *q = ud;
  if (q->fixed) {
    LLVMValueRef x = cg_widen_int(c, q->xe, in[0], c->t_i32);
    x = LLVMBuildSub(c->b, x, cg_i32c(c, q->in.zp), "");
    return cg_requant_apply(c, &q->rq, x, NULL, false);
  }
  LLVMValueRef r = dequantize_val(c, &q->in, q->xe, in[0], in);
  LLVMTypeRef want = q->out.f64 ? c->t_f64 : c->t_f32;
  if (LLVMTypeOf(r) != want)
    r = LLVMBuildFPCast(c->b, r, want, "");
  return quantize_val(c, &q->out, r, in);
}

quill_status cg_op_rounding(cg *c, const quill_op *op, quill_rounding *r) {
  const quill_attr *a = quill_op_attr(op, "rounding");
  *r = QUILL_ROUND_HALF_EVEN;
  if (a && (quill_attr_kind_of(a) != QUILL_ATTR_STRING ||
            !quill_rounding_parse(quill_attr_string_value(a, NULL), r)))
    return cg_op_error(c, "unknown 'rounding'");
  return QUILL_OK;
}

/* Per-tensor parameters of e (no views). */
static void qp_tensor(qp *p, const quill_type *e) {
  memset(p, 0, sizeof *p);
  p->f64 = quill_type_kind_of(quill_type_quant_expressed(e)) == QUILL_TYPE_F64;
  p->qmin = quill_type_quant_qmin(e);
  p->qmax = quill_type_quant_qmax(e);
  p->scale = quill_type_quant_scales(e)[0];
  p->zp = quill_type_quant_zero_points(e)[0];
}

LLVMValueRef cg_dequantize_elem(cg *c, const quill_type *e, LLVMValueRef raw) {
  qp p;
  qp_tensor(&p, e);
  return dequantize_val(c, &p, e, raw, NULL);
}

LLVMValueRef cg_quantize_elem(cg *c, const quill_type *e, quill_rounding r,
                              LLVMValueRef x) {
  qp p;
  qp_tensor(&p, e);
  p.r = r;
  return quantize_val(c, &p, x, NULL);
}

CG_LOWER(cg_lower_quantize) {
  if (cg_quantize_is_fused(op))
    return QUILL_OK; /* stored by its producer (fuse_qdq.c) */
  if (cg_qlut_source(op))
    return cg_qlut_emit(c, op); /* a table lookup (fuse_lut.c) */
  cg_view x = cg_value_view(c, quill_op_operand(op, 0));
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  cg_view ins[5] = {x};
  unsigned nin = 1;
  qctx q;
  memset(&q, 0, sizeof q);
  if (!quill_type_is_quant(y.elem))
    return cg_op_error(c, "expects a quantized result");
  quill_status st = qp_init(c, &q.out, y.elem, &y, &y, ins, &nin);
  if (st || (st = cg_op_rounding(c, op, &q.out.r)))
    return st;
  if (cg_quant_nchw(c, &y, &x, q.out.r))
    return c->status; /* the zmm paths' NCHW -> NHWC form */
  cg_map(c, "quantize", &y, nin, ins, quantize_fn, &q);
  return QUILL_OK;
}

CG_LOWER(cg_lower_dequantize) {
  if (cg_val(c, quill_op_result(op, 0))->alias_of >= 0)
    return QUILL_OK; /* read through by its user (fuse_qdq.c) */
  cg_view x = cg_value_view(c, quill_op_operand(op, 0));
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  cg_view ins[5] = {x};
  unsigned nin = 1;
  qctx q;
  memset(&q, 0, sizeof q);
  if (!quill_type_is_quant(x.elem))
    return cg_op_error(c, "expects a quantized operand");
  q.xe = x.elem;
  quill_status st = qp_init(c, &q.in, x.elem, &x, &y, ins, &nin);
  if (st)
    return st;
  cg_map(c, "dequantize", &y, nin, ins, dequantize_fn, &q);
  return QUILL_OK;
}

CG_LOWER(cg_lower_requantize) {
  cg_view x = cg_value_view(c, quill_op_operand(op, 0));
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  cg_view ins[5] = {x};
  unsigned nin = 1;
  qctx q;
  memset(&q, 0, sizeof q);
  if (!quill_type_is_quant(x.elem) || !quill_type_is_quant(y.elem))
    return cg_op_error(c, "expects quantized operand and result");
  q.xe = x.elem;
  q.ye = y.elem;
  quill_status st;
  /* 8-bit to 8-bit per tensor: a function of the byte, looked up in the
   * table the reference computes, where the lookup is 64 bytes a step */
  if (quill_type_quant_axis_of(x.elem) < 0 &&
      quill_type_quant_axis_of(y.elem) < 0 &&
      quill_type_bit_width(quill_type_quant_storage(x.elem)) == 8 &&
      cg_lut_zmm_applies(c, &y, &x)) {
    unsigned char tab[256];
    if ((st = cg_lut_table(c, op, tab)))
      return st;
    cg_lut_map(c, "requantize", &y, &x,
               cg_const_global(c, "rqlut", tab, sizeof tab));
    return c->status;
  }
  if (quill_op_attr(op, "multiplier")) {
    /* fixed point: v = R(x - zp_x), per tensor */
    if (quill_type_quant_axis_of(x.elem) >= 0 ||
        quill_type_quant_axis_of(y.elem) >= 0)
      return cg_op_error(c, "fixed-point requantize needs per-tensor types");
    q.fixed = true;
    q.in.zp = quill_type_quant_zero_points(x.elem)[0];
    double one = 1.0;
    if ((st = cg_requant_init(c, op, quill_type_quant_scales(x.elem)[0], &one,
                              1, 1, &q.rq)))
      return st;
    cg_map(c, "requantize", &y, nin, ins, requantize_fn, &q);
    cg_requant_free(c, &q.rq);
    return QUILL_OK;
  }
  if ((st = qp_init(c, &q.in, x.elem, &x, &y, ins, &nin)) ||
      (st = qp_init(c, &q.out, y.elem, &y, &y, ins, &nin)) ||
      (st = cg_op_rounding(c, op, &q.out.r)))
    return st;
  cg_map(c, "requantize", &y, nin, ins, requantize_fn, &q);
  return QUILL_OK;
}
