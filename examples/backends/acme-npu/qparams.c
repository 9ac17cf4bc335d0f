/*
 * qparams.c - the exporter "acme-qparams": the ACME NPU toolchain reads the
 * quantization of every tensor from a JSON side file (like MQBench's
 * clip_ranges.json or the encodings files of PPQ's and AIMET's
 * exporters), next to the model it compiles itself:
 *
 *   quill export acme-qparams model.qir -o model.qparams.json \
 *       --load-pass-plugin=libacme_npu.so
 *   quill quantize ... --export=acme-qparams:model.qparams.json
 *
 *   {
 *     "format": "acme-npu-qparams", "version": 1, "graph": "torch_jit",
 *     "activations": {
 *       "/stem/stem.0/Conv": {"op": "qconv2d", "dtype": "int8",
 *           "bits": 8, "scale": 0.0625, "zero_point": 0,
 *           "qmin": -128, "qmax": 127, "min": -8, "max": 7.9375},
 *       ...},
 *     "params": {
 *       "/stem/stem.0/Conv:weight": {"op": "constant",
 *           "user": "/stem/stem.0/Conv", "operand": 1, "dtype": "int8",
 *           "bits": 8, "axis": 0, "scale": [...], "zero_point": [...],
 *           "qmin": -127, "qmax": 127, "min": [...], "max": [...]},
 *       ...}
 *   }
 *
 * One entry per quantized value of the first graph: graph arguments and op
 * results ("activations") and quantized constants ("params": weights; the
 * int32 biases are plain integers, not quantized types). A value is named
 * by its IR name if it has one, else by its op's location (the ONNX node
 * name), with ":<result index>" for an op with several results; a constant
 * by its first user's name plus ":weight" (operand 1), ":bias" (operand 2)
 * or ":in<i>". A name already taken gets "#2", "#3"... `min`/`max` are the
 * real range the stored range covers: (qmin - zp) * scale and
 * (qmax - zp) * scale. check_qparams.py validates a file against the .qir.
 */
#include <stdio.h>
#include <string.h>

#include "acme_npu.h"

/* ---- JSON output ------------------------------------------------------------ */

static void json_string(FILE *out, const char *s) {
  fputc('"', out);
  for (; *s; ++s) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(out, "\\%c", c);
    else if (c < 0x20)
      fprintf(out, "\\u%04x", c);
    else
      fputc(c, out);
  }
  fputc('"', out);
}

static void json_double(FILE *out, double v) { fprintf(out, "%.17g", v); }

static const char *dtype_name(quill_type *storage) {
  switch (quill_type_kind_of(storage)) {
  case QUILL_TYPE_I8:
    return "int8";
  case QUILL_TYPE_U8:
    return "uint8";
  case QUILL_TYPE_I16:
    return "int16";
  case QUILL_TYPE_U16:
    return "uint16";
  case QUILL_TYPE_I4:
    return "int4";
  case QUILL_TYPE_U4:
    return "uint4";
  default:
    return "int32";
  }
}

/* "scale": s or [s0, s1, ...] and the other per-parameter fields. */
static void write_params(FILE *out, quill_type *qe) {
  size_t n = quill_type_quant_num_params(qe);
  bool list = quill_type_quant_axis_of(qe) >= 0;
  const double *s = quill_type_quant_scales(qe);
  const int64_t *z = quill_type_quant_zero_points(qe);
  int64_t qmin = quill_type_quant_qmin(qe), qmax = quill_type_quant_qmax(qe);
  quill_type *storage = quill_type_quant_storage(qe);
  fprintf(out, "\"dtype\": \"%s\", \"bits\": %u", dtype_name(storage),
          quill_type_bit_width(storage));
  if (list)
    fprintf(out, ", \"axis\": %d", (int)quill_type_quant_axis_of(qe));
  static const char *const fields[] = {"scale", "zero_point", "min", "max"};
  for (int f = 0; f < 4; ++f) {
    fprintf(out, ", \"%s\": %s", fields[f], list ? "[" : "");
    for (size_t i = 0; i < n; ++i) {
      if (i)
        fputs(", ", out);
      if (f == 0)
        json_double(out, s[i]);
      else if (f == 1)
        fprintf(out, "%lld", (long long)z[i]);
      else
        json_double(out, (double)((f == 2 ? qmin : qmax) - z[i]) * s[i]);
    }
    if (list)
      fputc(']', out);
  }
  fprintf(out, ", \"qmin\": %lld, \"qmax\": %lld", (long long)qmin,
          (long long)qmax);
}

/* ---- names ------------------------------------------------------------------- */

/* Names handed out so far (to make them unique), allocated through the
 * context. */
typedef struct names {
  quill_context *ctx;
  char **v;
  unsigned n, cap;
} names;

static bool taken(const names *ns, const char *s) {
  for (unsigned i = 0; i < ns->n; ++i)
    if (strcmp(ns->v[i], s) == 0)
      return true;
  return false;
}

/* Make `base` unique ("#2", "#3"...), remember it and return it (NULL on
 * allocation failure). */
static const char *unique(names *ns, const char *base) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", base);
  for (unsigned k = 2; taken(ns, buf); ++k)
    snprintf(buf, sizeof buf, "%s#%u", base, k);
  if (ns->n == ns->cap) {
    unsigned ncap = ns->cap ? 2 * ns->cap : 64;
    char **nv = quill_realloc(ns->ctx, ns->v, ns->cap * sizeof *nv,
                              ncap * sizeof *nv);
    if (!nv)
      return NULL;
    ns->v = nv;
    ns->cap = ncap;
  }
  char *copy = quill_strdup(ns->ctx, buf);
  if (copy)
    ns->v[ns->n++] = copy;
  return copy;
}

static void names_free(names *ns) {
  for (unsigned i = 0; i < ns->n; ++i)
    quill_string_free(ns->ctx, ns->v[i]);
  quill_free(ns->ctx, ns->v, ns->cap * sizeof *ns->v);
}

/* The name of an op: its location name, else its mnemonic. */
static const char *op_name(const quill_op *op) {
  quill_loc l = quill_op_loc(op);
  return l.name ? l.name : quill_op_name(op);
}

static const char *value_base(const quill_value *v, char *buf, size_t cap) {
  if (quill_value_name(v))
    return quill_value_name(v);
  quill_op *d = quill_value_def(v);
  if (!d)
    return "arg";
  if (quill_op_num_results(d) > 1)
    snprintf(buf, cap, "%s:%u", op_name(d), quill_value_index(v));
  else
    snprintf(buf, cap, "%s", op_name(d));
  return buf;
}

static bool quantized(const quill_value *v) {
  return quill_type_is_quant(quill_type_elem(quill_value_type(v)));
}

/* ---- the exporter ------------------------------------------------------------ */

/* Open the next object member: "name": { (false on allocation failure). */
static bool entry(FILE *out, bool *first, names *ns, const char *base) {
  const char *name = unique(ns, base);
  if (!name)
    return false;
  fputs(*first ? "\n    " : ",\n    ", out);
  *first = false;
  json_string(out, name);
  fputs(": {", out);
  return true;
}

/* The "activations" members: quantized arguments and op results. */
static bool write_activations(FILE *out, names *ns, quill_graph *g) {
  char buf[512];
  bool first = true;
  for (unsigned i = 0; i < quill_graph_num_args(g); ++i) {
    quill_value *a = quill_graph_arg(g, i);
    if (!quantized(a))
      continue;
    if (!entry(out, &first, ns, value_base(a, buf, sizeof buf)))
      return false;
    fputs("\"op\": \"(argument)\", ", out);
    write_params(out, quill_type_elem(quill_value_type(a)));
    fputc('}', out);
  }
  QUILL_GRAPH_FOREACH(g, op) {
    if (quill_op_opcode(op) == QUILL_OP_CONSTANT)
      continue;
    for (unsigned r = 0; r < quill_op_num_results(op); ++r) {
      quill_value *v = quill_op_result(op, r);
      if (!quantized(v))
        continue;
      if (!entry(out, &first, ns, value_base(v, buf, sizeof buf)))
        return false;
      fputs("\"op\": ", out);
      json_string(out, quill_op_name(op));
      fputs(", ", out);
      write_params(out, quill_type_elem(quill_value_type(v)));
      fputc('}', out);
    }
  }
  fputs(first ? "" : "\n  ", out);
  return true;
}

/* The "params" members: quantized constants, named after their first
 * user. */
static bool write_params_section(FILE *out, names *ns, quill_graph *g) {
  char buf[512];
  bool first = true;
  QUILL_GRAPH_FOREACH(g, op) {
    if (quill_op_opcode(op) != QUILL_OP_CONSTANT)
      continue;
    quill_value *v = quill_op_result(op, 0);
    quill_use *u = quill_value_first_use(v);
    if (!quantized(v) || !u)
      continue;
    quill_op *user = quill_use_user(u);
    unsigned k = quill_use_operand_index(u);
    if (k == 1 || k == 2)
      snprintf(buf, sizeof buf, "%s:%s", op_name(user),
               k == 1 ? "weight" : "bias");
    else
      snprintf(buf, sizeof buf, "%s:in%u", op_name(user), k);
    if (!entry(out, &first, ns, buf))
      return false;
    fputs("\"op\": \"constant\", \"user\": ", out);
    json_string(out, op_name(user));
    fprintf(out, ", \"operand\": %u, ", k);
    write_params(out, quill_type_elem(quill_value_type(v)));
    fputc('}', out);
  }
  fputs(first ? "" : "\n  ", out);
  return true;
}

static quill_status write_qparams(quill_context *ctx, const quill_module *m,
                                  FILE *out) {
  if (quill_module_num_graphs(m) == 0)
    return quill_error(ctx, quill_loc_unknown(),
                       "acme-qparams: the module has no graph");
  quill_graph *g = quill_module_graph(m, 0);
  names ns = {ctx, NULL, 0, 0};
  fputs("{\n  \"format\": \"acme-npu-qparams\",\n  \"version\": 1,\n"
        "  \"graph\": ",
        out);
  json_string(out, quill_graph_name(g));
  fputs(",\n  \"activations\": {", out);
  bool ok = write_activations(out, &ns, g);
  fputs("},\n  \"params\": {", out);
  ok = ok && write_params_section(out, &ns, g);
  fputs("}\n}\n", out);
  names_free(&ns);
  return ok ? QUILL_OK : QUILL_ERR_NOMEM;
}

const quill_exporter acme_qparams_exporter = {
    .name = "acme-qparams",
    .summary = "ACME NPU quantization parameter file (JSON: scale, zero "
               "point, min/max of every tensor)",
    .write = write_qparams,
};
