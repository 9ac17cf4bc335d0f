/*
 * quant_report_write.c - the report as text (an aligned table), JSON (with
 * jansson) and CSV; HTML is in quant_report_html.c. Field names and
 * columns are documented in docs/report.md and must stay stable: scripts
 * read them.
 *
 * Text: every cell of the table is formatted first, then the columns are
 * padded to their widest cell (the last column is not padded).
 */
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "passes/quant_report_impl.h"

bool quill_report_format_parse(const char *name, quill_report_format *out) {
  static const char *const names[] = {
      [QUILL_REPORT_TEXT] = "text",
      [QUILL_REPORT_JSON] = "json",
      [QUILL_REPORT_CSV] = "csv",
      [QUILL_REPORT_HTML] = "html",
  };
  for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!strcmp(name, names[i])) {
      *out = (quill_report_format)i;
      return true;
    }
  return false;
}

void quill_report_put_db(quill_strbuf *sb, const quill_sqnr *s) {
  if (!s->count) {
    quill_strbuf_putc(sb, '-');
    return;
  }
  double db = quill_sqnr_db(s);
  if (isinf(db))
    quill_strbuf_puts(sb, db > 0 ? "inf" : "-inf");
  else
    quill_strbuf_printf(sb, "%.2f", db);
}

static void scale_range(const quill_type *q, double *lo, double *hi) {
  const double *s = quill_type_quant_scales(q);
  *lo = *hi = s[0];
  for (size_t i = 1; i < quill_type_quant_num_params(q); i++) {
    *lo = s[i] < *lo ? s[i] : *lo;
    *hi = s[i] > *hi ? s[i] : *hi;
  }
}

static const char *storage_name(const quill_type *q) {
  return quill_type_scalar_name(
      quill_type_kind_of(quill_type_quant_storage(q)));
}

void quill_report_put_quant(quill_strbuf *sb, const quill_type *q) {
  if (!q) {
    quill_strbuf_putc(sb, '-');
    return;
  }
  if (quill_type_quant_axis_of(q) < 0) {
    quill_strbuf_printf(sb, "%s %.4g:%lld", storage_name(q),
                        quill_type_quant_scales(q)[0],
                        (long long)quill_type_quant_zero_points(q)[0]);
    return;
  }
  double lo, hi;
  scale_range(q, &lo, &hi);
  quill_strbuf_printf(sb, "%s per-axis(%zu) %.3g..%.3g", storage_name(q),
                      quill_type_quant_num_params(q), lo, hi);
}

/* ---- text --------------------------------------------------------------------- */

enum { NCOLS = 8 };
static const char *const text_head[NCOLS] = {
    "name", "opcode", "status", "output", "weight", "w SQNR", "SQNR dB", "why"};
static const bool right_align[NCOLS] = {[5] = true, [6] = true};

/* The cells of row i, each NUL-terminated inside `sb`; offsets in off. */
static void row_cells(const quill_report_row *row, quill_strbuf *sb,
                      size_t *off) {
  off[0] = sb->len;
  quill_strbuf_puts(sb, row->name);
  quill_strbuf_putc(sb, 0);
  off[1] = sb->len;
  quill_strbuf_puts(sb, row->opcode);
  if (row->activation)
    quill_strbuf_printf(sb, "+%s", row->activation);
  quill_strbuf_putc(sb, 0);
  off[2] = sb->len;
  quill_strbuf_puts(sb, quill_report_status_name(row->status));
  quill_strbuf_putc(sb, 0);
  off[3] = sb->len;
  quill_report_put_quant(sb, row->output_quant);
  quill_strbuf_putc(sb, 0);
  off[4] = sb->len;
  quill_report_put_quant(sb, row->weight_quant);
  quill_strbuf_putc(sb, 0);
  off[5] = sb->len;
  quill_report_put_db(sb, &row->weight_sqnr);
  quill_strbuf_putc(sb, 0);
  off[6] = sb->len;
  quill_report_put_db(sb, &row->sqnr);
  quill_strbuf_putc(sb, 0);
  off[7] = sb->len;
  quill_strbuf_puts(sb, row->reason ? row->reason : "");
  quill_strbuf_putc(sb, 0);
}

static void put_padded(quill_strbuf *sb, const char *s, size_t w, bool right,
                       bool last) {
  size_t n = strlen(s);
  if (right)
    for (size_t i = n; i < w; i++)
      quill_strbuf_putc(sb, ' ');
  quill_strbuf_puts(sb, s);
  if (!right && !last)
    for (size_t i = n; i < w; i++)
      quill_strbuf_putc(sb, ' ');
}

static void write_summary(const quill_quant_report *r, quill_strbuf *sb) {
  /* what equalize / bias-correction did, one indented line each */
  const char *log = quill_strbuf_str(&r->accuracy_log);
  if (*log)
    quill_strbuf_puts(sb, "accuracy passes:\n");
  while (*log) {
    const char *nl = strchr(log, '\n');
    size_t n = nl ? (size_t)(nl - log) : strlen(log);
    quill_strbuf_puts(sb, "  ");
    quill_strbuf_append(sb, log, n);
    quill_strbuf_putc(sb, '\n');
    log += n + (nl != NULL);
  }
  for (size_t i = 0; i < r->nouts; i++) {
    quill_strbuf_printf(sb, "output %s: SQNR ", r->outs[i].name);
    quill_report_put_db(sb, &r->outs[i].sqnr);
    quill_strbuf_puts(sb, " dB");
    if (r->compiled) {
      quill_strbuf_puts(sb, "; compiled vs reference form: SQNR ");
      quill_report_put_db(sb, &r->outs[i].compiled);
      quill_strbuf_printf(sb, " dB, %llu of %llu values differ",
                          (unsigned long long)r->outs[i].compiled_diff,
                          (unsigned long long)r->outs[i].compiled.count);
    }
    quill_strbuf_puts(sb, "\n");
  }
  if (r->compiled_why)
    quill_strbuf_printf(sb, "compiled: not measured (%s)\n", r->compiled_why);
  for (size_t i = 0; i < r->nrows; i++)
    if (r->rows[i].row.bias_saturated)
      quill_strbuf_printf(sb,
                          "warning: %s: int32 bias saturated in %zu values "
                          "(the quantized op loses it)\n",
                          r->rows[i].row.name, r->rows[i].row.bias_saturated);
  const quill_report_accuracy *a = &r->acc;
  if (a->count) {
    quill_strbuf_printf(sb,
                        "accuracy over %zu labelled rows: float %.4f (%zu), "
                        "quantized %.4f (%zu), agreement %.4f",
                        a->count, (double)a->float_correct / a->count,
                        a->float_correct, (double)a->quant_correct / a->count,
                        a->quant_correct, (double)a->agree / a->count);
    if (a->compiled)
      quill_strbuf_printf(sb, ", compiled %.4f (%zu)",
                          (double)a->compiled_correct / a->count,
                          a->compiled_correct);
    quill_strbuf_puts(sb, "\n");
  }
}

static quill_status write_text(const quill_quant_report *r, const char *model,
                               quill_strbuf *sb) {
  quill_context *ctx = r->ctx;
  quill_strbuf cells;
  quill_strbuf_init(&cells, ctx);
  size_t *off = quill_calloc(ctx, (r->nrows + 1) * NCOLS, sizeof *off);
  if (!off)
    return QUILL_ERR_NOMEM;
  size_t w[NCOLS];
  for (unsigned c = 0; c < NCOLS; c++)
    w[c] = strlen(text_head[c]);
  for (size_t i = 0; i < r->nrows; i++)
    row_cells(&r->rows[i].row, &cells, off + i * NCOLS);
  quill_status st = quill_strbuf_failed(&cells) ? QUILL_ERR_NOMEM : QUILL_OK;
  for (size_t i = 0; i < r->nrows && !st; i++)
    for (unsigned c = 0; c < NCOLS; c++) {
      size_t n = strlen(cells.data + off[i * NCOLS + c]);
      w[c] = n > w[c] ? n : w[c];
    }
  if (!st) {
    quill_strbuf_printf(sb, "Quill quantization report: %s\n",
                        model ? model : "(model)");
    quill_strbuf_printf(sb, "backend %s, keep-float %s, SQNR over %zu "
                            "calibration samples\n\n",
                        quill_backend_name(r->b),
                        r->keep_float ? r->keep_float : "-", r->samples);
    for (unsigned c = 0; c < NCOLS; c++) {
      put_padded(sb, text_head[c], w[c], right_align[c], c == NCOLS - 1);
      quill_strbuf_puts(sb, c == NCOLS - 1 ? "\n" : "  ");
    }
    for (size_t i = 0; i < r->nrows; i++)
      for (unsigned c = 0; c < NCOLS; c++) {
        put_padded(sb, cells.data + off[i * NCOLS + c], w[c], right_align[c],
                   c == NCOLS - 1);
        quill_strbuf_puts(sb, c == NCOLS - 1 ? "\n" : "  ");
      }
    quill_strbuf_putc(sb, '\n');
    write_summary(r, sb);
  }
  quill_free(ctx, off, (r->nrows + 1) * NCOLS * sizeof *off);
  quill_strbuf_free(&cells);
  return st;
}

/* ---- JSON ------------------------------------------------------------------------ */

/* A measured SQNR: a number, "inf" / "-inf", or null if not measured. */
static json_t *json_db(const quill_sqnr *s) {
  if (!s->count)
    return json_null();
  double db = quill_sqnr_db(s);
  if (isinf(db))
    return json_string(db > 0 ? "inf" : "-inf");
  return json_real(db);
}

static json_t *json_str_or_null(const char *s) {
  return s ? json_string(s) : json_null();
}

static json_t *json_quant(const quill_type *q, bool weight) {
  if (!q)
    return json_null();
  json_t *o = json_object();
  json_object_set_new(o, "dtype", json_string(storage_name(q)));
  json_object_set_new(o, "qmin", json_integer(quill_type_quant_qmin(q)));
  json_object_set_new(o, "qmax", json_integer(quill_type_quant_qmax(q)));
  json_object_set_new(o, "axis", json_integer(quill_type_quant_axis_of(q)));
  size_t n = quill_type_quant_num_params(q);
  if (weight) {
    double lo, hi;
    scale_range(q, &lo, &hi);
    json_object_set_new(o, "channels", json_integer((json_int_t)n));
    json_object_set_new(o, "scale_min", json_real(lo));
    json_object_set_new(o, "scale_max", json_real(hi));
  } else if (quill_type_quant_axis_of(q) < 0) {
    json_object_set_new(o, "scale", json_real(quill_type_quant_scales(q)[0]));
    json_object_set_new(o, "zero_point",
                        json_integer(quill_type_quant_zero_points(q)[0]));
  } else {
    json_t *s = json_array(), *z = json_array();
    for (size_t i = 0; i < n; i++) {
      json_array_append_new(s, json_real(quill_type_quant_scales(q)[i]));
      json_array_append_new(z,
                            json_integer(quill_type_quant_zero_points(q)[i]));
    }
    json_object_set_new(o, "scales", s);
    json_object_set_new(o, "zero_points", z);
  }
  return o;
}

static json_t *json_sums(const quill_sqnr *s, json_t *o) {
  json_object_set_new(o, "sqnr_db", json_db(s));
  json_object_set_new(o, "signal", s->count ? json_real(s->signal) : json_null());
  json_object_set_new(o, "noise", s->count ? json_real(s->noise) : json_null());
  return o;
}

static quill_status write_json(const quill_quant_report *r, const char *model,
                               quill_strbuf *sb) {
  json_t *root = json_object(), *rows = json_array(), *outs = json_array(),
         *keep = json_array();
  json_object_set_new(root, "quill_report", json_integer(1));
  json_object_set_new(root, "model", json_str_or_null(model));
  json_object_set_new(root, "backend", json_string(quill_backend_name(r->b)));
  for (size_t i = 0; i < r->num_keep; i++)
    json_array_append_new(keep, json_string(r->keep[i]));
  json_object_set_new(root, "keep_float", keep);
  json_object_set_new(root, "samples", json_integer((json_int_t)r->samples));
  for (size_t i = 0; i < r->nrows; i++) {
    const quill_report_row *row = &r->rows[i].row;
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(row->name));
    json_object_set_new(o, "opcode", json_string(row->opcode));
    json_object_set_new(o, "activation", json_str_or_null(row->activation));
    json_object_set_new(o, "status",
                        json_string(quill_report_status_name(row->status)));
    json_object_set_new(o, "reason", json_str_or_null(row->reason));
    json_object_set_new(o, "fused_into", json_str_or_null(row->fused_into));
    json_object_set_new(o, "output", json_quant(row->output_quant, false));
    json_object_set_new(o, "weight", json_quant(row->weight_quant, true));
    json_object_set_new(o, "weight_sqnr_db", json_db(&row->weight_sqnr));
    json_sums(&row->sqnr, o);
    json_object_set_new(o, "bias_saturated",
                        json_integer((json_int_t)row->bias_saturated));
    json_array_append_new(rows, o);
  }
  json_object_set_new(root, "rows", rows);
  for (size_t i = 0; i < r->nouts; i++) {
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(r->outs[i].name));
    json_sums(&r->outs[i].sqnr, o);
    if (r->compiled) {
      json_t *c = json_object();
      json_object_set_new(c, "differing",
                          json_integer((json_int_t)r->outs[i].compiled_diff));
      json_object_set_new(c, "count",
                          json_integer((json_int_t)r->outs[i].compiled.count));
      json_object_set_new(o, "compiled", json_sums(&r->outs[i].compiled, c));
    } else {
      json_object_set_new(o, "compiled", json_null());
    }
    json_array_append_new(outs, o);
  }
  json_object_set_new(root, "outputs", outs);
  json_object_set_new(root, "compiled_note",
                      r->compiled_why ? json_string(r->compiled_why)
                                      : json_null());
  const quill_report_accuracy *a = &r->acc;
  if (a->count) {
    json_t *o = json_object();
    json_object_set_new(o, "count", json_integer((json_int_t)a->count));
    json_object_set_new(o, "float", json_real((double)a->float_correct / a->count));
    json_object_set_new(o, "quantized",
                        json_real((double)a->quant_correct / a->count));
    json_object_set_new(o, "agreement", json_real((double)a->agree / a->count));
    json_object_set_new(o, "float_correct",
                        json_integer((json_int_t)a->float_correct));
    json_object_set_new(o, "quantized_correct",
                        json_integer((json_int_t)a->quant_correct));
    json_object_set_new(o, "agree", json_integer((json_int_t)a->agree));
    json_object_set_new(o, "compiled",
                        a->compiled ? json_real((double)a->compiled_correct /
                                                a->count)
                                    : json_null());
    json_object_set_new(root, "accuracy", o);
  } else {
    json_object_set_new(root, "accuracy", json_null());
  }
  /* last, so the fields before keep their places for scripts */
  json_t *acc = json_array();
  for (const char *log = quill_strbuf_str(&r->accuracy_log); *log;) {
    const char *nl = strchr(log, '\n');
    size_t n = nl ? (size_t)(nl - log) : strlen(log);
    json_array_append_new(acc, json_stringn(log, n));
    log += n + (nl != NULL);
  }
  json_object_set_new(root, "accuracy_passes", acc);
  char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  json_decref(root);
  if (!text)
    return QUILL_ERR_NOMEM;
  quill_strbuf_puts(sb, text);
  quill_strbuf_putc(sb, '\n');
  free(text);
  return QUILL_OK;
}

/* ---- CSV ------------------------------------------------------------------------------ */

static const char csv_head[] =
    "name,opcode,activation,status,reason,fused_into,dtype,scale,zero_point,"
    "weight_dtype,weight_channels,weight_scale_min,weight_scale_max,"
    "weight_sqnr_db,sqnr_db\n";

/* A field, quoted (RFC 4180) when it holds a comma, quote or newline. */
static void csv_field(quill_strbuf *sb, const char *s, bool last) {
  if (s && strpbrk(s, ",\"\n\r")) {
    quill_strbuf_putc(sb, '"');
    for (; *s; s++) {
      if (*s == '"')
        quill_strbuf_putc(sb, '"');
      quill_strbuf_putc(sb, *s);
    }
    quill_strbuf_putc(sb, '"');
  } else if (s) {
    quill_strbuf_puts(sb, s);
  }
  quill_strbuf_putc(sb, last ? '\n' : ',');
}

static void csv_db(quill_strbuf *sb, const quill_sqnr *s, bool last) {
  if (s->count) {
    double db = quill_sqnr_db(s);
    if (isinf(db))
      quill_strbuf_puts(sb, db > 0 ? "inf" : "-inf");
    else
      quill_strbuf_printf(sb, "%.4f", db);
  }
  quill_strbuf_putc(sb, last ? '\n' : ',');
}

static void csv_row(quill_strbuf *sb, const quill_report_row *row) {
  csv_field(sb, row->name, false);
  csv_field(sb, row->opcode, false);
  csv_field(sb, row->activation, false);
  csv_field(sb, quill_report_status_name(row->status), false);
  csv_field(sb, row->reason, false);
  csv_field(sb, row->fused_into, false);
  const quill_type *q = row->output_quant;
  csv_field(sb, q ? storage_name(q) : NULL, false);
  if (q && quill_type_quant_axis_of(q) < 0)
    quill_strbuf_printf(sb, "%.17g,%lld,", quill_type_quant_scales(q)[0],
                        (long long)quill_type_quant_zero_points(q)[0]);
  else
    quill_strbuf_puts(sb, ",,");
  const quill_type *w = row->weight_quant;
  csv_field(sb, w ? storage_name(w) : NULL, false);
  if (w) {
    double lo, hi;
    scale_range(w, &lo, &hi);
    quill_strbuf_printf(sb, "%zu,%.17g,%.17g,", quill_type_quant_num_params(w),
                        lo, hi);
  } else {
    quill_strbuf_puts(sb, ",,,");
  }
  csv_db(sb, &row->weight_sqnr, false);
  csv_db(sb, &row->sqnr, true);
}

static quill_status write_csv(const quill_quant_report *r, quill_strbuf *sb) {
  quill_strbuf_puts(sb, csv_head);
  for (size_t i = 0; i < r->nrows; i++)
    csv_row(sb, &r->rows[i].row);
  for (size_t i = 0; i < r->nouts; i++) {
    csv_field(sb, r->outs[i].name, false);
    quill_strbuf_puts(sb, "output,,output,,,,,,,,,,,");
    csv_db(sb, &r->outs[i].sqnr, true);
  }
  return QUILL_OK;
}

quill_status quill_quant_report_write(const quill_quant_report *r,
                                      quill_report_format f,
                                      const char *model, quill_strbuf *sb) {
  quill_status st = QUILL_OK;
  switch (f) {
  case QUILL_REPORT_TEXT:
    st = write_text(r, model, sb);
    break;
  case QUILL_REPORT_JSON:
    st = write_json(r, model, sb);
    break;
  case QUILL_REPORT_CSV:
    st = write_csv(r, sb);
    break;
  case QUILL_REPORT_HTML:
    quill_quant_report_write_html(r, model, sb);
    break;
  }
  return st ? st : quill_strbuf_failed(sb) ? QUILL_ERR_NOMEM : QUILL_OK;
}
