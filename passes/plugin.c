/*
 * plugin.c - the per-context registry of run-time passes, pattern sets and
 * exporters, and the plugin loader (passes/plugin.h). Custom op kinds have
 * their own registry in the IR (ir/custom_op.c), which plugins register
 * into through this file.
 *
 * The registry is the value of a context slot (quill_context_set_slot),
 * created on first use:
 *
 *   registry
 *     passes[]    {descriptor (borrowed), plugin index or NO_PLUGIN}
 *     patterns[]  {name (owned copy), patterns (borrowed), n, plugin}
 *     exporters[] {descriptor (borrowed), plugin index or NO_PLUGIN}
 *     plugins[]   {path (owned copy), info (in the plugin), dlopen handle}
 *
 * The slot's destructor dlcloses the plugins (last loaded first) and frees
 * the arrays when the context is destroyed; nothing is global.
 *
 * Loading a plugin appends its record first, so that registrations made
 * from its init function carry its index; if anything fails the arrays
 * (and the custom op registry) are cut back to their lengths before the
 * load (rollback) and the object is closed, so a failed load leaves the
 * registries as they were.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <string.h>

#include "ir/custom_op_registry.h"
#include "passes/plugin.h"

#define NO_PLUGIN UINT32_MAX

typedef struct reg_pass {
  const quill_pass *pass;
  uint32_t plugin;
} reg_pass;

typedef struct reg_patterns {
  char *name;
  const quill_pattern *patterns;
  unsigned n;
  uint32_t plugin;
} reg_patterns;

typedef struct reg_exporter {
  const quill_exporter *exporter;
  uint32_t plugin;
} reg_exporter;

typedef struct reg_plugin {
  char *path;
  const quill_plugin_info *info;
  void *handle;
} reg_plugin;

typedef struct registry {
  reg_pass *passes;
  unsigned num_passes, cap_passes;
  reg_patterns *patterns;
  unsigned num_patterns, cap_patterns;
  reg_exporter *exporters;
  unsigned num_exporters, cap_exporters;
  reg_plugin *plugins;
  unsigned num_plugins, cap_plugins;
} registry;

struct quill_plugin_registry {
  quill_context *ctx;
  registry *r;
  uint32_t plugin; /* index into r->plugins */
};

static const char registry_key; /* its address keys the context slot */

static void free_registry(quill_context *ctx, void *value) {
  registry *r = value;
  for (unsigned i = r->num_plugins; i-- > 0;) {
    if (r->plugins[i].handle)
      dlclose(r->plugins[i].handle);
    quill_string_free(ctx, r->plugins[i].path);
  }
  for (unsigned i = 0; i < r->num_patterns; ++i)
    quill_string_free(ctx, r->patterns[i].name);
  quill_free(ctx, r->passes, r->cap_passes * sizeof *r->passes);
  quill_free(ctx, r->patterns, r->cap_patterns * sizeof *r->patterns);
  quill_free(ctx, r->exporters, r->cap_exporters * sizeof *r->exporters);
  quill_free(ctx, r->plugins, r->cap_plugins * sizeof *r->plugins);
  quill_free(ctx, r, sizeof *r);
}

/* The context's registry; NULL if it has none yet (create == false) or on
 * allocation failure. */
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

/* Grow *arr (of *cap elements of size sz) so it holds at least n+1. */
static quill_status grow(quill_context *ctx, void **arr, unsigned *cap,
                         unsigned n, size_t sz) {
  if (n < *cap)
    return QUILL_OK;
  unsigned ncap = *cap ? *cap * 2 : 8;
  void *p = quill_realloc(ctx, *arr, (size_t)*cap * sz, (size_t)ncap * sz);
  if (!p)
    return QUILL_ERR_NOMEM;
  *arr = p;
  *cap = ncap;
  return QUILL_OK;
}

/* ---- registration ------------------------------------------------------- */

static bool valid_name(const char *s) {
  if (!s || !*s)
    return false;
  for (; *s; ++s)
    if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_' && *s != '.')
      return false;
  return true;
}

/* Where registration errors are reported: the plugin's path, or unknown
 * for the application. */
static quill_loc origin_loc(quill_context *ctx, const registry *r,
                            uint32_t plugin) {
  if (plugin == NO_PLUGIN)
    return quill_loc_unknown();
  return quill_loc_file(ctx, r->plugins[plugin].path, 0, 0);
}

/* "pass plugin 'x': " or "" */
static const char *who(const registry *r, uint32_t plugin, char *buf,
                       size_t n) {
  if (plugin == NO_PLUGIN)
    return "";
  snprintf(buf, n, "pass plugin '%s': ", r->plugins[plugin].info->name);
  return buf;
}

/* "the application" or "pass plugin 'x' (path)" */
static const char *owner_name(const registry *r, uint32_t plugin, char *buf,
                              size_t n) {
  if (plugin == NO_PLUGIN)
    return "the application";
  snprintf(buf, n, "pass plugin '%s' (%s)", r->plugins[plugin].info->name,
           r->plugins[plugin].path);
  return buf;
}

static quill_status register_pass(quill_context *ctx, registry *r,
                                  uint32_t plugin, const quill_pass *pass) {
  char buf[256], obuf[4096 + 256];
  quill_loc loc = origin_loc(ctx, r, plugin);
  if (!pass || !valid_name(pass->name) || !pass->run)
    return quill_error(ctx, loc,
                       "%scannot register pass '%s': a pass needs a name of "
                       "[A-Za-z0-9_.-] and a run function",
                       who(r, plugin, buf, sizeof buf),
                       pass && pass->name ? pass->name : "");
  size_t len = strlen(pass->name);
  if (quill_pass_lookup(pass->name, len))
    return quill_error(ctx, loc,
                       "%scannot register pass '%s': a built-in pass has "
                       "that name",
                       who(r, plugin, buf, sizeof buf), pass->name);
  for (unsigned i = 0; i < r->num_passes; ++i)
    if (strcmp(r->passes[i].pass->name, pass->name) == 0)
      return quill_error(ctx, loc,
                         "%scannot register pass '%s': already registered "
                         "by %s",
                         who(r, plugin, buf, sizeof buf), pass->name,
                         owner_name(r, r->passes[i].plugin, obuf,
                                    sizeof obuf));
  if (grow(ctx, (void **)&r->passes, &r->cap_passes, r->num_passes,
           sizeof *r->passes))
    return QUILL_ERR_NOMEM;
  r->passes[r->num_passes++] = (reg_pass){pass, plugin};
  return QUILL_OK;
}

static quill_status register_patterns(quill_context *ctx, registry *r,
                                      uint32_t plugin, const char *name,
                                      const quill_pattern *patterns,
                                      unsigned n) {
  char buf[256], obuf[4096 + 256];
  quill_loc loc = origin_loc(ctx, r, plugin);
  if (!valid_name(name))
    return quill_error(ctx, loc,
                       "%scannot register pattern set '%s': a name of "
                       "[A-Za-z0-9_.-] is needed",
                       who(r, plugin, buf, sizeof buf), name ? name : "");
  if (n == 0 || !patterns)
    return quill_error(ctx, loc,
                       "%scannot register pattern set '%s': it has no "
                       "patterns",
                       who(r, plugin, buf, sizeof buf), name);
  for (unsigned i = 0; i < n; ++i)
    if (!patterns[i].name || !patterns[i].match_and_rewrite ||
        patterns[i].root < -1 || patterns[i].root >= QUILL_OP_COUNT)
      return quill_error(ctx, loc,
                         "%scannot register pattern set '%s': pattern #%u "
                         "needs a name, a root opcode (or -1) and a "
                         "match_and_rewrite function",
                         who(r, plugin, buf, sizeof buf), name, i);
  for (unsigned i = 0; i < r->num_patterns; ++i)
    if (strcmp(r->patterns[i].name, name) == 0)
      return quill_error(ctx, loc,
                         "%scannot register pattern set '%s': already "
                         "registered by %s",
                         who(r, plugin, buf, sizeof buf), name,
                         owner_name(r, r->patterns[i].plugin, obuf,
                                    sizeof obuf));
  if (grow(ctx, (void **)&r->patterns, &r->cap_patterns, r->num_patterns,
           sizeof *r->patterns))
    return QUILL_ERR_NOMEM;
  char *copy = quill_strdup(ctx, name);
  if (!copy)
    return QUILL_ERR_NOMEM;
  r->patterns[r->num_patterns++] = (reg_patterns){copy, patterns, n, plugin};
  return QUILL_OK;
}

static quill_status register_exporter(quill_context *ctx, registry *r,
                                      uint32_t plugin,
                                      const quill_exporter *e) {
  char buf[256], obuf[4096 + 256];
  quill_loc loc = origin_loc(ctx, r, plugin);
  if (!e || !valid_name(e->name) || !e->write)
    return quill_error(ctx, loc,
                       "%scannot register exporter '%s': an exporter needs a "
                       "name of [A-Za-z0-9_.-] and a write function",
                       who(r, plugin, buf, sizeof buf),
                       e && e->name ? e->name : "");
  for (unsigned i = 0; i < r->num_exporters; ++i)
    if (strcmp(r->exporters[i].exporter->name, e->name) == 0)
      return quill_error(ctx, loc,
                         "%scannot register exporter '%s': already "
                         "registered by %s",
                         who(r, plugin, buf, sizeof buf), e->name,
                         owner_name(r, r->exporters[i].plugin, obuf,
                                    sizeof obuf));
  if (grow(ctx, (void **)&r->exporters, &r->cap_exporters, r->num_exporters,
           sizeof *r->exporters))
    return QUILL_ERR_NOMEM;
  r->exporters[r->num_exporters++] = (reg_exporter){e, plugin};
  return QUILL_OK;
}

quill_status quill_pass_register(quill_context *ctx, const quill_pass *pass) {
  registry *r = get_registry(ctx, true);
  return r ? register_pass(ctx, r, NO_PLUGIN, pass) : QUILL_ERR_NOMEM;
}

quill_status quill_patterns_register(quill_context *ctx, const char *name,
                                     const quill_pattern *patterns,
                                     unsigned n) {
  registry *r = get_registry(ctx, true);
  return r ? register_patterns(ctx, r, NO_PLUGIN, name, patterns, n)
           : QUILL_ERR_NOMEM;
}

quill_status quill_exporter_register(quill_context *ctx,
                                     const quill_exporter *e) {
  registry *r = get_registry(ctx, true);
  return r ? register_exporter(ctx, r, NO_PLUGIN, e) : QUILL_ERR_NOMEM;
}

quill_context *quill_plugin_registry_context(quill_plugin_registry *reg) {
  return reg->ctx;
}

quill_status quill_plugin_register_pass(quill_plugin_registry *reg,
                                        const quill_pass *pass) {
  return register_pass(reg->ctx, reg->r, reg->plugin, pass);
}

quill_status quill_plugin_register_patterns(quill_plugin_registry *reg,
                                            const char *name,
                                            const quill_pattern *patterns,
                                            unsigned n) {
  return register_patterns(reg->ctx, reg->r, reg->plugin, name, patterns, n);
}

quill_status quill_plugin_register_custom_op(quill_plugin_registry *reg,
                                             const quill_custom_op *op) {
  char buf[256];
  const registry *r = reg->r;
  return quill_custom_op_register_from(
      reg->ctx, op, r->plugins[reg->plugin].info->name,
      origin_loc(reg->ctx, r, reg->plugin), who(r, reg->plugin, buf, sizeof buf));
}

quill_status quill_plugin_register_exporter(quill_plugin_registry *reg,
                                            const quill_exporter *e) {
  return register_exporter(reg->ctx, reg->r, reg->plugin, e);
}

/* ---- lookup ------------------------------------------------------------- */

const quill_pass *quill_pass_find(quill_context *ctx, const char *name,
                                  size_t len) {
  const quill_pass *p = quill_pass_lookup(name, len);
  registry *r = p || !name ? NULL : get_registry(ctx, false);
  for (unsigned i = 0; r && i < r->num_passes; ++i) {
    const char *n = r->passes[i].pass->name;
    if (strlen(n) == len && memcmp(n, name, len) == 0)
      return r->passes[i].pass;
  }
  return p;
}

unsigned quill_pass_num_registered(quill_context *ctx) {
  registry *r = get_registry(ctx, false);
  return r ? r->num_passes : 0;
}

const quill_pass *quill_pass_registered(quill_context *ctx, unsigned i) {
  registry *r = get_registry(ctx, false);
  return r && i < r->num_passes ? r->passes[i].pass : NULL;
}

const char *quill_pass_registered_origin(quill_context *ctx, unsigned i) {
  registry *r = get_registry(ctx, false);
  if (!r || i >= r->num_passes || r->passes[i].plugin == NO_PLUGIN)
    return NULL;
  return r->plugins[r->passes[i].plugin].info->name;
}

const quill_pattern *quill_patterns_find(quill_context *ctx, const char *name,
                                         unsigned *n) {
  registry *r = get_registry(ctx, false);
  for (unsigned i = 0; r && name && i < r->num_patterns; ++i)
    if (strcmp(r->patterns[i].name, name) == 0) {
      if (n)
        *n = r->patterns[i].n;
      return r->patterns[i].patterns;
    }
  if (n)
    *n = 0;
  return NULL;
}

unsigned quill_patterns_num_registered(quill_context *ctx) {
  registry *r = get_registry(ctx, false);
  return r ? r->num_patterns : 0;
}

const char *quill_patterns_registered_name(quill_context *ctx, unsigned i) {
  registry *r = get_registry(ctx, false);
  return r && i < r->num_patterns ? r->patterns[i].name : NULL;
}

const quill_exporter *quill_exporter_find(quill_context *ctx,
                                          const char *name) {
  registry *r = get_registry(ctx, false);
  for (unsigned i = 0; r && name && i < r->num_exporters; ++i)
    if (strcmp(r->exporters[i].exporter->name, name) == 0)
      return r->exporters[i].exporter;
  return NULL;
}

unsigned quill_exporter_num_registered(quill_context *ctx) {
  registry *r = get_registry(ctx, false);
  return r ? r->num_exporters : 0;
}

const quill_exporter *quill_exporter_registered(quill_context *ctx,
                                                unsigned i) {
  registry *r = get_registry(ctx, false);
  return r && i < r->num_exporters ? r->exporters[i].exporter : NULL;
}

const char *quill_exporter_registered_origin(quill_context *ctx, unsigned i) {
  registry *r = get_registry(ctx, false);
  if (!r || i >= r->num_exporters || r->exporters[i].plugin == NO_PLUGIN)
    return NULL;
  return r->plugins[r->exporters[i].plugin].info->name;
}

unsigned quill_plugin_num_loaded(quill_context *ctx) {
  registry *r = get_registry(ctx, false);
  return r ? r->num_plugins : 0;
}

const quill_plugin_info *quill_plugin_loaded_info(quill_context *ctx,
                                                  unsigned i) {
  registry *r = get_registry(ctx, false);
  return r && i < r->num_plugins ? r->plugins[i].info : NULL;
}

const char *quill_plugin_loaded_path(quill_context *ctx, unsigned i) {
  registry *r = get_registry(ctx, false);
  return r && i < r->num_plugins ? r->plugins[i].path : NULL;
}

/* ---- loading ------------------------------------------------------------ */

/* The registries' lengths before a load. */
typedef struct lengths {
  unsigned passes, patterns, exporters, plugins, custom_ops;
} lengths;

/* Cut the registries back to the given lengths (a failed load). */
static void rollback(quill_context *ctx, registry *r, const lengths *n) {
  for (unsigned i = n->patterns; i < r->num_patterns; ++i)
    quill_string_free(ctx, r->patterns[i].name);
  for (unsigned i = n->plugins; i < r->num_plugins; ++i) {
    if (r->plugins[i].handle)
      dlclose(r->plugins[i].handle);
    quill_string_free(ctx, r->plugins[i].path);
  }
  r->num_passes = n->passes;
  r->num_patterns = n->patterns;
  r->num_exporters = n->exporters;
  r->num_plugins = n->plugins;
  quill_custom_op_truncate(ctx, n->custom_ops);
}

/* dlsym as a function pointer without the object-to-function cast
 * warning (POSIX guarantees the representation). */
static quill_plugin_init_fn find_init(void *handle) {
  quill_plugin_init_fn fn = NULL;
  void *sym = dlsym(handle, "quill_plugin_init");
  if (sym)
    memcpy(&fn, &sym, sizeof fn);
  return fn;
}

quill_status quill_plugin_load(quill_context *ctx, const char *path) {
  registry *r = get_registry(ctx, true);
  if (!r)
    return QUILL_ERR_NOMEM;
  quill_loc loc = quill_loc_file(ctx, path ? path : "", 0, 0);
  if (!path || !*path)
    return quill_error(ctx, loc, "cannot load pass plugin: empty path");
  lengths before = {r->num_passes, r->num_patterns, r->num_exporters,
                    r->num_plugins, quill_custom_op_num_registered(ctx)};
  unsigned nplug = before.plugins;
  if (grow(ctx, (void **)&r->plugins, &r->cap_plugins, r->num_plugins,
           sizeof *r->plugins))
    return QUILL_ERR_NOMEM;
  char *copy = quill_strdup(ctx, path);
  if (!copy)
    return QUILL_ERR_NOMEM;
  reg_plugin *pl = &r->plugins[r->num_plugins++];
  *pl = (reg_plugin){copy, NULL, NULL};

  quill_status st = QUILL_OK;
  dlerror();
  pl->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!pl->handle) {
    const char *why = dlerror();
    st = quill_error(ctx, loc, "cannot load pass plugin: %s",
                     why ? why : "unknown dlopen error");
    if (st == QUILL_ERR_INVALID)
      st = QUILL_ERR_IO;
  }
  if (!st) {
    pl->info = dlsym(pl->handle, "quill_plugin");
    if (!pl->info)
      st = quill_error(ctx, loc,
                       "not a Quill pass plugin: no symbol 'quill_plugin' "
                       "(define the plugin with QUILL_PLUGIN(name, "
                       "version) from <quill/plugin.h>)");
  }
  if (!st && pl->info->api_version != QUILL_PLUGIN_API_VERSION)
    st = quill_error(ctx, loc,
                     "pass plugin '%s' was built for plugin API version %u; "
                     "this Quill has version %u: rebuild the plugin against "
                     "this Quill's headers",
                     pl->info->name ? pl->info->name : "?",
                     (unsigned)pl->info->api_version,
                     (unsigned)QUILL_PLUGIN_API_VERSION);
  if (!st && pl->info->op_count != QUILL_OP_COUNT)
    st = quill_error(ctx, loc,
                     "pass plugin '%s' was built against a Quill with %u "
                     "opcodes; this Quill has %u: rebuild the plugin against "
                     "this Quill's headers",
                     pl->info->name ? pl->info->name : "?",
                     (unsigned)pl->info->op_count, (unsigned)QUILL_OP_COUNT);
  if (!st && !valid_name(pl->info->name))
    st = quill_error(ctx, loc,
                     "pass plugin has an invalid name '%s' (use "
                     "[A-Za-z0-9_.-])",
                     pl->info->name ? pl->info->name : "");
  quill_plugin_init_fn init = NULL;
  if (!st && !(init = find_init(pl->handle)))
    st = quill_error(ctx, loc,
                     "not a Quill pass plugin: no function "
                     "'quill_plugin_init'");
  if (!st) {
    quill_plugin_registry reg = {ctx, r, nplug};
    unsigned errors = quill_diag_error_count(ctx);
    st = init(&reg);
    /* `r->plugins` may have moved; nothing below uses `pl`. */
    const char *name = r->plugins[nplug].info->name;
    if (st && st != QUILL_ERR_NOMEM && quill_diag_error_count(ctx) == errors)
      quill_error(ctx, loc, "pass plugin '%s' failed to initialize", name);
    else if (st && st != QUILL_ERR_NOMEM)
      quill_diag_emit(ctx, loc, QUILL_DIAG_NOTE,
                      "while initializing pass plugin '%s'", name);
  }
  if (st)
    rollback(ctx, r, &before);
  return st;
}
