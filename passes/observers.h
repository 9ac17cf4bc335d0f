/*
 * observers.h - the range-finding algorithms of the `calibrate` pass
 * (docs/quantization.md section 2, "observer"): given the values a
 * fake_quant sees over all calibration runs, pick the range [lo, hi] its
 * quantization parameters are computed from.
 *
 * An observer keeps statistics per channel (one channel for per-tensor
 * schemes). It is fed in up to two passes over the data:
 *
 *   pass 1  quill_observer_add_range     running min/max (minmax, and the
 *                                        histogram range of the others) or
 *                                        the moving average (ema_minmax)
 *   pass 2  quill_observer_add_histogram only if quill_observer_needs_
 *                                        histogram(): percentile, kl, mse
 *
 * then quill_observer_range() gives each channel's range. A tensor's
 * element i belongs to channel (i / inner) % channels (row-major data, the
 * channel axis followed by `inner` elements per step). Values must be
 * finite (the calibrate pass checks before feeding). The algorithms are
 * described in observers.c.
 */
#ifndef QUILL_PASSES_OBSERVERS_H
#define QUILL_PASSES_OBSERVERS_H

#include "backends/backend.h"
#include "targets/reference/ref.h"

typedef struct quill_observer quill_observer;

/* An observer for scheme s (its observer spec, symmetry and range are
 * used) over `channels` channels (>= 1). Every call should be paired with
 * quill_observer_destroy(). NULL on allocation failure. */
quill_observer *quill_observer_create(quill_context *ctx,
                                      const quill_quant_scheme *s,
                                      size_t channels);
void quill_observer_destroy(quill_observer *o);

size_t quill_observer_channels(const quill_observer *o);
/* True if the algorithm needs the second (histogram) pass. */
bool quill_observer_needs_histogram(const quill_observer *o);

/* Pass 1: the data of one run (one calibration sample). */
void quill_observer_add_range(quill_observer *o, const quill_tensor *t,
                              size_t inner);
/* Between the passes: fix every channel's histogram range from pass 1 and
 * allocate the histograms (QUILL_ERR_NOMEM). No-op if no histogram is
 * needed. */
quill_status quill_observer_start_histogram(quill_observer *o);
/* Pass 2: the data of one run again. */
void quill_observer_add_histogram(quill_observer *o, const quill_tensor *t,
                                  size_t inner);

/* The calibrated range of channel c (lo <= hi; both 0 if no data). */
void quill_observer_range(const quill_observer *o, size_t c, double *lo,
                          double *hi);

/* ---- the float lstm's cell state -------------------------------------------
 *
 * The calibrate pass's observer of the float lstm's cell
 * state (docs/quantization.md section 3, qlstm): TFLite's integer LSTM
 * keeps its cell state in int16 at a power-of-two scale, and fuse-qdq
 * (fuse_qdq_lstm.c) takes that scale from the largest |c| the float model
 * reached over the calibration data when it knows it.
 *
 * The cell state is internal to the lstm op, so the observer re-runs the
 * op's recurrence (quill_ref_lstm_eval, the kernel's own code) on the
 * input each calibration run gives it: when the op producing an lstm's
 * operand 0 reports its result, the lstm (with constant w, r and b) is
 * evaluated on it without storing y and max |c| is kept. At the end each
 * observed lstm gets the attribute `cell_absmax` (f64). An lstm whose
 * input no op produces (a graph argument) is not observed: fuse-qdq then
 * falls back to its bound from the weights.
 */
typedef struct quill_calib_lstm quill_calib_lstm;

/* The observer of graph g's lstm ops; *out is NULL when g has none (every
 * other call accepts NULL then). Pair with quill_calib_lstm_destroy. */
quill_status quill_calib_lstm_create(quill_context *ctx, const quill_graph *g,
                                     quill_calib_lstm **out);
void quill_calib_lstm_destroy(quill_calib_lstm *cl);
/* Feed the results of op (a quill_ref_observer_fn's arguments). */
quill_status quill_calib_lstm_observe(quill_calib_lstm *cl, const quill_op *op,
                                      const quill_tensor *results,
                                      unsigned nres);
/* Set `cell_absmax` on every lstm observed at least once; *num gets their
 * count. */
quill_status quill_calib_lstm_finish(quill_calib_lstm *cl, uint64_t *num);

#endif /* QUILL_PASSES_OBSERVERS_H */
