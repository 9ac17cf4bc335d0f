/*
 * writefile.c - atomic output files (quill_write_file_stream) and the
 * checks around outputs (quill_write_flush, quill_path_same_file).
 *
 *   path "-"                  -> stdout: fn, fflush, ferror
 *   path exists, not regular  -> fopen(path): fn, fflush, ferror, fclose
 *   otherwise (symlinks resolved to their target)
 *     open PATH.tmp.PID.N (O_EXCL, 0666 minus the umask, or the old mode)
 *     fn, fflush, fsync, ferror, fclose   any failure: unlink the temp
 *     rename(temp, PATH)                  the old PATH is replaced whole
 *
 * The errno of the first failing step goes into the diagnostic
 * ("m.qir: error: cannot write output file: No space left on device").
 */
#define _XOPEN_SOURCE 700 /* realpath(), fchmod() */
#include "ir/writefile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/context.h"

int quill_write_flush(FILE *f) {
  errno = 0;
  int rc = fflush(f);
  int err = errno;
  if (rc == 0 && !ferror(f))
    return 0;
  if (!err) {
    /* A write failed earlier (output longer than the stream's buffer), and
     * its errno is gone; the output is lost anyway, so one more byte
     * reproduces the cause (ENOSPC rather than a bare EIO). */
    clearerr(f);
    errno = 0;
    if (fputc('\n', f) == EOF || fflush(f) != 0 || ferror(f))
      err = errno;
    else
      err = EIO;
  }
  return err ? err : EIO;
}

static quill_status io_error(quill_context *ctx, const char *path, int err) {
  if (!strcmp(path, "-"))
    quill_error(ctx, quill_loc_named(ctx, "<stdout>"),
                "cannot write standard output: %s", strerror(err ? err : EIO));
  else
    quill_error(ctx, quill_loc_file(ctx, path, 0, 0),
                "cannot write output file: %s", strerror(err ? err : EIO));
  return QUILL_ERR_IO;
}

/* Run fn on f and check the stream; 0 or the errno value of the failure,
 * with *st set to fn's status (then the errno value is 0). A callback
 * that saw the stream fail itself (QUILL_ERR_IO, as quill_module_dump
 * returns) leaves the diagnostic to us. */
static int run_fn(quill_context *ctx, FILE *f, quill_write_fn fn, void *arg,
                  quill_status *st) {
  errno = 0;
  *st = fn(ctx, f, arg);
  int err = errno;
  if (*st == QUILL_ERR_IO && ferror(f))
    *st = QUILL_OK;
  if (*st)
    return 0;
  if (ferror(f))
    return err ? err : EIO;
  return quill_write_flush(f);
}

/* An existing non-regular file (a device, a FIFO) or stdout: in place. */
static quill_status write_in_place(quill_context *ctx, const char *path,
                                   quill_write_fn fn, void *arg) {
  bool out = !strcmp(path, "-");
  errno = 0;
  FILE *f = out ? stdout : fopen(path, "wb");
  if (!f)
    return io_error(ctx, path, errno);
  quill_status st;
  int err = run_fn(ctx, f, fn, arg, &st);
  if (!out) {
    errno = 0;
    if (fclose(f) != 0 && !err && !st)
      err = errno ? errno : EIO;
  }
  if (st)
    return st;
  return err ? io_error(ctx, path, err) : QUILL_OK;
}

/* The temporary file beside `target`: PATH.tmp.PID.N, opened O_EXCL. */
static int open_temp(const char *target, char *tmp, size_t n, mode_t mode,
                     int *err) {
  int fd = -1;
  *err = 0;
  for (unsigned k = 0; k < 100 && fd < 0; k++) {
    snprintf(tmp, n, "%s.tmp.%ld.%u", target, (long)getpid(), k);
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    *err = fd < 0 ? errno : 0;
    if (fd < 0 && *err != EEXIST)
      break;
  }
  return fd;
}

quill_status quill_write_file_stream(quill_context *ctx, const char *path,
                                     quill_write_fn fn, void *arg) {
  struct stat ls, st_old;
  bool exists = stat(path, &st_old) == 0;
  if (!strcmp(path, "-") || (exists && !S_ISREG(st_old.st_mode)))
    return write_in_place(ctx, path, fn, arg);
  /* A symbolic link keeps pointing at the file it names. */
  char *real = NULL;
  if (exists && lstat(path, &ls) == 0 && S_ISLNK(ls.st_mode))
    real = realpath(path, NULL);
  const char *target = real ? real : path;
  size_t n = strlen(target) + 48;
  char *tmp = quill_alloc(ctx, n);
  if (!tmp) {
    free(real);
    return QUILL_ERR_NOMEM;
  }
  int err;
  /* 0666 minus the umask, like any file the user creates; an old file's
   * permission bits are kept */
  int fd = open_temp(target, tmp, n, 0666, &err);
  quill_status st = QUILL_OK;
  if (fd >= 0) {
    if (exists && fchmod(fd, st_old.st_mode & 07777) != 0)
      err = errno;
    FILE *f = err ? NULL : fdopen(fd, "wb");
    if (!f && !err)
      err = errno ? errno : EIO;
    if (f) {
      err = run_fn(ctx, f, fn, arg, &st);
      errno = 0;
      if (!err && !st && fsync(fileno(f)) != 0)
        err = errno ? errno : EIO;
      errno = 0;
      if (fclose(f) != 0 && !err && !st)
        err = errno ? errno : EIO;
    } else {
      close(fd);
    }
    if (!err && !st && rename(tmp, target) != 0)
      err = errno;
    if (err || st)
      unlink(tmp);
  }
  quill_free(ctx, tmp, n);
  free(real);
  if (st)
    return st;
  return err ? io_error(ctx, path, err) : QUILL_OK;
}

typedef struct bytes {
  const void *data;
  size_t size;
} bytes;

static quill_status write_bytes(quill_context *ctx, FILE *f, void *arg) {
  const bytes *b = arg;
  if (b->size)
    fwrite(b->data, 1, b->size, f); /* checked by the caller (ferror) */
  return QUILL_OK;
}

quill_status quill_write_file(quill_context *ctx, const char *path,
                              const void *data, size_t size) {
  bytes b = {data, size};
  return quill_write_file_stream(ctx, path, write_bytes, &b);
}

/* ---- outputs that name inputs ------------------------------------------ */

/* realpath of the folder of p, then "/" and its last component, into a
 * malloc'd string; NULL when the folder does not resolve. */
static char *canonical(const char *p) {
  const char *slash = strrchr(p, '/');
  const char *base = slash ? slash + 1 : p;
  char *dir;
  if (!slash) {
    dir = realpath(".", NULL);
  } else {
    size_t n = slash == p ? 1 : (size_t)(slash - p);
    char *d = malloc(n + 1);
    if (!d)
      return NULL;
    memcpy(d, p, n);
    d[n] = '\0';
    dir = realpath(d, NULL);
    free(d);
  }
  if (!dir)
    return NULL;
  size_t n = strlen(dir) + strlen(base) + 2;
  char *r = malloc(n);
  if (r)
    snprintf(r, n, "%s/%s", dir, base);
  free(dir);
  return r;
}

bool quill_path_same_file(const char *a, const char *b) {
  if (!a || !b || !strcmp(a, "-") || !strcmp(b, "-"))
    return false;
  struct stat sa, sb;
  bool ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
  if (ea && eb)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  if (ea != eb)
    return false;
  if (!strcmp(a, b))
    return true;
  char *ca = canonical(a), *cb = canonical(b);
  bool same = ca && cb && !strcmp(ca, cb);
  free(ca);
  free(cb);
  return same;
}

quill_status quill_write_check_distinct(quill_context *ctx, const char *out,
                                        const char *in, const char *what) {
  if (!quill_path_same_file(out, in))
    return QUILL_OK;
  return quill_error(ctx, quill_loc_file(ctx, out, 0, 0),
                     "the output file is the %s '%s'; refusing to "
                     "overwrite it",
                     what, in);
}

quill_status quill_write_check_outputs(quill_context *ctx,
                                       const char *const *outs, unsigned nout,
                                       const char *const *ins, unsigned nin) {
  for (unsigned i = 0; i < nout; i++) {
    if (!outs[i])
      continue;
    for (unsigned j = 0; j < nin; j++)
      if (quill_write_check_distinct(ctx, outs[i], ins[j], "input file"))
        return QUILL_ERR_INVALID;
    for (unsigned j = 0; j < i; j++)
      if (quill_path_same_file(outs[i], outs[j]))
        return quill_error(ctx, quill_loc_file(ctx, outs[i], 0, 0),
                           "two outputs name the same file ('%s' and '%s')",
                           outs[j], outs[i]);
  }
  return QUILL_OK;
}
