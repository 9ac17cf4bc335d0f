/*
 * lower_dynquant.c - dynamic_quantize (ONNX DynamicQuantizeLinear: f32 x ->
 * u8 y, f32 scale, u8 zero point, parameters computed per run), bit-exact
 * with targets/reference/kernels_quant.c. onnxruntime's dynamically
 * quantized models are made of it (frontends/onnx/ops_quant.c imports their
 * MatMulInteger/ConvInteger in float).
 *
 * Two stages:
 *   range   one task: max(0, max x) and min(0, min x) over the elements
 *           (order-free: max >= 0 >= min, so the reference's if / else-if
 *           is the plain max and min; a NaN anywhere makes both NaN), then
 *           in f32 exactly as the reference:
 *             scale = (max == min ? 1 : max - min) / 255
 *             zp    = rint(max(0, min(255, 0 - min / scale)))  (ordered
 *                     compares: a NaN scale gives zp 255)
 *           stored into the scale and zero point results
 *   map     y = clamp(rint(x / scale) + zp, 0, 255), NaN -> 0, through
 *           cg_map (any strides), scale and zp loaded from the results
 * x is read through a row-major copy when its view is not row-major.
 * Divisions stay divisions and nothing is contracted, so every rounding
 * is the reference's.
 */
#include <math.h>

#include "targets/llvm/cg.h"

CG_SUPPORTS(cg_supports_dynamic_quantize) {
  quill_type *e = quill_type_elem(quill_value_type(quill_op_operand(op, 0)));
  if (quill_type_is_quant(e) || quill_type_kind_of(e) != QUILL_TYPE_F32)
    return "operands other than f32";
  return NULL;
}

/* a < b ? a : b with an ordered compare (a NaN b gives b). */
static LLVMValueRef fsel_min(cg *c, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, LLVMRealOLT, a, b, ""), a,
                         b, "");
}

static LLVMValueRef fsel_max(cg *c, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, LLVMRealOGT, a, b, ""), a,
                         b, "");
}

/* The range stage over n contiguous f32 elements at view x. */
static void range_stage(cg *c, const quill_op *op, const cg_view *x, int64_t n,
                        const cg_view *sv, const cg_view *zv) {
  cg_stage_begin(c, quill_op_name(op), 1);
  cg_stage_work(c, 0.5 * (double)n);
  LLVMTypeRef f = c->t_f32;
  LLVMValueRef vmax = cg_var(c, f, "max"), vmin = cg_var(c, f, "min");
  LLVMValueRef vnan = cg_var(c, c->t_i1, "nan");
  cg_store(c, cg_f32c(c, 0.0), vmax, 4);
  cg_store(c, cg_f32c(c, 0.0), vmin, 4);
  cg_store(c, LLVMConstInt(c->t_i1, 0, 0), vnan, 1);
  LLVMValueRef base = cg_view_base(c, x);
  cg_loop l;
  cg_for(c, &l, 0, n, 1);
  LLVMValueRef v = cg_load(c, f, cg_gep(c, f, base, l.i), 4);
  LLVMValueRef isnan = LLVMBuildFCmp(c->b, LLVMRealUNO, v, v, "");
  cg_store(c, LLVMBuildOr(c->b, cg_load(c, c->t_i1, vnan, 1), isnan, ""), vnan,
           1);
  cg_store(c, fsel_max(c, v, cg_load(c, f, vmax, 4)), vmax, 4);
  cg_store(c, fsel_min(c, v, cg_load(c, f, vmin, 4)), vmin, 4);
  cg_loop_end(c, &l);
  LLVMValueRef nan = cg_load(c, c->t_i1, vnan, 1);
  LLVMValueRef qnan = cg_f32c(c, (double)NAN);
  LLVMValueRef mx = LLVMBuildSelect(c->b, nan, qnan, cg_load(c, f, vmax, 4), "");
  LLVMValueRef mn = LLVMBuildSelect(c->b, nan, qnan, cg_load(c, f, vmin, 4), "");
  LLVMValueRef range = LLVMBuildSelect(
      c->b, LLVMBuildFCmp(c->b, LLVMRealOEQ, mx, mn, ""), cg_f32c(c, 1.0),
      LLVMBuildFSub(c->b, mx, mn, ""), "");
  LLVMValueRef scale = LLVMBuildFDiv(c->b, range, cg_f32c(c, 255.0), "scale");
  LLVMValueRef izp = LLVMBuildFSub(c->b, cg_f32c(c, 0.0),
                                   LLVMBuildFDiv(c->b, mn, scale, ""), "");
  LLVMValueRef zpc = fsel_min(c, izp, cg_f32c(c, 255.0));
  zpc = fsel_max(c, zpc, cg_f32c(c, 0.0));
  LLVMValueRef zp = cg_intrinsic(c, "llvm.rint", &f, 1, &zpc, 1);
  cg_store(c, scale, cg_view_base(c, sv), 4);
  cg_store(c, LLVMBuildFPToUI(c->b, zp, c->t_i8, ""), cg_view_base(c, zv), 1);
  cg_stage_end(c);
}

typedef struct dq_map {
  const cg_view *sv, *zv;
} dq_map;

static LLVMValueRef quantize_fn(cg *c, void *ud, LLVMValueRef *in) {
  const dq_map *m = ud;
  LLVMTypeRef f = c->t_f32;
  LLVMValueRef scale = cg_load(c, f, cg_view_base(c, m->sv), 4);
  LLVMValueRef zp = LLVMBuildUIToFP(
      c->b, cg_load(c, c->t_i8, cg_view_base(c, m->zv), 1), f, "");
  LLVMValueRef q = LLVMBuildFDiv(c->b, in[0], scale, "");
  q = cg_intrinsic(c, "llvm.rint", &f, 1, &q, 1);
  q = LLVMBuildFAdd(c->b, q, zp, "");
  /* NaN -> 0, then clamp to [0, 255] */
  LLVMValueRef ord = LLVMBuildFCmp(c->b, LLVMRealORD, q, q, "");
  q = LLVMBuildSelect(c->b, ord, q, cg_f32c(c, 0.0), "");
  q = fsel_max(c, q, cg_f32c(c, 0.0));
  q = fsel_min(c, q, cg_f32c(c, 255.0));
  return LLVMBuildFPToSI(c->b, q, c->t_i32, "");
}

CG_LOWER(cg_lower_dynamic_quantize) {
  cg_view x = cg_value_view(c, quill_op_operand(op, 0));
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  cg_view sv = cg_value_view(c, quill_op_result(op, 1));
  cg_view zv = cg_value_view(c, quill_op_result(op, 2));
  int64_t n = 1;
  for (unsigned d = 0; d < x.rank; d++)
    n *= x.dims[d];
  cg_view flat = x;
  if (!cg_view_is_row_major(&x)) {
    flat.slot = cg_workspace(c, (size_t)n * sizeof(float));
    flat.global = NULL;
    flat.offset = 0;
    cg_row_major(flat.rank, flat.dims, flat.strides);
    cg_copy(c, quill_op_name(op), &flat, &x);
  }
  range_stage(c, op, &flat, n, &sv, &zv);
  dq_map m = {&sv, &zv};
  cg_map(c, quill_op_name(op), &y, 1, &x, quantize_fn, &m);
  return c->status;
}
