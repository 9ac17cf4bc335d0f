/*
 * npy.c - NumPy .npy images <-> quill_tensor.
 *
 * Reading:
 *
 *   bytes --magic/version/header_len--> header text
 *         --parse_header (dict literal grammar below)--> descr, fortran
 *           order, shape
 *         --dtype table--> element type, byte order
 *         --size check, copy (byte swap if the order is not the host's)-->
 *           quill_tensor
 *
 * The header is a Python dict literal written by numpy's repr; only the
 * subset numpy writes is accepted:
 *
 *   header := ws '{' ws [ item ws (',' ws item ws)* [','] ws ] '}' ws
 *   item   := string ws ':' ws value
 *   value  := string | 'True' | 'False' | tuple
 *   tuple  := '(' ws [ int ws (',' ws int ws)* [','] ws ] ')'
 *   int    := digit+ ['L']          (the 'L' of Python 2 longs)
 *   string := "'" chars "'" | '"' chars '"'   (no escapes)
 *
 * Writing produces what numpy.save writes: version 1.0 (2.0 if the header
 * exceeds 65535 bytes), keys in sorted order, padded with spaces so that
 * the data starts at a multiple of 64 bytes, ending in '\n'.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ir/readfile.h"
#include "ir/writefile.h"
#include "frontends/npy/npy.h"

static const unsigned char magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/* ---- the dtype table ------------------------------------------------------ */

typedef struct dtype {
  char code;            /* numpy kind letter: f i u b */
  unsigned bytes;
  quill_type_kind kind;
} dtype;

static const dtype dtypes[] = {
    {'f', 4, QUILL_TYPE_F32}, {'f', 8, QUILL_TYPE_F64},
    {'f', 2, QUILL_TYPE_F16}, {'i', 1, QUILL_TYPE_I8},
    {'u', 1, QUILL_TYPE_U8},  {'i', 2, QUILL_TYPE_I16},
    {'u', 2, QUILL_TYPE_U16}, {'i', 4, QUILL_TYPE_I32},
    {'u', 4, QUILL_TYPE_U32}, {'i', 8, QUILL_TYPE_I64},
    {'u', 8, QUILL_TYPE_U64}, {'b', 1, QUILL_TYPE_BOOL},
};
#define NUM_DTYPES (sizeof dtypes / sizeof dtypes[0])

static bool host_is_little(void) {
  const uint16_t one = 1;
  unsigned char b;
  memcpy(&b, &one, 1);
  return b == 1;
}

const char *quill_npy_descr(const quill_type *elem) {
  static const char *const le[NUM_DTYPES] = {
      "<f4", "<f8", "<f2", "|i1", "|u1", "<i2",
      "<u2", "<i4", "<u4", "<i8", "<u8", "|b1"};
  static const char *const be[NUM_DTYPES] = {
      ">f4", ">f8", ">f2", "|i1", "|u1", ">i2",
      ">u2", ">i4", ">u4", ">i8", ">u8", "|b1"};
  if (quill_type_is_quant(elem))
    elem = quill_type_quant_storage(elem);
  quill_type_kind k = quill_type_kind_of(elem);
  for (size_t i = 0; i < NUM_DTYPES; i++)
    if (dtypes[i].kind == k)
      return host_is_little() ? le[i] : be[i];
  return NULL;
}

/* ---- header parsing ------------------------------------------------------- */

typedef struct hparser {
  quill_context *ctx;
  quill_loc loc;
  const char *s; /* header text */
  size_t n;
  size_t i;
  size_t base; /* file offset of s[0], for messages */
  quill_status st;
} hparser;

typedef struct header {
  char descr[16];
  bool have_descr, have_order, have_shape;
  bool fortran;
  unsigned rank;
  int64_t dims[QUILL_MAX_RANK];
} header;

/* Report a malformed header at the current position (once). */
static bool herr(hparser *p, const char *what) {
  if (p->st == QUILL_OK)
    p->st = quill_error(p->ctx, p->loc,
                        "malformed .npy header at byte %zu: %s",
                        p->base + p->i, what);
  return false;
}

static void ws(hparser *p) {
  while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' ||
                         p->s[p->i] == '\n' || p->s[p->i] == '\r'))
    p->i++;
}

static bool eat(hparser *p, char c) {
  ws(p);
  if (p->i < p->n && p->s[p->i] == c) {
    p->i++;
    return true;
  }
  return false;
}

static bool word(hparser *p, const char *w) {
  size_t len = strlen(w);
  if (p->n - p->i >= len && !memcmp(p->s + p->i, w, len)) {
    p->i += len;
    return true;
  }
  return false;
}

/* string: copies up to cap-1 bytes into out; *len gets the full length. */
static bool string(hparser *p, char *out, size_t cap, size_t *len) {
  ws(p);
  if (p->i >= p->n || (p->s[p->i] != '\'' && p->s[p->i] != '"'))
    return herr(p, "expected a quoted string");
  char q = p->s[p->i++];
  size_t start = p->i;
  while (p->i < p->n && p->s[p->i] != q) {
    if (p->s[p->i] == '\\')
      return herr(p, "escapes in strings are not supported");
    p->i++;
  }
  if (p->i >= p->n)
    return herr(p, "unterminated string");
  *len = p->i - start;
  size_t c = *len < cap - 1 ? *len : cap - 1;
  memcpy(out, p->s + start, c);
  out[c] = '\0';
  p->i++;
  return true;
}

/* tuple of non-negative ints */
static bool shape_tuple(hparser *p, header *h) {
  if (!eat(p, '('))
    return herr(p, "expected '(' for the shape");
  h->rank = 0;
  if (eat(p, ')'))
    return true;
  for (;;) {
    ws(p);
    if (p->i < p->n && p->s[p->i] == '-')
      return herr(p, "negative dimension in the shape");
    if (p->i >= p->n || p->s[p->i] < '0' || p->s[p->i] > '9')
      return herr(p, "expected a dimension (a non-negative integer)");
    int64_t v = 0;
    while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') {
      if (v > (INT64_MAX - 9) / 10)
        return herr(p, "dimension too large");
      v = v * 10 + (p->s[p->i++] - '0');
    }
    if (p->i < p->n && p->s[p->i] == 'L')
      p->i++;
    if (v > QUILL_MAX_DIM)
      return herr(p, "dimension too large (at most 2147483647)");
    if (h->rank >= QUILL_MAX_RANK)
      return herr(p, "too many dimensions (Quill allows 32)");
    h->dims[h->rank++] = v;
    if (eat(p, ')'))
      return true;
    if (!eat(p, ','))
      return herr(p, "expected ',' or ')' in the shape");
    if (eat(p, ')'))
      return true;
  }
}

static bool item(hparser *p, header *h) {
  char key[32];
  size_t klen;
  size_t at = p->i;
  if (!string(p, key, sizeof key, &klen))
    return false;
  if (!eat(p, ':'))
    return herr(p, "expected ':' after a key");
  ws(p);
  if (klen == 5 && !strcmp(key, "descr")) {
    if (h->have_descr)
      return herr(p, "duplicate key 'descr'");
    h->have_descr = true;
    if (p->i < p->n && p->s[p->i] == '[')
      return herr(p, "structured dtypes are not supported");
    size_t dlen;
    if (!string(p, h->descr, sizeof h->descr, &dlen))
      return false;
    if (dlen >= sizeof h->descr)
      return herr(p, "unsupported dtype (too long)");
    return true;
  }
  if (klen == 13 && !strcmp(key, "fortran_order")) {
    if (h->have_order)
      return herr(p, "duplicate key 'fortran_order'");
    h->have_order = true;
    if (word(p, "True"))
      h->fortran = true;
    else if (word(p, "False"))
      h->fortran = false;
    else
      return herr(p, "expected True or False for 'fortran_order'");
    return true;
  }
  if (klen == 5 && !strcmp(key, "shape")) {
    if (h->have_shape)
      return herr(p, "duplicate key 'shape'");
    h->have_shape = true;
    return shape_tuple(p, h);
  }
  p->i = at;
  ws(p);
  return herr(p, "unknown key (expected 'descr', 'fortran_order', 'shape')");
}

static bool parse_header(hparser *p, header *h) {
  memset(h, 0, sizeof *h);
  if (!eat(p, '{'))
    return herr(p, "expected '{'");
  if (!eat(p, '}')) {
    for (;;) {
      if (!item(p, h))
        return false;
      if (eat(p, '}'))
        break;
      if (!eat(p, ','))
        return herr(p, "expected ',' or '}'");
      if (eat(p, '}'))
        break;
    }
  }
  ws(p);
  if (p->i != p->n)
    return herr(p, "unexpected text after the dict");
  const char *missing = !h->have_descr   ? "descr"
                        : !h->have_order ? "fortran_order"
                        : !h->have_shape ? "shape"
                                         : NULL;
  if (missing) {
    if (p->st == QUILL_OK)
      p->st = quill_error(p->ctx, p->loc,
                          "malformed .npy header: missing key '%s'", missing);
    return false;
  }
  return true;
}

/* ---- reading -------------------------------------------------------------- */

static uint32_t le_u32(const unsigned char *b, unsigned n) {
  uint32_t v = 0;
  for (unsigned i = n; i-- > 0;)
    v = (v << 8) | b[i];
  return v;
}

/* Map a descr string to a dtype; *swap tells whether the data's byte
 * order differs from the host's. */
static const dtype *find_dtype(const char *descr, bool *swap) {
  size_t len = strlen(descr);
  if (len < 3)
    return NULL;
  char order = descr[0], code = descr[1];
  unsigned bytes = 0;
  for (size_t i = 2; i < len; i++) {
    if (descr[i] < '0' || descr[i] > '9' || bytes > 100)
      return NULL;
    bytes = bytes * 10 + (unsigned)(descr[i] - '0');
  }
  if (order != '<' && order != '>' && order != '=' && order != '|')
    return NULL;
  for (size_t i = 0; i < NUM_DTYPES; i++) {
    if (dtypes[i].code != code || dtypes[i].bytes != bytes)
      continue;
    if (order == '|' && bytes != 1)
      return NULL; /* '|' means "not applicable": only for one byte */
    bool little = order == '<' || (order == '=' && host_is_little());
    *swap = bytes > 1 && order != '|' && little != host_is_little();
    return &dtypes[i];
  }
  return NULL;
}

static void byte_swap(unsigned char *p, size_t n, unsigned w) {
  for (size_t i = 0; i < n; i++, p += w)
    for (unsigned a = 0, b = w - 1; a < b; a++, b--) {
      unsigned char t = p[a];
      p[a] = p[b];
      p[b] = t;
    }
}

quill_status quill_npy_read_buffer(quill_context *ctx, const void *data,
                                   size_t len, const char *name,
                                   quill_tensor *out) {
  memset(out, 0, sizeof *out);
  if (!name)
    name = "<buffer>";
  quill_loc loc = quill_loc_file(ctx, name, 0, 0);
  const unsigned char *b = data;
  if (len < 8 || memcmp(b, magic, 6) != 0)
    return quill_error(ctx, loc,
                       "not a NumPy .npy file (bad magic string; %zu bytes)",
                       len);
  unsigned major = b[6], minor = b[7];
  if (major < 1 || major > 3 || minor != 0)
    return quill_error(ctx, loc,
                       "unsupported .npy format version %u.%u (expected "
                       "1.0, 2.0 or 3.0)",
                       major, minor);
  unsigned lenbytes = major == 1 ? 2 : 4;
  if (len < 8 + lenbytes)
    return quill_error(ctx, loc, "truncated .npy file: no header length");
  size_t hlen = le_u32(b + 8, lenbytes);
  size_t hstart = 8 + lenbytes;
  if (hlen > len - hstart)
    return quill_error(ctx, loc,
                       "truncated .npy file: header of %zu bytes, but only "
                       "%zu bytes follow",
                       hlen, len - hstart);

  hparser p = {ctx, loc, (const char *)b + hstart, hlen, 0, hstart, QUILL_OK};
  header h;
  if (!parse_header(&p, &h))
    return p.st;

  bool swap = false;
  const dtype *dt = find_dtype(h.descr, &swap);
  if (!dt)
    return quill_error(ctx, loc,
                       "unsupported .npy dtype '%s' (supported: <f4 <f8 <f2 "
                       "|i1 |u1 <i2 <u2 <i4 <u4 <i8 <u8 |b1, either byte "
                       "order)",
                       h.descr);
  if (h.fortran && h.rank > 1)
    return quill_error(ctx, loc,
                       "fortran_order arrays of rank %u are not supported "
                       "(save a C-ordered array, e.g. "
                       "np.ascontiguousarray)",
                       h.rank);
  size_t count = 1;
  for (unsigned i = 0; i < h.rank; i++) {
    uint64_t d = (uint64_t)h.dims[i];
    if (d && count > SIZE_MAX / dt->bytes / d)
      return quill_error(ctx, loc, "shape too large for this machine");
    count *= (size_t)d;
  }
  size_t need = count * dt->bytes, have = len - hstart - hlen;
  if (need != have)
    return quill_error(ctx, loc,
                       "data size mismatch: shape and dtype '%s' need %zu "
                       "bytes, the file has %zu",
                       h.descr, need, have);

  quill_type *elem = quill_type_scalar(ctx, dt->kind);
  quill_type *ty = quill_type_tensor(ctx, elem, h.rank, h.dims);
  if (!ty)
    return QUILL_ERR_NOMEM;
  quill_status st = quill_tensor_alloc(ctx, ty, out);
  if (st != QUILL_OK)
    return st == QUILL_ERR_INVALID
               ? quill_error(ctx, loc, "shape not representable")
               : st;
  if (need)
    memcpy(out->data, b + hstart + hlen, need);
  if (swap)
    byte_swap(out->data, count, dt->bytes);
  if (dt->kind == QUILL_TYPE_BOOL) { /* normalise to 0/1 */
    unsigned char *q = out->data;
    for (size_t i = 0; i < count; i++)
      q[i] = q[i] != 0;
  }
  return QUILL_OK;
}

quill_status quill_npy_read_file(quill_context *ctx, const char *path,
                                 quill_tensor *out) {
  memset(out, 0, sizeof *out);
  char *buf;
  size_t len, cap;
  bool opened;
  int err = quill_read_file(ctx, path, 0, &buf, &len, &cap, &opened);
  if (err == ENOMEM)
    return QUILL_ERR_NOMEM;
  if (err) {
    quill_error(ctx, quill_loc_file(ctx, path, 0, 0),
                opened ? "read error: %s" : "cannot open file: %s",
                quill_read_strerror(err, 0));
    return QUILL_ERR_IO;
  }
  quill_status st = quill_npy_read_buffer(ctx, buf, len, path, out);
  quill_free(ctx, buf, cap);
  return st;
}

/* ---- writing -------------------------------------------------------------- */

quill_status quill_npy_write_buffer(quill_context *ctx, const quill_tensor *t,
                                    const char *name, void **data,
                                    size_t *len) {
  *data = NULL;
  *len = 0;
  if (!name)
    name = "<buffer>";
  quill_type *elem = quill_type_elem(t->type);
  const char *descr = quill_npy_descr(elem);
  if (!descr) {
    quill_strbuf sb;
    quill_strbuf_init(&sb, ctx);
    quill_type_print(elem, &sb);
    quill_error(ctx, quill_loc_file(ctx, name, 0, 0),
                "cannot write element type %s to .npy: NumPy has no such "
                "dtype",
                quill_strbuf_str(&sb));
    quill_strbuf_free(&sb);
    return QUILL_ERR_UNSUPPORTED;
  }
  quill_strbuf hb;
  quill_strbuf_init(&hb, ctx);
  quill_strbuf_printf(&hb, "{'descr': '%s', 'fortran_order': False, "
                           "'shape': (", descr);
  unsigned rank = quill_type_rank(t->type);
  for (unsigned i = 0; i < rank; i++)
    quill_strbuf_printf(&hb, "%s%lld", i ? ", " : "",
                        (long long)quill_type_dim(t->type, i));
  quill_strbuf_puts(&hb, rank == 1 ? ",), }" : "), }");
  if (quill_strbuf_failed(&hb)) {
    quill_strbuf_free(&hb);
    return QUILL_ERR_NOMEM;
  }
  /* pad with spaces + '\n' so that the data starts on a 64-byte boundary */
  size_t text = hb.len + 1;
  unsigned lenbytes = 2; /* version 1.0 ... */
  size_t pre = 10;
  size_t hlen = ((pre + text + 63) / 64) * 64 - pre;
  if (hlen > 65535) { /* ... unless the header needs a 4-byte length */
    lenbytes = 4;
    pre = 12;
    hlen = ((pre + text + 63) / 64) * 64 - pre;
  }
  size_t total = pre + hlen + t->size;
  unsigned char *buf = quill_alloc(ctx, total ? total : 1);
  if (!buf) {
    quill_strbuf_free(&hb);
    return QUILL_ERR_NOMEM;
  }
  memcpy(buf, magic, 6);
  buf[6] = lenbytes == 2 ? 1 : 2;
  buf[7] = 0;
  for (unsigned i = 0; i < lenbytes; i++)
    buf[8 + i] = (unsigned char)(hlen >> (8 * i));
  memcpy(buf + pre, quill_strbuf_str(&hb), hb.len);
  memset(buf + pre + hb.len, ' ', hlen - hb.len - 1);
  buf[pre + hlen - 1] = '\n';
  quill_strbuf_free(&hb);
  if (t->size)
    memcpy(buf + pre + hlen, t->data, t->size);
  *data = buf;
  *len = total;
  return QUILL_OK;
}

quill_status quill_npy_write_file(quill_context *ctx, const char *path,
                                  const quill_tensor *t) {
  void *buf;
  size_t len;
  quill_status st = quill_npy_write_buffer(ctx, t, path, &buf, &len);
  if (st != QUILL_OK)
    return st;
  st = quill_write_file(ctx, path, buf, len);
  quill_free(ctx, buf, len ? len : 1);
  return st;
}
