/*
 * ops_quant.c - writers of the quantization ops: QUANTIZE, DEQUANTIZE,
 * requantization as QUANTIZE int8 -> int8 (int16 -> int8 for mixed
 * models), and the integer elementwise ops (qadd -> ADD, qmul -> MUL,
 * lut -> CAST + ADD + GATHER of the table: exact, where TFLite's own int8
 * LOGISTIC/TANH tables are computed its way; a 16-bit table equal to
 * TFLite's int16 LOGISTIC or TANH (ir/tfl_int16.h) -> that builtin).
 *
 * Each writer checks that the op's types are ones TFLite's kernels take
 * (int8 activations, or int16 where the backend allows it) and that the
 * rounding is TFLite's: other types are refused with a located error
 * naming the op, another rounding mode is warned about (ties may differ).
 */
#include <math.h>
#include <string.h>

#include "ir/quant.h"
#include "ir/tfl_int16.h"
#include "targets/tflite/export_impl.h"

quill_status tx_write_quantize(tflite_exporter *ex, const quill_op *op) {
  quill_type *ye = quill_type_elem(tx_out_type(ex, op, 0));
  if (tx_check_act_i8(ex, op, ye, "output"))
    return QUILL_ERR_INVALID;
  const quill_attr *r = quill_op_attr(op, "rounding");
  const char *rs = r ? quill_attr_string_value(r, NULL) : "half_even";
  if (strcmp(rs, "tflite") != 0 && strcmp(rs, "half_away") != 0)
    tx_warning(ex, op, "'quantize' rounds \"%s\", TFLite's QUANTIZE rounds "
                       "half away from zero: ties may differ",
               rs);
  int lay = tx_layout_of(ex, tx_eout(ex, op, 0));
  return tx_emit1(ex, TFL_OP_QUANTIZE, TFL_OPT_QuantizeOptions,
               tx_in(ex, op, 0, lay), tx_out(ex, op, 0))
             ? QUILL_OK
             : QUILL_ERR_NOMEM;
}

quill_status tx_write_dequantize(tflite_exporter *ex, const quill_op *op) {
  const quill_value *xv = tx_ein(ex, op, 0);
  quill_type *xe = quill_type_elem(quill_value_type(xv));
  const quill_attr *a = quill_value_constant(xv);
  int k = quill_type_kind_of(quill_type_quant_storage(xe));
  /* A constant is dequantized at compile time, as the interpreter
   * dequantizes (tx_dequantized), where a user asks for its tensor
   * (tx_value): no DEQUANTIZE, which takes no int32 and, per axis, needs
   * version 5 (not in TFLite 2.14's reference resolver). */
  if (a)
    return QUILL_OK;
  if (k != QUILL_TYPE_I8 && k != QUILL_TYPE_U8 && k != QUILL_TYPE_I16)
    return tx_error(ex, op, "TFLite's DEQUANTIZE reads int8, uint8 and int16, "
                            "not %s",
                    quill_type_scalar_name(
                        quill_type_kind_of(quill_type_quant_storage(xe))));
  int lay = tx_layout_of(ex, tx_eout(ex, op, 0));
  return tx_emit1(ex, TFL_OP_DEQUANTIZE, TFL_OPT_DequantizeOptions,
               tx_in(ex, op, 0, lay), tx_out(ex, op, 0))
             ? QUILL_OK
             : QUILL_ERR_NOMEM;
}

quill_status tx_write_requantize(tflite_exporter *ex, const quill_op *op) {
  quill_type *xe = quill_type_elem(tx_in_type(ex, op, 0));
  quill_type *ye = quill_type_elem(tx_out_type(ex, op, 0));
  unsigned e0 = ex->errors;
  tx_check_act_i8(ex, op, xe, "input");
  tx_check_act_i8(ex, op, ye, "output");
  if (ex->errors != e0)
    return QUILL_ERR_INVALID;
  const quill_attr *r = quill_op_attr(op, "rounding");
  const char *rs = r ? quill_attr_string_value(r, NULL) : "half_even";
  if (!quill_op_attr(op, "multiplier") || strcmp(rs, "tflite") != 0)
    tx_warning(ex, op, "TFLite's QUANTIZE requantizes in fixed point with "
                       "double rounding; the op (rounding \"%s\"%s) may "
                       "differ by one step",
               rs, quill_op_attr(op, "multiplier") ? "" : ", f32 scale");
  int lay = tx_layout_of(ex, tx_eout(ex, op, 0));
  return tx_emit1(ex, TFL_OP_QUANTIZE, TFL_OPT_QuantizeOptions,
               tx_in(ex, op, 0, lay), tx_out(ex, op, 0))
             ? QUILL_OK
             : QUILL_ERR_NOMEM;
}

/* ---- integer elementwise ops (qadd, qmul, lut) -------------------------------------- */

/* Multiplier/shift list attribute into m/s (n entries); false if absent. */
static bool requant_attrs(const quill_op *op, int64_t *m, int64_t *s,
                          unsigned n) {
  return quill_op_attr_ints(op, "multiplier", m, n) == (int64_t)n &&
         quill_op_attr_ints(op, "shift", s, n) == (int64_t)n;
}

quill_status tx_write_qbinary(tflite_exporter *ex, const quill_op *op) {
  bool add = quill_op_opcode(op) == QUILL_OP_QADD;
  const quill_attr *r = quill_op_attr(op, "rounding");
  const char *rs = r ? quill_attr_string_value(r, NULL) : "half_even";
  if (strcmp(rs, "tflite") != 0)
    return tx_spec_error(ex, op, "requantization rounds as TFLite (gemmlowp "
                                 "double rounding, 'tflite')",
                         "the op rounds \"%s\"", rs);
  int64_t m[3], s[3];
  if (!requant_attrs(op, m, s, add ? 3 : 1))
    return tx_spec_error(ex, op, "requantization is fixed point",
                         "the op requantizes in f32 (no 'multiplier')");
  quill_type *ae = quill_type_elem(tx_in_type(ex, op, 0));
  quill_type *be = quill_type_elem(tx_in_type(ex, op, 1));
  quill_type *ye = quill_type_elem(tx_out_type(ex, op, 0));
  if (quill_type_is_quant(ae) && quill_type_is_quant(be) &&
      quill_type_is_quant(ye) && quill_type_quant_num_params(ae) == 1 &&
      quill_type_quant_num_params(be) == 1) {
    double sa = quill_type_quant_scales(ae)[0];
    double sb = quill_type_quant_scales(be)[0];
    double sy = quill_type_quant_scales(ye)[0];
    bool same = true;
    if (add) {
      /* TFLite's general ADD: left shift 20 for int8, 15 for int16 (its
       * int16 path without power-of-two scales, pot_scale_int16 false) */
      int ls = tx_is_16x8(ae) ? 15 : 20;
      quill_qadd_params p;
      same = quill_op_attr_int(op, "left_shift", 20) == ls &&
             quill_qadd_params_compute(sa, sb, sy, ls, &p);
      for (int i = 0; same && i < 3; i++)
        same = p.multiplier[i] == m[i] && p.shift[i] == s[i];
    } else {
      int32_t pm;
      int ps;
      same = quill_quantize_multiplier(quill_mul_multiplier_f32(sa, sb, sy),
                                       &pm, &ps) &&
             pm == m[0] && ps == s[0];
    }
    if (!same)
      tx_warning(ex, op, "the op's requantization parameters differ from "
                         "those TFLite's %s derives from the f32 scales: "
                         "results may differ by one step",
                 add ? "ADD" : "MUL");
  }
  return tx_write_binary(ex, op);
}

/* The TFLite builtin (LOGISTIC or TANH) whose int16 kernel computes the
 * 16-bit `table` from xe to ye (fuse-qdq's tables, ir/tfl_int16.h), or -1. */
static int lut_int16_builtin(tflite_exporter *ex, const quill_type *xe,
                             const quill_type *ye, const quill_attr *table) {
  if (quill_type_kind_of(quill_type_quant_storage(xe)) != QUILL_TYPE_I16 ||
      quill_type_kind_of(quill_type_quant_storage(ye)) != QUILL_TYPE_I16 ||
      quill_type_quant_scales(ye)[0] != QUILL_TFL16_OUT_SCALE ||
      quill_type_quant_zero_points(ye)[0] != 0 ||
      quill_attr_dense_size(table) != 65536 * sizeof(int16_t))
    return -1;
  size_t bytes = 65536 * sizeof(int16_t);
  int16_t *want = quill_alloc(ex->ctx, bytes);
  if (!want)
    return -1;
  int res = -1;
  static const int kinds[2] = {QUILL_TFL16_LOGISTIC, QUILL_TFL16_TANH};
  static const int builtins[2] = {TFL_OP_LOGISTIC, TFL_OP_TANH};
  for (int k = 0; k < 2 && res < 0; k++)
    if (quill_tfl16_act_table(kinds[k], quill_type_quant_scales(xe)[0],
                              want) &&
        !memcmp(want, quill_attr_dense_data(table), bytes))
      res = builtins[k];
  quill_free(ex->ctx, want, bytes);
  return res;
}

quill_status tx_write_lut(tflite_exporter *ex, const quill_op *op) {
  /* y = table[x - storage_min] is GATHER(table, CAST(x) - storage_min):
   * exact, with builtins every runtime has. A 16-bit table that is
   * TFLite's int16 LOGISTIC or TANH over the input's scale is that
   * builtin (its integer kernel computes the same table). */
  quill_type *xe = quill_type_elem(tx_in_type(ex, op, 0));
  quill_type *ye = quill_type_elem(tx_out_type(ex, op, 0));
  unsigned e0 = ex->errors;
  tx_check_act_i8(ex, op, xe, "input");
  tx_check_act_i8(ex, op, ye, "output");
  const quill_attr *table = quill_op_attr(op, "table");
  if (!table || quill_attr_kind_of(table) != QUILL_ATTR_DENSE)
    return tx_error(ex, op, "the table must be a dense attribute");
  if (ex->errors != e0)
    return QUILL_ERR_INVALID;
  if (quill_type_is_quant(xe) &&
      quill_type_kind_of(quill_type_quant_storage(xe)) == QUILL_TYPE_I16) {
    int b = lut_int16_builtin(ex, xe, ye, table);
    if (b < 0)
      return tx_spec_error(ex, op, "int16 tables are LOGISTIC or TANH",
                           "the 16-bit table is neither TFLite's int16 "
                           "LOGISTIC nor its TANH over the input's scale "
                           "(output 1/32768, zero point 0): keep the op "
                           "float");
    bool tanh = b == TFL_OP_TANH;
    if (quill_tfl16_act_pot(tanh ? QUILL_TFL16_TANH : QUILL_TFL16_LOGISTIC,
                            quill_type_quant_scales(xe)[0]))
      tx_warning(ex, op, "int16 %s of a power-of-two input scale (%g): "
                         "TFLite's reference kernel computes the op's "
                         "table, its optimized kernels (the default "
                         "resolver) a fixed-point one up to %d steps off",
                 tanh ? "TANH" : "LOGISTIC", quill_type_quant_scales(xe)[0],
                 tanh ? 12 : 7);
    int lay = tx_layout_of(ex, tx_eout(ex, op, 0));
    return tx_emit1(ex, b, 0, tx_in(ex, op, 0, lay), tx_out(ex, op, 0))
               ? QUILL_OK
               : QUILL_ERR_NOMEM;
  }
  quill_type *storage = quill_type_is_quant(xe) ? quill_type_quant_storage(xe)
                                                : xe;
  int lay = tx_layout_of(ex, tx_eout(ex, op, 0));
  int32_t x = tx_in(ex, op, 0, lay), y = tx_out(ex, op, 0);
  if (x < 0 || y < 0)
    return QUILL_ERR_NOMEM;
  tx_tensor *xt = &ex->tensors[x];
  int64_t d[QUILL_MAX_RANK];
  for (unsigned i = 0; i < xt->rank; i++)
    d[i] = xt->shape[i];
  unsigned rank = xt->rank;
  const char *base = ex->tensors[y].name;
  int32_t wide = tx_tensor_new(ex, tx_printf(ex, "%s_i32", base), TFL_INT32,
                               rank, d);
  int32_t idx = tx_tensor_new(ex, tx_printf(ex, "%s_index", base), TFL_INT32,
                              rank, d);
  int32_t off = (int32_t)-quill_type_int_min(storage);
  int32_t offset = tx_const(ex, tx_printf(ex, "%s_offset", base), TFL_INT32, 0,
                            NULL, &off, 4, true);
  int64_t tn = quill_type_num_elements(quill_attr_dense_type(table));
  int32_t tt = tx_const(ex, tx_printf(ex, "%s_table", base),
                        tx_tensor_type(ye), 1, &tn,
                        quill_attr_dense_data(table),
                        quill_attr_dense_size(table), false);
  if (wide < 0 || idx < 0 || offset < 0 || tt < 0)
    return QUILL_ERR_NOMEM;
  tx_copy_quant(ex, tt, y);
  tx_op *o = tx_emit1(ex, TFL_OP_CAST, TFL_OPT_CastOptions, x, wide);
  if (!o)
    return QUILL_ERR_NOMEM;
  tx_opt_int(ex, o, TFL_CAST_IN_DATA_TYPE, TXO_I8, ex->tensors[x].type, 0);
  tx_opt_int(ex, o, TFL_CAST_OUT_DATA_TYPE, TXO_I8, TFL_INT32, 0);
  int32_t ins[2] = {wide, offset};
  o = tx_emit(ex, TFL_OP_ADD, 2, ins, 1, &idx);
  if (!o)
    return QUILL_ERR_NOMEM;
  o->opt_type = TFL_OPT_AddOptions;
  int32_t gin[2] = {tt, idx};
  o = tx_emit(ex, TFL_OP_GATHER, 2, gin, 1, &y);
  if (!o)
    return QUILL_ERR_NOMEM;
  o->opt_type = TFL_OPT_GatherOptions;
  return QUILL_OK;
}
