/*
 * quant_report_html.c - the report as one self-contained HTML page: inline
 * CSS, an inline SVG bar chart of each row's SQNR, and the table. No
 * JavaScript, nothing fetched from the network.
 *
 *   ┌ summary: model, backend, samples, outputs' SQNR, accuracy ┐
 *   │ chart:  name  ██████████████████ 35.10                       │
 *   │         name  ████████ 14.02      (kept-float rows orange)   │
 *   └ table:  the text report's columns, float rows highlighted   ┘
 *
 * Bars are proportional to the SQNR on a 0..max scale (max: the largest
 * finite value rounded up to 10 dB, at least 10); an infinite SQNR (exact)
 * fills the scale and reads "inf"; negative values draw no bar.
 */
#include <math.h>
#include <string.h>

#include "passes/quant_report_impl.h"

static void put_html(quill_strbuf *sb, const char *s) {
  for (; s && *s; s++) {
    switch (*s) {
    case '&':
      quill_strbuf_puts(sb, "&amp;");
      break;
    case '<':
      quill_strbuf_puts(sb, "&lt;");
      break;
    case '>':
      quill_strbuf_puts(sb, "&gt;");
      break;
    case '"':
      quill_strbuf_puts(sb, "&quot;");
      break;
    default:
      quill_strbuf_putc(sb, *s);
    }
  }
}

static const char css[] =
    "body{font-family:Helvetica,Arial,sans-serif;margin:2em;color:#222}"
    "h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.5em}"
    "table{border-collapse:collapse;font-size:0.85em}"
    "th,td{border-bottom:1px solid #ddd;padding:3px 8px;text-align:left;"
    "white-space:nowrap}"
    "td.num{text-align:right;font-variant-numeric:tabular-nums}"
    "tr.float td{background:#fde0c5}tr.fused td,tr.missing td{color:#888}"
    "dl{display:grid;grid-template-columns:max-content auto;gap:2px 12px}"
    "dt{font-weight:bold}dd{margin:0}"
    ".legend span{display:inline-block;width:12px;height:12px;"
    "margin:0 4px 0 12px;vertical-align:middle}"
    "svg text{font-size:11px;font-family:Helvetica,Arial,sans-serif}";

static void put_db_html(quill_strbuf *sb, const quill_sqnr *s) {
  quill_report_put_db(sb, s);
}

/* The scale of the chart: the largest finite SQNR, rounded up to 10 dB. */
static double chart_max(const quill_quant_report *r) {
  double m = 10;
  for (size_t i = 0; i < r->nrows; i++) {
    const quill_sqnr *s = &r->rows[i].row.sqnr;
    double db = s->count ? quill_sqnr_db(s) : 0;
    if (isfinite(db) && db > m)
      m = db;
  }
  return ceil(m / 10) * 10;
}

static void write_chart(const quill_quant_report *r, quill_strbuf *sb) {
  const double label_w = 280, bar_w = 480, row_h = 18, top = 22;
  size_t n = 0;
  for (size_t i = 0; i < r->nrows; i++)
    n += r->rows[i].row.sqnr.count > 0;
  double max = chart_max(r);
  double h = top + row_h * (double)n + 8;
  quill_strbuf_printf(sb,
                      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
                      "height=\"%.0f\" role=\"img\" aria-label=\"SQNR per "
                      "op\">\n",
                      label_w + bar_w + 70, h);
  for (int t = 0; t <= 10; t++) {
    double x = label_w + bar_w * t / 10.0;
    quill_strbuf_printf(sb,
                        "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" "
                        "stroke=\"#e0e0e0\"/><text x=\"%.1f\" y=\"12\" "
                        "text-anchor=\"middle\">%g</text>\n",
                        x, top - 4, x, h - 8, x, max * t / 10.0);
  }
  size_t k = 0;
  for (size_t i = 0; i < r->nrows; i++) {
    const quill_report_row *row = &r->rows[i].row;
    if (!row->sqnr.count)
      continue;
    double y = top + row_h * (double)k++;
    double db = quill_sqnr_db(&row->sqnr);
    double w = isinf(db) ? (db > 0 ? bar_w : 0)
               : db <= 0 ? 0
                         : bar_w * (db > max ? 1 : db / max);
    bool flt = row->status == QUILL_REPORT_FLOAT;
    quill_strbuf_puts(sb, "<g><title>");
    put_html(sb, row->name);
    quill_strbuf_printf(sb, " (%s, %s): ", row->opcode,
                        quill_report_status_name(row->status));
    put_db_html(sb, &row->sqnr);
    quill_strbuf_puts(sb, " dB</title>");
    /* Long names keep their tail (the distinctive part). */
    size_t len = strlen(row->name);
    quill_strbuf_printf(sb,
                        "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%s",
                        label_w - 6, y + 12, len > 42 ? "..." : "");
    put_html(sb, len > 42 ? row->name + len - 39 : row->name);
    quill_strbuf_printf(sb,
                        "</text><rect class=\"%s\" x=\"%.0f\" y=\"%.1f\" "
                        "width=\"%.1f\" height=\"%.0f\" fill=\"%s\"/>"
                        "<text x=\"%.1f\" y=\"%.1f\">",
                        flt ? "float" : "quantized", label_w, y + 2, w,
                        row_h - 4, flt ? "#fd8d3c" : "#3182bd",
                        label_w + w + 4, y + 12);
    put_db_html(sb, &row->sqnr);
    quill_strbuf_puts(sb, "</text></g>\n");
  }
  quill_strbuf_puts(sb, "</svg>\n");
}

static void cell(quill_strbuf *sb, const char *cls) {
  quill_strbuf_printf(sb, "<td%s%s%s>", cls ? " class=\"" : "", cls ? cls : "",
                      cls ? "\"" : "");
}

static void write_table(const quill_quant_report *r, quill_strbuf *sb) {
  quill_strbuf_puts(sb, "<table>\n<tr><th>#</th><th>name</th><th>opcode</th>"
                        "<th>status</th><th>output</th><th>weight</th>"
                        "<th>weight SQNR dB</th><th>SQNR dB</th><th>why</th>"
                        "</tr>\n");
  for (size_t i = 0; i < r->nrows; i++) {
    const quill_report_row *row = &r->rows[i].row;
    quill_strbuf_printf(sb, "<tr class=\"%s\"><td class=\"num\">%zu</td>",
                        quill_report_status_name(row->status), i);
    cell(sb, NULL);
    put_html(sb, row->name);
    quill_strbuf_puts(sb, "</td>");
    cell(sb, NULL);
    put_html(sb, row->opcode);
    if (row->activation) {
      quill_strbuf_putc(sb, '+');
      put_html(sb, row->activation);
    }
    quill_strbuf_puts(sb, "</td>");
    cell(sb, NULL);
    quill_strbuf_printf(sb, "%s</td>", quill_report_status_name(row->status));
    cell(sb, NULL);
    quill_report_put_quant(sb, row->output_quant);
    quill_strbuf_puts(sb, "</td>");
    cell(sb, NULL);
    quill_report_put_quant(sb, row->weight_quant);
    quill_strbuf_puts(sb, "</td>");
    cell(sb, "num");
    put_db_html(sb, &row->weight_sqnr);
    quill_strbuf_puts(sb, "</td>");
    cell(sb, "num");
    put_db_html(sb, &row->sqnr);
    quill_strbuf_puts(sb, "</td>");
    cell(sb, NULL);
    put_html(sb, row->reason);
    quill_strbuf_puts(sb, "</td></tr>\n");
  }
  quill_strbuf_puts(sb, "</table>\n");
}

void quill_quant_report_write_html(const quill_quant_report *r,
                                   const char *model, quill_strbuf *sb) {
  quill_strbuf_puts(sb, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
                        "<meta charset=\"utf-8\">\n<title>Quill quantization "
                        "report: ");
  put_html(sb, model ? model : "model");
  quill_strbuf_printf(sb, "</title>\n<style>%s</style>\n</head>\n<body>\n",
                      css);
  quill_strbuf_puts(sb, "<h1>Quill quantization report</h1>\n<dl>\n"
                        "<dt>model</dt><dd>");
  put_html(sb, model ? model : "-");
  quill_strbuf_puts(sb, "</dd>\n<dt>backend</dt><dd>");
  put_html(sb, quill_backend_name(r->b));
  quill_strbuf_puts(sb, "</dd>\n<dt>keep-float</dt><dd>");
  put_html(sb, r->keep_float ? r->keep_float : "-");
  quill_strbuf_printf(sb, "</dd>\n<dt>samples</dt><dd>%zu calibration "
                          "samples (SQNR summed over all)</dd>\n",
                      r->samples);
  for (size_t i = 0; i < r->nouts; i++) {
    quill_strbuf_puts(sb, "<dt>output ");
    put_html(sb, r->outs[i].name);
    quill_strbuf_puts(sb, "</dt><dd>SQNR ");
    put_db_html(sb, &r->outs[i].sqnr);
    quill_strbuf_puts(sb, " dB</dd>\n");
  }
  const quill_report_accuracy *a = &r->acc;
  if (a->count)
    quill_strbuf_printf(sb,
                        "<dt>accuracy</dt><dd>float %.4f, quantized %.4f, "
                        "agreement %.4f (%zu labelled rows)</dd>\n",
                        (double)a->float_correct / a->count,
                        (double)a->quant_correct / a->count,
                        (double)a->agree / a->count, a->count);
  quill_strbuf_puts(sb, "</dl>\n<h2>SQNR per op (dB, higher is better)</h2>\n"
                        "<p class=\"legend\"><span style=\"background:#3182bd"
                        "\"></span>quantized<span style=\"background:#fd8d3c"
                        "\"></span>kept float</p>\n");
  write_chart(r, sb);
  quill_strbuf_puts(sb, "<h2>Ops</h2>\n");
  write_table(r, sb);
  quill_strbuf_puts(sb, "</body>\n</html>\n");
}
