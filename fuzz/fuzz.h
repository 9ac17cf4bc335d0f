/*
 * fuzz.h - shared by the libFuzzer targets (fuzz/fuzz_*.c): the
 * diagnostic handler that drops every message. A fuzzer checks statuses
 * and invariants, not the text of diagnostics, and printing millions of
 * them would only slow it down.
 */
#ifndef QUILL_FUZZ_FUZZ_H
#define QUILL_FUZZ_FUZZ_H

#include "ir/context.h"

static inline void fuzz_silent(void *ud, quill_loc loc,
                               quill_diag_severity sev, const char *msg) {
  (void)ud, (void)loc, (void)sev, (void)msg;
}

#endif /* QUILL_FUZZ_FUZZ_H */
