/*
 * plugin.h - what extends Quill at run time without rebuilding it: passes,
 * pattern sets, custom op kinds and exporters registered with a context,
 * and plugins: shared objects that register them when loaded
 * (--load-pass-plugin=PATH in quill-opt, quill run, quill quantize, quill
 * export, as LLVM's opt loads pass plugins).
 *
 * Besides the built-in passes (passes/passes.def), every context holds a
 * registry of what was added at run time, by the application
 * (quill_pass_register, quill_patterns_register, quill_custom_op_register,
 * quill_exporter_register) or by a plugin (quill_plugin_load):
 *
 *   passes        run by name in pipelines ("cse,count-ops,dce"): a pass
 *                 manager looks names up in the built-ins first, then here
 *   pattern sets  applied greedily by the built-in pass
 *                 `apply-patterns{sets=NAME,...}` or by a plugin's pass
 *   custom ops    kinds of the generic `custom` op (ir/custom_op.h): an
 *                 extra verifier and the reference evaluator, by op name
 *   exporters     named output writers: `quill export NAME MODEL -o FILE`,
 *                 `quill quantize ... --export=NAME:FILE`,
 *                 quill_exporter_run (e.g. a vendor's quantization
 *                 parameter file)
 *
 * The registry belongs to the context, not to the process: two contexts
 * have separate registries, and a context unloads its plugins when it is
 * destroyed. A hardware team's backend is a config file (backends/,
 * docs/quantization.md) plus, optionally, a plugin with its fusion
 * patterns, custom ops and exporters (examples/backends/acme-npu/); the
 * config's `plugin` key names the plugin and the passes it runs after
 * quantization.
 *
 * A plugin, in full (examples/plugins/, examples/backends/):
 *
 *   #include <quill/plugin.h>
 *
 *   static quill_status run(quill_pass_state *ps, quill_module *m) {...}
 *   static const quill_pass my_pass = {
 *       .name = "my-pass", .summary = "What it does", .run = run};
 *
 *   QUILL_PLUGIN("my-plugin", "1.0") {
 *     return quill_plugin_register_pass(reg, &my_pass);
 *   }
 *
 * built as a shared object against the installed package:
 *   cc -shared -fPIC my.c -o libmy.so $(pkg-config --cflags --libs quill)
 *
 * QUILL_PLUGIN defines the two symbols the loader looks for: the data
 * symbol `quill_plugin` (a quill_plugin_info recording the plugin API
 * version and the opcode count the plugin was compiled against) and the
 * entry point `quill_plugin_init(quill_plugin_registry *reg)`. Loading:
 *
 *   dlopen(path, RTLD_NOW | RTLD_LOCAL)   else "cannot load pass plugin"
 *   dlsym "quill_plugin"                  else "not a Quill pass plugin"
 *   api_version, op_count match           else "was built for plugin API
 *                                           version N; this Quill has M"
 *   dlsym "quill_plugin_init"             else "not a Quill pass plugin"
 *   quill_plugin_init(reg)                registers; a duplicate or
 *                                         malformed item is an error
 *
 * Every error is a diagnostic located at the plugin's path
 * ("libx.so: error: ...") and a status; a failed load registers nothing
 * (what the plugin registered before failing is removed) and unloads the
 * object. Descriptors and patterns are borrowed: they normally live in the
 * plugin's static data, which stays mapped until the context is destroyed.
 */
#ifndef QUILL_PASSES_PLUGIN_H
#define QUILL_PASSES_PLUGIN_H

#include <stdio.h>

#include "../ir/custom_op.h"
#include "pass.h"
#include "rewriter.h"

QUILL_BEGIN_DECLS

/* ---- registering passes and pattern sets (applications) ----------------- */

/* Register a pass with the context. `pass` is borrowed and must outlive
 * the context (usually static const). Its name must be non-empty and made
 * of [A-Za-z0-9_.-], its run function set, and the name must not be taken
 * by a built-in or registered pass; otherwise an error diagnostic and
 * QUILL_ERR_INVALID. QUILL_ERR_NOMEM on allocation failure. */
quill_status quill_pass_register(quill_context *ctx, const quill_pass *pass);

/* Find a pass by name: a built-in one, else one registered with ctx (NULL
 * if none). `len` bytes of `name` are compared (name need not be
 * NUL-terminated). */
const quill_pass *quill_pass_find(quill_context *ctx, const char *name,
                                  size_t len);

/* The registered (non-built-in) passes, in registration order. origin is
 * the name of the plugin that registered pass i, or NULL if the
 * application did. */
unsigned quill_pass_num_registered(quill_context *ctx);
const quill_pass *quill_pass_registered(quill_context *ctx, unsigned i);
const char *quill_pass_registered_origin(quill_context *ctx, unsigned i);

/* Register a named pattern set: n patterns (an array, borrowed like pass
 * descriptors) under `name` (copied; same character rules as pass names,
 * unique among pattern sets). Use it with apply-patterns{sets=NAME} or
 * quill_patterns_find. Errors as for quill_pass_register. */
quill_status quill_patterns_register(quill_context *ctx, const char *name,
                                     const quill_pattern *patterns,
                                     unsigned n);
/* The patterns registered under `name` (NULL if none; *n gets their
 * count, 0 if none). */
const quill_pattern *quill_patterns_find(quill_context *ctx, const char *name,
                                         unsigned *n);
/* The registered pattern set names, in registration order. */
unsigned quill_patterns_num_registered(quill_context *ctx);
const char *quill_patterns_registered_name(quill_context *ctx, unsigned i);

/* ---- exporters ---------------------------------------------------------- */

/* A named output writer: turns a module into a file in some format Quill
 * does not know (a vendor's quantization parameter file, a runtime's
 * model format, a report). */
typedef struct quill_exporter {
  const char *name;    /* [A-Za-z0-9_.-], e.g. "acme-qparams" */
  const char *summary; /* one line, for listings */
  /* Write m (verified) to `out`. Return QUILL_OK, or an error status after
   * emitting a diagnostic; the output file is then left as it was. */
  quill_status (*write)(quill_context *ctx, const quill_module *m, FILE *out);
} quill_exporter;

/* Register an exporter with the context (borrowed, like pass descriptors).
 * Name rules and errors as for quill_pass_register (names are unique among
 * exporters). */
quill_status quill_exporter_register(quill_context *ctx,
                                     const quill_exporter *e);
/* The exporter registered under `name`, or NULL. */
const quill_exporter *quill_exporter_find(quill_context *ctx,
                                          const char *name);
/* The registered exporters in registration order; origin as for passes. */
unsigned quill_exporter_num_registered(quill_context *ctx);
const quill_exporter *quill_exporter_registered(quill_context *ctx,
                                                unsigned i);
const char *quill_exporter_registered_origin(quill_context *ctx, unsigned i);

/* Run the exporter `name` on m, writing the file at `path` ("-": stdout).
 * The module is verified first. Errors (diagnostics emitted): an unknown
 * name (the message lists the registered exporters; QUILL_ERR_INVALID), an
 * invalid module, a file that cannot be written (QUILL_ERR_IO, naming
 * it and the system error), or the exporter's own failure. The file is
 * written atomically (quill_write_file_stream): a failed export leaves no
 * new file and an existing one untouched. */
quill_status quill_exporter_run(quill_context *ctx, const quill_module *m,
                                const char *name, const char *path);

/* ---- the plugin ABI ----------------------------------------------------- */

/* Bumped whenever quill_pass, quill_pattern, quill_custom_op,
 * quill_exporter, the plugin registry calls or the meaning of anything a
 * plugin sees changes incompatibly. History:
 *   1  passes and pattern sets
 *   2  custom op kinds (the `custom` opcode) and exporters */
#define QUILL_PLUGIN_API_VERSION 2u

/* What a plugin declares about itself (the symbol `quill_plugin`). */
typedef struct quill_plugin_info {
  uint32_t api_version; /* QUILL_PLUGIN_API_VERSION when it was compiled */
  uint32_t op_count;    /* QUILL_OP_COUNT when it was compiled (opcode
                           numbers are part of the ABI) */
  const char *name;     /* short name, e.g. "count-ops" (messages, --help) */
  const char *version;  /* the plugin's own version, free-form */
} quill_plugin_info;

/* The handle a plugin's init function registers through. Valid only during
 * the call. */
typedef struct quill_plugin_registry quill_plugin_registry;

/* The entry point every plugin defines as `quill_plugin_init`. Return
 * QUILL_OK, or an error status after emitting a diagnostic (the load then
 * fails and nothing the plugin registered stays). */
typedef quill_status (*quill_plugin_init_fn)(quill_plugin_registry *reg);

#define QUILL_PLUGIN_EXPORT __attribute__((visibility("default")))

/* Define the plugin: `QUILL_PLUGIN("name", "version") { ...body... }` is
 * the info symbol plus the init function with the parameter `reg`. */
#define QUILL_PLUGIN(NAME, VERSION)                                           \
  QUILL_PLUGIN_EXPORT const quill_plugin_info quill_plugin = {               \
      QUILL_PLUGIN_API_VERSION, QUILL_OP_COUNT, NAME, VERSION};              \
  QUILL_PLUGIN_EXPORT quill_status quill_plugin_init(                         \
      quill_plugin_registry *reg);                                            \
  quill_status quill_plugin_init(quill_plugin_registry *reg)

/* Inside quill_plugin_init: the context being extended, and registration
 * (as quill_pass_register / quill_patterns_register, with errors located
 * at the plugin's path and naming the plugin). */
quill_context *quill_plugin_registry_context(quill_plugin_registry *reg);
quill_status quill_plugin_register_pass(quill_plugin_registry *reg,
                                        const quill_pass *pass);
quill_status quill_plugin_register_patterns(quill_plugin_registry *reg,
                                            const char *name,
                                            const quill_pattern *patterns,
                                            unsigned n);
/* A custom op kind (ir/custom_op.h) and an exporter, as
 * quill_custom_op_register / quill_exporter_register. */
quill_status quill_plugin_register_custom_op(quill_plugin_registry *reg,
                                             const quill_custom_op *op);
quill_status quill_plugin_register_exporter(quill_plugin_registry *reg,
                                            const quill_exporter *e);

/* ---- loading plugins ---------------------------------------------------- */

/* Load the plugin at `path` into ctx (see the top of this file for the
 * steps and their errors; a path without '/' is searched as dlopen does).
 * Returns QUILL_OK, QUILL_ERR_IO (cannot be loaded), QUILL_ERR_INVALID
 * (not a plugin, version mismatch, registration error) or
 * QUILL_ERR_NOMEM. The plugin stays loaded until quill_context_destroy.
 * Loading the same file twice fails on the duplicate pass names. */
quill_status quill_plugin_load(quill_context *ctx, const char *path);

/* The plugins loaded into ctx, in load order: their info and path. */
unsigned quill_plugin_num_loaded(quill_context *ctx);
const quill_plugin_info *quill_plugin_loaded_info(quill_context *ctx,
                                                  unsigned i);
const char *quill_plugin_loaded_path(quill_context *ctx, unsigned i);

QUILL_END_DECLS

#endif /* QUILL_PASSES_PLUGIN_H */
