/*
 * override.c - per-op exceptions of a backend config (key `overrides`):
 * their validation and the per-op query (mixed precision).
 *
 *   "overrides": [
 *     {"match": {"op": ["conv2d"], "name": "*blocks.3*"},
 *      "activation": {"dtype": "i16", "symmetric": true}},
 *     {"match": {"name": "head.*"}, "keep_float": true},
 *     {"match": {"op": ["softmax"], "row_longer_than": 256},
 *      "keep_float": true}
 *   ]
 *
 * A partial scheme is merged onto the backend's as JSON before it is
 * validated like the backend's own (validate_scheme.c), so every message
 * names the override's key path (`overrides[0].activation.range: ...`):
 *
 *   backend activation  {dtype i8, symmetric false, range [-128, 127], ..}
 *   + override          {dtype i16, symmetric true}
 *   = merged            {dtype i16, symmetric true, .., no range}
 *
 * (a new dtype or bits drops the backend's range and narrow_range, which
 * were written for the old width). What the backend cannot run is refused
 * here when the override names op kinds, or by insert-observers when only a
 * name pattern selects the op: a TFLite backend (`rounding: tflite`) runs
 * 16-bit activations only symmetric, with i8 weights (TFLite's 16x8
 * spec), and only on ops with a 16x8 kernel, the quantize_ops of the
 * shipped tflite-int16x8 config, which is the list the TFLite writer and
 * targets.tflite-runtime check (those it runs with shared params, as
 * global_avgpool, only if this backend shares them too). An op with fixed output params (sigmoid,
 * softmax, ...) keeps the backend's activation scheme: its fixed params
 * are written for it.
 *
 * `row_longer_than` selects by shape: the length of the op's first input
 * along its `axis` attribute (-1, the last dimension, when it has none).
 * tflite-int16x8 ships the softmax rule above: TFLite's int16 SOFTMAX
 * loses accuracy with the row length (docs/backends.md).
 *
 * The query walks the overrides in order; each one that matches the op
 * replaces the activation and/or weight scheme or sets keep_float, so a
 * later entry wins key by key.
 */
#include <fnmatch.h>
#include <string.h>

#include "backends/validate.h"
#include "ir/shape.h"

/* ---- validation ------------------------------------------------------------
 */

/* The backend's scheme key `key` (its JSON) merged with the override's
 * partial object `part`, validated into *out. */
static bool merged_scheme(vstate *vs, const kpath *p, json_t *root,
                          const char *key, json_t *part,
                          quill_quant_scheme *out) {
  if (!WANT_OBJECT(vs, p, part))
    return false;
  json_t *base = json_object_get(root, key);
  json_t *m = json_is_object(base) ? json_deep_copy(base) : json_object();
  if (!m) {
    vs->nomem = true;
    return false;
  }
  if (json_object_get(part, "dtype") || json_object_get(part, "bits")) {
    json_object_del(m, "range");
    json_object_del(m, "narrow_range");
    if (!json_object_get(part, "bits"))
      json_object_del(m, "bits");
  }
  json_object_update(m, part);
  bool ok = quill_bkv_parse_scheme(vs, p, m, strcmp(key, "weight") == 0, out);
  json_decref(m);
  return ok;
}

/* The ops a TFLite backend runs with i16 activations into b->i16_ok: its
 * own quantize_ops if its activations are i16, else tflite-int16x8's. */
static void tflite_i16_ops(vstate *vs, quill_backend *b) {
  if (b->activation.storage == QUILL_TYPE_I16) {
    memcpy(b->i16_ok, b->quantize, sizeof b->i16_ok);
    return;
  }
  for (unsigned i = 0; i < quill_backend_num_shipped(); i++) {
    if (strcmp(quill_backend_shipped_name(i), "tflite-int16x8") != 0)
      continue;
    const char *t = quill_backend_shipped_text(i);
    quill_backend *x = quill_backend_load_json(vs->ctx, t, strlen(t),
                                               "tflite-int16x8.json");
    if (!x) {
      vs->nomem = true;
      return;
    }
    /* an op tflite-int16x8 runs with shared params (global_avgpool: TFLite's
     * int16 MEAN rounds otherwise) needs them here too */
    for (unsigned c = 0; c < QUILL_OP_COUNT; c++)
      b->i16_ok[c] = x->quantize[c] && (!x->shared[c] || b->shared[c]);
    quill_backend_free_impl(vs->ctx, x);
  }
}

/* The checks of one override against what the backend can run. */
static void check_runnable(vstate *vs, const kpath *p, quill_backend *b,
                           const quill_backend_override *o) {
  kpath ap = {p, "activation", 0}, mp = {p, "match", 0};
  kpath op = {&mp, "op", 0};
  bool tfl = b->rounding == QUILL_ROUND_TFLITE;
  if (o->has_act && tfl && o->act.storage == QUILL_TYPE_I16) {
    if (!o->act.symmetric || o->act.qmin != -32768 || o->act.qmax != 32767)
      quill_bkv_error(vs, &ap, "TFLite's 16x8 kernels take symmetric int16 "
                               "activations over [-32768, 32767] (zero point "
                               "0): add \"symmetric\": true");
    const quill_quant_scheme *w = o->has_weight ? &o->weight : &b->weight;
    if (w->storage != QUILL_TYPE_I8 || w->bits != 8)
      quill_bkv_error(vs, &ap, "TFLite's 16x8 kernels take int16 "
                               "activations with int8 weights");
  } else if (o->has_act && tfl && o->act.storage != QUILL_TYPE_I8) {
    quill_bkv_error(vs, &ap, "a TFLite backend runs i8 or i16 activations, "
                             "not %s",
                    quill_type_scalar_name(o->act.storage));
  }
  for (unsigned c = 0; c < QUILL_OP_COUNT; c++) {
    if (!o->op[c])
      continue;
    const char *mn = quill_opcode_name((quill_opcode)c);
    if (!b->quantize[c])
      quill_bkv_error(vs, &op, "'%s' is not in quantize_ops (an override "
                               "changes how a quantized op is quantized)",
                      mn);
    else if (o->has_act && b->fixed[c].present &&
             !quill_quant_scheme_equal(&o->act, &b->activation))
      quill_bkv_error(vs, &ap, "'%s' has fixed_params, written for the "
                               "backend's activation scheme: it cannot take "
                               "another",
                      mn);
    else if (o->has_act && o->act.storage == QUILL_TYPE_I16 &&
             !b->i16_ok[c])
      quill_bkv_error(vs, &ap, "'%s' has no 16-bit kernel in TFLite as this "
                               "backend quantizes it (16x8 ops: the "
                               "quantize_ops of tflite-int16x8, with its "
                               "shared_params_ops): keep it int8, or keep it "
                               "float",
                      mn);
  }
}

static void parse_override(vstate *vs, const kpath *p, json_t *root,
                           json_t *j, quill_backend *b,
                           quill_backend_override *o) {
  if (!WANT_OBJECT(vs, p, j))
    return;
  unsigned before = vs->errors;
  quill_bkv_check_keys(vs, p, j, QUILL_BKS_OVERRIDE);
  json_t *m = quill_bkv_required(vs, p, j, "match"), *v;
  kpath mp = {p, "match", 0};
  if (m && WANT_OBJECT(vs, &mp, m)) {
    quill_bkv_check_keys(vs, &mp, m, QUILL_BKS_MATCH);
    kpath op = {&mp, "op", 0}, np = {&mp, "name", 0},
          rp = {&mp, "row_longer_than", 0};
    if ((v = json_object_get(m, "op")) && WANT_ARRAY(vs, &op, v)) {
      size_t i;
      json_t *e;
      json_array_foreach(v, i, e) {
        kpath ep = {&op, NULL, i};
        quill_opcode opc;
        if (quill_bkv_op_name(vs, &ep, e, &opc))
          o->op[opc] = true;
      }
      if (!json_array_size(v))
        quill_bkv_error(vs, &op, "an empty list matches nothing");
    }
    o->any_op = !json_object_get(m, "op");
    if ((v = json_object_get(m, "name")) && WANT_STRING(vs, &np, v)) {
      if (!*json_string_value(v))
        quill_bkv_error(vs, &np, "an empty pattern matches nothing");
      else if (!(o->name = quill_strdup(vs->ctx, json_string_value(v))))
        vs->nomem = true;
    }
    if ((v = json_object_get(m, "row_longer_than")) && WANT_INT(vs, &rp, v)) {
      if (json_integer_value(v) < 1)
        quill_bkv_error(vs, &rp, "must be at least 1 (every row is longer "
                                 "than 0)");
      else
        o->row_longer_than = json_integer_value(v);
    }
    if (!json_object_size(m))
      quill_bkv_error(vs, &mp, "needs 'op' or 'name' (an override of every "
                               "op is the backend's own scheme)");
  }
  kpath ap = {p, "activation", 0}, wp = {p, "weight", 0},
        kp = {p, "keep_float", 0};
  if ((v = json_object_get(j, "activation")))
    o->has_act = merged_scheme(vs, &ap, root, "activation", v, &o->act);
  if ((v = json_object_get(j, "weight")))
    o->has_weight = merged_scheme(vs, &wp, root, "weight", v, &o->weight);
  if ((v = json_object_get(j, "keep_float")) && WANT_BOOL(vs, &kp, v))
    o->keep_float = json_is_true(v);
  if (o->keep_float && (json_object_get(j, "activation") ||
                        json_object_get(j, "weight")))
    quill_bkv_error(vs, &kp, "a kept-float op has no activation or weight "
                             "scheme");
  else if (!json_object_get(j, "activation") &&
           !json_object_get(j, "weight") && !json_object_get(j, "keep_float"))
    quill_bkv_error(vs, p, "says nothing: give 'activation', 'weight' or "
                           "'keep_float'");
  if (vs->errors == before)
    check_runnable(vs, p, b, o);
}

void quill_bkv_parse_overrides(vstate *vs, json_t *root, quill_backend *b) {
  if (b->rounding == QUILL_ROUND_TFLITE)
    tflite_i16_ops(vs, b);
  else
    for (unsigned c = 0; c < QUILL_OP_COUNT; c++)
      b->i16_ok[c] = true;
  json_t *j = json_object_get(root, "overrides");
  if (!j)
    return;
  kpath p = {NULL, "overrides", 0};
  if (!WANT_ARRAY(vs, &p, j) || !json_array_size(j))
    return;
  size_t n = json_array_size(j);
  b->overrides = quill_calloc(vs->ctx, n, sizeof *b->overrides);
  if (!b->overrides) {
    vs->nomem = true;
    return;
  }
  b->num_overrides = (unsigned)n;
  size_t i;
  json_t *e;
  json_array_foreach(j, i, e) {
    kpath ep = {&p, NULL, i};
    parse_override(vs, &ep, root, e, b, &b->overrides[i]);
  }
}

void quill_bkv_free_overrides(quill_context *ctx, quill_backend *b) {
  for (unsigned i = 0; i < b->num_overrides; i++)
    quill_string_free(ctx, b->overrides[i].name);
  quill_free(ctx, b->overrides, b->num_overrides * sizeof *b->overrides);
}

/* ---- queries ---------------------------------------------------------------
 */

bool quill_quant_scheme_equal(const quill_quant_scheme *a,
                              const quill_quant_scheme *c) {
  return a->storage == c->storage && a->bits == c->bits &&
         a->symmetric == c->symmetric && a->per_channel == c->per_channel &&
         a->qmin == c->qmin && a->qmax == c->qmax &&
         a->power_of_two == c->power_of_two &&
         a->observer.kind == c->observer.kind &&
         a->observer.momentum == c->observer.momentum &&
         a->observer.percentile == c->observer.percentile &&
         a->observer.bins == c->observer.bins;
}

static bool name_matches(const char *glob, const quill_op *op) {
  const char *ln = quill_op_loc(op).name;
  const char *vn = quill_op_num_results(op)
                       ? quill_value_name(quill_op_result(op, 0))
                       : NULL;
  return (ln && fnmatch(glob, ln, 0) == 0) || (vn && fnmatch(glob, vn, 0) == 0);
}

int64_t quill_op_row_length(const quill_op *op) {
  if (!quill_op_num_operands(op))
    return -1;
  quill_type *t = quill_value_type(quill_op_operand(op, 0));
  unsigned ax;
  if (!t || !quill_type_is_tensor(t) ||
      !quill_shape_norm_axis(quill_op_attr_int(op, "axis", -1),
                             quill_type_rank(t), &ax))
    return -1;
  return quill_type_dim(t, ax);
}

quill_op_quant quill_backend_op_quant(const quill_backend *b,
                                      const quill_op *op) {
  quill_op_quant q = {&b->activation, &b->weight, false, -1};
  quill_opcode opc = quill_op_opcode(op);
  for (unsigned i = 0; i < b->num_overrides; i++) {
    const quill_backend_override *o = &b->overrides[i];
    if ((!o->any_op && ((unsigned)opc >= QUILL_OP_COUNT || !o->op[opc])) ||
        (o->name && !name_matches(o->name, op)) ||
        (o->row_longer_than && quill_op_row_length(op) <= o->row_longer_than))
      continue;
    q.override = (int)i;
    if (o->has_act) {
      q.activation = &o->act;
      q.keep_float = false;
    }
    if (o->has_weight) {
      q.weight = &o->weight;
      q.keep_float = false;
    }
    if (!o->has_act && !o->has_weight)
      q.keep_float = o->keep_float;
  }
  return q;
}

unsigned quill_backend_num_overrides(const quill_backend *b) {
  return b->num_overrides;
}

int64_t quill_backend_override_row_limit(const quill_backend *b, unsigned i) {
  return i < b->num_overrides ? b->overrides[i].row_longer_than : 0;
}

bool quill_backend_runs_i16(const quill_backend *b, quill_opcode opc) {
  return (unsigned)opc < QUILL_OP_COUNT && b->i16_ok[opc];
}
