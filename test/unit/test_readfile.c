/*
 * test_readfile.c - unit tests of the bounded whole-file reader
 * (ir/readfile.c): regular files of several sizes read exactly (NUL
 * terminated, freed to the last byte: the allocator counts), and every
 * refusal with its error value and *opened: a missing file, a directory,
 * a FIFO (refused at once: a blocking open would hang this test), a
 * device, files over the cap (sparse files, so nothing is written), and
 * standard input ("-") read through a pipe and through a file past the
 * reader's first 64 KiB block.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/readfile.h"
#include "test/unit/check.h"

static size_t live, base; /* bytes held now, and by the context itself */

static void *count_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud;
  if (nsize == 0) {
    if (ptr)
      live -= osize;
    free(ptr);
    return NULL;
  }
  void *p = realloc(ptr, nsize);
  if (p)
    live += nsize - (ptr ? osize : 0);
  return p;
}

static char dir[64];

static const char *at(const char *name) {
  static char path[128];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return path;
}

/* A file of n bytes, byte i = i * 7 (mod 256). */
static void write_file(const char *path, size_t n) {
  FILE *f = fopen(path, "wb");
  for (size_t i = 0; f && i < n; i++)
    fputc((int)(i * 7 % 256), f);
  if (f)
    fclose(f);
}

static bool pattern_ok(const char *data, size_t n) {
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)data[i] != (unsigned char)(i * 7 % 256))
      return false;
  return data[n] == '\0';
}

/* Read path; expect error want (0: success with n pattern bytes). */
static void expect(quill_context *ctx, const char *path, unsigned flags,
                   int want, bool want_opened, size_t n) {
  char *data = (char *)1;
  size_t len = 99, cap = 99;
  bool opened = !want_opened;
  int err = quill_read_file(ctx, path, flags, &data, &len, &cap, &opened);
  CHECK(err == want);
  CHECK(opened == want_opened);
  if (err != want)
    fprintf(stderr, "  %s: error %d (%s), want %d\n", path, err,
            quill_read_strerror(err, flags), want);
  if (want == 0 && err == 0) {
    CHECK(len == n && cap > len);
    CHECK(pattern_ok(data, n));
    quill_free(ctx, data, cap);
  } else {
    CHECK(data == NULL && len == 0 && cap == 0);
  }
  CHECK(live == base);
}

static void test_regular(quill_context *ctx) {
  static const size_t sizes[] = {0, 1, 65535, 65536, 200000};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    write_file(at("f.bin"), sizes[i]);
    expect(ctx, at("f.bin"), 0, 0, true, sizes[i]);
    expect(ctx, at("f.bin"), QUILL_READ_TEXT, 0, true, sizes[i]);
  }
  unlink(at("f.bin"));
}

static void test_refusals(quill_context *ctx) {
  expect(ctx, at("missing"), 0, ENOENT, false, 0);
  expect(ctx, dir, 0, EISDIR, true, 0);
  CHECK(mkfifo(at("fifo"), 0600) == 0);
  expect(ctx, at("fifo"), 0, QUILL_READ_ENOTREG, false, 0);
  unlink(at("fifo"));
  expect(ctx, "/dev/zero", 0, QUILL_READ_ENOTREG, false, 0);
  expect(ctx, "/dev/null", QUILL_READ_TEXT, QUILL_READ_ENOTREG, false, 0);
  /* "-" is a file name unless QUILL_READ_STDIN is given */
  expect(ctx, "-", 0, ENOENT, false, 0);

  /* the caps, on sparse files: one byte over is refused before reading,
   * exactly the cap is accepted (checked with quill_open_regular, which
   * does not read) */
  int fd = open(at("big"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  CHECK(fd >= 0 && ftruncate(fd, (off_t)QUILL_READ_MAX_TEXT + 1) == 0);
  close(fd);
  expect(ctx, at("big"), QUILL_READ_TEXT, QUILL_READ_ETOOBIG, true, 0);
  int rfd;
  uint64_t size;
  CHECK(quill_open_regular(at("big"), QUILL_READ_MAX_TEXT + 1, &rfd,
                           &size) == 0);
  CHECK(size == QUILL_READ_MAX_TEXT + 1);
  if (rfd >= 0)
    close(rfd);
  fd = open(at("big"), O_WRONLY | O_TRUNC);
  CHECK(fd >= 0 && ftruncate(fd, (off_t)QUILL_READ_MAX_DATA + 1) == 0);
  close(fd);
  expect(ctx, at("big"), 0, QUILL_READ_ETOOBIG, true, 0);
  CHECK(quill_open_regular(at("big"), 10, &rfd, &size) == QUILL_READ_ETOOBIG);
  CHECK(rfd == -1 && size == 0);
  unlink(at("big"));

  CHECK(strstr(quill_read_strerror(QUILL_READ_ENOTREG, 0),
               "not a regular file") != NULL);
  CHECK(strstr(quill_read_strerror(QUILL_READ_ETOOBIG, 0), "4 GiB") != NULL);
  CHECK(strstr(quill_read_strerror(QUILL_READ_ETOOBIG, QUILL_READ_TEXT),
               "64 MiB") != NULL);
  CHECK(strcmp(quill_read_strerror(ENOENT, 0), strerror(ENOENT)) == 0);
}

/* Standard input: a pipe holding a few bytes, then a regular file of
 * 200000 bytes (more than the first 64 KiB block: the growth path). */
static void test_stdin(quill_context *ctx) {
  int saved = dup(STDIN_FILENO);
  int p[2];
  CHECK(pipe(p) == 0);
  CHECK(write(p[1], "\0\a\x0e", 3) == 3);
  close(p[1]);
  dup2(p[0], STDIN_FILENO);
  close(p[0]);
  expect(ctx, "-", QUILL_READ_STDIN, 0, true, 3);

  write_file(at("in.bin"), 200000);
  int fd = open(at("in.bin"), O_RDONLY);
  dup2(fd, STDIN_FILENO);
  close(fd);
  expect(ctx, "-", QUILL_READ_STDIN, 0, true, 200000);
  unlink(at("in.bin"));
  dup2(saved, STDIN_FILENO);
  close(saved);
}

int main(void) {
  snprintf(dir, sizeof dir, "/tmp/quill-readfile-XXXXXX");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  quill_context *ctx = quill_context_create(count_alloc, NULL);
  base = live;
  test_regular(ctx);
  test_refusals(ctx);
  test_stdin(ctx);
  quill_context_destroy(ctx);
  CHECK(live == 0);
  rmdir(dir);
  printf("test_readfile: %d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}
