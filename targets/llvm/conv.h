/*
 * conv.h - private to targets/llvm: what the integer conv/matmul lowerings
 * share (geometry, operand parameters) and the dot-product kernel
 * generator (conv_dot.c) that both qconv2d and qmatmul use.
 */
#ifndef QUILL_TARGETS_LLVM_CONV_H
#define QUILL_TARGETS_LLVM_CONV_H

#include "targets/llvm/cg.h"

/* Convolution geometry (conv2d, qconv2d), logical NCHW / OIHW. */
typedef struct cg_conv_geom {
  int64_t N, C, H, W;  /* input */
  int64_t M, OH, OW;   /* output channels and spatial size */
  int64_t KH, KW, G;   /* kernel and groups */
  int64_t Cg, Mg;      /* channels per group */
  int64_t sh, sw, dh, dw, pt, pl;
} cg_conv_geom;

/* Read the conv attributes (strides, pads, dilations, group, auto_pad) and
 * check the shapes (error at the op). */
quill_status cg_conv_geom_init(cg *c, const quill_op *op, cg_conv_geom *g);

/* Set the current conv stage's estimated single-thread time (the thread
 * cost model, cg_stage_work): its MACs at `macs_per_ns`, the requantizing
 * epilogue at `ns_per_output` per output value, and the weights streamed
 * once from memory (a GEMV or a 7x7 1x1 conv is bound by them). */
void cg_conv_work(cg *c, const cg_conv_geom *g, double macs_per_ns,
                  double ns_per_output);

/* Operand parameters of qconv2d/qmatmul: x (operand 0) per tensor, w
 * (operand 1) per tensor or per output channel, the optional i32 bias
 * (operand 2), and the requantization. */
typedef struct cg_qlinear {
  int64_t zpx;
  size_t nw;               /* weight param count (1 or channels) */
  const int64_t *zpw;
  const quill_attr *wconst; /* dense weights, NULL if not constant */
  bool has_bias;
  const quill_attr *bconst; /* dense bias, NULL if not constant */
  bool wide;               /* accumulator = "i64": exact i64 sums */
  cg_requant rq;
} cg_qlinear;

quill_status cg_qlinear_init(cg *c, const quill_op *op, size_t nch,
                             cg_qlinear *q);
void cg_qlinear_free(cg *c, cg_qlinear *q);
/* The constant bias of channel m (0 without bias). */
int32_t cg_qlinear_bias(const cg_qlinear *q, size_t m);
void cg_store_result(cg *c, const quill_type *ye, LLVMValueRef v,
                     LLVMValueRef ptr);
/* The portable loops' accumulator: i64 when q->wide, else i32. acc_term
 * widens a centered i32 operand (or bias) to it; acc_requant requantizes
 * one scalar accumulator of channel ch. */
LLVMTypeRef cg_qlinear_acc_type(cg *c, const cg_qlinear *q);
LLVMValueRef cg_qlinear_acc_term(cg *c, const cg_qlinear *q, LLVMValueRef v);
LLVMValueRef cg_qlinear_acc_requant(cg *c, cg_qlinear *q, LLVMValueRef acc,
                                    LLVMValueRef ch);

quill_status cg_conv_portable(cg *c, const quill_op *op, const cg_conv_geom *g,
                              cg_qlinear *q);

/* conv_dot.c: the register-blocked dot-product kernels, for qconv2d and
 * for qmatmul as a 1x1 convolution. The caller describes the op in conv
 * form: geometry, logical NCHW views of x and y, the centered constant
 * weights wc[m][c][i][j] (= w - zp_w[m], int32), the constant bias (or
 * NULL), x's zero point and the requantization. */
/* ceil(a / b) for a >= 0, b > 0. */
static inline int64_t cg_ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

typedef struct cg_dot_args {
  cg_conv_geom g;
  cg_view x, y;
  const int32_t *wc;
  const int32_t *bias;
  int64_t zpx;
  cg_requant *rq;
  const cg_value *xv; /* x's value (its halo), or NULL */
  const cg_conv_add *add; /* a fused residual qadd (y is its result), or NULL */
} cg_dot_args;

/* Whether a dot kernel handles this (8-bit x, weights that fit, the
 * result's channels contiguous) on the target's ISA path. */
bool cg_dot_applies(cg *c, const cg_dot_args *a);
/* Emit the panel and compute stages (pads a->rq's per-channel arrays). */
quill_status cg_dot_emit(cg *c, const cg_dot_args *a);

/* The centered weight wc of group gr, channel mg (of the group), tap
 * (i, j) and input channel ci, or 0 past the channels (the packers' lane
 * and channel padding). With row windows ci indexes the KW * Cg elements
 * of a window row, (kw, c) = (ci / Cg, ci % Cg), and j is ignored. */
int32_t cg_dot_weight(const cg_dot_args *a, bool rowwin, int64_t gr,
                      int64_t mg, int64_t i, int64_t j, int64_t ci);
/* bias'[m] = bias[m] - zpu * sum(wc[m]) (modulo 2^32) as a constant i32
 * global of M + pad elements (u8-domain kernels; zpu 0 for the others). */
LLVMValueRef cg_dot_bias(cg *c, const cg_dot_args *a, int64_t zpu,
                         int64_t pad);

/* conv_ubsw.c: vpmaddubsw (avx2) with the weight pairs that could
 * saturate its i16 sum split in two, the halves' second parts run as
 * correction steps listed per (group, channel tile, vector). */
bool cg_ubsw_pair_unsafe(int32_t w0, int32_t w1);
/* Can vpmaddubsw run these weights without i16 saturation for any u8
 * input (no pair unsafe; rowwin: pairs along a window row)? */
bool cg_ubsw_safe(const cg_dot_args *a, bool rowwin);
/* The share of (VL-lane vector, tap, 4-channel group) steps that need a
 * correction step (0: none, ordinary vpmaddubsw). */
double cg_ubsw_corr_share(const cg_dot_args *a, unsigned VL);
/* a->wc with every unsafe pair halved (w / 2): the weights the kernel
 * packs (bias unchanged: the halves sum to the weights). NULL (status
 * set) when out of memory; free with cg_ubsw_main_weights_free. */
int32_t *cg_ubsw_main_weights(cg *c, const cg_dot_args *a);
void cg_ubsw_main_weights_free(cg *c, const cg_dot_args *a, int32_t *wa);
typedef struct cg_ubsw_shape {
  unsigned VL, OCB;       /* lanes per vector, vectors per channel tile */
  int64_t ntiles;         /* channel tiles per group */
  int64_t s_row, s_col;   /* the panel's row and pixel strides */
} cg_ubsw_shape;
typedef struct cg_ubsw_lists {
  LLVMValueRef start; /* i32 [G * ntiles * OCB + 1]: list l's entries */
  LLVMValueRef off;   /* i32 per entry: panel offset from the pixel */
  LLVMValueRef w;     /* VL x 4 correction bytes per entry */
  int64_t entries;
} cg_ubsw_lists;
/* The correction lists as constant globals; false (status set) when out
 * of memory. */
bool cg_ubsw_lists_emit(cg *c, const cg_dot_args *a, const cg_ubsw_shape *sh,
                        cg_ubsw_lists *t);

/* A conv stage's tasks: (n, group, channel tile, pixel chunk), chunks
 * innermost (a thread's consecutive tasks share their weights), or with
 * chunk_outer (n, pixel chunk, group, channel tile): the pool gives each
 * thread the same contiguous part of every stage, so a thread then
 * computes the same rows of the image in every conv and the next stage
 * reads what its own core wrote. cg_conv_chunk_outer chooses by the size
 * of the packed weights (each thread then reads all of them);
 * cg_conv_task splits task index t. */
bool cg_conv_chunk_outer(int64_t weight_bytes);
void cg_conv_task(cg *c, LLVMValueRef t, int64_t G, int64_t ntiles,
                  int64_t nchunks, bool chunk_outer, LLVMValueRef *n,
                  LLVMValueRef *gr, LLVMValueRef *tile, LLVMValueRef *chunk);

/* conv_amx.c: the AMX tile kernel (the amx path; see there). */
bool cg_amx_applies(cg *c, const cg_dot_args *a);
quill_status cg_amx_emit(cg *c, const cg_dot_args *a);

/* panel.c: the kernels' input panel (see there). */
typedef struct cg_panel {
  bool u8;                  /* 8-bit domain (u8, or s8 if s8), else i16
                               x - zp_x */
  bool s8;                  /* the s8 domain (AArch64 sdot/smmla) */
  int64_t G, Cg, Cgp;       /* groups, channels per group (rounded) */
  int64_t Hp, Wp;           /* rows, columns */
  int64_t s_n, s_row, s_col; /* element strides */
  int64_t zpu, zpx;         /* u8-domain zero point, x's zero point */
  int slot;                 /* workspace, or -1: x is read in place */
  cg_view base;             /* in place: x's buffer from its start */
} cg_panel;

/* Decide in place vs copy (always a copy with `copy`) and allocate the
 * workspace. */
void cg_panel_plan(cg *c, const cg_conv_geom *g, const cg_view *x,
                   const cg_value *xv, bool u8, int64_t Cgp, int64_t zpx,
                   cg_panel *p, bool copy);
/* The same for the s8 domain (panel.c's header). */
void cg_panel_plan_s8(cg *c, const cg_conv_geom *g, const cg_view *x,
                      const cg_value *xv, int64_t Cgp, int64_t zpx,
                      cg_panel *p, bool copy);
/* Emit the copy stage (nothing when x is read in place). */
void cg_panel_emit(cg *c, const cg_conv_geom *g, const cg_view *x,
                   const cg_panel *p);
/* The panel's base pointer inside a stage. */
LLVMValueRef cg_panel_base(cg *c, const cg_panel *p, const cg_view *x);

/* conv_arm.c: the AArch64 instructions of conv_dot.c's neon-dot and
 * neon-i8mm kinds (see there). */
/* acc + sdot(a, b): <4 x i32> += four s8 x s8 dot products of 4 bytes;
 * a and b are any 128-bit vectors (bitcast to <16 x i8>). */
LLVMValueRef cg_arm_sdot(cg *c, LLVMValueRef acc, LLVMValueRef a,
                         LLVMValueRef b);
/* acc + smmla(x, w): the 2x2 i32 tile [x0.w0, x0.w1, x1.w0, x1.w1] of two
 * 8-byte s8 rows of x and of w (each a 128-bit vector). */
LLVMValueRef cg_arm_smmla(cg *c, LLVMValueRef acc, LLVMValueRef x,
                          LLVMValueRef w);
/* <16 x i8>: the 8 bytes at p0, then the 8 bytes at p1. */
LLVMValueRef cg_arm_load_pair(cg *c, LLVMValueRef p0, LLVMValueRef p1);
/* smmla tiles <-> per-pixel vectors of 4 channels: the tiles a (channels
 * 0, 1) and b (channels 2, 3) of pixels 0 and 1 become pixel 0's and
 * pixel 1's vectors; and a bias vector becomes the two tiles' start. */
void cg_arm_mmla_to_pixels(cg *c, LLVMValueRef a, LLVMValueRef b,
                           LLVMValueRef *px0, LLVMValueRef *px1);
void cg_arm_bias_to_mmla(cg *c, LLVMValueRef bias, LLVMValueRef *ta,
                         LLVMValueRef *tb);

/* conv_dw.c: depthwise convolution (one input channel per group, channel
 * multiplier 1), vectorized over channels. */
bool cg_dw_applies(cg *c, const cg_dot_args *a);
quill_status cg_dw_emit(cg *c, const cg_dot_args *a);
/* conv_dw4.c: the same on the zmm VNNI paths with vpdpbusd over four
 * kernel rows (f32 half_even requantization to 8 bits, s8 weights, sums
 * that stay in range: see there); preferred where it applies. */
bool cg_dw4_applies(cg *c, const cg_dot_args *a);
quill_status cg_dw4_emit(cg *c, const cg_dot_args *a);

/* conv_cmap.c: a depthwise 1x1 conv of 8-bit values as a fitted fixed-point
 * map per channel (x86 with AVX2). False when it does not apply (the shape,
 * the types, a channel the fit misses); else true, the status in *st. */
bool cg_cmap_try(cg *c, const cg_dot_args *a, quill_status *st);

/* lower_matmul.c: matmul geometry, numpy batch broadcasting over views
 * (strides 0 where broadcast; swapped for gemm's trans_a/trans_b). */
typedef struct cg_mm_geom {
  int64_t M, N, K, batches;
  unsigned nb;
  int64_t bdims[QUILL_MAX_RANK];
  int64_t a_bs[QUILL_MAX_RANK], b_bs[QUILL_MAX_RANK], y_bs[QUILL_MAX_RANK];
  int64_t a_rs, a_cs, b_rs, b_cs, y_rs, y_cs;
} cg_mm_geom;

quill_status cg_mm_geom_init(cg *c, const cg_view *a, const cg_view *b,
                             const cg_view *y, bool ta, bool tb,
                             cg_mm_geom *g);
/* Row i and the element offsets of A, B and Y for task t = batch * M + i. */
void cg_mm_offsets(cg *c, const cg_mm_geom *g, LLVMValueRef t,
                   LLVMValueRef *i, LLVMValueRef *oa, LLVMValueRef *ob,
                   LLVMValueRef *oy);

/* qmatmul_act.c: qmatmul whose B is not a constant (two activations, as
 * attention's Q x K^T and P x V) on the VNNI and avx2 paths; false (nothing
 * emitted) where it does not apply. */
bool cg_qmatmul_act(cg *c, const quill_op *op, const cg_view *a,
                    const cg_view *b, const cg_view *y, const cg_mm_geom *g,
                    cg_qlinear *q);

#endif /* QUILL_TARGETS_LLVM_CONV_H */
