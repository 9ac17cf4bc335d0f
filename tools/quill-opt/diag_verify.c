/*
 * diag_verify.c - quill-opt --verify-diagnostics, after MLIR's.
 *
 * A test states the diagnostics it expects in comments:
 *
 *   // expected-error@+1 {{unknown op 'foo'}}     on the next line
 *   %0 = foo %x : tensor<f32>
 *   %1 = bar %x // expected-error {{...}}          on this line
 *   // expected-note@-3 {{previous definition}}   three lines up
 *   // expected-error@unknown {{...}}             a diagnostic without a line
 *
 * The handler installed on the context records every diagnostic instead of
 * printing it. After each chunk, each expectation must match a distinct
 * recorded diagnostic with the same line and severity whose message
 * contains the expected text; every recorded diagnostic must be expected.
 * Mismatches are printed to stderr and make the check fail.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/quill-opt/opt.h"

typedef struct recorded {
  quill_loc loc;
  quill_diag_severity sev;
  char *msg;
  bool matched;
} recorded;

struct opt_diag_collector {
  quill_context *ctx;
  recorded *diags;
  size_t n, cap;
  bool oom;
};

static void record(void *ud, quill_loc loc, quill_diag_severity sev,
                   const char *msg) {
  opt_diag_collector *dc = ud;
  if (dc->n == dc->cap) {
    size_t cap = dc->cap ? dc->cap * 2 : 16;
    recorded *nd = realloc(dc->diags, cap * sizeof *nd);
    if (!nd) {
      dc->oom = true;
      return;
    }
    dc->diags = nd;
    dc->cap = cap;
  }
  char *copy = strdup(msg);
  if (!copy) {
    dc->oom = true;
    return;
  }
  dc->diags[dc->n++] = (recorded){loc, sev, copy, false};
}

opt_diag_collector *opt_diag_collector_create(quill_context *ctx) {
  opt_diag_collector *dc = calloc(1, sizeof *dc);
  if (!dc)
    return NULL;
  dc->ctx = ctx;
  quill_diag_set_handler(ctx, record, dc);
  return dc;
}

static void clear(opt_diag_collector *dc) {
  for (size_t i = 0; i < dc->n; i++)
    free(dc->diags[i].msg);
  dc->n = 0;
}

void opt_diag_collector_destroy(opt_diag_collector *dc) {
  if (!dc)
    return;
  quill_diag_set_handler(dc->ctx, NULL, NULL);
  clear(dc);
  free(dc->diags);
  free(dc);
}

static const struct {
  const char *word;
  quill_diag_severity sev;
} kinds[] = {
    {"expected-error", QUILL_DIAG_ERROR},
    {"expected-warning", QUILL_DIAG_WARNING},
    {"expected-note", QUILL_DIAG_NOTE},
    {"expected-remark", QUILL_DIAG_REMARK},
};

/* An expectation parsed from one comment. */
typedef struct expectation {
  quill_diag_severity sev;
  long line; /* 0: unknown location */
  const char *msg;
  size_t msg_len;
} expectation;

/* Parse an expectation starting at p (at "expected-") on line `line`.
 * Returns false (with *why set) if it is malformed. */
static bool parse_expectation(const char *p, const char *eol, long line,
                              expectation *e, const char **why) {
  size_t k;
  for (k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    size_t n = strlen(kinds[k].word);
    if ((size_t)(eol - p) >= n && memcmp(p, kinds[k].word, n) == 0) {
      p += n;
      break;
    }
  }
  if (k == sizeof kinds / sizeof kinds[0]) {
    *why = "unknown expected-* kind";
    return false;
  }
  e->sev = kinds[k].sev;
  e->line = line;
  if (p < eol && *p == '@') {
    p++;
    if (eol - p >= 7 && memcmp(p, "unknown", 7) == 0) {
      e->line = 0;
      p += 7;
    } else if (p < eol && (*p == '+' || *p == '-')) {
      int sign = *p == '+' ? 1 : -1;
      p++;
      long off = 0;
      if (p >= eol || *p < '0' || *p > '9') {
        *why = "expected a line offset after '@+' or '@-'";
        return false;
      }
      while (p < eol && *p >= '0' && *p <= '9')
        off = off * 10 + (*p++ - '0');
      e->line = line + sign * off;
    } else {
      *why = "expected '+N', '-N' or 'unknown' after '@'";
      return false;
    }
  }
  while (p < eol && (*p == ' ' || *p == '\t'))
    p++;
  if (eol - p < 2 || p[0] != '{' || p[1] != '{') {
    *why = "expected '{{' after the expected-* directive";
    return false;
  }
  p += 2;
  const char *close = NULL;
  for (const char *q = p; q + 1 < eol; q++)
    if (q[0] == '}' && q[1] == '}') {
      close = q;
    }
  if (!close) {
    *why = "missing '}}' after the expected message";
    return false;
  }
  e->msg = p;
  e->msg_len = (size_t)(close - p);
  return true;
}

static bool message_matches(const char *msg, const char *want, size_t n) {
  if (n == 0)
    return true;
  for (const char *s = msg; *s; s++)
    if (strncmp(s, want, n) == 0)
      return true;
  return false;
}

quill_status opt_diag_collector_check(opt_diag_collector *dc,
                                      const char *file, const char *text,
                                      size_t len, uint32_t line_offset) {
  bool ok = !dc->oom;
  const char *p = text, *end = text + len;
  long line = line_offset;
  while (p < end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol)
      eol = end;
    line++;
    for (const char *q = p; q + 9 <= eol; q++) {
      if (memcmp(q, "expected-", 9) != 0 ||
          (q > p && (isalnum((unsigned char)q[-1]) || q[-1] == '-')))
        continue;
      expectation e;
      const char *why = NULL;
      if (!parse_expectation(q, eol, line, &e, &why)) {
        fprintf(stderr, "%s:%ld: error: %s\n", file, line, why);
        ok = false;
        break;
      }
      bool found = false;
      for (size_t i = 0; i < dc->n && !found; i++) {
        recorded *r = &dc->diags[i];
        long rline = r->loc.file ? (long)r->loc.line : 0;
        if (!r->matched && r->sev == e.sev && rline == e.line &&
            message_matches(r->msg, e.msg, e.msg_len)) {
          r->matched = found = true;
        }
      }
      if (!found) {
        fprintf(stderr, "%s:%ld: error: expected %s \"%.*s\" was not produced\n",
                file, line, quill_diag_severity_name(e.sev), (int)e.msg_len,
                e.msg);
        ok = false;
      }
      break; /* one directive per line */
    }
    p = eol < end ? eol + 1 : end;
  }
  for (size_t i = 0; i < dc->n; i++) {
    recorded *r = &dc->diags[i];
    if (r->matched)
      continue;
    ok = false;
    char buf[64];
    snprintf(buf, sizeof buf, "unexpected %s",
             quill_diag_severity_name(r->sev));
    quill_diag_print(dc->ctx, stderr, r->loc, QUILL_DIAG_ERROR, buf);
    fprintf(stderr, "  %s\n", r->msg);
  }
  clear(dc);
  return ok ? QUILL_OK : QUILL_ERR_INVALID;
}
