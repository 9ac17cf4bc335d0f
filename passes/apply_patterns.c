/*
 * apply_patterns.c - the `apply-patterns` pass: apply pattern sets
 * registered at run time (passes/plugin.h: by the application or a pass
 * plugin) with the greedy driver, to every graph of the module.
 *
 *   apply-patterns{sets=fold-double-neg,my-set max-iterations=4}
 *
 * The named sets are joined into one pattern set (the driver orders the
 * patterns by benefit); an unknown name is an error listing the registered
 * ones. Statistic num-rewrites; failure reasons go to the debug channel
 * "apply-patterns" (--debug-only=apply-patterns).
 */
#include <string.h>

#include "passes/pass.h"
#include "passes/plugin.h"
#include "passes/rewriter.h"

/* Add the registered set named by the `len` bytes at `name`. */
static quill_status add_set(quill_context *ctx, quill_pattern_set *set,
                            const char *name, size_t len) {
  char buf[256];
  if (len == 0 || len >= sizeof buf)
    return quill_error(ctx, quill_loc_unknown(),
                       "pass 'apply-patterns': bad pattern set name in "
                       "sets=");
  memcpy(buf, name, len);
  buf[len] = '\0';
  unsigned n = 0;
  const quill_pattern *pats = quill_patterns_find(ctx, buf, &n);
  if (!pats) {
    quill_strbuf known;
    quill_strbuf_init(&known, ctx);
    for (unsigned i = 0; i < quill_patterns_num_registered(ctx); ++i)
      quill_strbuf_printf(&known, "%s'%s'", i ? ", " : "",
                          quill_patterns_registered_name(ctx, i));
    quill_status st = quill_error(
        ctx, quill_loc_unknown(),
        "pass 'apply-patterns': unknown pattern set '%s' (registered: %s)",
        buf, known.len ? quill_strbuf_str(&known) : "none");
    quill_strbuf_free(&known);
    return st;
  }
  for (unsigned i = 0; i < n; ++i) {
    quill_status st = quill_pattern_set_add(set, &pats[i]);
    if (st)
      return st;
  }
  return QUILL_OK;
}

static quill_status apply_patterns_run(quill_pass_state *ps, quill_module *m) {
  quill_context *ctx = quill_pass_context(ps);
  quill_status st = QUILL_OK;
  const char *sets = quill_pass_option(ps, "sets");
  if (!sets || !*sets)
    return quill_error(ctx, quill_loc_unknown(),
                       "pass 'apply-patterns' needs the option "
                       "sets=NAME[,NAME...]");
  int64_t max_it = quill_pass_option_int(ps, "max-iterations", 10, &st);
  if (st)
    return st;
  if (max_it <= 0 || max_it > 1000000)
    return quill_error(ctx, quill_loc_unknown(),
                       "option 'max-iterations' of pass 'apply-patterns' "
                       "must be between 1 and 1000000, got %lld",
                       (long long)max_it);
  quill_pattern_set *set = quill_pattern_set_create(ctx);
  if (!set)
    return QUILL_ERR_NOMEM;
  for (const char *s = sets; !st && s;) {
    const char *e = strchr(s, ',');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    st = add_set(ctx, set, s, len);
    s = e ? e + 1 : NULL;
  }
  quill_greedy_config cfg = {(unsigned)max_it, true, "apply-patterns"};
  bool any = false;
  uint64_t total = 0;
  if (!st)
    st = quill_apply_patterns_module(m, set, &cfg, &any, &total);
  quill_pattern_set_destroy(set);
  quill_pass_stat_add(ps, "num-rewrites", total);
  if (!st && !any)
    quill_pass_mark_unchanged(ps);
  return st;
}

const quill_pass quill_pass_apply_patterns = {
    .name = "apply-patterns",
    .summary = "Apply pattern sets registered at run time (by the "
               "application or a pass plugin)",
    .run = apply_patterns_run,
    .requires = 0,
    .establishes = 0,
    .preserves = 0,
    .options = "sets=NAMES max-iterations=N",
};
