/*
 * fuse_patterns.c - the `fuse-patterns` pass: recognise the decompositions
 * exporters write for GELU, HardSwish and LayerNorm in the float graph and
 * replace each by the one op Quill has for it, so quantization, the
 * report and every target see gelu / hard_swish / layer_norm.
 *
 * 1. Products ("gelu-erf", "gelu-tanh", "hard-swish"; roots mul and div).
 *    The root's operand tree is flattened through mul, div by a constant
 *    and pow(v, 2|3) ops that have no other user (the root itself may have
 *    many), into non-constant leaves and one constant factor k (splat
 *    constants multiplied, divisors inverted). So every association and
 *    operand order is one case. The root then matches
 *
 *      leaves {x, F}, k ~ 1/2:  F = add(erf(x * 1/sqrt2), 1)  -> gelu(x)
 *      leaves {x, F}, k ~ 1/2:  F = add(tanh(sqrt(2/pi) * (x + 0.044715 *
 *                                   x*x*x)), 1)    -> gelu(x) {approximate
 *                                   = "tanh"}
 *      leaves {x, F}, k ~ 1/6:  F = clip(add(x, 3), 0, 6)  -> hard_swish(x)
 *      leaves {x, F}, k ~ 1:    F = hard_sigmoid(x) {1/6, 1/2}
 *                                                  -> hard_swish(x)
 *
 *    where the argument of erf / tanh is itself flattened the same way
 *    (x / 1.4142135, x * 0.70710678 and x / 1.4142 all give k ~ 1/sqrt2;
 *    x^3 may be x*x*x in any grouping or pow(x, 3)). Constants compare
 *    with a relative tolerance of 1e-4 (four-digit constants such as
 *    1.4142 or 0.7071 are accepted; 0.6 for 0.5 is not). Every op between
 *    the root and x (F, erf, tanh, the inner products) must have one user,
 *    so no intermediate is lost; the root's result type must be x's
 *    (nothing broadcast).
 *
 * 2. LayerNorm ("layer-norm"; roots div, mul, add), as torch.onnx exports
 *    nn.LayerNorm at opset 13:
 *
 *      %m = reduce_mean %x {axes, keepdims}       (axes: the trailing dims
 *      %d = sub %x, %m                             [a, rank), both means)
 *      %p = pow %d, 2          (or mul %d, %d)
 *      %v = reduce_mean %p {axes, keepdims}
 *      %e = add %v, eps
 *      %s = sqrt %e
 *      %n = div %d, %s
 *      %g = mul %n, gamma      (optional, a constant)
 *      %y = add %g, beta       (optional, a constant)
 *          ==>  %y = layer_norm %x, gamma' [, beta] {axis = a - rank,
 *                                                    epsilon = eps}
 *
 *    gamma and beta must broadcast to the normalized shape x.dims[a:]
 *    (leading 1 dims are dropped); without a mul, gamma' is ones. A root
 *    whose one user is the affine mul / add that could extend it defers
 *    to that user, so the whole chain becomes one op.
 *
 * 3. Linear layers ("linear"; root add), as torch.onnx exports nn.Linear
 *    on an input of rank 3 or more (rank 2 is one Gemm):
 *
 *      %m = matmul %x, %w        (w a constant [K, N], x [.., M, K], %m
 *      %y = add %m, %b            used only by the add; b a constant of N
 *                                 values, [N] or [1, .., 1, N], either
 *                                 operand order)
 *          ==>  %x2 = reshape %x : [rows, K]        (rank > 2 only)
 *               %g  = gemm %x2, %w, %b' : [rows, N]  (b' = b as [N])
 *               %y  = reshape %g : [.., M, N]
 *
 *    so that a quantizing backend adds the bias in the op's int32
 *    accumulator and requantizes once, instead of quantizing the matmul's
 *    result and requantizing again after the add (crnn's head on
 *    x86-vnni: 36.64 -> 37.34 dB, docs/accuracy.md). The float result is
 *    the same bits: the reference's gemm adds beta * C = C to the same
 *    GEMM sums the matmul makes.
 *
 * SiLU, x * sigmoid(x), is deliberately left as mul + sigmoid: Quill has
 * no silu op, every target runs the pair, and the quantizing backends
 * quantize both halves (sigmoid with its fixed output scale), which is
 * what TFLite itself executes for it.
 *
 * The fused op takes the root's location and value name. The pass runs on
 * float ops only (quantized operands never match) and is part of the
 * PREPARE stage of the quantization pipeline (quantize_pipeline.c) and of
 * the float TFLite pipeline. Statistics: num-gelu, num-hard-swish,
 * num-layer-norm, num-linear. Match failures are logged on the "fuse-patterns" debug
 * channel.
 */
#include <math.h>
#include <string.h>

#include "ir/shape.h"
#include "passes/pass.h"
#include "passes/rewriter.h"
#include "targets/reference/ref.h"

typedef struct fuse_stats {
  uint64_t gelu, hard_swish, layer_norm, linear;
} fuse_stats;

/* ---- helpers -------------------------------------------------------------- */

/* A relative tolerance that accepts four-digit spellings of the constants
 * (1.4142, 0.7071) and float32 roundings of them. */
static bool near(double v, double want) {
  return fabs(v - want) <= 1e-4 * fabs(want);
}

static bool is_float_value(const quill_value *v) {
  quill_type *t = quill_value_type(v);
  return quill_type_is_tensor(t) && quill_type_is_float(quill_type_elem(t));
}

/* A float constant (not quantized), else NULL. */
static const quill_attr *float_constant(const quill_value *v) {
  const quill_attr *a = quill_value_constant(v);
  if (!a || !quill_type_is_float(quill_type_elem(quill_attr_dense_type(a))))
    return NULL;
  return a;
}

/* If v is a non-empty float splat constant, store its value. */
static bool splat(const quill_value *v, double *out) {
  const quill_attr *a = float_constant(v);
  if (!a || !quill_attr_dense_is_splat(a) ||
      quill_type_num_elements(quill_attr_dense_type(a)) <= 0)
    return false;
  *out = quill_attr_dense_get_f64(a, 0);
  return true;
}

/* The def of v if it has opcode opc and v has exactly one use. */
static quill_op *sole_def(const quill_value *v, quill_opcode opc) {
  quill_op *d = quill_value_def(v);
  if (!d || quill_op_opcode(d) != opc || !quill_value_has_one_use(v))
    return NULL;
  return d;
}

/* For a binary op with one splat constant operand: that constant's value
 * in *c and the other operand (NULL if neither or both are constants). */
static quill_value *split_constant(const quill_op *op, double *c) {
  quill_value *a = quill_op_operand(op, 0), *b = quill_op_operand(op, 1);
  if (splat(b, c) && !quill_value_constant(a))
    return a;
  if (quill_op_has_flag(op, QUILL_OPF_COMMUTATIVE) && splat(a, c) &&
      !quill_value_constant(b))
    return b;
  return NULL;
}

/* ---- products --------------------------------------------------------------- */

enum { MAX_LEAVES = 4 };

/* A flattened product: leaf[0] * ... * leaf[n-1] * k. */
typedef struct product {
  quill_value *leaf[MAX_LEAVES];
  unsigned n;
  double k;
  bool ok; /* false: too many leaves, or a divisor that is not constant */
} product;

static void add_leaf(product *p, quill_value *v) {
  if (p->n == MAX_LEAVES)
    p->ok = false;
  else
    p->leaf[p->n++] = v;
}

static void collect_op(product *p, const quill_op *op);

/* Flatten v into p: constants into k, single-use mul / div / pow(v, 2|3)
 * through, anything else a leaf. */
static void collect_value(product *p, quill_value *v) {
  double c;
  if (splat(v, &c)) {
    p->k *= c;
    return;
  }
  quill_op *d = quill_value_def(v);
  if (!d || !quill_value_has_one_use(v) || !is_float_value(v)) {
    add_leaf(p, v);
    return;
  }
  quill_opcode opc = quill_op_opcode(d);
  if (opc == QUILL_OP_MUL || opc == QUILL_OP_DIV) {
    collect_op(p, d);
    return;
  }
  double e;
  quill_value *base = quill_op_num_operands(d) == 2 ? quill_op_operand(d, 0)
                                                    : NULL;
  if (opc == QUILL_OP_POW && splat(quill_op_operand(d, 1), &e) &&
      (e == 2.0 || e == 3.0) && !quill_value_constant(base)) {
    for (int i = 0; i < (int)e; i++)
      add_leaf(p, base);
    return;
  }
  add_leaf(p, v);
}

static void collect_op(product *p, const quill_op *op) {
  collect_value(p, quill_op_operand(op, 0));
  if (quill_op_opcode(op) == QUILL_OP_MUL) {
    collect_value(p, quill_op_operand(op, 1));
    return;
  }
  double c; /* div: only by a non-zero constant */
  if (splat(quill_op_operand(op, 1), &c) && c != 0.0)
    p->k /= c;
  else
    p->ok = false;
}

static product product_of_op(const quill_op *op) {
  product p = {{NULL}, 0, 1.0, true};
  collect_op(&p, op);
  return p;
}

static product product_of_value(quill_value *v) {
  product p = {{NULL}, 0, 1.0, true};
  collect_value(&p, v);
  return p;
}

/* v is x * k with k ~ want (through single-use products only). */
static bool is_scaled(quill_value *v, const quill_value *x, double want) {
  product p = product_of_value(v);
  return p.ok && p.n == 1 && p.leaf[0] == x && near(p.k, want);
}

/* ---- the F factors ------------------------------------------------------------ */

/* The fused ops, in `forms` order. */
typedef enum form_kind {
  FORM_GELU_ERF,
  FORM_GELU_TANH,
  FORM_HSWISH_CLIP,
  FORM_HSWISH_HSIG,
} form_kind;

/* f = add(unary(s), 1) with unary of opcode opc; the unary's operand. */
static quill_value *one_plus(quill_value *f, quill_opcode opc) {
  quill_op *add = sole_def(f, QUILL_OP_ADD);
  double c;
  quill_value *u = add ? split_constant(add, &c) : NULL;
  if (!u || c != 1.0)
    return NULL;
  quill_op *un = sole_def(u, opc);
  return un ? quill_op_operand(un, 0) : NULL;
}

/* f = add(erf(x / sqrt2), 1). */
static bool f_gelu_erf(quill_value *f, const quill_value *x) {
  quill_value *s = one_plus(f, QUILL_OP_ERF);
  return s && is_scaled(s, x, 0.70710678118654752);
}

/* f = add(tanh(sqrt(2/pi) * (x + 0.044715 * x^3)), 1). */
static bool f_gelu_tanh(quill_value *f, const quill_value *x) {
  quill_value *u = one_plus(f, QUILL_OP_TANH);
  if (!u)
    return false;
  product pu = product_of_value(u);
  if (!pu.ok || pu.n != 1 || !near(pu.k, 0.7978845608028654))
    return false;
  quill_op *add = sole_def(pu.leaf[0], QUILL_OP_ADD);
  if (!add)
    return false;
  for (unsigned i = 0; i < 2; i++) {
    if (quill_op_operand(add, i) != x)
      continue;
    product pc = product_of_value(quill_op_operand(add, 1 - i));
    if (pc.ok && pc.n == 3 && pc.leaf[0] == x && pc.leaf[1] == x &&
        pc.leaf[2] == x && near(pc.k, 0.044715))
      return true;
  }
  return false;
}

/* The bounds of a clip (attributes or scalar constant operands). */
static bool clip_bounds(const quill_op *clip, double *lo, double *hi) {
  *lo = quill_op_attr_number(clip, "min", -INFINITY);
  *hi = quill_op_attr_number(clip, "max", INFINITY);
  unsigned n = quill_op_num_operands(clip);
  if (n > 1 && !splat(quill_op_operand(clip, 1), lo))
    return false;
  if (n > 2 && !splat(quill_op_operand(clip, 2), hi))
    return false;
  return true;
}

/* f = clip(add(x, 3), 0, 6) (relu6). */
static bool f_hswish_clip(quill_value *f, const quill_value *x) {
  quill_op *clip = sole_def(f, QUILL_OP_CLIP);
  double lo, hi, c;
  if (!clip || !clip_bounds(clip, &lo, &hi) || lo != 0.0 || hi != 6.0)
    return false;
  quill_op *add = sole_def(quill_op_operand(clip, 0), QUILL_OP_ADD);
  return add && split_constant(add, &c) == x && c == 3.0;
}

/* f = hard_sigmoid(x) {alpha = 1/6, beta = 1/2}. */
static bool f_hswish_hsig(quill_value *f, const quill_value *x) {
  quill_op *hs = sole_def(f, QUILL_OP_HARD_SIGMOID);
  return hs && quill_op_operand(hs, 0) == x &&
         near(quill_op_attr_number(hs, "alpha", 0.2), 1.0 / 6.0) &&
         near(quill_op_attr_number(hs, "beta", 0.5), 0.5);
}

typedef struct form {
  const char *name;
  double k;
  bool (*match_f)(quill_value *f, const quill_value *x);
  quill_opcode fused;
  const char *approximate; /* gelu's attribute, or NULL */
} form;

static const form forms[] = {
    [FORM_GELU_ERF] = {"gelu (erf)", 0.5, f_gelu_erf, QUILL_OP_GELU, NULL},
    [FORM_GELU_TANH] = {"gelu (tanh)", 0.5, f_gelu_tanh, QUILL_OP_GELU, "tanh"},
    [FORM_HSWISH_CLIP] = {"hard_swish (relu6)", 1.0 / 6.0, f_hswish_clip,
                          QUILL_OP_HARD_SWISH, NULL},
    [FORM_HSWISH_HSIG] = {"hard_swish (hard_sigmoid)", 1.0, f_hswish_hsig,
                          QUILL_OP_HARD_SWISH, NULL},
};

/* Replace root by a new op (one result of root's type) named like root. */
static quill_match_result replace_root(quill_rewriter *rw, quill_op *root,
                                       quill_opcode opc, unsigned nops,
                                       quill_value *const *ops, unsigned nattrs,
                                       const quill_named_attr *attrs) {
  quill_value *old = quill_op_result(root, 0);
  quill_type *rt = quill_value_type(old);
  quill_op *nop = quill_rewriter_create_op(rw, opc, nops, ops, 1, &rt, nattrs,
                                           attrs, quill_op_loc(root));
  if (!nop)
    return quill_rewriter_fail(rw, root, "out of memory");
  quill_value *res = quill_op_result(nop, 0);
  if (quill_value_name(old))
    (void)quill_value_set_name(res, quill_value_name(old)); /* cosmetic */
  quill_rewriter_replace_op(rw, root, &res);
  return QUILL_MATCH_SUCCESS;
}

static quill_match_result match_product(const quill_pattern *pat,
                                        quill_rewriter *rw, quill_op *root) {
  fuse_stats *stats = (fuse_stats *)pat->data;
  quill_value *y = quill_op_result(root, 0);
  if (!is_float_value(y))
    return quill_rewriter_fail(rw, root, "not a float op");
  product p = product_of_op(root);
  if (!p.ok || p.n != 2)
    return quill_rewriter_fail(rw, root, "not a product of two non-constant "
                                         "factors and constants");
  for (unsigned i = 0; i < 2; i++) {
    quill_value *x = p.leaf[i], *f = p.leaf[1 - i];
    if (quill_value_type(x) != quill_value_type(y))
      continue;
    for (size_t fi = 0; fi < sizeof forms / sizeof forms[0]; fi++) {
      const form *fm = &forms[fi];
      if (!near(p.k, fm->k) || !fm->match_f(f, x))
        continue;
      quill_context *ctx = quill_rewriter_context(rw);
      quill_named_attr a = {0};
      if (fm->approximate) {
        a.name = quill_ident_get(ctx, "approximate");
        a.attr = quill_attr_string(ctx, fm->approximate,
                                   strlen(fm->approximate));
        if (!a.name || !a.attr)
          return quill_rewriter_fail(rw, root, "out of memory");
      }
      quill_match_result r = replace_root(rw, root, fm->fused, 1, &x,
                                          fm->approximate ? 1 : 0, &a);
      if (r == QUILL_MATCH_SUCCESS) {
        if (fm->fused == QUILL_OP_GELU)
          stats->gelu++;
        else
          stats->hard_swish++;
      }
      return r;
    }
  }
  return quill_rewriter_fail(rw, root, "no gelu / hard_swish form matches "
                                       "(factor %g)",
                             p.k);
}

/* ---- layer norm ----------------------------------------------------------------- */

/* The first reduced axis of a keepdims reduce_mean over trailing dims
 * [a, rank) of its operand, else -1. */
static int trailing_mean_axis(const quill_op *mean) {
  quill_type *t = quill_value_type(quill_op_operand(mean, 0));
  unsigned rank = quill_type_rank(t);
  if (!quill_op_attr_int(mean, "keepdims", 1) || rank == 0)
    return -1;
  int64_t axes[QUILL_MAX_RANK];
  int64_t n = quill_op_attr_ints(mean, "axes", axes, QUILL_MAX_RANK);
  if (n < 0) /* no axes: every dim */
    return quill_op_attr_int(mean, "noop_with_empty_axes", 0) ? -1 : 0;
  bool seen[QUILL_MAX_RANK] = {false};
  unsigned first = rank;
  for (int64_t i = 0; i < n; i++) {
    unsigned a;
    if (!quill_shape_norm_axis(axes[i], rank, &a) || seen[a])
      return -1;
    seen[a] = true;
    first = a < first ? a : first;
  }
  if (n == 0 || (unsigned)n != rank - first)
    return -1;
  return (int)first;
}

/* The affine parameter c (a float constant of x's element type) as an
 * operand of layer_norm over the normalized shape `norm`: c itself, a copy
 * without leading 1 dims, or NULL if it does not broadcast to `norm`. */
static const quill_attr *affine_param(quill_context *ctx, const quill_value *c,
                                      const quill_type *xt,
                                      const quill_shape *norm) {
  const quill_attr *a = float_constant(c);
  if (!a || quill_type_elem(quill_attr_dense_type(a)) != quill_type_elem(xt))
    return NULL;
  quill_type *t = quill_attr_dense_type(a);
  unsigned r = quill_type_rank(t), lead = 0;
  while (r - lead > norm->rank && quill_type_dim(t, lead) == 1)
    lead++;
  quill_shape s;
  quill_shape_set(&s, r - lead, quill_type_dims(t) + lead);
  if (!quill_shape_broadcastable_to(&s, norm, NULL))
    return NULL;
  if (!lead || !ctx)
    return a;
  quill_type *nt = quill_shape_type(ctx, &s, quill_type_elem(t));
  return nt ? quill_attr_dense(ctx, nt, quill_attr_dense_data(a),
                               quill_attr_dense_size(a))
            : NULL;
}

/* The normalized shape of a layer_norm over x.dims[axis:]. */
static void norm_shape(const quill_value *x, int axis, quill_shape *out) {
  quill_type *t = quill_value_type(x);
  quill_shape_set(out, quill_type_rank(t) - (unsigned)axis,
                  quill_type_dims(t) + axis);
}

/* The decomposed normalization (d - mean) / sqrt(var + eps) rooted at div:
 * x, the axis and epsilon; NULL with *why set if it is not one. */
static quill_value *match_normalize(const quill_op *div, int *axis,
                                    double *eps, const char **why) {
  quill_value *d = quill_op_operand(div, 0);
  quill_op *sq = sole_def(quill_op_operand(div, 1), QUILL_OP_SQRT);
  quill_op *ae = sq ? sole_def(quill_op_operand(sq, 0), QUILL_OP_ADD) : NULL;
  quill_value *v = ae ? split_constant(ae, eps) : NULL;
  quill_op *var = v ? sole_def(v, QUILL_OP_REDUCE_MEAN) : NULL;
  *why = "the divisor is not sqrt(reduce_mean(..) + eps) of single-use ops";
  if (!var)
    return NULL;
  quill_value *pv = quill_op_operand(var, 0);
  quill_op *sqr = sole_def(pv, QUILL_OP_POW);
  double e;
  unsigned d_uses;
  if (sqr && quill_op_operand(sqr, 0) == d &&
      splat(quill_op_operand(sqr, 1), &e) && e == 2.0)
    d_uses = 2;
  else if ((sqr = sole_def(pv, QUILL_OP_MUL)) &&
           quill_op_operand(sqr, 0) == d && quill_op_operand(sqr, 1) == d)
    d_uses = 3;
  else {
    *why = "the variance is not reduce_mean(pow(d, 2)) or of mul(d, d)";
    return NULL;
  }
  quill_op *sub = quill_value_def(d);
  quill_op *mean = NULL;
  if (sub && quill_op_opcode(sub) == QUILL_OP_SUB &&
      quill_value_num_uses(d) == d_uses)
    mean = sole_def(quill_op_operand(sub, 1), QUILL_OP_REDUCE_MEAN);
  quill_value *x = sub ? quill_op_operand(sub, 0) : NULL;
  if (!mean || quill_op_operand(mean, 0) != x) {
    *why = "the numerator is not x - reduce_mean(x), used only here";
    return NULL;
  }
  *axis = trailing_mean_axis(mean);
  if (*axis < 0 || trailing_mean_axis(var) != *axis ||
      !quill_type_has_static_shape(quill_value_type(x))) {
    *why = "the means are not over the same trailing dims of a static shape";
    return NULL;
  }
  if (!is_float_value(x) || quill_value_type(x) != quill_value_type(d) ||
      !(*eps >= 0) || !isfinite(*eps)) {
    *why = "not a float normalization with a finite epsilon";
    return NULL;
  }
  return x;
}

/* Whether op is an affine step (mul by / add of a constant) the layer norm
 * of `x` over `norm` can absorb; its non-constant operand in *in. */
static bool affine_step(const quill_op *op, quill_opcode opc,
                        const quill_value *x, const quill_shape *norm,
                        quill_value **in, const quill_value **c) {
  if (quill_op_opcode(op) != opc)
    return false;
  for (unsigned i = 0; i < 2; i++) {
    quill_value *o = quill_op_operand(op, 1 - i);
    if (!quill_value_constant(quill_op_operand(op, i)) &&
        affine_param(NULL, o, quill_value_type(x), norm)) {
      *in = quill_op_operand(op, i);
      *c = o;
      return true;
    }
  }
  return false;
}

/* The one user of v if it is an affine step of opcode opc. */
static bool extends(const quill_value *v, quill_opcode opc,
                    const quill_value *x, const quill_shape *norm) {
  if (!quill_value_has_one_use(v))
    return false;
  quill_value *in;
  const quill_value *c;
  return affine_step(quill_use_user(quill_value_first_use(v)), opc, x, norm,
                     &in, &c);
}

static quill_match_result match_layer_norm(const quill_pattern *pat,
                                           quill_rewriter *rw, quill_op *root) {
  quill_context *ctx = quill_rewriter_context(rw);
  quill_value *y = quill_op_result(root, 0);
  const quill_value *beta = NULL, *gamma = NULL;
  quill_op *op = root;
  /* walk down: [add beta] [mul gamma] div */
  quill_opcode opc = quill_op_opcode(root);
  if (opc != QUILL_OP_DIV) {
    quill_value *in = NULL;
    for (unsigned i = 0; i < 2 && !in; i++)
      if (!quill_value_constant(quill_op_operand(op, i)) &&
          float_constant(quill_op_operand(op, 1 - i)))
        in = quill_op_operand(op, i);
    if (!in)
      return quill_rewriter_fail(rw, root, "no constant affine operand");
    *(opc == QUILL_OP_ADD ? &beta : &gamma) =
        quill_op_operand(op, quill_op_operand(op, 0) == in);
    op = NULL;
    if (opc == QUILL_OP_ADD && (op = sole_def(in, QUILL_OP_MUL))) {
      in = NULL;
      for (unsigned i = 0; i < 2 && !in; i++)
        if (!quill_value_constant(quill_op_operand(op, i)) &&
            float_constant(quill_op_operand(op, 1 - i)))
          in = quill_op_operand(op, i);
      if (!in)
        return quill_rewriter_fail(rw, root, "the mul has no constant");
      gamma = quill_op_operand(op, quill_op_operand(op, 0) == in);
    }
    op = sole_def(in, QUILL_OP_DIV);
    if (!op)
      return quill_rewriter_fail(rw, root, "no single-use div below");
  }
  int axis;
  double eps;
  const char *why;
  quill_value *x = match_normalize(op, &axis, &eps, &why);
  if (!x)
    return quill_rewriter_fail(rw, root, "%s", why);
  if (quill_value_type(y) != quill_value_type(x))
    return quill_rewriter_fail(rw, root, "the result type is not x's");
  quill_shape norm;
  norm_shape(x, axis, &norm);
  /* defer to a user that extends the chain */
  if ((opc == QUILL_OP_DIV && extends(y, QUILL_OP_MUL, x, &norm)) ||
      (opc != QUILL_OP_ADD && extends(y, QUILL_OP_ADD, x, &norm)))
    return quill_rewriter_fail(rw, root, "its user extends the layer norm");
  quill_type *xt = quill_value_type(x);
  const quill_attr *ga = NULL, *ba = NULL;
  if (gamma && !(ga = affine_param(ctx, gamma, xt, &norm)))
    return quill_rewriter_fail(rw, root, "gamma does not broadcast to the "
                                         "normalized shape");
  if (beta && !(ba = affine_param(ctx, beta, xt, &norm)))
    return quill_rewriter_fail(rw, root, "beta does not broadcast to the "
                                         "normalized shape");
  if (!ga) { /* ones of the normalized shape */
    quill_tensor t;
    quill_type *nt = quill_shape_type(ctx, &norm, quill_type_elem(xt));
    if (nt && quill_tensor_alloc(ctx, nt, &t) == QUILL_OK) {
      for (size_t i = 0; i < quill_tensor_num_elements(&t); i++)
        quill_tensor_set_f64(&t, i, 1.0);
      ga = quill_tensor_to_attr(ctx, &t);
      quill_tensor_free(ctx, &t);
    }
  }
  quill_named_attr attrs[2] = {
      {quill_ident_get(ctx, "axis"),
       quill_attr_int(ctx, (int64_t)axis - (int64_t)quill_type_rank(xt))},
      {quill_ident_get(ctx, "epsilon"), quill_attr_float(ctx, eps)}};
  if (!ga || (beta && !ba) || !attrs[0].name || !attrs[0].attr ||
      !attrs[1].name || !attrs[1].attr)
    return quill_rewriter_fail(rw, root, "out of memory");
  quill_loc loc = quill_op_loc(root);
  /* the model's own constants where they fit unchanged (their names) */
  quill_value *ops[3] = {
      x,
      gamma && ga == float_constant(gamma)
          ? (quill_value *)gamma
          : quill_rewriter_create_constant(rw, ga, loc),
      beta && ba == float_constant(beta)
          ? (quill_value *)beta
          : ba ? quill_rewriter_create_constant(rw, ba, loc) : NULL};
  if (!ops[1] || (ba && !ops[2]))
    return quill_rewriter_fail(rw, root, "out of memory");
  quill_match_result r =
      replace_root(rw, root, QUILL_OP_LAYER_NORM, ba ? 3 : 2, ops, 2, attrs);
  if (r == QUILL_MATCH_SUCCESS)
    ((fuse_stats *)pat->data)->layer_norm++;
  return r;
}

/* ---- linear ----------------------------------------------------------------------- */

/* add(matmul(x, w), b) with w a float constant [K, N] and b a float
 * constant of N values -> gemm(x as [rows, K], w, b as [N]) reshaped back. */
static quill_match_result match_linear(const quill_pattern *pat,
                                       quill_rewriter *rw, quill_op *root) {
  quill_context *ctx = quill_rewriter_context(rw);
  quill_value *y = quill_op_result(root, 0);
  if (!is_float_value(y))
    return quill_rewriter_fail(rw, root, "not a float op");
  quill_op *mm = NULL;
  const quill_attr *ba = NULL;
  for (unsigned i = 0; i < 2 && !mm; i++) {
    mm = sole_def(quill_op_operand(root, i), QUILL_OP_MATMUL);
    ba = mm ? float_constant(quill_op_operand(root, 1 - i)) : NULL;
    if (!ba)
      mm = NULL;
  }
  if (!mm)
    return quill_rewriter_fail(rw, root, "not a single-use matmul plus a "
                                         "constant");
  quill_value *x = quill_op_operand(mm, 0), *w = quill_op_operand(mm, 1);
  quill_type *xt = quill_value_type(x), *yt = quill_value_type(y);
  const quill_attr *wa = float_constant(w);
  unsigned rank = quill_type_rank(xt);
  if (!wa || quill_type_rank(quill_value_type(w)) != 2 || rank < 2 ||
      !is_float_value(x) || quill_value_type(quill_op_result(mm, 0)) != yt ||
      quill_type_elem(quill_value_type(w)) != quill_type_elem(xt) ||
      quill_type_elem(quill_attr_dense_type(ba)) != quill_type_elem(xt))
    return quill_rewriter_fail(rw, root, "not x [.., M, K] times a constant "
                                         "[K, N] of x's element type");
  int64_t K = quill_type_dim(quill_value_type(w), 0);
  int64_t N = quill_type_dim(quill_value_type(w), 1);
  quill_type *bt = quill_attr_dense_type(ba);
  unsigned br = quill_type_rank(bt);
  bool b_ok = br >= 1 && quill_type_dim(bt, br - 1) == N;
  for (unsigned d = 0; b_ok && d + 1 < br; d++)
    b_ok = quill_type_dim(bt, d) == 1;
  if (!b_ok)
    return quill_rewriter_fail(rw, root, "the constant is not a bias of N "
                                         "values");
  int64_t rows = 1;
  for (unsigned d = 0; d + 1 < rank; d++) {
    int64_t v = quill_type_dim(xt, d);
    if (v == QUILL_DIM_DYNAMIC)
      return quill_rewriter_fail(rw, root, "dynamic dims");
    rows *= v;
  }
  quill_type *elem = quill_type_elem(xt);
  int64_t x2d[2] = {rows, K}, g2d[2] = {rows, N};
  quill_type *x2t = quill_type_tensor(ctx, elem, 2, x2d);
  quill_type *g2t = quill_type_tensor(ctx, elem, 2, g2d);
  quill_type *b1t = quill_type_tensor(ctx, elem, 1, &N);
  const quill_attr *b1 =
      b1t ? quill_attr_dense(ctx, b1t, quill_attr_dense_data(ba),
                             (size_t)N * quill_type_elem_bytes(elem))
          : NULL;
  quill_named_attr attrs[4] = {
      {quill_ident_get(ctx, "alpha"), quill_attr_float(ctx, 1.0)},
      {quill_ident_get(ctx, "beta"), quill_attr_float(ctx, 1.0)},
      {quill_ident_get(ctx, "trans_a"), quill_attr_int(ctx, 0)},
      {quill_ident_get(ctx, "trans_b"), quill_attr_int(ctx, 0)}};
  for (unsigned i = 0; i < 4; i++)
    if (!attrs[i].name || !attrs[i].attr)
      b1 = NULL;
  if (!x2t || !g2t || !b1)
    return quill_rewriter_fail(rw, root, "out of memory");
  quill_loc loc = quill_op_loc(root);
  quill_value *bv = quill_rewriter_create_constant(rw, b1, loc);
  quill_op *rx = rank > 2 ? quill_rewriter_create_op(rw, QUILL_OP_RESHAPE, 1,
                                                     &x, 1, &x2t, 0, NULL,
                                                     quill_op_loc(mm))
                          : NULL;
  if (!bv || (rank > 2 && !rx))
    return quill_rewriter_fail(rw, root, "out of memory");
  quill_value *ops[3] = {rx ? quill_op_result(rx, 0) : x, w, bv};
  quill_match_result r;
  if (rank == 2) {
    r = replace_root(rw, root, QUILL_OP_GEMM, 3, ops, 4, attrs);
  } else {
    quill_op *g = quill_rewriter_create_op(rw, QUILL_OP_GEMM, 3, ops, 1, &g2t,
                                           4, attrs, quill_op_loc(mm));
    if (!g)
      return quill_rewriter_fail(rw, root, "out of memory");
    quill_value *gv = quill_op_result(g, 0);
    r = replace_root(rw, root, QUILL_OP_RESHAPE, 1, &gv, 0, NULL);
  }
  if (r == QUILL_MATCH_SUCCESS)
    ((fuse_stats *)pat->data)->linear++;
  return r;
}

/* ---- the pass ------------------------------------------------------------------- */

static quill_status run(quill_pass_state *ps, quill_module *m) {
  quill_context *ctx = quill_pass_context(ps);
  fuse_stats stats = {0, 0, 0, 0};
  const quill_pattern patterns[] = {
      {"layer-norm", QUILL_OP_ADD, 2, match_layer_norm, &stats},
      {"layer-norm", QUILL_OP_MUL, 2, match_layer_norm, &stats},
      {"layer-norm", QUILL_OP_DIV, 2, match_layer_norm, &stats},
      {"gelu-hard-swish", QUILL_OP_MUL, 1, match_product, &stats},
      {"gelu-hard-swish", QUILL_OP_DIV, 1, match_product, &stats},
      {"linear", QUILL_OP_ADD, 1, match_linear, &stats},
  };
  quill_pattern_set *set = quill_pattern_set_create(ctx);
  if (!set)
    return QUILL_ERR_NOMEM;
  quill_status st = QUILL_OK;
  for (size_t i = 0; !st && i < sizeof patterns / sizeof patterns[0]; i++)
    st = quill_pattern_set_add(set, &patterns[i]);
  quill_greedy_config cfg = {10, true, "fuse-patterns"};
  if (!st)
    st = quill_apply_patterns_module(m, set, &cfg, NULL, NULL);
  quill_pattern_set_destroy(set);
  if (stats.gelu)
    quill_pass_stat_add(ps, "num-gelu", stats.gelu);
  if (stats.hard_swish)
    quill_pass_stat_add(ps, "num-hard-swish", stats.hard_swish);
  if (stats.layer_norm)
    quill_pass_stat_add(ps, "num-layer-norm", stats.layer_norm);
  if (stats.linear)
    quill_pass_stat_add(ps, "num-linear", stats.linear);
  if (!st && !stats.gelu && !stats.hard_swish && !stats.layer_norm &&
      !stats.linear)
    quill_pass_mark_unchanged(ps);
  return st;
}

const quill_pass quill_pass_fuse_patterns = {
    .name = "fuse-patterns",
    .summary = "Replace the decomposed forms of gelu, hard_swish, "
               "layer_norm and linear layers (matmul + bias) by the single "
               "op",
    .run = run,
    .requires = 0,
    .establishes = 0,
    .preserves = 0,
    .options = NULL,
};
