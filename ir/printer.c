/*
 * printer.c - the textual IR (.qir) printer.
 *
 *   func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
 *     %0 = relu %x : tensor<1x4xf32> loc("relu1")
 *     %a, %b = split %0 {axis = 1} : tensor<1x2xf32>, tensor<1x2xf32>
 *     return %a
 *   }
 *
 * Types and attributes print themselves (quill_type_print,
 * quill_attr_print); this file lays out graphs and ops and names values.
 *
 * Naming runs once per graph, before anything is printed, in two passes:
 *   1. unnamed arguments take `argN`, unnamed results are counted;
 *   2. named values (args, then results in op order) take their name
 *      sanitised to [A-Za-z0-9_.$], uniqued with `_1`, `_2`... suffixes;
 *      then unnamed results take 0, 1, 2... skipping numbers already taken.
 * Names the parser would drop (all digits; `argN` on an argument) count as
 * unnamed, so print -> parse -> print is a fixed point. Names live in a
 * string set (taken names) and a pointer map (value -> name).
 */
#include <string.h>

#include "ir/ir.h"
#include "ir/strmap.h"

/* ---- value -> name map ------------------------------------------------------ */

typedef struct name_slot {
  const quill_value *v; /* NULL: empty */
  char *name;           /* owned, NUL-terminated */
  size_t len;
} name_slot;

typedef struct namer {
  quill_context *ctx;
  name_slot *slots;
  size_t cap, count;
  quill_strmap taken; /* keys point to the owned names */
  bool failed;
  uint64_t next_number; /* for unnamed results */
} namer;

static size_t ptr_hash(const void *p) {
  uint64_t h = (uint64_t)(uintptr_t)p;
  h ^= h >> 33;
  h *= UINT64_C(0xff51afd7ed558ccd);
  h ^= h >> 33;
  return (size_t)h;
}

static name_slot *slot_for(const namer *nm, const quill_value *v) {
  size_t mask = nm->cap - 1;
  for (size_t i = ptr_hash(v) & mask;; i = (i + 1) & mask)
    if (nm->slots[i].v == v || !nm->slots[i].v)
      return &nm->slots[i];
}

static void namer_init(namer *nm, quill_context *ctx) {
  memset(nm, 0, sizeof *nm);
  nm->ctx = ctx;
  quill_strmap_init(&nm->taken, ctx);
}

static void namer_free(namer *nm) {
  for (size_t i = 0; i < nm->cap; i++)
    if (nm->slots[i].v)
      quill_free(nm->ctx, nm->slots[i].name, nm->slots[i].len + 1);
  if (nm->slots)
    quill_free(nm->ctx, nm->slots, nm->cap * sizeof *nm->slots);
  quill_strmap_free(&nm->taken);
}

static bool namer_grow(namer *nm) {
  size_t ncap = nm->cap ? nm->cap * 2 : 64;
  name_slot *ns = quill_calloc(nm->ctx, ncap, sizeof *ns);
  if (!ns)
    return false;
  namer old = *nm;
  nm->slots = ns;
  nm->cap = ncap;
  for (size_t i = 0; i < old.cap; i++)
    if (old.slots[i].v)
      *slot_for(nm, old.slots[i].v) = old.slots[i];
  if (old.slots)
    quill_free(nm->ctx, old.slots, old.cap * sizeof *old.slots);
  return true;
}

static const char *name_of(const namer *nm, const quill_value *v) {
  if (!nm->cap)
    return NULL;
  name_slot *s = slot_for(nm, v);
  return s->v ? s->name : NULL;
}

static bool is_taken(const namer *nm, const char *s, size_t n) {
  return quill_strmap_find(&nm->taken, s, n) != NULL;
}

/* Give v the name s[0..n) (which must not be taken yet). A value is
 * named at most once. */
static void assign(namer *nm, const quill_value *v, const char *s, size_t n) {
  if (nm->failed)
    return;
  if ((nm->count + 1) * 2 > nm->cap && !namer_grow(nm)) {
    nm->failed = true;
    return;
  }
  name_slot *slot = slot_for(nm, v);
  if (slot->v)
    return;
  char *copy = quill_alloc(nm->ctx, n + 1);
  if (!copy) {
    nm->failed = true;
    return;
  }
  memcpy(copy, s, n);
  copy[n] = 0;
  bool existed;
  if (!quill_strmap_insert(&nm->taken, copy, n, &existed)) {
    quill_free(nm->ctx, copy, n + 1);
    nm->failed = true;
    return;
  }
  slot->v = v;
  slot->name = copy;
  slot->len = n;
  nm->count++;
}

static bool name_char(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '$';
}

static bool all_digits(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] < '0' || s[i] > '9')
      return false;
  return true;
}

static bool is_arg_name(const char *s, size_t n) {
  return n > 3 && memcmp(s, "arg", 3) == 0 && all_digits(s + 3, n - 3);
}

/* Sanitise v's name into sb; false if the value counts as unnamed. */
static bool usable_name(const quill_value *v, quill_strbuf *sb) {
  const char *raw = quill_value_name(v);
  quill_strbuf_clear(sb);
  if (!raw || !*raw)
    return false;
  for (const char *c = raw; *c; c++)
    quill_strbuf_putc(sb, name_char((unsigned char)*c) ? *c : '_');
  if (all_digits(sb->data, sb->len))
    return false;
  return !(quill_value_is_arg(v) && is_arg_name(sb->data, sb->len));
}

/* Assign the sanitised name in sb to v, uniqued with _1, _2... */
static void assign_unique(namer *nm, const quill_value *v, quill_strbuf *sb) {
  size_t base = sb->len;
  for (uint64_t k = 1; !nm->failed && is_taken(nm, sb->data, sb->len); k++) {
    sb->len = base;
    quill_strbuf_printf(sb, "_%llu", (unsigned long long)k);
    if (quill_strbuf_failed(sb))
      nm->failed = true;
  }
  assign(nm, v, sb->data, sb->len);
}

static void assign_number(namer *nm, const quill_value *v, quill_strbuf *sb) {
  do {
    quill_strbuf_clear(sb);
    quill_strbuf_printf(sb, "%llu", (unsigned long long)nm->next_number++);
  } while (!nm->failed && !quill_strbuf_failed(sb) &&
           is_taken(nm, sb->data, sb->len));
  assign(nm, v, sb->data, sb->len);
}

static void name_graph(namer *nm, const quill_graph *g, quill_strbuf *sb) {
  unsigned na = quill_graph_num_args(g);
  for (unsigned i = 0; i < na; i++) {
    quill_value *a = quill_graph_arg(g, i);
    if (!usable_name(a, sb)) {
      quill_strbuf_clear(sb);
      quill_strbuf_printf(sb, "arg%u", i);
      assign(nm, a, sb->data, sb->len);
    }
  }
  for (unsigned i = 0; i < na; i++) {
    quill_value *a = quill_graph_arg(g, i);
    if (usable_name(a, sb))
      assign_unique(nm, a, sb);
  }
  QUILL_GRAPH_FOREACH(g, op) {
    for (unsigned i = 0; i < quill_op_num_results(op); i++) {
      quill_value *r = quill_op_result(op, i);
      if (usable_name(r, sb))
        assign_unique(nm, r, sb);
    }
  }
  QUILL_GRAPH_FOREACH(g, op) {
    for (unsigned i = 0; i < quill_op_num_results(op); i++) {
      quill_value *r = quill_op_result(op, i);
      if (!name_of(nm, r))
        assign_number(nm, r, sb);
    }
  }
}

/* ---- printing ------------------------------------------------------------- */

static void put_value(const namer *nm, const quill_value *v,
                      quill_strbuf *sb) {
  const char *n = v ? name_of(nm, v) : NULL;
  quill_strbuf_putc(sb, '%');
  quill_strbuf_puts(sb, n ? n : "<<null>>");
}

/* Identifiers print bare when the parser would read them back as one
 * identifier token, and quoted otherwise. */
static void put_ident(quill_strbuf *sb, const char *s) {
  bool bare = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              *s == '_';
  for (const char *c = s; bare && *c; c++)
    bare = name_char((unsigned char)*c);
  if (bare)
    quill_strbuf_puts(sb, s);
  else
    quill_strbuf_put_quoted(sb, s, strlen(s));
}

static void put_loc(quill_strbuf *sb, quill_loc loc,
                    const quill_print_options *opts) {
  if (loc.name) {
    quill_strbuf_puts(sb, " loc(");
    quill_strbuf_put_quoted(sb, loc.name, strlen(loc.name));
    quill_strbuf_putc(sb, ')');
  } else if (loc.file && opts && opts->print_locs) {
    quill_strbuf_puts(sb, " loc(");
    quill_strbuf_put_quoted(sb, loc.file, strlen(loc.file));
    quill_strbuf_printf(sb, ":%u:%u)", (unsigned)loc.line, (unsigned)loc.col);
  }
}

static void put_type(quill_strbuf *sb, const quill_type *t) {
  if (t)
    quill_type_print(t, sb);
  else
    quill_strbuf_puts(sb, "<<null>>");
}

static void print_op(const namer *nm, const quill_op *op, quill_strbuf *sb,
                     const quill_print_options *opts) {
  unsigned nr = quill_op_num_results(op);
  for (unsigned i = 0; i < nr; i++) {
    if (i)
      quill_strbuf_puts(sb, ", ");
    put_value(nm, quill_op_result(op, i), sb);
  }
  if (nr)
    quill_strbuf_puts(sb, " = ");
  quill_strbuf_puts(sb, quill_op_name(op));
  for (unsigned i = 0; i < quill_op_num_operands(op); i++) {
    quill_strbuf_puts(sb, i ? ", " : " ");
    put_value(nm, quill_op_operand(op, i), sb);
  }
  unsigned na = quill_op_num_attrs(op);
  for (unsigned i = 0; i < na; i++) {
    quill_named_attr a = quill_op_attr_at(op, i);
    quill_strbuf_puts(sb, i ? ", " : " {");
    put_ident(sb, a.name);
    quill_strbuf_puts(sb, " = ");
    quill_attr_print(a.attr, sb);
  }
  if (na)
    quill_strbuf_putc(sb, '}');
  for (unsigned i = 0; i < nr; i++) {
    quill_strbuf_puts(sb, i ? ", " : " : ");
    put_type(sb, quill_value_type(quill_op_result(op, i)));
  }
  put_loc(sb, quill_op_loc(op), opts);
}

/* Graph names follow `name ::= [A-Za-z_.$][A-Za-z0-9_.$]*`. */
static void put_graph_name(quill_strbuf *sb, const char *name) {
  quill_strbuf_putc(sb, '@');
  if (!name || !*name || (*name >= '0' && *name <= '9'))
    quill_strbuf_putc(sb, '_');
  for (const char *c = name ? name : ""; *c; c++)
    quill_strbuf_putc(sb, name_char((unsigned char)*c) ? *c : '_');
}

static void print_graph(namer *nm, const quill_graph *g, quill_strbuf *sb,
                        const quill_print_options *opts) {
  quill_strbuf_puts(sb, "func ");
  put_graph_name(sb, quill_graph_name(g));
  quill_strbuf_putc(sb, '(');
  for (unsigned i = 0; i < quill_graph_num_args(g); i++) {
    quill_value *a = quill_graph_arg(g, i);
    if (i)
      quill_strbuf_puts(sb, ", ");
    put_value(nm, a, sb);
    quill_strbuf_puts(sb, ": ");
    put_type(sb, quill_value_type(a));
  }
  quill_strbuf_puts(sb, ") -> ");
  unsigned nr = quill_graph_num_results(g);
  if (nr != 1)
    quill_strbuf_putc(sb, '(');
  for (unsigned i = 0; i < nr; i++) {
    if (i)
      quill_strbuf_puts(sb, ", ");
    put_type(sb, quill_graph_result_type(g, i));
  }
  if (nr != 1)
    quill_strbuf_putc(sb, ')');
  quill_strbuf_puts(sb, " {\n");
  QUILL_GRAPH_FOREACH(g, op) {
    quill_strbuf_puts(sb, "  ");
    print_op(nm, op, sb, opts);
    quill_strbuf_putc(sb, '\n');
  }
  quill_strbuf_puts(sb, "}\n");
}

/* Name and print one graph; allocation failures mark sb failed. */
static void name_and_print(const quill_graph *g, quill_strbuf *sb,
                           const quill_print_options *opts) {
  quill_context *ctx = quill_graph_context(g);
  namer nm;
  quill_strbuf tmp;
  namer_init(&nm, ctx);
  quill_strbuf_init(&tmp, ctx);
  name_graph(&nm, g, &tmp);
  if (nm.failed || quill_strbuf_failed(&tmp))
    sb->failed = true;
  else
    print_graph(&nm, g, sb, opts);
  quill_strbuf_free(&tmp);
  namer_free(&nm);
}

void quill_print_graph(const quill_graph *g, quill_strbuf *sb,
                       const quill_print_options *opts) {
  name_and_print(g, sb, opts);
}

void quill_print_module(const quill_module *m, quill_strbuf *sb,
                        const quill_print_options *opts) {
  unsigned n = quill_module_num_graphs(m);
  for (unsigned i = 0; i < n; i++) {
    if (i)
      quill_strbuf_putc(sb, '\n');
    name_and_print(quill_module_graph(m, i), sb, opts);
  }
}

void quill_print_op(const quill_op *op, quill_strbuf *sb) {
  quill_context *ctx = quill_op_context(op);
  namer nm;
  quill_strbuf tmp;
  namer_init(&nm, ctx);
  quill_strbuf_init(&tmp, ctx);
  /* Name the whole graph so the op reads as it does in a full print; a
   * detached op's results and any value the graph walk did not reach
   * (operands defined by detached ops) are numbered after the rest. */
  quill_graph *g = quill_op_graph(op);
  if (g)
    name_graph(&nm, g, &tmp);
  for (unsigned i = 0; i < quill_op_num_results(op); i++)
    if (!name_of(&nm, quill_op_result(op, i)))
      assign_number(&nm, quill_op_result(op, i), &tmp);
  for (unsigned i = 0; i < quill_op_num_operands(op); i++) {
    quill_value *v = quill_op_operand(op, i);
    if (v && !name_of(&nm, v))
      assign_number(&nm, v, &tmp);
  }
  if (nm.failed || quill_strbuf_failed(&tmp))
    sb->failed = true;
  else
    print_op(&nm, op, sb, NULL);
  quill_strbuf_free(&tmp);
  namer_free(&nm);
}

quill_status quill_module_dump(const quill_module *m, FILE *out,
                               const quill_print_options *opts) {
  quill_strbuf sb;
  quill_strbuf_init(&sb, quill_module_context(m));
  quill_print_module(m, &sb, opts);
  quill_status st = QUILL_OK;
  if (quill_strbuf_failed(&sb))
    st = QUILL_ERR_NOMEM;
  else if (sb.len && fwrite(sb.data, 1, sb.len, out) != sb.len)
    st = QUILL_ERR_IO;
  else if (fflush(out) != 0)
    st = QUILL_ERR_IO;
  quill_strbuf_free(&sb);
  return st;
}
