/*
 * validate.c - a backend config's JSON text -> a validated quill_backend.
 *
 * jansson parses the text (duplicate keys rejected; a syntax error is
 * reported at its line and column with the line shown). The tree is then
 * walked once, key by key, against the format of docs/quantization.md
 * section 1; every problem is an error diagnostic located at the config
 * file and prefixed with the key path, and the walk goes on so that one run
 * reports all of them:
 *
 *   npu.json: error: activation.range: [0, 300] does not fit 8-bit unsigned
 *             storage [0, 255]
 *   npu.json: error: fusions[2]: Quill cannot lower the fusion [gemm, tanh] ...
 *
 * Phases: (1) version (a wrong version stops here: the rest may be another
 * format); (2) each key on its own: types, enumerations, ranges, op names,
 * unknown keys (with the closest known key suggested); (3) cross-key
 * contradictions, using the position of each op in its list so the message
 * names the offending entry. Key paths are a chain of stack frames (kpath)
 * printed only when an error is reported.
 *
 * jansson allocates with malloc (its allocator hooks are process-global,
 * and installing them would be global mutable state); its tree lives only
 * during this call. Everything kept goes through the context allocator.
 */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "backends/validate.h"

/* ---- key paths and errors -------------------------------------------------
 */

static void kpath_print(const kpath *p, quill_strbuf *sb) {
  if (!p)
    return;
  kpath_print(p->parent, sb);
  if (!p->key)
    quill_strbuf_printf(sb, "[%zu]", p->index);
  else
    quill_strbuf_printf(sb, "%s%s", p->parent ? "." : "", p->key);
}

void quill_bkv_error(vstate *vs, const kpath *p, const char *fmt, ...) {
  quill_strbuf sb;
  quill_strbuf_init(&sb, vs->ctx);
  if (p) {
    kpath_print(p, &sb);
    quill_strbuf_puts(&sb, ": ");
  }
  va_list ap;
  va_start(ap, fmt);
  quill_strbuf_vprintf(&sb, fmt, ap);
  va_end(ap);
  quill_error(vs->ctx, vs->loc, "%s", quill_strbuf_str(&sb));
  quill_strbuf_free(&sb);
  vs->errors++;
}

const char *quill_bkv_json_kind(const json_t *j) {
  switch (json_typeof(j)) {
  case JSON_OBJECT:
    return "an object";
  case JSON_ARRAY:
    return "an array";
  case JSON_STRING:
    return "a string";
  case JSON_INTEGER:
    return "an integer";
  case JSON_REAL:
    return "a real number";
  case JSON_TRUE:
  case JSON_FALSE:
    return "a boolean";
  default:
    return "null";
  }
}

/* Type checks: report "expected X, got Y" and return false on mismatch. */
bool quill_bkv_want(vstate *vs, const kpath *p, const json_t *j, bool ok,
                    const char *what) {
  if (!ok)
    quill_bkv_error(vs, p, "expected %s, got %s", what, quill_bkv_json_kind(j));
  return ok;
}

/* ---- closest-name suggestions ---------------------------------------------
 */

/* Levenshtein distance, capped at 64-character names (longer ones never get
 * a suggestion). */
static size_t edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 64 || lb > 64)
    return (size_t)-1;
  size_t row[65];
  for (size_t j = 0; j <= lb; j++)
    row[j] = j;
  for (size_t i = 1; i <= la; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t up = row[j];
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      size_t best = diag + cost;
      if (up + 1 < best)
        best = up + 1;
      if (row[j - 1] + 1 < best)
        best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[lb];
}

/* The candidate closest to `s` if it is close enough to be a typo (at most
 * a third of the longer name, and at least 1 allowed), else NULL. */
static const char *closest(const char *s, const char *const *cands, size_t n) {
  const char *best = NULL;
  size_t bestd = (size_t)-1;
  for (size_t i = 0; i < n; i++) {
    size_t d = edit_distance(s, cands[i]);
    if (d < bestd) {
      bestd = d;
      best = cands[i];
    }
  }
  size_t len = strlen(s), lb = best ? strlen(best) : 0;
  size_t allowed = (len > lb ? len : lb) / 3;
  if (allowed < 1)
    allowed = 1;
  return best && bestd <= allowed ? best : NULL;
}

static size_t count_names(const char *const *names) {
  size_t n = 0;
  while (names[n])
    n++;
  return n;
}

/* "a, b, c" */
static void join_names(quill_strbuf *sb, const char *const *names) {
  for (size_t i = 0; names[i]; i++)
    quill_strbuf_printf(sb, "%s%s", i ? ", " : "", names[i]);
}

/* ---- the key table ---------------------------------------------------------
 */

const quill_bkey quill_backend_keys[] = {
#define QUILL_BKEY(sec, key, type, dflt, meaning)                             \
  {QUILL_BKS_##sec, #sec, key, type, dflt, meaning},
#include "backends/config_keys.def"
#undef QUILL_BKEY
};
const unsigned quill_backend_num_keys =
    sizeof quill_backend_keys / sizeof quill_backend_keys[0];

/* The keys of a section, NULL-terminated, into known[cap]. */
static void section_keys(quill_bkey_section section, const char **known,
                         size_t cap) {
  size_t n = 0;
  for (unsigned i = 0; i < quill_backend_num_keys && n + 1 < cap; i++)
    if (quill_backend_keys[i].section == section)
      known[n++] = quill_backend_keys[i].key;
  known[n] = NULL;
}

/* Report every key of object j not in the section. */
void quill_bkv_check_keys(vstate *vs, const kpath *p, json_t *j,
                          quill_bkey_section section) {
  const char *known[64];
  section_keys(section, known, sizeof known / sizeof known[0]);
  const char *key;
  json_t *val;
  json_object_foreach(j, key, val) {
    bool ok = false;
    for (size_t i = 0; known[i] && !ok; i++)
      ok = strcmp(key, known[i]) == 0;
    if (ok)
      continue;
    kpath kp = {p, key, 0};
    const char *near = closest(key, known, count_names(known));
    if (near) {
      quill_bkv_error(vs, &kp, "unknown key (did you mean '%s'?)", near);
    } else {
      quill_strbuf sb;
      quill_strbuf_init(&sb, vs->ctx);
      join_names(&sb, known);
      quill_bkv_error(vs, &kp, "unknown key (valid keys: %s)",
                      quill_strbuf_str(&sb));
      quill_strbuf_free(&sb);
    }
  }
}

/* Report a missing required key. */
json_t *quill_bkv_required(vstate *vs, const kpath *p, json_t *obj,
                           const char *key) {
  json_t *v = json_object_get(obj, key);
  if (!v) {
    kpath kp = {p, key, 0};
    quill_bkv_error(vs, &kp, "required key is missing");
  }
  return v;
}

/* A string that must be one of `choices`; returns its index or -1. */
int quill_bkv_choice(vstate *vs, const kpath *p, const json_t *j,
                     const char *what, const char *const *choices) {
  if (!WANT_STRING(vs, p, j))
    return -1;
  const char *s = json_string_value(j);
  for (int i = 0; choices[i]; i++)
    if (strcmp(s, choices[i]) == 0)
      return i;
  quill_strbuf sb;
  quill_strbuf_init(&sb, vs->ctx);
  join_names(&sb, choices);
  quill_bkv_error(vs, p, "unknown %s '%s' (expected one of %s)", what, s,
                  quill_strbuf_str(&sb));
  quill_strbuf_free(&sb);
  return -1;
}

/* ---- op names --------------------------------------------------------------
 */

static const char *const *mnemonics(void) {
  static const char *const names[QUILL_OP_COUNT + 1] = {
#define QUILL_OP(ID, mn, mino, maxo, nres, fl, ver) mn,
#include "ir/ops.def"
#undef QUILL_OP
      NULL};
  return names;
}

/* An op name; false (after reporting) if it is not a string naming an op. */
bool quill_bkv_op_name(vstate *vs, const kpath *p, const json_t *j,
                       quill_opcode *out) {
  if (!WANT_STRING(vs, p, j))
    return false;
  const char *s = json_string_value(j);
  if (quill_opcode_lookup(s, strlen(s), out))
    return true;
  const char *near = closest(s, mnemonics(), QUILL_OP_COUNT);
  if (near)
    quill_bkv_error(vs, p, "unknown op '%s' (did you mean '%s'?)", s, near);
  else
    quill_bkv_error(vs, p, "unknown op '%s'", s);
  return false;
}

/* Where each op appears in one list (index), or -1. */
typedef struct op_list {
  long pos[QUILL_OP_COUNT];
  bool present; /* the key was given */
} op_list;

static void op_list_init(op_list *l) {
  for (unsigned i = 0; i < QUILL_OP_COUNT; i++)
    l->pos[i] = -1;
  l->present = false;
}

/* key: [op, ...] without duplicates. */
static void parse_op_list(vstate *vs, const kpath *root, json_t *obj,
                          const char *key, op_list *out) {
  op_list_init(out);
  json_t *j = json_object_get(obj, key);
  if (!j)
    return;
  out->present = true;
  kpath p = {root, key, 0};
  if (!WANT_ARRAY(vs, &p, j))
    return;
  size_t i;
  json_t *e;
  json_array_foreach(j, i, e) {
    kpath ep = {&p, NULL, i};
    quill_opcode opc;
    if (!quill_bkv_op_name(vs, &ep, e, &opc))
      continue;
    if (out->pos[opc] >= 0)
      quill_bkv_error(vs, &ep, "'%s' is listed twice (first at %s[%ld])",
                      quill_opcode_name(opc), key, out->pos[opc]);
    else
      out->pos[opc] = (long)i;
  }
}

/* ---- fusions
 * ----------------------------------------------------------------- */

static bool is_fusable_producer(quill_opcode o) {
  return o == QUILL_OP_CONV2D || o == QUILL_OP_CONV_TRANSPOSE2D ||
         o == QUILL_OP_GEMM || o == QUILL_OP_MATMUL || o == QUILL_OP_ADD ||
         o == QUILL_OP_MUL;
}

static bool is_fusable_act(quill_opcode o) {
  return o == QUILL_OP_RELU || o == QUILL_OP_CLIP;
}

/* The shapes Quill lowers: [X, act], [conv2d, batch_norm],
 * [conv2d, batch_norm, act]. */
static bool lowerable(const quill_fusion *f) {
  if (f->len == 2)
    return (is_fusable_producer(f->ops[0]) && is_fusable_act(f->ops[1])) ||
           (f->ops[0] == QUILL_OP_CONV2D && f->ops[1] == QUILL_OP_BATCH_NORM);
  if (f->len == 3)
    return f->ops[0] == QUILL_OP_CONV2D && f->ops[1] == QUILL_OP_BATCH_NORM &&
           is_fusable_act(f->ops[2]);
  return false;
}

static const char supported_fusions[] =
    "supported: [X, relu|clip] with X one of conv2d, conv_transpose2d, gemm, "
    "matmul, add, mul; [conv2d, batch_norm]; [conv2d, batch_norm, relu|clip]";

/* fusions: [[op, ...], ...]. Fills b->fusions (only lowerable chains). */
static void parse_fusions(vstate *vs, const kpath *root, json_t *obj,
                          quill_backend *b, const op_list *quant,
                          const op_list *floats) {
  json_t *j = json_object_get(obj, "fusions");
  if (!j)
    return;
  kpath p = {root, "fusions", 0};
  if (!WANT_ARRAY(vs, &p, j))
    return;
  size_t n = json_array_size(j);
  if (n) {
    b->fusions = quill_calloc(vs->ctx, n, sizeof *b->fusions);
    if (!b->fusions) {
      vs->nomem = true;
      return;
    }
    b->fusions_cap = (unsigned)n;
  }
  size_t i;
  json_t *fj;
  json_array_foreach(j, i, fj) {
    kpath fp = {&p, NULL, i};
    if (!WANT_ARRAY(vs, &fp, fj))
      continue;
    size_t len = json_array_size(fj);
    quill_fusion f = {0, {0}};
    bool names_ok = true;
    size_t k;
    json_t *e;
    json_array_foreach(fj, k, e) {
      kpath ep = {&fp, NULL, k};
      quill_opcode opc;
      if (!quill_bkv_op_name(vs, &ep, e, &opc))
        names_ok = false;
      else if (k < QUILL_BACKEND_MAX_FUSION_LEN)
        f.ops[k] = opc;
    }
    if (!names_ok)
      continue;
    if (len < 2) {
      quill_bkv_error(vs, &fp, "a fusion needs at least 2 ops, got %zu", len);
      continue;
    }
    f.len = len <= QUILL_BACKEND_MAX_FUSION_LEN ? (unsigned)len : 0;
    if (!f.len || !lowerable(&f)) {
      quill_strbuf sb;
      quill_strbuf_init(&sb, vs->ctx);
      json_array_foreach(fj, k, e)
          quill_strbuf_printf(&sb, "%s%s", k ? ", " : "", json_string_value(e));
      quill_bkv_error(vs, &fp, "Quill cannot lower the fusion [%s] (%s)",
                      quill_strbuf_str(&sb), supported_fusions);
      quill_strbuf_free(&sb);
      continue;
    }
    bool ok = true;
    if (quant->pos[f.ops[0]] < 0) {
      kpath hp = {&fp, NULL, 0};
      quill_bkv_error(vs, &hp,
                      "'%s' is not in quantize_ops (a fusion runs as one "
                      "quantized kernel)",
                      quill_opcode_name(f.ops[0]));
      ok = false;
    }
    for (unsigned m = 1; m < f.len; m++)
      if (floats->pos[f.ops[m]] >= 0) {
        kpath mp = {&fp, NULL, m};
        quill_bkv_error(vs, &mp,
                        "'%s' is in float_ops but fused into a quantized "
                        "kernel",
                        quill_opcode_name(f.ops[m]));
        ok = false;
      }
    for (unsigned d = 0; d < b->num_fusions && ok; d++)
      if (b->fusions[d].len == f.len &&
          memcmp(b->fusions[d].ops, f.ops, f.len * sizeof f.ops[0]) == 0) {
        quill_bkv_error(vs, &fp, "duplicate fusion");
        ok = false;
      }
    if (ok)
      b->fusions[b->num_fusions++] = f;
  }
}

/* ---- fixed params
 * ------------------------------------------------------------ */

static bool is_power_of_two(double x) {
  int e;
  return frexp(x, &e) == 0.5;
}

/* fixed_params: {op: {scale, zero_point}}. `act_ok`: the activation scheme
 * is valid, so zero points can be checked against it. */
static void parse_fixed(vstate *vs, const kpath *root, json_t *obj,
                        quill_backend *b, bool act_ok) {
  json_t *j = json_object_get(obj, "fixed_params");
  if (!j)
    return;
  kpath p = {root, "fixed_params", 0};
  if (!WANT_OBJECT(vs, &p, j))
    return;
  const quill_quant_scheme *a = &b->activation;
  const char *key;
  json_t *v;
  json_object_foreach(j, key, v) {
    kpath kp = {&p, key, 0};
    quill_opcode opc;
    if (!quill_opcode_lookup(key, strlen(key), &opc)) {
      const char *near = closest(key, mnemonics(), QUILL_OP_COUNT);
      if (near)
        quill_bkv_error(vs, &kp, "unknown op '%s' (did you mean '%s'?)", key,
                        near);
      else
        quill_bkv_error(vs, &kp, "unknown op '%s'", key);
      continue;
    }
    if (!WANT_OBJECT(vs, &kp, v))
      continue;
    quill_bkv_check_keys(vs, &kp, v, QUILL_BKS_FIXED);
    json_t *sj = quill_bkv_required(vs, &kp, v, "scale");
    json_t *zj = quill_bkv_required(vs, &kp, v, "zero_point");
    kpath sp = {&kp, "scale", 0}, zp = {&kp, "zero_point", 0};
    bool ok = sj && zj;
    if (sj && WANT_NUMBER(vs, &sp, sj)) {
      double s = json_number_value(sj);
      if (!(s > 0.0) || !isfinite(s)) {
        quill_bkv_error(vs, &sp, "must be positive and finite, got %g", s);
        ok = false;
      } else if (a->power_of_two && !is_power_of_two(s)) {
        quill_bkv_error(vs, &sp,
                        "%g is not a power of two (activation.power_of_two is "
                        "true)",
                        s);
        ok = false;
      }
    } else {
      ok = false;
    }
    if (zj && WANT_INT(vs, &zp, zj)) {
      int64_t z = json_integer_value(zj);
      if (act_ok && (z < a->qmin || z > a->qmax)) {
        quill_bkv_error(vs, &zp,
                        "%lld is outside the activation range [%lld, %lld]",
                        (long long)z, (long long)a->qmin, (long long)a->qmax);
        ok = false;
      } else if (act_ok && a->symmetric && z != 0) {
        quill_bkv_error(vs, &zp,
                        "must be 0 with symmetric activations, got %lld",
                        (long long)z);
        ok = false;
      }
    } else {
      ok = false;
    }
    if (ok) {
      b->fixed[opc].present = true;
      b->fixed[opc].scale = json_number_value(sj);
      b->fixed[opc].zero_point = json_integer_value(zj);
    }
  }
}

/* ---- the whole config ---------------------------------------------------- */

static const char *const bias_dtypes[] = {"i32", "float", NULL};
static const char *const ln_numerics[] = {"f64", "f32", "integer", NULL};
static const char *const roundings[] = {"half_even", "half_away", "half_up",
                                        "tflite", NULL};
static const char *const requants[] = {"fixed_point", "float", NULL};
static const char *const bc_modes[] = {"empirical", "analytic", NULL};

static bool valid_name(const char *s) {
  if (!*s)
    return false;
  for (; *s; s++) {
    char c = *s;
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
      return false;
  }
  return true;
}

static char *dup_or_nomem(vstate *vs, const char *s) {
  char *d = quill_strdup(vs->ctx, s);
  if (!d)
    vs->nomem = true;
  return d;
}

/* plugin: {name, pipeline}. The pipeline's pass names are checked when it
 * runs (the plugin that registers them is loaded later than the config). */
static void parse_plugin(vstate *vs, json_t *root, quill_backend *b) {
  json_t *j = json_object_get(root, "plugin");
  if (!j)
    return;
  kpath p = {NULL, "plugin", 0};
  if (!WANT_OBJECT(vs, &p, j))
    return;
  quill_bkv_check_keys(vs, &p, j, QUILL_BKS_PLUGIN);
  json_t *v;
  kpath np = {&p, "name", 0}, pp = {&p, "pipeline", 0};
  if ((v = quill_bkv_required(vs, &p, j, "name")) && WANT_STRING(vs, &np, v)) {
    if (!valid_name(json_string_value(v)))
      quill_bkv_error(vs, &np,
                      "'%s' is not a valid plugin name (letters, digits, "
                      "'.', '_' and '-' only)",
                      json_string_value(v));
    else
      b->plugin_name = dup_or_nomem(vs, json_string_value(v));
  }
  if ((v = json_object_get(j, "pipeline")) && WANT_STRING(vs, &pp, v)) {
    if (strpbrk(json_string_value(v), "\n\r"))
      quill_bkv_error(vs, &pp, "must be one line");
    else
      b->plugin_pipeline = dup_or_nomem(vs, json_string_value(v));
  }
}

/* Phase 2 and 3 over a parsed root object. */
static void validate(vstate *vs, json_t *root, quill_backend *b) {
  json_t *v;
  /* (1) version */
  kpath vp = {NULL, "quill_backend", 0};
  if (!(v = quill_bkv_required(vs, NULL, root, "quill_backend")))
    return;
  if (!WANT_INT(vs, &vp, v))
    return;
  if (json_integer_value(v) != 1) {
    quill_bkv_error(vs, &vp,
                    "unsupported format version %lld (this Quill reads "
                    "version 1)",
                    (long long)json_integer_value(v));
    return;
  }
  quill_bkv_check_keys(vs, NULL, root, QUILL_BKS_TOP);

  /* (2) each key */
  kpath np = {NULL, "name", 0};
  if ((v = quill_bkv_required(vs, NULL, root, "name")) &&
      WANT_STRING(vs, &np, v)) {
    if (!valid_name(json_string_value(v)))
      quill_bkv_error(vs, &np,
                      "'%s' is not a valid name (letters, digits, '.', '_' "
                      "and '-' only)",
                      json_string_value(v));
    else
      b->name = dup_or_nomem(vs, json_string_value(v));
  }
  kpath dp = {NULL, "description", 0};
  const char *desc = "";
  if ((v = json_object_get(root, "description")) && WANT_STRING(vs, &dp, v)) {
    if (strchr(json_string_value(v), '\n'))
      quill_bkv_error(vs, &dp, "must be one line");
    else
      desc = json_string_value(v);
  }
  b->description = dup_or_nomem(vs, desc);

  kpath ap = {NULL, "activation", 0}, wp = {NULL, "weight", 0};
  bool act_ok = false;
  if ((v = quill_bkv_required(vs, NULL, root, "activation")))
    act_ok = quill_bkv_parse_scheme(vs, &ap, v, false, &b->activation);
  if ((v = quill_bkv_required(vs, NULL, root, "weight")))
    quill_bkv_parse_scheme(vs, &wp, v, true, &b->weight);

  kpath bp = {NULL, "bias", 0};
  if ((v = quill_bkv_required(vs, NULL, root, "bias")) &&
      WANT_OBJECT(vs, &bp, v)) {
    quill_bkv_check_keys(vs, &bp, v, QUILL_BKS_BIAS);
    json_t *d = quill_bkv_required(vs, &bp, v, "dtype");
    kpath bdp = {&bp, "dtype", 0};
    int k = d ? quill_bkv_choice(vs, &bdp, d, "bias dtype", bias_dtypes) : -1;
    b->bias_int32 = k == 0;
  }
  kpath rp = {NULL, "rounding", 0}, qp = {NULL, "requantization", 0};
  int rounding = -1, requant = -1;
  if ((v = quill_bkv_required(vs, NULL, root, "rounding")))
    rounding = quill_bkv_choice(vs, &rp, v, "rounding", roundings);
  if ((v = quill_bkv_required(vs, NULL, root, "requantization")))
    requant = quill_bkv_choice(vs, &qp, v, "requantization", requants);
  if (rounding >= 0)
    b->rounding = (quill_rounding)rounding;
  if (requant >= 0)
    b->requant = (quill_requant_mode)requant;
  if (rounding == QUILL_ROUND_TFLITE && requant == QUILL_REQUANT_FLOAT)
    quill_bkv_error(vs, &qp,
                    "'tflite' rounding requires 'fixed_point' "
                    "requantization, got 'float'");

  kpath op = {NULL, "quantize_outputs", 0};
  b->quantize_outputs = true;
  if ((v = json_object_get(root, "quantize_outputs")) && WANT_BOOL(vs, &op, v))
    b->quantize_outputs = json_is_true(v);
  kpath rfp = {NULL, "rnn_float", 0};
  b->rnn_float = false;
  if ((v = json_object_get(root, "rnn_float")) && WANT_BOOL(vs, &rfp, v))
    b->rnn_float = json_is_true(v);
  kpath lp = {NULL, "layer_norm_numerics", 0};
  b->layer_norm = 0;
  int lni;
  if ((v = json_object_get(root, "layer_norm_numerics")) &&
      (lni = quill_bkv_choice(vs, &lp, v, "layer_norm numerics",
                              ln_numerics)) > 0)
    b->layer_norm = (unsigned char)lni;
  /* the accuracy passes the quantization pipeline adds (all default off) */
  static const char *const acc_keys[3] = {"equalize", "equalize_relu6",
                                          "bias_correction"};
  bool *acc[3] = {&b->equalize, &b->equalize_relu6, &b->bias_correction};
  b->bias_correction_analytic = false;
  for (unsigned i = 0; i < 3; i++) {
    kpath ap = {NULL, acc_keys[i], 0};
    *acc[i] = false;
    v = json_object_get(root, acc_keys[i]);
    if (v && i == 2 && json_is_string(v)) {
      int bc = quill_bkv_choice(vs, &ap, v, "bias correction", bc_modes);
      *acc[i] = bc >= 0;
      b->bias_correction_analytic = bc == 1;
    } else if (v && WANT_BOOL(vs, &ap, v)) {
      *acc[i] = json_is_true(v);
    }
  }

  op_list quant, shared, floats;
  quill_bkv_required(vs, NULL, root, "quantize_ops");
  parse_op_list(vs, NULL, root, "quantize_ops", &quant);
  parse_op_list(vs, NULL, root, "shared_params_ops", &shared);
  parse_op_list(vs, NULL, root, "float_ops", &floats);
  parse_fixed(vs, NULL, root, b, act_ok);
  parse_fusions(vs, NULL, root, b, &quant, &floats);
  parse_plugin(vs, root, b);

  /* (3) contradictions between lists */
  kpath slp = {NULL, "shared_params_ops", 0}, flp = {NULL, "float_ops", 0},
        fxp = {NULL, "fixed_params", 0};
  for (unsigned o = 0; o < QUILL_OP_COUNT; o++) {
    const char *mn = quill_opcode_name((quill_opcode)o);
    if (floats.pos[o] >= 0 && quant.pos[o] >= 0) {
      kpath e = {&flp, NULL, (size_t)floats.pos[o]};
      quill_bkv_error(vs, &e, "'%s' is also in quantize_ops", mn);
    }
    if (shared.pos[o] >= 0 && quant.pos[o] < 0) {
      kpath e = {&slp, NULL, (size_t)shared.pos[o]};
      quill_bkv_error(vs, &e, "'%s' is not in quantize_ops", mn);
    }
    if (b->fixed[o].present) {
      kpath e = {&fxp, mn, 0};
      if (quant.pos[o] < 0)
        quill_bkv_error(vs, &e, "'%s' is not in quantize_ops", mn);
      else if (shared.pos[o] >= 0)
        quill_bkv_error(vs, &e, "'%s' is also in shared_params_ops", mn);
    }
    b->quantize[o] = quant.pos[o] >= 0;
    b->shared[o] = shared.pos[o] >= 0;
    b->keep_float[o] = floats.pos[o] >= 0;
  }
  quill_bkv_parse_overrides(vs, root, b);
  if (!b->quantize_outputs) {
    bool any_shared = false, any_fixed = false;
    for (unsigned o = 0; o < QUILL_OP_COUNT; o++) {
      any_shared |= shared.pos[o] >= 0;
      any_fixed |= b->fixed[o].present;
    }
    if (any_shared)
      quill_bkv_error(vs, &slp,
                      "output parameters are meaningless with "
                      "quantize_outputs = false");
    if (any_fixed)
      quill_bkv_error(vs, &fxp,
                      "output parameters are meaningless with "
                      "quantize_outputs = false");
  }
}

quill_backend *quill_backend_load_json(quill_context *ctx, const char *text,
                                       size_t len, const char *file) {
  vstate vs = {ctx, quill_loc_file(ctx, file, 0, 0), 0, false};
  json_error_t jerr;
  json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
  if (!root) {
    /* Register the text so the diagnostic shows the line with a caret. */
    quill_context_add_source(ctx, file, text, len, 0);
    quill_loc at =
        quill_loc_file(ctx, file, jerr.line > 0 ? (uint32_t)jerr.line : 0,
                       jerr.column > 0 ? (uint32_t)jerr.column : 0);
    quill_error(ctx, at, "invalid JSON: %s", jerr.text);
    return NULL;
  }
  quill_backend *b = quill_calloc(ctx, 1, sizeof *b);
  if (!b) {
    json_decref(root);
    quill_error(ctx, vs.loc, "out of memory");
    return NULL;
  }
  b->file = dup_or_nomem(&vs, file);
  if ((b->text = quill_alloc(ctx, len + 1))) { /* for quill_backend_derive */
    memcpy(b->text, text, len);
    b->text[len] = '\0';
    b->text_len = len;
  } else {
    vs.nomem = true;
  }
  if (!json_is_object(root))
    quill_bkv_error(&vs, NULL, "a backend config must be a JSON object, got %s",
                    quill_bkv_json_kind(root));
  else
    validate(&vs, root, b);
  json_decref(root);
  if (vs.nomem && !vs.errors)
    quill_error(ctx, vs.loc, "out of memory");
  if (vs.errors || vs.nomem) {
    quill_backend_free_impl(ctx, b);
    return NULL;
  }
  return b;
}

void quill_backend_free_impl(quill_context *ctx, quill_backend *b) {
  if (!b)
    return;
  quill_string_free(ctx, b->name);
  quill_string_free(ctx, b->description);
  quill_string_free(ctx, b->file);
  quill_string_free(ctx, b->plugin_name);
  quill_string_free(ctx, b->plugin_pipeline);
  quill_bkv_free_overrides(ctx, b);
  quill_free(ctx, b->text, b->text_len + 1);
  quill_free(ctx, b->fusions, b->fusions_cap * sizeof *b->fusions);
  quill_free(ctx, b, sizeof *b);
}
