/*
 * rnn.h - the float lstm's recurrence (kernels_rnn.c), shared by its
 * reference kernel and the calibrate pass's observer of the cell state
 * (passes/observers.c), so both see the same numbers. Not public.
 */
#ifndef QUILL_TARGETS_REFERENCE_RNN_H
#define QUILL_TARGETS_REFERENCE_RNN_H

#include "targets/reference/ref.h"

/* Run the lstm `op` on x, w, r and b (NULL when the op has none), as its
 * kernel does: y (NULL: not stored) gets the hidden states, *cell_absmax
 * (NULL: not wanted) the largest |cell state| of any step, batch row and
 * unit. A located error for operands that do not fit. */
quill_status quill_ref_lstm_eval(quill_context *ctx, const quill_op *op,
                                 const quill_tensor *x, const quill_tensor *w,
                                 const quill_tensor *r, const quill_tensor *b,
                                 quill_tensor *y, double *cell_absmax);

#endif /* QUILL_TARGETS_REFERENCE_RNN_H */
