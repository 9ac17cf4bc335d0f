/*
 * ref.h - the reference target: a slow, obviously-correct interpreter of
 * Quill ops on host tensors, used by constant folding and (later) to run
 * whole graphs and check the other targets against.
 *
 * A kernel evaluates one op on statically shaped tensors:
 *
 *   inputs[0..num_operands)  --kernel(ctx, op, inputs, outputs)-->  outputs
 *
 * Kernels are found through one opcode-indexed table fed by designated
 * initializers (`[QUILL_OP_ADD] = {quill_ref_kernel_binary, ...}`); an
 * opcode without an entry is reported as "op 'X' is not supported by target
 * 'reference'". Semantics follow ONNX (numpy broadcasting, truncating
 * float->int casts, C-like integer division with division by zero reported
 * as an error). Float kernels compute in f32 for f32, f16 and bf16 tensors
 * and in f64 for f64 tensors.
 *
 * Data layout is the dense attribute layout (ir/attr.h): row-major, host
 * byte order, one byte per bool/i4/u4 element, quantized tensors hold their
 * storage integers. So a constant's attribute data is directly a tensor.
 */
#ifndef QUILL_TARGETS_REFERENCE_REF_H
#define QUILL_TARGETS_REFERENCE_REF_H

#include "../../ir/ir.h"

QUILL_BEGIN_DECLS

/* ---- tensors -------------------------------------------------------------- */

/* A host tensor. `type` is a statically shaped tensor type; `data` holds
 * `size` = num_elements * elem_bytes bytes (NULL when size is 0). Whether
 * the data is owned depends on how the tensor was made (see below). */
struct quill_tensor { /* typedef in ir/types_fwd.h */
  quill_type *type;
  void *data;
  size_t size;
};

/* Allocate a zero-filled tensor of a statically shaped tensor type. Free it
 * with quill_tensor_free(). QUILL_ERR_INVALID (no diagnostic) if the type is
 * not a static tensor type, QUILL_ERR_NOMEM on allocation failure; on
 * failure *t is zeroed. */
quill_status quill_tensor_alloc(quill_context *ctx, quill_type *type,
                                quill_tensor *t);
/* Free the data of a tensor made by quill_tensor_alloc (no-op for zeroed
 * tensors) and zero *t. */
void quill_tensor_free(quill_context *ctx, quill_tensor *t);
/* A borrowed, read-only view of a dense attribute (valid as long as the
 * context). Never free it; never write through it. */
quill_tensor quill_tensor_from_attr(const quill_attr *dense);
/* The tensor's data as a new uniqued dense attr (NULL on allocation
 * failure). */
const quill_attr *quill_tensor_to_attr(quill_context *ctx,
                                       const quill_tensor *t);

size_t quill_tensor_num_elements(const quill_tensor *t);
/* Element type kind; for quantized tensors, the storage type's kind. */
quill_type_kind quill_tensor_elem_kind(const quill_tensor *t);

/* Read element i (row-major index), converted. Floats read exactly (f16
 * and bf16 through quill_f16_to_f32 / quill_bf16_to_f32); bool reads 0/1;
 * i4 sign-extends. get_i64 of a float truncates toward zero and saturates
 * (NaN reads 0); get_i64 of u64 returns the bit pattern. */
double quill_tensor_get_f64(const quill_tensor *t, size_t i);
int64_t quill_tensor_get_i64(const quill_tensor *t, size_t i);
/* Write element i, converted to the element type: floats round to nearest
 * even; integers from set_i64 wrap to the type's width (two's complement),
 * integers from set_f64 truncate toward zero and saturate (NaN -> 0);
 * bool stores v != 0. */
void quill_tensor_set_f64(quill_tensor *t, size_t i, double v);
void quill_tensor_set_i64(quill_tensor *t, size_t i, int64_t v);

/* Row-major element strides of a static tensor type (rank entries). */
void quill_ref_strides(const quill_type *t, int64_t *strides);

/* ---- numpy broadcasting iterator ------------------------------------------ */

/* The most inputs one iterator walks (where has three). */
#define QUILL_REF_BCAST_MAX_INPUTS 4

/* Walks the elements of an output shape in row-major order and tracks the
 * matching element index of each input under numpy broadcasting:
 *
 *   quill_ref_bcast it;
 *   if (!quill_ref_bcast_init(&it, out->type, 2, types)) -> shape error
 *   for (size_t i = 0; i < it.count; i++, quill_ref_bcast_next(&it))
 *     use it.offset[0], it.offset[1] (element indices into the inputs)
 */
typedef struct quill_ref_bcast {
  unsigned rank;                                 /* output rank */
  unsigned num_inputs;
  size_t count;                                  /* output elements */
  size_t offset[QUILL_REF_BCAST_MAX_INPUTS];     /* current input indices */
  int64_t dims[QUILL_MAX_RANK];                  /* output dims */
  int64_t index[QUILL_MAX_RANK];                 /* current output index */
  int64_t stride[QUILL_REF_BCAST_MAX_INPUTS][QUILL_MAX_RANK]; /* 0 if bcast */
} quill_ref_bcast;

/* Set up an iterator over `out` (a static tensor type). Returns false if n
 * is too large or some input shape does not broadcast to out's shape (each
 * input dim, aligned from the right, must be 1 or equal the output dim). */
bool quill_ref_bcast_init(quill_ref_bcast *it, const quill_type *out,
                          unsigned n, const quill_type *const *ins);
void quill_ref_bcast_next(quill_ref_bcast *it);

/* ---- kernels -------------------------------------------------------------- */

/* Evaluate `op` on `inputs` (one per operand) into `outputs` (one per
 * result, type and zeroed data preallocated by the caller, normally from
 * the op's result types). Reads attributes from op. On failure (a shape
 * mismatch, a bad attribute, integer division by zero, an out-of-range
 * gather index) emits an error diagnostic at the op's location and returns
 * QUILL_ERR_INVALID; outputs then hold unspecified values. */
typedef quill_status (*quill_ref_kernel_fn)(quill_context *ctx,
                                            const quill_op *op,
                                            const quill_tensor *inputs,
                                            quill_tensor *outputs);
/* Whether a kernel handles this particular op (its element types and
 * attributes kinds): NULL if so, else a static reason ("integer tensors",
 * "quantized element types"). Must not emit diagnostics. */
typedef const char *(*quill_ref_supports_fn)(const quill_op *op);

typedef struct quill_ref_kernel {
  quill_ref_kernel_fn eval;       /* NULL: the opcode is not supported */
  quill_ref_supports_fn supports; /* NULL: every op eval accepts */
} quill_ref_kernel;

/* The kernel table, indexed by opcode (targets/reference/ref.c). */
extern const quill_ref_kernel quill_ref_kernels[QUILL_OP_COUNT];

/* True if the reference target can evaluate this op (a kernel exists and
 * accepts its types). On false, *why (if non-NULL) gets a static reason. */
bool quill_ref_op_supported(const quill_op *op, const char **why);

/* Evaluate one op: checks that there is a kernel that supports the op and
 * that every tensor is consistent with its type, then runs the kernel.
 * Unsupported ops are reported as "op 'X' is not supported by target
 * 'reference'" at the op's location (QUILL_ERR_UNSUPPORTED); kernel
 * failures as described for quill_ref_kernel_fn. After a successful kernel
 * run, an `activation` attribute ("relu", or "clip" with activation_min /
 * activation_max, set by fuse-activation) is applied to every float output:
 * this is the one place fused activations are evaluated, so anything that
 * runs ops must go through this function rather than the kernel table. */
quill_status quill_ref_eval_op(quill_context *ctx, const quill_op *op,
                               const quill_tensor *in, quill_tensor *out);

/* Allocate one zeroed output tensor per result of op from its result types
 * (which must be statically shaped). On failure nothing stays allocated;
 * QUILL_ERR_NOMEM or QUILL_ERR_INVALID (dynamic shape, with a diagnostic).
 * Free with quill_ref_outputs_free(). */
quill_status quill_ref_outputs_alloc(quill_context *ctx, const quill_op *op,
                                     quill_tensor *out);
void quill_ref_outputs_free(quill_context *ctx, const quill_op *op,
                            quill_tensor *out);

/* Free n tensors made by quill_tensor_alloc or returned by quill_ref_run
 * (zeroed tensors are skipped) and zero them. */
void quill_ref_tensors_free(quill_context *ctx, quill_tensor *t, unsigned n);

/* ---- graph execution (targets/reference/interp.c) ------------------------- */

/* Called after each op has run, with its result tensors (one per result,
 * read-only, valid only during the call). Return QUILL_OK to continue;
 * any other status stops the run, which then returns that status (the
 * observer emits its own diagnostic). Calibration collects statistics
 * through this hook. */
typedef quill_status (*quill_ref_observer_fn)(void *ud, const quill_op *op,
                                              const quill_tensor *results,
                                              unsigned num_results);

/* Run graph g on `inputs` (one per graph argument, in order; their types
 * must equal the argument types, the data is only read) and produce one
 * output per graph result in `outputs` (n_out must equal the number of
 * results). Output tensors are allocated through the context allocator and
 * owned by the caller: free them with quill_ref_tensors_free(ctx, outputs,
 * n_out) (or quill_tensor_free on each).
 *
 * Ops run in program order through quill_ref_kernels; constants are
 * borrowed from their attributes, and every intermediate tensor is freed
 * right after its last use. Before anything runs, every op is checked
 * against the kernel table, and each unsupported one is reported as
 * "op 'X' is not supported by target 'reference'" (QUILL_ERR_UNSUPPORTED).
 * A wrong input count or an input whose type differs from its argument's
 * is reported naming the argument (QUILL_ERR_INVALID). On any failure the
 * outputs are left zeroed and nothing stays allocated. */
quill_status quill_ref_run(quill_context *ctx, const quill_graph *g,
                           const quill_tensor *inputs, unsigned n_in,
                           quill_tensor *outputs, unsigned n_out);
/* Same, calling `observer` (if non-NULL) with `ud` after each op, constants
 * included. */
quill_status quill_ref_run_observed(quill_context *ctx, const quill_graph *g,
                                    const quill_tensor *inputs, unsigned n_in,
                                    quill_tensor *outputs, unsigned n_out,
                                    quill_ref_observer_fn observer, void *ud);

/* Check, without running anything, that the reference target can run g:
 * every op has a kernel that accepts it and every result type is
 * statically shaped. Reports EVERY problem (unsupported ops as "op 'X' is
 * not supported by target 'reference'" at the op) and returns
 * QUILL_ERR_UNSUPPORTED if some op is unsupported, QUILL_ERR_INVALID for
 * other problems, else QUILL_OK. quill_ref_run does the same check first;
 * tools call this to report unsupported ops before reading any input. */
quill_status quill_ref_check_graph(quill_context *ctx, const quill_graph *g);

QUILL_END_DECLS

#endif /* QUILL_TARGETS_REFERENCE_REF_H */
