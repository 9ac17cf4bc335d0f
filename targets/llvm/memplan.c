/*
 * memplan.c - layouts, buffer slots and the static memory plan.
 *
 * Ops are numbered in program order from 1 (0 stands for "the graph
 * arguments", the return op has the last number). Planning runs twice:
 *
 * cg_plan_values (before lowering)
 *   - layout: a rank-4 result of a CG_LAY_CHLAST op (conv, pool) is stored
 *     NHWC, strides [HWC, 1, WC, C] for logical NCHW; a CG_LAY_FOLLOW op
 *     (elementwise, quantization, data movement) keeps its first operand's
 *     layout; everything else is row-major. Graph inputs and outputs are
 *     always row-major (the user's layout).
 *   - storage: constants are views of a private global holding the dense
 *     data; graph inputs are input slots; a CG_ALIAS op (reshape and
 *     friends) whose operand is densely row-major shares its operand's
 *     slot, and an op with a view function (transpose) is a strided view
 *     of its operand's storage; every other value gets a scratch slot. A returned value whose
 *     view covers its whole slot in row-major order turns that slot into
 *     the user's output buffer (written in place, no final copy).
 *   - concat slabs: when every operand of a channel concat (NHWC) is a
 *     result of the concat's own type (calibration gives a concat's inputs
 *     its parameters) stored by a conv, pool or requantize, and read by
 *     nothing but the concat and its prefix concats (concats of the same
 *     type of its first operands, in order), the concat result is planned
 *     at the first of those producers and each operand is its channel
 *     slab (the concat's view, offset by the slab's first channel, dims[1]
 *     the operand's channels): the producers store there and the concat
 *     copies nothing. A prefix concat is the view of the first channels
 *     (pixel stride the whole concat's channels), and copies nothing
 *     either. SqueezeNet's fire modules are single concats of convs; a
 *     DenseNet block concats all earlier outputs at each layer, and is
 *     one buffer with one scale (calibrate.c's concat groups).
 *   - liveness: a slot lives from its producer to the last use of any
 *     value stored in it.
 *
 * cg_plan_alloc (after lowering, which may add per-op workspaces)
 *   - offsets: slots sorted by size, each placed at the lowest 64-byte
 *     aligned offset that overlaps no placed slot with an intersecting
 *     live range (first fit: one sweep, by offset, over the placed slots
 *     live at the same time). The scratch size is the high-water mark.
 *     Sorting is a merge sort: n log n for graphs of thousands of ops.
 */
#include <stdlib.h>
#include <string.h>

#include "targets/llvm/cg.h"

#define ALIGN 64

void cg_row_major(unsigned r, const int64_t *dims, int64_t *strides) {
  int64_t s = 1;
  for (unsigned d = r; d-- > 0;) {
    strides[d] = s;
    s *= dims[d];
  }
}

bool cg_view_is_row_major(const cg_view *v) {
  int64_t s = 1;
  for (unsigned d = v->rank; d-- > 0;) {
    if (v->dims[d] == 1)
      continue;
    if (v->strides[d] != s)
      return false;
    s *= v->dims[d];
  }
  return true;
}

static int64_t num_elements(const cg_view *v) {
  int64_t n = 1;
  for (unsigned d = 0; d < v->rank; d++)
    n *= v->dims[d];
  return n;
}

int cg_new_slot(cg *c, cg_slot_kind kind, size_t size, int first, int last) {
  if (c->nslots == c->cap_slots) {
    unsigned cap = c->cap_slots ? c->cap_slots * 2 : 64;
    cg_slot *ns = quill_realloc(c->ctx, c->slots, c->cap_slots * sizeof *ns,
                                cap * sizeof *ns);
    if (!ns) {
      c->status = QUILL_ERR_NOMEM;
      return 0; /* any slot: the compile fails anyway */
    }
    c->slots = ns;
    c->cap_slots = cap;
  }
  cg_slot *s = &c->slots[c->nslots];
  memset(s, 0, sizeof *s);
  s->kind = kind;
  s->size = size;
  s->first = first;
  s->last = last;
  return (int)c->nslots++;
}

int cg_workspace(cg *c, size_t bytes) {
  return cg_new_slot(c, CG_SLOT_SCRATCH, bytes ? bytes : 1, c->op_index,
                     c->op_index);
}

cg_view cg_value_view(cg *c, const quill_value *v) {
  cg_value *cv = cg_val(c, v);
  if (cv->is_const && !cv->view.global) {
    /* The global of an aliased constant is its root's. */
    cg_value *root = cv->alias_of >= 0 ? &c->vals[cv->alias_of] : cv;
    if (!root->view.global)
      root->view.global =
          cg_const_global(c, "const", quill_attr_dense_data(root->constant),
                          quill_attr_dense_size(root->constant));
    cv->view.global = root->view.global;
  }
  return cv->view;
}

/* True if v is returned by the graph. */
static bool is_returned(const quill_value *v) {
  for (quill_use *u = quill_value_first_use(v); u; u = quill_use_next(u))
    if (quill_op_opcode(quill_use_user(u)) == QUILL_OP_RETURN)
      return true;
  return false;
}

/* True if v has uses and every one is operand 0 of a CG_LAY_CHLAST op. */
static bool feeds_chlast_only(const quill_value *v) {
  if (!quill_value_has_uses(v))
    return false;
  for (quill_use *u = quill_value_first_use(v); u; u = quill_use_next(u)) {
    const quill_op *user = quill_use_user(u);
    if (quill_use_operand_index(u) != 0 ||
        !(cg_lowerings[quill_op_opcode(user)].flags & CG_LAY_CHLAST))
      return false;
  }
  return true;
}

/* v (rank 4, logical NCHW) has the strides of a dense NHWC tensor: a
 * transpose (perm 0, 3, 1, 2) of a row-major NHWC value, as ConvNeXt's
 * blocks end. Ops that keep their first operand's layout then store
 * NHWC too, instead of transposing the data back to NCHW. */
static bool nhwc_strides(const cg_view *v) {
  if (v->rank != 4)
    return false;
  int64_t C = v->dims[1], H = v->dims[2], W = v->dims[3];
  return (C == 1 || v->strides[1] == 1) && (W == 1 || v->strides[3] == C) &&
         (H == 1 || v->strides[2] == W * C) &&
         (v->dims[0] == 1 || v->strides[0] == H * W * C);
}

/* The layout of result v of op per the lowering flags. A CG_LAY_FOLLOW
 * op keeps its first operand's layout, except that a returned result is
 * stored in the user's (row-major) layout, written in place instead of
 * copied at the end, and that a one-operand op (quantize, dequantize,
 * unary) whose result only feeds channels-last ops (convs, pools) stores
 * it channels-last: the layout change rides on the op's own pass over
 * the data (the graph's float NCHW input quantized straight to NHWC). */
static bool result_chlast(cg *c, const quill_op *op, const quill_value *v) {
  const quill_type *t = quill_value_type(v);
  if (quill_type_rank(t) != 4)
    return false;
  unsigned f = cg_lowerings[quill_op_opcode(op)].flags;
  if (f & CG_LAY_CHLAST)
    return true;
  if ((f & CG_LAY_FOLLOW) && quill_op_num_operands(op) > 0) {
    if (is_returned(v))
      return false;
    cg_value *x = cg_val(c, quill_op_operand(op, 0));
    if (quill_type_rank(x->type) != 4)
      return false;
    if (x->chlast)
      return true;
    return quill_op_num_operands(op) == 1 && quill_op_num_results(op) == 1 &&
           feeds_chlast_only(v);
  }
  return false;
}

static void set_layout(cg_value *cv, bool chlast) {
  cg_view *w = &cv->view;
  w->rank = quill_type_rank(cv->type);
  memcpy(w->dims, quill_type_dims(cv->type), w->rank * sizeof(int64_t));
  w->elem = quill_type_elem(cv->type);
  w->offset = 0;
  cv->chlast = chlast;
  if (chlast) {
    int64_t C = w->dims[1], H = w->dims[2], W = w->dims[3];
    w->strides[0] = H * W * C;
    w->strides[1] = 1;
    w->strides[2] = W * C;
    w->strides[3] = C;
  } else {
    cg_row_major(w->rank, w->dims, w->strides);
  }
}

/* The explicit pads of a qconv2d (false for auto_pad ones). */
static bool conv_pads(const quill_op *op, int64_t *p) {
  if (quill_op_opcode(op) != QUILL_OP_QCONV2D)
    return false;
  const quill_attr *ap = quill_op_attr(op, "auto_pad");
  if (ap && quill_attr_kind_of(ap) == QUILL_ATTR_STRING &&
      strcmp(quill_attr_string_value(ap, NULL), "NOTSET"))
    return false;
  memset(p, 0, 4 * sizeof *p);
  int64_t n = quill_op_attr_ints(op, "pads", p, 4);
  return n < 0 || n == 4;
}

/* A halo for an 8-bit unsigned NHWC value whose every use is operand 0 of
 * a qconv2d with the same positive pads and channels that fill whole
 * kernel vectors (multiples of 16: the kernels then read in place), of
 * an unpadded qconv2d of one group (it reads the interior in place), or an
 * operand of a qadd computed in a conv's epilogue (fuse_add.c: a residual
 * block's input, read by the block's first conv and the add at its end;
 * the epilogue reads the interior through the view's strides; when the
 * sum is returned in the user's layout the qadd is its own stage after
 * all, and reads it so too). The operands of other qadds stay dense: a
 * qadd stage's loop over a haloed operand breaks at every row (ConvNeXt's
 * adds, after a qmul, took up to 2.3x as long). */
static bool halo_for(cg *c, cg_value *cv) {
  quill_type *s = cg_storage(cv->view.elem);
  if (!quill_type_is_quant(cv->view.elem) ||
      quill_type_kind_of(s) != QUILL_TYPE_U8 || cv->view.dims[1] % 16 ||
      !quill_value_has_uses(cv->v))
    return false;
  int64_t pads[4] = {-1, -1, -1, -1};
  for (quill_use *u = quill_value_first_use(cv->v); u; u = quill_use_next(u)) {
    int64_t p[4];
    if (quill_op_opcode(quill_use_user(u)) == QUILL_OP_QADD &&
        cg_qadd_is_fused(c, quill_use_user(u)))
      continue;
    if (quill_use_operand_index(u) != 0 || !conv_pads(quill_use_user(u), p))
      return false;
    /* an unpadded conv reads the interior in place (panel.c) and leaves
     * the pads to the others */
    if (p[0] + p[1] + p[2] + p[3] == 0 &&
        quill_op_attr_int(quill_use_user(u), "group", 1) == 1)
      continue;
    if (pads[0] < 0)
      memcpy(pads, p, sizeof pads);
    else if (memcmp(pads, p, sizeof pads))
      return false;
  }
  if (pads[0] < 0 || pads[0] + pads[1] + pads[2] + pads[3] == 0)
    return false;
  cv->haloed = true;
  memcpy(cv->halo, pads, sizeof pads);
  cv->halo_fill = quill_type_quant_zero_points(cv->view.elem)[0];
  return true;
}

void cg_fill_halos(cg *c, const quill_op *op) {
  for (unsigned r = 0; r < quill_op_num_results(op); r++) {
    cg_value *cv = cg_val(c, quill_op_result(op, r));
    if (!cv->haloed)
      continue;
    /* the whole padded plane, as a view from the buffer's start ... */
    cg_view all = cv->view;
    int64_t C = all.dims[1];
    all.offset = 0;
    all.dims[2] = all.dims[2] + cv->halo[0] + cv->halo[2];
    all.dims[3] = all.dims[3] + cv->halo[1] + cv->halo[3];
    LLVMValueRef fill = LLVMConstInt(cg_elem_type(c, all.elem),
                                     (unsigned long long)cv->halo_fill, 1);
    /* ... and its four borders */
    cg_view top = all, bot = all, left = all, right = all;
    top.dims[2] = cv->halo[0];
    bot.dims[2] = cv->halo[2];
    bot.offset = (all.dims[2] - cv->halo[2]) * all.strides[2];
    left.dims[2] = right.dims[2] = cv->view.dims[2];
    left.offset = right.offset = cv->halo[0] * all.strides[2];
    left.dims[3] = cv->halo[1];
    right.dims[3] = cv->halo[3];
    right.offset += (all.dims[3] - cv->halo[3]) * C;
    const cg_view *parts[4] = {&top, &bot, &left, &right};
    for (int k = 0; k < 4; k++)
      if (parts[k]->dims[2] > 0 && parts[k]->dims[3] > 0)
        cg_fill(c, "halo", parts[k], fill);
  }
}

static size_t value_bytes(const cg_value *cv) {
  int64_t n = num_elements(&cv->view);
  return (size_t)n * quill_type_elem_bytes(cv->view.elem);
}

/* A channel concat (NHWC-able, not returned) of rank 4. */
static bool channel_concat(const quill_op *op) {
  if (!op || quill_op_opcode(op) != QUILL_OP_CONCAT)
    return false;
  const quill_value *y = quill_op_result(op, 0);
  int64_t axis = quill_op_attr_int(op, "axis", 0);
  return quill_type_rank(quill_value_type(y)) == 4 &&
         (axis == 1 || axis == -3) && !is_returned(y);
}

/* cat is a prefix concat of root: a channel concat of root's element type
 * whose operands are root's first ones, in order. */
static bool is_prefix(const quill_op *cat, const quill_op *root) {
  if (cat == root)
    return true;
  unsigned n = quill_op_num_operands(cat);
  if (!channel_concat(cat) || n > quill_op_num_operands(root) ||
      quill_type_elem(quill_value_type(quill_op_result(cat, 0))) !=
          quill_type_elem(quill_value_type(quill_op_result(root, 0))))
    return false;
  for (unsigned k = 0; k < n; k++)
    if (quill_op_operand(cat, k) != quill_op_operand(root, k))
      return false;
  return true;
}

/* Some user of op's result is a concat. */
static bool feeds_concat(const quill_op *op) {
  const quill_value *y = quill_op_result(op, 0);
  for (quill_use *u = quill_value_first_use(y); u; u = quill_use_next(u))
    if (quill_op_opcode(quill_use_user(u)) == QUILL_OP_CONCAT)
      return true;
  return false;
}

/* Producers that store their result through its view (any strides). */
static bool slab_producer(const quill_op *p) {
  quill_opcode o = p ? quill_op_opcode(p) : QUILL_OP_CONSTANT;
  return o == QUILL_OP_QCONV2D || o == QUILL_OP_MAXPOOL ||
         o == QUILL_OP_AVGPOOL || o == QUILL_OP_REQUANTIZE;
}

/* Mark the concat slabs (see the top). A root concat's operands, each
 * produced by a slab producer of the concat's element type, once, and read
 * only by the root and its prefix concats, become slabs of the root; the
 * prefix concats become views of its first channels. */
static void plan_slabs(cg *c) {
  QUILL_GRAPH_FOREACH(c->g, op) {
    if (!channel_concat(op))
      continue;
    const quill_value *y = quill_op_result(op, 0);
    const quill_type *yt = quill_value_type(y);
    bool ok = true;
    for (unsigned k = 0; ok && k < quill_op_num_operands(op); k++) {
      const quill_value *x = quill_op_operand(op, k);
      ok = slab_producer(quill_value_def(x)) && !cg_val(c, x)->slab_of &&
           quill_type_elem(quill_value_type(x)) == quill_type_elem(yt);
      for (unsigned j = 0; ok && j < k; j++)
        ok = quill_op_operand(op, j) != x;
      for (quill_use *u = quill_value_first_use(x); ok && u;
           u = quill_use_next(u))
        ok = is_prefix(quill_use_user(u), op) &&
             (quill_use_user(u) == op || !feeds_concat(quill_use_user(u)));
    }
    if (!ok)
      continue;
    int64_t start = 0;
    int yi = (int)(cg_val(c, y) - c->vals);
    for (unsigned k = 0; k < quill_op_num_operands(op); k++) {
      const quill_value *x = quill_op_operand(op, k);
      cg_value *cv = cg_val(c, x);
      cv->slab_of = yi + 1;
      cv->slab_start = start;
      start += quill_type_dims(cv->type)[1];
      for (quill_use *u = quill_value_first_use(x); u; u = quill_use_next(u))
        if (quill_use_user(u) != op)
          cg_val(c, quill_op_result(quill_use_user(u), 0))->prefix_of = yi + 1;
    }
  }
}

/* A scratch slot for cv (NHWC values read only by padded convs: a haloed
 * buffer), live from op first to op last. */
static void plan_scratch(cg *c, cg_value *cv, int first, int last) {
  size_t bytes = value_bytes(cv);
  if (cv->chlast && halo_for(c, cv)) {
    cg_view *w = &cv->view;
    int64_t C = w->dims[1], H = w->dims[2], W = w->dims[3];
    int64_t Hp = H + cv->halo[0] + cv->halo[2];
    int64_t Wp = W + cv->halo[1] + cv->halo[3];
    w->strides[3] = C;
    w->strides[2] = Wp * C;
    w->strides[0] = Hp * Wp * C;
    w->offset = (cv->halo[0] * Wp + cv->halo[1]) * C;
    bytes = (size_t)(w->dims[0] * Hp * Wp * C) * quill_type_elem_bytes(w->elem);
  }
  cv->view.slot = cg_new_slot(c, CG_SLOT_SCRATCH, bytes, first, last);
}

/* Slab cv of a concat result (produced by op idx): the concat's result
 * planned first if this is its first slab. */
static void plan_slab(cg *c, cg_value *cv, int idx) {
  cg_value *y = &c->vals[cv->slab_of - 1];
  if (!y->planned) {
    set_layout(y, true);
    plan_scratch(c, y, idx, y->def);
    y->planned = true;
  }
  cg_view v = y->view;
  v.dims[1] = cv->view.dims[1];
  v.offset += cv->slab_start * v.strides[1];
  cv->view = v;
}

quill_status cg_plan_values(cg *c) {
  const quill_graph *g = c->g;
  int ret_index = (int)quill_graph_num_ops(g);
  /* Liveness of every value (args first). */
  for (unsigned i = 0; i < c->nvals; i++)
    c->vals[i].last_use = c->vals[i].def;
  int idx = 1;
  QUILL_GRAPH_FOREACH(g, op) {
    for (unsigned k = 0; k < quill_op_num_operands(op); k++) {
      cg_value *cv = cg_val(c, quill_op_operand(op, k));
      if (cv->last_use < idx)
        cv->last_use = idx;
    }
    /* a table lookup (fuse_lut.c) reads its dequantize's input */
    const quill_op *src = quill_op_opcode(op) == QUILL_OP_QUANTIZE
                              ? cg_qlut_source(op)
                              : NULL;
    if (src) {
      cg_value *cv = cg_val(c, quill_op_operand(src, 0));
      if (cv->last_use < idx)
        cv->last_use = idx;
    }
    idx++;
  }
  plan_slabs(c);
  /* Graph inputs. */
  for (unsigned a = 0; a < quill_graph_num_args(g); a++) {
    cg_value *cv = cg_val(c, quill_graph_arg(g, a));
    set_layout(cv, false);
    cv->view.slot = cg_new_slot(c, CG_SLOT_INPUT, value_bytes(cv), 0,
                                ret_index);
    c->slots[cv->view.slot].io_index = a;
  }
  /* Op results in program order. */
  idx = 1;
  QUILL_GRAPH_FOREACH(g, op) {
    unsigned f = cg_lowerings[quill_op_opcode(op)].flags;
    for (unsigned r = 0; r < quill_op_num_results(op); r++) {
      cg_value *cv = cg_val(c, quill_op_result(op, r));
      cv->alias_of = -1;
      if (quill_op_opcode(op) == QUILL_OP_CONSTANT) {
        set_layout(cv, false);
        cv->is_const = true;
        cv->constant = quill_op_attr(op, "value");
        cv->view.slot = -1;
        continue;
      }
      if (cv->planned)
        continue; /* a concat of slabs: planned at its first slab */
      set_layout(cv, result_chlast(c, op, cv->v));
      if (cv->slab_of) {
        plan_slab(c, cv, idx);
        continue;
      }
      if (cv->prefix_of) { /* the root is planned: its first slab is earlier */
        cg_view v = c->vals[cv->prefix_of - 1].view;
        v.dims[1] = cv->view.dims[1];
        cv->view = v;
        cv->chlast = true;
        continue;
      }
      const cg_lowering *lw = &cg_lowerings[quill_op_opcode(op)];
      if (lw->view && r == 0) {
        cg_value *x = cg_val(c, quill_op_operand(op, 0));
        cg_view v = cv->view;
        if (lw->view(op, &x->view, &v)) {
          cg_value *root = x->alias_of >= 0 ? &c->vals[x->alias_of] : x;
          cv->alias_of = (int)(root - c->vals);
          cv->is_const = x->is_const;
          cv->constant = x->constant;
          cv->chlast = nhwc_strides(&v);
          v.slot = x->view.slot;
          v.offset = x->view.offset;
          v.global = NULL;
          cv->view = v;
          continue;
        }
      }
      if ((f & CG_ALIAS) && r == 0) {
        cg_value *x = cg_val(c, quill_op_operand(op, 0));
        if (cg_view_is_row_major(&x->view) &&
            quill_type_elem_bytes(x->view.elem) ==
                quill_type_elem_bytes(cv->view.elem)) {
          cg_value *root = x->alias_of >= 0 ? &c->vals[x->alias_of] : x;
          cv->alias_of = (int)(root - c->vals);
          cv->is_const = x->is_const;
          cv->constant = x->constant;
          cv->view.slot = x->view.slot;
          cv->view.offset = x->view.offset;
          cv->view.global = NULL;
          continue;
        }
      }
      /* a quantize stored by its producer (fuse_qdq.c), the end of a
       * qmatmul's epilogue chain (fuse_epi.c), or a qadd stored by its conv
       * (fuse_add.c): live from there */
      const quill_op *head = cg_epi_head(op);
      int first = quill_op_opcode(op) == QUILL_OP_QUANTIZE &&
                          cg_quantize_is_fused(op)
                      ? cg_val(c, quill_op_operand(op, 0))->def
                  : head && cg_epi_last(head) == op
                      ? cg_val(c, quill_op_result(head, 0))->def
                      : idx;
      if (quill_op_opcode(op) == QUILL_OP_QADD && cg_qadd_is_fused(c, op)) {
        int d0 = cg_val(c, quill_op_operand(op, 0))->def;
        int d1 = cg_val(c, quill_op_operand(op, 1))->def;
        first = d0 > d1 ? d0 : d1; /* the conv: the later operand */
      }
      plan_scratch(c, cv, first, idx);
    }
    idx++;
  }
  /* Slot liveness: the last use of every value stored in the slot. */
  for (unsigned i = 0; i < c->nvals; i++) {
    cg_value *cv = &c->vals[i];
    if (cv->view.slot < 0)
      continue;
    cg_slot *s = &c->slots[cv->view.slot];
    if (s->kind == CG_SLOT_SCRATCH && cv->last_use > s->last)
      s->last = cv->last_use;
  }
  /* Results written straight into the user's buffers. */
  quill_op *ret = quill_graph_return(g);
  for (unsigned j = 0; ret && j < quill_op_num_operands(ret); j++) {
    cg_value *cv = cg_val(c, quill_op_operand(ret, j));
    if (cv->view.slot < 0 || cv->view.offset != 0 ||
        !cg_view_is_row_major(&cv->view))
      continue;
    cg_slot *s = &c->slots[cv->view.slot];
    if (s->kind != CG_SLOT_SCRATCH || s->size != value_bytes(cv))
      continue;
    s->kind = CG_SLOT_OUTPUT;
    s->io_index = j;
  }
  return c->status;
}

/* ---- offsets ------------------------------------------------------------- */

static bool live_overlap(const cg_slot *a, const cg_slot *b) {
  return a->first <= b->last && b->first <= a->last;
}

static size_t align_up(size_t v) { return (v + ALIGN - 1) / ALIGN * ALIGN; }

/* Placement order: largest first, then by start, then by slot index. */
static int cmp_order(const void *pa, const void *pb, void *arg) {
  const cg_slot *slots = arg;
  unsigned ia = *(const unsigned *)pa, ib = *(const unsigned *)pb;
  const cg_slot *a = &slots[ia], *b = &slots[ib];
  if (a->size != b->size)
    return a->size > b->size ? -1 : 1;
  if (a->first != b->first)
    return a->first < b->first ? -1 : 1;
  return ia < ib ? -1 : ia > ib;
}

/* Merge sort of idx[0..n) by cmp (tmp: n entries): qsort has no context
 * argument in C11, and the slots must not be global. */
static void sort_idx(unsigned *idx, unsigned *tmp, unsigned n,
                     int (*cmp)(const void *, const void *, void *),
                     void *arg) {
  if (n < 2)
    return;
  unsigned h = n / 2;
  sort_idx(idx, tmp, h, cmp, arg);
  sort_idx(idx + h, tmp, n - h, cmp, arg);
  unsigned i = 0, j = h, k = 0;
  while (i < h && j < n)
    tmp[k++] = cmp(&idx[j], &idx[i], arg) < 0 ? idx[j++] : idx[i++];
  while (i < h)
    tmp[k++] = idx[i++];
  while (j < n)
    tmp[k++] = idx[j++];
  memcpy(idx, tmp, n * sizeof *idx);
}

static int cmp_offset(const void *pa, const void *pb, void *arg) {
  const cg_slot *slots = arg;
  size_t a = slots[*(const unsigned *)pa].offset;
  size_t b = slots[*(const unsigned *)pb].offset;
  return a < b ? -1 : a > b;
}

quill_status cg_plan_alloc(cg *c) {
  unsigned n = 0, cap = c->nslots + 1;
  unsigned *order = quill_alloc(c->ctx, cap * sizeof *order);
  unsigned *placed = quill_alloc(c->ctx, cap * sizeof *placed);
  unsigned *conf = quill_alloc(c->ctx, cap * sizeof *conf);
  unsigned *tmp = quill_alloc(c->ctx, cap * sizeof *tmp);
  if (!order || !placed || !conf || !tmp) {
    quill_free(c->ctx, order, cap * sizeof *order);
    quill_free(c->ctx, placed, cap * sizeof *placed);
    quill_free(c->ctx, conf, cap * sizeof *conf);
    quill_free(c->ctx, tmp, cap * sizeof *tmp);
    return QUILL_ERR_NOMEM;
  }
  for (unsigned i = 0; i < c->nslots; i++)
    if (c->slots[i].kind == CG_SLOT_SCRATCH)
      order[n++] = i;
  sort_idx(order, tmp, n, cmp_order, c->slots);
  size_t high = 0;
  unsigned np = 0;
  for (unsigned i = 0; i < n; i++) {
    cg_slot *s = &c->slots[order[i]];
    size_t size = align_up(s->size);
    /* first fit: the placed slots live at the same time, by offset; bump
     * past each one the candidate interval overlaps */
    unsigned nc = 0;
    for (unsigned k = 0; k < np; k++)
      if (live_overlap(s, &c->slots[placed[k]]))
        conf[nc++] = placed[k];
    sort_idx(conf, tmp, nc, cmp_offset, c->slots);
    size_t off = 0;
    for (unsigned k = 0; k < nc; k++) {
      const cg_slot *p = &c->slots[conf[k]];
      if (p->offset >= off + size)
        break;
      size_t pe = p->offset + align_up(p->size);
      if (pe > off)
        off = pe;
    }
    s->offset = off;
    placed[np++] = order[i];
    if (off + size > high)
      high = off + size;
  }
  c->scratch_size = high;
  quill_free(c->ctx, order, cap * sizeof *order);
  quill_free(c->ctx, placed, cap * sizeof *placed);
  quill_free(c->ctx, conf, cap * sizeof *conf);
  quill_free(c->ctx, tmp, cap * sizeof *tmp);
  return QUILL_OK;
}
