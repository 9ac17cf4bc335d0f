/*
 * equalize.c - the `equalize` pass: cross-layer equalization and high-bias
 * absorption (Nagel et al. 2019, "Data-Free Quantization Through Weight
 * Equalization and Bias Correction", sections 4.1 and 4.2).
 *
 * 1. Pairs. A pair is two layers (conv2d or gemm with float constant
 *    weights, layer_data.h) where L1's result reaches L2's input through
 *    ops that commute with a positive per-channel scale, each result used
 *    once:
 *
 *      L1 -> [relu | leaky_relu | clip{0, +inf} | maxpool | avgpool |
 *             global_avgpool | global_maxpool | identity | flatten{axis 1}]*
 *         -> L2 (operand 0)
 *
 *    f(s x) = s f(x) for s > 0 holds for each of those, so with
 *    S = diag(s):  L2(f(L1(x))) = (W2 S) f(S^-1 (W1 x + b1)) + b2.
 *    Depthwise and grouped convs are layers like any other (the input
 *    channel of W2's element follows the groups), so conv -> dw -> pw
 *    chains are two overlapping pairs. A flatten into a gemm makes each
 *    conv channel H*W consecutive gemm inputs.
 *
 *    relu6 (clip 0..6, fused or not) is not positively homogeneous:
 *    min(s x, 6) != s min(x, 6). The paper replaces ReLU6 by ReLU in
 *    MobileNetV2 before equalizing (its section 5.1.1); AIMET does the
 *    same. Here it is a barrier by default (the float model stays exact),
 *    and with option relu6-to-relu=true the clips between the layers of a
 *    pair become relu, the paper's choice (this changes the float model
 *    wherever an activation exceeded 6; statistic num-relu6-to-relu).
 *
 * 2. Equalization. For each pair, r1[c] = max |W1| over output channel c,
 *    r2[c] = max |W2| over input channel c, and
 *
 *      s[c] = sqrt(r1[c] * r2[c]) / r2[c] = sqrt(r1[c] / r2[c])
 *
 *    W1[c] /= s[c], b1[c] /= s[c], W2[:, c] *= s[c]: both ranges become
 *    sqrt(r1[c] * r2[c]). A channel with a zero range keeps s = 1. Pairs
 *    sharing a layer disturb each other, so the pass sweeps all pairs in
 *    program order until the largest |ln s| of a sweep is below 1e-6 (at
 *    most iterations=N sweeps, default 100). The weights are f64 arrays
 *    during the sweeps and become new constants once, in their old type.
 *
 * 3. High-bias absorption (option absorb-bias=true; needs calibration
 *    data: data=PATH [max-samples=N] or the pass input
 *    "calibration-data"; in the entry graph, the module's first). Where L1's result goes first into a relu (or
 *    leaky_relu, or relu6 turned relu) and then only through max pools,
 *    global pools, identity or flatten into an L2 without padding, the
 *    equalized graph runs on the data and c[ch] = max(0, min over the
 *    data of L1's pre-activation output in channel ch). Then
 *
 *      b1 -= c,   b2 += W2 c          (W2 c summed over kernel taps)
 *
 *    relu(h - c) + c = relu(h) whenever h >= c, so the model is unchanged
 *    on every calibration sample (the paper's c = max(0, beta - 3 gamma)
 *    from BatchNorm statistics aims at the same with a 3-sigma bound; the
 *    data minimum is exact on the data and needs no BatchNorm). Padding in
 *    L2 would add W2 c at the border where the input was zero padding, so
 *    such pairs are not absorbed.
 *
 * Statistics: num-pairs, num-iterations, num-relu6-to-relu,
 * num-absorbed (channels with c > 0). Each pair's range spreads before and
 * after (the ratio of the largest to the smallest channel range, of L1's
 * output channels and of L2's input channels: equal afterwards) go to the
 * debug channel "equalize" and, when the pass
 * input "accuracy-log" is a quill_strbuf *, one line per pair into it
 * (`quill report` prints them).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "passes/layer_data.h"

typedef struct eq_pair {
  size_t l1, l2;      /* indices into eq_run.layers */
  int64_t inner;      /* L2 input channels per L1 channel (flatten: H*W) */
  quill_op *relu6;    /* a clip 0..6 between them (relu6-to-relu), or NULL */
  bool relu6_fused;   /* L1's fused activation is a clip 0..6 (same) */
  bool absorb;        /* the chain allows absorbing L1's bias */
  double spread0[2], spread1[2]; /* range spreads (L1 out, L2 in) before /
                                   after */
} eq_pair;

typedef struct eq_run {
  quill_pass_state *ps;
  quill_context *ctx;
  bool relu6;
  quill_layer *layers;
  size_t nl, cap_l;
  eq_pair *pairs;
  size_t np, cap_p;
  uint64_t n_relu6, n_absorbed;
} eq_run;

/* ---- finding pairs ------------------------------------------------------ */

static bool number(const quill_op *op, unsigned i, const char *name,
                   double dflt, double *out) {
  if (quill_op_num_operands(op) > i) {
    const quill_attr *a = quill_value_constant(quill_op_operand(op, i));
    if (!a || quill_type_num_elements(quill_attr_dense_type(a)) != 1)
      return false;
    *out = quill_attr_dense_get_f64(a, 0);
    return true;
  }
  *out = quill_op_attr_number(op, name, dflt);
  return true;
}

typedef enum act_kind { ACT_NONE, ACT_RELU, ACT_RELU6, ACT_OTHER } act_kind;

static act_kind classify_clip(double lo, double hi) {
  if (lo != 0.0)
    return ACT_OTHER;
  return isinf(hi) && hi > 0 ? ACT_RELU : hi == 6.0 ? ACT_RELU6 : ACT_OTHER;
}

/* L1's fused activation (fuse-activation's attributes). */
static act_kind fused_act(const quill_op *op) {
  const quill_attr *a = quill_op_attr(op, "activation");
  if (!a)
    return ACT_NONE;
  size_t len;
  const char *s = quill_attr_kind_of(a) == QUILL_ATTR_STRING
                      ? quill_attr_string_value(a, &len)
                      : NULL;
  if (s && len == 4 && memcmp(s, "relu", 4) == 0)
    return ACT_RELU;
  if (s && len == 4 && memcmp(s, "clip", 4) == 0)
    return classify_clip(quill_op_attr_number(op, "activation_min", -INFINITY),
                         quill_op_attr_number(op, "activation_max", INFINITY));
  return ACT_OTHER;
}

static bool no_padding(const quill_op *op) {
  int64_t pads[8];
  int64_t n = quill_op_attr_ints(op, "pads", pads, 8);
  for (int64_t i = 0; i < n; i++)
    if (pads[i])
      return false;
  const quill_attr *ap = quill_op_attr(op, "auto_pad");
  size_t len = 0;
  const char *s = ap && quill_attr_kind_of(ap) == QUILL_ATTR_STRING
                      ? quill_attr_string_value(ap, &len)
                      : NULL;
  return !s || (len == 6 && memcmp(s, "NOTSET", 6) == 0) ||
         (len == 5 && memcmp(s, "VALID", 5) == 0);
}

/* The one user of v, and which operand v is there. */
static quill_op *only_user(quill_value *v, unsigned *idx) {
  quill_use *u = quill_value_first_use(v);
  *idx = quill_use_operand_index(u);
  return quill_use_user(u);
}

/* Follow L1's result to L2. Returns L2 or NULL with *why set. */
static quill_op *walk(eq_run *r, quill_op *l1, eq_pair *p, const char **why) {
  act_kind fa = fused_act(l1);
  memset(p, 0, sizeof *p);
  p->inner = 1;
  if (fa == ACT_OTHER || (fa == ACT_RELU6 && !r->relu6)) {
    *why = fa == ACT_RELU6 ? "its fused relu6 is not positively homogeneous "
                             "(relu6-to-relu=true treats it as relu)"
                           : "its fused activation is not relu";
    return NULL;
  }
  p->relu6_fused = fa == ACT_RELU6;
  bool first = true, act = fa != ACT_NONE;
  p->absorb = fa == ACT_NONE; /* the pre-activation must be observable */
  quill_value *v = quill_op_result(l1, 0);
  for (;;) {
    if (!quill_value_has_one_use(v)) {
      *why = "a value on the way has several uses (or none)";
      return NULL;
    }
    unsigned idx;
    quill_op *u = only_user(v, &idx);
    quill_opcode opc = quill_op_opcode(u);
    if (opc == QUILL_OP_CONV2D || opc == QUILL_OP_GEMM) {
      if (idx != 0) {
        *why = "it feeds a weight operand";
        return NULL;
      }
      p->absorb = p->absorb && act && no_padding(u);
      return u;
    }
    act_kind k = ACT_NONE;
    double lo, hi;
    switch (opc) {
    case QUILL_OP_RELU:
    case QUILL_OP_LEAKY_RELU:
      k = ACT_RELU;
      break;
    case QUILL_OP_CLIP:
      if (!number(u, 1, "min", -INFINITY, &lo) ||
          !number(u, 2, "max", INFINITY, &hi)) {
        *why = "clip bounds are not constants";
        return NULL;
      }
      k = classify_clip(lo, hi);
      if (k == ACT_RELU6 && r->relu6 && !p->relu6)
        p->relu6 = u;
      else if (k != ACT_RELU) {
        *why = k == ACT_RELU6 ? "relu6 (clip 0..6) is not positively "
                                "homogeneous (relu6-to-relu=true treats it "
                                "as relu)"
                              : "a clip other than relu";
        return NULL;
      }
      k = ACT_RELU;
      break;
    case QUILL_OP_MAXPOOL:
    case QUILL_OP_GLOBAL_MAXPOOL:
    case QUILL_OP_GLOBAL_AVGPOOL:
    case QUILL_OP_IDENTITY:
      break;
    case QUILL_OP_AVGPOOL:
      p->absorb = false; /* padding counted in the average breaks it */
      break;
    case QUILL_OP_FLATTEN: {
      quill_type *t = quill_value_type(v);
      if (quill_op_attr_int(u, "axis", 1) != 1 || p->inner != 1 ||
          quill_type_rank(t) < 2) {
        *why = "a flatten other than axis 1";
        return NULL;
      }
      for (unsigned d = 2; d < quill_type_rank(t); d++)
        p->inner *= quill_type_dim(t, d);
      if (p->inner < 1) {
        *why = "a flatten of dynamic dimensions";
        return NULL;
      }
      break;
    }
    case QUILL_OP_RETURN:
      *why = "its result is a graph output";
      return NULL;
    default:
      *why = "an op that does not commute with a per-channel scale is in "
             "between";
      return NULL;
    }
    if (k == ACT_RELU) {
      if (!first)
        p->absorb = false; /* the activation must come first */
      act = true;
    }
    first = false;
    v = quill_op_result(u, 0);
  }
}

/* The index of op's layer, reading it on first sight; SIZE_MAX if it is
 * not a layer (*why says why), or on no memory (*nomem). */
static size_t layer_of(eq_run *r, quill_op *op, const char **why,
                       bool *nomem) {
  for (size_t i = 0; i < r->nl; i++)
    if (r->layers[i].op == op)
      return i;
  if (r->nl == r->cap_l) {
    size_t nc = r->cap_l ? 2 * r->cap_l : 16;
    quill_layer *nl = quill_realloc(r->ctx, r->layers,
                                    r->cap_l * sizeof *nl, nc * sizeof *nl);
    if (!nl) {
      *nomem = true;
      return SIZE_MAX;
    }
    r->layers = nl;
    r->cap_l = nc;
  }
  quill_layer *L = &r->layers[r->nl];
  if ((*why = quill_layer_read(r->ctx, op, quill_op_operand(op, 1), L))) {
    *nomem = strcmp(*why, "out of memory") == 0;
    return SIZE_MAX;
  }
  return r->nl++;
}

/* The op's location name (ONNX node, .qir loc("...")), else its result's
 * name, else its mnemonic. */
static const char *op_label(const quill_op *op) {
  quill_loc l = quill_op_loc(op);
  const char *n = l.name ? l.name : quill_value_name(quill_op_result(op, 0));
  return n ? n : quill_op_name(op);
}

static quill_status find_pairs(eq_run *r, quill_graph *g) {
  QUILL_GRAPH_FOREACH(g, op) {
    quill_opcode opc = quill_op_opcode(op);
    if (opc != QUILL_OP_CONV2D && opc != QUILL_OP_GEMM)
      continue;
    eq_pair p;
    const char *why = NULL;
    bool nomem = false;
    quill_op *l2 = walk(r, op, &p, &why);
    if (l2) {
      p.l1 = layer_of(r, op, &why, &nomem);
      p.l2 = p.l1 == SIZE_MAX ? SIZE_MAX : layer_of(r, l2, &why, &nomem);
    }
    if (nomem)
      return QUILL_ERR_NOMEM;
    if (l2 && p.l2 != SIZE_MAX &&
        r->layers[p.l2].in_ch != r->layers[p.l1].out_ch * p.inner)
      why = "the channel counts do not match";
    if (!l2 || p.l1 == SIZE_MAX || p.l2 == SIZE_MAX || why) {
      quill_pass_debug(r->ps, "no pair from '%s': %s", op_label(op), why);
      continue;
    }
    if (r->np == r->cap_p) {
      size_t nc = r->cap_p ? 2 * r->cap_p : 16;
      eq_pair *np = quill_realloc(r->ctx, r->pairs, r->cap_p * sizeof *np,
                                  nc * sizeof *np);
      if (!np)
        return QUILL_ERR_NOMEM;
      r->pairs = np;
      r->cap_p = nc;
    }
    r->pairs[r->np++] = p;
  }
  return QUILL_OK;
}

/* ---- equalizing ------------------------------------------------------- */

/* r1 (L1 output channels) and r2 (L2 input channels, grouped by inner). */
static void ranges(const quill_layer *a, const quill_layer *b, int64_t inner,
                   double *r1, double *r2) {
  size_t c = (size_t)a->out_ch;
  for (size_t k = 0; k < c; k++)
    r1[k] = r2[k] = 0.0;
  for (size_t i = 0; i < a->nw; i++) {
    double x = fabs(a->w[i]);
    size_t k = (size_t)quill_layer_out_ch(a, i);
    if (x > r1[k])
      r1[k] = x;
  }
  for (size_t i = 0; i < b->nw; i++) {
    double x = fabs(b->w[i]);
    size_t k = (size_t)(quill_layer_in_ch(b, i) / inner);
    if (x > r2[k])
      r2[k] = x;
  }
}

/* max / min of the non-zero entries (1 if none). */
static double spread(const double *r, size_t n) {
  double lo = DBL_MAX, hi = 0.0;
  for (size_t k = 0; k < n; k++)
    if (r[k] > 0) {
      lo = r[k] < lo ? r[k] : lo;
      hi = r[k] > hi ? r[k] : hi;
    }
  return hi > 0 ? hi / lo : 1.0;
}

/* One equalization step of a pair; returns max |ln s|. buf: 3 * C. */
static double equalize_pair(eq_run *r, const eq_pair *p, double *buf) {
  quill_layer *a = &r->layers[p->l1], *b = &r->layers[p->l2];
  size_t c = (size_t)a->out_ch;
  double *r1 = buf, *r2 = buf + c, *s = buf + 2 * c, delta = 0.0;
  ranges(a, b, p->inner, r1, r2);
  for (size_t k = 0; k < c; k++) {
    s[k] = r1[k] > 0 && r2[k] > 0 ? sqrt(r1[k] / r2[k]) : 1.0;
    double d = fabs(log(s[k]));
    delta = d > delta ? d : delta;
  }
  for (size_t i = 0; i < a->nw; i++)
    a->w[i] /= s[quill_layer_out_ch(a, i)];
  for (size_t j = 0; a->b && j < a->nb; j++)
    a->b[j] /= s[j % c];
  for (size_t i = 0; i < b->nw; i++)
    b->w[i] *= s[quill_layer_in_ch(b, i) / p->inner];
  return delta;
}

/* relu6 -> relu where a pair needs it. */
static quill_status relu6_to_relu(eq_run *r, eq_pair *p) {
  quill_context *ctx = r->ctx;
  if (p->relu6_fused) {
    const char *k = "relu";
    const quill_attr *ka = quill_attr_string(ctx, k, strlen(k));
    quill_op *op = r->layers[p->l1].op;
    if (!ka || quill_op_set_attr(op, "activation", ka) ||
        quill_op_set_attr(op, "activation_min", NULL) ||
        quill_op_set_attr(op, "activation_max", NULL))
      return QUILL_ERR_NOMEM;
    r->n_relu6++;
  }
  if (p->relu6) {
    quill_op *clip = p->relu6;
    quill_value *x = quill_op_operand(clip, 0);
    quill_value *y = quill_op_result(clip, 0);
    quill_type *t = quill_value_type(y);
    quill_op *relu = quill_op_create(quill_op_graph(clip), QUILL_OP_RELU, 1,
                                     &x, 1, &t, 0, NULL, quill_op_loc(clip));
    if (!relu)
      return QUILL_ERR_NOMEM;
    quill_op_insert_before(clip, relu);
    quill_value *ny = quill_op_result(relu, 0);
    if (quill_value_name(y) && quill_value_set_name(ny, quill_value_name(y)))
      return QUILL_ERR_NOMEM;
    quill_value_replace_all_uses(y, ny);
    quill_value *bounds[2] = {NULL, NULL};
    for (unsigned i = 1; i < quill_op_num_operands(clip) && i < 3; i++)
      bounds[i - 1] = quill_op_operand(clip, i);
    quill_op_erase(clip);
    for (unsigned i = 0; i < 2; i++) {
      quill_op *d = bounds[i] ? quill_value_def(bounds[i]) : NULL;
      if (d && quill_op_opcode(d) == QUILL_OP_CONSTANT &&
          !quill_value_has_uses(bounds[i]) && (i == 0 || bounds[1] != bounds[0]))
        quill_op_erase(d);
    }
    p->relu6 = NULL;
    r->n_relu6++;
  }
  return QUILL_OK;
}

/* ---- high-bias absorption --------------------------------------------- */

static quill_status absorb(eq_run *r, quill_graph *g) {
  quill_context *ctx = r->ctx;
  size_t n = 0;
  for (size_t i = 0; i < r->np; i++)
    n += r->pairs[i].absorb;
  if (!n)
    return QUILL_OK;
  quill_value **vals = quill_alloc(ctx, n * sizeof *vals);
  quill_chan_stats *st = quill_calloc(ctx, n, sizeof *st);
  quill_status s = vals && st ? QUILL_OK : QUILL_ERR_NOMEM;
  for (size_t i = 0, k = 0; !s && i < r->np; i++)
    if (r->pairs[i].absorb)
      vals[k++] = quill_op_result(r->layers[r->pairs[i].l1].op, 0);
  if (!s)
    s = quill_chan_stats_collect(r->ps, "equalize", g, n, vals, NULL,
                                   st);
  for (size_t i = 0, k = 0; !s && i < r->np; i++) {
    eq_pair *p = &r->pairs[i];
    if (!p->absorb)
      continue;
    quill_layer *a = &r->layers[p->l1], *b = &r->layers[p->l2];
    const double *mn = st[k++].min;
    size_t c = (size_t)a->out_ch, nc = 0;
    for (size_t ch = 0; ch < c; ch++)
      nc += mn[ch] > 0;
    if (!nc)
      continue;
    if (!quill_layer_ensure_bias(ctx, a) || !quill_layer_ensure_bias(ctx, b)) {
      s = QUILL_ERR_NOMEM;
      break;
    }
    for (size_t j = 0; j < a->nb; j++)
      if (mn[j % c] > 0)
        a->b[j] -= mn[j % c] / a->bias_mul;
    double *shift = quill_calloc(ctx, (size_t)b->out_ch, sizeof *shift);
    if (!shift) {
      s = QUILL_ERR_NOMEM;
      break;
    }
    for (size_t w = 0; w < b->nw; w++) {
      double cv = mn[quill_layer_in_ch(b, w) / p->inner];
      if (cv > 0)
        shift[quill_layer_out_ch(b, w)] += b->w[w] * cv;
    }
    for (size_t j = 0; j < b->nb; j++)
      b->b[j] += shift[j % (size_t)b->out_ch] / b->bias_mul;
    quill_free(ctx, shift, (size_t)b->out_ch * sizeof *shift);
    quill_pass_debug(r->ps, "absorbed %zu of %zu channels of '%s' into '%s'",
                     nc, c, op_label(a->op), op_label(b->op));
    r->n_absorbed += nc;
    if ((s = quill_layer_write(ctx, a, false, true)) ||
        (s = quill_layer_write(ctx, b, false, true)))
      break;
  }
  if (st)
    quill_chan_stats_free(ctx, st, n);
  if (st)
    quill_free(ctx, st, n * sizeof *st);
  if (vals)
    quill_free(ctx, vals, n * sizeof *vals);
  return s;
}

/* ---- the pass ------------------------------------------------------- */

static bool option_true(quill_pass_state *ps, const char *key) {
  const char *v = quill_pass_option(ps, key);
  return v && strcmp(v, "true") == 0;
}

static quill_status equalize_graph(eq_run *r, quill_graph *g, bool entry,
                                   int64_t max_iter, uint64_t *iters) {
  quill_status st = find_pairs(r, g);
  size_t cmax = 1;
  for (size_t i = 0; !st && i < r->np; i++) {
    st = relu6_to_relu(r, &r->pairs[i]);
    size_t c = (size_t)r->layers[r->pairs[i].l1].out_ch;
    cmax = c > cmax ? c : cmax;
  }
  double *buf = st || !r->np ? NULL : quill_alloc(r->ctx, 3 * cmax * sizeof *buf);
  if (!st && r->np && !buf)
    st = QUILL_ERR_NOMEM;
  for (size_t i = 0; !st && i < r->np; i++) {
    eq_pair *p = &r->pairs[i];
    size_t c = (size_t)r->layers[p->l1].out_ch;
    ranges(&r->layers[p->l1], &r->layers[p->l2], p->inner, buf, buf + cmax);
    p->spread0[0] = spread(buf, c);
    p->spread0[1] = spread(buf + cmax, c);
  }
  for (int64_t it = 0; !st && r->np && it < max_iter; it++) {
    double delta = 0.0;
    for (size_t i = 0; i < r->np; i++) {
      double d = equalize_pair(r, &r->pairs[i], buf);
      delta = d > delta ? d : delta;
    }
    ++*iters;
    if (delta < 1e-6)
      break;
  }
  quill_strbuf *log = quill_pass_input(r->ps, "accuracy-log");
  for (size_t i = 0; !st && i < r->np; i++) {
    eq_pair *p = &r->pairs[i];
    quill_layer *a = &r->layers[p->l1], *b = &r->layers[p->l2];
    size_t c = (size_t)a->out_ch;
    ranges(a, b, p->inner, buf, buf + cmax);
    p->spread1[0] = spread(buf, c);
    p->spread1[1] = spread(buf + cmax, c);
    quill_pass_debug(r->ps, "pair '%s' -> '%s': %zu channels, range spread "
                     "%.4g -> %.4g, %.4g -> %.4g", op_label(a->op),
                     op_label(b->op), c, p->spread0[0], p->spread1[0],
                     p->spread0[1], p->spread1[1]);
    if (log)
      quill_strbuf_printf(log, "equalize: %s -> %s: %zu channels, channel "
                          "range spread (max/min) of the first's outputs "
                          "%.4g -> %.4g, of the second's inputs %.4g -> "
                          "%.4g\n", op_label(a->op), op_label(b->op), c,
                          p->spread0[0], p->spread1[0], p->spread0[1],
                          p->spread1[1]);
  }
  if (buf)
    quill_free(r->ctx, buf, 3 * cmax * sizeof *buf);
  /* Layers of a pair only (a layer read for a failed pair is unchanged). */
  for (size_t i = 0; !st && i < r->np; i++)
    for (unsigned k = 0; !st && k < 2; k++) {
      quill_layer *L = &r->layers[k ? r->pairs[i].l2 : r->pairs[i].l1];
      if (!L->written)
        st = quill_layer_write(r->ctx, L, true, true);
      L->written = true;
    }
  /* the calibration data is for the entry graph (the module's first) */
  if (!st && entry && option_true(r->ps, "absorb-bias"))
    st = absorb(r, g);
  return st;
}

static quill_status run(quill_pass_state *ps, quill_module *m) {
  quill_context *ctx = quill_pass_context(ps);
  quill_status st = QUILL_OK;
  int64_t max_iter = quill_pass_option_int(ps, "iterations", 100, &st);
  if (st)
    return st;
  if (max_iter < 1)
    return quill_error(ctx, quill_loc_unknown(),
                       "equalize: iterations must be at least 1, got %lld",
                       (long long)max_iter);
  uint64_t pairs = 0, iters = 0, relu6 = 0, absorbed = 0;
  for (unsigned gi = 0; !st && gi < quill_module_num_graphs(m); gi++) {
    eq_run r = {ps, ctx, option_true(ps, "relu6-to-relu"), NULL, 0, 0,
                NULL, 0, 0, 0, 0};
    st = equalize_graph(&r, quill_module_graph(m, gi), gi == 0, max_iter,
                        &iters);
    pairs += r.np;
    relu6 += r.n_relu6;
    absorbed += r.n_absorbed;
    for (size_t i = 0; i < r.nl; i++)
      quill_layer_free(ctx, &r.layers[i]);
    if (r.layers)
      quill_free(ctx, r.layers, r.cap_l * sizeof *r.layers);
    if (r.pairs)
      quill_free(ctx, r.pairs, r.cap_p * sizeof *r.pairs);
  }
  if (pairs)
    quill_pass_stat_add(ps, "num-pairs", pairs);
  if (iters)
    quill_pass_stat_add(ps, "num-iterations", iters);
  if (relu6)
    quill_pass_stat_add(ps, "num-relu6-to-relu", relu6);
  if (absorbed)
    quill_pass_stat_add(ps, "num-absorbed", absorbed);
  if (!st && !pairs)
    quill_pass_mark_unchanged(ps);
  return st;
}

const quill_pass quill_pass_equalize = {
    .name = "equalize",
    .summary = "Cross-layer equalization of conv/gemm pairs, then high-bias "
               "absorption",
    .run = run,
    .requires = 0,
    .establishes = 0,
    .preserves = 0,
    .options = "iterations=N relu6-to-relu=BOOL absorb-bias=BOOL data=PATH "
               "max-samples=N",
};
