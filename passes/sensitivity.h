/*
 * sensitivity.h - which ops cost the quantized model its accuracy, and the
 * fewest to raise to int16 or keep float for a target SQNR (`quill
 * quantize --sensitivity [--target-sqnr DB]`).
 *
 *   1. the whole model quantized: output SQNR S_all (quant_report.h: the
 *      first output against the float model over the calibration samples)
 *   2. one op at a time: only op k quantized (every other quantized op
 *      kept float), S_k; ranked from the lowest S_k (costs the most) up.
 *      Ops that only move data (reshape, transpose, slice, maxpool, ...)
 *      and fused activations are not ranked: they add no rounding of
 *      their own
 *   3. with a target: raise the worst-ranked ops one by one, measuring the
 *      model each time, until its SQNR reaches the target: to int16
 *      activations (an `overrides` entry of a derived backend config,
 *      backends/backend.h) where the backend can run the op so
 *      (quill_backend_runs_i16; 8-bit activations, no fixed params), else
 *      to float (keep-float)
 *   4. if every ranked op is raised and the target is still not met: the
 *      int16 ones become float in rank order until it is (or all are
 *      float: the target is reported as not met)
 *
 * With int16 off (float_only) steps 3-4 keep ops float only, as before
 * int16 overrides existed. Each measurement is a full quantization and run
 * of the samples (quill_quant_report_create), so the cost is up to (3 x
 * ranked ops + 1) times that of `quill report`: use --max-samples on big
 * models.
 */
#ifndef QUILL_PASSES_SENSITIVITY_H
#define QUILL_PASSES_SENSITIVITY_H

#include "quant_report.h"

QUILL_BEGIN_DECLS

/* The precision chosen for an op. */
typedef enum quill_precision {
  QUILL_PRECISION_INT8,  /* the backend's scheme (8-bit or what it says) */
  QUILL_PRECISION_INT16, /* 16-bit activations (an override) */
  QUILL_PRECISION_FLOAT, /* kept float */
} quill_precision;

/* "int8", "int16", "float". */
const char *quill_precision_name(quill_precision p);

typedef struct quill_sensitivity_op {
  const char *name;   /* location or value name (as --keep-float takes it) */
  const char *opcode; /* mnemonic */
  double sqnr_db;     /* output SQNR with only this op quantized */
  bool int16_ok;      /* the backend can run it with int16 activations */
  quill_precision choice; /* with a target: what the search chose */
} quill_sensitivity_op;

typedef struct quill_sensitivity quill_sensitivity;

/* Rank m's ops for backend o->backend (o->keep_float: ops the user keeps
 * float anyway) on `calib`, and with target_db > -inf choose the ops to
 * raise to int16 (unless float_only) or keep float. `progress` (may be
 * NULL) is called after each measurement with the count done and the
 * total planned. */
quill_status quill_sensitivity_run(quill_context *ctx, const quill_module *m,
                                   const quill_quantize_options *o,
                                   quill_calib_dataset *calib,
                                   double target_db, bool float_only,
                                   void (*progress)(void *ud, size_t done,
                                                    size_t total),
                                   void *ud, quill_sensitivity **out);
void quill_sensitivity_destroy(quill_sensitivity *s);

/* Ranked ops, worst (lowest SQNR alone) first. */
size_t quill_sensitivity_num_ops(const quill_sensitivity *s);
const quill_sensitivity_op *quill_sensitivity_op_at(const quill_sensitivity *s,
                                                    size_t i);
/* The model fully quantized (with the user's keep-float). */
double quill_sensitivity_sqnr_all(const quill_sensitivity *s);
/* With a target: how many of the worst-ranked ops are raised (int16 or
 * float), the keep-float list to quantize with (the user's plus those;
 * "" if none), the backend to quantize with (o->backend, or a config
 * derived from it with the int16 overrides; owned by the context), those
 * overrides as a JSON array ("" if none), the SQNR reached, and whether
 * it meets the target. */
size_t quill_sensitivity_num_chosen(const quill_sensitivity *s);
size_t quill_sensitivity_num_int16(const quill_sensitivity *s);
const char *quill_sensitivity_keep_float(const quill_sensitivity *s);
const char *quill_sensitivity_backend(const quill_sensitivity *s);
const char *quill_sensitivity_overrides(const quill_sensitivity *s);
double quill_sensitivity_sqnr_chosen(const quill_sensitivity *s);
bool quill_sensitivity_target_met(const quill_sensitivity *s);

/* The ranking and the choice as text (appended to sb). */
void quill_sensitivity_print(const quill_sensitivity *s, quill_strbuf *sb);

QUILL_END_DECLS

#endif /* QUILL_PASSES_SENSITIVITY_H */
