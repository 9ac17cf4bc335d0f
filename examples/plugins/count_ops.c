/*
 * count_ops.c - an example pass plugin: the pass `count-ops` adds one
 * statistic per opcode ("num-conv2d", ...) and their total ("num-ops"),
 * and changes nothing.
 *
 *   quill-opt --load-pass-plugin=libcount_ops.so in.qir \
 *             --pass-pipeline='count-ops' --pass-statistics
 *
 * It is built against the installed package (CMakeLists.txt here, or
 * cc -shared -fPIC count_ops.c $(pkg-config --cflags --libs quill)) and
 * uses nothing but the public API.
 */
#include <stdio.h>

#include <quill/plugin.h>

static quill_status count_ops_run(quill_pass_state *ps, quill_module *m) {
  uint64_t total = 0;
  for (unsigned i = 0; i < quill_module_num_graphs(m); ++i) {
    quill_graph *g = quill_module_graph(m, i);
    QUILL_GRAPH_FOREACH(g, op) {
      char stat[96];
      snprintf(stat, sizeof stat, "num-%s", quill_op_name(op));
      quill_pass_stat_add(ps, stat, 1);
      ++total;
    }
  }
  quill_pass_stat_add(ps, "num-ops", total);
  quill_pass_debug(ps, "%llu ops in %u graphs", (unsigned long long)total,
                   quill_module_num_graphs(m));
  quill_pass_mark_unchanged(ps);
  return QUILL_OK;
}

static const quill_pass count_ops_pass = {
    .name = "count-ops",
    .summary = "Count the ops of each kind (statistics; changes nothing)",
    .run = count_ops_run,
    .requires = 0,
    .establishes = 0,
    .preserves = QUILL_PROP_ALL,
    .options = NULL,
};

QUILL_PLUGIN("count-ops", "1.0") {
  return quill_plugin_register_pass(reg, &count_ops_pass);
}
