/*
 * ops_rnn.c - import of ONNX's recurrent ops RNN, GRU and LSTM, unrolled
 * over the (static) sequence into existing Quill ops, so that the
 * interpreter, the LLVM target, quantization and the exporters handle them
 * without recurrent ops of their own.
 *
 * For each direction d (forward, reverse, or both), with G gates (RNN 1,
 * GRU 3, LSTM 4) of `hidden` units each:
 *
 *   W[d] [G*hid, in], R[d] [G*hid, hid]     slices of W and R (folded when
 *   xb = Wb[d] + Rb[d] (GRU: not Rb_h        constants: they stay weights)
 *        when linear_before_reset)
 *   XP = gemm(reshape(X, [seq*batch, in]), W[d]^T, xb)    [seq*batch, G*hid]
 *   xp_0 .. xp_{seq-1} = slices of XP's rows              [batch, G*hid] each
 *
 * then one step per time t (t descending for the reverse direction), from
 * H = initial_h[d] and C = initial_c[d] (absent or all-zero: no term):
 *
 *   RNN   H = f(xp_t + H R^T)
 *   LSTM  iof, c = slices(xp_t + H R^T)         (+ P_i*C, P_f*C, P_o*C'
 *         i, o, f = slices(f(iof))               on each gate with
 *         C' = f*C + i*g(c),  H = o * h(C')      peepholes; f, g, h are
 *                                                the `activations`)
 *   GRU   zr, xh = slices(xp_t)
 *         z, r = slices(f(zr + H R_zr^T))
 *         h~ = g(xh + (r*H) R_h^T)          (linear_before_reset = 0)
 *         h~ = g(xh + r*(H R_h^T + Rb_h))   (linear_before_reset = 1)
 *         H  = h~ + z*(H - h~)               (= (1-z)*h~ + z*H)
 *
 * Slices rather than split ops cut the gates apart: the quantizer keeps a
 * split (several results) float, a slice shares its operand's parameters.
 * The outputs are concatenations of the steps: Y [seq, dirs, batch, hid]
 * (only when used), Y_h and Y_c [dirs, batch, hid]; layout 1 (batch first)
 * transposes X in and the outputs out.
 *
 * With quill_onnx_options.rnn_ops, an LSTM node that Quill's `lstm` op
 * states (one forward layer from zero states, the default activations, no
 * peepholes, Y_c unused) becomes that one op instead (Y its result
 * reshaped, Y_h its last step), for the TFLite target's
 * UNIDIRECTIONAL_SEQUENCE_LSTM; any other node is unrolled as above.
 *
 * With quill_onnx_options.rnn_float (a backend's `rnn_float`, x86-vnni's:
 * the node stays float, as onnxruntime's quantize_static leaves it), every
 * op of an unrolled node, its gemms included, carries {keep_float = true},
 * which insert-observers honours. The LLVM target's float gemm sums in the
 * interpreter's order (targets/llvm/lower_fmatmul.c), so the model still
 * compiles bit-exact.
 *
 * Not supported, each with an error naming the node: sequence_lens other
 * than the full length for every batch entry, `clip`, LSTM's
 * `input_forget`, activations other than Sigmoid, Tanh, Relu, HardSigmoid
 * and LeakyRelu, dynamic dims, and more than ONNX_RNN_MAX_STEPS steps.
 */
#include <string.h>
#include <strings.h>

#include "frontends/onnx/onnx_impl.h"

/* The most time steps (over all directions) an RNN node is unrolled to. */
#define ONNX_RNN_MAX_STEPS 8192

enum { RNN_SIMPLE, RNN_GRU, RNN_LSTM };

/* One activation function of the `activations` attribute. */
typedef struct rnn_act {
  quill_opcode opc;
  double alpha, beta;
} rnn_act;

typedef struct rnn {
  onnx_importer *im;
  onnx_node n;          /* the node, marked ONNX_OPF_FOLD: weight slices of
                           constants become constants */
  int kind;             /* RNN_* */
  int64_t gates;        /* 1, 3 or 4 */
  int64_t seq, batch, in, hid;
  unsigned ndir;
  bool reverse;         /* direction == "reverse" */
  bool batch_first;     /* layout 1 */
  bool lbr;             /* GRU linear_before_reset */
  quill_type *elem;
  quill_value *h0, *c0; /* initial_h, initial_c as [dirs, batch, hid] */
  rnn_act act[2][3];    /* per direction: f, g, h */
  bool keep_float;      /* quill_onnx_options.rnn_float: mark the ops */
} rnn;

/* ---- emission helpers --------------------------------------------------- */

/* With r->keep_float, give *out's producer {keep_float = true} if it is an
 * op of this node (not a folded constant, not an operand passed through). */
static quill_status mark(rnn *r, quill_status st, quill_value **out) {
  if (st || !r->keep_float)
    return st;
  quill_op *op = quill_value_def(*out);
  if (!op || quill_op_has_flag(op, QUILL_OPF_CONSTANT) ||
      !quill_op_loc(op).name ||
      !r->n.loc.name || strcmp(quill_op_loc(op).name, r->n.loc.name) != 0 ||
      quill_op_attr(op, "keep_float"))
    return QUILL_OK;
  return quill_op_set_attr(op, "keep_float", quill_attr_bool(r->im->ctx, true));
}

static quill_status emit(rnn *r, quill_opcode opc, unsigned nops,
                         quill_value *const *ops, unsigned rank,
                         const int64_t *dims, unsigned nattrs,
                         const quill_named_attr *attrs, quill_value **out) {
  quill_shape s;
  quill_shape_set(&s, rank, dims);
  return mark(r, onnx_emit1(r->im, &r->n, opc, nops, ops,
                            onnx_type(r->im, &s, r->elem), nattrs, attrs, out),
              out);
}

/* a op b, with a's type (b broadcasts to it). */
static quill_status binary(rnn *r, quill_opcode opc, quill_value *a,
                           quill_value *b, quill_value **out) {
  quill_value *ops[2] = {a, b};
  return mark(r, onnx_emit1(r->im, &r->n, opc, 2, ops, quill_value_type(a), 0,
                            NULL, out),
              out);
}

/* x [rows, k] times w^T (w [cols, k]), plus an optional bias [cols]. */
static quill_status gemm_bt(rnn *r, quill_value *x, quill_value *w,
                            quill_value *bias, quill_value **out) {
  quill_value *ops[3] = {x, w, bias};
  int64_t d[2] = {quill_type_dim(quill_value_type(x), 0),
                  quill_type_dim(quill_value_type(w), 0)};
  quill_named_attr attrs[4] = { /* as ONNX Gemm imports */
      onnx_nattr_float(r->im, "alpha", 1.0),
      onnx_nattr_float(r->im, "beta", 1.0),
      onnx_nattr_int(r->im, "trans_a", 0),
      onnx_nattr_int(r->im, "trans_b", 1),
  };
  return emit(r, QUILL_OP_GEMM, bias ? 3 : 2, ops, 2, d, 4, attrs, out);
}

/* x[start:end] along `axis`. */
static quill_status slice(rnn *r, quill_value *x, int64_t axis, int64_t start,
                          int64_t end, quill_value **out) {
  quill_shape s;
  onnx_shape(x, &s);
  s.dims[axis] = end - start;
  int64_t step = 1; /* as ONNX Slice imports: the IR round-trips */
  quill_named_attr attrs[4] = {
      onnx_nattr_ints(r->im, "starts", 1, &start),
      onnx_nattr_ints(r->im, "ends", 1, &end),
      onnx_nattr_ints(r->im, "axes", 1, &axis),
      onnx_nattr_ints(r->im, "steps", 1, &step),
  };
  return emit(r, QUILL_OP_SLICE, 1, &x, s.rank, s.dims, 4, attrs, out);
}

/* x reshaped to dims. */
static quill_status reshape(rnn *r, quill_value *x, unsigned rank,
                            const int64_t *dims, quill_value **out) {
  quill_shape s;
  quill_shape_set(&s, rank, dims);
  return mark(r, onnx_reshape_value(r->im, &r->n, x, &s, out), out);
}

/* x cut along `axis` into `parts` equal pieces, one slice each: the
 * quantizer keeps a multi-result split float (dequantize, split, quantize)
 * while a slice stays quantized with its operand's parameters. */
static quill_status cut(rnn *r, quill_value *x, int64_t axis,
                       unsigned parts, quill_value **outs) {
  int64_t len = quill_type_dim(quill_value_type(x), (unsigned)axis) / parts;
  if (parts == 1) {
    outs[0] = x;
    return QUILL_OK;
  }
  for (unsigned i = 0; i < parts; i++)
    if (slice(r, x, axis, i * len, (i + 1) * len, &outs[i]))
      return QUILL_ERR_INVALID;
  return QUILL_OK;
}

static quill_status concat(rnn *r, unsigned k, quill_value *const *xs,
                           int64_t axis, quill_value **out) {
  if (k == 1) {
    *out = xs[0];
    return QUILL_OK;
  }
  quill_shape s, si;
  onnx_shape(xs[0], &s);
  for (unsigned i = 1; i < k; i++) {
    onnx_shape(xs[i], &si);
    s.dims[axis] += si.dims[axis];
  }
  quill_named_attr a = onnx_nattr_int(r->im, "axis", axis);
  return emit(r, QUILL_OP_CONCAT, k, xs, s.rank, s.dims, 1, &a, out);
}

static quill_status transpose(rnn *r, quill_value *x, unsigned rank,
                              const int64_t *perm, quill_value **out) {
  quill_shape s, t;
  onnx_shape(x, &s);
  t.rank = rank;
  for (unsigned i = 0; i < rank; i++)
    t.dims[i] = s.dims[perm[i]];
  quill_named_attr a = onnx_nattr_ints(r->im, "perm", rank, perm);
  return emit(r, QUILL_OP_TRANSPOSE, 1, &x, t.rank, t.dims, 1, &a, out);
}

static quill_status activate(rnn *r, const rnn_act *a, quill_value *x,
                             quill_value **out) {
  quill_named_attr attrs[2];
  unsigned na = 0;
  if (a->opc == QUILL_OP_LEAKY_RELU || a->opc == QUILL_OP_HARD_SIGMOID)
    attrs[na++] = onnx_nattr_float(r->im, "alpha", a->alpha);
  if (a->opc == QUILL_OP_HARD_SIGMOID)
    attrs[na++] = onnx_nattr_float(r->im, "beta", a->beta);
  return mark(r, onnx_emit1(r->im, &r->n, a->opc, 1, &x, quill_value_type(x),
                            na, attrs, out),
              out);
}

/* v[d] of a [dirs, ...] tensor, without the direction axis. */
static quill_status take_dir(rnn *r, quill_value *v, unsigned d,
                             quill_value **out) {
  quill_shape s;
  onnx_shape(v, &s);
  quill_value *sl;
  if (slice(r, v, 0, d, d + 1, &sl))
    return QUILL_ERR_INVALID;
  return reshape(r, sl, s.rank - 1, s.dims + 1, out);
}

/* Whether v is a constant whose elements are all zero. */
static bool is_zero_constant(const quill_value *v) {
  const quill_attr *c = quill_value_constant(v);
  if (!c)
    return false;
  int64_t cnt = quill_type_num_elements(quill_attr_dense_type(c));
  for (int64_t i = 0; i < cnt; i++)
    if (quill_attr_dense_get_f64(c, (size_t)i) != 0.0)
      return false;
  return cnt >= 0;
}

/* ---- attributes and operands -------------------------------------------- */

static const struct {
  const char *name;
  quill_opcode opc;
  double alpha, beta; /* ONNX's defaults */
  bool uses_alpha, uses_beta;
} act_names[] = {
    {"Sigmoid", QUILL_OP_SIGMOID, 0, 0, false, false},
    {"Tanh", QUILL_OP_TANH, 0, 0, false, false},
    {"Relu", QUILL_OP_RELU, 0, 0, false, false},
    {"HardSigmoid", QUILL_OP_HARD_SIGMOID, 0.2, 0.5, true, true},
    {"LeakyRelu", QUILL_OP_LEAKY_RELU, 0.01, 0, true, false},
};

/* The `activations` (with activation_alpha / activation_beta, consumed in
 * order by the functions that take them, as onnxruntime does). */
static quill_status read_activations(rnn *r) {
  static const quill_opcode dflt[3][3] = {
      {QUILL_OP_TANH},
      {QUILL_OP_SIGMOID, QUILL_OP_TANH},
      {QUILL_OP_SIGMOID, QUILL_OP_TANH, QUILL_OP_TANH}};
  onnx_importer *im = r->im;
  const onnx_node *n = &r->n;
  unsigned per = r->kind == RNN_SIMPLE ? 1 : r->kind == RNN_GRU ? 2 : 3;
  for (unsigned d = 0; d < 2; d++)
    for (unsigned i = 0; i < per; i++)
      r->act[d][i] = (rnn_act){dflt[r->kind][i], 0, 0};
  const Onnx__AttributeProto *a = onnx_attr(n, "activations");
  if (!a)
    return QUILL_OK;
  if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS)
    return onnx_error(im, n, "attribute 'activations' must be of type "
                             "strings");
  if (a->n_strings != per && a->n_strings != per * r->ndir)
    return onnx_error(im, n, "attribute 'activations' has %zu functions, "
                             "expected %u per direction",
                      a->n_strings, per);
  double alphas[16], betas[16];
  int64_t nal, nbe, ia = 0, ib = 0;
  if (onnx_attr_floats(im, n, "activation_alpha", alphas, 16, &nal) ||
      onnx_attr_floats(im, n, "activation_beta", betas, 16, &nbe))
    return QUILL_ERR_INVALID;
  for (size_t k = 0; k < a->n_strings; k++) {
    const ProtobufCBinaryData *s = &a->strings[k];
    size_t j = 0, nn = sizeof act_names / sizeof *act_names;
    while (j < nn && !(strlen(act_names[j].name) == s->len &&
                       !strncasecmp(act_names[j].name,
                                    (const char *)s->data, s->len)))
      j++;
    if (j == nn)
      return onnx_error(im, n, "activation function '%.*s' is not supported "
                               "(Sigmoid, Tanh, Relu, HardSigmoid and "
                               "LeakyRelu are)",
                        (int)(s->len > 64 ? 64 : s->len),
                        (const char *)s->data);
    rnn_act act = {act_names[j].opc, act_names[j].alpha, act_names[j].beta};
    if (act_names[j].uses_alpha && ia < nal)
      act.alpha = alphas[ia++];
    if (act_names[j].uses_beta && ib < nbe)
      act.beta = betas[ib++];
    r->act[k / per][k % per] = act;
    if (a->n_strings == per)
      r->act[1][k] = act;
  }
  return QUILL_OK;
}

/* Check that operand i (if present) has shape dims[0..rank). */
static quill_status check_operand(rnn *r, unsigned i, const char *what,
                                  unsigned rank, const int64_t *dims) {
  quill_value *v = onnx_opt_input(&r->n, i);
  if (!v)
    return QUILL_OK;
  quill_shape s, want;
  onnx_shape(v, &s);
  quill_shape_set(&want, rank, dims);
  bool ok = s.rank == rank;
  for (unsigned k = 0; ok && k < rank; k++)
    ok = s.dims[k] == dims[k];
  if (ok && quill_type_elem(quill_value_type(v)) == r->elem)
    return QUILL_OK;
  quill_strbuf sb;
  quill_strbuf_init(&sb, r->im->ctx);
  quill_type_print(quill_value_type(v), &sb);
  quill_strbuf_puts(&sb, ", expected ");
  quill_type_print(onnx_type(r->im, &want, r->elem), &sb);
  quill_status st = onnx_error(r->im, &r->n, "input #%u (%s) has type %s", i,
                               what, quill_strbuf_str(&sb));
  quill_strbuf_free(&sb);
  return st;
}

/* sequence_lens (a constant) must give every batch entry the full length. */
static quill_status check_seq_lens(rnn *r) {
  size_t nb = (size_t)r->batch;
  int64_t *lens = quill_calloc(r->im->ctx, nb, sizeof *lens), nl, bad = -1;
  if (!lens)
    return QUILL_ERR_NOMEM;
  quill_status st = onnx_const_ints(r->im, &r->n, 4, lens, nb, &nl);
  for (int64_t b = 0; !st && b < nl && bad < 0; b++)
    if (lens[b] != r->seq)
      bad = b;
  if (!st && nl != r->batch)
    st = onnx_error(r->im, &r->n, "input sequence_lens has %lld entries for "
                                  "a batch of %lld",
                    (long long)nl, (long long)r->batch);
  else if (!st && bad >= 0)
    st = onnx_error(r->im, &r->n, "sequence_lens[%lld] = %lld: only the "
                                  "full length (%lld) is supported",
                    (long long)bad, (long long)lens[bad], (long long)r->seq);
  quill_free(r->im->ctx, lens, nb * sizeof *lens);
  return st;
}

/* Attributes, shapes and sequence_lens. */
static quill_status read_node(rnn *r) {
  onnx_importer *im = r->im;
  const onnx_node *n = &r->n;
  const char *dir;
  int64_t hs, layout = 0, lbr = 0, input_forget = 0;
  if (onnx_attr_string(im, n, "direction", "forward", &dir) ||
      onnx_attr_int(im, n, "hidden_size", -1, &hs) ||
      onnx_attr_int(im, n, "layout", 0, &layout) ||
      onnx_attr_int(im, n, "linear_before_reset", 0, &lbr) ||
      onnx_attr_int(im, n, "input_forget", 0, &input_forget))
    return QUILL_ERR_INVALID;
  if (!strcmp(dir, "forward") || !strcmp(dir, "reverse"))
    r->ndir = 1;
  else if (!strcmp(dir, "bidirectional"))
    r->ndir = 2;
  else
    return onnx_error(im, n, "unknown direction \"%s\"", dir);
  r->reverse = !strcmp(dir, "reverse");
  r->batch_first = layout == 1;
  r->lbr = lbr != 0;
  if (onnx_attr(n, "clip"))
    return onnx_error(im, n, "attribute 'clip' (cell clipping) is not "
                             "supported");
  if (input_forget)
    return onnx_error(im, n, "attribute 'input_forget' (coupled input and "
                             "forget gates) is not supported");
  if (layout != 0 && layout != 1)
    return onnx_error(im, n, "attribute 'layout' must be 0 or 1, got %lld",
                      (long long)layout);
  quill_value *x, *w, *rr;
  if (onnx_input(im, n, 0, &x) || onnx_input(im, n, 1, &w) ||
      onnx_input(im, n, 2, &rr))
    return QUILL_ERR_INVALID;
  quill_shape xs, rs;
  onnx_shape(x, &xs);
  onnx_shape(rr, &rs);
  r->elem = onnx_elem(x);
  if (!quill_type_is_float(r->elem))
    return onnx_error(im, n, "input X must be a float tensor");
  if (xs.rank != 3 || rs.rank != 3)
    return onnx_error(im, n, "inputs X and R must have rank 3, got ranks %u "
                             "and %u",
                      xs.rank, rs.rank);
  r->seq = xs.dims[layout ? 1 : 0];
  r->batch = xs.dims[layout ? 0 : 1];
  r->in = xs.dims[2];
  r->hid = rs.dims[2];
  if (r->seq < 1 || r->batch < 1 || r->in < 1 || r->hid < 1)
    return onnx_error(im, n, "X [%lld, %lld, %lld] and the hidden size %lld "
                             "must be static and not empty (give "
                             "--input-shape)",
                      (long long)xs.dims[0], (long long)xs.dims[1],
                      (long long)xs.dims[2], (long long)r->hid);
  if (hs >= 0 && hs != r->hid)
    return onnx_error(im, n, "attribute 'hidden_size' (%lld) does not match "
                             "R's last dim (%lld)",
                      (long long)hs, (long long)r->hid);
  if (r->seq * r->ndir > ONNX_RNN_MAX_STEPS)
    return onnx_error(im, n, "a sequence of %lld steps is not supported (it "
                             "is unrolled: at most %d)",
                      (long long)r->seq, ONNX_RNN_MAX_STEPS / (int)r->ndir);
  int64_t G = r->gates, H = r->hid, nd = r->ndir;
  int64_t wd[3] = {nd, G * H, r->in}, rd[3] = {nd, G * H, H};
  int64_t bd[2] = {nd, 2 * G * H}, hd[3] = {nd, r->batch, H};
  if (r->batch_first)
    hd[0] = r->batch, hd[1] = nd;
  int64_t pd[2] = {nd, 3 * H};
  if (check_operand(r, 1, "W", 3, wd) || check_operand(r, 2, "R", 3, rd) ||
      check_operand(r, 3, "B", 2, bd) ||
      check_operand(r, 5, "initial_h", 3, hd) ||
      (r->kind == RNN_LSTM && (check_operand(r, 6, "initial_c", 3, hd) ||
                               check_operand(r, 7, "P", 2, pd))))
    return QUILL_ERR_INVALID;
  if (onnx_opt_input(n, 4) && check_seq_lens(r))
    return QUILL_ERR_INVALID;
  if (onnx_check_unused_outputs(im, n, r->kind == RNN_LSTM ? 3 : 2))
    return QUILL_ERR_INVALID;
  return read_activations(r);
}

/* ---- one time step ------------------------------------------------------- */

/* The recurrent weights and state of one direction. */
typedef struct rnn_dir {
  const rnn_act *act;
  quill_value *R;          /* [G*hid, hid] (GRU: the z and r rows) */
  quill_value *Rh, *Rbh;   /* GRU: R's h rows, Rb_h (NULL: no B) */
  quill_value *P[3];       /* LSTM peepholes i, o, f (NULL: none) */
  quill_value *H, *C;      /* the state; NULL = zeros */
} rnn_dir;

static quill_status step_rnn(rnn *r, rnn_dir *d, quill_value *xp) {
  quill_value *pre = xp, *hr;
  if (d->H && (gemm_bt(r, d->H, d->R, NULL, &hr) ||
               binary(r, QUILL_OP_ADD, xp, hr, &pre)))
    return QUILL_ERR_INVALID;
  return activate(r, &d->act[0], pre, &d->H);
}

/* pre + P * C when there is a peephole and a state. */
static quill_status peephole(rnn *r, quill_value *p, quill_value *c,
                             quill_value **pre) {
  quill_value *pc;
  if (!p || !c)
    return QUILL_OK;
  return binary(r, QUILL_OP_MUL, c, p, &pc) ||
         binary(r, QUILL_OP_ADD, *pre, pc, pre);
}

static quill_status step_lstm(rnn *r, rnn_dir *d, quill_value *xp) {
  int64_t H = r->hid;
  quill_value *pre = xp, *hr, *g[4], *iof, *cn, *ig, *fc, *hc;
  bool peep = d->P[0] != NULL;
  if (d->H && (gemm_bt(r, d->H, d->R, NULL, &hr) ||
               binary(r, QUILL_OP_ADD, xp, hr, &pre)))
    return QUILL_ERR_INVALID;
  /* g = i, o, f, c; without peepholes, i, o and f (adjacent) go through
   * f() as one tensor (one activation instead of three) */
  if (!peep && (slice(r, pre, 1, 0, 3 * H, &iof) ||
                slice(r, pre, 1, 3 * H, 4 * H, &g[3]) ||
                activate(r, &d->act[0], iof, &iof) ||
                slice(r, iof, 1, 0, H, &g[0]) ||
                slice(r, iof, 1, H, 2 * H, &g[1]) ||
                (d->C && slice(r, iof, 1, 2 * H, 3 * H, &g[2]))))
    return QUILL_ERR_INVALID;
  if (peep && (cut(r, pre, 1, 4, g) || peephole(r, d->P[0], d->C, &g[0]) ||
               peephole(r, d->P[2], d->C, &g[2]) ||
               activate(r, &d->act[0], g[0], &g[0]) ||
               activate(r, &d->act[0], g[2], &g[2])))
    return QUILL_ERR_INVALID;
  if (activate(r, &d->act[1], g[3], &g[3]) ||
      binary(r, QUILL_OP_MUL, g[0], g[3], &ig))
    return QUILL_ERR_INVALID;
  cn = ig;
  if (d->C && (binary(r, QUILL_OP_MUL, g[2], d->C, &fc) ||
               binary(r, QUILL_OP_ADD, fc, ig, &cn)))
    return QUILL_ERR_INVALID;
  if (peep && (peephole(r, d->P[1], cn, &g[1]) ||
               activate(r, &d->act[0], g[1], &g[1])))
    return QUILL_ERR_INVALID;
  if (activate(r, &d->act[2], cn, &hc) ||
      binary(r, QUILL_OP_MUL, g[1], hc, &d->H))
    return QUILL_ERR_INVALID;
  d->C = cn;
  return QUILL_OK;
}

static quill_status step_gru(rnn *r, rnn_dir *d, quill_value *xp) {
  quill_value *x3[2], *zr, *hr, *zrs[2], *hh = NULL, *pre, *t, *ht;
  int64_t H = r->hid;
  /* x3 = the z, r part and the h part of xp */
  if (slice(r, xp, 1, 0, 2 * H, &x3[0]) ||
      slice(r, xp, 1, 2 * H, 3 * H, &x3[1]))
    return QUILL_ERR_INVALID;
  zr = x3[0];
  if (d->H && (gemm_bt(r, d->H, d->R, NULL, &hr) ||
               binary(r, QUILL_OP_ADD, zr, hr, &zr)))
    return QUILL_ERR_INVALID;
  if (activate(r, &d->act[0], zr, &zr) || cut(r, zr, 1, 2, zrs))
    return QUILL_ERR_INVALID;
  if (!r->lbr && d->H) {
    if (binary(r, QUILL_OP_MUL, zrs[1], d->H, &t) ||
        gemm_bt(r, t, d->Rh, NULL, &hh))
      return QUILL_ERR_INVALID;
  } else if (r->lbr) {
    if (d->H && gemm_bt(r, d->H, d->Rh, d->Rbh, &t))
      return QUILL_ERR_INVALID;
    quill_value *lin = d->H ? t : d->Rbh;
    if (lin && binary(r, QUILL_OP_MUL, zrs[1], lin, &hh))
      return QUILL_ERR_INVALID;
  }
  pre = x3[1];
  if (hh && binary(r, QUILL_OP_ADD, pre, hh, &pre))
    return QUILL_ERR_INVALID;
  if (activate(r, &d->act[1], pre, &ht))
    return QUILL_ERR_INVALID;
  /* H' = h~ + z*(H - h~), or h~ - z*h~ from a zero state */
  if (d->H)
    return binary(r, QUILL_OP_SUB, d->H, ht, &t) ||
           binary(r, QUILL_OP_MUL, zrs[0], t, &t) ||
           binary(r, QUILL_OP_ADD, ht, t, &d->H);
  return binary(r, QUILL_OP_MUL, zrs[0], ht, &t) ||
         binary(r, QUILL_OP_SUB, ht, t, &d->H);
}

/* ---- one direction -------------------------------------------------------- */

/* The bias added to the input projection: Wb + Rb (GRU with
 * linear_before_reset: Rb's h part stays with the recurrent product). */
static quill_status input_bias(rnn *r, quill_value *bd, rnn_dir *d,
                               quill_value **out) {
  int64_t GH = r->gates * r->hid, H = r->hid;
  quill_value *wb, *rb, *parts[2];
  if (slice(r, bd, 0, 0, GH, &wb) || slice(r, bd, 0, GH, 2 * GH, &rb))
    return QUILL_ERR_INVALID;
  if (r->kind == RNN_GRU && r->lbr && slice(r, rb, 0, 2 * H, 3 * H, &d->Rbh))
    return QUILL_ERR_INVALID;
  if (r->kind != RNN_GRU || !r->lbr)
    return binary(r, QUILL_OP_ADD, wb, rb, out);
  if (slice(r, wb, 0, 0, 2 * H, &parts[0]) ||
      slice(r, rb, 0, 0, 2 * H, &parts[1]) ||
      binary(r, QUILL_OP_ADD, parts[0], parts[1], &parts[0]) ||
      slice(r, wb, 0, 2 * H, 3 * H, &parts[1]))
    return QUILL_ERR_INVALID;
  return concat(r, 2, parts, 0, out);
}

/* Unroll direction `dir` over X2 = X as [seq*batch, in]; *y gets the steps'
 * H as [seq, 1, batch, hid] (if want_y), *yh and *yc the last H and C as
 * [1, batch, hid]. */
static quill_status run_dir(rnn *r, unsigned dir, quill_value *x2, bool want_y,
                            quill_value **y, quill_value **yh,
                            quill_value **yc) {
  const onnx_node *n = &r->n;
  int64_t H = r->hid, B = r->batch, S = r->seq;
  rnn_dir d = {.act = r->act[dir]};
  quill_value *w, *xb = NULL, *xp, *v;
  if (take_dir(r, n->in[1], dir, &w) || take_dir(r, n->in[2], dir, &d.R))
    return QUILL_ERR_INVALID;
  if (r->kind == RNN_GRU) {
    quill_value *rall = d.R;
    if (slice(r, rall, 0, 0, 2 * H, &d.R) || slice(r, rall, 0, 2 * H, 3 * H, &d.Rh))
      return QUILL_ERR_INVALID;
  }
  if ((v = onnx_opt_input(n, 3)) &&
      (take_dir(r, v, dir, &v) || input_bias(r, v, &d, &xb)))
    return QUILL_ERR_INVALID;
  if ((r->h0 && take_dir(r, r->h0, dir, &d.H)) ||
      (r->c0 && take_dir(r, r->c0, dir, &d.C)))
    return QUILL_ERR_INVALID;
  if (r->kind == RNN_LSTM && (v = onnx_opt_input(n, 7))) {
    if (take_dir(r, v, dir, &v))
      return QUILL_ERR_INVALID;
    for (int64_t k = 0; k < 3; k++)
      if (slice(r, v, 0, k * H, (k + 1) * H, &d.P[k]))
        return QUILL_ERR_INVALID;
  }
  if (d.H && is_zero_constant(d.H))
    d.H = NULL;
  if (d.C && is_zero_constant(d.C))
    d.C = NULL;
  quill_context *ctx = r->im->ctx;
  quill_value **xs = quill_calloc(ctx, (size_t)S, sizeof *xs);
  quill_value **hs = quill_calloc(ctx, (size_t)S, sizeof *hs);
  quill_status st = xs && hs ? QUILL_OK : QUILL_ERR_NOMEM;
  if (!st && (gemm_bt(r, x2, w, xb, &xp) || cut(r, xp, 0, (unsigned)S, xs)))
    st = QUILL_ERR_INVALID;
  bool rev = r->reverse || dir == 1;
  for (int64_t k = 0; !st && k < S; k++) {
    int64_t t = rev ? S - 1 - k : k;
    st = r->kind == RNN_LSTM  ? step_lstm(r, &d, xs[t])
         : r->kind == RNN_GRU ? step_gru(r, &d, xs[t])
                              : step_rnn(r, &d, xs[t]);
    hs[t] = d.H;
  }
  int64_t y4[4] = {S, 1, B, H}, h3[3] = {1, B, H};
  if (!st && want_y &&
      (concat(r, (unsigned)S, hs, 0, &v) || reshape(r, v, 4, y4, y)))
    st = QUILL_ERR_INVALID;
  if (!st && reshape(r, d.H, 3, h3, yh))
    st = QUILL_ERR_INVALID;
  if (!st && r->kind == RNN_LSTM && reshape(r, d.C, 3, h3, yc))
    st = QUILL_ERR_INVALID;
  quill_free(ctx, xs, (size_t)S * sizeof *xs);
  quill_free(ctx, hs, (size_t)S * sizeof *hs);
  return st;
}

/* ---- LSTM as one op (quill_onnx_options.rnn_ops) -------------------------- */

/* Whether node r is what Quill's lstm op states: one forward layer from
 * zero states, sigmoid gates and tanh cell input and output, no
 * peepholes, and no use of Y_c (the op yields Y; Y_h is its last step). */
static bool fits_lstm_op(rnn *r) {
  static const quill_opcode want[3] = {QUILL_OP_SIGMOID, QUILL_OP_TANH,
                                       QUILL_OP_TANH};
  onnx_importer *im = r->im;
  const onnx_node *n = &r->n;
  quill_value *h0 = onnx_opt_input(n, 5), *c0 = onnx_opt_input(n, 6);
  if (!im->opts || !im->opts->rnn_ops || r->kind != RNN_LSTM ||
      r->ndir != 1 || r->reverse || onnx_opt_input(n, 7) ||
      onnx_output_used(im, n, 2) || (h0 && !is_zero_constant(h0)) ||
      (c0 && !is_zero_constant(c0)))
    return false;
  for (unsigned i = 0; i < 3; i++)
    if (r->act[0][i].opc != want[i])
      return false;
  return true;
}

/* Node r as one lstm op on x ([seq, batch, in], time major); Y and Y_h
 * are cut from its result. */
static quill_status import_lstm_op(rnn *r, quill_value *x) {
  onnx_importer *im = r->im;
  const onnx_node *n = &r->n;
  int64_t S = r->seq, B = r->batch, H = r->hid;
  quill_value *ops[4], *y, *v;
  unsigned nops = 3;
  ops[0] = x;
  if (take_dir(r, n->in[1], 0, &ops[1]) || take_dir(r, n->in[2], 0, &ops[2]))
    return QUILL_ERR_INVALID;
  if ((v = onnx_opt_input(n, 3)) && take_dir(r, v, 0, &ops[nops++]))
    return QUILL_ERR_INVALID;
  int64_t yd[3] = {S, B, H}, y4[4] = {S, 1, B, H}, h3[3] = {1, B, H};
  static const int64_t swap01[3] = {1, 0, 2}, y_perm[4] = {2, 0, 1, 3};
  if (emit(r, QUILL_OP_LSTM, nops, ops, 3, yd, 0, NULL, &y))
    return QUILL_ERR_INVALID;
  if (onnx_output_used(im, n, 0) &&
      (reshape(r, y, 4, y4, &v) ||
       (r->batch_first && transpose(r, v, 4, y_perm, &v)) ||
       onnx_set_output(im, n, 0, v)))
    return QUILL_ERR_INVALID;
  if (onnx_output_used(im, n, 1) &&
      (slice(r, y, 0, S - 1, S, &v) || reshape(r, v, 3, h3, &v) ||
       (r->batch_first && transpose(r, v, 3, swap01, &v)) ||
       onnx_set_output(im, n, 1, v)))
    return QUILL_ERR_INVALID;
  return QUILL_OK;
}

/* ---- the node ----------------------------------------------------------- */

/* RNN, GRU, LSTM. */
quill_status onnx_import_rnn(onnx_importer *im, const onnx_node *n) {
  rnn r = {.im = im, .n = *n};
  r.n.flags |= ONNX_OPF_FOLD;
  r.kind = n->op_type[0] == 'L' ? RNN_LSTM : n->op_type[0] == 'G' ? RNN_GRU
                                                                  : RNN_SIMPLE;
  r.gates = r.kind == RNN_LSTM ? 4 : r.kind == RNN_GRU ? 3 : 1;
  if (read_node(&r))
    return QUILL_ERR_INVALID;
  bool layout = r.batch_first;
  quill_value *x = n->in[0], *x2;
  static const int64_t swap01[3] = {1, 0, 2};
  int64_t d2[2] = {r.seq * r.batch, r.in};
  if (fits_lstm_op(&r))
    return (layout && transpose(&r, x, 3, swap01, &x))
               ? QUILL_ERR_INVALID
               : import_lstm_op(&r, x);
  r.keep_float = im->opts && im->opts->rnn_float;
  r.h0 = onnx_opt_input(n, 5);
  r.c0 = r.kind == RNN_LSTM ? onnx_opt_input(n, 6) : NULL;
  if ((layout && transpose(&r, x, 3, swap01, &x)) ||
      reshape(&r, x, 2, d2, &x2) ||
      (layout && r.h0 && transpose(&r, r.h0, 3, swap01, &r.h0)) ||
      (layout && r.c0 && transpose(&r, r.c0, 3, swap01, &r.c0)))
    return QUILL_ERR_INVALID;
  bool want_y = onnx_output_used(im, n, 0);
  quill_value *y[2] = {0}, *yh[2] = {0}, *yc[2] = {0}, *out;
  for (unsigned d = 0; d < r.ndir; d++)
    if (run_dir(&r, d, x2, want_y, &y[d], &yh[d], &yc[d]))
      return QUILL_ERR_INVALID;
  /* Y [seq, dirs, batch, hid] (layout 1: [batch, seq, dirs, hid]); Y_h,
   * Y_c [dirs, batch, hid] (layout 1: [batch, dirs, hid]) */
  static const int64_t y_perm[4] = {2, 0, 1, 3};
  if (want_y && (concat(&r, r.ndir, y, 1, &out) ||
                 (layout && transpose(&r, out, 4, y_perm, &out)) ||
                 onnx_set_output(im, n, 0, out)))
    return QUILL_ERR_INVALID;
  quill_value **states[2] = {yh, yc};
  for (unsigned k = 0; k < (r.kind == RNN_LSTM ? 2u : 1u); k++) {
    if (!onnx_output_used(im, n, k + 1))
      continue;
    if (concat(&r, r.ndir, states[k], 0, &out) ||
        (layout && transpose(&r, out, 3, swap01, &out)) ||
        onnx_set_output(im, n, k + 1, out))
      return QUILL_ERR_INVALID;
  }
  return QUILL_OK;
}
