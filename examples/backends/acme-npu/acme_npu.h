/*
 * acme_npu.h - the parts of the ACME NPU plugin (an example vendor
 * backend, README.md): what each file defines, for plugin.c to register.
 *
 *   fuse.c     the pattern set "acme-npu" (qconv2d -> qadd+relu into one
 *              custom op) and the pass `acme-fuse` that applies it
 *   kernel.c   the custom op kind "acme.conv_add_relu": its verifier and
 *              its reference evaluator (`quill run` executes it)
 *   qparams.c  the exporter "acme-qparams": the NPU toolchain's JSON file
 *              of per-tensor quantization parameters
 *
 * Everything here uses the installed public API only (<quill/plugin.h>).
 */
#ifndef ACME_NPU_H
#define ACME_NPU_H

#include <quill/plugin.h>

/* The custom op the fusion produces (kernel.c defines its semantics). */
#define ACME_CONV_ADD_RELU "acme.conv_add_relu"

extern const quill_pattern acme_patterns[];
extern const unsigned acme_num_patterns;
extern const quill_pass acme_fuse_pass;
extern const quill_custom_op acme_conv_add_relu;
extern const quill_exporter acme_qparams_exporter;

#endif /* ACME_NPU_H */
