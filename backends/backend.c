/*
 * backend.c - backend configs: the per-context cache, loading by shipped
 * name or by path, the queries and the printed summary.
 *
 * Loaded configs live in a cache hung on the context through an extension
 * slot (quill_context_set_slot), so there is no global state and every
 * config dies with its context:
 *
 *   ctx --slot(&cache_key)--> cache: [ {"tflite-int8", b0}, {"npu.json", b1},
 *                                      {NULL, b2 (from quill_backend_parse)} ]
 *
 * The shipped configs are the JSON files backends/ *.json, embedded at build
 * time as constant strings (backends/embed.cmake generates
 * build/gen/backends_shipped.c), and validated like any user file when first
 * asked for. Parsing and validation are in validate.c.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ir/readfile.h"
#include "backends/backend_impl.h"

/* ---- the cache ------------------------------------------------------------
 */

typedef struct cache_entry {
  char *key; /* name or path asked for; NULL for quill_backend_parse */
  quill_backend *b;
} cache_entry;

typedef struct backend_cache {
  cache_entry *e;
  size_t n, cap;
} backend_cache;

/* Its address is the slot key. */
static const char cache_key;

static void cache_destroy(quill_context *ctx, void *p) {
  backend_cache *c = p;
  for (size_t i = 0; i < c->n; i++) {
    quill_string_free(ctx, c->e[i].key);
    quill_backend_free_impl(ctx, c->e[i].b);
  }
  quill_free(ctx, c->e, c->cap * sizeof *c->e);
  quill_free(ctx, c, sizeof *c);
}

static backend_cache *get_cache(quill_context *ctx) {
  backend_cache *c = quill_context_get_slot(ctx, &cache_key);
  if (c)
    return c;
  c = quill_calloc(ctx, 1, sizeof *c);
  if (!c)
    return NULL;
  if (quill_context_set_slot(ctx, &cache_key, c, cache_destroy)) {
    quill_free(ctx, c, sizeof *c);
    return NULL;
  }
  return c;
}

/* Take ownership of b under key (copied; may be NULL). On failure b is
 * freed and NULL returned. */
static const quill_backend *cache_add(quill_context *ctx, const char *key,
                                      quill_backend *b) {
  backend_cache *c = get_cache(ctx);
  char *k = key ? quill_strdup(ctx, key) : NULL;
  if (!c || (key && !k))
    goto nomem;
  if (c->n == c->cap) {
    size_t ncap = c->cap ? c->cap * 2 : 8;
    cache_entry *ne =
        quill_realloc(ctx, c->e, c->cap * sizeof *ne, ncap * sizeof *ne);
    if (!ne)
      goto nomem;
    c->e = ne;
    c->cap = ncap;
  }
  c->e[c->n++] = (cache_entry){k, b};
  return b;
nomem:
  quill_string_free(ctx, k);
  quill_backend_free_impl(ctx, b);
  quill_error(ctx, quill_loc_unknown(), "out of memory loading backend '%s'",
              key ? key : "<text>");
  return NULL;
}

/* ---- loading ---------------------------------------------------------------
 */

unsigned quill_backend_num_shipped(void) { return quill_backend_shipped_count; }

const char *quill_backend_shipped_name(unsigned i) {
  return i < quill_backend_shipped_count ? quill_backend_shipped_names[i]
                                         : NULL;
}

const char *quill_backend_shipped_text(unsigned i) {
  return i < quill_backend_shipped_count ? quill_backend_shipped_texts[i]
                                         : NULL;
}

static bool is_path(const char *s) {
  size_t n = strlen(s);
  return strchr(s, '/') || (n >= 5 && strcmp(s + n - 5, ".json") == 0);
}

const quill_backend *quill_backend_get(quill_context *ctx, const char *name) {
  backend_cache *c = quill_context_get_slot(ctx, &cache_key);
  for (size_t i = 0; c && i < c->n; i++)
    if (c->e[i].key && strcmp(c->e[i].key, name) == 0)
      return c->e[i].b;
  quill_backend *b = NULL;
  if (is_path(name)) {
    size_t len, cap;
    char *text;
    bool opened;
    int err = quill_read_file(ctx, name, QUILL_READ_TEXT, &text, &len, &cap,
                              &opened);
    if (err) {
      quill_error(ctx, quill_loc_file(ctx, name, 0, 0),
                  "cannot read backend config: %s",
                  quill_read_strerror(err, QUILL_READ_TEXT));
      return NULL;
    }
    b = quill_backend_load_json(ctx, text, len, name);
    quill_free(ctx, text, cap);
  } else {
    for (unsigned i = 0; i < quill_backend_shipped_count; i++) {
      if (strcmp(quill_backend_shipped_names[i], name) != 0)
        continue;
      quill_strbuf file;
      quill_strbuf_init(&file, ctx);
      quill_strbuf_printf(&file, "%s.json", name);
      b = quill_backend_load_json(ctx, quill_backend_shipped_texts[i],
                                  quill_backend_shipped_lens[i],
                                  quill_strbuf_str(&file));
      quill_strbuf_free(&file);
      if (!b)
        return NULL;
      return cache_add(ctx, name, b);
    }
    quill_strbuf sb;
    quill_strbuf_init(&sb, ctx);
    for (unsigned i = 0; i < quill_backend_shipped_count; i++)
      quill_strbuf_printf(&sb, "%s%s", i ? ", " : "",
                          quill_backend_shipped_names[i]);
    quill_error(ctx, quill_loc_unknown(),
                "unknown backend '%s' (shipped: %s; a config file path must "
                "contain '/' or end in '.json')",
                name, quill_strbuf_str(&sb));
    quill_strbuf_free(&sb);
    return NULL;
  }
  return b ? cache_add(ctx, name, b) : NULL;
}

const quill_backend *quill_backend_parse(quill_context *ctx, const char *text,
                                         size_t len, const char *file) {
  quill_backend *b = quill_backend_load_json(ctx, text, len, file);
  return b ? cache_add(ctx, NULL, b) : NULL;
}

/* The base config's JSON with `overrides` (a JSON array text) appended to
 * its own, as a new config cached under "BASE+N". */
const char *quill_backend_derive(quill_context *ctx, const char *base,
                                 const char *overrides) {
  const quill_backend *b = quill_backend_get(ctx, base);
  if (!b)
    return NULL;
  json_error_t jerr;
  json_t *root = json_loadb(b->text, b->text_len, 0, &jerr);
  json_t *add = json_loads(overrides, 0, &jerr);
  if (!add || !json_is_array(add)) {
    quill_error(ctx, quill_loc_unknown(),
                "overrides for backend '%s': %s (expected a JSON array of "
                "override objects)",
                base, add ? "not an array" : jerr.text);
    json_decref(root);
    json_decref(add);
    return NULL;
  }
  json_t *own = root ? json_object_get(root, "overrides") : NULL;
  if (root && !own && json_object_set_new(root, "overrides", json_array()) == 0)
    own = json_object_get(root, "overrides");
  char *text = own && json_array_extend(own, add) == 0
                   ? json_dumps(root, JSON_COMPACT)
                   : NULL;
  json_decref(root);
  json_decref(add);
  if (!text) {
    quill_error(ctx, quill_loc_unknown(), "out of memory deriving backend "
                                          "'%s'",
                base);
    return NULL;
  }
  backend_cache *c = get_cache(ctx);
  quill_strbuf key;
  quill_strbuf_init(&key, ctx);
  quill_strbuf_printf(&key, "%s+%zu", base, c ? c->n : 0);
  quill_backend *d = quill_backend_load_json(ctx, text, strlen(text),
                                             b->file);
  free(text);
  const quill_backend *r =
      d && c ? cache_add(ctx, quill_strbuf_str(&key), d) : NULL;
  quill_strbuf_free(&key);
  if (!r)
    return NULL;
  c = get_cache(ctx);
  return c->e[c->n - 1].key;
}

/* ---- queries ---------------------------------------------------------------
 */

const char *quill_backend_name(const quill_backend *b) { return b->name; }
const char *quill_backend_description(const quill_backend *b) {
  return b->description;
}
const quill_quant_scheme *quill_backend_activation(const quill_backend *b) {
  return &b->activation;
}
const quill_quant_scheme *quill_backend_weight(const quill_backend *b) {
  return &b->weight;
}
bool quill_backend_bias_int32(const quill_backend *b) { return b->bias_int32; }
quill_rounding quill_backend_rounding(const quill_backend *b) {
  return b->rounding;
}
quill_requant_mode quill_backend_requant(const quill_backend *b) {
  return b->requant;
}
bool quill_backend_makes_qlstm(const quill_backend *b) {
  return b && b->rounding == QUILL_ROUND_TFLITE &&
         b->requant == QUILL_REQUANT_FIXED_POINT &&
         quill_backend_activation(b)->storage == QUILL_TYPE_I8;
}
bool quill_backend_rnn_float(const quill_backend *b) {
  return b && b->rnn_float;
}
bool quill_backend_quantizes_outputs(const quill_backend *b) {
  return b->quantize_outputs;
}
bool quill_backend_equalize(const quill_backend *b) { return b->equalize; }
bool quill_backend_equalize_relu6(const quill_backend *b) {
  return b->equalize_relu6;
}
bool quill_backend_bias_correction(const quill_backend *b) {
  return b->bias_correction;
}
bool quill_backend_bias_correction_analytic(const quill_backend *b) {
  return b->bias_correction_analytic;
}
const char *quill_backend_layer_norm_numerics(const quill_backend *b) {
  return b->layer_norm == 2 ? "integer" : b->layer_norm == 1 ? "f32" : "f64";
}
const char *quill_backend_plugin(const quill_backend *b) {
  return b->plugin_name;
}
const char *quill_backend_plugin_pipeline(const quill_backend *b) {
  return b->plugin_name && b->plugin_pipeline && *b->plugin_pipeline
             ? b->plugin_pipeline
             : NULL;
}

static bool valid_opcode(quill_opcode opc) {
  return (unsigned)opc < QUILL_OP_COUNT;
}

bool quill_backend_quantizes(const quill_backend *b, quill_opcode opc) {
  return valid_opcode(opc) && b->quantize[opc];
}
bool quill_backend_keeps_float(const quill_backend *b, quill_opcode opc) {
  return valid_opcode(opc) && b->keep_float[opc];
}
bool quill_backend_shares_params(const quill_backend *b, quill_opcode opc) {
  return valid_opcode(opc) && b->shared[opc];
}
quill_fixed_params quill_backend_fixed_params(const quill_backend *b,
                                              quill_opcode opc) {
  quill_fixed_params none = {false, 0.0, 0};
  return valid_opcode(opc) ? b->fixed[opc] : none;
}
unsigned quill_backend_num_fusions(const quill_backend *b) {
  return b->num_fusions;
}
const quill_fusion *quill_backend_fusion(const quill_backend *b, unsigned i) {
  return i < b->num_fusions ? &b->fusions[i] : NULL;
}
bool quill_backend_fuses(const quill_backend *b, quill_opcode producer,
                         quill_opcode consumer) {
  for (unsigned i = 0; i < b->num_fusions; i++)
    if (b->fusions[i].ops[0] == producer && b->fusions[i].ops[1] == consumer)
      return true;
  return false;
}

/* ---- printing --------------------------------------------------------------
 */

/* The shortest of %.15g/%.17g that reads back to the same double. */
static void print_double(FILE *out, double v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.15g", v);
  if (strtod(buf, NULL) != v)
    snprintf(buf, sizeof buf, "%.17g", v);
  fputs(buf, out);
}

static const char *storage_name(quill_type_kind k) {
  return quill_type_scalar_name(k);
}

static int storage_width(quill_type_kind k) {
  return k == QUILL_TYPE_I4 || k == QUILL_TYPE_U4     ? 4
         : k == QUILL_TYPE_I16 || k == QUILL_TYPE_U16 ? 16
                                                      : 8;
}

/* "minmax", "ema_minmax (momentum 0.9)", "percentile (99.99%)",
 * "kl (2048 bins)" */
static void print_observer(FILE *out, const quill_observer_spec *o) {
  fputs(quill_observer_name(o->kind), out);
  switch (o->kind) {
  case QUILL_OBSERVER_EMA_MINMAX:
    fputs(" (momentum ", out);
    print_double(out, o->momentum);
    fputc(')', out);
    break;
  case QUILL_OBSERVER_PERCENTILE:
    fputs(" (", out);
    print_double(out, o->percentile);
    fputs("%)", out);
    break;
  case QUILL_OBSERVER_KL:
  case QUILL_OBSERVER_MSE:
    fprintf(out, " (%lld bins)", (long long)o->bins);
    break;
  default:
    break;
  }
}

static void print_scheme(FILE *out, const char *label,
                         const quill_quant_scheme *s) {
  fprintf(out, "  %-18s %s", label, storage_name(s->storage));
  if (s->bits != storage_width(s->storage))
    fprintf(out, " bits %d", s->bits);
  fprintf(out, " %s %s [%lld, %lld]", s->symmetric ? "symmetric" : "asymmetric",
          s->per_channel ? "per_channel" : "per_tensor", (long long)s->qmin,
          (long long)s->qmax);
  if (s->power_of_two)
    fputs(" power_of_two", out);
  fputs(" observer ", out);
  print_observer(out, &s->observer);
  fputc('\n', out);
}

static void print_ops(FILE *out, const char *label, const bool *table) {
  fprintf(out, "  %-18s", label);
  bool any = false;
  for (unsigned o = 0; o < QUILL_OP_COUNT; o++)
    if (table[o]) {
      fprintf(out, " %s", quill_opcode_name((quill_opcode)o));
      any = true;
    }
  fputs(any ? "\n" : " (none)\n", out);
}

void quill_backend_print(const quill_backend *b, FILE *out) {
  fprintf(out, "backend %s\n", b->name);
  if (b->description[0])
    fprintf(out, "  %-18s %s\n", "description:", b->description);
  print_scheme(out, "activation:", &b->activation);
  print_scheme(out, "weight:", &b->weight);
  fprintf(out, "  %-18s %s\n", "bias:", b->bias_int32 ? "i32" : "float");
  fprintf(out, "  %-18s %s\n", "rounding:", quill_rounding_name(b->rounding));
  fprintf(out, "  %-18s %s\n", "requantization:",
          b->requant == QUILL_REQUANT_FIXED_POINT ? "fixed_point" : "float");
  fprintf(out, "  %-18s %s\n",
          "outputs:", b->quantize_outputs ? "quantized" : "float");
  if (b->rnn_float)
    fprintf(out, "  %-18s %s\n", "rnn:", "float (unrolled RNN/GRU/LSTM)");
  if (b->layer_norm)
    fprintf(out, "  %-18s %s\n", "layer_norm:",
            b->layer_norm == 1 ? "f32 (TFLite's builtins)"
                               : "integer (qlayer_norm)");
  if (b->equalize || b->bias_correction)
    fprintf(out, "  %-18s%s%s%s%s\n", "accuracy:",
            b->equalize ? " equalize" : "",
            b->equalize && b->equalize_relu6 ? " (relu6 as relu)" : "",
            b->bias_correction ? " bias_correction" : "",
            b->bias_correction_analytic ? " (analytic)" : "");
  print_ops(out, "quantize_ops:", b->quantize);
  fprintf(out, "  %-18s", "fusions:");
  for (unsigned i = 0; i < b->num_fusions; i++) {
    fputs(" [", out);
    for (unsigned k = 0; k < b->fusions[i].len; k++)
      fprintf(out, "%s%s", k ? ", " : "",
              quill_opcode_name(b->fusions[i].ops[k]));
    fputc(']', out);
  }
  fputs(b->num_fusions ? "\n" : " (none)\n", out);
  print_ops(out, "shared_params_ops:", b->shared);
  fprintf(out, "  %-18s", "fixed_params:");
  bool any = false;
  for (unsigned o = 0; o < QUILL_OP_COUNT; o++) {
    if (!b->fixed[o].present)
      continue;
    fprintf(out, " %s (scale ", quill_opcode_name((quill_opcode)o));
    print_double(out, b->fixed[o].scale);
    fprintf(out, ", zero_point %lld)", (long long)b->fixed[o].zero_point);
    any = true;
  }
  fputs(any ? "\n" : " (none)\n", out);
  print_ops(out, "float_ops:", b->keep_float);
  for (unsigned i = 0; i < b->num_overrides; i++) {
    const quill_backend_override *o = &b->overrides[i];
    fprintf(out, "  %-18s", i ? "" : "overrides:");
    fputs(" match", out);
    for (unsigned c = 0; c < QUILL_OP_COUNT; c++)
      if (o->op[c])
        fprintf(out, " %s", quill_opcode_name((quill_opcode)c));
    if (o->name)
      fprintf(out, " name '%s'", o->name);
    if (o->row_longer_than)
      fprintf(out, " row > %lld", (long long)o->row_longer_than);
    if (o->keep_float)
      fputs(": keep float", out);
    fputc('\n', out);
    if (o->has_act)
      print_scheme(out, "    activation:", &o->act);
    if (o->has_weight)
      print_scheme(out, "    weight:", &o->weight);
  }
  if (b->plugin_name) {
    fprintf(out, "  %-18s %s", "plugin:", b->plugin_name);
    if (quill_backend_plugin_pipeline(b))
      fprintf(out, " (after fuse-qdq: %s)", b->plugin_pipeline);
    fputc('\n', out);
  }
}
