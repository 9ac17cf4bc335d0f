/*
 * import.c - the ONNX importer's driver: protobuf decoding, model checks,
 * node sorting and dispatch, graph results (graph inputs: inputs.c).
 *
 *   bytes --onnx__model_proto__unpack (protobuf-c, generated)--> ModelProto
 *     1. opset of the default domain (7..17; older and newer: op by op)
 *     2. every node's op type looked up in the op table; all unknown ones
 *        are reported together: "unsupported ONNX ops: Foo (2 nodes: a, b)";
 *        then every node whose op version at that opset is not handled
 *     3. graph arguments = inputs that are not initializers, with shapes
 *        from the model or --input-shape (symbolic dims need the latter)
 *     4. used initializers -> constant ops
 *     5. nodes sorted topologically (stable; dangling inputs and cycles are
 *        reported), then imported one by one through the table
 *     6. graph outputs -> return; the module is verified
 *
 * protobuf-c allocates through the context's funnel (a size header in front
 * of each block, since protobuf-c's free does not pass sizes).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ir/readfile.h"
#include "frontends/onnx/onnx_impl.h"

/* ---- helpers -------------------------------------------------------------- */

quill_status onnx_model_error(onnx_importer *im, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  quill_diag_emitv(im->ctx, quill_loc_named(im->ctx, im->model_name),
                   QUILL_DIAG_ERROR, fmt, ap);
  va_end(ap);
  return QUILL_ERR_INVALID;
}

/* The display name of node i: its name, or "<OpType>_<i>". */
static const char *node_name(quill_context *ctx, const Onnx__NodeProto *nd,
                             size_t i) {
  if (nd->name && *nd->name)
    return quill_ident_get(ctx, nd->name);
  char buf[64];
  snprintf(buf, sizeof buf, "%.40s_%zu", nd->op_type ? nd->op_type : "", i);
  return quill_ident_get(ctx, buf);
}

static quill_status check_opset(onnx_importer *im, const Onnx__ModelProto *mp) {
  im->opset = -1;
  for (size_t i = 0; i < mp->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *o = mp->opset_import[i];
    if (onnx_is_default_domain(o->domain) && o->has_version)
      im->opset = o->version;
  }
  if (im->opset < 0)
    return onnx_model_error(im, "ONNX model '%s' does not import the default "
                           "operator set",
                       im->model_name);
  if (im->opset < 1)
    return onnx_model_error(im, "ONNX model '%s' uses opset %lld; supported opsets "
                           "are %d to %d (older and newer ones op by op)",
                       im->model_name, (long long)im->opset, ONNX_MIN_OPSET,
                       ONNX_MAX_OPSET);
  quill_loc loc = quill_loc_named(im->ctx, im->model_name);
  if (im->opset < ONNX_MIN_OPSET)
    quill_diag_emit(im->ctx, loc, QUILL_DIAG_WARNING,
                    "ONNX model '%s' uses opset %lld, older than %d: "
                    "importing each op's legacy version on a best-effort "
                    "basis",
                    im->model_name, (long long)im->opset, ONNX_MIN_OPSET);
  if (im->opset > ONNX_NEWEST_OPSET)
    quill_diag_emit(im->ctx, loc, QUILL_DIAG_WARNING,
                    "ONNX model '%s' uses opset %lld, newer than %d (the "
                    "newest Quill knows): importing on a best-effort basis",
                    im->model_name, (long long)im->opset, ONNX_NEWEST_OPSET);
  return QUILL_OK;
}

/* Each supported node's op version in effect must be one its import
 * function handles; every node that fails this is reported. */
static quill_status check_versions(onnx_importer *im,
                                   const Onnx__GraphProto *gp) {
  quill_context *ctx = im->ctx;
  quill_status st = QUILL_OK;
  for (size_t i = 0; i < gp->n_node; i++) {
    const Onnx__NodeProto *nd = gp->node[i];
    const onnx_op_entry *e = onnx_op_lookup(nd->domain, nd->op_type);
    if (!e || !onnx_is_default_domain(nd->domain))
      continue;
    int v = onnx_op_version(e, im->opset);
    if (v >= e->oldest)
      continue;
    const char *name = node_name(ctx, nd, i);
    if (!name)
      return QUILL_ERR_NOMEM;
    if (v == 0)
      quill_error(ctx, onnx_node_loc(im, name),
                  "%s node '%s': %s is not in the default operator set "
                  "before opset %d (the model uses opset %lld)",
                  nd->op_type, name, nd->op_type, e->since[0],
                  (long long)im->opset);
    else
      quill_error(ctx, onnx_node_loc(im, name),
                  "%s node '%s': %s-%d (the version in opset %lld) is not "
                  "supported; Quill handles %s from version %d (opset %d)",
                  nd->op_type, name, nd->op_type, v, (long long)im->opset,
                  nd->op_type, e->oldest, e->oldest);
    st = QUILL_ERR_INVALID;
  }
  return st;
}

/* ---- unsupported ops, all at once ------------------------------------------ */

typedef struct unsupported {
  const char *key;     /* "Foo" or "domain.Foo" (interned) */
  unsigned count;
  quill_strbuf nodes;  /* ", "-separated node names */
} unsupported;

static quill_status check_ops(onnx_importer *im, const Onnx__GraphProto *gp) {
  quill_context *ctx = im->ctx;
  unsupported *list = NULL;
  size_t n = 0;
  quill_status st = QUILL_OK;
  for (size_t i = 0; !st && i < gp->n_node; i++) {
    const Onnx__NodeProto *nd = gp->node[i];
    const char *op = nd->op_type ? nd->op_type : "";
    if (onnx_op_lookup(nd->domain, op))
      continue;
    char buf[256];
    if (onnx_is_default_domain(nd->domain))
      snprintf(buf, sizeof buf, "%s", op);
    else
      snprintf(buf, sizeof buf, "%s.%s", nd->domain, op);
    quill_ident key = quill_ident_get(ctx, buf);
    const char *name = node_name(ctx, nd, i);
    if (!key || !name) {
      st = QUILL_ERR_NOMEM;
      break;
    }
    size_t k = 0;
    while (k < n && list[k].key != key)
      k++;
    if (k == n) {
      unsupported *nl = quill_realloc(ctx, list, n * sizeof *list,
                                      (n + 1) * sizeof *list);
      if (!nl) {
        st = QUILL_ERR_NOMEM;
        break;
      }
      list = nl;
      list[n].key = key;
      list[n].count = 0;
      quill_strbuf_init(&list[n].nodes, ctx);
      n++;
    }
    if (list[k].count++)
      quill_strbuf_puts(&list[k].nodes, ", ");
    quill_strbuf_puts(&list[k].nodes, name);
  }
  if (!st && n) {
    quill_strbuf sb;
    quill_strbuf_init(&sb, ctx);
    quill_strbuf_puts(&sb, "unsupported ONNX ops: ");
    for (size_t k = 0; k < n; k++)
      quill_strbuf_printf(&sb, "%s%s (%u node%s: %s)", k ? ", " : "",
                          list[k].key, list[k].count,
                          list[k].count == 1 ? "" : "s",
                          quill_strbuf_str(&list[k].nodes));
    st = onnx_model_error(im, "%s", quill_strbuf_str(&sb));
    quill_strbuf_free(&sb);
  }
  for (size_t k = 0; k < n; k++)
    quill_strbuf_free(&list[k].nodes);
  quill_free(ctx, list, n * sizeof *list);
  return st;
}

/* ---- sorting and node import ------------------------------------------------ */

/* Stable topological order of the nodes into order[]; dangling inputs and
 * cycles are errors. */
static quill_status sort_nodes(onnx_importer *im, const Onnx__GraphProto *gp,
                               size_t *order) {
  quill_context *ctx = im->ctx;
  size_t nn = gp->n_node, placed = 0;
  onnx_map producer, defined;
  onnx_map_init(&producer, ctx);
  onnx_map_init(&defined, ctx);
  bool *done = quill_calloc(ctx, nn ? nn : 1, sizeof *done);
  quill_status st = done ? QUILL_OK : QUILL_ERR_NOMEM;
  for (size_t i = 0; !st && i < nn; i++)
    for (size_t k = 0; !st && k < gp->node[i]->n_output; k++)
      if (gp->node[i]->output[k][0])
        st = onnx_map_put(&producer, gp->node[i]->output[k], gp->node[i]);
  for (size_t i = 0; !st && i < nn; i++) {
    const Onnx__NodeProto *nd = gp->node[i];
    for (size_t k = 0; k < nd->n_input; k++) {
      const char *in = nd->input[k];
      if (in[0] && !onnx_map_get(&im->values, in) &&
          !onnx_map_get(&producer, in)) {
        const char *nm = node_name(ctx, nd, i);
        quill_error(ctx, onnx_node_loc(im, nm),
                    "%s node '%s': input '%s' is not produced by any node and "
                    "is not a graph input or initializer",
                    nd->op_type, nm, in);
        st = QUILL_ERR_INVALID;
        break;
      }
    }
  }
  for (bool progress = true; !st && progress && placed < nn;) {
    progress = false;
    for (size_t i = 0; !st && i < nn; i++) {
      if (done[i])
        continue;
      const Onnx__NodeProto *nd = gp->node[i];
      bool ready = true;
      for (size_t k = 0; ready && k < nd->n_input; k++) {
        const char *in = nd->input[k];
        ready = !in[0] || onnx_map_get(&im->values, in) ||
                onnx_map_get(&defined, in);
      }
      if (!ready)
        continue;
      done[i] = true;
      order[placed++] = i;
      progress = true;
      for (size_t k = 0; !st && k < nd->n_output; k++)
        if (nd->output[k][0])
          st = onnx_map_put(&defined, nd->output[k], (void *)nd);
    }
  }
  if (!st && placed < nn) {
    quill_strbuf sb;
    quill_strbuf_init(&sb, ctx);
    for (size_t i = 0, k = 0; i < nn; i++)
      if (!done[i])
        quill_strbuf_printf(&sb, "%s%s", k++ ? ", " : "",
                            node_name(ctx, gp->node[i], i));
    st = onnx_model_error(im, "the ONNX graph has a cycle: nodes %s cannot be "
                         "sorted topologically",
                     quill_strbuf_str(&sb));
    quill_strbuf_free(&sb);
  }
  quill_free(ctx, done, (nn ? nn : 1) * sizeof *done);
  onnx_map_free(&producer);
  onnx_map_free(&defined);
  return st;
}

static quill_status import_node(onnx_importer *im, const Onnx__NodeProto *nd,
                                size_t index) {
  quill_context *ctx = im->ctx;
  const onnx_op_entry *e = onnx_op_lookup(nd->domain, nd->op_type);
  onnx_node n = {0};
  n.proto = nd;
  n.op_type = nd->op_type;
  n.name = node_name(ctx, nd, index);
  if (!n.name)
    return QUILL_ERR_NOMEM;
  n.loc = quill_loc_named(ctx, n.name);
  n.opset = im->opset;
  n.version = onnx_op_version(e, im->opset);
  n.num_inputs = (unsigned)nd->n_input;
  n.num_outputs = (unsigned)nd->n_output;
  n.flags = e->flags;
  n.in = quill_calloc(ctx, n.num_inputs ? n.num_inputs : 1, sizeof *n.in);
  if (!n.in)
    return QUILL_ERR_NOMEM;
  quill_status st = QUILL_OK;
  for (unsigned i = 0; !st && i < n.num_inputs; i++) {
    const char *in = nd->input[i];
    if (!in[0])
      continue;
    n.in[i] = onnx_map_get(&im->values, in);
    if (!n.in[i])
      st = onnx_error(im, &n, "input '%s' is an output that is not supported",
                      in);
  }
  if (!st)
    st = e->import(im, &n);
  quill_free(ctx, n.in, (n.num_inputs ? n.num_inputs : 1) * sizeof *n.in);
  return st;
}

static quill_status build_results(onnx_importer *im,
                                  const Onnx__GraphProto *gp) {
  quill_context *ctx = im->ctx;
  size_t nout = gp->n_output;
  quill_value **vals = quill_calloc(ctx, nout ? nout : 1, sizeof *vals);
  quill_type **types = quill_calloc(ctx, nout ? nout : 1, sizeof *types);
  quill_status st = vals && types ? QUILL_OK : QUILL_ERR_NOMEM;
  for (size_t i = 0; !st && i < nout; i++) {
    const char *nm = gp->output[i]->name;
    vals[i] = nm ? onnx_map_get(&im->values, nm) : NULL;
    if (!vals[i])
      st = onnx_model_error(im, "graph output '%s' is not produced by any node",
                       nm ? nm : "");
    else
      types[i] = quill_value_type(vals[i]);
  }
  if (!st)
    st = quill_graph_set_result_types(im->graph, (unsigned)nout, types);
  if (!st) {
    quill_op *ret = quill_op_create(im->graph, QUILL_OP_RETURN, (unsigned)nout,
                                    vals, 0, NULL, 0, NULL, quill_loc_unknown());
    if (!ret)
      st = QUILL_ERR_NOMEM;
    else
      quill_op_insert_at_end(im->graph, ret);
  }
  quill_free(ctx, vals, (nout ? nout : 1) * sizeof *vals);
  quill_free(ctx, types, (nout ? nout : 1) * sizeof *types);
  return st;
}

static quill_status import_graph(onnx_importer *im, quill_module *m,
                                 const Onnx__GraphProto *gp) {
  quill_status st = QUILL_OK;
  for (size_t i = 0; !st && i < gp->n_input; i++)
    if (gp->input[i]->name)
      st = onnx_map_put(&im->infos, gp->input[i]->name, gp->input[i]);
  for (size_t i = 0; !st && i < gp->n_value_info; i++)
    if (gp->value_info[i]->name)
      st = onnx_map_put(&im->infos, gp->value_info[i]->name, gp->value_info[i]);
  for (size_t i = 0; !st && i < gp->n_output; i++)
    if (gp->output[i]->name) {
      st = onnx_map_put(&im->infos, gp->output[i]->name, gp->output[i]);
      if (!st)
        st = onnx_map_put(&im->used, gp->output[i]->name, gp->output[i]);
    }
  for (size_t i = 0; !st && i < gp->n_node; i++)
    for (size_t k = 0; !st && k < gp->node[i]->n_input; k++)
      if (gp->node[i]->input[k][0])
        st = onnx_map_put(&im->used, gp->node[i]->input[k], gp->node[i]);
  onnx_map inits;
  onnx_map_init(&inits, im->ctx);
  for (size_t i = 0; !st && i < gp->n_initializer; i++)
    if (gp->initializer[i]->name)
      st = onnx_map_put(&inits, gp->initializer[i]->name, gp->initializer[i]);
  if (!st)
    st = onnx_check_bindings(im, gp);
  if (!st)
    st = onnx_build_args(im, m, gp, &inits);
  onnx_map_free(&inits);
  if (!st)
    st = onnx_build_bindings(im);
  if (!st)
    st = onnx_build_initializers(im, gp);
  size_t *order = NULL;
  if (!st) {
    order = quill_calloc(im->ctx, gp->n_node ? gp->n_node : 1, sizeof *order);
    st = order ? sort_nodes(im, gp, order) : QUILL_ERR_NOMEM;
  }
  for (size_t i = 0; !st && i < gp->n_node; i++)
    st = import_node(im, gp->node[order[i]], order[i]);
  quill_free(im->ctx, order, (gp->n_node ? gp->n_node : 1) * sizeof *order);
  if (!st)
    st = build_results(im, gp);
  /* Drop constants nothing uses any more (e.g. integer initializers that
   * DequantizeLinear re-emitted with a quantized type). */
  if (!st)
    QUILL_GRAPH_FOREACH_SAFE(im->graph, op, nx) {
      if (quill_op_opcode(op) == QUILL_OP_CONSTANT &&
          !quill_value_has_uses(quill_op_result(op, 0)))
        quill_op_erase(op);
    }
  return st;
}

/* ---- entry points ---------------------------------------------------------- */

static quill_module *import_model(quill_context *ctx, const void *data,
                                  size_t len, const char *name,
                                  const char *base_dir,
                                  const quill_onnx_options *opts) {
  onnx_importer im = {0};
  im.ctx = ctx;
  im.opts = opts;
  im.model_name = name;
  im.base_dir = base_dir;
  onnx_map_init(&im.values, ctx);
  onnx_map_init(&im.infos, ctx);
  onnx_map_init(&im.used, ctx);
  unsigned errors = quill_diag_error_count(ctx);
  ProtobufCAllocator al = onnx_pb_allocator(ctx);
  Onnx__ModelProto *mp = onnx__model_proto__unpack(&al, len, data);
  quill_module *m = NULL;
  quill_status st = QUILL_OK;
  if (!mp)
    st = onnx_model_error(&im, "failed to parse ONNX model '%s': not a valid "
                          "protobuf",
                     name);
  else if (!mp->graph)
    st = onnx_model_error(&im, "ONNX model '%s' has no graph", name);
  if (!st)
    st = check_ops(&im, mp->graph);
  if (!st)
    st = check_opset(&im, mp);
  if (!st)
    st = check_versions(&im, mp->graph);
  if (!st) {
    m = quill_module_create(ctx);
    st = m ? import_graph(&im, m, mp->graph) : QUILL_ERR_NOMEM;
  }
  if (!st)
    st = quill_verify_module(m);
  /* Import functions map any failure of a helper to QUILL_ERR_INVALID, so
   * an allocation failure may arrive as either status: whenever nothing
   * was reported, say so rather than fail silently. */
  if (st && (st == QUILL_ERR_NOMEM || quill_diag_error_count(ctx) == errors))
    onnx_model_error(&im, "out of memory while importing ONNX model '%s'", name);
  if (st && m) {
    quill_module_destroy(m);
    m = NULL;
  }
  if (mp)
    onnx__model_proto__free_unpacked(mp, &al);
  onnx_map_free(&im.values);
  onnx_map_free(&im.infos);
  onnx_map_free(&im.used);
  return m;
}

quill_module *quill_onnx_import_buffer(quill_context *ctx, const void *data,
                                       size_t len, const char *name,
                                       const quill_onnx_options *opts) {
  const char *base = opts && opts->base_dir ? opts->base_dir : ".";
  return import_model(ctx, data, len, name ? name : "<buffer>", base, opts);
}

quill_module *quill_onnx_import_file(quill_context *ctx, const char *path,
                                     const quill_onnx_options *opts) {
  char *buf;
  size_t len, cap;
  bool opened;
  int err = quill_read_file(ctx, path, 0, &buf, &len, &cap, &opened);
  if (err && !opened) {
    quill_error(ctx, quill_loc_named(ctx, path),
                "cannot open ONNX model '%s': %s", path,
                quill_read_strerror(err, 0));
    return NULL;
  }
  quill_module *m = NULL;
  if (err) {
    quill_error(ctx, quill_loc_named(ctx, path), "cannot read ONNX model '%s': %s",
                path, err == ENOMEM ? "out of memory" : quill_read_strerror(err, 0));
  } else {
    /* External data lives next to the model unless told otherwise. */
    char *dir = NULL;
    size_t dlen = 0;
    const char *base = opts && opts->base_dir ? opts->base_dir : NULL;
    if (!base) {
      const char *slash = strrchr(path, '/');
      dlen = (slash ? (size_t)(slash - path) : 1) + 2;
      dir = quill_alloc(ctx, dlen);
      if (dir) {
        if (slash) {
          memcpy(dir, path, dlen - 1);
          dir[dlen - 1] = 0;
          if (slash == path)
            strcpy(dir, "/");
        } else {
          strcpy(dir, ".");
        }
      }
      base = dir;
    }
    if (base)
      m = import_model(ctx, buf, len, path, base, opts);
    quill_free(ctx, dir, dlen);
  }
  quill_free(ctx, buf, cap);
  return m;
}
