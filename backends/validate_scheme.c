/*
 * validate_scheme.c - validation of the `activation` and `weight` schemes of
 * a backend config (docs/quantization.md section 1, "A scheme").
 *
 * Order matters because later keys depend on earlier ones:
 *
 *   dtype -> storage width and signedness
 *   bits  -> the quantization range [lo, hi] of that many bits (<= width)
 *   range / narrow_range -> [qmin, qmax] inside [lo, hi]
 *   symmetric -> signed storage and qmin < 0 < qmax
 *
 * so range checks run only once dtype and bits are known to be valid. The
 * observer is a name or an object {kind, <its one parameter>}.
 */
#include <string.h>

#include "backends/validate.h"

static const struct {
  const char *name;
  quill_type_kind kind;
  int width;
  bool is_signed;
} storages[] = {
    {"i8", QUILL_TYPE_I8, 8, true},    {"u8", QUILL_TYPE_U8, 8, false},
    {"i16", QUILL_TYPE_I16, 16, true}, {"u16", QUILL_TYPE_U16, 16, false},
    {"i4", QUILL_TYPE_I4, 4, true},    {"u4", QUILL_TYPE_U4, 4, false},
};
static const char *const storage_names[] = {"i8", "u8", "i16", "u16",
                                            "i4", "u4", NULL};

static void bits_range(int bits, bool is_signed, int64_t *lo, int64_t *hi) {
  if (is_signed) {
    *lo = -(INT64_C(1) << (bits - 1));
    *hi = (INT64_C(1) << (bits - 1)) - 1;
  } else {
    *lo = 0;
    *hi = (INT64_C(1) << bits) - 1;
  }
}

static const char *const observer_names[] = {
    "minmax", "ema_minmax", "percentile", "kl", "mse", NULL};
/* The parameter each observer kind takes (NULL: none). */
static const char *const observer_param[] = {NULL, "momentum", "percentile",
                                             "bins", "bins"};

static void set_observer_defaults(quill_observer_spec *o,
                                  quill_observer_kind k) {
  o->kind = k;
  o->momentum = 0.9;
  o->percentile = 99.99;
  o->bins = 2048;
}

/* observer: "name" | {"kind": "name", <param>: value} */
static bool parse_observer(vstate *vs, const kpath *p, json_t *j,
                           quill_observer_spec *o) {
  set_observer_defaults(o, QUILL_OBSERVER_MINMAX);
  if (json_is_string(j)) {
    int k = quill_bkv_choice(vs, p, j, "observer", observer_names);
    if (k < 0)
      return false;
    set_observer_defaults(o, (quill_observer_kind)k);
    return true;
  }
  if (!quill_bkv_want(vs, p, j, json_is_object(j), "a string or an object"))
    return false;
  unsigned before = vs->errors;
  quill_bkv_check_keys(vs, p, j, QUILL_BKS_OBSERVER);
  json_t *kj = quill_bkv_required(vs, p, j, "kind");
  if (!kj)
    return false;
  kpath kp = {p, "kind", 0};
  int k = quill_bkv_choice(vs, &kp, kj, "observer", observer_names);
  if (k < 0)
    return false;
  set_observer_defaults(o, (quill_observer_kind)k);
  const char *param = observer_param[k];
  for (unsigned i = 0; i < quill_backend_num_keys; i++) {
    const char *key = quill_backend_keys[i].key;
    if (quill_backend_keys[i].section != QUILL_BKS_OBSERVER ||
        strcmp(key, "kind") == 0)
      continue;
    json_t *v = json_object_get(j, key);
    if (!v)
      continue;
    kpath vp = {p, key, 0};
    if (!param || strcmp(param, key) != 0) {
      if (param)
        quill_bkv_error(vs, &vp,
                        "not a parameter of observer '%s' (it takes '%s')",
                        observer_names[k], param);
      else
        quill_bkv_error(vs, &vp,
                        "not a parameter of observer '%s' (it takes none)",
                        observer_names[k]);
      continue;
    }
    if (strcmp(key, "bins") == 0) {
      if (!WANT_INT(vs, &vp, v))
        continue;
      json_int_t b = json_integer_value(v);
      if (b < 16 || b > (1 << 20))
        quill_bkv_error(vs, &vp, "must be between 16 and 1048576, got %lld",
                        (long long)b);
      else
        o->bins = (int64_t)b;
      continue;
    }
    if (!WANT_NUMBER(vs, &vp, v))
      continue;
    double x = json_number_value(v);
    if (strcmp(key, "momentum") == 0) {
      if (!(x > 0.0 && x < 1.0))
        quill_bkv_error(vs, &vp, "must be in (0, 1), got %g", x);
      else
        o->momentum = x;
    } else {
      if (!(x > 0.0 && x <= 100.0))
        quill_bkv_error(vs, &vp, "must be in (0, 100], got %g", x);
      else
        o->percentile = x;
    }
  }
  return vs->errors == before;
}

static const char *const granularities[] = {"per_tensor", "per_channel", NULL};

/* activation / weight. Returns true if the scheme is fully valid (later
 * checks that depend on it, such as fixed params, run only then). */
bool quill_bkv_parse_scheme(vstate *vs, const kpath *p, json_t *j,
                            bool is_weight, quill_quant_scheme *s) {
  memset(s, 0, sizeof *s);
  set_observer_defaults(&s->observer, QUILL_OBSERVER_MINMAX);
  if (!WANT_OBJECT(vs, p, j))
    return false;
  unsigned before = vs->errors;
  quill_bkv_check_keys(vs, p, j, QUILL_BKS_SCHEME);

  /* dtype (required) and bits: everything else depends on them */
  json_t *dj = quill_bkv_required(vs, p, j, "dtype");
  kpath dp = {p, "dtype", 0};
  int si =
      dj ? quill_bkv_choice(vs, &dp, dj, "storage type", storage_names) : -1;
  int width = si >= 0 ? storages[si].width : 0;
  bool is_signed = si >= 0 && storages[si].is_signed;
  int bits = width;
  bool bits_ok = true;
  json_t *bj = json_object_get(j, "bits");
  kpath bp = {p, "bits", 0};
  if (bj && WANT_INT(vs, &bp, bj)) {
    json_int_t b = json_integer_value(bj);
    if (b < 2 || b > 16) {
      quill_bkv_error(vs, &bp, "must be between 2 and 16, got %lld",
                      (long long)b);
      bits_ok = false;
    } else if (si >= 0 && b > width) {
      quill_bkv_error(vs, &bp, "%lld bits do not fit the %d-bit storage of %s",
                      (long long)b, width, storages[si].name);
      bits_ok = false;
    } else {
      bits = (int)b;
    }
  } else if (bj) {
    bits_ok = false;
  }
  if (si >= 0)
    s->storage = storages[si].kind;
  s->bits = bits;

  json_t *v;
  kpath sp = {p, "symmetric", 0};
  if ((v = json_object_get(j, "symmetric")) && WANT_BOOL(vs, &sp, v)) {
    s->symmetric = json_is_true(v);
    if (s->symmetric && si >= 0 && !is_signed)
      quill_bkv_error(vs, &sp,
                      "symmetric quantization needs signed storage, got %s",
                      storages[si].name);
  }
  kpath gp = {p, "granularity", 0};
  if ((v = json_object_get(j, "granularity"))) {
    int g = quill_bkv_choice(vs, &gp, v, "granularity", granularities);
    if (g == 1 && !is_weight)
      quill_bkv_error(vs, &gp, "per_channel is only supported for weights");
    s->per_channel = g == 1;
  }
  kpath pp = {p, "power_of_two", 0};
  if ((v = json_object_get(j, "power_of_two")) && WANT_BOOL(vs, &pp, v))
    s->power_of_two = json_is_true(v);
  kpath op = {p, "observer", 0};
  if ((v = json_object_get(j, "observer")))
    parse_observer(vs, &op, v, &s->observer);

  /* range, narrow_range: need a valid storage and bits */
  if (si < 0 || !bits_ok)
    return false;
  int64_t blo, bhi;
  bits_range(bits, is_signed, &blo, &bhi);
  s->qmin = blo;
  s->qmax = bhi;
  bool have_range = false;
  kpath rp = {p, "range", 0};
  if ((v = json_object_get(j, "range"))) {
    if (!json_is_array(v) || json_array_size(v) != 2 ||
        !json_is_integer(json_array_get(v, 0)) ||
        !json_is_integer(json_array_get(v, 1))) {
      quill_bkv_error(vs, &rp, "expected [qmin, qmax], two integers");
    } else {
      int64_t lo = json_integer_value(json_array_get(v, 0));
      int64_t hi = json_integer_value(json_array_get(v, 1));
      if (lo < blo || hi > bhi)
        quill_bkv_error(vs, &rp,
                        "[%lld, %lld] does not fit %d-bit %s %s [%lld, %lld]",
                        (long long)lo, (long long)hi, bits,
                        is_signed ? "signed" : "unsigned",
                        bits == width ? "storage" : "quantization",
                        (long long)blo, (long long)bhi);
      else if (lo >= hi)
        quill_bkv_error(vs, &rp, "qmin (%lld) must be less than qmax (%lld)",
                        (long long)lo, (long long)hi);
      else {
        s->qmin = lo;
        s->qmax = hi;
        have_range = true;
      }
    }
  }
  kpath np = {p, "narrow_range", 0};
  if ((v = json_object_get(j, "narrow_range")) && WANT_BOOL(vs, &np, v) &&
      json_is_true(v)) {
    if (!is_signed) {
      quill_bkv_error(vs, &np, "narrow range needs signed storage, got %s",
                      storages[si].name);
    } else if (have_range && (s->qmin != blo + 1 || s->qmax != bhi)) {
      quill_bkv_error(vs, &np,
                      "conflicts with range [%lld, %lld] (the narrow range is "
                      "[%lld, %lld])",
                      (long long)s->qmin, (long long)s->qmax,
                      (long long)(blo + 1), (long long)bhi);
    } else {
      s->qmin = blo + 1;
      s->qmax = bhi;
    }
  }
  if (s->symmetric && is_signed && !(s->qmin < 0 && s->qmax > 0))
    quill_bkv_error(vs, &rp,
                    "symmetric quantization needs a range around 0, got "
                    "[%lld, %lld]",
                    (long long)s->qmin, (long long)s->qmax);
  return vs->errors == before;
}
