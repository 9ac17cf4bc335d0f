/*
 * bad_plugin.c - broken pass plugins for the loader's error tests
 * (plugin-errors.test). test/CMakeLists.txt builds one shared object per
 * BAD_* macro:
 *
 *   libbad_not_plugin.so   no quill_plugin symbol at all
 *   libbad_no_init.so      quill_plugin but no quill_plugin_init
 *   libbad_abi.so          built "for" plugin API version 999
 *   libbad_op_count.so     built against a different opcode count
 *   libbad_dup_builtin.so  registers a pass named like a built-in (cse)
 *   libbad_init_fails.so   registers a pass, a custom op and an exporter,
 *                          then fails its init (all three rolled back)
 *   libbad_dup_custom.so   registers the same custom op kind twice
 *   libbad_exporter.so     registers an exporter without a write function
 */
#include "quill/plugin.h"

static quill_status nothing(quill_pass_state *ps, quill_module *m) {
  (void)ps;
  (void)m;
  return QUILL_OK;
}

#if defined(BAD_NOT_PLUGIN)
QUILL_PLUGIN_EXPORT int not_a_plugin = 1;
#elif defined(BAD_NO_INIT)
QUILL_PLUGIN_EXPORT const quill_plugin_info quill_plugin = {
    QUILL_PLUGIN_API_VERSION, QUILL_OP_COUNT, "no-init", "0"};
#elif defined(BAD_ABI)
QUILL_PLUGIN_EXPORT const quill_plugin_info quill_plugin = {
    999, QUILL_OP_COUNT, "from-the-future", "0"};
QUILL_PLUGIN_EXPORT quill_status quill_plugin_init(quill_plugin_registry *r);
quill_status quill_plugin_init(quill_plugin_registry *r) {
  (void)r;
  return QUILL_OK;
}
#elif defined(BAD_OP_COUNT)
QUILL_PLUGIN_EXPORT const quill_plugin_info quill_plugin = {
    QUILL_PLUGIN_API_VERSION, QUILL_OP_COUNT + 1, "other-ops", "0"};
QUILL_PLUGIN_EXPORT quill_status quill_plugin_init(quill_plugin_registry *r);
quill_status quill_plugin_init(quill_plugin_registry *r) {
  (void)r;
  return QUILL_OK;
}
#elif defined(BAD_DUP_BUILTIN)
static const quill_pass fake_cse = {.name = "cse", .summary = "not cse",
                                    .run = nothing};
QUILL_PLUGIN("dup-builtin", "0") {
  return quill_plugin_register_pass(reg, &fake_cse);
}
#elif defined(BAD_INIT_FAILS)
static const quill_pass half = {.name = "half-registered",
                                .summary = "registered by a failing init",
                                .run = nothing};
static const quill_custom_op half_op = {"half.registered", "custom op of a "
                                        "failing init", NULL, NULL};
static quill_status write_nothing(quill_context *ctx, const quill_module *m,
                                  FILE *out) {
  (void)ctx, (void)m, (void)out;
  return QUILL_OK;
}
static const quill_exporter half_exporter = {"half-exporter", "exporter of a "
                                             "failing init", write_nothing};
QUILL_PLUGIN("init-fails", "0") {
  quill_status st = quill_plugin_register_pass(reg, &half);
  if (!st)
    st = quill_plugin_register_custom_op(reg, &half_op);
  if (!st)
    st = quill_plugin_register_exporter(reg, &half_exporter);
  if (st)
    return st;
  return quill_error(quill_plugin_registry_context(reg), quill_loc_unknown(),
                     "init-fails: refusing to initialize");
}
#elif defined(BAD_DUP_CUSTOM)
static const quill_custom_op twice = {"bad.twice", "registered twice", NULL,
                                      NULL};
QUILL_PLUGIN("dup-custom", "0") {
  quill_status st = quill_plugin_register_custom_op(reg, &twice);
  return st ? st : quill_plugin_register_custom_op(reg, &twice);
}
#elif defined(BAD_EXPORTER)
static const quill_exporter no_write = {"no-write", "cannot write", NULL};
QUILL_PLUGIN("bad-exporter", "0") {
  return quill_plugin_register_exporter(reg, &no_write);
}
#else
#error "define one BAD_* macro"
#endif

/* Keep `nothing` used in every variant. */
QUILL_PLUGIN_EXPORT quill_status (*bad_plugin_unused)(quill_pass_state *,
                                                      quill_module *) = nothing;
