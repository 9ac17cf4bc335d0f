/*
 * readfile.c - quill_read_file: fopen, then fread into a block that starts
 * at 64 KiB and doubles (quill_realloc) until a read returns nothing; a
 * stream error is reported with its errno (EIO if the C library set none).
 * Streaming rather than fseek/ftell, so pipes and /dev/stdin work too.
 */
#include "ir/readfile.h"

#include <errno.h>
#include <stdio.h>

int quill_read_file(quill_context *ctx, const char *path, char **data,
                    size_t *len, size_t *cap, bool *opened) {
  *data = NULL;
  *len = *cap = 0;
  *opened = false;
  FILE *f = fopen(path, "rb");
  if (!f)
    return errno ? errno : EIO;
  *opened = true;
  size_t n = 0, c = 1 << 16;
  char *buf = quill_alloc(ctx, c);
  int err = buf ? 0 : ENOMEM;
  while (!err) {
    if (n + 1 >= c) { /* room for the NUL */
      char *nb = quill_realloc(ctx, buf, c, c * 2);
      if (!nb) {
        err = ENOMEM;
        break;
      }
      buf = nb;
      c *= 2;
    }
    errno = 0;
    size_t got = fread(buf + n, 1, c - n - 1, f);
    n += got;
    if (got == 0) {
      if (ferror(f))
        err = errno ? errno : EIO;
      break;
    }
  }
  fclose(f);
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
