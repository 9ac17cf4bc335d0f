/*
 * writer.c - serialize the lowered model as a TFLite FlatBuffer.
 *
 *   Model (version 3, file identifier "TFL3")
 *     operator_codes  one per distinct (builtin or custom code, version):
 *                     deprecated_builtin_code = min(code, 127) and
 *                     builtin_code, as the schema asks of writers
 *     subgraphs[0]    tensors, inputs, outputs, operators, name "main"
 *     description     "Quill"
 *     buffers         [0] empty (the schema's sentinel), then constant
 *                     data (16-byte aligned), then the metadata buffers
 *     metadata        "min_runtime_version": 16 bytes, the highest
 *                     runtime any op version needs, NUL padded;
 *                     "quill": producer and graph input/output layouts
 *     signature_defs  "serving_default": inputs and outputs by name
 *
 * Back to front (flatbuf.c): large constant data is written first and so
 * ends up at the end of the file, tables refer forward to it.
 */
#include <stdlib.h>
#include <string.h>

#include "targets/tflite/export_impl.h"

/* v1 < v2 for dotted versions ("1.14.0" < "2.3.0"); "" is lowest. */
static bool version_less(const char *a, const char *b) {
  while (*a || *b) {
    long x = strtol(a, (char **)&a, 10), y = strtol(b, (char **)&b, 10);
    if (x != y)
      return x < y;
    if (*a == '.')
      a++;
    if (*b == '.')
      b++;
    if (!*a && !*b)
      break;
    if (!*a)
      return true;
    if (!*b)
      return false;
  }
  return false;
}

static quill_fb_ref write_options(quill_fb_builder *b, const tx_op *o) {
  quill_fb_ref vecs[16] = {0};
  for (unsigned i = 0; i < o->nopts && i < 16; i++)
    if (o->opts[i].kind == TXO_VEC_I32)
      vecs[i] = quill_fb_vector(b, o->opts[i].vec, o->opts[i].nvec, 4, 0);
  quill_fb_table_start(b);
  for (unsigned i = 0; i < o->nopts && i < 16; i++) {
    const tx_opt *p = &o->opts[i];
    switch (p->kind) {
    case TXO_BOOL:
      quill_fb_add_bool(b, p->id, p->i != 0, p->dflt_i != 0);
      break;
    case TXO_I8:
      quill_fb_add_i8(b, p->id, (int8_t)p->i, (int8_t)p->dflt_i);
      break;
    case TXO_I32:
      quill_fb_add_i32(b, p->id, (int32_t)p->i, (int32_t)p->dflt_i);
      break;
    case TXO_F32:
      quill_fb_add_f32(b, p->id, p->f, p->dflt_f);
      break;
    case TXO_VEC_I32:
      quill_fb_add_ref(b, p->id, vecs[i]);
      break;
    }
  }
  return quill_fb_table_end(b);
}

static quill_fb_ref write_tensor(quill_fb_builder *b, const tx_tensor *t) {
  int32_t shape[QUILL_MAX_RANK], sig[QUILL_MAX_RANK];
  bool dynamic = false;
  for (unsigned i = 0; i < t->rank; i++) {
    dynamic |= t->shape[i] < 0;
    shape[i] = t->shape[i] < 0 ? 1 : t->shape[i];
    sig[i] = t->shape[i];
  }
  quill_fb_ref vshape = quill_fb_vector(b, shape, t->rank, 4, 0);
  quill_fb_ref vsig = dynamic ? quill_fb_vector(b, sig, t->rank, 4, 0) : 0;
  quill_fb_ref name = quill_fb_cstring(b, t->name);
  quill_fb_ref quant = 0;
  if (t->nq) {
    quill_fb_ref sc = quill_fb_vector(b, t->scale, t->nq, 4, 0);
    quill_fb_ref zp = quill_fb_vector(b, t->zero_point, t->nq, 8, 0);
    quill_fb_table_start(b);
    quill_fb_add_ref(b, TFL_QUANT_SCALE, sc);
    quill_fb_add_ref(b, TFL_QUANT_ZERO_POINT, zp);
    quill_fb_add_i32(b, TFL_QUANT_QUANTIZED_DIMENSION, t->nq > 1 ? t->qdim : 0,
                     0);
    quant = quill_fb_table_end(b);
  }
  quill_fb_table_start(b);
  quill_fb_add_ref(b, TFL_TENSOR_SHAPE, vshape);
  quill_fb_add_i8(b, TFL_TENSOR_TYPE, t->type, TFL_FLOAT32);
  quill_fb_add_u32(b, TFL_TENSOR_BUFFER, t->buffer, 0);
  quill_fb_add_ref(b, TFL_TENSOR_NAME, name);
  quill_fb_add_ref(b, TFL_TENSOR_QUANTIZATION, quant);
  quill_fb_add_ref(b, TFL_TENSOR_SHAPE_SIGNATURE, vsig);
  quill_fb_add_bool(b, TFL_TENSOR_HAS_RANK, true, false);
  quill_fb_add_bool(b, TFL_TENSOR_IS_VARIABLE, t->is_variable, false);
  return quill_fb_table_end(b);
}

static quill_fb_ref write_buffer(quill_fb_builder *b, const void *data,
                                 size_t size) {
  quill_fb_ref d = size ? quill_fb_vector(b, data, size, 1,
                                          TFL_BUFFER_DATA_ALIGN)
                        : 0;
  quill_fb_table_start(b);
  quill_fb_add_ref(b, TFL_BUFFER_DATA, d);
  return quill_fb_table_end(b);
}

static quill_fb_ref tensor_maps(quill_fb_builder *b, tflite_exporter *ex,
                                const int32_t *idx, unsigned n) {
  quill_fb_ref *maps = tx_alloc(ex, (n ? n : 1) * sizeof *maps);
  if (!maps)
    return 0;
  for (unsigned i = 0; i < n; i++) {
    quill_fb_ref name = quill_fb_cstring(b, ex->tensors[idx[i]].name);
    quill_fb_table_start(b);
    quill_fb_add_ref(b, TFL_TENSORMAP_NAME, name);
    quill_fb_add_u32(b, TFL_TENSORMAP_TENSOR_INDEX, (uint32_t)idx[i], 0);
    maps[i] = quill_fb_table_end(b);
  }
  return quill_fb_vector_refs(b, maps, n);
}

/* "input NAME perm 0,2,3,1" lines for the quill metadata. */
static char *io_text(tflite_exporter *ex) {
  char *text = tx_printf(ex, "%s\n", QUILL_TFLITE_PRODUCER);
  const quill_graph *g = ex->graph;
  quill_op *ret = quill_graph_return(g);
  unsigned na = quill_graph_num_args(g);
  unsigned nr = ret ? quill_op_num_operands(ret) : 0;
  for (unsigned i = 0; text && i < na + nr; i++) {
    const quill_value *v = i < na ? quill_graph_arg(g, i)
                                  : quill_op_operand(ret, i - na);
    int32_t t = i < na ? ex->inputs[i] : ex->outputs[i - na];
    unsigned r = quill_type_rank(quill_value_type(v));
    bool nhwc = tx_layout_of(ex, v) == TX_NHWC;
    char perm[3 * QUILL_MAX_RANK + 1] = "";
    size_t len = 0;
    for (unsigned k = 0; k < r; k++) {
      static const int p4[4] = {0, 2, 3, 1};
      len += (size_t)snprintf(perm + len, sizeof perm - len, "%s%d",
                              k ? "," : "", nhwc ? p4[k] : (int)k);
    }
    text = tx_printf(ex, "%s%s %s perm %s\n", text, i < na ? "input" : "output",
                     t >= 0 ? ex->tensors[t].name : "?", r ? perm : "-");
  }
  return text;
}

quill_status tx_write_model(tflite_exporter *ex, void **data, size_t *len) {
  quill_fb_builder *b = quill_fb_builder_create(ex->ctx, ex->opts.max_size);
  if (!b)
    return QUILL_ERR_NOMEM;
  /* metadata payloads */
  char runtime[16] = {0};
  const char *best = "";
  for (size_t i = 0; i < ex->nops; i++) {
    const char *r = tx_min_runtime(ex->ops[i].builtin, ex->ops[i].version);
    if (version_less(best, r))
      best = r;
  }
  strncpy(runtime, best, sizeof runtime - 1);
  char *quill_text = io_text(ex);
  if (!quill_text || ex->nomem) {
    quill_fb_builder_destroy(b);
    return QUILL_ERR_NOMEM;
  }
  /* buffers[0] is the empty sentinel, also in a model without constants */
  size_t ndata = ex->nbuffers ? ex->nbuffers : 1;
  size_t nbuf = ndata + 2;
  quill_fb_ref *bufs = tx_alloc(ex, nbuf * sizeof *bufs);
  quill_fb_ref *tens = tx_alloc(ex, (ex->ntensors + 1) * sizeof *tens);
  quill_fb_ref *ops = tx_alloc(ex, (ex->nops + 1) * sizeof *ops);
  quill_fb_ref *codes = tx_alloc(ex, (ex->nops + 1) * sizeof *codes);
  uint32_t *op_code = tx_alloc(ex, (ex->nops + 1) * sizeof *op_code);
  if (!bufs || !tens || !ops || !codes || !op_code) {
    quill_fb_builder_destroy(b);
    return QUILL_ERR_NOMEM;
  }
  /* buffers: constant data first (it ends up last in the file) */
  for (size_t i = ndata; i-- > 0;)
    bufs[i] = i < ex->nbuffers
                  ? write_buffer(b, ex->buffers[i].data, ex->buffers[i].size)
                  : write_buffer(b, NULL, 0);
  bufs[ndata] = write_buffer(b, runtime, sizeof runtime);
  bufs[ndata + 1] = write_buffer(b, quill_text, strlen(quill_text));
  quill_fb_ref vbufs = quill_fb_vector_refs(b, bufs, nbuf);
  /* tensors */
  for (size_t i = 0; i < ex->ntensors; i++)
    tens[i] = write_tensor(b, &ex->tensors[i]);
  quill_fb_ref vtens = quill_fb_vector_refs(b, tens, ex->ntensors);
  /* operator codes: distinct (builtin, custom code, version) */
  size_t ncodes = 0;
  for (size_t i = 0; i < ex->nops; i++) {
    const tx_op *o = &ex->ops[i];
    size_t k = 0;
    for (; k < i; k++) {
      const tx_op *p = &ex->ops[k];
      if (p->builtin == o->builtin && p->version == o->version &&
          (p->custom_code == o->custom_code ||
           (p->custom_code && o->custom_code &&
            !strcmp(p->custom_code, o->custom_code))))
        break;
    }
    if (k < i) {
      op_code[i] = op_code[k];
      continue;
    }
    quill_fb_ref cc = o->custom_code ? quill_fb_cstring(b, o->custom_code) : 0;
    quill_fb_table_start(b);
    quill_fb_add_i8(b, TFL_OPCODE_DEPRECATED_BUILTIN_CODE,
                    (int8_t)(o->builtin < TFL_OP_PLACEHOLDER_FOR_GREATER_OP_CODES
                                 ? o->builtin
                                 : TFL_OP_PLACEHOLDER_FOR_GREATER_OP_CODES),
                    0);
    quill_fb_add_ref(b, TFL_OPCODE_CUSTOM_CODE, cc);
    quill_fb_add_i32(b, TFL_OPCODE_VERSION, o->version,
                     TFL_OPCODE_VERSION_DEFAULT);
    quill_fb_add_i32(b, TFL_OPCODE_BUILTIN_CODE, o->builtin, 0);
    codes[ncodes] = quill_fb_table_end(b);
    op_code[i] = (uint32_t)ncodes++;
  }
  quill_fb_ref vcodes = quill_fb_vector_refs(b, codes, ncodes);
  /* operators */
  for (size_t i = 0; i < ex->nops; i++) {
    const tx_op *o = &ex->ops[i];
    quill_fb_ref vin = quill_fb_vector(b, o->inputs, o->nin, 4, 0);
    quill_fb_ref vout = quill_fb_vector(b, o->outputs, o->nout, 4, 0);
    quill_fb_ref opts = o->opt_type ? write_options(b, o) : 0;
    quill_fb_ref vinter =
        o->ninter ? quill_fb_vector(b, o->intermediates, o->ninter, 4, 0) : 0;
    quill_fb_table_start(b);
    quill_fb_add_u32(b, TFL_OPERATOR_OPCODE_INDEX, op_code[i], 0);
    quill_fb_add_ref(b, TFL_OPERATOR_INPUTS, vin);
    quill_fb_add_ref(b, TFL_OPERATOR_OUTPUTS, vout);
    quill_fb_add_union(b, TFL_OPERATOR_BUILTIN_OPTIONS_TYPE, o->opt_type,
                       opts);
    if (vinter)
      quill_fb_add_ref(b, TFL_OPERATOR_INTERMEDIATES, vinter);
    ops[i] = quill_fb_table_end(b);
  }
  quill_fb_ref vops = quill_fb_vector_refs(b, ops, ex->nops);
  quill_fb_ref vin = quill_fb_vector(b, ex->inputs, ex->ninputs, 4, 0);
  quill_fb_ref vout = quill_fb_vector(b, ex->outputs, ex->noutputs, 4, 0);
  quill_fb_ref sgname = quill_fb_cstring(b, "main");
  quill_fb_table_start(b);
  quill_fb_add_ref(b, TFL_SUBGRAPH_TENSORS, vtens);
  quill_fb_add_ref(b, TFL_SUBGRAPH_INPUTS, vin);
  quill_fb_add_ref(b, TFL_SUBGRAPH_OUTPUTS, vout);
  quill_fb_add_ref(b, TFL_SUBGRAPH_OPERATORS, vops);
  quill_fb_add_ref(b, TFL_SUBGRAPH_NAME, sgname);
  quill_fb_ref sg = quill_fb_table_end(b);
  quill_fb_ref vsg = quill_fb_vector_refs(b, &sg, 1);
  /* signature def */
  quill_fb_ref sin = tensor_maps(b, ex, ex->inputs, ex->ninputs);
  quill_fb_ref sout = tensor_maps(b, ex, ex->outputs, ex->noutputs);
  quill_fb_ref key = quill_fb_cstring(b, "serving_default");
  quill_fb_table_start(b);
  quill_fb_add_ref(b, TFL_SIGDEF_INPUTS, sin);
  quill_fb_add_ref(b, TFL_SIGDEF_OUTPUTS, sout);
  quill_fb_add_ref(b, TFL_SIGDEF_SIGNATURE_KEY, key);
  quill_fb_add_u32(b, TFL_SIGDEF_SUBGRAPH_INDEX, 0, 0);
  quill_fb_ref sig = quill_fb_table_end(b);
  quill_fb_ref vsig = quill_fb_vector_refs(b, &sig, 1);
  /* metadata */
  quill_fb_ref meta[2];
  static const char *const names[2] = {"min_runtime_version", "quill"};
  for (int i = 0; i < 2; i++) {
    quill_fb_ref n = quill_fb_cstring(b, names[i]);
    quill_fb_table_start(b);
    quill_fb_add_ref(b, TFL_METADATA_NAME, n);
    quill_fb_add_u32(b, TFL_METADATA_BUFFER, (uint32_t)(ndata + i), 0);
    meta[i] = quill_fb_table_end(b);
  }
  quill_fb_ref vmeta = quill_fb_vector_refs(b, meta, 2);
  quill_fb_ref desc = quill_fb_cstring(b, "Quill");
  quill_fb_table_start(b);
  quill_fb_add_u32(b, TFL_MODEL_VERSION, TFL_SCHEMA_VERSION, 0);
  quill_fb_add_ref(b, TFL_MODEL_OPERATOR_CODES, vcodes);
  quill_fb_add_ref(b, TFL_MODEL_SUBGRAPHS, vsg);
  quill_fb_add_ref(b, TFL_MODEL_DESCRIPTION, desc);
  quill_fb_add_ref(b, TFL_MODEL_BUFFERS, vbufs);
  quill_fb_add_ref(b, TFL_MODEL_METADATA, vmeta);
  quill_fb_add_ref(b, TFL_MODEL_SIGNATURE_DEFS, vsig);
  quill_fb_ref root = quill_fb_table_end(b);
  quill_status st = quill_fb_builder_finish(b, root, TFL_FILE_IDENTIFIER, data,
                                            len);
  quill_fb_builder_destroy(b);
  if (st == QUILL_ERR_INTERNAL)
    quill_error(ex->ctx, quill_graph_loc(ex->graph),
                "internal error: the FlatBuffer builder was misused");
  return st;
}
