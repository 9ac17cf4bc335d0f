/*
 * ops_norm.c - TFLite writer for layer_norm. TFLite has no layer
 * normalization builtin, so the op is written as the float decomposition
 * torch.onnx itself exports (and fuse-patterns recognises), over the
 * normalized dims A = [axis, rank):
 *
 *   m = MEAN(x, A, keep_dims)      d = SUB(x, m)       p = MUL(d, d)
 *   v = MEAN(p, A, keep_dims)      e = ADD(v, eps)     s = SQRT(e)
 *   n = DIV(d, s)                  g = MUL(n, scale)   y = ADD(g, bias)
 *
 * Float only (layer_norm is a float op in every shipped backend config:
 * a quantized model dequantizes around it, and those DEQUANTIZE/QUANTIZE
 * ops are written separately). TFLite computes each step in float32 while
 * the reference kernel accumulates in double, so the outputs agree to a
 * few float32 ulps, not bit for bit (float outputs are compared with a
 * relative tolerance). The result must be in native layout (a rank-4
 * value that the layout pass made NHWC would need its scale permuted:
 * refused, naming the op).
 */
#include "ir/shape.h"
#include "targets/tflite/export_impl.h"

/* A new float32 intermediate tensor (logical = physical dims: native). */
static int32_t temp(tflite_exporter *ex, const char *name, unsigned rank,
                    const int64_t *dims) {
  return tx_tensor_new(ex, name, TFL_FLOAT32, rank, dims);
}

static int32_t emit2(tflite_exporter *ex, int32_t builtin, uint8_t opt,
                     int32_t a, int32_t b, int32_t out) {
  int32_t ins[2] = {a, b};
  tx_op *o = out >= 0 && a >= 0 && b >= 0
                 ? tx_emit(ex, builtin, 2, ins, 1, &out)
                 : NULL;
  if (!o)
    return -1;
  o->opt_type = opt;
  if (builtin == TFL_OP_MEAN)
    tx_opt_int(ex, o, TFL_REDUCER_KEEP_DIMS, TXO_BOOL, 1, 0);
  return out;
}

quill_status tx_write_layer_norm(tflite_exporter *ex, const quill_op *op) {
  quill_type *xt = tx_in_type(ex, op, 0);
  unsigned rank = quill_type_rank(xt);
  if (quill_type_is_quant(quill_type_elem(xt)) ||
      quill_type_is_quant(quill_type_elem(tx_out_type(ex, op, 0))) ||
      tx_tensor_type(quill_type_elem(xt)) != TFL_FLOAT32)
    return tx_error(ex, op, "TFLite has no layer normalization builtin and "
                            "its decomposition is written in float32 only; "
                            "keep the op float");
  int lay = tx_layout_of(ex, tx_eout(ex, op, 0));
  if (lay != TX_NATIVE)
    return tx_error(ex, op, "layer_norm of a tensor the exporter keeps NHWC "
                            "is not written");
  unsigned ax;
  if (!quill_shape_norm_axis(quill_op_attr_int(op, "axis", -1), rank, &ax))
    return tx_error(ex, op, "'axis' is out of range");
  float eps = (float)quill_op_attr_number(op, "epsilon", 1e-5);
  int32_t axes[QUILL_MAX_RANK];
  int64_t full[QUILL_MAX_RANK], red[QUILL_MAX_RANK];
  for (unsigned i = 0; i < rank; i++) {
    full[i] = quill_type_dim(xt, i);
    red[i] = i < ax ? full[i] : 1;
    if (i >= ax)
      axes[i - ax] = (int32_t)i;
  }
  const char *nm = quill_op_loc(op).name ? quill_op_loc(op).name : "ln";
  int32_t x = tx_in(ex, op, 0, TX_NATIVE);
  int32_t at = tx_const_i32(ex, "axes", rank - ax, axes);
  int32_t m = emit2(ex, TFL_OP_MEAN, TFL_OPT_ReducerOptions, x, at,
                    temp(ex, tx_printf(ex, "%s_mean", nm), rank, red));
  int32_t d = emit2(ex, TFL_OP_SUB, TFL_OPT_SubOptions, x, m,
                    temp(ex, tx_printf(ex, "%s_centered", nm), rank, full));
  int32_t p = emit2(ex, TFL_OP_MUL, TFL_OPT_MulOptions, d, d,
                    temp(ex, tx_printf(ex, "%s_square", nm), rank, full));
  int32_t v = emit2(ex, TFL_OP_MEAN, TFL_OPT_ReducerOptions, p, at,
                    temp(ex, tx_printf(ex, "%s_var", nm), rank, red));
  int32_t e = emit2(ex, TFL_OP_ADD, TFL_OPT_AddOptions, v,
                    tx_const_f32_scalar(ex, "epsilon", eps),
                    temp(ex, tx_printf(ex, "%s_var_eps", nm), rank, red));
  int32_t s = temp(ex, tx_printf(ex, "%s_std", nm), rank, red);
  tx_op *so = e >= 0 && s >= 0 ? tx_emit(ex, TFL_OP_SQRT, 1, &e, 1, &s) : NULL;
  bool bias = quill_op_num_operands(op) > 2;
  int32_t y = tx_out(ex, op, 0);
  int32_t n = emit2(ex, TFL_OP_DIV, TFL_OPT_DivOptions, d, so ? s : -1,
                    temp(ex, tx_printf(ex, "%s_normalized", nm), rank, full));
  int32_t g = emit2(ex, TFL_OP_MUL, TFL_OPT_MulOptions, n,
                    tx_in(ex, op, 1, TX_NATIVE),
                    bias ? temp(ex, tx_printf(ex, "%s_scaled", nm), rank, full)
                         : y);
  if (bias)
    g = emit2(ex, TFL_OP_ADD, TFL_OPT_AddOptions, g,
              tx_in(ex, op, 2, TX_NATIVE), y);
  if (g < 0)
    return ex->errors ? QUILL_ERR_INVALID : QUILL_ERR_NOMEM;
  return QUILL_OK;
}
