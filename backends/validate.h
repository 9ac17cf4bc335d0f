/*
 * validate.h - helpers shared by the backend config validator's files
 * (backends/validate.c: the config and its op lists; validate_scheme.c: the
 * activation and weight schemes). Private to backends/.
 *
 * Every helper that finds a problem reports it as
 *   `file: key.path: reason`
 * through quill_bkv_error, which also counts it in the vstate.
 */
#ifndef QUILL_BACKENDS_VALIDATE_H
#define QUILL_BACKENDS_VALIDATE_H

#include <jansson.h>

#include "backends/backend_impl.h"

/* One step of a key path: an object key, or (key == NULL) an array index. */
typedef struct kpath {
  const struct kpath *parent;
  const char *key;
  size_t index;
} kpath;

/* The state of one validation run. */
typedef struct vstate {
  quill_context *ctx;
  quill_loc loc; /* the config file */
  unsigned errors;
  bool nomem;
} vstate;

/* Report an error at key path p (NULL: the config as a whole). */
void quill_bkv_error(vstate *vs, const kpath *p, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "an object", "a string", ... for messages. */
const char *quill_bkv_json_kind(const json_t *j);
/* Report "expected <what>, got <kind of j>" unless ok; returns ok. */
bool quill_bkv_want(vstate *vs, const kpath *p, const json_t *j, bool ok,
                    const char *what);
/* Shorthands for the common type checks. */
#define WANT_STRING(vs, p, j)                                                  \
  quill_bkv_want(vs, p, j, json_is_string(j), "a string")
#define WANT_BOOL(vs, p, j)                                                    \
  quill_bkv_want(vs, p, j, json_is_boolean(j), "a boolean")
#define WANT_INT(vs, p, j)                                                     \
  quill_bkv_want(vs, p, j, json_is_integer(j), "an integer")
#define WANT_NUMBER(vs, p, j)                                                  \
  quill_bkv_want(vs, p, j, json_is_number(j), "a number")
#define WANT_ARRAY(vs, p, j)                                                   \
  quill_bkv_want(vs, p, j, json_is_array(j), "an array")
#define WANT_OBJECT(vs, p, j)                                                  \
  quill_bkv_want(vs, p, j, json_is_object(j), "an object")
/* The sections of backends/config_keys.def. */
typedef enum quill_bkey_section {
  QUILL_BKS_TOP,
  QUILL_BKS_SCHEME,
  QUILL_BKS_OBSERVER,
  QUILL_BKS_BIAS,
  QUILL_BKS_FIXED,
  QUILL_BKS_PLUGIN,
  QUILL_BKS_OVERRIDE,
  QUILL_BKS_MATCH,
} quill_bkey_section;

/* One row of backends/config_keys.def. */
typedef struct quill_bkey {
  quill_bkey_section section;
  const char *section_name; /* "TOP", ... */
  const char *key, *type, *dflt, *meaning;
} quill_bkey;

/* Every config key (the rows of config_keys.def, in order). */
extern const quill_bkey quill_backend_keys[];
extern const unsigned quill_backend_num_keys;

/* Report every key of object j that is not a key of `section`, with the
 * closest known key suggested when it looks like a typo. */
void quill_bkv_check_keys(vstate *vs, const kpath *p, json_t *j,
                          quill_bkey_section section);
/* obj[key], or NULL after reporting "required key is missing". */
json_t *quill_bkv_required(vstate *vs, const kpath *p, json_t *obj,
                           const char *key);
/* A string that must be one of `choices` (NULL-terminated): its index, or
 * -1 after reporting. */
int quill_bkv_choice(vstate *vs, const kpath *p, const json_t *j,
                     const char *what, const char *const *choices);
/* An `activation` (is_weight false) or `weight` scheme. True if it is
 * fully valid. */
bool quill_bkv_parse_scheme(vstate *vs, const kpath *p, json_t *j,
                            bool is_weight, quill_quant_scheme *s);

/* An op name (a string naming an op); false after reporting otherwise. */
bool quill_bkv_op_name(vstate *vs, const kpath *p, const json_t *j,
                       quill_opcode *out);
/* `overrides` (backends/override.c): run after the op lists are in b. */
void quill_bkv_parse_overrides(vstate *vs, json_t *root, quill_backend *b);
void quill_bkv_free_overrides(quill_context *ctx, quill_backend *b);

#endif /* QUILL_BACKENDS_VALIDATE_H */
