/*
 * backend_impl.h - the private body of quill_backend, shared by
 * backends/backend.c (cache, queries, printing) and backends/validate.c
 * (JSON -> validated config). Only backends/ *.c include this file.
 *
 * A config is flattened into opcode-indexed tables at load time, so every
 * query is one array access:
 *
 *   quantize[QUILL_OP_CONV2D] = true     shared[QUILL_OP_MAXPOOL] = true
 *   fixed[QUILL_OP_SIGMOID] = {true, 1/256, -128}
 */
#ifndef QUILL_BACKENDS_BACKEND_IMPL_H
#define QUILL_BACKENDS_BACKEND_IMPL_H

#include "backends/backend.h"

/* One `overrides` entry, its partial schemes merged onto the backend's. */
typedef struct quill_backend_override {
  bool op[QUILL_OP_COUNT]; /* match.op (all false: any op) */
  bool any_op;
  char *name; /* match.name, a glob; owned; NULL: any name */
  int64_t row_longer_than; /* match.row_longer_than; 0: any row */
  bool has_act, has_weight, keep_float;
  quill_quant_scheme act, weight;
} quill_backend_override;

struct quill_backend {
  char *name;        /* owned (quill_strdup) */
  char *description; /* owned, "" if absent */
  char *file;        /* where it was read from, for messages; owned */
  quill_quant_scheme activation, weight;
  bool bias_int32; /* bias: i32 (true) or float */
  quill_rounding rounding;
  quill_requant_mode requant;
  bool quantize_outputs; /* false: quantized ops produce float outputs */
  bool equalize, equalize_relu6, bias_correction; /* accuracy passes */
  bool rnn_float;        /* unrolled RNN/GRU/LSTM nodes stay float */
  bool bias_correction_analytic; /* bias_correction: "analytic" */
  unsigned char layer_norm; /* layer_norm_numerics: 0 "f64", 1 "f32",
                              2 "integer" (validate.c's ln_numerics) */
  bool quantize[QUILL_OP_COUNT];
  bool keep_float[QUILL_OP_COUNT];
  bool shared[QUILL_OP_COUNT];
  quill_fixed_params fixed[QUILL_OP_COUNT];
  quill_fusion *fusions; /* owned array of fusions_cap entries */
  unsigned num_fusions, fusions_cap;
  char *plugin_name;     /* `plugin.name`, owned; NULL without `plugin` */
  char *plugin_pipeline; /* `plugin.pipeline`, owned; NULL or "" if none */
  quill_backend_override *overrides; /* owned array, num_overrides */
  unsigned num_overrides;
  bool i16_ok[QUILL_OP_COUNT]; /* ops the backend can run with i16 inputs */
  char *text;      /* the JSON text (quill_backend_derive); owned */
  size_t text_len; /* without the NUL */
};

/* Parse and validate JSON text into a new backend (validate.c). Emits every
 * error found as `file: key.path: reason` and returns NULL if there was
 * any (or on allocation failure, with QUILL_ERR_NOMEM semantics: no
 * diagnostic beyond "out of memory"). The result is freed with
 * quill_backend_free_impl. */
quill_backend *quill_backend_load_json(quill_context *ctx, const char *text,
                                       size_t len, const char *file);
void quill_backend_free_impl(quill_context *ctx, quill_backend *b);

/* The shipped configs, generated at build time from backends/ *.json by
 * backends/embed.cmake (build/gen/backends_shipped.c). Constant data. */
extern const unsigned quill_backend_shipped_count;
extern const char *const quill_backend_shipped_names[];
extern const char *const quill_backend_shipped_texts[];
extern const size_t quill_backend_shipped_lens[];

#endif /* QUILL_BACKENDS_BACKEND_IMPL_H */
