/*
 * backend.h - backend configs: how a target quantizes, as data.
 *
 * A backend config is a JSON file a hardware team writes (format and
 * semantics: docs/quantization.md, section 1). Quill ships several, embedded
 * in the library at build time from backends/ *.json; a user's own file is
 * loaded the same way. Loading validates everything: an unknown key, a
 * wrong type or a contradiction is an error diagnostic naming the file, the
 * key path and the reason, and the load fails. Nothing is silently ignored.
 *
 *   const quill_backend *b = quill_backend_get(ctx, "tflite-int8");
 *   if (!b) return QUILL_ERR_INVALID;          // diagnostics already emitted
 *   if (quill_backend_quantizes(b, QUILL_OP_CONV2D)) ...
 *
 * Loaded configs are cached in (and owned by) the context: they live as
 * long as the context and are never freed by the caller.
 */
#ifndef QUILL_BACKENDS_BACKEND_H
#define QUILL_BACKENDS_BACKEND_H

#include "../ir/ir.h"
#include "../ir/quant.h"

QUILL_BEGIN_DECLS

/* Observer algorithms (docs/quantization.md, "observer"). */
typedef enum quill_observer_kind {
  QUILL_OBSERVER_MINMAX,
  QUILL_OBSERVER_EMA_MINMAX,
  QUILL_OBSERVER_PERCENTILE,
  QUILL_OBSERVER_KL,
  QUILL_OBSERVER_MSE,
} quill_observer_kind;

/* "minmax" ... -> kind; false if unknown. */
bool quill_observer_parse(const char *name, quill_observer_kind *out);
const char *quill_observer_name(quill_observer_kind k);

typedef struct quill_observer_spec {
  quill_observer_kind kind;
  double momentum;   /* ema_minmax (default 0.9) */
  double percentile; /* percentile (default 99.99) */
  int64_t bins;      /* kl, mse (default 2048) */
} quill_observer_spec;

/* A quantization scheme (an `activation` or `weight` object). */
typedef struct quill_quant_scheme {
  quill_type_kind storage; /* QUILL_TYPE_I8, U8, I16, U16, I4, U4 */
  int bits;                /* 2..16, <= the storage width */
  bool symmetric;          /* zero point 0 */
  bool per_channel;        /* weights only: the op's output-channel axis */
  int64_t qmin, qmax;      /* storage range actually used */
  bool power_of_two;       /* scales rounded up to 2^k */
  quill_observer_spec observer;
} quill_quant_scheme;

typedef enum quill_requant_mode {
  QUILL_REQUANT_FIXED_POINT, /* int32 multiplier + shift */
  QUILL_REQUANT_FLOAT,       /* f32 scale, ONNX QLinear* style */
} quill_requant_mode;

/* Fixed output quantization parameters of an op (e.g. sigmoid). */
typedef struct quill_fixed_params {
  bool present;
  double scale;
  int64_t zero_point;
} quill_fixed_params;

/* A fusion pattern: a chain of ops run as one kernel (producer first). */
#define QUILL_BACKEND_MAX_FUSION_LEN 4
typedef struct quill_fusion {
  unsigned len;
  quill_opcode ops[QUILL_BACKEND_MAX_FUSION_LEN];
} quill_fusion;

typedef struct quill_backend quill_backend;

/* ---- loading ------------------------------------------------------------- */

/* Get a backend config by shipped name ("tflite-int8") or by path (an
 * argument containing '/' or ending in ".json" is read as a file). Cached
 * per context: asking twice returns the same pointer. Returns NULL after
 * emitting diagnostics if the name is unknown (the message lists the
 * shipped names), the file cannot be read, or the config is invalid. */
const quill_backend *quill_backend_get(quill_context *ctx, const char *name);

/* Parse and validate a config from memory (`file` is used in messages).
 * Not cached; the result is owned by the context. NULL on error. */
const quill_backend *quill_backend_parse(quill_context *ctx, const char *text,
                                         size_t len, const char *file);

/* Shipped configs, in a stable order (for `quill backends`). */
unsigned quill_backend_num_shipped(void);
const char *quill_backend_shipped_name(unsigned i);
/* The JSON text of a shipped config (NULL if i is out of range). */
const char *quill_backend_shipped_text(unsigned i);

/* ---- queries -------------------------------------------------------------- */

const char *quill_backend_name(const quill_backend *b);
const char *quill_backend_description(const quill_backend *b);
const quill_quant_scheme *quill_backend_activation(const quill_backend *b);
const quill_quant_scheme *quill_backend_weight(const quill_backend *b);
/* True if biases are quantized to int32 (scale s_in * s_w, zero point 0);
 * false if kept float. */
bool quill_backend_bias_int32(const quill_backend *b);
quill_rounding quill_backend_rounding(const quill_backend *b);
quill_requant_mode quill_backend_requant(const quill_backend *b);
/* True if the backend's arithmetic is TFLite's int8 (rounding "tflite",
 * fixed point, int8 activations): fuse-qdq then makes an lstm between a
 * dequantize and a quantize TFLite's integer LSTM (qlstm), and the tools
 * import ONNX LSTM nodes as lstm ops for it (quill_onnx_options.rnn_ops)
 * instead of unrolling them. */
bool quill_backend_makes_qlstm(const quill_backend *b);
/* True if the ops of an unrolled ONNX RNN, GRU or LSTM node, its gemms
 * included, stay float (config key `rnn_float`, default false; the tools
 * import with quill_onnx_options.rnn_float for it). NULL: false. */
bool quill_backend_rnn_float(const quill_backend *b);

/* False if quantized ops keep float outputs: only their inputs and weights
 * are quantized (config key `quantize_outputs`, default true; PPQ's
 * ACADEMIC_INT8 scheme sets it to false). */
bool quill_backend_quantizes_outputs(const quill_backend *b);

/* The accuracy passes the config asks for (keys `equalize`,
 * `equalize_relu6`, `bias_correction`; all default false). */
bool quill_backend_equalize(const quill_backend *b);
bool quill_backend_equalize_relu6(const quill_backend *b);
bool quill_backend_bias_correction(const quill_backend *b);
/* bias_correction is "analytic" (from BatchNorm statistics, no data). */
bool quill_backend_bias_correction_analytic(const quill_backend *b);

/* The arithmetic of the float layer_norms of a quantized model (config key
 * `layer_norm_numerics`, default "f64"): "f64", "f32" or "integer" (made a
 * qlayer_norm by fuse-qdq), the value the
 * `quantize` pass gives each layer_norm's `numerics` attribute. Constant
 * string, not freed. */
const char *quill_backend_layer_norm_numerics(const quill_backend *b);

/* The plugin that completes this backend (config key `plugin.name`):
 * quantizing with the config needs it loaded (quill_plugin_load); NULL if
 * the config has no `plugin`. */
const char *quill_backend_plugin(const quill_backend *b);
/* The pass pipeline the plugin contributes, run after fuse-qdq by the
 * quantization pipeline (`plugin.pipeline`); NULL if none. */
const char *quill_backend_plugin_pipeline(const quill_backend *b);

bool quill_backend_quantizes(const quill_backend *b, quill_opcode opc);
bool quill_backend_keeps_float(const quill_backend *b, quill_opcode opc);
bool quill_backend_shares_params(const quill_backend *b, quill_opcode opc);
/* Fixed output params of opc (present == false if none). */
quill_fixed_params quill_backend_fixed_params(const quill_backend *b,
                                              quill_opcode opc);
unsigned quill_backend_num_fusions(const quill_backend *b);
const quill_fusion *quill_backend_fusion(const quill_backend *b, unsigned i);
/* True if some fusion pattern starts with `producer` immediately followed
 * by `consumer` (e.g. conv2d, relu). */
bool quill_backend_fuses(const quill_backend *b, quill_opcode producer,
                         quill_opcode consumer);

/* ---- per-op overrides (config key `overrides`) ----------------------------- */

/* How one op is quantized: the backend's schemes with every override that
 * matches the op applied in order (later ones win, key by key). */
typedef struct quill_op_quant {
  const quill_quant_scheme *activation; /* its inputs and outputs */
  const quill_quant_scheme *weight;
  bool keep_float; /* an override keeps it float */
  int override;    /* the last matching override's index, -1 if none */
} quill_op_quant;

/* The schemes of op (matched by opcode and by its location name or first
 * result's value name against each override's glob). Says nothing about
 * whether the backend quantizes the op at all (quill_backend_quantizes).
 * The pointers live as long as the backend. */
quill_op_quant quill_backend_op_quant(const quill_backend *b,
                                      const quill_op *op);
unsigned quill_backend_num_overrides(const quill_backend *b);
/* Override i's match.row_longer_than (0: none; i < num_overrides). */
int64_t quill_backend_override_row_limit(const quill_backend *b, unsigned i);
/* The row an override's row_longer_than measures: the length of op's first
 * input along its `axis` attribute (the last dimension without one); -1 if
 * op has no ranked tensor input or the axis is out of range. */
int64_t quill_op_row_length(const quill_op *op);
/* True if the backend can run opc with 16-bit activations: every op for a
 * non-TFLite backend; for `rounding: tflite`, the ops with a TFLite 16x8
 * kernel (the quantize_ops of the shipped tflite-int16x8). */
bool quill_backend_runs_i16(const quill_backend *b, quill_opcode opc);
/* Same storage, range, symmetry, power-of-two rule and observer. */
bool quill_quant_scheme_equal(const quill_quant_scheme *a,
                              const quill_quant_scheme *c);

/* A config derived from the config `base` (a name or path as for
 * quill_backend_get) with the JSON array `overrides` appended to its own
 * `overrides`, validated as a whole and cached in the context: returns the
 * name to quill_backend_get it by (owned by the context), or NULL after
 * diagnostics (an invalid override is located as overrides[i]). */
const char *quill_backend_derive(quill_context *ctx, const char *base,
                                 const char *overrides);

/* Print the config in a human-readable summary (for `quill backends
 * NAME`). */
void quill_backend_print(const quill_backend *b, FILE *out);

/* ---- the scheme arithmetic (docs/quantization.md, section 2) -------------- */

/* Scale and zero point for the range [lo, hi] under `s` (range widened to
 * include 0; degenerate range -> scale 1.0 and *degenerate = true; never a
 * zero or non-finite scale). Returns QUILL_ERR_INVALID (no diagnostic) if
 * lo or hi is not finite. */
quill_status quill_quant_params_from_range(const quill_quant_scheme *s,
                                           double lo, double hi,
                                           double *scale, int64_t *zero_point,
                                           bool *degenerate);

QUILL_END_DECLS

#endif /* QUILL_BACKENDS_BACKEND_H */
