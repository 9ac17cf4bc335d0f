/*
 * pass_manager.c - pipelines of passes: parsing, options, properties,
 * verification, IR dumps, timing and statistics.
 *
 * A manager holds an ordered list of entries (pass + parsed options) and one
 * record per pass instance that collects wall time and statistics:
 *
 *   "canonicalize{max-iterations=4},cse"
 *        |                                parse_pipeline()
 *        v
 *   entries: [canonicalize {max-iterations=4}] [cse {}]
 *   records: [canonicalize: 0.3ms, num-rewrites 2] [cse: 0.1ms, num-cse'd 1]
 *                                         (+ records for implicit runs)
 *
 * Running keeps a bit set of valid IR properties (QUILL_PROP_*), empty at
 * the start. Before each pass, every required property that is not valid is
 * established by running its registered pass (props[] below: dce, cse,
 * constant-fold, canonicalize) as an "implicit" run. After a pass the set
 * becomes (valid & preserves) | establishes, or valid | establishes if the
 * pass called quill_pass_mark_unchanged(). This is libfirm's assure/confirm
 * made declarative.
 *
 * After each pass (implicit ones too) the module is verified unless
 * verify_each is off; IR dumps use MLIR's banner
 * "// -----// IR Dump After cse //----- //".
 *
 * Non-string inputs (an in-memory calibration dataset) are handed over with
 * quill_pass_manager_set_input(pm, key, ptr) and read by passes with
 * quill_pass_input(ps, key): a small borrowed key -> pointer table.
 *
 * Pass options are "key=value" words separated by blanks. The keys a pass
 * accepts are those documented in its descriptor's `options` string, which
 * has the same shape ("max-iterations=N"); a documented value of `N` means
 * the value must be an integer, `BOOL` true or false.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "passes/pass.h"

typedef struct pm_stat {
  char *name;
  uint64_t value;
} pm_stat;

/* Time and statistics of one pass instance (or of all implicit runs of a
 * pass). */
typedef struct pm_record {
  const quill_pass *pass;
  bool implicit;
  unsigned runs;
  double seconds;
  pm_stat *stats;
  unsigned num_stats, cap_stats;
} pm_record;

typedef struct pm_opt {
  char *key;
  char *value;
} pm_opt;

/* A non-string input for passes (quill_pass_manager_set_input). */
typedef struct pm_input {
  char *key;
  void *value; /* borrowed */
} pm_input;

typedef struct pm_entry {
  const quill_pass *pass;
  pm_opt *opts;
  unsigned num_opts;
  unsigned record; /* index into pm->records */
} pm_entry;

struct quill_pass_manager {
  quill_context *ctx;
  quill_pass_manager_options o;
  pm_entry *entries;
  unsigned num_entries, cap_entries;
  pm_record **records;
  unsigned num_records, cap_records;
  pm_input *inputs;
  unsigned num_inputs, cap_inputs;
  unsigned valid; /* QUILL_PROP_* currently known to hold */
  double total_seconds, verify_seconds;
};

struct quill_pass_state {
  quill_pass_manager *pm;
  const quill_pass *pass;
  const pm_opt *opts;
  unsigned num_opts;
  pm_record *record;
  bool unchanged;
};

/* Which registered pass establishes each property. */
static const struct {
  unsigned prop;
  const char *pass;
} props[] = {
    {QUILL_PROP_NO_DEAD_OPS, "dce"},
    {QUILL_PROP_NO_COMMON_SUBEXPR, "cse"},
    {QUILL_PROP_CONSTANTS_FOLDED, "constant-fold"},
    {QUILL_PROP_CANONICAL, "canonicalize"},
};

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static FILE *dump_stream(const quill_pass_manager *pm) {
  return pm->o.dump_stream ? pm->o.dump_stream : stderr;
}

/* Grow *arr (of *cap elements of size sz) so it holds at least n+1. */
static quill_status grow(quill_context *ctx, void **arr, unsigned *cap,
                         unsigned n, size_t sz) {
  if (n < *cap)
    return QUILL_OK;
  unsigned ncap = *cap ? *cap * 2 : 4;
  void *p = quill_realloc(ctx, *arr, (size_t)*cap * sz, (size_t)ncap * sz);
  if (!p)
    return QUILL_ERR_NOMEM;
  *arr = p;
  *cap = ncap;
  return QUILL_OK;
}

/* ---- creation ------------------------------------------------------------ */

quill_pass_manager *quill_pass_manager_create(quill_context *ctx) {
  quill_pass_manager *pm = quill_calloc(ctx, 1, sizeof *pm);
  if (!pm)
    return NULL;
  pm->ctx = ctx;
  pm->o.verify_each = true;
  return pm;
}

static void free_record(quill_context *ctx, pm_record *r) {
  for (unsigned i = 0; i < r->num_stats; ++i)
    quill_string_free(ctx, r->stats[i].name);
  quill_free(ctx, r->stats, r->cap_stats * sizeof *r->stats);
  quill_free(ctx, r, sizeof *r);
}

static void free_opts(quill_context *ctx, pm_opt *opts, unsigned n) {
  for (unsigned i = 0; i < n; ++i) {
    quill_string_free(ctx, opts[i].key);
    quill_string_free(ctx, opts[i].value);
  }
  quill_free(ctx, opts, n * sizeof *opts);
}

void quill_pass_manager_destroy(quill_pass_manager *pm) {
  if (!pm)
    return;
  quill_context *ctx = pm->ctx;
  for (unsigned i = 0; i < pm->num_entries; ++i)
    free_opts(ctx, pm->entries[i].opts, pm->entries[i].num_opts);
  quill_free(ctx, pm->entries, pm->cap_entries * sizeof *pm->entries);
  for (unsigned i = 0; i < pm->num_records; ++i)
    free_record(ctx, pm->records[i]);
  quill_free(ctx, pm->records, pm->cap_records * sizeof *pm->records);
  for (unsigned i = 0; i < pm->num_inputs; ++i)
    quill_string_free(ctx, pm->inputs[i].key);
  quill_free(ctx, pm->inputs, pm->cap_inputs * sizeof *pm->inputs);
  quill_free(ctx, pm, sizeof *pm);
}

void quill_pass_manager_set_options(quill_pass_manager *pm,
                                    const quill_pass_manager_options *o) {
  if (o)
    pm->o = *o;
}

quill_status quill_pass_manager_set_input(quill_pass_manager *pm,
                                          const char *key, void *value) {
  for (unsigned i = 0; i < pm->num_inputs; ++i) {
    if (strcmp(pm->inputs[i].key, key) != 0)
      continue;
    if (value) {
      pm->inputs[i].value = value;
      return QUILL_OK;
    }
    quill_string_free(pm->ctx, pm->inputs[i].key);
    pm->inputs[i] = pm->inputs[--pm->num_inputs];
    return QUILL_OK;
  }
  if (!value)
    return QUILL_OK;
  if (grow(pm->ctx, (void **)&pm->inputs, &pm->cap_inputs, pm->num_inputs,
           sizeof *pm->inputs))
    return QUILL_ERR_NOMEM;
  char *k = quill_strdup(pm->ctx, key);
  if (!k)
    return QUILL_ERR_NOMEM;
  pm->inputs[pm->num_inputs++] = (pm_input){k, value};
  return QUILL_OK;
}

static pm_record *new_record(quill_pass_manager *pm, const quill_pass *p,
                             bool implicit) {
  if (grow(pm->ctx, (void **)&pm->records, &pm->cap_records,
           pm->num_records, sizeof *pm->records))
    return NULL;
  pm_record *r = quill_calloc(pm->ctx, 1, sizeof *r);
  if (!r)
    return NULL;
  r->pass = p;
  r->implicit = implicit;
  pm->records[pm->num_records++] = r;
  return r;
}

/* ---- options ------------------------------------------------------------- */

/* Find `key` (len bytes) among the documented options of p. On success
 * store the documented value placeholder ("N", "BOOL", ...) in *doc and
 * *doclen. */
static bool find_documented(const quill_pass *p, const char *key, size_t len,
                            const char **doc, size_t *doclen) {
  const char *s = p->options;
  while (s && *s) {
    while (*s && (isspace((unsigned char)*s) || *s == ','))
      ++s;
    const char *k = s;
    while (*s && *s != '=' && *s != ',' && !isspace((unsigned char)*s))
      ++s;
    size_t klen = (size_t)(s - k);
    const char *v = s;
    if (*s == '=') {
      v = ++s;
      while (*s && *s != ',' && !isspace((unsigned char)*s))
        ++s;
    }
    if (klen && klen == len && memcmp(k, key, len) == 0) {
      *doc = v;
      *doclen = (size_t)(s - v);
      return true;
    }
  }
  return false;
}

static bool parse_int(const char *s, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 0);
  if (errno || end == s || *end)
    return false;
  *out = (int64_t)v;
  return true;
}

/* Report an error mentioning the pipeline column when there is one. */
static quill_status opt_error(quill_pass_manager *pm, unsigned col,
                              const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static quill_status opt_error(quill_pass_manager *pm, unsigned col,
                              const char *fmt, ...) {
  quill_strbuf sb;
  quill_strbuf_init(&sb, pm->ctx);
  va_list ap;
  va_start(ap, fmt);
  quill_strbuf_vprintf(&sb, fmt, ap);
  va_end(ap);
  if (col)
    quill_strbuf_printf(&sb, " in pipeline at column %u", col);
  quill_error(pm->ctx, quill_loc_unknown(), "%s", quill_strbuf_str(&sb));
  quill_strbuf_free(&sb);
  return QUILL_ERR_INVALID;
}

/* Parse the option text "k=v k2=v2" (len bytes) for pass p into a new
 * array. `col` is the 1-based pipeline column of text[0], or 0. */
static quill_status parse_options(quill_pass_manager *pm, const quill_pass *p,
                                  const char *text, size_t len, unsigned col,
                                  pm_opt **out, unsigned *nout) {
  quill_context *ctx = pm->ctx;
  pm_opt *opts = NULL;
  unsigned n = 0, cap = 0;
  quill_status st = QUILL_OK;
  size_t i = 0;
  *out = NULL;
  *nout = 0;
  while (text && i < len) {
    while (i < len && isspace((unsigned char)text[i]))
      ++i;
    if (i == len)
      break;
    size_t ks = i;
    while (i < len && text[i] != '=' && !isspace((unsigned char)text[i]))
      ++i;
    size_t klen = i - ks;
    unsigned kcol = col ? col + (unsigned)ks : 0;
    if (i == len || text[i] != '=' || klen == 0) {
      st = opt_error(pm, kcol, "expected 'key=value' option for pass '%s'",
                     p->name);
      break;
    }
    ++i;
    size_t vs = i;
    while (i < len && !isspace((unsigned char)text[i]))
      ++i;
    const char *doc;
    size_t doclen;
    if (!find_documented(p, text + ks, klen, &doc, &doclen)) {
      st = opt_error(pm, kcol, "unknown option '%.*s' for pass '%s' (%s%s)",
                     (int)klen, text + ks, p->name,
                     p->options ? "valid: " : "it takes no options",
                     p->options ? p->options : "");
      break;
    }
    if ((st = grow(ctx, (void **)&opts, &cap, n, sizeof *opts)))
      break;
    opts[n].key = quill_alloc(ctx, klen + 1);
    opts[n].value = quill_alloc(ctx, i - vs + 1);
    if (!opts[n].key || !opts[n].value) {
      if (opts[n].key)
        quill_free(ctx, opts[n].key, klen + 1);
      if (opts[n].value)
        quill_free(ctx, opts[n].value, i - vs + 1);
      st = QUILL_ERR_NOMEM;
      break;
    }
    memcpy(opts[n].key, text + ks, klen);
    opts[n].key[klen] = 0;
    memcpy(opts[n].value, text + vs, i - vs);
    opts[n].value[i - vs] = 0;
    ++n;
    int64_t iv;
    const char *v = opts[n - 1].value;
    if (doclen == 1 && doc[0] == 'N' && !parse_int(v, &iv)) {
      st = opt_error(pm, col ? col + (unsigned)vs : 0,
                     "option '%.*s' of pass '%s' expects an integer, got '%s'",
                     (int)klen, text + ks, p->name, v);
      break;
    }
    if (doclen == 4 && memcmp(doc, "BOOL", 4) == 0 && strcmp(v, "true") &&
        strcmp(v, "false")) {
      st = opt_error(pm, col ? col + (unsigned)vs : 0,
                     "option '%.*s' of pass '%s' expects true or false, got "
                     "'%s'",
                     (int)klen, text + ks, p->name, v);
      break;
    }
  }
  if (st) {
    /* free_opts frees by count; the array capacity is what was allocated */
    for (unsigned k = 0; k < n; ++k) {
      quill_string_free(ctx, opts[k].key);
      quill_string_free(ctx, opts[k].value);
    }
    quill_free(ctx, opts, cap * sizeof *opts);
    return st;
  }
  /* Shrink to exactly n so that free_opts() can size the block. */
  if (cap != n) {
    pm_opt *shrunk = n ? quill_realloc(ctx, opts, cap * sizeof *opts,
                                       n * sizeof *opts)
                       : NULL;
    if (n && !shrunk) {
      free_opts(ctx, opts, n);
      return QUILL_ERR_NOMEM;
    }
    if (!n)
      quill_free(ctx, opts, cap * sizeof *opts);
    opts = shrunk;
  }
  *out = opts;
  *nout = n;
  return QUILL_OK;
}

static quill_status add_entry(quill_pass_manager *pm, const quill_pass *p,
                              const char *opts, size_t len, unsigned col) {
  pm_opt *o;
  unsigned n;
  quill_status st = parse_options(pm, p, opts, len, col, &o, &n);
  if (st)
    return st;
  if (grow(pm->ctx, (void **)&pm->entries, &pm->cap_entries, pm->num_entries,
           sizeof *pm->entries)) {
    free_opts(pm->ctx, o, n);
    return QUILL_ERR_NOMEM;
  }
  pm_record *r = new_record(pm, p, false);
  if (!r) {
    free_opts(pm->ctx, o, n);
    return QUILL_ERR_NOMEM;
  }
  pm_entry *e = &pm->entries[pm->num_entries++];
  e->pass = p;
  e->opts = o;
  e->num_opts = n;
  e->record = pm->num_records - 1;
  return QUILL_OK;
}

quill_status quill_pass_manager_add_pass(quill_pass_manager *pm,
                                         const quill_pass *pass,
                                         const char *options) {
  if (!pass || !pass->name || !pass->run)
    return quill_error(pm->ctx, quill_loc_unknown(),
                       "invalid pass descriptor");
  return add_entry(pm, pass, options, options ? strlen(options) : 0, 0);
}

quill_status quill_pass_manager_add(quill_pass_manager *pm, const char *name,
                                    const char *options) {
  const quill_pass *p = quill_pass_lookup(name, name ? strlen(name) : 0);
  if (!p)
    return quill_error(pm->ctx, quill_loc_unknown(), "unknown pass '%s'",
                       name ? name : "");
  return quill_pass_manager_add_pass(pm, p, options);
}

/* ---- pipeline text ------------------------------------------------------- */

static bool is_name_char(char c) {
  return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.';
}

/* pipeline  ::= ws (pass-spec (ws ',' ws pass-spec)*)? ws
 * pass-spec ::= name ws ('{' options '}')?
 * name      ::= [A-Za-z0-9_.-]+
 * Columns in messages are 1-based byte offsets into the pipeline text. */
quill_status quill_pass_manager_parse_pipeline(quill_pass_manager *pm,
                                               const char *pipeline) {
  const char *s = pipeline ? pipeline : "";
  size_t i = 0, n = strlen(s);
#define COL(pos) ((unsigned)(pos) + 1)
  while (i < n && isspace((unsigned char)s[i]))
    ++i;
  if (i == n)
    return QUILL_OK; /* an empty pipeline runs nothing */
  for (;;) {
    size_t ns = i;
    while (i < n && is_name_char(s[i]))
      ++i;
    if (i == ns) {
      if (i == n)
        return opt_error(pm, COL(i), "expected pass name at end of input");
      return opt_error(pm, COL(i), "expected pass name, got '%c'", s[i]);
    }
    const quill_pass *p = quill_pass_lookup(s + ns, i - ns);
    if (!p)
      return opt_error(pm, COL(ns), "unknown pass '%.*s'", (int)(i - ns),
                       s + ns);
    while (i < n && isspace((unsigned char)s[i]))
      ++i;
    const char *opts = NULL;
    size_t olen = 0, ostart = i;
    if (i < n && s[i] == '{') {
      size_t open = i++;
      ostart = i;
      while (i < n && s[i] != '}' && s[i] != '{')
        ++i;
      if (i == n || s[i] != '}')
        return opt_error(pm, COL(open), "unterminated '{' of pass '%s'",
                         p->name);
      opts = s + ostart;
      olen = i - ostart;
      ++i;
    }
    quill_status st = add_entry(pm, p, opts, olen, COL(ostart));
    if (st)
      return st;
    while (i < n && isspace((unsigned char)s[i]))
      ++i;
    if (i == n)
      return QUILL_OK;
    if (s[i] != ',')
      return opt_error(pm, COL(i), "expected ',' after pass '%s', got '%c'",
                       p->name, s[i]);
    ++i;
    while (i < n && isspace((unsigned char)s[i]))
      ++i;
  }
#undef COL
}

/* ---- what a running pass sees -------------------------------------------- */

quill_context *quill_pass_context(quill_pass_state *ps) { return ps->pm->ctx; }

const quill_pass *quill_pass_current(quill_pass_state *ps) { return ps->pass; }

const char *quill_pass_option(quill_pass_state *ps, const char *key) {
  /* The last occurrence wins, as on a command line. */
  for (unsigned i = ps->num_opts; i-- > 0;)
    if (strcmp(ps->opts[i].key, key) == 0)
      return ps->opts[i].value;
  return NULL;
}

void *quill_pass_input(quill_pass_state *ps, const char *key) {
  const quill_pass_manager *pm = ps->pm;
  for (unsigned i = 0; i < pm->num_inputs; ++i)
    if (strcmp(pm->inputs[i].key, key) == 0)
      return pm->inputs[i].value;
  return NULL;
}

int64_t quill_pass_option_int(quill_pass_state *ps, const char *key,
                              int64_t dflt, quill_status *err) {
  if (err)
    *err = QUILL_OK;
  const char *v = quill_pass_option(ps, key);
  int64_t out;
  if (!v)
    return dflt;
  if (!parse_int(v, &out)) {
    quill_error(ps->pm->ctx, quill_loc_unknown(),
                "option '%s' of pass '%s' expects an integer, got '%s'", key,
                ps->pass->name, v);
    if (err)
      *err = QUILL_ERR_INVALID;
    return dflt;
  }
  return out;
}

void quill_pass_stat_add(quill_pass_state *ps, const char *stat, uint64_t n) {
  pm_record *r = ps->record;
  if (!r || !stat)
    return;
  for (unsigned i = 0; i < r->num_stats; ++i)
    if (strcmp(r->stats[i].name, stat) == 0) {
      r->stats[i].value += n;
      return;
    }
  /* Statistics are best effort: on allocation failure the count is lost. */
  if (grow(ps->pm->ctx, (void **)&r->stats, &r->cap_stats, r->num_stats,
           sizeof *r->stats))
    return;
  char *name = quill_strdup(ps->pm->ctx, stat);
  if (!name)
    return;
  r->stats[r->num_stats].name = name;
  r->stats[r->num_stats].value = n;
  r->num_stats++;
}

void quill_pass_mark_unchanged(quill_pass_state *ps) { ps->unchanged = true; }

void quill_pass_debug(quill_pass_state *ps, const char *fmt, ...) {
  quill_context *ctx = ps->pm->ctx;
  if (!quill_debug_enabled(ctx, ps->pass->name))
    return;
  quill_strbuf sb;
  quill_strbuf_init(&sb, ctx);
  va_list ap;
  va_start(ap, fmt);
  quill_strbuf_vprintf(&sb, fmt, ap);
  va_end(ap);
  quill_debug(ctx, ps->pass->name, "%s", quill_strbuf_str(&sb));
  quill_strbuf_free(&sb);
}

/* ---- running --------------------------------------------------------------- */

/* Is `name` in the comma-separated list? */
static bool in_list(const char *list, const char *name) {
  size_t len = strlen(name);
  for (const char *s = list; s && *s;) {
    const char *e = strchr(s, ',');
    size_t l = e ? (size_t)(e - s) : strlen(s);
    if (l == len && memcmp(s, name, len) == 0)
      return true;
    s = e ? e + 1 : NULL;
  }
  return false;
}

static void dump_ir(quill_pass_manager *pm, const char *when,
                    const quill_pass *p, quill_module *m) {
  FILE *out = dump_stream(pm);
  quill_strbuf sb;
  quill_strbuf_init(&sb, pm->ctx);
  quill_print_module(m, &sb, NULL);
  fprintf(out, "// -----// IR Dump %s %s //----- //\n%s\n", when, p->name,
          quill_strbuf_str(&sb));
  fflush(out);
  quill_strbuf_free(&sb);
}

static pm_record *implicit_record(quill_pass_manager *pm, const quill_pass *p) {
  for (unsigned i = 0; i < pm->num_records; ++i)
    if (pm->records[i]->implicit && pm->records[i]->pass == p)
      return pm->records[i];
  return new_record(pm, p, true);
}

static quill_status run_pass(quill_pass_manager *pm, const quill_pass *p,
                             const pm_opt *opts, unsigned nopts,
                             pm_record *rec, quill_module *m, unsigned depth);

/* Make every property in `need` valid, running establishing passes. */
static quill_status establish(quill_pass_manager *pm, const quill_pass *user,
                              unsigned need, quill_module *m, unsigned depth) {
  if (depth > 8)
    return quill_error(pm->ctx, quill_loc_unknown(),
                       "cyclic property requirements while preparing pass "
                       "'%s'",
                       user->name);
  for (unsigned k = 0; k < sizeof props / sizeof props[0]; ++k) {
    if (!(need & props[k].prop) || (pm->valid & props[k].prop))
      continue;
    const quill_pass *est =
        quill_pass_lookup(props[k].pass, strlen(props[k].pass));
    if (!est)
      return quill_error(pm->ctx, quill_loc_unknown(),
                         "no registered pass '%s' to establish a property "
                         "required by pass '%s'",
                         props[k].pass, user->name);
    pm_record *rec = implicit_record(pm, est);
    if (!rec)
      return QUILL_ERR_NOMEM;
    quill_status st = run_pass(pm, est, NULL, 0, rec, m, depth + 1);
    if (st)
      return st;
    if (!(pm->valid & props[k].prop))
      return quill_error(pm->ctx, quill_loc_unknown(),
                         "pass '%s' did not establish the property required "
                         "by pass '%s'",
                         est->name, user->name);
  }
  /* A later establishing pass may have invalidated an earlier property. */
  if (need & ~pm->valid & QUILL_PROP_ALL) {
    unsigned known = 0;
    for (unsigned k = 0; k < sizeof props / sizeof props[0]; ++k)
      known |= props[k].prop;
    if (need & ~pm->valid & ~known)
      return quill_error(pm->ctx, quill_loc_unknown(),
                         "pass '%s' requires a property no pass establishes",
                         user->name);
    return establish(pm, user, need, m, depth + 1);
  }
  return QUILL_OK;
}

static quill_status run_pass(quill_pass_manager *pm, const quill_pass *p,
                             const pm_opt *opts, unsigned nopts,
                             pm_record *rec, quill_module *m, unsigned depth) {
  quill_status st = establish(pm, p, p->requires, m, depth);
  if (st)
    return st;
  if (pm->o.print_ir_before_all ||
      (pm->o.print_ir_before && in_list(pm->o.print_ir_before, p->name)))
    dump_ir(pm, "Before", p, m);

  quill_pass_state ps = {pm, p, opts, nopts, rec, false};
  double t0 = now_seconds();
  st = p->run(&ps, m);
  double t1 = now_seconds();
  rec->seconds += t1 - t0;
  rec->runs++;
  if (st)
    return st;

  if (ps.unchanged)
    pm->valid |= p->establishes;
  else
    pm->valid = (pm->valid & p->preserves) | p->establishes;

  if (pm->o.print_ir_after_all ||
      (pm->o.print_ir_after && in_list(pm->o.print_ir_after, p->name)))
    dump_ir(pm, "After", p, m);

  if (pm->o.verify_each) {
    double v0 = now_seconds();
    st = quill_verify_module(m);
    pm->verify_seconds += now_seconds() - v0;
    if (st)
      return quill_error(pm->ctx, quill_loc_unknown(),
                         "verifier failed after pass '%s'", p->name);
  }
  return QUILL_OK;
}

quill_status quill_pass_manager_run(quill_pass_manager *pm, quill_module *m) {
  double t0 = now_seconds();
  quill_status st = QUILL_OK;
  pm->valid = 0;
  for (unsigned i = 0; i < pm->num_entries && !st; ++i) {
    pm_entry *e = &pm->entries[i];
    st = run_pass(pm, e->pass, e->opts, e->num_opts, pm->records[e->record],
                  m, 0);
  }
  pm->total_seconds += now_seconds() - t0;
  return st;
}

/* ---- reports --------------------------------------------------------------- */

static const char *const rule =
    "===-------------------------------------------------------------------"
    "------===\n";

static void print_banner(FILE *out, const char *title) {
  /* Centre the title in the 80-column rule, as MLIR does. */
  int len = (int)strlen(title) + 8;
  int pad = (80 - len) / 2;
  fprintf(out, "%s%*s... %s ...\n%s", rule, pad > 0 ? pad : 0, "", title,
          rule);
}

static void record_label(const pm_record *r, char *buf, size_t n) {
  snprintf(buf, n, "%s%s", r->pass->name, r->implicit ? " (implicit)" : "");
}

void quill_pass_manager_report(quill_pass_manager *pm) {
  FILE *out = dump_stream(pm);
  char label[256];
  if (pm->o.time_passes) {
    double total = pm->total_seconds > 0 ? pm->total_seconds : 1e-12;
    print_banner(out, "Pass execution timing report");
    fprintf(out, "  Total Execution Time: %.4f seconds\n\n", pm->total_seconds);
    fprintf(out, "  ----Wall Time----  ----Name----\n");
    for (unsigned i = 0; i < pm->num_records; ++i) {
      const pm_record *r = pm->records[i];
      if (!r->runs)
        continue;
      record_label(r, label, sizeof label);
      fprintf(out, "  %8.4f (%5.1f%%)  %s\n", r->seconds,
              100.0 * r->seconds / total, label);
    }
    if (pm->o.verify_each)
      fprintf(out, "  %8.4f (%5.1f%%)  (verifier)\n", pm->verify_seconds,
              100.0 * pm->verify_seconds / total);
    fprintf(out, "  %8.4f (%5.1f%%)  Total\n", pm->total_seconds, 100.0);
  }
  if (pm->o.statistics) {
    print_banner(out, "Pass statistics report");
    for (unsigned i = 0; i < pm->num_records; ++i) {
      const pm_record *r = pm->records[i];
      if (r->implicit && !r->runs)
        continue;
      record_label(r, label, sizeof label);
      fprintf(out, "%s\n", label);
      for (unsigned k = 0; k < r->num_stats; ++k)
        fprintf(out, "  (S) %llu %s\n", (unsigned long long)r->stats[k].value,
                r->stats[k].name);
    }
  }
  fflush(out);
}
