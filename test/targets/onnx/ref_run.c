/*
 * ref_run.c - onnx-ref-run, a test helper: run a .qir graph through Quill's
 * reference kernels (targets/reference, op by op) on ONNX TensorProto
 * inputs and write the outputs as TensorProto files, so that onnxruntime's
 * results for the exported model can be compared with Quill's own.
 *
 *   onnx-ref-run GRAPH.qir OUTDIR INPUT_0.pb [INPUT_1.pb ...]
 *
 * Writes OUTDIR/output_<i>.pb for each graph result (quantized tensors as
 * their storage integers, as the ONNX export has them). Inputs of a
 * quantized argument hold the storage integers. Exit status 0, or 1 with a
 * message. A stand-in until a `quill run` tool runs whole graphs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"

#include "frontends/onnx/tensor_file.h"
#include "ir/ir.h"
#include "targets/reference/ref.h"

typedef struct slot {
  const quill_value *v;
  quill_tensor t;
  bool owned;
} slot;

typedef struct env {
  slot *s;
  size_t n, cap;
} env;

static const quill_tensor *lookup(const env *e, const quill_value *v) {
  for (size_t i = e->n; i-- > 0;)
    if (e->s[i].v == v)
      return &e->s[i].t;
  return NULL;
}

static bool bind(env *e, const quill_value *v, quill_tensor t, bool owned) {
  if (e->n == e->cap) {
    size_t ncap = e->cap ? 2 * e->cap : 64;
    slot *ns = realloc(e->s, ncap * sizeof *ns);
    if (!ns)
      return false;
    e->s = ns;
    e->cap = ncap;
  }
  e->s[e->n++] = (slot){v, t, owned};
  return true;
}

static char *read_all(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap)
      break;
    char *nb = realloc(buf, cap *= 2);
    if (!nb)
      free(buf);
    buf = nb;
  }
  fclose(f);
  *len = n;
  return buf;
}

static int32_t dtype_of(const quill_type *e) {
  static const int32_t map[QUILL_TYPE_KIND_COUNT] = {
      [QUILL_TYPE_F32] = 1,  [QUILL_TYPE_U8] = 2,   [QUILL_TYPE_I8] = 3,
      [QUILL_TYPE_U16] = 4,  [QUILL_TYPE_I16] = 5,  [QUILL_TYPE_I32] = 6,
      [QUILL_TYPE_I64] = 7,  [QUILL_TYPE_BOOL] = 9, [QUILL_TYPE_F16] = 10,
      [QUILL_TYPE_F64] = 11, [QUILL_TYPE_U32] = 12, [QUILL_TYPE_U64] = 13,
      [QUILL_TYPE_BF16] = 16};
  if (quill_type_is_quant(e))
    e = quill_type_quant_storage(e);
  return map[quill_type_kind_of(e)];
}

static bool write_tensor(const char *path, const quill_tensor *t) {
  Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
  tp.n_dims = quill_type_rank(t->type);
  tp.dims = (int64_t *)quill_type_dims(t->type);
  tp.has_data_type = 1;
  tp.data_type = dtype_of(quill_type_elem(t->type));
  tp.has_raw_data = 1;
  tp.raw_data.len = t->size;
  tp.raw_data.data = t->data;
  size_t n = onnx__tensor_proto__get_packed_size(&tp);
  unsigned char *buf = malloc(n ? n : 1);
  if (!buf)
    return false;
  onnx__tensor_proto__pack(&tp, buf);
  FILE *f = fopen(path, "wb");
  bool ok = f && fwrite(buf, 1, n, f) == n;
  if (f && fclose(f) != 0)
    ok = false;
  free(buf);
  return ok;
}

static int run(quill_context *ctx, const quill_graph *g, char **inputs,
               unsigned nin, const char *outdir) {
  env e = {0};
  int rc = 0;
  if (nin != quill_graph_num_args(g)) {
    fprintf(stderr, "onnx-ref-run: the graph takes %u inputs, %u given\n",
            quill_graph_num_args(g), nin);
    return 1;
  }
  for (unsigned i = 0; i < nin && !rc; i++) {
    quill_tensor t;
    if (quill_onnx_tensor_read_file(ctx, inputs[i], &t, NULL) != QUILL_OK) {
      rc = 1;
      break;
    }
    quill_type *at = quill_value_type(quill_graph_arg(g, i));
    /* A quantized argument reads its storage integers. */
    quill_type *ae = quill_type_elem(at);
    quill_type *want = quill_type_is_quant(ae)
                           ? quill_type_with_elem(ctx, at,
                                                  quill_type_quant_storage(ae))
                           : at;
    if (t.type != want) {
      fprintf(stderr, "onnx-ref-run: input %u does not have the argument's "
                      "type\n", i);
      quill_onnx_tensor_free(ctx, &t);
      rc = 1;
      break;
    }
    t.type = at;
    if (!bind(&e, quill_graph_arg(g, i), t, true)) {
      quill_onnx_tensor_free(ctx, &t);
      rc = 1;
    }
  }
  for (quill_op *op = quill_graph_first_op(g); op && !rc;
       op = quill_op_next(op)) {
    unsigned n_in = quill_op_num_operands(op), n_out = quill_op_num_results(op);
    if (quill_op_opcode(op) == QUILL_OP_RETURN) {
      for (unsigned i = 0; i < n_in && !rc; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/output_%u.pb", outdir, i);
        if (!write_tensor(path, lookup(&e, quill_op_operand(op, i)))) {
          fprintf(stderr, "onnx-ref-run: cannot write %s\n", path);
          rc = 1;
        }
      }
      break;
    }
    if (quill_op_opcode(op) == QUILL_OP_CONSTANT) {
      if (!bind(&e, quill_op_result(op, 0),
                quill_tensor_from_attr(
                    quill_value_constant(quill_op_result(op, 0))),
                false))
        rc = 1;
      continue;
    }
    quill_tensor *ins = calloc(n_in ? n_in : 1, sizeof *ins);
    quill_tensor *outs = calloc(n_out ? n_out : 1, sizeof *outs);
    if (!ins || !outs) {
      free(ins);
      free(outs);
      rc = 1;
      break;
    }
    for (unsigned i = 0; i < n_in; i++)
      ins[i] = *lookup(&e, quill_op_operand(op, i));
    if (quill_ref_outputs_alloc(ctx, op, outs) != QUILL_OK ||
        quill_ref_eval_op(ctx, op, ins, outs) != QUILL_OK)
      rc = 1;
    for (unsigned i = 0; i < n_out; i++)
      if (!bind(&e, quill_op_result(op, i), outs[i], true)) {
        quill_tensor_free(ctx, &outs[i]);
        rc = 1;
      }
    free(ins);
    free(outs);
  }
  for (size_t i = 0; i < e.n; i++)
    if (e.s[i].owned)
      quill_tensor_free(ctx, &e.s[i].t);
  free(e.s);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: onnx-ref-run GRAPH.qir OUTDIR INPUT.pb...\n");
    return 2;
  }
  size_t len;
  char *text = read_all(argv[1], &len);
  if (!text) {
    fprintf(stderr, "onnx-ref-run: cannot read %s\n", argv[1]);
    return 1;
  }
  quill_context *ctx = quill_context_create(NULL, NULL);
  quill_module *m = ctx ? quill_parse_module(ctx, text, len, argv[1], 0)
                        : NULL;
  free(text);
  int rc = 1;
  if (m && quill_verify_module(m) == QUILL_OK)
    rc = run(ctx, quill_module_graph(m, 0), argv + 3, (unsigned)(argc - 3),
             argv[2]);
  if (m)
    quill_module_destroy(m);
  quill_context_destroy(ctx);
  return rc;
}
