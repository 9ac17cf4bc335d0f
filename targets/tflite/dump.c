/*
 * dump.c - a readable summary of a .tflite buffer (quill_tflite_dump),
 * read with the bounds-checked FlatBuffers reader and schema.h:
 *
 *   model v3 "Quill"
 *   opcode #0 CONV_2D v3
 *   tensor #0 x INT8[1,8,8,3] q=0.05:-3
 *   tensor #1 w INT8[4,3,3,3] q=axis0{0.1:0,...} buffer 1 (108 bytes)
 *   op #0 CONV_2D(x, w, w_bias) -> y {padding=SAME stride_w=1 ...}
 *   inputs x
 *   outputs y
 *   signature serving_default inputs x=#0 outputs y=#5
 *   metadata min_runtime_version "1.14.0"
 *
 * Options tables are printed through the field list below (every field,
 * defaults applied), so a wrong field id shows as a wrong value. Small
 * INT32 constants (up to 8 values: shapes, axes, slice bounds, indices)
 * are printed with their values. Used by
 * `quill-translate --dump-tflite` and the lit tests.
 */
#include <string.h>

#include "targets/tflite/export_impl.h"

typedef struct opt_field {
  const char *name;
  unsigned id;
  char kind; /* 'b' byte, 'i' int32, 'f' float, 'v' [int], 'B' bool */
  int64_t dflt;
} opt_field;

typedef struct opt_desc {
  int type;
  const opt_field *fields;
} opt_desc;

static const opt_field conv_f[] = {
    {"padding", 0, 'b', 0}, {"stride_w", 1, 'i', 0}, {"stride_h", 2, 'i', 0},
    {"act", 3, 'b', 0}, {"dilation_w", 4, 'i', 1}, {"dilation_h", 5, 'i', 1},
    {0}};
static const opt_field dw_f[] = {
    {"padding", 0, 'b', 0}, {"stride_w", 1, 'i', 0}, {"stride_h", 2, 'i', 0},
    {"depth_multiplier", 3, 'i', 0}, {"act", 4, 'b', 0},
    {"dilation_w", 5, 'i', 1}, {"dilation_h", 6, 'i', 1}, {0}};
static const opt_field pool_f[] = {
    {"padding", 0, 'b', 0}, {"stride_w", 1, 'i', 0}, {"stride_h", 2, 'i', 0},
    {"filter_w", 3, 'i', 0}, {"filter_h", 4, 'i', 0}, {"act", 5, 'b', 0},
    {0}};
static const opt_field fc_f[] = {{"act", 0, 'b', 0},
                                 {"weights_format", 1, 'b', 0},
                                 {"keep_num_dims", 2, 'B', 0},
                                 {0}};
static const opt_field softmax_f[] = {{"beta", 0, 'f', 0}, {0}};
static const opt_field concat_f[] = {{"axis", 0, 'i', 0}, {"act", 1, 'b', 0},
                                     {0}};
static const opt_field add_f[] = {{"act", 0, 'b', 0},
                                  {"pot_scale_int16", 1, 'B', 1},
                                  {0}};
static const opt_field act_f[] = {{"act", 0, 'b', 0}, {0}};
static const opt_field reshape_f[] = {{"new_shape", 0, 'v', 0}, {0}};
static const opt_field reducer_f[] = {{"keep_dims", 0, 'B', 0}, {0}};
static const opt_field rbil_f[] = {{"align_corners", 2, 'B', 0},
                                   {"half_pixel_centers", 3, 'B', 0},
                                   {0}};
static const opt_field rnn_f[] = {{"align_corners", 0, 'B', 0},
                                  {"half_pixel_centers", 1, 'B', 0},
                                  {0}};
static const opt_field bmm_f[] = {{"adj_x", 0, 'B', 0}, {"adj_y", 1, 'B', 0},
                                  {0}};
static const opt_field leaky_f[] = {{"alpha", 0, 'f', 0}, {0}};
static const opt_field cast_f[] = {{"in", 0, 'b', 0}, {"out", 1, 'b', 0},
                                   {0}};
static const opt_field mirror_f[] = {{"mode", 0, 'b', 0}, {0}};
static const opt_field gelu_f[] = {{"approximate", 0, 'B', 0}, {0}};
static const opt_field gather_f[] = {{"axis", 0, 'i', 0},
                                     {"batch_dims", 1, 'i', 0},
                                     {0}};
static const opt_field sslice_f[] = {{"begin_mask", 0, 'i', 0},
                                     {"end_mask", 1, 'i', 0},
                                     {"ellipsis_mask", 2, 'i', 0},
                                     {"new_axis_mask", 3, 'i', 0},
                                     {"shrink_axis_mask", 4, 'i', 0},
                                     {"offset", 5, 'B', 0},
                                     {0}};
static const opt_field split_f[] = {{"num_splits", 0, 'i', 0}, {0}};
static const opt_field tconv_f[] = {{"padding", 0, 'b', 0},
                                    {"stride_w", 1, 'i', 0},
                                    {"stride_h", 2, 'i', 0},
                                    {"act", 3, 'b', 0},
                                    {0}};
static const opt_field uslstm_f[] = {{"act", 0, 'b', 0},
                                     {"cell_clip", 1, 'f', 0},
                                     {"proj_clip", 2, 'f', 0},
                                     {"time_major", 3, 'B', 0},
                                     {0}};
static const opt_field none_f[] = {{0}};

static const opt_desc opt_descs[] = {
    {TFL_OPT_Conv2DOptions, conv_f},
    {TFL_OPT_DepthwiseConv2DOptions, dw_f},
    {TFL_OPT_Pool2DOptions, pool_f},
    {TFL_OPT_FullyConnectedOptions, fc_f},
    {TFL_OPT_SoftmaxOptions, softmax_f},
    {TFL_OPT_ConcatenationOptions, concat_f},
    {TFL_OPT_AddOptions, add_f},
    {TFL_OPT_SubOptions, add_f},
    {TFL_OPT_MulOptions, act_f},
    {TFL_OPT_DivOptions, act_f},
    {TFL_OPT_ReshapeOptions, reshape_f},
    {TFL_OPT_ReducerOptions, reducer_f},
    {TFL_OPT_ResizeBilinearOptions, rbil_f},
    {TFL_OPT_ResizeNearestNeighborOptions, rnn_f},
    {TFL_OPT_BatchMatMulOptions, bmm_f},
    {TFL_OPT_LeakyReluOptions, leaky_f},
    {TFL_OPT_CastOptions, cast_f},
    {TFL_OPT_MirrorPadOptions, mirror_f},
    {TFL_OPT_GeluOptions, gelu_f},
    {TFL_OPT_GatherOptions, gather_f},
    {TFL_OPT_StridedSliceOptions, sslice_f},
    {TFL_OPT_SplitOptions, split_f},
    {TFL_OPT_SplitVOptions, split_f},
    {TFL_OPT_TransposeConvOptions, tconv_f},
    {TFL_OPT_UnidirectionalSequenceLSTMOptions, uslstm_f},
};

static const char *type_name(int t) {
  static const char *const n[] = {
      "FLOAT32", "FLOAT16", "INT32",  "UINT8",    "INT64",      "STRING",
      "BOOL",    "INT16",   "COMPLEX64", "INT8",  "FLOAT64",    "COMPLEX128",
      "UINT64",  "RESOURCE", "VARIANT", "UINT32", "UINT16",     "INT4",
      "BFLOAT16"};
  return t >= 0 && t < (int)(sizeof n / sizeof n[0]) ? n[t] : "?";
}

static void print_ints(FILE *out, const quill_fb_vec *v) {
  fputc('[', out);
  for (uint32_t i = 0; i < v->n; i++)
    fprintf(out, "%s%lld", i ? "," : "", (long long)quill_fb_vec_int(v, i, 4));
  fputc(']', out);
}

/* Name of tensor i (or "-" for an absent optional input). */
static const char *tensor_name(const quill_fb_vec *tensors, int64_t i) {
  quill_fb_table t;
  if (i < 0)
    return "-";
  if (!quill_fb_vec_table(tensors, (uint32_t)i, &t))
    return "?";
  const char *n = quill_fb_get_string(&t, TFL_TENSOR_NAME, NULL);
  return n ? n : "?";
}

static void print_quant(FILE *out, const quill_fb_table *q) {
  quill_fb_vec sc, zp;
  if (!quill_fb_get_vec(q, TFL_QUANT_SCALE, 4, &sc) ||
      !quill_fb_get_vec(q, TFL_QUANT_ZERO_POINT, 8, &zp))
    return;
  if (sc.n == 1 && zp.n == 1) {
    fprintf(out, " q=%.9g:%lld", (double)quill_fb_vec_f32(&sc, 0),
            (long long)quill_fb_vec_int(&zp, 0, 8));
    return;
  }
  fprintf(out, " q=axis%lld{",
          (long long)quill_fb_get_int(q, TFL_QUANT_QUANTIZED_DIMENSION, 4, 0));
  for (uint32_t i = 0; i < sc.n && i < 4; i++)
    fprintf(out, "%s%.9g:%lld", i ? "," : "", (double)quill_fb_vec_f32(&sc, i),
            (long long)(i < zp.n ? quill_fb_vec_int(&zp, i, 8) : 0));
  fprintf(out, "%s}", sc.n > 4 ? ",..." : "");
  if (zp.n != sc.n)
    fprintf(out, " (%u zero points)", zp.n);
}

static void print_options(FILE *out, const quill_fb_table *op) {
  int type = (int)quill_fb_get_uint(op, TFL_OPERATOR_BUILTIN_OPTIONS_TYPE, 1, 0);
  if (!type)
    return;
  quill_fb_table o;
  if (!quill_fb_get_table(op, TFL_OPERATOR_BUILTIN_OPTIONS, &o)) {
    fprintf(out, " {options %d: unreadable}", type);
    return;
  }
  const opt_field *f = none_f;
  for (size_t i = 0; i < sizeof opt_descs / sizeof opt_descs[0]; i++)
    if (opt_descs[i].type == type)
      f = opt_descs[i].fields;
  if (!f->name)
    return;
  fputs(" {", out);
  for (const opt_field *p = f; p->name; p++) {
    fprintf(out, "%s%s=", p == f ? "" : " ", p->name);
    quill_fb_vec v;
    switch (p->kind) {
    case 'b':
      fprintf(out, "%lld", (long long)quill_fb_get_int(&o, p->id, 1, p->dflt));
      break;
    case 'B':
      fputs(quill_fb_get_uint(&o, p->id, 1, (uint64_t)p->dflt) ? "true"
                                                               : "false",
            out);
      break;
    case 'i':
      fprintf(out, "%lld", (long long)quill_fb_get_int(&o, p->id, 4, p->dflt));
      break;
    case 'f':
      fprintf(out, "%g", (double)quill_fb_get_f32(&o, p->id, (float)p->dflt));
      break;
    case 'v':
      if (quill_fb_get_vec(&o, p->id, 4, &v))
        print_ints(out, &v);
      else
        fputs("-", out);
      break;
    }
  }
  fputc('}', out);
}

quill_status quill_tflite_dump(quill_context *ctx, const void *data,
                               size_t len, FILE *out) {
  quill_fb_table model, sg, t;
  quill_fb_vec codes, subgraphs, tensors, ops, buffers, v;
  if (!quill_fb_root(data, len, TFL_FILE_IDENTIFIER, &model) ||
      !quill_fb_get_vec(&model, TFL_MODEL_SUBGRAPHS, 4, &subgraphs) ||
      !quill_fb_vec_table(&subgraphs, 0, &sg))
    return quill_error(ctx, quill_loc_unknown(),
                       "not a readable TFLite FlatBuffer (file identifier "
                       "\"TFL3\", a model with a subgraph)");
  const char *desc = quill_fb_get_string(&model, TFL_MODEL_DESCRIPTION, NULL);
  fprintf(out, "model v%llu \"%s\"\n",
          (unsigned long long)quill_fb_get_uint(&model, TFL_MODEL_VERSION, 4, 0),
          desc ? desc : "");
  bool have_codes = quill_fb_get_vec(&model, TFL_MODEL_OPERATOR_CODES, 4,
                                     &codes);
  for (uint32_t i = 0; have_codes && i < codes.n; i++) {
    if (!quill_fb_vec_table(&codes, i, &t))
      continue;
    int64_t dep = quill_fb_get_int(&t, TFL_OPCODE_DEPRECATED_BUILTIN_CODE, 1, 0);
    int64_t code = quill_fb_get_int(&t, TFL_OPCODE_BUILTIN_CODE, 4, 0);
    const char *cc = quill_fb_get_string(&t, TFL_OPCODE_CUSTOM_CODE, NULL);
    const char *name = tx_builtin_name((int32_t)code);
    fprintf(out, "opcode #%u %s", i, name ? name : "?");
    if (!name)
      fprintf(out, "(%lld)", (long long)code);
    if (cc)
      fprintf(out, " \"%s\"", cc);
    fprintf(out, " v%lld",
            (long long)quill_fb_get_int(&t, TFL_OPCODE_VERSION, 4, 1));
    if (dep != (code < 127 ? code : 127))
      fprintf(out, " (deprecated_builtin_code %lld)", (long long)dep);
    fputc('\n', out);
  }
  bool have_bufs = quill_fb_get_vec(&model, TFL_MODEL_BUFFERS, 4, &buffers);
  /* A subgraph without tensors: an empty vector, so that tensor_name
   * below (operator and subgraph inputs/outputs) reads "?" instead of an
   * uninitialised vector. */
  bool have_t = quill_fb_get_vec(&sg, TFL_SUBGRAPH_TENSORS, 4, &tensors);
  if (!have_t)
    memset(&tensors, 0, sizeof tensors);
  for (uint32_t i = 0; have_t && i < tensors.n; i++) {
    if (!quill_fb_vec_table(&tensors, i, &t))
      continue;
    int type = (int)quill_fb_get_int(&t, TFL_TENSOR_TYPE, 1, 0);
    fprintf(out, "tensor #%u %s %s", i, tensor_name(&tensors, i),
            type_name(type));
    if (quill_fb_get_vec(&t, TFL_TENSOR_SHAPE, 4, &v))
      print_ints(out, &v);
    quill_fb_table q;
    if (quill_fb_get_table(&t, TFL_TENSOR_QUANTIZATION, &q))
      print_quant(out, &q);
    uint64_t buf = quill_fb_get_uint(&t, TFL_TENSOR_BUFFER, 4, 0);
    quill_fb_table bt;
    quill_fb_vec bd;
    if (buf) {
      fprintf(out, " buffer %llu", (unsigned long long)buf);
      if (have_bufs && quill_fb_vec_table(&buffers, (uint32_t)buf, &bt) &&
          quill_fb_get_vec(&bt, TFL_BUFFER_DATA, 1, &bd))
      {
        fprintf(out, " (%u bytes)", bd.n);
        if (type == TFL_INT32 && bd.n <= 32) { /* shapes, axes, indices */
          fputs(" = [", out);
          for (uint32_t k = 0; k + 4 <= bd.n; k += 4)
            fprintf(out, "%s%lld", k ? "," : "",
                    (long long)quill_fb_vec_int(&bd, k / 4, 4));
          fputc(']', out);
        }
      }
    }
    fputc('\n', out);
  }
  bool have_ops = quill_fb_get_vec(&sg, TFL_SUBGRAPH_OPERATORS, 4, &ops);
  for (uint32_t i = 0; have_ops && i < ops.n; i++) {
    if (!quill_fb_vec_table(&ops, i, &t))
      continue;
    uint64_t ci = quill_fb_get_uint(&t, TFL_OPERATOR_OPCODE_INDEX, 4, 0);
    quill_fb_table ct;
    const char *name = "?";
    if (have_codes && quill_fb_vec_table(&codes, (uint32_t)ci, &ct)) {
      const char *n = tx_builtin_name(
          (int32_t)quill_fb_get_int(&ct, TFL_OPCODE_BUILTIN_CODE, 4, 0));
      const char *cc = quill_fb_get_string(&ct, TFL_OPCODE_CUSTOM_CODE, NULL);
      name = cc ? cc : n ? n : "?";
    }
    fprintf(out, "op #%u %s(", i, name);
    if (quill_fb_get_vec(&t, TFL_OPERATOR_INPUTS, 4, &v))
      for (uint32_t k = 0; k < v.n; k++)
        fprintf(out, "%s%s", k ? ", " : "",
                tensor_name(&tensors, quill_fb_vec_int(&v, k, 4)));
    fputs(") ->", out);
    if (quill_fb_get_vec(&t, TFL_OPERATOR_OUTPUTS, 4, &v))
      for (uint32_t k = 0; k < v.n; k++)
        fprintf(out, "%s%s", k ? ", " : " ",
                tensor_name(&tensors, quill_fb_vec_int(&v, k, 4)));
    if (quill_fb_get_vec(&t, TFL_OPERATOR_INTERMEDIATES, 4, &v))
      for (uint32_t k = 0; k < v.n; k++)
        fprintf(out, "%s%s", k ? ", " : " intermediates ",
                tensor_name(&tensors, quill_fb_vec_int(&v, k, 4)));
    print_options(out, &t);
    fputc('\n', out);
  }
  static const unsigned io[2] = {TFL_SUBGRAPH_INPUTS, TFL_SUBGRAPH_OUTPUTS};
  for (int k = 0; k < 2; k++) {
    fputs(k ? "outputs" : "inputs", out);
    if (quill_fb_get_vec(&sg, io[k], 4, &v))
      for (uint32_t i = 0; i < v.n; i++)
        fprintf(out, " %s", tensor_name(&tensors, quill_fb_vec_int(&v, i, 4)));
    fputc('\n', out);
  }
  quill_fb_vec sigs;
  if (quill_fb_get_vec(&model, TFL_MODEL_SIGNATURE_DEFS, 4, &sigs))
    for (uint32_t i = 0; i < sigs.n; i++) {
      if (!quill_fb_vec_table(&sigs, i, &t))
        continue;
      const char *key = quill_fb_get_string(&t, TFL_SIGDEF_SIGNATURE_KEY, NULL);
      fprintf(out, "signature %s", key ? key : "?");
      static const unsigned f[2] = {TFL_SIGDEF_INPUTS, TFL_SIGDEF_OUTPUTS};
      for (int k = 0; k < 2; k++) {
        fputs(k ? " outputs" : " inputs", out);
        quill_fb_table m;
        if (quill_fb_get_vec(&t, f[k], 4, &v))
          for (uint32_t j = 0; j < v.n; j++)
            if (quill_fb_vec_table(&v, j, &m)) {
              const char *n = quill_fb_get_string(&m, TFL_TENSORMAP_NAME, NULL);
              fprintf(out, " %s=#%llu", n ? n : "?",
                      (unsigned long long)quill_fb_get_uint(
                          &m, TFL_TENSORMAP_TENSOR_INDEX, 4, 0));
            }
      }
      fputc('\n', out);
    }
  quill_fb_vec meta;
  if (quill_fb_get_vec(&model, TFL_MODEL_METADATA, 4, &meta))
    for (uint32_t i = 0; i < meta.n; i++) {
      quill_fb_table m, bt;
      quill_fb_vec bd;
      if (!quill_fb_vec_table(&meta, i, &m))
        continue;
      const char *n = quill_fb_get_string(&m, TFL_METADATA_NAME, NULL);
      uint64_t buf = quill_fb_get_uint(&m, TFL_METADATA_BUFFER, 4, 0);
      fprintf(out, "metadata %s buffer %llu", n ? n : "?",
              (unsigned long long)buf);
      if (have_bufs && quill_fb_vec_table(&buffers, (uint32_t)buf, &bt) &&
          quill_fb_get_vec(&bt, TFL_BUFFER_DATA, 1, &bd)) {
        const char *s = (const char *)bd.buf + bd.pos;
        size_t sl = strnlen(s, bd.n);
        fputs(" \"", out);
        for (size_t c = 0; c < sl; c++)
          if (s[c] == '\n')
            fputs("\\n", out);
          else
            fputc(s[c], out);
        fputc('"', out);
      }
      fputc('\n', out);
    }
  return QUILL_OK;
}
