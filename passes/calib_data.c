/*
 * calib_data.c - calibration datasets (passes/calib_data.h): samples for a
 * graph's inputs, from memory, .npy files, directories and list files.
 *
 * Every source ends in add_set(): one tensor per graph input, each either
 * exactly the input's type (one sample) or a batch [k*N, ...] of the
 * input's [N, ...] (k samples, sliced along dimension 0; the rows of a
 * row-major tensor are contiguous, so a slice is one memcpy).
 *
 *   load(path)  --','-->  each part:  directory -> load_dir
 *                                     *.txt     -> list file, line by line
 *                                     otherwise -> one .npy file
 *   load_dir    entries sorted by name: .npy files (one-input graphs) or
 *               sample subdirectories with <input>.npy each
 *
 * Samples own their tensors (quill_tensor_alloc) and an origin string per
 * input for diagnostics. All memory goes through the context allocator.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ir/readfile.h"
#include "frontends/npy/npy.h"
#include "passes/calib_list.h"

typedef struct sample {
  quill_tensor *t; /* num_inputs tensors */
  char **origin;   /* num_inputs strings */
} sample;

struct quill_calib_dataset {
  quill_context *ctx;
  unsigned num_inputs;
  quill_type **types;
  char **names; /* graph input names ("input0" if unnamed) */
  sample *samples;
  size_t num, cap;
  size_t max_samples; /* 0: no limit */
};

/* ---- creation ----------------------------------------------------------------- */

static char *type_str(quill_context *ctx, const quill_type *t) {
  quill_strbuf sb;
  quill_strbuf_init(&sb, ctx);
  quill_type_print(t, &sb);
  char *s = quill_strdup(ctx, quill_strbuf_str(&sb));
  quill_strbuf_free(&sb);
  return s;
}

quill_calib_dataset *quill_calib_dataset_create(quill_context *ctx,
                                                const quill_graph *g) {
  unsigned n = quill_graph_num_args(g);
  for (unsigned i = 0; i < n; i++) {
    const quill_value *a = quill_graph_arg(g, i);
    quill_type *t = quill_value_type(a);
    if (!quill_type_is_tensor(t) || !quill_type_has_static_shape(t)) {
      char *ts = type_str(ctx, t);
      quill_error(ctx, quill_graph_loc(g),
                  "input '%s' has the dynamic type %s: calibration needs a "
                  "static shape (ONNX models: --input-shape)",
                  quill_value_name(a) ? quill_value_name(a) : "", ts ? ts : "?");
      quill_string_free(ctx, ts);
      return NULL;
    }
  }
  quill_calib_dataset *ds = quill_calloc(ctx, 1, sizeof *ds);
  if (!ds)
    return NULL;
  ds->ctx = ctx;
  ds->num_inputs = n;
  ds->types = quill_calloc(ctx, n ? n : 1, sizeof *ds->types);
  ds->names = quill_calloc(ctx, n ? n : 1, sizeof *ds->names);
  if (!ds->types || !ds->names) {
    quill_calib_dataset_destroy(ds);
    return NULL;
  }
  for (unsigned i = 0; i < n; i++) {
    const quill_value *a = quill_graph_arg(g, i);
    char buf[32];
    snprintf(buf, sizeof buf, "input%u", i);
    ds->types[i] = quill_value_type(a);
    ds->names[i] = quill_strdup(ctx, quill_value_name(a) ? quill_value_name(a)
                                                         : buf);
    if (!ds->names[i]) {
      quill_calib_dataset_destroy(ds);
      return NULL;
    }
  }
  return ds;
}

static void free_sample(quill_context *ctx, sample *s, unsigned n) {
  for (unsigned i = 0; i < n; i++) {
    if (s->t)
      quill_tensor_free(ctx, &s->t[i]);
    if (s->origin)
      quill_string_free(ctx, s->origin[i]);
  }
  quill_free(ctx, s->t, n * sizeof *s->t);
  quill_free(ctx, s->origin, n * sizeof *s->origin);
}

void quill_calib_dataset_destroy(quill_calib_dataset *ds) {
  if (!ds)
    return;
  quill_context *ctx = ds->ctx;
  unsigned n = ds->num_inputs;
  for (size_t i = 0; i < ds->num; i++)
    free_sample(ctx, &ds->samples[i], n);
  quill_free(ctx, ds->samples, ds->cap * sizeof *ds->samples);
  for (unsigned i = 0; ds->names && i < n; i++)
    quill_string_free(ctx, ds->names[i]);
  quill_free(ctx, ds->names, (n ? n : 1) * sizeof *ds->names);
  quill_free(ctx, ds->types, (n ? n : 1) * sizeof *ds->types);
  quill_free(ctx, ds, sizeof *ds);
}

void quill_calib_dataset_set_max_samples(quill_calib_dataset *ds, size_t n) {
  ds->max_samples = n;
}

static bool full(const quill_calib_dataset *ds) {
  return ds->max_samples && ds->num >= ds->max_samples;
}

/* ---- adding samples ------------------------------------------------------------- */

/* How many samples tensor t holds for input i: 1 if its type is the
 * input's, k for a [k*N, ...] batch, 0 if it does not fit. */
static int64_t batch_count(const quill_calib_dataset *ds, unsigned i,
                           const quill_type *t) {
  quill_type *want = ds->types[i];
  if (t == want)
    return 1;
  unsigned r = quill_type_rank(want);
  if (!quill_type_is_tensor(t) || quill_type_elem(t) != quill_type_elem(want) ||
      quill_type_rank(t) != r || r == 0)
    return 0;
  for (unsigned d = 1; d < r; d++)
    if (quill_type_dim(t, d) != quill_type_dim(want, d))
      return 0;
  int64_t n = quill_type_dim(want, 0), m = quill_type_dim(t, 0);
  if (n <= 0 || m <= 0 || m % n)
    return 0;
  return m / n;
}

static quill_status mismatch(quill_calib_dataset *ds, unsigned i,
                             const quill_type *got, const char *file) {
  quill_context *ctx = ds->ctx;
  char *g = type_str(ctx, got), *w = type_str(ctx, ds->types[i]);
  const char *hint =
      quill_type_is_tensor(got) &&
              quill_type_elem(got) != quill_type_elem(ds->types[i])
          ? " (convert the data to the input's element type)"
          : " (or a batch of such samples stacked along dimension 0)";
  quill_error(ctx, quill_loc_file(ctx, file, 0, 0),
              "input '%s' expects %s%s, got %s", ds->names[i], w ? w : "?",
              hint, g ? g : "?");
  quill_string_free(ctx, g);
  quill_string_free(ctx, w);
  return QUILL_ERR_INVALID;
}

static quill_status grow_samples(quill_calib_dataset *ds) {
  if (ds->num < ds->cap)
    return QUILL_OK;
  size_t ncap = ds->cap ? ds->cap * 2 : 16;
  sample *p = quill_realloc(ds->ctx, ds->samples, ds->cap * sizeof *p,
                            ncap * sizeof *p);
  if (!p)
    return QUILL_ERR_NOMEM;
  ds->samples = p;
  ds->cap = ncap;
  return QUILL_OK;
}

/* Add the k samples held by one tensor per input (origins[i] names input
 * i's tensor; "[j]" is appended for batches). */
static quill_status add_set(quill_calib_dataset *ds, const quill_tensor *in,
                            const char *const *origins) {
  quill_context *ctx = ds->ctx;
  unsigned n = ds->num_inputs;
  int64_t k = 0;
  for (unsigned i = 0; i < n; i++) {
    int64_t ki = batch_count(ds, i, in[i].type);
    if (ki == 0)
      return mismatch(ds, i, in[i].type, origins[i]);
    if (i > 0 && ki != k)
      return quill_error(ctx, quill_loc_file(ctx, origins[i], 0, 0),
                         "input '%s' holds %lld samples but input '%s' "
                         "holds %lld",
                         ds->names[i], (long long)ki, ds->names[0],
                         (long long)k);
    k = ki;
  }
  if (n == 0)
    k = 1;
  for (int64_t j = 0; j < k && !full(ds); j++) {
    if (grow_samples(ds))
      return QUILL_ERR_NOMEM;
    sample s = {quill_calloc(ctx, n ? n : 1, sizeof *s.t),
                quill_calloc(ctx, n ? n : 1, sizeof *s.origin)};
    quill_status st = s.t && s.origin ? QUILL_OK : QUILL_ERR_NOMEM;
    for (unsigned i = 0; !st && i < n; i++) {
      st = quill_tensor_alloc(ctx, ds->types[i], &s.t[i]);
      if (st)
        break;
      size_t bytes = s.t[i].size;
      if (bytes)
        memcpy(s.t[i].data, (const char *)in[i].data + (size_t)j * bytes,
               bytes);
      char buf[32] = "";
      if (k > 1)
        snprintf(buf, sizeof buf, "[%lld]", (long long)j);
      size_t len = strlen(origins[i]) + strlen(buf) + 1;
      s.origin[i] = quill_alloc(ctx, len);
      if (!s.origin[i]) {
        st = QUILL_ERR_NOMEM;
        break;
      }
      snprintf(s.origin[i], len, "%s%s", origins[i], buf);
    }
    if (st) {
      free_sample(ctx, &s, n);
      return st;
    }
    ds->samples[ds->num++] = s;
  }
  return QUILL_OK;
}

quill_status quill_calib_dataset_add(quill_calib_dataset *ds,
                                     const quill_tensor *inputs, unsigned n,
                                     const char *origin) {
  char buf[48];
  if (n != ds->num_inputs)
    return quill_error(ds->ctx, quill_loc_unknown(),
                       "calibration sample: %u tensors given for a graph "
                       "with %u inputs",
                       n, ds->num_inputs);
  if (!origin) {
    snprintf(buf, sizeof buf, "sample #%zu", ds->num);
    origin = buf;
  }
  const char **origins = quill_calloc(ds->ctx, n ? n : 1, sizeof *origins);
  if (!origins)
    return QUILL_ERR_NOMEM;
  for (unsigned i = 0; i < n; i++)
    origins[i] = origin;
  quill_status st = add_set(ds, inputs, origins);
  quill_free(ds->ctx, origins, (n ? n : 1) * sizeof *origins);
  return st;
}

/* ---- files ---------------------------------------------------------------------- */

static quill_status need_one_input(quill_calib_dataset *ds, const char *where) {
  if (ds->num_inputs == 1)
    return QUILL_OK;
  quill_strbuf sb;
  quill_strbuf_init(&sb, ds->ctx);
  for (unsigned i = 0; i < ds->num_inputs; i++)
    quill_strbuf_printf(&sb, "%s'%s'", i ? ", " : "", ds->names[i]);
  quill_error(ds->ctx, quill_loc_file(ds->ctx, where, 0, 0),
              "the model has %u inputs (%s): give one subdirectory per "
              "sample holding <input>.npy for each, or a list file",
              ds->num_inputs, quill_strbuf_str(&sb));
  quill_strbuf_free(&sb);
  return QUILL_ERR_INVALID;
}

/* Read one .npy file per input (paths[i]) and add the sample(s). */
static quill_status add_files(quill_calib_dataset *ds,
                              const char *const *paths) {
  quill_context *ctx = ds->ctx;
  unsigned n = ds->num_inputs;
  quill_tensor *t = quill_calloc(ctx, n ? n : 1, sizeof *t);
  if (!t)
    return QUILL_ERR_NOMEM;
  quill_status st = QUILL_OK;
  for (unsigned i = 0; !st && i < n; i++)
    st = quill_npy_read_file(ctx, paths[i], &t[i]);
  if (!st)
    st = add_set(ds, t, paths);
  for (unsigned i = 0; i < n; i++)
    quill_tensor_free(ctx, &t[i]);
  quill_free(ctx, t, (n ? n : 1) * sizeof *t);
  return st;
}

quill_status quill_calib_dataset_load_files(quill_calib_dataset *ds,
                                            const char *const *paths,
                                            size_t n) {
  if (n && need_one_input(ds, paths[0]))
    return QUILL_ERR_INVALID;
  quill_status st = QUILL_OK;
  for (size_t i = 0; !st && i < n && !full(ds); i++)
    st = add_files(ds, &paths[i]);
  return st;
}

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* "dir" + "/" + "name" through the context allocator (free with
 * quill_string_free). */
static char *join(quill_context *ctx, const char *dir, const char *name) {
  size_t a = strlen(dir), b = strlen(name);
  bool slash = a && dir[a - 1] != '/';
  char *s = quill_alloc(ctx, a + slash + b + 1);
  if (s)
    snprintf(s, a + slash + b + 1, "%s%s%s", dir, slash ? "/" : "", name);
  return s;
}

/* The file name of input i in a sample directory: its name, '/' -> '_'. */
static char *input_file_name(quill_calib_dataset *ds, unsigned i) {
  const char *name = ds->names[i];
  size_t len = strlen(name);
  char *s = quill_alloc(ds->ctx, len + 5);
  if (!s)
    return NULL;
  for (size_t k = 0; k < len; k++)
    s[k] = name[k] == '/' ? '_' : name[k];
  memcpy(s + len, ".npy", 5);
  return s;
}

/* ---- directories ---------------------------------------------------------------- */

typedef struct dir_entry {
  char *name;
  bool is_dir;
} dir_entry;

typedef struct dir_list {
  dir_entry *e; /* sorted by name, no hidden entries */
  size_t n, cap;
} dir_list;

static void dir_list_free(quill_context *ctx, dir_list *l) {
  for (size_t i = 0; i < l->n; i++)
    quill_string_free(ctx, l->e[i].name);
  quill_free(ctx, l->e, l->cap * sizeof *l->e);
  memset(l, 0, sizeof *l);
}

static int cmp_entries(const void *a, const void *b) {
  return strcmp(((const dir_entry *)a)->name, ((const dir_entry *)b)->name);
}

/* Read the entries of dir (no hidden ones), sorted by name. */
static quill_status list_dir(quill_context *ctx, const char *dir,
                             dir_list *l) {
  memset(l, 0, sizeof *l);
  DIR *d = opendir(dir);
  if (!d) {
    quill_error(ctx, quill_loc_file(ctx, dir, 0, 0),
                "cannot open directory: %s", strerror(errno));
    return QUILL_ERR_IO;
  }
  quill_status st = QUILL_OK;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.')
      continue;
    if (l->n == l->cap) {
      size_t ncap = l->cap ? l->cap * 2 : 32;
      dir_entry *ne = quill_realloc(ctx, l->e, l->cap * sizeof *ne,
                                    ncap * sizeof *ne);
      if (!ne) {
        st = QUILL_ERR_NOMEM;
        break;
      }
      l->e = ne;
      l->cap = ncap;
    }
    char *name = quill_strdup(ctx, e->d_name);
    if (!name) {
      st = QUILL_ERR_NOMEM;
      break;
    }
    l->e[l->n++] = (dir_entry){name, false};
  }
  closedir(d);
  if (!st && l->n)
    qsort(l->e, l->n, sizeof *l->e, cmp_entries);
  for (size_t i = 0; !st && i < l->n; i++) {
    char *p = join(ctx, dir, l->e[i].name);
    struct stat sb;
    if (!p)
      st = QUILL_ERR_NOMEM;
    else
      l->e[i].is_dir = stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
    quill_string_free(ctx, p);
  }
  if (st)
    dir_list_free(ctx, l);
  return st;
}

/* One sample subdirectory: <input>.npy for every input, nothing else. */
static quill_status load_sample_dir(quill_calib_dataset *ds, const char *dir) {
  quill_context *ctx = ds->ctx;
  unsigned n = ds->num_inputs;
  dir_list l;
  quill_status st = list_dir(ctx, dir, &l);
  if (st)
    return st;
  char **paths = quill_calloc(ctx, n ? n : 1, sizeof *paths);
  if (!paths) {
    dir_list_free(ctx, &l);
    return QUILL_ERR_NOMEM;
  }
  for (size_t k = 0; !st && k < l.n; k++) {
    if (l.e[k].is_dir || !ends_with(l.e[k].name, ".npy"))
      continue;
    bool known = false;
    for (unsigned i = 0; !known && i < n; i++) {
      char *f = input_file_name(ds, i);
      if (!f) {
        st = QUILL_ERR_NOMEM;
        break;
      }
      known = strcmp(f, l.e[k].name) == 0;
      quill_string_free(ctx, f);
    }
    if (!st && !known) {
      char *p = join(ctx, dir, l.e[k].name);
      st = quill_error(ctx, quill_loc_file(ctx, p ? p : dir, 0, 0),
                       "no model input is named '%.*s' (a sample directory "
                       "holds <input>.npy for each model input)",
                       (int)(strlen(l.e[k].name) - 4), l.e[k].name);
      quill_string_free(ctx, p);
    }
  }
  for (unsigned i = 0; !st && i < n; i++) {
    char *f = input_file_name(ds, i);
    paths[i] = f ? join(ctx, dir, f) : NULL;
    quill_string_free(ctx, f);
    if (!paths[i]) {
      st = QUILL_ERR_NOMEM;
      break;
    }
    struct stat sb;
    if (stat(paths[i], &sb) != 0)
      st = quill_error(ctx, quill_loc_file(ctx, dir, 0, 0),
                       "sample directory has no file for input '%s' (expected "
                       "%s)",
                       ds->names[i], paths[i]);
  }
  if (!st)
    st = add_files(ds, (const char *const *)paths);
  for (unsigned i = 0; i < n; i++)
    quill_string_free(ctx, paths[i]);
  quill_free(ctx, paths, (n ? n : 1) * sizeof *paths);
  dir_list_free(ctx, &l);
  return st;
}

quill_status quill_calib_dataset_load_dir(quill_calib_dataset *ds,
                                          const char *dir) {
  quill_context *ctx = ds->ctx;
  dir_list l;
  quill_status st = list_dir(ctx, dir, &l);
  if (st)
    return st;
  size_t files = 0, dirs = 0;
  for (size_t k = 0; k < l.n; k++) {
    if (l.e[k].is_dir)
      dirs++;
    else if (ends_with(l.e[k].name, ".npy"))
      files++;
  }
  if (!files && !dirs)
    st = quill_error(ctx, quill_loc_file(ctx, dir, 0, 0),
                     "no calibration data: the directory holds no .npy files "
                     "and no sample subdirectories");
  else if (files && dirs)
    st = quill_error(ctx, quill_loc_file(ctx, dir, 0, 0),
                     "the directory mixes .npy files (samples of a one-input "
                     "model) and subdirectories (one per sample): use one "
                     "layout");
  else if (files)
    st = need_one_input(ds, dir);
  for (size_t k = 0; !st && k < l.n && !full(ds); k++) {
    if (files && (l.e[k].is_dir || !ends_with(l.e[k].name, ".npy")))
      continue;
    char *p = join(ctx, dir, l.e[k].name);
    if (!p) {
      st = QUILL_ERR_NOMEM;
      break;
    }
    st = files ? add_files(ds, (const char *const *)&p)
               : load_sample_dir(ds, p);
    quill_string_free(ctx, p);
  }
  dir_list_free(ctx, &l);
  return st;
}

/* ---- list files and paths ------------------------------------------------------------ */

/* One line of a list file, NUL-terminated: FILE (one input) or NAME=FILE
 * for each input. Appends the line's num_inputs paths (relative ones
 * joined to base) to l. */
static quill_status list_line(quill_calib_dataset *ds, const char *name,
                              unsigned lineno, char *line, const char *base,
                              quill_calib_list *l) {
  quill_context *ctx = ds->ctx;
  unsigned n = ds->num_inputs;
  quill_loc loc = quill_loc_file(ctx, name, lineno, 1);
  size_t w = n ? n : 1;
  if (l->num_rows == l->cap_rows) {
    /* both arrays grow together (cap_rows sizes both) */
    size_t cap = l->cap_rows ? 2 * l->cap_rows : 8;
    char **p = quill_alloc(ctx, cap * w * sizeof *p);
    unsigned *ln = quill_alloc(ctx, cap * sizeof *ln);
    if (!p || !ln) {
      quill_free(ctx, p, cap * w * sizeof *p);
      quill_free(ctx, ln, cap * sizeof *ln);
      return QUILL_ERR_NOMEM;
    }
    if (l->num_rows) {
      memcpy(p, l->paths, l->num_rows * w * sizeof *p);
      memcpy(ln, l->lines, l->num_rows * sizeof *ln);
    }
    quill_free(ctx, l->paths, l->cap_rows * w * sizeof *p);
    quill_free(ctx, l->lines, l->cap_rows * sizeof *ln);
    l->paths = p;
    l->lines = ln;
    l->cap_rows = cap;
  }
  char **paths = l->paths + l->num_rows * w;
  memset(paths, 0, w * sizeof *paths);
  /* the row counts from now on, so its paths are freed with l on error */
  l->lines[l->num_rows++] = lineno;
  quill_status st = QUILL_OK;
  char *save = NULL;
  for (char *tok = strtok_r(line, " \t\r", &save); !st && tok;
       tok = strtok_r(NULL, " \t\r", &save)) {
    char *eq = strchr(tok, '=');
    unsigned i = 0;
    if (eq) {
      *eq = '\0';
      while (i < n && strcmp(ds->names[i], tok) != 0)
        i++;
      if (i == n)
        return quill_error(ctx, loc, "no model input is named '%s'", tok);
      tok = eq + 1;
    } else if (n != 1) {
      return quill_error(ctx, loc, "the model has %u inputs: write "
                                   "NAME=FILE for each",
                         n);
    }
    if (paths[i])
      return quill_error(ctx, loc, "input '%s' is given twice", ds->names[i]);
    if (!*tok)
      return quill_error(ctx, loc, "no file after '%s='", ds->names[i]);
    paths[i] = tok[0] == '/' ? quill_strdup(ctx, tok) : join(ctx, base, tok);
    if (!paths[i])
      st = QUILL_ERR_NOMEM;
  }
  for (unsigned i = 0; !st && i < n; i++)
    if (!paths[i])
      st = quill_error(ctx, loc, "no file for input '%s'", ds->names[i]);
  return st;
}

void quill_calib_list_free(quill_context *ctx, quill_calib_list *l) {
  size_t w = l->num_inputs ? l->num_inputs : 1;
  for (size_t k = 0; k < l->num_rows * w; k++)
    quill_string_free(ctx, l->paths[k]);
  quill_free(ctx, l->paths, l->cap_rows * w * sizeof *l->paths);
  quill_free(ctx, l->lines, l->cap_rows * sizeof *l->lines);
  memset(l, 0, sizeof *l);
}

/* list ::= (line '\n')* line?
 * line ::= ws ('#' any* | sample)?
 * sample ::= FILE | (NAME '=' FILE) (ws NAME '=' FILE)* */
quill_status quill_calib_list_parse(quill_calib_dataset *ds, const char *text,
                                    size_t len, const char *name,
                                    const char *base_dir, size_t max_rows,
                                    quill_calib_list *out) {
  quill_context *ctx = ds->ctx;
  memset(out, 0, sizeof *out);
  out->num_inputs = ds->num_inputs;
  quill_status st = QUILL_OK;
  unsigned lineno = 0;
  for (size_t pos = 0; !st && pos < len && (!max_rows || out->num_rows <
                                                            max_rows);) {
    const char *eol = memchr(text + pos, '\n', len - pos);
    size_t n = eol ? (size_t)(eol - (text + pos)) : len - pos;
    lineno++;
    if (memchr(text + pos, '\0', n)) {
      st = quill_error(ctx, quill_loc_file(ctx, name, lineno, 1),
                       "NUL byte in a list file (not a text file?)");
      break;
    }
    char *line = quill_alloc(ctx, n + 1);
    if (!line) {
      st = QUILL_ERR_NOMEM;
      break;
    }
    memcpy(line, text + pos, n);
    line[n] = '\0';
    char *s = line + strspn(line, " \t\r");
    if (*s && *s != '#')
      st = list_line(ds, name, lineno, s, base_dir, out);
    quill_free(ctx, line, n + 1);
    pos += n + (eol != NULL);
  }
  if (!st && !out->num_rows)
    st = quill_error(ctx, quill_loc_file(ctx, name, 0, 0),
                     "no calibration data: the list file names no samples");
  if (st)
    quill_calib_list_free(ctx, out);
  return st;
}

static quill_status load_list(quill_calib_dataset *ds, const char *list) {
  quill_context *ctx = ds->ctx;
  size_t len, cap;
  char *text;
  bool opened;
  int err = quill_read_file(ctx, list, QUILL_READ_TEXT, &text, &len, &cap,
                            &opened);
  if (err == ENOMEM)
    return QUILL_ERR_NOMEM;
  if (err) {
    quill_error(ctx, quill_loc_file(ctx, list, 0, 0), "cannot %s file: %s",
                opened ? "read" : "open",
                quill_read_strerror(err, QUILL_READ_TEXT));
    return QUILL_ERR_IO;
  }
  /* the directory of the list file: relative paths start there */
  char *base = quill_strdup(ctx, list);
  quill_status st = base ? QUILL_OK : QUILL_ERR_NOMEM;
  if (base) {
    char *slash = strrchr(base, '/');
    if (slash)
      slash[1] = '\0';
    else
      base[0] = '\0';
  }
  /* Each line gives at least one sample: no need to parse past the cap. */
  size_t max_rows = ds->max_samples ? ds->max_samples - ds->num : 0;
  quill_calib_list l;
  if (!st)
    st = quill_calib_list_parse(ds, text, len, list, base, max_rows, &l);
  size_t w = ds->num_inputs ? ds->num_inputs : 1;
  for (size_t r = 0; !st && r < l.num_rows && !full(ds); r++)
    st = add_files(ds, (const char *const *)l.paths + r * w);
  if (base)
    quill_calib_list_free(ctx, &l);
  quill_string_free(ctx, base);
  quill_free(ctx, text, cap);
  return st;
}

/* One path of quill_calib_dataset_load. */
static quill_status load_one(quill_calib_dataset *ds, const char *path) {
  struct stat sb;
  if (stat(path, &sb) != 0) {
    quill_error(ds->ctx, quill_loc_file(ds->ctx, path, 0, 0),
                "cannot read calibration data: %s", strerror(errno));
    return QUILL_ERR_IO;
  }
  if (S_ISDIR(sb.st_mode))
    return quill_calib_dataset_load_dir(ds, path);
  if (ends_with(path, ".txt"))
    return load_list(ds, path);
  return quill_calib_dataset_load_files(ds, &path, 1);
}

quill_status quill_calib_dataset_load(quill_calib_dataset *ds,
                                      const char *path) {
  quill_context *ctx = ds->ctx;
  char *copy = quill_strdup(ctx, path);
  if (!copy)
    return QUILL_ERR_NOMEM;
  quill_status st = QUILL_OK;
  for (char *p = copy, *next; !st && p && !full(ds); p = next) {
    next = strchr(p, ',');
    if (next)
      *next++ = '\0';
    if (*p)
      st = load_one(ds, p);
  }
  quill_string_free(ctx, copy);
  return st;
}

/* ---- reading ----------------------------------------------------------------------- */

size_t quill_calib_dataset_size(const quill_calib_dataset *ds) {
  return ds->num;
}

unsigned quill_calib_dataset_num_inputs(const quill_calib_dataset *ds) {
  return ds->num_inputs;
}

quill_type *quill_calib_dataset_input_type(const quill_calib_dataset *ds,
                                           unsigned i) {
  return i < ds->num_inputs ? ds->types[i] : NULL;
}

const char *quill_calib_dataset_input_name(const quill_calib_dataset *ds,
                                           unsigned i) {
  return i < ds->num_inputs ? ds->names[i] : "";
}

const quill_tensor *quill_calib_dataset_sample(const quill_calib_dataset *ds,
                                               size_t i) {
  return i < ds->num ? ds->samples[i].t : NULL;
}

const char *quill_calib_dataset_origin(const quill_calib_dataset *ds,
                                       size_t i, unsigned input) {
  if (i >= ds->num || input >= ds->num_inputs)
    return "";
  return ds->samples[i].origin[input];
}

quill_status quill_calib_dataset_check_graph(const quill_calib_dataset *ds,
                                             const quill_graph *g) {
  quill_context *ctx = ds->ctx;
  unsigned n = quill_graph_num_args(g);
  if (n != ds->num_inputs)
    return quill_error(ctx, quill_graph_loc(g),
                       "the calibration data has %u inputs per sample, the "
                       "graph '%s' has %u",
                       ds->num_inputs, quill_graph_name(g), n);
  for (unsigned i = 0; i < n; i++) {
    quill_type *t = quill_value_type(quill_graph_arg(g, i));
    if (t == ds->types[i])
      continue;
    char *a = type_str(ctx, ds->types[i]), *b = type_str(ctx, t);
    quill_error(ctx, quill_graph_loc(g),
                "calibration input '%s' has type %s, the graph's input %u "
                "has %s",
                ds->names[i], a ? a : "?", i, b ? b : "?");
    quill_string_free(ctx, a);
    quill_string_free(ctx, b);
    return QUILL_ERR_INVALID;
  }
  return QUILL_OK;
}
