/*
 * dot.c - a module as a Graphviz DOT digraph, and SVG through `dot -Tsvg`
 * (see dot.h for what the picture shows).
 *
 * One walk per graph:
 *
 *   args        -> ellipse nodes  g<G>_a<i>
 *   ops         -> box nodes      g<G>_o<op id>   (skipping "folded" ops:
 *                  constants and dequantizes of constants, which appear as
 *                  lines of their users' labels instead)
 *   operands    -> edges producer -> user, labelled with the value's type
 *
 * Labels are built as raw text lines and escaped once when written (\" \\
 * and newlines as \n). Files are written with quill_write_file (a
 * temporary file renamed into place). For SVG the DOT text goes to a
 * temporary file that the Graphviz program reads (posix_spawnp, no shell,
 * so any path works) and writes the picture to another, which is then
 * copied into place the same way.
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ir/dot.h"
#include "ir/readfile.h"
#include "ir/writefile.h"

extern char **environ;

/* ---- classification ---------------------------------------------------------- */

static const bool is_cast_op[QUILL_OP_COUNT] = {
    [QUILL_OP_QUANTIZE] = true,   [QUILL_OP_DEQUANTIZE] = true,
    [QUILL_OP_REQUANTIZE] = true, [QUILL_OP_FAKE_QUANT] = true,
    [QUILL_OP_SCAST] = true,      [QUILL_OP_DYNAMIC_QUANTIZE] = true,
};

static bool is_quant_value(const quill_value *v) {
  const quill_type *t = quill_value_type(v);
  if (t && quill_type_is_tensor(t))
    t = quill_type_elem(t);
  return t && quill_type_is_quant(t);
}

static bool is_float_constant(const quill_value *v) {
  const quill_op *d = quill_value_def(v);
  const quill_type *t = quill_value_type(v);
  return d && quill_op_has_flag(d, QUILL_OPF_CONSTANT) && t &&
         quill_type_is_tensor(t) && quill_type_is_float(quill_type_elem(t));
}

/* A dequantize (or fake_quant) of a constant of non-i32 storage: a
 * quantized weight. */
static bool is_quant_weight(const quill_value *v) {
  const quill_op *d = quill_value_def(v);
  if (!d || (quill_op_opcode(d) != QUILL_OP_DEQUANTIZE &&
             quill_op_opcode(d) != QUILL_OP_FAKE_QUANT))
    return false;
  const quill_value *c = quill_op_operand(d, 0);
  const quill_op *cd = quill_value_def(c);
  if (!cd || !quill_op_has_flag(cd, QUILL_OPF_CONSTANT))
    return false;
  if (quill_op_opcode(d) == QUILL_OP_FAKE_QUANT)
    return true;
  const quill_type *t = quill_value_type(c);
  const quill_type *e = quill_type_is_tensor(t) ? quill_type_elem(t) : t;
  return quill_type_is_quant(e) &&
         quill_type_kind_of(quill_type_quant_storage(e)) != QUILL_TYPE_I32;
}

static bool is_quant_cast(const quill_op *op, bool to_quant) {
  quill_opcode opc = quill_op_opcode(op);
  return opc == QUILL_OP_FAKE_QUANT ||
         opc == (to_quant ? QUILL_OP_QUANTIZE : QUILL_OP_DEQUANTIZE);
}

bool quill_op_has_quant_types(const quill_op *op) {
  for (unsigned i = 0; i < quill_op_num_operands(op); i++)
    if (is_quant_value(quill_op_operand(op, i)))
      return true;
  for (unsigned i = 0; i < quill_op_num_results(op); i++)
    if (is_quant_value(quill_op_result(op, i)))
      return true;
  return false;
}

quill_op_qclass quill_op_quant_class(const quill_op *op) {
  quill_opcode opc = quill_op_opcode(op);
  if (is_cast_op[opc])
    return QUILL_OP_QCLASS_CAST;
  if (quill_op_has_flag(op, QUILL_OPF_CONSTANT))
    return QUILL_OP_QCLASS_CONSTANT;
  if (quill_op_has_flag(op, QUILL_OPF_TERMINATOR))
    return QUILL_OP_QCLASS_OTHER;
  if (quill_op_has_quant_types(op))
    return QUILL_OP_QCLASS_QUANTIZED;
  unsigned n = quill_op_num_operands(op);
  for (unsigned i = 0; i < n; i++)
    if (is_quant_weight(quill_op_operand(op, i)))
      return QUILL_OP_QCLASS_QUANTIZED;
  bool dq_in = false;
  for (unsigned i = 0; i < n; i++) {
    const quill_value *v = quill_op_operand(op, i);
    const quill_op *d = quill_value_def(v);
    if (is_float_constant(v))
      return QUILL_OP_QCLASS_FLOAT;
    dq_in |= d && is_quant_cast(d, false);
  }
  if (!dq_in || !quill_op_num_results(op))
    return QUILL_OP_QCLASS_FLOAT;
  const quill_value *y = quill_op_result(op, 0);
  if (!quill_value_has_uses(y))
    return QUILL_OP_QCLASS_FLOAT;
  for (quill_use *u = quill_value_first_use(y); u; u = quill_use_next(u))
    if (!is_quant_cast(quill_use_user(u), true))
      return QUILL_OP_QCLASS_FLOAT;
  return QUILL_OP_QCLASS_QUANTIZED;
}

/* A constant, or a dequantize of a constant: drawn inside its users. */
static bool is_folded(const quill_op *op) {
  if (quill_op_has_flag(op, QUILL_OPF_CONSTANT))
    return true;
  if (quill_op_opcode(op) != QUILL_OP_DEQUANTIZE ||
      quill_op_num_operands(op) != 1)
    return false;
  const quill_op *d = quill_value_def(quill_op_operand(op, 0));
  return d && quill_op_has_flag(d, QUILL_OPF_CONSTANT);
}

/* ---- text helpers ------------------------------------------------------------- */

/* "1x16x8x8xi8 0.01269:-128", "16x1x3x3xi8 per-axis(16)", "1x10xf32". */
static void put_type(quill_strbuf *sb, const quill_type *t) {
  if (!t) {
    quill_strbuf_puts(sb, "?");
    return;
  }
  const quill_type *e = t;
  if (quill_type_is_tensor(t)) {
    for (unsigned i = 0; i < quill_type_rank(t); i++) {
      int64_t d = quill_type_dim(t, i);
      if (d == QUILL_DIM_DYNAMIC)
        quill_strbuf_puts(sb, "?x");
      else
        quill_strbuf_printf(sb, "%lldx", (long long)d);
    }
    e = quill_type_elem(t);
  }
  if (!quill_type_is_quant(e)) {
    if (quill_type_is_scalar(e))
      quill_strbuf_puts(sb, quill_type_scalar_name(quill_type_kind_of(e)));
    else
      quill_type_print(e, sb);
    return;
  }
  quill_strbuf_puts(
      sb, quill_type_scalar_name(quill_type_kind_of(quill_type_quant_storage(e))));
  if (quill_type_quant_axis_of(e) >= 0)
    quill_strbuf_printf(sb, " per-axis(%zu)", quill_type_quant_num_params(e));
  else
    quill_strbuf_printf(sb, " %.4g:%lld", quill_type_quant_scales(e)[0],
                        (long long)quill_type_quant_zero_points(e)[0]);
}

/* One label line for a constant operand i (folded into its user). */
static void put_const_line(quill_strbuf *sb, unsigned i, const quill_op *def) {
  bool dq = quill_op_opcode(def) == QUILL_OP_DEQUANTIZE;
  const quill_op *c = dq ? quill_value_def(quill_op_operand(def, 0)) : def;
  const quill_attr *a = quill_op_attr(c, "value");
  quill_strbuf_printf(sb, "\n#%u const ", i);
  put_type(sb, quill_op_num_results(c) ? quill_value_type(quill_op_result(c, 0))
                                       : NULL);
  if (a && quill_attr_kind_of(a) == QUILL_ATTR_DENSE) {
    int64_t n = quill_type_num_elements(quill_attr_dense_type(a));
    if (n >= 1 && n <= 4) {
      quill_strbuf_puts(sb, " = [");
      for (int64_t k = 0; k < n; k++)
        quill_strbuf_printf(sb, "%s%g", k ? ", " : "",
                            quill_attr_dense_get_f64(a, (size_t)k));
      quill_strbuf_putc(sb, ']');
    }
  }
  if (dq)
    quill_strbuf_puts(sb, " (dequantized)");
}

/* Write raw text as a DOT quoted string. */
static void put_dot_string(quill_strbuf *sb, const char *s) {
  quill_strbuf_putc(sb, '"');
  for (; *s; s++) {
    if (*s == '"' || *s == '\\')
      quill_strbuf_putc(sb, '\\');
    if (*s == '\n')
      quill_strbuf_puts(sb, "\\n");
    else
      quill_strbuf_putc(sb, *s);
  }
  quill_strbuf_putc(sb, '"');
}

/* ---- the walk ------------------------------------------------------------------ */

static bool graph_has_quant(const quill_graph *g) {
  QUILL_GRAPH_FOREACH(g, op) {
    quill_op_qclass c = quill_op_quant_class(op);
    if (c == QUILL_OP_QCLASS_QUANTIZED || c == QUILL_OP_QCLASS_CAST)
      return true;
  }
  return false;
}

static const char *fill_of(const quill_op *op, bool quant_graph,
                           const quill_dot_options *o) {
  quill_op_qclass c = o && o->classify ? o->classify(o->note_ud, op)
                                       : quill_op_quant_class(op);
  switch (c) {
  case QUILL_OP_QCLASS_QUANTIZED:
    return "#9ecae1";
  case QUILL_OP_QCLASS_CAST:
    return "#e5e5e5";
  case QUILL_OP_QCLASS_FLOAT:
    return quant_graph ? "#fdae6b" : "white";
  default:
    return "white";
  }
}

static void put_node_id(quill_strbuf *sb, unsigned gi, const quill_value *v) {
  const quill_op *d = quill_value_def(v);
  if (d)
    quill_strbuf_printf(sb, "g%u_o%u", gi, (unsigned)quill_op_id(d));
  else
    quill_strbuf_printf(sb, "g%u_a%u", gi, quill_value_index(v));
}

static void print_graph(const quill_graph *g, unsigned gi, quill_strbuf *sb,
                        quill_strbuf *tmp, const quill_dot_options *o) {
  bool quant = graph_has_quant(g);
  for (unsigned i = 0; i < quill_graph_num_args(g); i++) {
    const quill_value *a = quill_graph_arg(g, i);
    const char *name = quill_value_name(a);
    quill_strbuf_clear(tmp);
    if (name)
      quill_strbuf_printf(tmp, "%%%s", name);
    else
      quill_strbuf_printf(tmp, "%%arg%u", i);
    quill_strbuf_printf(sb, "  g%u_a%u [shape=ellipse, label=", gi, i);
    put_dot_string(sb, quill_strbuf_str(tmp));
    quill_strbuf_puts(sb, "];\n");
  }
  QUILL_GRAPH_FOREACH(g, op) {
    if (is_folded(op))
      continue;
    bool ret = quill_op_has_flag(op, QUILL_OPF_TERMINATOR);
    quill_strbuf_clear(tmp);
    quill_strbuf_puts(tmp, quill_op_name(op));
    const quill_attr *act = quill_op_attr(op, "activation");
    if (act && quill_attr_kind_of(act) == QUILL_ATTR_STRING)
      quill_strbuf_printf(tmp, "+%s", quill_attr_string_value(act, NULL));
    if (quill_op_loc(op).name)
      quill_strbuf_printf(tmp, "\n%s", quill_op_loc(op).name);
    for (unsigned i = 0; i < quill_op_num_operands(op); i++) {
      const quill_op *d = quill_value_def(quill_op_operand(op, i));
      if (d && is_folded(d))
        put_const_line(tmp, i, d);
    }
    const char *note = o && o->note ? o->note(o->note_ud, op) : NULL;
    if (note && *note)
      quill_strbuf_printf(tmp, "\n%s", note);
    quill_strbuf_printf(sb, "  g%u_o%u [", gi, (unsigned)quill_op_id(op));
    if (ret)
      quill_strbuf_puts(sb, "shape=ellipse, ");
    else
      quill_strbuf_printf(sb, "fillcolor=\"%s\", ", fill_of(op, quant, o));
    quill_strbuf_puts(sb, "label=");
    put_dot_string(sb, quill_strbuf_str(tmp));
    quill_strbuf_puts(sb, "];\n");
    for (unsigned i = 0; i < quill_op_num_operands(op); i++) {
      const quill_value *v = quill_op_operand(op, i);
      const quill_op *d = quill_value_def(v);
      if (d && is_folded(d))
        continue;
      quill_strbuf_puts(sb, "  ");
      put_node_id(sb, gi, v);
      quill_strbuf_puts(sb, " -> ");
      quill_strbuf_printf(sb, "g%u_o%u [label=", gi, (unsigned)quill_op_id(op));
      quill_strbuf_clear(tmp);
      if (d && quill_op_num_results(d) > 1)
        quill_strbuf_printf(tmp, "#%u ", quill_value_index(v));
      put_type(tmp, quill_value_type(v));
      put_dot_string(sb, quill_strbuf_str(tmp));
      quill_strbuf_puts(sb, "];\n");
    }
  }
}

void quill_dot_print_module(const quill_module *m, quill_strbuf *sb,
                            const quill_dot_options *o) {
  unsigned n = quill_module_num_graphs(m);
  quill_strbuf tmp;
  quill_strbuf_init(&tmp, quill_module_context(m));
  quill_strbuf_puts(sb, "digraph ");
  put_dot_string(sb, n == 1 ? quill_graph_name(quill_module_graph(m, 0))
                            : "module");
  quill_strbuf_puts(sb, " {\n"
                        "  node [shape=box, style=\"rounded,filled\", "
                        "fillcolor=white, fontname=\"Helvetica\", "
                        "fontsize=11];\n"
                        "  edge [fontname=\"Helvetica\", fontsize=9];\n");
  for (unsigned gi = 0; gi < n; gi++) {
    const quill_graph *g = quill_module_graph(m, gi);
    if (n > 1) {
      quill_strbuf_printf(sb, "  subgraph cluster_%u {\n  label=", gi);
      quill_strbuf_clear(&tmp);
      quill_strbuf_printf(&tmp, "@%s", quill_graph_name(g));
      put_dot_string(sb, quill_strbuf_str(&tmp));
      quill_strbuf_puts(sb, ";\n");
    }
    print_graph(g, gi, sb, &tmp, o);
    if (n > 1)
      quill_strbuf_puts(sb, "  }\n");
  }
  quill_strbuf_puts(sb, "}\n");
  if (quill_strbuf_failed(&tmp))
    sb->failed = true;
  quill_strbuf_free(&tmp);
}

/* ---- files ---------------------------------------------------------------------- */

/* A temporary file in $TMPDIR (or /tmp) named quill-dot-XXXXXX: *tmp
 * holds its path; the descriptor, or -1 after a diagnostic at loc. */
static int make_temp(quill_context *ctx, quill_loc loc, quill_strbuf *tmp) {
  const char *dir = getenv("TMPDIR");
  quill_strbuf_init(tmp, ctx);
  quill_strbuf_printf(tmp, "%s/quill-dot-XXXXXX", dir && *dir ? dir : "/tmp");
  if (quill_strbuf_failed(tmp))
    return -1;
  int fd = mkstemp(tmp->data);
  if (fd < 0)
    quill_error(ctx, loc,
                "cannot write SVG: cannot write a temporary file in %s: %s",
                dir && *dir ? dir : "/tmp", strerror(errno));
  return fd;
}

/* Run `PROG -Tsvg -o SVGTMP DOTTMP` on the DOT text written to a temporary
 * file (not a pipe: a program that exits early cannot SIGPIPE us), then
 * write the picture to PATH with quill_write_file, so that a failing
 * Graphviz or a full disk leaves no partial PATH. */
static quill_status write_svg(quill_context *ctx, const char *path,
                              const char *prog, const quill_strbuf *sb) {
  quill_loc loc = quill_loc_file(ctx, path, 0, 0);
  quill_strbuf in, out;
  int fd = make_temp(ctx, loc, &in);
  int ofd = fd >= 0 ? make_temp(ctx, loc, &out) : -1;
  if (fd >= 0 && ofd < 0)
    unlink(in.data);
  if (ofd < 0) {
    if (fd >= 0) {
      close(fd);
      quill_strbuf_free(&out);
    }
    bool nomem = quill_strbuf_failed(&in);
    quill_strbuf_free(&in);
    return nomem ? QUILL_ERR_NOMEM : QUILL_ERR_IO;
  }
  close(ofd);
  FILE *f = fdopen(fd, "w");
  bool ok = f && fwrite(quill_strbuf_str(sb), 1, sb->len, f) == sb->len;
  if (f)
    ok = fclose(f) == 0 && ok;
  else
    close(fd);
  quill_status st = QUILL_OK;
  if (!ok) {
    quill_error(ctx, loc, "cannot write SVG: cannot write a temporary file "
                          "'%s': %s",
                in.data, strerror(errno));
    st = QUILL_ERR_IO;
  }
  char *argv[] = {(char *)prog, "-Tsvg", "-o", out.data, in.data, NULL};
  pid_t pid;
  int err = st ? 0 : posix_spawnp(&pid, prog, NULL, NULL, argv, environ);
  if (st) {
    /* diagnosed above */
  } else if (err) {
    quill_error(ctx, loc,
                "cannot write SVG: Graphviz '%s' was not found or cannot run "
                "(%s); install graphviz, or write a .dot file",
                prog, strerror(err));
    st = QUILL_ERR_UNSUPPORTED;
  } else {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
      ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      quill_error(ctx, loc, "cannot write SVG: '%s -Tsvg' failed (%s %d)",
                  prog, WIFEXITED(status) ? "exit status" : "signal",
                  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
      st = QUILL_ERR_IO;
    }
  }
  if (!st) {
    char *svg;
    size_t len, cap;
    bool opened;
    err = quill_read_file(ctx, out.data, 0, &svg, &len, &cap, &opened);
    if (err == ENOMEM) {
      st = QUILL_ERR_NOMEM;
    } else if (err) {
      quill_error(ctx, loc, "cannot write SVG: cannot read '%s': %s",
                  out.data, quill_read_strerror(err, 0));
      st = QUILL_ERR_IO;
    } else {
      st = quill_write_file(ctx, path, svg, len);
      quill_free(ctx, svg, cap);
    }
  }
  unlink(in.data);
  unlink(out.data);
  quill_strbuf_free(&in);
  quill_strbuf_free(&out);
  return st;
}

quill_status quill_dot_write_file(const quill_module *m, const char *path,
                                  const quill_dot_options *o) {
  quill_context *ctx = quill_module_context(m);
  quill_strbuf sb;
  quill_strbuf_init(&sb, ctx);
  quill_dot_print_module(m, &sb, o);
  quill_status st = QUILL_ERR_NOMEM;
  if (!quill_strbuf_failed(&sb)) {
    size_t n = strlen(path);
    if (n >= 4 && !strcmp(path + n - 4, ".svg"))
      st = write_svg(ctx, path,
                     o && o->dot_program && *o->dot_program ? o->dot_program
                                                            : "dot",
                     &sb);
    else
      st = quill_write_file(ctx, path, quill_strbuf_str(&sb), sb.len);
  }
  quill_strbuf_free(&sb);
  return st;
}
