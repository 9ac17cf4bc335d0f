/*
 * readfile.c - bounded whole-file reads (quill_read_file) and the
 * regular-file check under them (quill_open_regular).
 *
 *   open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)   a FIFO opens at once
 *   fstat: directory -> EISDIR, not regular -> QUILL_READ_ENOTREG,
 *          st_size > cap -> QUILL_READ_ETOOBIG
 *   clear O_NONBLOCK, read() into a block sized from st_size (+1 for the
 *   NUL); when it is full, a one-byte read tells the end from a file that
 *   grew while being read (or a pipe), and only then does the block double
 *   (quill_realloc), never past the cap
 *
 * Standard input ("-" with QUILL_READ_STDIN) may be a pipe or a terminal:
 * it is not size-checked up front, only by the cap while reading. A read
 * error is reported with its errno (EIO if the C library set none).
 */
#include "ir/readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/context.h"

int quill_open_regular(const char *path, uint64_t max, int *fd,
                       uint64_t *size) {
  *fd = -1;
  *size = 0;
  int f = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (f < 0)
    return errno ? errno : EIO;
  struct stat sb;
  int err = 0;
  if (fstat(f, &sb) != 0)
    err = errno ? errno : EIO;
  else if (S_ISDIR(sb.st_mode))
    err = EISDIR;
  else if (!S_ISREG(sb.st_mode))
    err = QUILL_READ_ENOTREG;
  else if (sb.st_size < 0 || (uint64_t)sb.st_size > max)
    err = QUILL_READ_ETOOBIG;
  else {
    int fl = fcntl(f, F_GETFL);
    if (fl < 0 || fcntl(f, F_SETFL, fl & ~O_NONBLOCK) < 0)
      err = errno ? errno : EIO;
  }
  if (err) {
    close(f);
    return err;
  }
  *fd = f;
  *size = (uint64_t)sb.st_size;
  return 0;
}

/* Read fd to its end into a block of at least hint + 1 bytes, at most
 * max bytes of data. */
static int read_fd(quill_context *ctx, int fd, uint64_t hint, uint64_t max,
                   char **data, size_t *len, size_t *cap) {
  if (max > SIZE_MAX - 1)
    max = SIZE_MAX - 1;
  size_t c = hint < (1u << 16) ? (size_t)1 << 16 : (size_t)hint + 1;
  size_t n = 0;
  char *buf = quill_alloc(ctx, c);
  int err = buf ? 0 : ENOMEM;
  while (!err) {
    if (n + 1 >= c) { /* full (room for the NUL): at the end, or grow */
      char probe;
      ssize_t got = read(fd, &probe, 1);
      if (got < 0 && errno == EINTR)
        continue;
      if (got < 0)
        err = errno ? errno : EIO;
      else if (got > 0 && n >= max)
        err = QUILL_READ_ETOOBIG;
      if (got <= 0 || err)
        break;
      size_t nc = c > (SIZE_MAX - 1) / 2 ? SIZE_MAX : c * 2;
      if (nc > max + 1)
        nc = (size_t)max + 1;
      char *nb = quill_realloc(ctx, buf, c, nc);
      if (!nb) {
        err = ENOMEM;
        break;
      }
      buf = nb;
      c = nc;
      buf[n++] = probe;
      continue;
    }
    ssize_t got = read(fd, buf + n, c - n - 1);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      err = errno ? errno : EIO;
    if (got <= 0)
      break;
    n += (size_t)got;
  }
  if (err) {
    if (buf)
      quill_free(ctx, buf, c);
    return err;
  }
  buf[n] = '\0';
  *data = buf;
  *len = n;
  *cap = c;
  return 0;
}

int quill_read_file(quill_context *ctx, const char *path, unsigned flags,
                    char **data, size_t *len, size_t *cap, bool *opened) {
  *data = NULL;
  *len = *cap = 0;
  *opened = false;
  uint64_t max = flags & QUILL_READ_TEXT ? QUILL_READ_MAX_TEXT
                                         : QUILL_READ_MAX_DATA;
  if ((flags & QUILL_READ_STDIN) && strcmp(path, "-") == 0) {
    *opened = true;
    return read_fd(ctx, STDIN_FILENO, 0, max, data, len, cap);
  }
  int fd;
  uint64_t size;
  int err = quill_open_regular(path, max, &fd, &size);
  if (err == EISDIR || err == QUILL_READ_ETOOBIG)
    *opened = true;
  if (err)
    return err;
  *opened = true;
  err = read_fd(ctx, fd, size, max, data, len, cap);
  close(fd);
  return err;
}

const char *quill_read_strerror(int err, unsigned flags) {
  if (err == QUILL_READ_ENOTREG)
    return "not a regular file (FIFOs, devices and sockets are not read)";
  if (err == QUILL_READ_ETOOBIG)
    return flags & QUILL_READ_TEXT
               ? "larger than the 64 MiB limit for lists and configs"
               : "larger than the 4 GiB limit for models and tensors";
  return strerror(err);
}
