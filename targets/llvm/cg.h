/*
 * cg.h - private to targets/llvm: the code generator's state, the IR
 * building helpers and the lowering table.
 *
 * Compilation of one graph (codegen.c drives it):
 *
 *   1. check     every op against cg_lowerings (all unsupported ops are
 *                reported before anything is generated)
 *   2. plan      memplan.c: a layout per value (rank-4 activations produced
 *                by conv/pool kernels are channel-last, NHWC, the rest
 *                row-major; every kernel reads any layout through strides),
 *                a buffer slot per value (graph inputs, outputs, scratch,
 *                or an alias of another value's slot)
 *   3. lower     each op emits one or more *stages*: internal functions
 *                  void stage(ptr noalias p0, ..., i64 t0, i64 t1)
 *                that do tasks [t0, t1) of the op's work, reading and
 *                writing the slots bound to p0.. (cg_stage_begin/_end)
 *   4. allocate  memplan.c: scratch offsets by liveness (64-byte aligned)
 *   5. share     share.c: stages with identical code call one function
 *   6. entry     entry.c: NAME_run calls the stages in order (directly, or
 *                through quill_rt_parallel_for when threads > 1), grouped
 *                into chunk functions of bounded size for big graphs
 *
 * A value's storage is described by a cg_view: a slot (or a constant
 * global), an element offset and one stride per logical dim, so transposes,
 * slices, broadcasts and layouts are all just views.
 */
#ifndef QUILL_TARGETS_LLVM_CG_H
#define QUILL_TARGETS_LLVM_CG_H

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "ir/ir.h"
#include "ir/quant.h"
#include "targets/llvm/llvm_target.h"

typedef struct cg cg;

/* ---- target description (isa.c) ---------------------------------------- */

typedef struct cg_target {
  char *triple, *cpu, *features; /* as given to the TargetMachine
                                    (quill_strdup'd) */
  bool host;                     /* compiling for the host */
  bool x86, aarch64;
  bool avx2, avx512f, avx512bw, avx512vl, avx512vnni, avxvnni;
  bool avx512vbmi;               /* vpermi2b (cg_lut_map's zmm form) */
  bool avx512dq;                 /* vrangeps (quant_nchw.c's clamp) */
  bool fma;                      /* FMA3 (quant_nchw.c's ymm form) */
  bool amx_int8, amx_tile, amx;  /* amx: both */
  bool dotprod, i8mm;            /* AArch64 sdot, smmla */
  bool linux_os;                 /* the triple's OS is Linux */
  quill_llvm_isa isa;            /* the chosen path for integer kernels */
} cg_target;

/* Resolve triple/cpu/features from the options, check them and pick the
 * ISA path. Errors (unknown triple, CPU, forced ISA the features lack) are
 * diagnostics + QUILL_ERR_INVALID. Free with cg_target_free. */
quill_status cg_target_init(quill_context *ctx, const quill_llvm_options *o,
                            cg_target *t);
void cg_target_free(quill_context *ctx, cg_target *t);
/* A TargetMachine for t (NULL after a diagnostic). */
LLVMTargetMachineRef cg_target_machine(quill_context *ctx, const cg_target *t,
                                       unsigned opt_level);

/* ---- views, slots, values ------------------------------------------------ */

typedef enum cg_slot_kind {
  CG_SLOT_SCRATCH, /* an interval of the scratch buffer */
  CG_SLOT_INPUT,   /* the user's input pointer io_index */
  CG_SLOT_OUTPUT,  /* the user's output pointer io_index */
} cg_slot_kind;

typedef struct cg_slot {
  cg_slot_kind kind;
  unsigned io_index;
  size_t size;      /* bytes */
  int first, last;  /* live from op index first to last (inclusive) */
  size_t offset;    /* in scratch (memplan) */
} cg_slot;

/* Strided storage: element (i0, i1, ..) is at
 * base + (offset + sum i_d * strides[d]) * elem_bytes. */
typedef struct cg_view {
  int slot;              /* buffer slot, or -1 for a constant global */
  LLVMValueRef global;   /* the constant's global (slot < 0) */
  int64_t offset;        /* in elements */
  unsigned rank;
  int64_t dims[QUILL_MAX_RANK];
  int64_t strides[QUILL_MAX_RANK]; /* in elements; 0 broadcasts */
  quill_type *elem;      /* element type (scalar or quant) */
} cg_view;

typedef struct cg_value {
  const quill_value *v;
  quill_type *type;      /* tensor type */
  cg_view view;          /* where the value lives */
  bool chlast;           /* rank 4 stored NHWC */
  bool is_const;
  const quill_attr *constant; /* dense data of a constant */
  int def;               /* op index of the producer (0: graph argument) */
  int last_use;          /* op index of the last use */
  int alias_of;          /* value index whose slot this one shares, or -1 */
  /* NHWC values read only by padded convs live inside a larger buffer
   * whose border (halo[0..3] = top, left, bottom, right) holds the zero
   * point halo_fill, so those convs read them in place (no panel copy) */
  bool haloed;
  int64_t halo[4];
  int64_t halo_fill;
  /* a conv result read only by a channel concat of its own type is written
   * straight into the concat's buffer (memplan.c): slab_of is the concat
   * result's value index + 1 (0: none), slab_start its first channel */
  int slab_of;
  int64_t slab_start;
  /* a concat of the first slabs of a larger concat is a view of that
   * concat's first channels: its value index + 1 (0: none) */
  int prefix_of;
  bool planned; /* a concat result planned at its first slab's producer */
} cg_value;

/* ---- lowering table (codegen.c) -------------------------------------------- */

enum {
  CG_LAY_CHLAST = 1u << 0, /* rank-4 result stored NHWC */
  CG_LAY_FOLLOW = 1u << 1, /* result takes operand 0's layout (same rank) */
  CG_ALIAS = 1u << 2,      /* result may share operand 0's storage when it is
                              row-major (reshape-like ops) */
  /* (views in general: cg_lowering.view) */
};

typedef struct cg_lowering {
  /* NULL if the lowering handles this op, else a static reason. */
  const char *(*supports)(const quill_op *op);
  quill_status (*lower)(cg *c, const quill_op *op);
  unsigned flags;
  /* Optional: the result as a view of operand 0's storage (no code at
   * all), or false when that is not possible; `out` holds the result's
   * dims and element type on entry. */
  bool (*view)(const quill_op *op, const cg_view *in, cg_view *out);
} cg_lowering;

extern const cg_lowering cg_lowerings[QUILL_OP_COUNT];

/* ---- the code generator's state ------------------------------------------- */

typedef struct cg_stage {
  LLVMValueRef fn;
  int64_t ntasks;
  unsigned nparams;
  int *param_slot; /* slot bound to each pointer parameter, -1 unused */
  int64_t *param_off; /* and the byte offset into the slot it points at */
  int op_index;
  bool serial;     /* never split over threads */
  double work_ns;  /* estimated single-thread time: stages too small to
                      pay for waking the pool run on the caller */
  bool amx;        /* uses AMX tiles: not inlined, releases them on return */
} cg_stage;

struct cg {
  quill_context *ctx;
  const quill_graph *g;
  quill_llvm_options opts;
  const cg_target *tgt;
  LLVMContextRef lc;
  LLVMModuleRef mod;
  LLVMBuilderRef b;  /* positioned in the current stage's body */
  LLVMBuilderRef eb; /* the current stage's entry block (allocas, ptrs) */
  LLVMTypeRef t_void, t_i1, t_i8, t_i16, t_i32, t_i64, t_f32, t_f64, t_ptr;

  cg_value *vals;
  unsigned nvals;
  const quill_value **keys; /* open-addressing map value -> index */
  unsigned *map_idx;
  unsigned map_cap;

  cg_slot *slots;
  unsigned nslots, cap_slots;
  size_t scratch_size;

  cg_stage *stages;
  unsigned nstages, cap_stages;
  cg_stage dummy; /* built into (and discarded) after an allocation failure */

  /* current stage */
  cg_stage *st;
  LLVMValueRef *params;
  LLVMValueRef t0, t1;
  LLVMBasicBlockRef entry_bb;

  const quill_op *op; /* op being lowered */
  int op_index;
  unsigned nglobals;
  bool libm;           /* the code calls libm (exp, tanh, ...) */
  bool amx;            /* some stage uses AMX: the entry asks the kernel */
  quill_status status; /* sticky failure of helpers (NOMEM) */
};

/* codegen.c */
cg_value *cg_val(cg *c, const quill_value *v);
/* The lowering emits a located error at the op being lowered. */
quill_status cg_op_error(cg *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The op's 'axis' attribute (default -1, negative counts from the end) as
 * a dim of a rank-`rank` value; an error naming it when out of range. */
quill_status cg_op_axis(cg *c, unsigned rank, unsigned *ax);
/* The number of rows of a row-wise op along ax: the product of x's other
 * dims. */
int64_t cg_row_count(const cg_view *x, unsigned ax);
/* The element offsets in x and y of row `row` of a row-wise op along ax
 * (softmax, layer_norm): rows enumerate every other dim in logical order. */
void cg_row_offsets(cg *c, LLVMValueRef row, const cg_view *x,
                    const cg_view *y, unsigned ax, LLVMValueRef *ox,
                    LLVMValueRef *oy);

/* entry.c: NAME_run and NAME_run_argv (pool: the JIT's pool global, or
 * NULL). Failures go to c->status. */
void cg_build_entry(cg *c, bool jit, LLVMValueRef pool);

/* share.c: stages with identical code share one (noinline) function. */
quill_status cg_share_stages(cg *c);
/* Instructions in fn as built. */
unsigned cg_fn_size(LLVMValueRef fn);

/* memplan.c */
quill_status cg_plan_values(cg *c);
/* Emit the stages that fill the halos of op's results (before its
 * lowering runs). */
void cg_fill_halos(cg *c, const quill_op *op);
/* A new scratch slot of `bytes` live during the current op only. */
int cg_workspace(cg *c, size_t bytes);
int cg_new_slot(cg *c, cg_slot_kind kind, size_t size, int first, int last);
quill_status cg_plan_alloc(cg *c);
/* Row-major strides for dims (rank r) into strides. */
void cg_row_major(unsigned r, const int64_t *dims, int64_t *strides);
/* True if the view covers its elements densely in row-major order (dims of
 * size 1 ignored), starting at its offset. */
bool cg_view_is_row_major(const cg_view *v);
/* The default view of a value (its storage). */
cg_view cg_value_view(cg *c, const quill_value *v);

/* ---- stages and IR helpers (irb.c) ---------------------------------------- */

/* Start a stage function for the current op, doing `ntasks` tasks. The
 * builder is positioned in its body; c->t0, c->t1 are the task range. */
void cg_stage_begin(cg *c, const char *name, int64_t ntasks);
/* Finish it (adds the return). */
void cg_stage_end(cg *c);
/* Set the current stage's estimated single-thread time (default: half a
 * nanosecond per element of the op's results). */
void cg_stage_work(cg *c, double ns);
/* The current stage uses AMX tiles (conv_amx.c). */
void cg_stage_use_amx(cg *c);
/* Base pointer of a view inside the current stage (its element 0). */
LLVMValueRef cg_view_base(cg *c, const cg_view *v);
/* Pointer to slot memory (byte `off` of the slot) in the current stage. */
LLVMValueRef cg_slot_ptr(cg *c, int slot);
LLVMValueRef cg_slot_ptr_at(cg *c, int slot, int64_t off);

/* An i64 loop over [begin, end) by step (end exclusive, slt compare). */
typedef struct cg_loop {
  LLVMValueRef i; /* the induction variable (i64) */
  LLVMValueRef phi;
  LLVMBasicBlockRef head, body, exit;
  int64_t step;
} cg_loop;
void cg_loop_begin(cg *c, cg_loop *l, LLVMValueRef begin, LLVMValueRef end,
                   int64_t step);
void cg_loop_end(cg *c, cg_loop *l);
/* cg_loop_end, asking LLVM to vectorize the loop `width` lanes wide and
 * not to unroll it. */
void cg_loop_end_vectorized(cg *c, cg_loop *l, unsigned width);
/* cg_loop_end, asking LLVM not to unroll the loop (a big body whose
 * copies cost compile time and gain nothing). */
void cg_loop_end_nounroll(cg *c, cg_loop *l);
/* Constant-bounds shorthand. */
void cg_for(cg *c, cg_loop *l, int64_t begin, int64_t end, int64_t step);

typedef struct cg_if {
  LLVMBasicBlockRef then_bb, else_bb, merge;
} cg_if;
void cg_if_begin(cg *c, cg_if *f, LLVMValueRef cond);
void cg_if_else(cg *c, cg_if *f);
void cg_if_end(cg *c, cg_if *f);

/* A local variable (alloca in the stage's entry block). */
LLVMValueRef cg_var(cg *c, LLVMTypeRef t, const char *name);

LLVMValueRef cg_i8c(cg *c, int64_t v);
LLVMValueRef cg_i16c(cg *c, int64_t v);
LLVMValueRef cg_i32c(cg *c, int64_t v);
LLVMValueRef cg_i64c(cg *c, int64_t v);
LLVMValueRef cg_f32c(cg *c, double v);
LLVMValueRef cg_f64c(cg *c, double v);
/* A constant of (vector or scalar) integer type t. */
LLVMValueRef cg_intc(LLVMTypeRef t, int64_t v);
/* Vector of n lanes of t (t itself when n == 1). */
LLVMTypeRef cg_vec(LLVMTypeRef t, unsigned n);
/* Splat a scalar value to n lanes (itself when n == 1). */
LLVMValueRef cg_splat(cg *c, LLVMValueRef s, unsigned n);
/* The <n x i1> mask of the first `left` lanes (lane l < left; left an
 * i64 value, n <= 64): the mask of a masked load or store of a tail. */
LLVMValueRef cg_lane_mask(cg *c, LLVMValueRef left, unsigned n);
/* n (1..4) <16 x i32> vectors narrowed with saturation to bytes ([-128,
 * 127] when is_signed, else [0, 255]), v[0]'s lanes first: a <64 x i8>
 * whose bytes past 16 n are undefined. AVX-512BW only (vpackssdw,
 * vpacksswb/vpackuswb, one vpermd): 4 shuffles for 64 bytes where
 * vpmovdb takes 2 a vector. */
LLVMValueRef cg_pack_bytes(cg *c, const LLVMValueRef *v, unsigned n,
                           bool is_signed);
/* The same for n (1..4) <8 x i32> vectors with AVX2 (256-bit vpackssdw,
 * vpacksswb/vpackuswb, then a dword shuffle): a <8 n x i8>, v[0]'s lanes
 * first. */
LLVMValueRef cg_pack_bytes8(cg *c, const LLVMValueRef *v, unsigned n,
                            bool is_signed);
/* Float v (scalar or vector) clamped to [lo, hi]: two selects, lo first
 * (NaN stays NaN). */
LLVMValueRef cg_fclamp(cg *c, LLVMValueRef v, LLVMValueRef lo,
                       LLVMValueRef hi);
/* ptr + byte offset (i64 value). */
LLVMValueRef cg_gep8(cg *c, LLVMValueRef ptr, LLVMValueRef off);
/* &((T*)ptr)[idx] */
LLVMValueRef cg_gep(cg *c, LLVMTypeRef t, LLVMValueRef ptr, LLVMValueRef idx);
LLVMValueRef cg_load(cg *c, LLVMTypeRef t, LLVMValueRef ptr, unsigned align);
void cg_store(cg *c, LLVMValueRef v, LLVMValueRef ptr, unsigned align);
LLVMValueRef cg_min_s(cg *c, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef cg_max_s(cg *c, LLVMValueRef a, LLVMValueRef b);
/* The sum of the n (a power of two) partial sums of type t at part[0..n),
 * added as a tree in a fixed order (part[l] += part[l + w], w = n/2 .. 1),
 * as the reference's fixed-order sums do; part[0] is overwritten. */
LLVMValueRef cg_tree_sum(cg *c, LLVMTypeRef t, LLVMValueRef part, int n);
/* Call an LLVM intrinsic by name with overload types. */
LLVMValueRef cg_intrinsic(cg *c, const char *name, LLVMTypeRef *over,
                          unsigned nover, LLVMValueRef *args, unsigned nargs);
/* Prefetch the cache line at ptr into L2 (llvm.prefetch: read, locality
 * 2, data; prefetcht1 on x86). Never faults, whatever ptr is. */
void cg_prefetch_l2(cg *c, LLVMValueRef ptr);
/* Call (declaring on first use) an external function. */
LLVMValueRef cg_call_extern(cg *c, const char *name, LLVMTypeRef fty,
                            LLVMValueRef *args, unsigned nargs);
/* A private constant global holding `size` bytes (aligned to 64). */
LLVMValueRef cg_const_global(cg *c, const char *name, const void *data,
                             size_t size);

/* ---- elements ------------------------------------------------------------ */

/* The LLVM type of one stored element of a scalar or quant element type
 * (i4/u4/bool: i8; quant: its storage). */
LLVMTypeRef cg_elem_type(cg *c, const quill_type *elem);
/* The storage scalar type of an element type (quant -> storage). */
quill_type *cg_storage(const quill_type *elem);
/* Whether two tensor types have the same rank and dims (elements aside). */
bool cg_same_shape(const quill_type *a, const quill_type *b);
/* Load an integer element at ptr and widen it to `to` (i32 or i64),
 * sign- or zero-extending by the storage type (i4/u4 masked as the
 * reference reads them). */
LLVMValueRef cg_load_int(cg *c, const quill_type *elem, LLVMValueRef ptr,
                         LLVMTypeRef to);
/* The same widening for an already loaded (scalar or vector) storage
 * value. */
LLVMValueRef cg_widen_int(cg *c, const quill_type *elem, LLVMValueRef raw,
                          LLVMTypeRef to);
/* Store an integer (any width) truncated to the element's storage (i4/u4
 * wrapped to 4 bits as the reference stores them). */
void cg_store_int(cg *c, const quill_type *elem, LLVMValueRef v,
                  LLVMValueRef ptr);
/* Load any numeric element as f32 (floats converted, ints exactly as
 * (float)int). */
LLVMValueRef cg_load_f32(cg *c, const quill_type *elem, LLVMValueRef ptr);

/* ---- the generic strided elementwise engine (eltwise.c) ----------------- */

/* Computes out[i] = fn(in_0[i'], ..., in_n[i']) over out's dims, each
 * input view already broadcast to out's dims (stride 0 along broadcast
 * dims). fn gets each input element already loaded (its LLVM element
 * type, raw: widen with cg_widen_int) and returns the value to store: an
 * integer of any width (stored with cg_store_int semantics) or a float of
 * out's type. Per-channel parameters are passed as extra broadcast input
 * views (a constant global with stride 1 along the channel axis). */
typedef LLVMValueRef (*cg_map_fn)(cg *c, void *ud, LLVMValueRef *in);
/* Emit one stage doing the map; dims are coalesced, the inner loop is
 * contiguous when the layouts allow it, tasks split the outer dims. */
void cg_map(cg *c, const char *name, const cg_view *out, unsigned nin,
            const cg_view *ins, cg_map_fn fn, void *ud);
/* Copy (with element conversion only if the storage types are equal). */
void cg_copy(cg *c, const char *name, const cg_view *dst, const cg_view *src);
/* Broadcast view of `v` (numpy rules) to rank/dims of the output. */
cg_view cg_view_broadcast(const cg_view *v, unsigned rank,
                          const int64_t *dims);
/* Fill a whole view with one value (i8..i64 or f32 storage). */
void cg_fill(cg *c, const char *name, const cg_view *dst, LLVMValueRef value);

/* ---- requantization (requant.c) -------------------------------------------- */

/* The requantization of an integer op's int32 accumulator (quant.md 3):
 * clamp(zp + R(acc), lo, hi). Parameters are per tensor (n == 1) or per
 * channel. */
typedef struct cg_requant {
  bool raw;          /* i32 result: store acc as is */
  quill_rounding r;
  bool fixed;        /* multiplier/shift, else f32 scale */
  size_t n;          /* parameter count (1 or channels) */
  int32_t *mult;     /* n */
  int32_t *shift;    /* n */
  float *scale;      /* n */
  int64_t zp, lo, hi;
  LLVMValueRef g_mult, g_shift, g_scale; /* per-channel globals (lazy) */
  size_t pad;        /* extra elements in those globals (vector tails) */
  bool noclamp;      /* fixed point only: R(v) modulo 2^32, no zp/clamp
                        (zp must be 0): qadd's intermediate terms */
  struct cg_epi *epi; /* ops fused after the requantization (fuse_epi.c) */
  bool bounded;      /* |acc * scale| < 2^30 for any input (cg_requant_bound) */
} cg_requant;

/* Set up from the op's attributes and types: in_scale * w_scales[c] /
 * out_scale (float path), or multiplier/shift; act_min/act_max clamps.
 * w_scales has nw entries (1 or per channel); nch result channels. */
quill_status cg_requant_init(cg *c, const quill_op *op, double in_scale,
                             const double *w_scales, size_t nw, size_t nch,
                             cg_requant *rq);
void cg_requant_free(cg *c, cg_requant *rq);
/* Apply to acc (i32 or <W x i32>): lanes are channels ch, ch+1, ... when
 * `lanes_are_channels`, else all lanes channel ch (an i64 value; ignored
 * for per-tensor params). Returns i32 lanes holding the final clamped
 * values (or acc itself when raw). */
LLVMValueRef cg_requant_apply(cg *c, cg_requant *rq, LLVMValueRef acc,
                              LLVMValueRef ch, bool lanes_are_channels);
/* The same for a caller that narrows the result to storage [smin, smax]
 * with saturating packs (cg_pack_bytes): the clamps the saturation does are
 * left out, so lanes may lie outside [lo, hi] by what saturation removes.
 * NULL when that cannot be (fixed point, other roundings, fused ops,
 * bounds outside the storage range). */
LLVMValueRef cg_requant_apply_sat(cg *c, cg_requant *rq, LLVMValueRef acc,
                                  LLVMValueRef ch, bool lanes_are_channels,
                                  int64_t smin, int64_t smax);
/* The float path's result minus zp, as an integer-valued f32 (what a
 * fused qadd computes with next), or NULL where cg_requant_apply_sat is. */
LLVMValueRef cg_requant_apply_f(cg *c, cg_requant *rq, LLVMValueRef acc,
                                LLVMValueRef ch, bool lanes_are_channels);
/* Set rq->bounded when every accumulator of the centered weights wc
 * ([M][K]) and bias (or NULL), for inputs within 255 of their zero point,
 * times its scale is below 2^30 in magnitude (float path only): then
 * cg_requant_apply_sat needs no clamp where the storage range is the
 * result's. */
void cg_requant_bound(cg_requant *rq, const int32_t *wc, const int32_t *bias,
                      int64_t M, int64_t K);
/* cg_requant_apply for one i64 accumulator (accumulator = "i64"): the 64-bit
 * requantization (quill_requant_fixed64, or the f32 conversion of the i64);
 * channel ch (NULL: 0). Returns the final clamped value as i32. */
LLVMValueRef cg_requant_apply_i64(cg *c, cg_requant *rq, LLVMValueRef acc,
                                  LLVMValueRef ch);
/* The scalar contract for one value (compile time; tests and folding). */
int64_t cg_requant_eval(const cg_requant *rq, size_t ch, int32_t acc);
/* Float -> integer rounding of an f32/f64 (vector) value with a policy,
 * as quill_round does (NaN -> 0 must be handled by the caller). */
LLVMValueRef cg_round(cg *c, LLVMValueRef v, quill_rounding r);

/* ---- lowering functions (lower_*.c) ---------------------------------------- */

#define CG_LOWER(name) quill_status name(cg *c, const quill_op *op)
#define CG_SUPPORTS(name) const char *name(const quill_op *op)

/* lower_data.c */
CG_LOWER(cg_lower_constant);
CG_LOWER(cg_lower_alias);     /* identity reshape flatten squeeze unsqueeze scast */
CG_LOWER(cg_lower_transpose);
bool cg_view_transpose(const quill_op *op, const cg_view *in, cg_view *out);
CG_LOWER(cg_lower_concat);
CG_LOWER(cg_lower_split);
CG_LOWER(cg_lower_slice);
CG_LOWER(cg_lower_pad);
CG_LOWER(cg_lower_gather);
CG_SUPPORTS(cg_supports_gather);
CG_LOWER(cg_lower_resize);
CG_SUPPORTS(cg_supports_pad);
CG_SUPPORTS(cg_supports_resize);
CG_SUPPORTS(cg_supports_slice);

/* lower_quant.c */
CG_LOWER(cg_lower_quantize);
CG_LOWER(cg_lower_dequantize);
CG_LOWER(cg_lower_requantize);
CG_SUPPORTS(cg_supports_quant);

/* The element operations of quantize and dequantize (per-tensor type e,
 * f32 expressed), for loops that fuse them (fuse_qdq.c): x = (float)(raw
 * - zp) * s from a loaded storage value; q = clamp(round_r(x / s) + zp,
 * qmin, qmax) of an f32 x (an integer to store with cg_store_int). */
LLVMValueRef cg_dequantize_elem(cg *c, const quill_type *e, LLVMValueRef raw);
LLVMValueRef cg_quantize_elem(cg *c, const quill_type *e, quill_rounding r,
                              LLVMValueRef x);
/* quant_nchw.c: quantize x (f32 NCHW, C <= 4) to y (8 bits per tensor,
 * NHWC) with rounding r as one stage of 16 pixels a step on the zmm
 * paths, 8 on the ymm ones; false (nothing emitted) where it does not
 * apply. */
bool cg_quant_nchw(cg *c, const cg_view *y, const cg_view *x,
                   quill_rounding r);
/* The op's `rounding` attribute (default half_even). */
quill_status cg_op_rounding(cg *c, const quill_op *op, quill_rounding *r);

/* fuse_qdq.c: dequantize -> softmax / layer_norm -> quantize without the
 * float tensors. */
#define CG_FUSED_ROW_MAX 16384 /* longest fused row (stack buffer) */
/* DEQUANTIZE's view function: its result is its operand's storage (still
 * quantized) when its one user is a softmax / layer_norm reading it. */
bool cg_view_dequantize(const quill_op *op, const cg_view *in, cg_view *out);
/* The quantize a softmax / layer_norm op stores into directly, or NULL. */
const quill_op *cg_fused_quantize(const quill_op *op);
/* A quantize whose producer stores it (it emits nothing itself). */
bool cg_quantize_is_fused(const quill_op *q);
/* base[off] of an f32 view, or of a fused dequantize's quantized view, as
 * f32. */
LLVMValueRef cg_load_f32_dq(cg *c, const cg_view *v, LLVMValueRef base,
                            LLVMValueRef off);
/* Where an f32 softmax / layer_norm stores its results. */
typedef struct cg_fused_out {
  const quill_op *q;  /* the fused quantize, or NULL: store f32 */
  cg_view view;       /* q's result view: store there instead */
  quill_rounding r;   /* q's rounding */
} cg_fused_out;
quill_status cg_fused_out_init(cg *c, const quill_op *op, cg_fused_out *o);
/* base[off] = v (f32), or its quantization when o->q. */
void cg_fused_store(cg *c, const cg_fused_out *o, LLVMValueRef v,
                    LLVMValueRef base, LLVMValueRef off);

/* fuse_add.c: a qconv2d's residual qadd in the conv's epilogue. */
typedef struct cg_conv_add {
  const quill_op *add; /* the qadd, or NULL */
  unsigned conv_operand; /* which of its operands the conv's result is */
  cg_view other;       /* the other operand (channels contiguous) */
  cg_view y;           /* the qadd's result: the conv stores there */
  bool recip;          /* cg_qadd_recip held: multiply by inv_y */
  float inv_y;
} cg_conv_add;
/* The qadd a qconv2d's result may go through in the conv's epilogue (its
 * one user, the float form, 8-bit, same shapes, the other operand
 * computed before the conv), or NULL. Decided from the graph alone: the
 * memory plan runs before the lowering. */
const quill_op *cg_fused_qadd(cg *c, const quill_op *conv);
/* A qadd emitted with the conv that produces an operand (its own
 * lowering emits nothing). */
bool cg_qadd_is_fused(cg *c, const quill_op *add);
/* The fused qadd of a conv epilogue from the conv's value as dconv, its
 * result minus conv_zp as an integer-valued f32 (cg_requant_apply_f; one
 * rounding and no int round trip), and the other operand's i32 lanes: the
 * result's i32 lanes, unclamped where saturation to [smin, smax] does the
 * clamp. NULL where the reference's arithmetic could differ (not the
 * narrow float form, another zero point, an unbounded quotient). */
LLVMValueRef cg_qadd_vec_sat(cg *c, const quill_op *op, bool recip,
                             float inv_y, unsigned conv_operand,
                             int64_t conv_zp, LLVMValueRef dconv,
                             LLVMValueRef other, int64_t smin, int64_t smax);
/* The views of conv's fused qadd when the epilogue can take it (channels
 * contiguous in the other operand and the result); false otherwise. */
bool cg_conv_add_init(cg *c, const quill_op *conv, cg_conv_add *fa);
/* The qadd of the conv's requantized value r and the other operand's o
 * (i32 vectors of storage values), in the qadd's operand order. */
LLVMValueRef cg_conv_add_apply(cg *c, const cg_conv_add *fa, LLVMValueRef r,
                               LLVMValueRef o);

/* lower_qelt.c: the qadd's float form (operands of at most 16 bits, f32)
 * on vectors of i32 operand values, lane by lane as the scalar loop;
 * recip: divide by the result scale as a multiplication by inv_y, which
 * cg_qadd_recip checked gives the same results for every operand pair
 * (8-bit operands; it tries them all, once per op). */
bool cg_qadd_vec_form(const quill_op *op);
bool cg_qadd_recip(const quill_op *op, float *inv_y);
LLVMValueRef cg_qadd_vec(cg *c, const quill_op *op, bool recip, float inv_y,
                         LLVMValueRef a, LLVMValueRef b);
/* qadd / qmul as its own stage (also a fused qadd whose conv took a path
 * without the fused epilogue: emitted right after the conv). */
quill_status cg_qbinary_emit(cg *c, const quill_op *op);
/* Whether cg_lut_map takes its 64-bytes-a-step form (vpermi2b: the zmm
 * VNNI paths of an AVX512-VBMI CPU, x and y 8-bit, dense, one layout). */
bool cg_lut_zmm_applies(cg *c, const cg_view *y, const cg_view *x);
/* The 256-entry table of a one-operand op on an 8-bit per-tensor operand:
 * the op run by the reference kernels on every byte (fuse_lut.c). */
quill_status cg_lut_table(cg *c, const quill_op *op, unsigned char *tab);
/* lower_qelt.c: y[i] = table[x[i] - min of x's storage] over x's elements,
 * the table holding y's storage values (a lut op, fuse_lut.c's chains). */
void cg_lut_map(cg *c, const char *name, cg_view *y, cg_view *x,
                LLVMValueRef table);

/* lower_dynquant.c */
CG_LOWER(cg_lower_dynamic_quantize);
CG_SUPPORTS(cg_supports_dynamic_quantize);

/* lower_conv.c */
CG_LOWER(cg_lower_qconv2d);
CG_SUPPORTS(cg_supports_qconv2d);

/* lower_qelt.c */
CG_LOWER(cg_lower_qbinary); /* qadd qmul */
CG_LOWER(cg_lower_lut);
CG_SUPPORTS(cg_supports_qbinary);

/* fuse_lut.c: dequantize -> elementwise f32 ops with one-element constants
 * -> quantize, lowered as one 256-entry table lookup. */
/* The dequantize starting quantize q's chain, or NULL (no chain). */
const quill_op *cg_qlut_source(const quill_op *q);
/* op (a dequantize or float op) belongs to a quantize's chain: the
 * quantize computes it, it emits nothing. */
bool cg_qlut_fused(const quill_op *op);
/* Lower quantize q (cg_qlut_source(q) != NULL) as the table lookup. */
quill_status cg_qlut_emit(cg *c, const quill_op *q);

/* fuse_epi.c: qmatmul -> qadd (a per-column constant) -> lut chains
 * computed in the qmatmul's requantization epilogue. */
/* The qmatmul whose epilogue computes op (a qadd or lut), or NULL. */
const quill_op *cg_epi_head(const quill_op *op);
/* op (a qadd or lut) is computed in a qmatmul's epilogue: it emits nothing. */
bool cg_epi_is_fused(const quill_op *op);
/* The last op of the chain fused into qmatmul mm's epilogue, or NULL. */
const quill_op *cg_epi_last(const quill_op *mm);
/* Attach mm's chain to rq (cg_requant_apply applies it after the
 * requantization; cg_requant_free frees it). */
quill_status cg_epi_attach(cg *c, const quill_op *mm, cg_requant *rq);
/* The chain applied to requantized i32 lanes v (channels as for
 * cg_requant_apply); i32 lanes of the last op's storage values. */
LLVMValueRef cg_epi_apply(cg *c, cg_requant *rq, LLVMValueRef v,
                          LLVMValueRef ch, bool lanes_are_channels);
void cg_epi_free(cg *c, struct cg_epi *e);

/* lower_matmul.c */
CG_LOWER(cg_lower_qmatmul);
CG_SUPPORTS(cg_supports_qmatmul);

/* lower_pool.c */
CG_LOWER(cg_lower_pool);
CG_LOWER(cg_lower_global_pool);
CG_SUPPORTS(cg_supports_pool);

/* lower_float.c */
CG_LOWER(cg_lower_unary);
CG_LOWER(cg_lower_binary);
CG_LOWER(cg_lower_clip);
CG_LOWER(cg_lower_cast);
CG_LOWER(cg_lower_conv2d);
CG_LOWER(cg_lower_matmul);
CG_LOWER(cg_lower_gemm);
CG_LOWER(cg_lower_softmax);
/* softmax: f32, or TFLite's int16 or int8 form (lower_softmax16.c) */
CG_SUPPORTS(cg_supports_softmax);
bool cg_softmax_is_integer(const quill_op *op);
CG_LOWER(cg_lower_softmax_int);
CG_LOWER(cg_lower_softmax_i8);
CG_LOWER(cg_lower_batch_norm);
CG_SUPPORTS(cg_supports_unary);
CG_SUPPORTS(cg_supports_binary);
CG_SUPPORTS(cg_supports_float);
CG_SUPPORTS(cg_supports_cast);

/* lower_reduce.c */
CG_LOWER(cg_lower_reduce); /* reduce_mean reduce_sum reduce_max reduce_min */
CG_LOWER(cg_lower_layer_norm);
CG_LOWER(cg_lower_qlayer_norm);
CG_SUPPORTS(cg_supports_reduce);

/* lower_qlstm.c: TFLite's integer LSTM (ir/qlstm.h), constant w, r, b */
CG_LOWER(cg_lower_qlstm);
CG_SUPPORTS(cg_supports_qlstm);

/* lower_select.c */
CG_LOWER(cg_lower_compare); /* equal less greater */
CG_LOWER(cg_lower_where);
CG_LOWER(cg_lower_conv_transpose2d); /* f32 (cg_supports_float) */
CG_SUPPORTS(cg_supports_compare);
CG_SUPPORTS(cg_supports_where);

/* The float convs' last step for one output pixel (n, oh, ow):
 * y[n, m, oh, ow] = act(acc[m] + bias[m]) for m < M; bv NULL without bias
 * (lower_float.c). */
void cg_float_conv_store(cg *c, const quill_op *op, LLVMValueRef acc,
                         int64_t M, const cg_view *bv, LLVMValueRef bb,
                         const cg_view *y, LLVMValueRef yb, LLVMValueRef n,
                         LLVMValueRef oh, LLVMValueRef ow);
/* The op's fused float activation (relu/clip) applied to an f32 value. */
LLVMValueRef cg_float_activation(cg *c, const quill_op *op, LLVMValueRef v);

/* fmath_ir.c: f32 exp, tanh, erf of the numerics contract (ir/fmath.h),
 * inline IR without calls, bit-exact with the reference. */
LLVMValueRef cg_fexp(cg *c, LLVMValueRef x);
LLVMValueRef cg_ftanh(cg *c, LLVMValueRef x);
LLVMValueRef cg_ferf(cg *c, LLVMValueRef x);

#endif /* QUILL_TARGETS_LLVM_CG_H */
