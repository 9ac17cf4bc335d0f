/*
 * layout.c - NCHW -> NHWC: the layout of every value, and the data
 * permutations the writers need.
 *
 * Quill's 4-D activations are NCHW; TFLite's conv, pooling and resize
 * kernels want NHWC. Layouts are decided per value, so that no TRANSPOSE
 * runs inside the graph for the usual CNNs:
 *
 *   1. values joined by a layout-agnostic op (elementwise, concat, pad,
 *      quantize/dequantize, reductions keeping dims...) share a group
 *      (union-find over the effective operands and results, after QDQ
 *      folding; constants never join: they are permuted per use);
 *   2. a spatial op (conv2d, pooling, resize, depthwise) votes NHWC for
 *      the group of its input and of its result; a 4-D softmax over the
 *      channel axis does too (TFLite's softmax works on the last axis);
 *   3. a group with a vote is NHWC, every other value stays as it is.
 *
 * Layout-fixed ops (reshape, flatten, matmul, transpose...) take their
 * operand in whatever layout it has when that changes nothing (only size-1
 * dims move: [N,C,1,1] is the same bytes in NCHW and NHWC), and otherwise
 * ask for NCHW, which inserts a TRANSPOSE (tx_value, with a warning).
 *
 * A flatten of an NHWC value that keeps H, W > 1 ([N, C, H, W] ->
 * [N, C*H*W], the classic CNN head) would need NCHW order. When every
 * reader of the flattened value is a fully connected layer with constant
 * weights (possibly through quantize/dequantize), the value is marked
 * TX_FLAT instead: the RESHAPE flattens the NHWC data (order h, w, c) and
 * the FULLY_CONNECTED weights are permuted at compile time to match.
 *
 *   logical (Quill) dims  [N, C, H, W]
 *   NHWC physical dims    [N, H, W, C]   phys[i] = logical[perm[i]],
 *                                        perm = {0, 2, 3, 1}
 */
#include <string.h>

#include "targets/tflite/export_impl.h"

static const int nhwc_perm[4] = {0, 2, 3, 1};
static const int nhwc_inv[4] = {0, 3, 1, 2}; /* logical axis -> physical */

void tx_phys_dims(unsigned rank, const int64_t *dims, int layout,
                  int64_t *out) {
  for (unsigned i = 0; i < rank; i++)
    out[i] = layout == TX_NHWC && rank == 4 ? dims[nhwc_perm[i]] : dims[i];
}

int tx_phys_axis(unsigned rank, int a, int layout) {
  if (a < 0)
    a += (int)rank;
  return layout == TX_NHWC && rank == 4 ? nhwc_inv[a] : a;
}

bool tx_layout_neutral(unsigned rank, const int64_t *dims, int layout) {
  if (layout != TX_NHWC || rank != 4)
    return true;
  int last = -1;
  for (int i = 0; i < 4; i++) {
    int a = nhwc_perm[i];
    if (dims[a] == 1)
      continue;
    if (a < last)
      return false;
    last = a;
  }
  return true;
}

void tx_transpose_data(const void *in, const int64_t *dims, unsigned rank,
                       const int *perm, size_t esz, void *out) {
  int64_t stride[QUILL_MAX_RANK], odims[QUILL_MAX_RANK], idx[QUILL_MAX_RANK];
  size_t total = 1;
  for (unsigned i = rank; i-- > 0;) {
    stride[i] = (int64_t)total;
    total *= (size_t)dims[i];
  }
  for (unsigned i = 0; i < rank; i++) {
    odims[i] = dims[perm[i]];
    idx[i] = 0;
  }
  const unsigned char *src = in;
  unsigned char *dst = out;
  for (size_t o = 0; o < total; o++) {
    int64_t off = 0;
    for (unsigned i = 0; i < rank; i++)
      off += idx[i] * stride[perm[i]];
    memcpy(dst + o * esz, src + (size_t)off * esz, esz);
    for (unsigned i = rank; i-- > 0;) {
      if (++idx[i] < odims[i])
        break;
      idx[i] = 0;
    }
  }
}

/* ---- union-find ---------------------------------------------------------------- */

typedef struct groups {
  unsigned *parent;
  bool *nhwc;
} groups;

static unsigned find_root(groups *g, unsigned i) {
  while (g->parent[i] != i) {
    g->parent[i] = g->parent[g->parent[i]];
    i = g->parent[i];
  }
  return i;
}

static void unite(groups *g, unsigned a, unsigned b) {
  a = find_root(g, a);
  b = find_root(g, b);
  if (a == b)
    return;
  g->parent[b] = a;
  g->nhwc[a] |= g->nhwc[b];
}

/* A 4-D non-constant value takes part in layout decisions. */
static bool layouted(const quill_value *v) {
  return v && quill_type_rank(quill_value_type(v)) == 4 &&
         !quill_value_constant(v);
}

static void vote(tflite_exporter *ex, groups *g, const quill_value *v) {
  if (!layouted(v))
    return;
  tx_vinfo *vi = tx_info(ex, v);
  if (vi)
    g->nhwc[find_root(g, vi->index)] = true;
}

/* Join every 4-D effective operand and result of op into one group. */
static void join_all(tflite_exporter *ex, groups *g, const quill_op *op) {
  int first = -1;
  unsigned no = quill_op_num_operands(op), nr = quill_op_num_results(op);
  for (unsigned i = 0; i < no + nr; i++) {
    const quill_value *v = i < no ? tx_ein(ex, op, i)
                                  : tx_resolve(ex, tx_eout(ex, op, i - no));
    if (!layouted(v))
      continue;
    tx_vinfo *vi = tx_info(ex, v);
    if (!vi)
      return;
    if (first < 0)
      first = (int)vi->index;
    else
      unite(g, (unsigned)first, vi->index);
  }
}

static bool keeps_dims(const quill_op *op) {
  return quill_op_attr_int(op, "keepdims", 1) != 0;
}

/* ---- flattened NHWC heads ----------------------------------------------------- */

typedef struct use_list {
  const quill_op **ops;
  unsigned *idx;
  unsigned n, cap;
} use_list;

/* Effective uses: op reads value v as effective operand idx. */
static void add_use(tflite_exporter *ex, tx_map *uses, const quill_value *v,
                    const quill_op *op, unsigned idx) {
  use_list *l = tx_map_get(uses, v);
  if (!l) {
    l = tx_alloc(ex, sizeof *l);
    if (!l)
      return;
    tx_map_put(ex, uses, v, l);
  }
  if (l->n == l->cap) {
    unsigned ncap = l->cap ? l->cap * 2 : 4;
    const quill_op **no = tx_alloc(ex, ncap * sizeof *no);
    unsigned *ni = tx_alloc(ex, ncap * sizeof *ni);
    if (!no || !ni)
      return;
    if (l->n) {
      memcpy(no, l->ops, l->n * sizeof *no);
      memcpy(ni, l->idx, l->n * sizeof *ni);
    }
    l->ops = no;
    l->idx = ni;
    l->cap = ncap;
  }
  l->ops[l->n] = op;
  l->idx[l->n++] = idx;
}

/* Can every reader of v take it flattened in NHWC order? Collects the
 * values involved (v and the quantize/dequantize results after it). */
static bool flat_ok(tflite_exporter *ex, const tx_map *uses,
                    const quill_value *v, const quill_value **set,
                    unsigned *n, unsigned cap) {
  if (*n >= cap)
    return false;
  set[(*n)++] = v;
  const use_list *l = tx_map_get(uses, v);
  if (!l || !l->n)
    return false; /* unused, or a graph output (the return is no use here) */
  for (unsigned k = 0; k < l->n; k++) {
    const quill_op *op = l->ops[k];
    quill_opcode opc = quill_op_opcode(op);
    if (opc == QUILL_OP_RETURN)
      return false;
    if (opc == QUILL_OP_QUANTIZE || opc == QUILL_OP_DEQUANTIZE ||
        opc == QUILL_OP_REQUANTIZE) {
      if (!flat_ok(ex, uses, tx_resolve(ex, tx_eout(ex, op, 0)), set, n, cap))
        return false;
      continue;
    }
    bool fc = (opc == QUILL_OP_GEMM && !quill_op_attr_int(op, "trans_a", 0)) ||
              opc == QUILL_OP_MATMUL || opc == QUILL_OP_QMATMUL;
    const quill_attr *w = fc ? tx_in_const(ex, op, 1) : NULL;
    if (!fc || l->idx[k] != 0 || !w ||
        quill_type_rank(quill_attr_dense_type(w)) != 2)
      return false;
  }
  return true;
}

static void mark_flat(tflite_exporter *ex) {
  tx_map uses = {0};
  QUILL_GRAPH_FOREACH(ex->graph, op) {
    tx_opinfo *oi = tx_map_get(&ex->opinfo, op);
    if (oi && oi->skip)
      continue;
    for (unsigned i = 0; i < quill_op_num_operands(op); i++)
      add_use(ex, &uses, tx_ein(ex, op, i), op, i);
  }
  QUILL_GRAPH_FOREACH(ex->graph, op) {
    quill_opcode opc = quill_op_opcode(op);
    tx_opinfo *oi = tx_map_get(&ex->opinfo, op);
    if ((opc != QUILL_OP_FLATTEN && opc != QUILL_OP_RESHAPE) ||
        (oi && oi->skip))
      continue;
    const quill_value *x = tx_ein(ex, op, 0);
    const quill_value *y = tx_resolve(ex, tx_eout(ex, op, 0));
    quill_type *xt = quill_value_type(x), *yt = quill_value_type(y);
    if (quill_type_rank(xt) != 4 || quill_type_rank(yt) != 2 ||
        tx_layout_of(ex, x) != TX_NHWC || !quill_type_has_static_shape(xt) ||
        tx_layout_neutral(4, quill_type_dims(xt), TX_NHWC) ||
        quill_type_dim(yt, 0) != quill_type_dim(xt, 0))
      continue;
    const quill_value *set[64];
    unsigned n = 0;
    if (!flat_ok(ex, &uses, y, set, &n, 64))
      continue;
    for (unsigned k = 0; k < n; k++) {
      tx_vinfo *vi = tx_info(ex, set[k]);
      if (!vi)
        goto done;
      vi->layout = TX_FLAT;
      for (int d = 0; d < 3; d++)
        vi->chw[d] = quill_type_dim(xt, (unsigned)d + 1);
    }
  }
done:
  quill_hmap_free(ex->ctx, &uses);
}

quill_status tx_layout_run(tflite_exporter *ex) {
  unsigned n = ex->nvalues;
  groups g;
  g.parent = quill_alloc(ex->ctx, (n ? n : 1) * sizeof *g.parent);
  g.nhwc = quill_calloc(ex->ctx, n ? n : 1, sizeof *g.nhwc);
  if (!g.parent || !g.nhwc) {
    quill_free(ex->ctx, g.parent, (n ? n : 1) * sizeof *g.parent);
    quill_free(ex->ctx, g.nhwc, (n ? n : 1) * sizeof *g.nhwc);
    return QUILL_ERR_NOMEM;
  }
  for (unsigned i = 0; i < n; i++)
    g.parent[i] = i;
  /* Joins first, then votes (a vote lands on the final root). */
  for (int pass = 0; pass < 2; pass++) {
    QUILL_GRAPH_FOREACH(ex->graph, op) {
      tx_opinfo *oi = tx_map_get(&ex->opinfo, op);
      if (oi && oi->skip)
        continue;
      quill_opcode opc = quill_op_opcode(op);
      uint8_t cls = tx_table[opc].layout;
      if ((opc == QUILL_OP_REDUCE_MEAN || opc == QUILL_OP_REDUCE_SUM ||
           opc == QUILL_OP_REDUCE_MAX || opc == QUILL_OP_REDUCE_MIN) &&
          !keeps_dims(op))
        cls = TXL_NONE;
      if (opc == QUILL_OP_SOFTMAX || opc == QUILL_OP_LOG_SOFTMAX) {
        /* over the channels of a 4-D tensor: NHWC makes it the last axis */
        int64_t axis = quill_op_attr_int(op, "axis", -1);
        cls = TXL_NONE;
        if (quill_type_rank(tx_in_type(ex, op, 0)) == 4 && axis == 1) {
          if (pass == 1) {
            vote(ex, &g, tx_ein(ex, op, 0));
            vote(ex, &g, tx_resolve(ex, tx_eout(ex, op, 0)));
          }
          continue;
        }
      }
      if (pass == 0 && cls == TXL_AGNOSTIC)
        join_all(ex, &g, op);
      if (pass == 1 && cls == TXL_SPATIAL) {
        vote(ex, &g, tx_ein(ex, op, 0));
        vote(ex, &g, tx_resolve(ex, tx_eout(ex, op, 0)));
      }
    }
  }
  for (size_t i = 0; i < ex->vinfo.cap; i++) {
    quill_hmap_slot *s = &ex->vinfo.slots[i];
    if (!s->key)
      continue;
    tx_vinfo *vi = s->val;
    vi->layout = layouted(s->key) && g.nhwc[find_root(&g, vi->index)]
                     ? TX_NHWC
                     : TX_NATIVE;
  }
  quill_free(ex->ctx, g.parent, (n ? n : 1) * sizeof *g.parent);
  quill_free(ex->ctx, g.nhwc, (n ? n : 1) * sizeof *g.nhwc);
  mark_flat(ex);
  return ex->nomem ? QUILL_ERR_NOMEM : QUILL_OK;
}
