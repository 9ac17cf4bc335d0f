/*
 * context.c - the quill_context: allocator funnel, identifier interning,
 * uniquing tables, source buffers, diagnostics, debug channels and
 * extension slots (per-context state of components outside ir/, keyed by
 * the address of a static object, destroyed with the context).
 *
 * Allocation. Every byte Quill allocates goes through one Lua-style function
 * `alloc(ud, ptr, osize, nsize)` (nsize == 0 frees). The default wraps
 * realloc/free. Tests install a failing allocator to check that every
 * constructor turns NULL into QUILL_ERR_NOMEM instead of crashing.
 *
 * Interning. Identifiers live in an open-addressing hash set (see
 * context_impl.h); the same table code uniques types and attributes.
 *
 * Diagnostics. quill_diag_emit formats the message and hands it to the
 * installed handler, or to the default one, which prints (chibicc style)
 *
 *   model.qir:3:10: error: operand type mismatch
 *     %1 = add %0, %x : tensor<4xf32>
 *            ^
 *
 * using the source registered for the file (with its line offset, so chunks
 * from --split-input-file report whole-file line numbers).
 */
#include <stdlib.h>
#include <string.h>

#include "ir/attr_impl.h"
#include "ir/context_impl.h"
#include "ir/strbuf.h"

/* ---- allocator funnel -------------------------------------------------- */

static void *default_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud;
  (void)osize;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  return realloc(ptr, nsize);
}

quill_context *quill_context_create(quill_alloc_fn alloc, void *ud) {
  if (!alloc)
    alloc = default_alloc;
  quill_context *ctx = alloc(ud, NULL, 0, sizeof *ctx);
  if (!ctx)
    return NULL;
  memset(ctx, 0, sizeof *ctx);
  ctx->alloc = alloc;
  ctx->alloc_ud = ud;
  quill_types_init(ctx);
  return ctx;
}

void quill_context_destroy(quill_context *ctx) {
  if (!ctx)
    return;
  for (size_t i = ctx->num_slots; i-- > 0;) {
    quill_slot *sl = &ctx->slots[i];
    if (sl->value && sl->destroy)
      sl->destroy(ctx, sl->value);
  }
  quill_free(ctx, ctx->slots, ctx->cap_slots * sizeof(quill_slot));
  quill_attrs_destroy(ctx);
  quill_types_destroy(ctx);
  for (size_t i = 0; i < ctx->idents.cap; i++) {
    char *s = ctx->idents.slots[i].ptr;
    if (s)
      quill_free(ctx, s, strlen(s) + 1);
  }
  quill_uniq_free(ctx, &ctx->idents);
  for (size_t i = 0; i < ctx->num_sources; i++) {
    quill_source *src = &ctx->sources[i];
    quill_free(ctx, src->text, src->len + 1);
    quill_free(ctx, src->line_starts, src->num_lines * sizeof(size_t));
  }
  quill_free(ctx, ctx->sources, ctx->cap_sources * sizeof(quill_source));
  quill_free(ctx, ctx->debug_channels, ctx->cap_debug * sizeof(quill_ident));
  ctx->alloc(ctx->alloc_ud, ctx, sizeof *ctx, 0);
}

void *quill_alloc(quill_context *ctx, size_t size) {
  return ctx->alloc(ctx->alloc_ud, NULL, 0, size ? size : 1);
}

void *quill_calloc(quill_context *ctx, size_t n, size_t size) {
  if (size && n > SIZE_MAX / size)
    return NULL;
  void *p = quill_alloc(ctx, n * size);
  if (p)
    memset(p, 0, n * size);
  return p;
}

void *quill_realloc(quill_context *ctx, void *ptr, size_t osize, size_t nsize) {
  /* Zero-size blocks are really one byte (see quill_alloc). */
  osize = ptr ? (osize ? osize : 1) : 0;
  return ctx->alloc(ctx->alloc_ud, ptr, osize, nsize ? nsize : 1);
}

void quill_free(quill_context *ctx, void *ptr, size_t size) {
  if (ptr)
    ctx->alloc(ctx->alloc_ud, ptr, size ? size : 1, 0);
}

char *quill_strdup(quill_context *ctx, const char *s) {
  size_t n = strlen(s);
  char *d = quill_alloc(ctx, n + 1);
  if (d)
    memcpy(d, s, n + 1);
  return d;
}

void quill_string_free(quill_context *ctx, char *s) {
  if (s)
    quill_free(ctx, s, strlen(s) + 1);
}

/* ---- hashing and uniquing tables --------------------------------------- */

uint64_t quill_hash_bytes(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  h ^= UINT64_C(0xCBF29CE484222325) ^ n;
  while (n >= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    h = (h ^ w) * UINT64_C(0x100000001B3);
    h ^= h >> 29;
    p += 8;
    n -= 8;
  }
  while (n--)
    h = (h ^ *p++) * UINT64_C(0x100000001B3);
  return quill_hash_u64(h, 0);
}

void *quill_uniq_lookup(const quill_uniq_table *t, uint64_t h,
                        quill_uniq_eq_fn eq, const void *key) {
  if (!t->cap)
    return NULL;
  size_t mask = t->cap - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const quill_uniq_slot *s = &t->slots[i];
    if (!s->ptr)
      return NULL;
    if (s->hash == h && eq(s->ptr, key))
      return s->ptr;
  }
}

static void slot_put(quill_uniq_slot *slots, size_t cap, uint64_t h, void *p) {
  size_t mask = cap - 1;
  size_t i = h & mask;
  while (slots[i].ptr)
    i = (i + 1) & mask;
  slots[i].hash = h;
  slots[i].ptr = p;
}

quill_status quill_uniq_insert(quill_context *ctx, quill_uniq_table *t,
                               uint64_t h, void *p) {
  if ((t->count + 1) * 2 > t->cap) {
    size_t ncap = t->cap ? t->cap * 2 : 64;
    quill_uniq_slot *ns = quill_calloc(ctx, ncap, sizeof *ns);
    if (!ns)
      return QUILL_ERR_NOMEM;
    for (size_t i = 0; i < t->cap; i++)
      if (t->slots[i].ptr)
        slot_put(ns, ncap, t->slots[i].hash, t->slots[i].ptr);
    quill_free(ctx, t->slots, t->cap * sizeof *t->slots);
    t->slots = ns;
    t->cap = ncap;
  }
  slot_put(t->slots, t->cap, h, p);
  t->count++;
  return QUILL_OK;
}

void quill_uniq_free(quill_context *ctx, quill_uniq_table *t) {
  quill_free(ctx, t->slots, t->cap * sizeof *t->slots);
  t->slots = NULL;
  t->cap = t->count = 0;
}

/* ---- identifiers ------------------------------------------------------- */

typedef struct ident_key {
  const char *s;
  size_t n;
} ident_key;

static bool ident_eq(const void *entry, const void *key) {
  const ident_key *k = key;
  const char *e = entry;
  return strncmp(e, k->s, k->n) == 0 && e[k->n] == '\0';
}

quill_ident quill_ident_getn(quill_context *ctx, const char *s, size_t n) {
  if (n == 0)
    s = ""; /* callers may pass NULL for an empty string */
  ident_key k = {s, n};
  uint64_t h = quill_hash_bytes(0, s, n);
  char *e = quill_uniq_lookup(&ctx->idents, h, ident_eq, &k);
  if (e)
    return e;
  /* An identifier with an embedded NUL cannot be represented. */
  if (memchr(s, '\0', n))
    return NULL;
  e = quill_alloc(ctx, n + 1);
  if (!e)
    return NULL;
  memcpy(e, s, n);
  e[n] = '\0';
  if (quill_uniq_insert(ctx, &ctx->idents, h, e) != QUILL_OK) {
    quill_free(ctx, e, n + 1);
    return NULL;
  }
  return e;
}

quill_ident quill_ident_get(quill_context *ctx, const char *s) {
  return quill_ident_getn(ctx, s, strlen(s));
}

quill_ident quill_ident_lookup(quill_context *ctx, const char *s) {
  ident_key k = {s, strlen(s)};
  return quill_uniq_lookup(&ctx->idents, quill_hash_bytes(0, s, k.n), ident_eq,
                           &k);
}

/* ---- locations --------------------------------------------------------- */

quill_loc quill_loc_file(quill_context *ctx, const char *file, uint32_t line,
                         uint32_t col) {
  quill_loc l = {0, 0, 0, 0};
  if (!file || !(l.file = quill_ident_get(ctx, file)))
    return l;
  l.line = line;
  l.col = col;
  return l;
}

quill_loc quill_loc_named(quill_context *ctx, const char *name) {
  quill_loc l = {0, 0, 0, 0};
  if (name)
    l.name = quill_ident_get(ctx, name);
  return l;
}

/* ---- source buffers ---------------------------------------------------- */

static quill_source *find_source(quill_context *ctx, quill_ident file) {
  for (size_t i = 0; i < ctx->num_sources; i++)
    if (ctx->sources[i].file == file)
      return &ctx->sources[i];
  return NULL;
}

quill_status quill_context_add_source(quill_context *ctx, const char *file,
                                      const char *text, size_t len,
                                      uint32_t line_offset) {
  quill_ident f = quill_ident_get(ctx, file);
  if (!f)
    return QUILL_ERR_NOMEM;
  /* Copy the text and index its lines before touching the table, so that
   * a failure leaves the previous registration intact. */
  char *copy = quill_alloc(ctx, len + 1);
  if (!copy)
    return QUILL_ERR_NOMEM;
  memcpy(copy, text, len);
  copy[len] = '\0';
  size_t nlines = 1;
  for (size_t i = 0; i < len; i++)
    if (text[i] == '\n' && i + 1 < len)
      nlines++;
  size_t *starts = quill_alloc(ctx, nlines * sizeof *starts);
  if (!starts) {
    quill_free(ctx, copy, len + 1);
    return QUILL_ERR_NOMEM;
  }
  starts[0] = 0;
  for (size_t i = 0, k = 1; i < len; i++)
    if (text[i] == '\n' && i + 1 < len)
      starts[k++] = i + 1;

  quill_source *src = find_source(ctx, f);
  if (src) {
    quill_free(ctx, src->text, src->len + 1);
    quill_free(ctx, src->line_starts, src->num_lines * sizeof(size_t));
  } else {
    if (ctx->num_sources == ctx->cap_sources) {
      size_t ncap = ctx->cap_sources ? ctx->cap_sources * 2 : 4;
      quill_source *ns = quill_realloc(
          ctx, ctx->sources, ctx->cap_sources * sizeof *ns, ncap * sizeof *ns);
      if (!ns) {
        quill_free(ctx, copy, len + 1);
        quill_free(ctx, starts, nlines * sizeof *starts);
        return QUILL_ERR_NOMEM;
      }
      ctx->sources = ns;
      ctx->cap_sources = ncap;
    }
    src = &ctx->sources[ctx->num_sources++];
    src->file = f;
  }
  src->text = copy;
  src->len = len;
  src->line_offset = line_offset;
  src->line_starts = starts;
  src->num_lines = nlines;
  return QUILL_OK;
}

const char *quill_context_source_line(quill_context *ctx, quill_ident file,
                                      uint32_t line, size_t *len) {
  if (!file)
    return NULL;
  quill_source *src = find_source(ctx, file);
  if (!src || line <= src->line_offset)
    return NULL;
  size_t local = (size_t)(line - src->line_offset) - 1;
  if (local >= src->num_lines)
    return NULL;
  size_t b = src->line_starts[local];
  size_t e = b;
  while (e < src->len && src->text[e] != '\n')
    e++;
  if (e > b && src->text[e - 1] == '\r')
    e--;
  if (len)
    *len = e - b;
  return src->text + b;
}

/* ---- diagnostics ------------------------------------------------------- */

const char *quill_diag_severity_name(quill_diag_severity sev) {
  static const char *const names[] = {
      [QUILL_DIAG_ERROR] = "error",
      [QUILL_DIAG_WARNING] = "warning",
      [QUILL_DIAG_NOTE] = "note",
      [QUILL_DIAG_REMARK] = "remark",
  };
  if ((unsigned)sev >= sizeof names / sizeof names[0])
    return "error";
  return names[sev];
}

void quill_diag_print(quill_context *ctx, FILE *out, quill_loc loc,
                      quill_diag_severity sev, const char *msg) {
  const char *sv = quill_diag_severity_name(sev);
  if (loc.file && loc.line) {
    if (loc.col)
      fprintf(out, "%s:%u:%u: %s: %s\n", loc.file, (unsigned)loc.line,
              (unsigned)loc.col, sv, msg);
    else
      fprintf(out, "%s:%u: %s: %s\n", loc.file, (unsigned)loc.line, sv, msg);
  } else if (loc.file && loc.name) { /* a file and a node in it */
    fprintf(out, "%s: %s: %s: %s\n", loc.file, loc.name, sv, msg);
  } else if (loc.file) {
    fprintf(out, "%s: %s: %s\n", loc.file, sv, msg);
  } else if (loc.name) {
    fprintf(out, "%s: %s: %s\n", loc.name, sv, msg);
  } else {
    fprintf(out, "%s: %s\n", sv, msg);
  }
  if (!loc.file || !loc.line)
    return;
  size_t len = 0;
  const char *text = quill_context_source_line(ctx, loc.file, loc.line, &len);
  if (!text)
    return;
  fprintf(out, "%.*s\n", (int)len, text);
  if (!loc.col)
    return;
  /* Keep tabs so that the caret lines up under the same column. */
  for (size_t i = 0; i + 1 < loc.col; i++)
    fputc(i < len && text[i] == '\t' ? '\t' : ' ', out);
  fputs("^\n", out);
}

void quill_diag_set_handler(quill_context *ctx, quill_diag_handler h,
                            void *ud) {
  ctx->diag_handler = h;
  ctx->diag_ud = h ? ud : NULL;
}

quill_status quill_diag_emitv(quill_context *ctx, quill_loc loc,
                              quill_diag_severity sev, const char *fmt,
                              va_list ap) {
  if (sev == QUILL_DIAG_ERROR)
    ctx->num_errors++;
  quill_strbuf sb;
  quill_strbuf_init(&sb, ctx);
  quill_strbuf_vprintf(&sb, fmt, ap);
  /* On allocation failure still deliver something meaningful. */
  const char *msg = quill_strbuf_failed(&sb) ? "(out of memory formatting "
                                               "diagnostic)"
                                             : quill_strbuf_str(&sb);
  if (ctx->diag_handler)
    ctx->diag_handler(ctx->diag_ud, loc, sev, msg);
  else
    quill_diag_print(ctx, stderr, loc, sev, msg);
  quill_strbuf_free(&sb);
  return QUILL_ERR_INVALID;
}

quill_status quill_diag_emit(quill_context *ctx, quill_loc loc,
                             quill_diag_severity sev, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  quill_status st = quill_diag_emitv(ctx, loc, sev, fmt, ap);
  va_end(ap);
  return st;
}

quill_status quill_error(quill_context *ctx, quill_loc loc, const char *fmt,
                         ...) {
  va_list ap;
  va_start(ap, fmt);
  quill_status st = quill_diag_emitv(ctx, loc, QUILL_DIAG_ERROR, fmt, ap);
  va_end(ap);
  return st;
}

unsigned quill_diag_error_count(const quill_context *ctx) {
  return ctx->num_errors;
}

/* ---- extension slots --------------------------------------------------- */

/* A handful of slots per context: a linear search is the right structure. */
quill_status quill_context_set_slot(quill_context *ctx, const void *key,
                                    void *value,
                                    quill_slot_destroy_fn destroy) {
  for (size_t i = 0; i < ctx->num_slots; i++) {
    quill_slot *sl = &ctx->slots[i];
    if (sl->key != key)
      continue;
    if (sl->value && sl->value != value && sl->destroy)
      sl->destroy(ctx, sl->value);
    sl->value = value;
    sl->destroy = destroy;
    return QUILL_OK;
  }
  if (!value)
    return QUILL_OK;
  if (ctx->num_slots == ctx->cap_slots) {
    size_t ncap = ctx->cap_slots ? ctx->cap_slots * 2 : 4;
    quill_slot *ns = quill_realloc(ctx, ctx->slots,
                                   ctx->cap_slots * sizeof *ns,
                                   ncap * sizeof *ns);
    if (!ns)
      return QUILL_ERR_NOMEM;
    ctx->slots = ns;
    ctx->cap_slots = ncap;
  }
  ctx->slots[ctx->num_slots++] = (quill_slot){key, value, destroy};
  return QUILL_OK;
}

void *quill_context_get_slot(const quill_context *ctx, const void *key) {
  for (size_t i = 0; i < ctx->num_slots; i++)
    if (ctx->slots[i].key == key)
      return ctx->slots[i].value;
  return NULL;
}

/* ---- debug channels ---------------------------------------------------- */

static quill_status add_channel(quill_context *ctx, const char *s, size_t n) {
  if (n == 3 && memcmp(s, "all", 3) == 0) {
    ctx->debug_all = true;
    return QUILL_OK;
  }
  quill_ident id = quill_ident_getn(ctx, s, n);
  if (!id)
    return QUILL_ERR_NOMEM;
  for (size_t i = 0; i < ctx->num_debug; i++)
    if (ctx->debug_channels[i] == id)
      return QUILL_OK;
  if (ctx->num_debug == ctx->cap_debug) {
    size_t ncap = ctx->cap_debug ? ctx->cap_debug * 2 : 8;
    quill_ident *nc =
        quill_realloc(ctx, (void *)ctx->debug_channels,
                      ctx->cap_debug * sizeof *nc, ncap * sizeof *nc);
    if (!nc)
      return QUILL_ERR_NOMEM;
    ctx->debug_channels = nc;
    ctx->cap_debug = ncap;
  }
  ctx->debug_channels[ctx->num_debug++] = id;
  return QUILL_OK;
}

quill_status quill_debug_enable(quill_context *ctx, const char *names) {
  const char *p = names;
  while (*p) {
    const char *e = strchr(p, ',');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    /* trim spaces around each name */
    const char *b = p;
    size_t m = n;
    while (m && (*b == ' ' || *b == '\t'))
      b++, m--;
    while (m && (b[m - 1] == ' ' || b[m - 1] == '\t'))
      m--;
    if (m) {
      quill_status st = add_channel(ctx, b, m);
      if (st != QUILL_OK)
        return st;
    }
    p += n;
    if (*p == ',')
      p++;
  }
  return QUILL_OK;
}

bool quill_debug_enabled(quill_context *ctx, const char *channel) {
  if (ctx->debug_all)
    return true;
  if (!ctx->num_debug || !channel)
    return false;
  quill_ident id = quill_ident_lookup(ctx, channel);
  if (!id)
    return false;
  for (size_t i = 0; i < ctx->num_debug; i++)
    if (ctx->debug_channels[i] == id)
      return true;
  return false;
}

void quill_debug(quill_context *ctx, const char *channel, const char *fmt,
                 ...) {
  if (!quill_debug_enabled(ctx, channel))
    return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "[%s] ", channel);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}
