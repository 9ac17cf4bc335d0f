/*
 * test_writefile.c - unit tests of the atomic output writer and the output
 * checks (ir/writefile.c).
 *
 * A write that fails part way (the callback fails after writing, or the
 * file size limit, RLIMIT_FSIZE, stops it like a full disk would: EFBIG)
 * must leave the old file byte for byte as it was and no temporary file
 * in the folder, with a diagnostic naming the path and the system error;
 * a success replaces the file whole, keeping its permission bits and a
 * symbolic link pointing at it. /dev/full (written in place, not renamed
 * over) reports ENOSPC. quill_path_same_file compares existing files by
 * inode (through links and "..") and new ones by folder and name.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/ir.h"
#include "test/unit/check.h"

static char last_diag[1024];
static unsigned ndiag;

static void capture(void *ud, quill_loc loc, quill_diag_severity sev,
                    const char *msg) {
  (void)ud, (void)sev;
  snprintf(last_diag, sizeof last_diag, "%s: %s", loc.file ? loc.file : "?",
           msg);
  ndiag++;
}

static quill_context *new_ctx(void) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  quill_diag_set_handler(ctx, capture, NULL);
  return ctx;
}

static char dir[64];

/* The whole content of path into buf (NUL-terminated); its length or -1. */
static long slurp(const char *path, char *buf, size_t cap) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return -1;
  size_t n = fread(buf, 1, cap - 1, f);
  fclose(f);
  buf[n] = '\0';
  return (long)n;
}

static void put(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

/* Number of entries in dir other than . and .. */
static unsigned entries(void) {
  DIR *d = opendir(dir);
  unsigned n = 0;
  for (struct dirent *e; d && (e = readdir(d));)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
      n++;
  if (d)
    closedir(d);
  return n;
}

static quill_status half_then_fail(quill_context *ctx, FILE *f, void *arg) {
  fputs("partial", f);
  return quill_error(ctx, quill_loc_unknown(), "callback failed");
}

static quill_status big(quill_context *ctx, FILE *f, void *arg) {
  for (int i = 0; i < 4096; i++)
    fputs("0123456789abcdef", f);
  return QUILL_OK;
}

static void test_atomic(void) {
  quill_context *ctx = new_ctx();
  char path[128], buf[256];
  snprintf(path, sizeof path, "%s/out.txt", dir);
  put(path, "old contents\n");
  chmod(path, 0600);
  /* success: replaced whole, mode kept */
  CHECK(quill_write_file(ctx, path, "new\n", 4) == QUILL_OK);
  CHECK(slurp(path, buf, sizeof buf) == 4 && !strcmp(buf, "new\n"));
  struct stat st;
  CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0600);
  CHECK(entries() == 1);
  /* the callback fails after writing: old file untouched, no temp file,
   * the callback's own diagnostic only */
  ndiag = 0;
  CHECK(quill_write_file_stream(ctx, path, half_then_fail, NULL) ==
        QUILL_ERR_INVALID);
  CHECK(ndiag == 1 && strstr(last_diag, "callback failed"));
  CHECK(slurp(path, buf, sizeof buf) == 4 && !strcmp(buf, "new\n"));
  CHECK(entries() == 1);
  /* a symbolic link keeps pointing at the file, which is replaced */
  char link[128];
  snprintf(link, sizeof link, "%s/link.txt", dir);
  CHECK(symlink("out.txt", link) == 0);
  CHECK(quill_write_file(ctx, link, "via link\n", 9) == QUILL_OK);
  struct stat ls;
  CHECK(lstat(link, &ls) == 0 && S_ISLNK(ls.st_mode));
  CHECK(slurp(path, buf, sizeof buf) == 9 && !strcmp(buf, "via link\n"));
  CHECK(entries() == 2);
  unlink(link);
  /* a missing folder: the path and the system error */
  char bad[128];
  snprintf(bad, sizeof bad, "%s/no/such/x.bin", dir);
  CHECK(quill_write_file(ctx, bad, "x", 1) == QUILL_ERR_IO);
  CHECK(strstr(last_diag, "no/such/x.bin: cannot write output file: No such "
                          "file or directory") != NULL);
  quill_context_destroy(ctx);
}

/* The file size limit makes the write fail part way (EFBIG), as a full
 * disk does: the old file stays, no temp file is left. */
static void test_size_limit(void) {
  quill_context *ctx = new_ctx();
  char path[128], buf[256];
  snprintf(path, sizeof path, "%s/out.txt", dir);
  put(path, "old contents\n");
  struct rlimit old, lim;
  CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
  lim = old;
  lim.rlim_cur = 1024;
  void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
  CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
  quill_status st = quill_write_file_stream(ctx, path, big, NULL);
  setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, prev);
  CHECK(st == QUILL_ERR_IO);
  CHECK(strstr(last_diag, "out.txt: cannot write output file: File too large"));
  CHECK(slurp(path, buf, sizeof buf) == 13 &&
        !strcmp(buf, "old contents\n"));
  CHECK(entries() == 1);
  quill_context_destroy(ctx);
}

/* /dev/full exists and is not a regular file: written in place, ENOSPC. */
static void test_device(void) {
  quill_context *ctx = new_ctx();
  if (access("/dev/full", W_OK) == 0) {
    CHECK(quill_write_file(ctx, "/dev/full", "x\n", 2) == QUILL_ERR_IO);
    CHECK(strstr(last_diag, "/dev/full: cannot write output file: No space "
                            "left on device") != NULL);
  }
  CHECK(quill_write_file(ctx, "/dev/null", "x\n", 2) == QUILL_OK);
  FILE *f = fopen("/dev/full", "w");
  if (f) {
    fputs("lost", f);
    CHECK(quill_write_flush(f) == ENOSPC);
    fclose(f);
  }
  quill_context_destroy(ctx);
}

static void test_same_file(void) {
  quill_context *ctx = new_ctx();
  char a[128], b[128], c[128], sub[128], link[128];
  snprintf(a, sizeof a, "%s/a.onnx", dir);
  snprintf(sub, sizeof sub, "%s/sub", dir);
  CHECK(mkdir(sub, 0777) == 0);
  snprintf(b, sizeof b, "%s/sub/../a.onnx", dir);
  snprintf(c, sizeof c, "%s/sub/../new.qir", dir);
  snprintf(link, sizeof link, "%s/l.onnx", dir);
  put(a, "model");
  CHECK(symlink("a.onnx", link) == 0);
  CHECK(quill_path_same_file(a, b));    /* the same inode */
  CHECK(quill_path_same_file(a, link)); /* through the link */
  CHECK(!quill_path_same_file(a, c));
  char c2[128];
  snprintf(c2, sizeof c2, "%s/new.qir", dir);
  CHECK(quill_path_same_file(c, c2)); /* neither exists: folder + name */
  CHECK(!quill_path_same_file(a, "-"));
  CHECK(!quill_path_same_file(NULL, a));
  CHECK(quill_write_check_distinct(ctx, link, a, "input model") ==
        QUILL_ERR_INVALID);
  CHECK(strstr(last_diag, "l.onnx: the output file is the input model '") &&
        strstr(last_diag, "a.onnx'; refusing to overwrite it"));
  CHECK(quill_write_check_distinct(ctx, c, a, "input model") == QUILL_OK);
  unlink(link);
  unlink(a);
  rmdir(sub);
  quill_context_destroy(ctx);
}

int main(void) {
  snprintf(dir, sizeof dir, "/tmp/quill-writefile-XXXXXX");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  test_atomic();
  test_size_limit();
  test_device();
  {
    char path[128];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    unlink(path);
  }
  test_same_file();
  CHECK(entries() == 0);
  rmdir(dir);
  printf("test_writefile: %d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}
