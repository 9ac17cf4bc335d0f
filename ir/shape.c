/*
 * shape.c - ONNX shape inference on plain (rank, dims) values.
 *
 * Each helper mirrors one ONNX operator's shape function (see the ONNX
 * operator docs) and works on quill_shape values, so the verifier can
 * compare an op's declared result type against the inferred one and the
 * ONNX frontend can compute result types while importing.
 *
 * Dynamic dims (QUILL_DIM_DYNAMIC = -1) flow through: arithmetic on a
 * dynamic dim yields a dynamic dim, and checks that need a static value are
 * skipped for dynamic ones. Failures append a human-readable reason to the
 * optional `why` buffer and return false; nothing here emits diagnostics.
 */
#include "ir/shape.h"

#include <math.h>
#include <string.h>

#include "ir/attr.h"
#include "ir/context.h"
#include "ir/graph.h"
#include "ir/strbuf.h"

#define DYN QUILL_DIM_DYNAMIC

static bool fail(quill_strbuf *why, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static bool fail(quill_strbuf *why, const char *fmt, ...) {
  if (why) {
    va_list ap;
    va_start(ap, fmt);
    quill_strbuf_vprintf(why, fmt, ap);
    va_end(ap);
  }
  return false;
}

static bool is_dyn(int64_t d) { return d < 0; }

/* Checked arithmetic: attribute values come from untrusted input, so a
 * huge stride or pad must give an error, not signed overflow. */
static bool add3(int64_t a, int64_t b, int64_t c, int64_t *r) {
  return !__builtin_add_overflow(a, b, r) && !__builtin_add_overflow(*r, c, r);
}
static bool mul(int64_t a, int64_t b, int64_t *r) {
  return !__builtin_mul_overflow(a, b, r);
}

/* ---- basics ------------------------------------------------------------ */

void quill_shape_of(const quill_type *tensor, quill_shape *out) {
  quill_shape_set(out, quill_type_rank(tensor), quill_type_dims(tensor));
}

void quill_shape_set(quill_shape *s, unsigned rank, const int64_t *dims) {
  if (rank > QUILL_MAX_RANK)
    rank = QUILL_MAX_RANK;
  s->rank = rank;
  for (unsigned i = 0; i < rank; i++)
    s->dims[i] = dims[i] < 0 ? DYN : dims[i];
}

quill_type *quill_shape_type(quill_context *ctx, const quill_shape *s,
                             quill_type *elem) {
  return quill_type_tensor(ctx, elem, s->rank, s->dims);
}

bool quill_shape_matches(const quill_shape *a, const quill_shape *b) {
  if (a->rank != b->rank)
    return false;
  for (unsigned i = 0; i < a->rank; i++)
    if (!is_dyn(a->dims[i]) && !is_dyn(b->dims[i]) && a->dims[i] != b->dims[i])
      return false;
  return true;
}

int64_t quill_shape_num_elements(const quill_shape *s) {
  int64_t n = 1;
  for (unsigned i = 0; i < s->rank; i++) {
    if (is_dyn(s->dims[i]))
      return -1;
    if (s->dims[i] != 0 && n > INT64_MAX / s->dims[i])
      return -1;
    n *= s->dims[i];
  }
  return n;
}

void quill_shape_print(const quill_shape *s, quill_strbuf *sb) {
  if (s->rank == 0) {
    quill_strbuf_puts(sb, "scalar");
    return;
  }
  for (unsigned i = 0; i < s->rank; i++) {
    if (i)
      quill_strbuf_putc(sb, 'x');
    if (is_dyn(s->dims[i]))
      quill_strbuf_putc(sb, '?');
    else
      quill_strbuf_printf(sb, "%lld", (long long)s->dims[i]);
  }
}

bool quill_shape_norm_axis(int64_t axis, unsigned rank, unsigned *out) {
  if (axis < -(int64_t)rank || axis >= (int64_t)rank)
    return false;
  *out = (unsigned)(axis < 0 ? axis + (int64_t)rank : axis);
  return true;
}

/* ---- elementwise ------------------------------------------------------- */

bool quill_shape_broadcast(const quill_shape *a, const quill_shape *b,
                           quill_shape *out, quill_strbuf *why) {
  unsigned r = a->rank > b->rank ? a->rank : b->rank;
  quill_shape res;
  res.rank = r;
  for (unsigned i = 0; i < r; i++) {
    /* i counts from the back */
    int64_t da = i < a->rank ? a->dims[a->rank - 1 - i] : 1;
    int64_t db = i < b->rank ? b->dims[b->rank - 1 - i] : 1;
    int64_t d;
    if (da == 1)
      d = db;
    else if (db == 1)
      d = da;
    else if (is_dyn(da))
      d = db; /* ? vs n (n != 1): must be n at run time */
    else if (is_dyn(db))
      d = da;
    else if (da == db)
      d = da;
    else
      return fail(why, "dimensions %lld and %lld (dim %u from the back) are "
                       "not broadcastable",
                  (long long)da, (long long)db, i);
    res.dims[r - 1 - i] = d;
  }
  *out = res;
  return true;
}

bool quill_shape_broadcastable_to(const quill_shape *from,
                                  const quill_shape *to, quill_strbuf *why) {
  if (from->rank > to->rank)
    return fail(why, "rank %u is larger than the target rank %u", from->rank,
                to->rank);
  for (unsigned i = 0; i < from->rank; i++) {
    int64_t df = from->dims[from->rank - 1 - i];
    int64_t dt = to->dims[to->rank - 1 - i];
    if (df == 1 || is_dyn(df) || is_dyn(dt) || df == dt)
      continue;
    return fail(why, "dimension %lld cannot be broadcast to %lld",
                (long long)df, (long long)dt);
  }
  return true;
}

/* ---- convolution and pooling ------------------------------------------- */

void quill_window_init(quill_window *w, unsigned nspatial) {
  memset(w, 0, sizeof *w);
  if (nspatial > QUILL_MAX_RANK)
    nspatial = QUILL_MAX_RANK;
  w->nspatial = nspatial;
  for (unsigned i = 0; i < QUILL_MAX_RANK; i++) {
    w->strides[i] = 1;
    w->dilations[i] = 1;
    w->kernel[i] = 1;
  }
  w->group = 1;
}

void quill_window_same_pads(quill_window *w, const int64_t *in,
                            const int64_t *kernel, bool upper,
                            bool transpose) {
  unsigned n = w->nspatial;
  for (unsigned i = 0; i < n; i++) {
    int64_t s = w->strides[i], total, eff, out, a;
    w->pads[i] = w->pads[n + i] = 0;
    if (is_dyn(in[i]) || is_dyn(kernel[i]) || s <= 0 ||
        !mul(kernel[i] - 1, w->dilations[i], &eff))
      continue;
    if (transpose) {
      /* total = s * (in - 1) + output_padding + eff + 1 - in * s */
      if (!mul(s, in[i] - 1, &a) || !add3(a, w->output_padding[i], eff, &a) ||
          !mul(in[i], s, &out) || !add3(a, 1, -out, &total))
        continue;
    } else {
      /* total = (ceil(in / s) - 1) * s + eff + 1 - in */
      out = in[i] / s + (in[i] % s ? 1 : 0);
      if (!mul(out - 1, s, &a) || !add3(a, eff, 1 - in[i], &total))
        continue;
    }
    if (total < 0)
      total = 0;
    int64_t small = total / 2, big = total - small;
    w->pads[i] = upper ? small : big;
    w->pads[n + i] = upper ? big : small;
  }
}

int64_t quill_shape_window_dim(int64_t in, int64_t k, int64_t s, int64_t pb,
                               int64_t pe, int64_t d, bool ceil_mode) {
  if (is_dyn(in) || is_dyn(k))
    return DYN;
  if (s <= 0 || d <= 0 || k <= 0)
    return 0;
  int64_t eff, span, pad_in; /* eff = (k - 1) * d, the extent minus 1 */
  if (!mul(k - 1, d, &eff) || !add3(in, pb, pe, &span) ||
      !add3(span, -eff, -1, &span))
    return 0;
  if (span < 0)
    return 0;
  int64_t out = span / s + (ceil_mode && span % s ? 1 : 0) + 1;
  /* The last window must start inside the input or the begin padding. */
  int64_t start;
  if (ceil_mode && add3(in, pb, 0, &pad_in) && mul(out - 1, s, &start) &&
      start >= pad_in)
    out--;
  return out;
}

int64_t quill_shape_conv_transpose_dim(int64_t in, int64_t k, int64_t s,
                                       int64_t pb, int64_t pe, int64_t d,
                                       int64_t output_padding) {
  if (is_dyn(in) || is_dyn(k))
    return DYN;
  int64_t a, b, r;
  if (!mul(s, in - 1, &a) || !mul(k - 1, d, &b) ||
      !add3(a, b, output_padding, &r) || !add3(r, 1, 0, &r) ||
      __builtin_sub_overflow(r, pb, &r) || __builtin_sub_overflow(r, pe, &r))
    return 0;
  return r;
}

/* Common checks for conv/conv-transpose: ranks and spatial count. */
static bool conv_ranks(const quill_shape *x, const quill_shape *w,
                       const quill_window *win, quill_strbuf *why) {
  if (x->rank < 3)
    return fail(why, "input must have rank >= 3 (N, C, spatial...), got %u",
                x->rank);
  if (w->rank != x->rank)
    return fail(why, "weight rank %u does not match input rank %u", w->rank,
                x->rank);
  if (win->nspatial != x->rank - 2)
    return fail(why, "expected %u spatial dims, got %u", x->rank - 2,
                win->nspatial);
  if (win->group <= 0)
    return fail(why, "group must be positive, got %lld",
                (long long)win->group);
  return true;
}

bool quill_shape_conv(const quill_shape *x, const quill_shape *w,
                      const quill_window *win, quill_shape *out,
                      quill_strbuf *why) {
  if (!conv_ranks(x, w, win, why))
    return false;
  int64_t c = x->dims[1], m = w->dims[0], ci = w->dims[1], g = win->group;
  int64_t cig;
  if (!is_dyn(c) && !is_dyn(ci) && (!mul(ci, g, &cig) || c != cig))
    return fail(why, "input channels %lld do not equal weight input channels "
                     "%lld times group %lld",
                (long long)c, (long long)ci, (long long)g);
  if (!is_dyn(m) && m % g != 0)
    return fail(why, "output channels %lld are not divisible by group %lld",
                (long long)m, (long long)g);
  quill_shape res;
  res.rank = x->rank;
  res.dims[0] = x->dims[0];
  res.dims[1] = m;
  for (unsigned i = 0; i < win->nspatial; i++) {
    int64_t o = quill_shape_window_dim(
        x->dims[2 + i], w->dims[2 + i], win->strides[i], win->pads[i],
        win->pads[win->nspatial + i], win->dilations[i], false);
    if (o == 0 || (o < 0 && o != DYN))
      return fail(why, "kernel of size %lld (dilation %lld) does not fit "
                       "spatial dim %u of size %lld with pads %lld+%lld",
                  (long long)w->dims[2 + i], (long long)win->dilations[i], i,
                  (long long)x->dims[2 + i], (long long)win->pads[i],
                  (long long)win->pads[win->nspatial + i]);
    res.dims[2 + i] = o;
  }
  *out = res;
  return true;
}

bool quill_shape_conv_transpose(const quill_shape *x, const quill_shape *w,
                                const quill_window *win, quill_shape *out,
                                quill_strbuf *why) {
  if (!conv_ranks(x, w, win, why))
    return false;
  int64_t c = x->dims[1], wc = w->dims[0], g = win->group;
  if (!is_dyn(c) && !is_dyn(wc) && c != wc)
    return fail(why, "input channels %lld do not equal weight dim 0 (%lld)",
                (long long)c, (long long)wc);
  if (!is_dyn(wc) && wc % g != 0)
    return fail(why, "input channels %lld are not divisible by group %lld",
                (long long)wc, (long long)g);
  quill_shape res;
  res.rank = x->rank;
  res.dims[0] = x->dims[0];
  if (is_dyn(w->dims[1]))
    res.dims[1] = DYN;
  else if (!mul(w->dims[1], g, &res.dims[1]))
    return fail(why, "output channels overflow");
  for (unsigned i = 0; i < win->nspatial; i++) {
    int64_t o = quill_shape_conv_transpose_dim(
        x->dims[2 + i], w->dims[2 + i], win->strides[i], win->pads[i],
        win->pads[win->nspatial + i], win->dilations[i],
        win->output_padding[i]);
    if (o != DYN && o <= 0)
      return fail(why, "output spatial dim %u would be %lld", i,
                  (long long)o);
    res.dims[2 + i] = o;
  }
  *out = res;
  return true;
}

bool quill_shape_pool(const quill_shape *x, const quill_window *win,
                      quill_shape *out, quill_strbuf *why) {
  if (x->rank < 3)
    return fail(why, "input must have rank >= 3 (N, C, spatial...), got %u",
                x->rank);
  if (win->nspatial != x->rank - 2)
    return fail(why, "kernel_shape has %u dims but the input has %u spatial "
                     "dims",
                win->nspatial, x->rank - 2);
  quill_shape res = *x;
  for (unsigned i = 0; i < win->nspatial; i++) {
    int64_t o = quill_shape_window_dim(
        x->dims[2 + i], win->kernel[i], win->strides[i], win->pads[i],
        win->pads[win->nspatial + i], win->dilations[i], win->ceil_mode);
    if (o != DYN && o <= 0)
      return fail(why, "kernel of size %lld does not fit spatial dim %u of "
                       "size %lld",
                  (long long)win->kernel[i], i, (long long)x->dims[2 + i]);
    res.dims[2 + i] = o;
  }
  *out = res;
  return true;
}

bool quill_shape_global_pool(const quill_shape *x, quill_shape *out,
                             quill_strbuf *why) {
  if (x->rank < 3)
    return fail(why, "input must have rank >= 3 (N, C, spatial...), got %u",
                x->rank);
  quill_shape res = *x;
  for (unsigned i = 2; i < x->rank; i++)
    res.dims[i] = 1;
  *out = res;
  return true;
}

/* ---- linear algebra ---------------------------------------------------- */

static bool dims_agree(int64_t a, int64_t b) {
  return is_dyn(a) || is_dyn(b) || a == b;
}

bool quill_shape_matmul(const quill_shape *a, const quill_shape *b,
                        quill_shape *out, quill_strbuf *why) {
  if (a->rank == 0 || b->rank == 0)
    return fail(why, "operands must have rank >= 1");
  /* Promote 1-D operands: a [K] -> [1, K], b [K] -> [K, 1]. */
  quill_shape pa = *a, pb = *b;
  if (a->rank == 1) {
    pa.rank = 2;
    pa.dims[0] = 1;
    pa.dims[1] = a->dims[0];
  }
  if (b->rank == 1) {
    pb.rank = 2;
    pb.dims[0] = b->dims[0];
    pb.dims[1] = 1;
  }
  int64_t ka = pa.dims[pa.rank - 1], kb = pb.dims[pb.rank - 2];
  if (!dims_agree(ka, kb))
    return fail(why, "contracting dimensions differ (%lld vs %lld)",
                (long long)ka, (long long)kb);
  quill_shape ba, bb, batch;
  quill_shape_set(&ba, pa.rank - 2, pa.dims);
  quill_shape_set(&bb, pb.rank - 2, pb.dims);
  if (!quill_shape_broadcast(&ba, &bb, &batch, NULL))
    return fail(why, "batch dimensions are not broadcastable");
  quill_shape res = batch;
  if (a->rank != 1)
    res.dims[res.rank++] = pa.dims[pa.rank - 2];
  if (b->rank != 1)
    res.dims[res.rank++] = pb.dims[pb.rank - 1];
  *out = res;
  return true;
}

bool quill_shape_gemm(const quill_shape *a, const quill_shape *b,
                      bool trans_a, bool trans_b, quill_shape *out,
                      quill_strbuf *why) {
  if (a->rank != 2 || b->rank != 2)
    return fail(why, "operands must be 2-D, got ranks %u and %u", a->rank,
                b->rank);
  int64_t m = a->dims[trans_a ? 1 : 0], ka = a->dims[trans_a ? 0 : 1];
  int64_t kb = b->dims[trans_b ? 1 : 0], n = b->dims[trans_b ? 0 : 1];
  if (!dims_agree(ka, kb))
    return fail(why, "contracting dimensions differ (%lld vs %lld)",
                (long long)ka, (long long)kb);
  out->rank = 2;
  out->dims[0] = m;
  out->dims[1] = n;
  return true;
}

/* ---- data movement ----------------------------------------------------- */

bool quill_shape_concat(unsigned n, const quill_shape *ins, int64_t axis,
                        quill_shape *out, quill_strbuf *why) {
  if (n == 0)
    return fail(why, "needs at least one input");
  unsigned r = ins[0].rank, ax;
  if (!quill_shape_norm_axis(axis, r, &ax))
    return fail(why, "axis %lld is out of range for rank %u", (long long)axis,
                r);
  quill_shape res = ins[0];
  for (unsigned i = 1; i < n; i++) {
    if (ins[i].rank != r)
      return fail(why, "input #%u has rank %u, expected %u", i, ins[i].rank,
                  r);
    for (unsigned d = 0; d < r; d++) {
      if (d == ax) {
        if (is_dyn(res.dims[d]) || is_dyn(ins[i].dims[d]))
          res.dims[d] = DYN;
        else if (!add3(res.dims[d], ins[i].dims[d], 0, &res.dims[d]))
          return fail(why, "concatenated size overflows");
      } else if (!dims_agree(res.dims[d], ins[i].dims[d])) {
        return fail(why, "input #%u has size %lld in dim %u, expected %lld",
                    i, (long long)ins[i].dims[d], d, (long long)res.dims[d]);
      } else if (is_dyn(res.dims[d])) {
        res.dims[d] = ins[i].dims[d];
      }
    }
  }
  *out = res;
  return true;
}

bool quill_shape_split(const quill_shape *in, int64_t axis, unsigned n,
                       const int64_t *sizes, quill_shape *outs,
                       quill_strbuf *why) {
  unsigned ax;
  if (!quill_shape_norm_axis(axis, in->rank, &ax))
    return fail(why, "axis %lld is out of range for rank %u", (long long)axis,
                in->rank);
  int64_t total = 0;
  bool dyn = false;
  for (unsigned i = 0; i < n; i++) {
    if (is_dyn(sizes[i]))
      dyn = true;
    else if (!add3(total, sizes[i], 0, &total))
      return fail(why, "split sizes overflow");
    outs[i] = *in;
    outs[i].dims[ax] = sizes[i] < 0 ? DYN : sizes[i];
  }
  if (!dyn && !is_dyn(in->dims[ax]) && total != in->dims[ax])
    return fail(why, "split sizes add up to %lld but dim %u has size %lld",
                (long long)total, ax, (long long)in->dims[ax]);
  return true;
}

static int64_t clamp(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

bool quill_shape_slice(const quill_shape *in, unsigned n,
                       const int64_t *starts, const int64_t *ends,
                       const int64_t *axes, const int64_t *steps,
                       quill_shape *out, quill_strbuf *why) {
  quill_shape res = *in;
  bool seen[QUILL_MAX_RANK] = {false};
  if (n > in->rank)
    return fail(why, "%u slice axes for rank %u", n, in->rank);
  for (unsigned i = 0; i < n; i++) {
    unsigned ax;
    int64_t a = axes ? axes[i] : (int64_t)i;
    if (!quill_shape_norm_axis(a, in->rank, &ax))
      return fail(why, "axis %lld is out of range for rank %u", (long long)a,
                  in->rank);
    if (seen[ax])
      return fail(why, "axis %u is sliced twice", ax);
    seen[ax] = true;
    int64_t step = steps ? steps[i] : 1;
    if (step == 0)
      return fail(why, "step for axis %u is zero", ax);
    int64_t dim = in->dims[ax];
    if (is_dyn(dim)) {
      res.dims[ax] = DYN;
      continue;
    }
    int64_t s = starts[i], e = ends[i];
    if (s < 0)
      s += dim;
    if (e < 0 && e != INT64_MIN)
      e += dim;
    int64_t len;
    /* |step| as unsigned: -INT64_MIN does not fit an int64_t */
    uint64_t ustep = step > 0 ? (uint64_t)step : (uint64_t)0 - (uint64_t)step;
    if (dim == 0) {
      len = 0;
    } else if (step > 0) {
      s = clamp(s, 0, dim);
      e = clamp(e, 0, dim);
      len = e > s ? (int64_t)((uint64_t)(e - s - 1) / ustep) + 1 : 0;
    } else {
      s = clamp(s, 0, dim - 1);
      e = clamp(e, -1, dim - 1);
      len = s > e ? (int64_t)((uint64_t)(s - e - 1) / ustep) + 1 : 0;
    }
    res.dims[ax] = len;
  }
  *out = res;
  return true;
}

bool quill_shape_pad(const quill_shape *in, const int64_t *pads,
                     quill_shape *out, quill_strbuf *why) {
  quill_shape res = *in;
  for (unsigned i = 0; i < in->rank; i++) {
    if (is_dyn(in->dims[i]))
      continue;
    int64_t d;
    if (!add3(in->dims[i], pads[i], pads[in->rank + i], &d))
      return fail(why, "dim %u overflows", i);
    if (d < 0)
      return fail(why, "dim %u of size %lld would become %lld", i,
                  (long long)in->dims[i], (long long)d);
    res.dims[i] = d;
  }
  *out = res;
  return true;
}

bool quill_shape_transpose(const quill_shape *in, unsigned n,
                           const int64_t *perm, quill_shape *out,
                           quill_strbuf *why) {
  quill_shape res;
  res.rank = in->rank;
  if (!perm) {
    for (unsigned i = 0; i < in->rank; i++)
      res.dims[i] = in->dims[in->rank - 1 - i];
    *out = res;
    return true;
  }
  if (n != in->rank)
    return fail(why, "perm has %u entries for rank %u", n, in->rank);
  bool seen[QUILL_MAX_RANK] = {false};
  for (unsigned i = 0; i < n; i++) {
    if (perm[i] < 0 || perm[i] >= (int64_t)n || seen[perm[i]])
      return fail(why, "perm is not a permutation of 0..%u", n - 1);
    seen[perm[i]] = true;
    res.dims[i] = in->dims[perm[i]];
  }
  *out = res;
  return true;
}

bool quill_shape_squeeze(const quill_shape *in, unsigned n,
                         const int64_t *axes, quill_shape *out,
                         quill_strbuf *why) {
  bool drop[QUILL_MAX_RANK] = {false};
  if (n == 0) {
    for (unsigned i = 0; i < in->rank; i++)
      drop[i] = in->dims[i] == 1;
  }
  for (unsigned i = 0; i < n; i++) {
    unsigned ax;
    if (!quill_shape_norm_axis(axes[i], in->rank, &ax))
      return fail(why, "axis %lld is out of range for rank %u",
                  (long long)axes[i], in->rank);
    if (drop[ax])
      return fail(why, "axis %u is listed twice", ax);
    if (!is_dyn(in->dims[ax]) && in->dims[ax] != 1)
      return fail(why, "dim %u has size %lld, not 1", ax,
                  (long long)in->dims[ax]);
    drop[ax] = true;
  }
  quill_shape res;
  res.rank = 0;
  for (unsigned i = 0; i < in->rank; i++)
    if (!drop[i])
      res.dims[res.rank++] = in->dims[i];
  *out = res;
  return true;
}

bool quill_shape_unsqueeze(const quill_shape *in, unsigned n,
                           const int64_t *axes, quill_shape *out,
                           quill_strbuf *why) {
  unsigned r = in->rank + n;
  if (r > QUILL_MAX_RANK)
    return fail(why, "result rank %u is too large", r);
  bool ins[QUILL_MAX_RANK] = {false};
  for (unsigned i = 0; i < n; i++) {
    unsigned ax;
    if (!quill_shape_norm_axis(axes[i], r, &ax))
      return fail(why, "axis %lld is out of range for result rank %u",
                  (long long)axes[i], r);
    if (ins[ax])
      return fail(why, "axis %u is listed twice", ax);
    ins[ax] = true;
  }
  quill_shape res;
  res.rank = r;
  unsigned j = 0;
  for (unsigned i = 0; i < r; i++)
    res.dims[i] = ins[i] ? 1 : in->dims[j++];
  *out = res;
  return true;
}

static int64_t prod(const int64_t *d, unsigned lo, unsigned hi) {
  int64_t p = 1;
  for (unsigned i = lo; i < hi; i++) {
    if (is_dyn(d[i]) || !mul(p, d[i], &p))
      return DYN;
  }
  return p;
}

bool quill_shape_flatten(const quill_shape *in, int64_t axis,
                         quill_shape *out, quill_strbuf *why) {
  int64_t r = in->rank;
  if (axis < -r || axis > r)
    return fail(why, "axis %lld is out of range [%lld, %lld]",
                (long long)axis, (long long)-r, (long long)r);
  unsigned ax = (unsigned)(axis < 0 ? axis + r : axis);
  quill_shape res;
  res.rank = 2;
  res.dims[0] = prod(in->dims, 0, ax);
  res.dims[1] = prod(in->dims, ax, in->rank);
  *out = res;
  return true;
}

bool quill_shape_reshape(const quill_shape *in, unsigned n,
                         const int64_t *shape, bool allowzero,
                         quill_shape *out, quill_strbuf *why) {
  if (n > QUILL_MAX_RANK)
    return fail(why, "target rank %u is too large", n);
  quill_shape res;
  res.rank = n;
  int infer = -1;
  for (unsigned i = 0; i < n; i++) {
    int64_t d = shape[i];
    if (d == -1) {
      if (infer >= 0)
        return fail(why, "more than one -1 in the target shape");
      infer = (int)i;
      d = DYN;
    } else if (d == 0 && !allowzero) {
      if (i >= in->rank)
        return fail(why, "0 at index %u copies a dim the input lacks", i);
      d = in->dims[i];
    } else if (d < 0) {
      return fail(why, "invalid target dim %lld", (long long)d);
    }
    res.dims[i] = d;
  }
  int64_t total = quill_shape_num_elements(in);
  if (infer >= 0) {
    res.dims[infer] = 1;
    int64_t known = quill_shape_num_elements(&res);
    if (total >= 0 && known > 0) {
      if (total % known != 0)
        return fail(why, "cannot infer the -1 dim: %lld elements are not "
                         "divisible by %lld",
                    (long long)total, (long long)known);
      res.dims[infer] = total / known;
    } else {
      res.dims[infer] = DYN;
    }
  }
  int64_t got = quill_shape_num_elements(&res);
  if (total >= 0 && got >= 0 && total != got)
    return fail(why, "input has %lld elements but the target shape has %lld",
                (long long)total, (long long)got);
  *out = res;
  return true;
}

bool quill_shape_reduce(const quill_shape *in, unsigned n,
                        const int64_t *axes, bool keepdims,
                        bool noop_with_empty_axes, quill_shape *out,
                        quill_strbuf *why) {
  bool red[QUILL_MAX_RANK] = {false};
  if (n == 0 && !noop_with_empty_axes)
    for (unsigned i = 0; i < in->rank; i++)
      red[i] = true;
  for (unsigned i = 0; i < n; i++) {
    unsigned ax;
    if (!quill_shape_norm_axis(axes[i], in->rank, &ax))
      return fail(why, "axis %lld is out of range for rank %u",
                  (long long)axes[i], in->rank);
    if (red[ax])
      return fail(why, "axis %u is listed twice", ax);
    red[ax] = true;
  }
  quill_shape res;
  res.rank = 0;
  for (unsigned i = 0; i < in->rank; i++) {
    if (!red[i])
      res.dims[res.rank++] = in->dims[i];
    else if (keepdims)
      res.dims[res.rank++] = 1;
  }
  *out = res;
  return true;
}

bool quill_shape_gather(const quill_shape *data, const quill_shape *indices,
                        int64_t axis, quill_shape *out, quill_strbuf *why) {
  unsigned ax;
  if (!quill_shape_norm_axis(axis, data->rank, &ax))
    return fail(why, "axis %lld is out of range for rank %u",
                (long long)axis, data->rank);
  unsigned r = data->rank - 1 + indices->rank;
  if (r > QUILL_MAX_RANK)
    return fail(why, "result rank %u is too large", r);
  quill_shape res;
  res.rank = 0;
  for (unsigned i = 0; i < ax; i++)
    res.dims[res.rank++] = data->dims[i];
  for (unsigned i = 0; i < indices->rank; i++)
    res.dims[res.rank++] = indices->dims[i];
  for (unsigned i = ax + 1; i < data->rank; i++)
    res.dims[res.rank++] = data->dims[i];
  *out = res;
  return true;
}

bool quill_shape_resize_scales(const quill_shape *in, unsigned n,
                               const double *scales, quill_shape *out,
                               quill_strbuf *why) {
  if (n != in->rank)
    return fail(why, "%u scales for rank %u", n, in->rank);
  quill_shape res = *in;
  for (unsigned i = 0; i < n; i++) {
    if (!(scales[i] > 0) || !isfinite(scales[i]))
      return fail(why, "scale %u must be positive and finite", i);
    if (is_dyn(in->dims[i]))
      continue;
    double d = floor((double)in->dims[i] * scales[i]);
    if (d >= 9.0e18)
      return fail(why, "dim %u overflows", i);
    res.dims[i] = (int64_t)d;
  }
  *out = res;
  return true;
}

bool quill_window_of_conv(const quill_op *op, const quill_type *xt,
                          const quill_type *wt, bool transpose,
                          quill_window *w) {
  quill_window_init(w, 2);
  int64_t v[4];
  if (quill_op_attr_ints(op, "strides", v, 4) == 2)
    memcpy(w->strides, v, 2 * sizeof *v);
  if (quill_op_attr_ints(op, "dilations", v, 4) == 2)
    memcpy(w->dilations, v, 2 * sizeof *v);
  if (quill_op_attr_ints(op, "pads", v, 4) == 4)
    memcpy(w->pads, v, 4 * sizeof *v);
  if (quill_op_attr_ints(op, "output_padding", v, 4) == 2)
    memcpy(w->output_padding, v, 2 * sizeof *v);
  w->group = quill_op_attr_int(op, "group", 1);
  const quill_attr *ap = quill_op_attr(op, "auto_pad");
  const char *aps = ap && quill_attr_kind_of(ap) == QUILL_ATTR_STRING
                        ? quill_attr_string_value(ap, NULL)
                        : "NOTSET";
  if (!strcmp(aps, "SAME_UPPER") || !strcmp(aps, "SAME_LOWER"))
    quill_window_same_pads(w, quill_type_dims(xt) + 2, quill_type_dims(wt) + 2,
                           aps[5] == 'U', transpose);
  for (unsigned i = 0; i < 2; i++)
    if (w->strides[i] < 1 || w->dilations[i] < 1 || w->pads[i] < 0 ||
        w->pads[i + 2] < 0)
      return false;
  return w->group >= 1;
}
