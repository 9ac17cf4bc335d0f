/*
 * op_verify.c - op-specific verifiers named in ir/ops.def.
 * (Placeholder: every verifier accepts; replaced by the real rules.)
 */
#include "ir/ir.h"

quill_status quill_verify_batch_norm(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
quill_status quill_verify_binary(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
quill_status quill_verify_cast(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
quill_status quill_verify_clip(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
quill_status quill_verify_compare(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
quill_status quill_verify_concat(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
quill_status quill_verify_constant(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
quill_status quill_verify_conv2d(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
quill_status quill_verify_conv_transpose2d(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
quill_status quill_verify_dequantize(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
quill_status quill_verify_fake_quant(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
quill_status quill_verify_flatten(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
quill_status quill_verify_gather(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
quill_status quill_verify_gemm(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
quill_status quill_verify_global_pool(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
quill_status quill_verify_layer_norm(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
quill_status quill_verify_matmul(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
quill_status quill_verify_pad(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
quill_status quill_verify_pool(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
quill_status quill_verify_quantize(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
quill_status quill_verify_reduce(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
quill_status quill_verify_requantize(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
quill_status quill_verify_reshape(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
quill_status quill_verify_resize(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
quill_status quill_verify_return(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
quill_status quill_verify_same_type(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
quill_status quill_verify_slice(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
quill_status quill_verify_softmax(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
quill_status quill_verify_split(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
quill_status quill_verify_squeeze(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
quill_status quill_verify_transpose(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
quill_status quill_verify_unary(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
quill_status quill_verify_unsqueeze(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
quill_status quill_verify_where(quill_context *ctx, const quill_op *op) { (void)ctx; (void)op; return QUILL_OK; }
