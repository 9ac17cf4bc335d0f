/*
 * noamx.c - an LD_PRELOAD library that runs a process as on a CPU without
 * AMX, for bench/peers.py --no-amx.
 *
 * Linux hands out AMX's tile state only to processes that ask for it:
 * arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA), which onnxruntime's
 * MLAS and oneDNN (OpenVINO, PyTorch) make through libc's syscall() before
 * they pick AMX kernels. This library answers that one request with EPERM
 * and passes every other syscall() through, so each engine falls back to
 * the kernels it runs on an AVX-512 VNNI CPU without AMX (an AMD Zen 4,
 * say). peers.py also sets ONEDNN_MAX_CPU_ISA=AVX512_CORE_VNNI, oneDNN's
 * own switch, for the engines built on it.
 *
 * Build: cc -O2 -shared -fPIC -o noamx.so noamx.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/syscall.h>

#define ARCH_REQ_XCOMP_PERM 0x1023

long syscall(long number, ...) {
  typedef long (*syscall_fn)(long, ...);
  long arg[6];
  va_list ap;
  va_start(ap, number);
  for (int i = 0; i < 6; i++)
    arg[i] = va_arg(ap, long);
  va_end(ap);
  if (number == SYS_arch_prctl && arg[0] == ARCH_REQ_XCOMP_PERM) {
    errno = EPERM;
    return -1;
  }
  syscall_fn next = (syscall_fn)dlsym(RTLD_NEXT, "syscall");
  if (!next) {
    errno = ENOSYS;
    return -1;
  }
  return next(number, arg[0], arg[1], arg[2], arg[3], arg[4], arg[5]);
}
