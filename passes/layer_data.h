/*
 * layer_data.h - what the accuracy passes (`equalize`, `bias-correction`)
 * share: a conv2d/gemm layer's float weight and bias as f64 arrays with
 * the channel of every element, writing them back as new constants, and
 * per-channel statistics of values over the calibration data.
 *
 *   quill_layer L;
 *   if ((why = quill_layer_read(ctx, op, w_value, &L)))   -> not a layer
 *   ... L.w[i] belongs to output channel quill_layer_out_ch(&L, i) and
 *       input channel quill_layer_in_ch(&L, i); L.b[j] to channel
 *       j % L.out_ch (NULL: no bias yet) ...
 *   quill_layer_write(ctx, &L, true, true);   new constants, old ones erased
 *   quill_layer_free(ctx, &L);
 *
 * Layers (W layout, output channel o, input channel c of element i):
 *
 *   conv2d  W [O, C/g, kh, kw]   o = i / (C/g*kh*kw)
 *                                c = (o / (O/g)) * C/g + (i / (kh*kw)) % C/g
 *   gemm    B [N, K] (trans_b)   o = i / K,  c = i % K
 *           B [K, N]             o = i % N,  c = i / N
 *
 * A gemm's bias C must have N as its last dimension (shape [N], [1, N] or
 * [M, N]); its effective bias is beta * C (bias_mul). A layer without a
 * bias gets one (zeros, shape [O] / [N], gemm beta 1) when
 * quill_layer_write is asked to write a bias it lacks.
 */
#ifndef QUILL_PASSES_LAYER_DATA_H
#define QUILL_PASSES_LAYER_DATA_H

#include "calib_data.h"
#include "pass.h"

/* Internal to libquill (not exported: no QUILL_BEGIN_DECLS). */

typedef struct quill_layer {
  quill_op *op;
  quill_value *w_value;   /* the constant the weight is read from */
  double *w, *b;          /* weight (nw), bias (nb; NULL if none) */
  size_t nw, nb;
  int64_t out_ch, in_ch;  /* O / N, C / K */
  double bias_mul;        /* gemm beta (1 for conv2d) */
  /* channel maps (see the header comment) */
  bool trans;             /* gemm trans_b */
  int64_t kk, cg, og;     /* conv2d: kh*kw, C/g, O/g */
  bool written;           /* for the passes' bookkeeping */
} quill_layer;

/* Read op (conv2d or gemm) as a layer whose weight is the float constant
 * w_value (its operand 1, or the constant under a fake_quant there) and
 * whose bias, if any, is a float constant. Returns NULL on success, else a
 * static reason (nothing allocated; "out of memory" is one). */
const char *quill_layer_read(quill_context *ctx, quill_op *op,
                             quill_value *w_value, quill_layer *L);
void quill_layer_free(quill_context *ctx, quill_layer *L);

int64_t quill_layer_out_ch(const quill_layer *L, size_t i);
int64_t quill_layer_in_ch(const quill_layer *L, size_t i);
/* Give L a zero bias of out_ch entries if it has none (false: no memory). */
bool quill_layer_ensure_bias(quill_context *ctx, quill_layer *L);

/* Write L.w (into w_value's place: the op's operand 1, or the fake_quant's
 * operand when the weight is observed) and/or L.b as new constants before
 * the op, in the old constants' element types; constants left without
 * uses are erased. A bias the op lacked becomes its operand 2 (a gemm gets
 * beta = 1). QUILL_ERR_NOMEM on allocation failure. */
quill_status quill_layer_write(quill_context *ctx, quill_layer *L,
                               bool weight, bool bias);

/* Per-channel statistics (channel axis 1 of a rank >= 2 tensor) of
 * n values of graph g over the calibration data: for value k, min[k][c]
 * and mean[k][c] (arrays of dim 1 entries, freed with
 * quill_chan_stats_free). The data is the pass option data=PATH (with
 * max-samples=N) or the pass-manager input "calibration-data"; `who`
 * names the pass in diagnostics. The graph runs in the reference
 * interpreter as it is (calibrated fake_quants quantize). convs (NULL, or
 * n entries, NULL where not wanted) asks for per-tap means. Errors: no data
 * or a run failing (a diagnostic), QUILL_ERR_NOMEM. */
typedef struct quill_chan_stats {
  size_t channels;
  double *min, *mean;
  /* With convs[k] a conv2d reading value k (rank 4): the mean of what each
   * kernel tap reads, zero padding included, over every output position:
   * tap_mean[c * taps + ki * kw + kj], taps = kh * kw. NULL otherwise. */
  double *tap_mean;
  size_t taps;
} quill_chan_stats;

quill_status quill_chan_stats_collect(quill_pass_state *ps, const char *who,
                                      quill_graph *g, size_t n,
                                      quill_value *const *values,
                                      const quill_op *const *convs,
                                      quill_chan_stats *out);
void quill_chan_stats_free(quill_context *ctx, quill_chan_stats *s, size_t n);


#endif /* QUILL_PASSES_LAYER_DATA_H */
