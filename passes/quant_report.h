/*
 * quant_report.h - the quantization report: what `quill quantize` did to
 * each op and how much accuracy each op's output lost (docs/report.md).
 *
 *   model --copy--> PREPARE (canonicalize .. fuse-activation) = float model F
 *         --copy--> the whole quantize pipeline              = quantized Q
 *   rows:  every graph input and op of F, in program order, matched with Q's
 *          op by location name; plus the ops of the model that PREPARE
 *          folded or fused away ("folded into producer X")
 *   runs:  each calibration sample through F and Q; per row
 *          SQNR = 10 log10(sum x^2 / sum (x - x_q)^2) over all samples,
 *          x = F's output, x_q = the quantized value of Q's output (after
 *          its quantize: dequantize(quantize(y)); for an integer op, its
 *          storage read through its quant type)
 *
 *   quill_quant_report *r;
 *   st = quill_quant_report_create(ctx, m, &opts, calib, &r);
 *   st = quill_quant_report_write(r, QUILL_REPORT_JSON, "model.onnx", &sb);
 *   quill_quant_report_destroy(r);
 */
#ifndef QUILL_PASSES_QUANT_REPORT_H
#define QUILL_PASSES_QUANT_REPORT_H

#include "quantize_pipeline.h"

QUILL_BEGIN_DECLS

/* ---- SQNR arithmetic ------------------------------------------------------ */

/* Running sums of an SQNR: signal = sum x^2, noise = sum (x - x_q)^2, both
 * in double. Start from {0}. */
typedef struct quill_sqnr {
  double signal, noise;
  uint64_t count; /* elements added */
} quill_sqnr;

void quill_sqnr_add(quill_sqnr *s, const double *x, const double *xq,
                    size_t n);
/* 10 log10(signal / noise) in dB: +inf when noise is 0 (x_q == x, also
 * when both are 0), -inf when signal is 0 and noise is not. */
double quill_sqnr_db(const quill_sqnr *s);

/* ---- the report --------------------------------------------------------------- */

typedef enum quill_report_status {
  QUILL_REPORT_QUANTIZED, /* reads or produces quantized values */
  QUILL_REPORT_FLOAT,     /* kept float (reason says why) */
  QUILL_REPORT_FUSED,     /* folded or fused into a producer by PREPARE */
  QUILL_REPORT_MISSING,   /* no op of that name in the quantized model */
} quill_report_status;

/* "quantized", "float", "fused", "missing". */
const char *quill_report_status_name(quill_report_status s);

/* One row: a graph input or an op. Strings live as long as the context. */
typedef struct quill_report_row {
  const char *name;       /* the op's location name, else its first
                             result's value name; an input's name */
  const char *opcode;     /* the mnemonic ("conv2d"), or "input" */
  const char *activation; /* a fused activation ("relu", "clip"), or NULL */
  quill_report_status status;
  const char *reason;     /* why quantized / float / fused, one phrase */
  const char *fused_into; /* FUSED: the producer's name; else NULL */
  quill_type *output_quant; /* the quant element type of the output's
                               quantized value, or NULL (float output) */
  quill_type *weight_quant; /* the quant element type of the op's weight
                               (a quantized constant operand other than an
                               i32 bias), or NULL */
  quill_sqnr weight_sqnr;   /* quantized weight vs float weight (count 0:
                               no weight) */
  quill_sqnr sqnr;          /* output over the samples (count 0: not
                               measured: fused, missing, or mismatched) */
  size_t bias_saturated;    /* values of the op's int32 bias at INT32_MIN
                               or INT32_MAX: saturated by `quantize`, the
                               op loses that bias (input or weight scale
                               too small); the reason says so too */
} quill_report_row;

typedef struct quill_report_output {
  const char *name; /* the float model's returned value name, or "output<i>" */
  quill_sqnr sqnr;
  quill_sqnr compiled; /* the compiled (lowered) model's output against the
                          reference form's (count 0: not measured) */
  uint64_t compiled_diff; /* elements where the two differ */
} quill_report_output;

typedef struct quill_report_accuracy {
  size_t count;               /* labelled rows evaluated (0: not run) */
  size_t float_correct, quant_correct, agree;
  bool compiled;              /* compiled_correct was measured */
  size_t compiled_correct;
} quill_report_accuracy;

typedef struct quill_quant_report quill_quant_report;

/* Quantize copies of m's first graph as `quill quantize` does (o: backend,
 * keep_float, max_samples; o->calib_path NULL), run every sample of
 * `calib` (also the calibration data) through the float and the quantized
 * model, and build the rows. m is not modified and not kept. On success
 * *out is the report: every call should be paired with
 * quill_quant_report_destroy(). Failures are diagnostics plus a status
 * (the quantize pipeline's, an interpreter error, QUILL_ERR_NOMEM);
 * *out is then NULL. */
quill_status quill_quant_report_create(quill_context *ctx,
                                       const quill_module *m,
                                       const quill_quantize_options *o,
                                       quill_calib_dataset *calib,
                                       quill_quant_report **out);
void quill_quant_report_destroy(quill_quant_report *r);

/* Accuracy of both models: each sample of `x` (samples for the entry
 * graph) is run through both; the first output's rows (its last dimension
 * holds the class scores) are arg-maxed and compared with `labels`
 * (integers, one per row over all samples, in order). A label count that
 * differs from the number of rows is an error diagnostic. */
quill_status quill_quant_report_eval_accuracy(quill_quant_report *r,
                                              const quill_calib_dataset *x,
                                              const quill_tensor *labels);

size_t quill_quant_report_num_rows(const quill_quant_report *r);
const quill_report_row *quill_quant_report_row(const quill_quant_report *r,
                                               size_t i);
size_t quill_quant_report_num_outputs(const quill_quant_report *r);
const quill_report_output *
quill_quant_report_output(const quill_quant_report *r, size_t i);
const quill_report_accuracy *
quill_quant_report_accuracy(const quill_quant_report *r);
size_t quill_quant_report_num_samples(const quill_quant_report *r);
const char *quill_quant_report_backend(const quill_quant_report *r);
const char *quill_quant_report_keep_float(const quill_quant_report *r);
/* What the accuracy passes (equalize, bias-correction) did, one line each
 * ("" if none ran); owned by the report. */
const char *quill_quant_report_accuracy_log(const quill_quant_report *r);
/* The quantized module (owned by the report). */
quill_module *quill_quant_report_quantized(const quill_quant_report *r);

/* ---- the "compiled" column ---------------------------------------------------
 *
 * What a target makes of the model can lose accuracy the reference form
 * does not (an integer accumulator that overflows, a different rounding):
 * the column runs the lowered model beside the reference form. libquill
 * does not link a code generator, so the caller supplies the runner (the
 * tool: the LLVM JIT). */

/* Run the lowered model on one sample (graph arguments in order); outputs
 * as quill_ref_run allocates them (in ctx; the report frees them). */
typedef quill_status (*quill_report_run_fn)(void *ud, const quill_tensor *in,
                                            unsigned nin, quill_tensor *out,
                                            unsigned nout);

/* The model the targets compile: a copy of the reference form with the
 * FUSE stage (fuse-qdq, dce) for the report's backend. New module in *out,
 * freed with quill_module_destroy; NULL on failure (diagnostics). */
quill_status quill_quant_report_lowered(const quill_quant_report *r,
                                        quill_module **out);

/* Run every sample of `calib` through the reference form and `run`, and
 * fill each output's `compiled` SQNR and differing-element count; with
 * x/labels (both or neither, as for eval_accuracy) also the compiled
 * model's accuracy. */
quill_status quill_quant_report_measure_compiled(
    quill_quant_report *r, const quill_calib_dataset *calib,
    const quill_calib_dataset *x, const quill_tensor *labels,
    quill_report_run_fn run, void *ud);

/* Mark the column as not measured, with the reason (copied). */
void quill_quant_report_compiled_unavailable(quill_quant_report *r,
                                             const char *why);
/* NULL when measured (or not attempted); else why not. */
const char *quill_quant_report_compiled_note(const quill_quant_report *r);

/* ---- output ------------------------------------------------------------------ */

typedef enum quill_report_format {
  QUILL_REPORT_TEXT, /* an aligned table for terminals */
  QUILL_REPORT_JSON, /* for scripts (field names in docs/report.md) */
  QUILL_REPORT_CSV,  /* one line per row, for spreadsheets */
  QUILL_REPORT_HTML, /* one self-contained page with an SVG chart */
} quill_report_format;

/* "text", "json", "csv", "html" -> format; false if unknown. */
bool quill_report_format_parse(const char *name, quill_report_format *out);

/* Append the report in format f to sb; `model` names the model in the
 * header (may be NULL). QUILL_ERR_NOMEM on allocation failure. */
quill_status quill_quant_report_write(const quill_quant_report *r,
                                      quill_report_format f,
                                      const char *model, quill_strbuf *sb);
/* The quantized model's picture (ir/dot.h) with each op's SQNR on its
 * label; `path` as for quill_dot_write_file. */
quill_status quill_quant_report_write_graph(const quill_quant_report *r,
                                            const char *path,
                                            const char *dot_program);

QUILL_END_DECLS

#endif /* QUILL_PASSES_QUANT_REPORT_H */
