/*
 * inputs.c - the ONNX graph's inputs: graph arguments (with their shapes
 * from the model or --input-shape), inputs bound to constants
 * (quill_onnx_options.bindings) and initializers.
 *
 *   graph input  --bound?-------------> constant op (a copy of the tensor)
 *                --initializer?-------> constant op (if some node uses it)
 *                --otherwise----------> graph argument (static shape needed)
 *
 * A binding overrides an initializer of the same name; every binding must
 * name a graph input and fit its declared element type and dims.
 */
#include <stdio.h>
#include <string.h>

#include "frontends/onnx/onnx_impl.h"

/* ---- graph arguments ------------------------------------------------------- */

/* The user shape for input `name`, or NULL. */
static quill_status user_shape(onnx_importer *im, const char *name,
                               quill_shape *s, bool *found) {
  *found = false;
  for (unsigned i = 0; im->opts && i < im->opts->num_input_shapes; i++) {
    const char *nm;
    size_t len;
    if (onnx_parse_input_shape(im->ctx, im->opts->input_shapes[i], &nm, &len,
                               s))
      return QUILL_ERR_INVALID;
    if (strlen(name) == len && !memcmp(nm, name, len)) {
      *found = true;
      return QUILL_OK;
    }
  }
  return QUILL_OK;
}

static quill_status arg_type(onnx_importer *im, const Onnx__ValueInfoProto *vi,
                             quill_type **out) {
  const char *name = vi->name;
  quill_context *ctx = im->ctx;
  quill_loc loc = quill_loc_named(ctx, name);
  if (!vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
    return quill_error(ctx, loc, "input '%s' is not a tensor", name);
  const Onnx__TypeProto__Tensor *tt = vi->type->tensor_type;
  quill_type *elem = onnx_elem_type(ctx, tt->elem_type);
  if (!elem)
    return quill_error(ctx, loc, "input '%s' has unsupported element type %s",
                       name, onnx_data_type_name(tt->elem_type));
  quill_shape s;
  bool found;
  if (user_shape(im, name, &s, &found))
    return QUILL_ERR_INVALID;
  if (found) {
    if (tt->shape && tt->shape->n_dim != s.rank)
      return quill_error(ctx, loc,
                         "input shape for '%s' has rank %u but the model "
                         "declares rank %zu",
                         name, s.rank, tt->shape->n_dim);
  } else {
    if (!tt->shape)
      return quill_error(ctx, loc,
                         "input '%s' has no shape; pass --input-shape %s=...",
                         name, name);
    if (tt->shape->n_dim > QUILL_MAX_RANK)
      return quill_error(ctx, loc, "input '%s' has rank %zu (at most %d)",
                         name, tt->shape->n_dim, QUILL_MAX_RANK);
    s.rank = (unsigned)tt->shape->n_dim;
    for (unsigned i = 0; i < s.rank; i++) {
      const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
      if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
          d->dim_value < 0) {
        return quill_error(ctx, loc,
                           "input '%s' has dynamic dimension %lld at index "
                           "%u; pass --input-shape %s=...",
                           name, (long long)d->dim_value, i, name);
      } else if (d->value_case ==
                     ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
                 d->dim_value > QUILL_MAX_DIM) {
        return quill_error(ctx, loc,
                           "input '%s' has dimension %lld at index %u (must "
                           "be in [0, %lld])",
                           name, (long long)d->dim_value, i,
                           (long long)QUILL_MAX_DIM);
      } else if (d->value_case ==
                 ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
        s.dims[i] = d->dim_value;
      } else if (d->value_case ==
                 ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM) {
        return quill_error(ctx, loc,
                           "input '%s' has symbolic dimension '%s' at index "
                           "%u; pass --input-shape %s=...",
                           name, d->dim_param, i, name);
      } else {
        return quill_error(ctx, loc,
                           "input '%s' has an unknown dimension at index %u; "
                           "pass --input-shape %s=...",
                           name, i, name);
      }
    }
  }
  *out = quill_shape_type(ctx, &s, elem);
  return *out ? QUILL_OK : QUILL_ERR_NOMEM;
}

/* Every --input-shape must name a graph argument. */
static quill_status check_user_shapes(onnx_importer *im, onnx_map *args) {
  for (unsigned i = 0; im->opts && i < im->opts->num_input_shapes; i++) {
    const char *nm;
    size_t len;
    quill_shape s;
    if (onnx_parse_input_shape(im->ctx, im->opts->input_shapes[i], &nm, &len,
                               &s))
      return QUILL_ERR_INVALID;
    char buf[256];
    snprintf(buf, sizeof buf, "%.*s", (int)(len < 255 ? len : 255), nm);
    if (!onnx_map_get(args, buf))
      return onnx_model_error(im, "input shape given for '%s', which is not a graph "
                             "input",
                         buf);
  }
  return QUILL_OK;
}

static void sanitize(const char *in, char *out, size_t cap) {
  size_t n = 0;
  if (!in || !*in)
    in = "main";
  if (*in >= '0' && *in <= '9')
    out[n++] = '_';
  for (; *in && n + 1 < cap; in++) {
    char c = *in;
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '$';
    out[n++] = ok ? c : '_';
  }
  out[n] = 0;
}

/* ---- bound inputs ----------------------------------------------------------- */

static const quill_onnx_binding *binding_of(const onnx_importer *im,
                                            const char *name) {
  for (unsigned i = 0; im->opts && i < im->opts->num_bindings; i++)
    if (im->opts->bindings[i].name && !strcmp(im->opts->bindings[i].name, name))
      return &im->opts->bindings[i];
  return NULL;
}

/* A declared dim with a value of 0 or more (else dynamic: no value, a
 * symbol, or -1 as some exporters write it). */
static bool static_dim(const Onnx__TensorShapeProto__Dimension *d) {
  return d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
         d->dim_value >= 0;
}

bool onnx_declared_shape_fits(const Onnx__TypeProto__Tensor *tt,
                              const quill_type *t) {
  if (!tt->shape)
    return true;
  if (tt->shape->n_dim != quill_type_rank(t))
    return false;
  for (size_t i = 0; i < tt->shape->n_dim; i++) {
    const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
    int64_t dim = quill_type_dim(t, (unsigned)i);
    if (static_dim(d) && dim != QUILL_DIM_DYNAMIC && d->dim_value != dim)
      return false;
  }
  return true;
}

void onnx_print_declared(quill_strbuf *sb, const Onnx__TypeProto__Tensor *tt) {
  quill_strbuf_puts(sb, onnx_data_type_name(tt->elem_type));
  if (!tt->shape)
    return;
  quill_strbuf_puts(sb, " [");
  for (size_t i = 0; i < tt->shape->n_dim; i++) {
    const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
    if (i)
      quill_strbuf_puts(sb, ", ");
    if (static_dim(d))
      quill_strbuf_printf(sb, "%lld", (long long)d->dim_value);
    else
      quill_strbuf_puts(sb, "?");
  }
  quill_strbuf_puts(sb, "]");
}

/* Every binding names a graph input (once) and fits its declared type. */
quill_status onnx_check_bindings(onnx_importer *im,
                                   const Onnx__GraphProto *gp) {
  quill_context *ctx = im->ctx;
  for (unsigned b = 0; im->opts && b < im->opts->num_bindings; b++) {
    const quill_onnx_binding *bd = &im->opts->bindings[b];
    const char *name = bd->name ? bd->name : "";
    quill_loc loc = quill_loc_named(ctx, name);
    if (binding_of(im, name) != bd)
      return quill_error(ctx, loc, "input '%s' is bound twice", name);
    const Onnx__ValueInfoProto *vi = NULL;
    for (size_t i = 0; !vi && i < gp->n_input; i++)
      if (gp->input[i]->name && !strcmp(gp->input[i]->name, name))
        vi = gp->input[i];
    if (!vi)
      return onnx_model_error(im, "a constant is bound to '%s', which is not a "
                             "graph input",
                         name);
    const quill_tensor *t = bd->value;
    if (!t || !t->type || !quill_type_is_tensor(t->type) ||
        !quill_type_has_static_shape(t->type) ||
        t->size != (size_t)quill_type_num_elements(t->type) *
                       quill_type_elem_bytes(quill_type_elem(t->type)) ||
        (t->size && !t->data))
      return quill_error(ctx, loc, "the constant bound to input '%s' is not a "
                                   "valid static tensor",
                         name);
    if (!vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
      return quill_error(ctx, loc, "input '%s' is not a tensor", name);
    const Onnx__TypeProto__Tensor *tt = vi->type->tensor_type;
    bool ok = (!tt->has_elem_type || !tt->elem_type ||
               onnx_elem_type(ctx, tt->elem_type) == quill_type_elem(t->type)) &&
              onnx_declared_shape_fits(tt, t->type);
    if (!ok) {
      quill_strbuf sb;
      quill_strbuf_init(&sb, ctx);
      quill_type_print(t->type, &sb);
      quill_strbuf_puts(&sb, " but the model declares ");
      onnx_print_declared(&sb, tt);
      quill_error(ctx, loc, "input '%s' is bound to a constant of type %s",
                  name, quill_strbuf_str(&sb));
      quill_strbuf_free(&sb);
      return QUILL_ERR_INVALID;
    }
  }
  return QUILL_OK;
}

/* Bound inputs -> constant ops (before the initializers, which they
 * override). */
quill_status onnx_build_bindings(onnx_importer *im) {
  quill_context *ctx = im->ctx;
  for (unsigned b = 0; im->opts && b < im->opts->num_bindings; b++) {
    const quill_onnx_binding *bd = &im->opts->bindings[b];
    const quill_attr *a = quill_tensor_to_attr(ctx, bd->value);
    quill_type *ty = a ? quill_attr_dense_type(a) : NULL;
    quill_named_attr na = {quill_ident_get(ctx, "value"), a};
    quill_op *op = ty && na.name
                       ? quill_op_create(im->graph, QUILL_OP_CONSTANT, 0, NULL,
                                         1, &ty, 1, &na,
                                         quill_loc_named(ctx, bd->name))
                       : NULL;
    if (!op)
      return QUILL_ERR_NOMEM;
    quill_op_insert_at_end(im->graph, op);
    quill_value *v = quill_op_result(op, 0);
    if (quill_value_set_name(v, bd->name) ||
        onnx_map_put(&im->values, bd->name, v))
      return QUILL_ERR_NOMEM;
  }
  return QUILL_OK;
}

quill_status onnx_build_args(onnx_importer *im, quill_module *m,
                               const Onnx__GraphProto *gp, onnx_map *inits) {
  quill_context *ctx = im->ctx;
  size_t nin = gp->n_input, nargs = 0;
  quill_type **types = quill_calloc(ctx, nin ? nin : 1, sizeof *types);
  const Onnx__ValueInfoProto **vis =
      quill_calloc(ctx, nin ? nin : 1, sizeof *vis);
  onnx_map argmap;
  onnx_map_init(&argmap, ctx);
  quill_status st = types && vis ? QUILL_OK : QUILL_ERR_NOMEM;
  for (size_t i = 0; !st && i < nin; i++) {
    const Onnx__ValueInfoProto *vi = gp->input[i];
    if (!vi->name || !*vi->name || onnx_map_get(inits, vi->name) ||
        binding_of(im, vi->name))
      continue;
    if (onnx_map_get(&argmap, vi->name)) {
      st = onnx_model_error(im, "graph input '%s' is declared twice", vi->name);
      break;
    }
    st = onnx_map_put(&argmap, vi->name, (void *)vi);
    vis[nargs++] = vi;
  }
  if (!st)
    st = check_user_shapes(im, &argmap);
  for (size_t i = 0; !st && i < nargs; i++)
    st = arg_type(im, vis[i], &types[i]);
  char gname[256];
  sanitize(gp->name, gname, sizeof gname);
  if (!st) {
    im->graph = quill_graph_create(m, gname, (unsigned)nargs, types, 0, NULL);
    if (!im->graph)
      st = QUILL_ERR_NOMEM;
  }
  for (size_t i = 0; !st && i < nargs; i++) {
    quill_value *v = quill_graph_arg(im->graph, (unsigned)i);
    if (quill_value_set_name(v, vis[i]->name) ||
        onnx_map_put(&im->values, vis[i]->name, v))
      st = QUILL_ERR_NOMEM;
  }
  onnx_map_free(&argmap);
  quill_free(ctx, types, (nin ? nin : 1) * sizeof *types);
  quill_free(ctx, vis, (nin ? nin : 1) * sizeof *vis);
  return st;
}

quill_status onnx_build_initializers(onnx_importer *im,
                                       const Onnx__GraphProto *gp) {
  quill_context *ctx = im->ctx;
  for (size_t i = 0; i < gp->n_initializer; i++) {
    const Onnx__TensorProto *t = gp->initializer[i];
    if (!t->name || !*t->name || !onnx_map_get(&im->used, t->name) ||
        onnx_map_get(&im->values, t->name))
      continue;
    quill_loc loc = quill_loc_named(ctx, t->name);
    const quill_attr *a;
    quill_status st = onnx_tensor_to_attr(im, t, loc, &a);
    if (st)
      return st;
    quill_type *ty = quill_attr_dense_type(a);
    quill_named_attr na = {quill_ident_get(ctx, "value"), a};
    quill_op *op = na.name ? quill_op_create(im->graph, QUILL_OP_CONSTANT, 0,
                                             NULL, 1, &ty, 1, &na, loc)
                           : NULL;
    if (!op)
      return QUILL_ERR_NOMEM;
    quill_op_insert_at_end(im->graph, op);
    quill_value *v = quill_op_result(op, 0);
    if (quill_value_set_name(v, t->name) ||
        onnx_map_put(&im->values, t->name, v))
      return QUILL_ERR_NOMEM;
  }
  return QUILL_OK;
}
