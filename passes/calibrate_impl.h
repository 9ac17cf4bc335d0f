/*
 * calibrate_impl.h - the calibrate pass's state, private to
 * passes/calibrate*.c: one fq_info per fake_quant (its scheme, observer,
 * fixed params, what is observed), the run's cache of values for the
 * histogram observers, and the pass's own struct.
 */
#ifndef QUILL_PASSES_CALIBRATE_IMPL_H
#define QUILL_PASSES_CALIBRATE_IMPL_H

#include "passes/calib_data.h"
#include "passes/observers.h"
#include "passes/pass.h"

typedef struct fq_info {
  quill_op *op;
  quill_quant_scheme scheme;
  int64_t axis;          /* -1: per tensor */
  size_t channels, inner;
  quill_observer *obs;   /* NULL for fixed params */
  bool fixed;
  double fixed_scale;
  int64_t fixed_zp;
  bool from_data;        /* observed in the runs */
  const quill_op *watch; /* the op whose result is observed (op, or the
                            max pool reading it alone) */
  bool has_union;        /* a concat's result: the union of its inputs' */
  double ulo, uhi;       /* ranges instead of its observer's */
} fq_info;

/* Values seen in the first run by observers that need a histogram, kept
 * (up to histogram-cache-mb MiB in all, default 256) so the histograms can
 * be filled without running the samples again. */
#define CACHE_MB_DEFAULT 256

typedef struct cached {
  size_t fq; /* index into calib.fq */
  quill_tensor t;
} cached;

typedef struct calib {
  quill_pass_state *ps;
  quill_context *ctx;
  cached *cache;
  size_t ncache, cache_cap, cache_bytes;
  size_t cache_budget;  /* bytes */
  bool cache_ok;        /* every histogram value so far is in the cache */
  fq_info *fq;
  size_t nfq, cap;
  int32_t *index_of_id; /* entry graph: op id -> fq index, or -1 */
  uint32_t num_ids;
  unsigned pass;        /* 1: ranges, 2: histograms */
  const quill_calib_dataset *ds;
  size_t sample;        /* the sample being run */
  uint64_t degenerate;
  quill_calib_lstm *lstm; /* the lstms' cell states (observers.h) */
} calib;

/* Append fq's info (scheme from its attributes, observer, what it
 * watches: itself or the max pool reading it alone); entry: whether fq is
 * in the entry graph, the only one calibration data runs. */
quill_status quill_calib_add_fq(calib *c, quill_op *op, bool entry);
/* Observe a constant operand directly (both passes on the one tensor). */
quill_status quill_calib_observe_constant(calib *c, fq_info *f);

#endif /* QUILL_PASSES_CALIBRATE_IMPL_H */
