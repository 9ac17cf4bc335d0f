/*
 * plugin.c - the ACME NPU plugin's entry point: registers the pattern set
 * "acme-npu", the pass `acme-fuse`, the custom op kind
 * "acme.conv_add_relu" and the exporter "acme-qparams" with the context
 * that loads it:
 *
 *   quill quantize model.onnx --backend acme-npu.json --calib data/ \
 *       --load-pass-plugin=libacme_npu.so -o model.qir
 *
 * The config's "plugin" key names this plugin ("acme-npu") and its pass
 * (`acme-fuse`), which the quantization pipeline runs after fuse-qdq.
 */
#include "acme_npu.h"

QUILL_PLUGIN("acme-npu", "1.0") {
  quill_status st = quill_plugin_register_patterns(reg, "acme-npu",
                                                   acme_patterns,
                                                   acme_num_patterns);
  if (!st)
    st = quill_plugin_register_pass(reg, &acme_fuse_pass);
  if (!st)
    st = quill_plugin_register_custom_op(reg, &acme_conv_add_relu);
  if (!st)
    st = quill_plugin_register_exporter(reg, &acme_qparams_exporter);
  return st;
}
