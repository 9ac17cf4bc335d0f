/*
 * custom_op.c - the `custom` op's verifier and the per-context registry of
 * custom op kinds (ir/custom_op.h).
 *
 * The registry is the value of a context slot, created on first use:
 *
 *   kinds[]  {descriptor (borrowed), origin (plugin name, borrowed; NULL
 *            for the application)}
 *
 * and freed with the context. A handful of kinds is expected, so lookup is
 * a linear scan by name.
 *
 * Verification of a custom op (quill_verify_custom, named in ir/ops.def):
 *   1. a string attribute `name` that is a valid "vendor.op" name;
 *   2. if a kind of that name is registered with a `verify` function, that
 *      function (it sees an op whose generic checks passed).
 * An unregistered name is not an error: IR from a vendor's pipeline stays
 * readable and verifiable without the vendor's plugin.
 */
#include <string.h>

#include "ir/custom_op_registry.h"
#include "ir/op_verify.h"

typedef struct kind {
  const quill_custom_op *op;
  const char *origin;
} kind;

typedef struct registry {
  kind *kinds;
  unsigned n, cap;
} registry;

static const char registry_key; /* its address keys the context slot */

static void free_registry(quill_context *ctx, void *value) {
  registry *r = value;
  quill_free(ctx, r->kinds, r->cap * sizeof *r->kinds);
  quill_free(ctx, r, sizeof *r);
}

static registry *get_registry(quill_context *ctx, bool create) {
  registry *r = quill_context_get_slot(ctx, &registry_key);
  if (r || !create)
    return r;
  r = quill_calloc(ctx, 1, sizeof *r);
  if (!r)
    return NULL;
  if (quill_context_set_slot(ctx, &registry_key, r, free_registry)) {
    quill_free(ctx, r, sizeof *r);
    return NULL;
  }
  return r;
}

static bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_';
}

bool quill_custom_op_name_valid(const char *name) {
  if (!name || !*name)
    return false;
  unsigned segments = 1;
  size_t seg_len = 0;
  for (const char *s = name; *s; ++s) {
    if (*s == '.') {
      if (seg_len == 0)
        return false;
      ++segments;
      seg_len = 0;
    } else if (is_word_char(*s)) {
      ++seg_len;
    } else {
      return false;
    }
  }
  return seg_len > 0 && segments >= 2;
}

const char *quill_op_custom_name(const quill_op *op) {
  if (quill_op_opcode(op) != QUILL_OP_CUSTOM)
    return NULL;
  const quill_attr *a = quill_op_attr(op, "name");
  if (!a || quill_attr_kind_of(a) != QUILL_ATTR_STRING)
    return NULL;
  return quill_attr_string_value(a, NULL);
}

/* ---- registry ------------------------------------------------------------ */

quill_status quill_custom_op_register_from(quill_context *ctx,
                                           const quill_custom_op *op,
                                           const char *origin, quill_loc loc,
                                           const char *who) {
  registry *r = get_registry(ctx, true);
  if (!r)
    return QUILL_ERR_NOMEM;
  if (!op || !quill_custom_op_name_valid(op->name))
    return quill_error(ctx, loc,
                       "%scannot register custom op '%s': a custom op needs "
                       "a name \"vendor.op\" (segments of [A-Za-z0-9_] "
                       "joined by '.')",
                       who, op && op->name ? op->name : "");
  for (unsigned i = 0; i < r->n; ++i)
    if (strcmp(r->kinds[i].op->name, op->name) == 0) {
      if (r->kinds[i].origin)
        return quill_error(ctx, loc,
                           "%scannot register custom op '%s': already "
                           "registered by pass plugin '%s'",
                           who, op->name, r->kinds[i].origin);
      return quill_error(ctx, loc,
                         "%scannot register custom op '%s': already "
                         "registered by the application",
                         who, op->name);
    }
  if (r->n == r->cap) {
    unsigned ncap = r->cap ? 2 * r->cap : 8;
    kind *k = quill_realloc(ctx, r->kinds, r->cap * sizeof *k,
                            ncap * sizeof *k);
    if (!k)
      return QUILL_ERR_NOMEM;
    r->kinds = k;
    r->cap = ncap;
  }
  r->kinds[r->n++] = (kind){op, origin};
  return QUILL_OK;
}

quill_status quill_custom_op_register(quill_context *ctx,
                                      const quill_custom_op *op) {
  return quill_custom_op_register_from(ctx, op, NULL, quill_loc_unknown(),
                                       "");
}

void quill_custom_op_truncate(quill_context *ctx, unsigned n) {
  registry *r = get_registry(ctx, false);
  if (r && n < r->n)
    r->n = n;
}

const quill_custom_op *quill_custom_op_find(quill_context *ctx,
                                            const char *name) {
  registry *r = get_registry(ctx, false);
  for (unsigned i = 0; r && name && i < r->n; ++i)
    if (strcmp(r->kinds[i].op->name, name) == 0)
      return r->kinds[i].op;
  return NULL;
}

unsigned quill_custom_op_num_registered(quill_context *ctx) {
  registry *r = get_registry(ctx, false);
  return r ? r->n : 0;
}

const quill_custom_op *quill_custom_op_registered(quill_context *ctx,
                                                  unsigned i) {
  registry *r = get_registry(ctx, false);
  return r && i < r->n ? r->kinds[i].op : NULL;
}

const char *quill_custom_op_registered_origin(quill_context *ctx,
                                              unsigned i) {
  registry *r = get_registry(ctx, false);
  return r && i < r->n ? r->kinds[i].origin : NULL;
}

/* ---- the verifier ---------------------------------------------------------- */

quill_status quill_verify_custom(quill_context *ctx, const quill_op *op) {
  const quill_attr *a = quill_op_attr(op, "name");
  if (!a || quill_attr_kind_of(a) != QUILL_ATTR_STRING)
    return quill_vop_fail(ctx, op,
                          "needs a string attribute 'name' (\"vendor.op\")");
  const char *name = quill_attr_string_value(a, NULL);
  if (!quill_custom_op_name_valid(name))
    return quill_vop_fail(ctx, op,
                          "has an invalid name \"%s\" (expected \"vendor.op\": "
                          "segments of [A-Za-z0-9_] joined by '.')",
                          name);
  const quill_custom_op *k = quill_custom_op_find(ctx, name);
  if (k && k->verify)
    return k->verify(ctx, op);
  return QUILL_OK;
}
