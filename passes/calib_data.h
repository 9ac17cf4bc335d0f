/*
 * calib_data.h - calibration datasets: the input samples the `calibrate`
 * pass runs through a graph (docs/quantization.md, "Calibration data").
 *
 * A dataset is made for the inputs of one graph (their count, names and
 * static types are copied at creation) and holds samples: one host tensor
 * per graph input, each of exactly the input's type. Samples come from
 *
 *   memory       quill_calib_dataset_add (the tensors are copied)
 *   a directory  quill_calib_dataset_load_dir: either .npy files (one-input
 *                graphs; each file one sample or a batch), or one
 *                subdirectory per sample holding <input name>.npy for each
 *                graph input ('/' in a name is written '_')
 *   files        quill_calib_dataset_load_files: .npy files (one-input
 *                graphs)
 *   a path       quill_calib_dataset_load: a directory, an .npy file, or a
 *                list file (.txt: one sample per line, either `FILE.npy`
 *                or `NAME=FILE.npy ...` for every input; paths relative to
 *                the list file; blank lines and lines starting with '#'
 *                are skipped); several paths may be joined with ','
 *
 * A tensor whose type equals the input's is one sample. A tensor of shape
 * [k*N, d1, ...] for an input of shape [N, d1, ...] (same element type) is
 * a batch of k samples and is split along its first dimension (with
 * several inputs, every input must hold the same k). Anything else is an
 * error located at the file, naming the input and both types. Directory
 * entries are taken in byte order of their names (deterministic); hidden
 * entries (a leading '.') and files that are not .npy are ignored.
 *
 * Samples are held in memory. With quill_calib_dataset_set_max_samples(n)
 * the loaders stop after n samples (and do not read further files), so a
 * large directory can be sampled cheaply.
 *
 * Errors are diagnostics through the context (the file or directory as
 * location) plus a status: QUILL_ERR_IO (unreadable), QUILL_ERR_INVALID
 * (shape, type, layout, empty directory), QUILL_ERR_NOMEM. A failed load
 * keeps the samples added before it.
 */
#ifndef QUILL_PASSES_CALIB_DATA_H
#define QUILL_PASSES_CALIB_DATA_H

#include "ir/ir.h"
#include "targets/reference/ref.h"

typedef struct quill_calib_dataset quill_calib_dataset;

/* An empty dataset for the inputs of g. Every call should be paired with
 * quill_calib_dataset_destroy(). Returns NULL on allocation failure, or
 * after an error diagnostic if an input of g is not a statically shaped
 * tensor ("input 'x' has the dynamic type tensor<?x3xf32>: give it a
 * static shape"). The dataset does not keep g. */
quill_calib_dataset *quill_calib_dataset_create(quill_context *ctx,
                                                const quill_graph *g);
/* Free the dataset and every sample (NULL is allowed). */
void quill_calib_dataset_destroy(quill_calib_dataset *ds);

/* Keep at most n samples (0: no limit, the default). Loaders stop reading
 * once the dataset holds n; samples beyond it are never added. */
void quill_calib_dataset_set_max_samples(quill_calib_dataset *ds, size_t n);

/* Add samples from memory: n tensors, one per graph input in order (a
 * sample, or a batch split as above). The data is copied; the caller keeps
 * ownership of `inputs`. `origin` names the tensors in diagnostics (NULL:
 * "sample #i"). */
quill_status quill_calib_dataset_add(quill_calib_dataset *ds,
                                     const quill_tensor *inputs, unsigned n,
                                     const char *origin);

/* Load a directory of .npy files or of per-sample subdirectories. An empty
 * directory (nothing usable in it) is an error. */
quill_status quill_calib_dataset_load_dir(quill_calib_dataset *ds,
                                          const char *dir);
/* Load n .npy files, in the given order (one-input graphs). */
quill_status quill_calib_dataset_load_files(quill_calib_dataset *ds,
                                            const char *const *paths,
                                            size_t n);
/* Load a path: directory, .npy file or .txt list file; "a,b" loads each. */
quill_status quill_calib_dataset_load(quill_calib_dataset *ds,
                                      const char *path);

/* ---- reading ---------------------------------------------------------------- */

size_t quill_calib_dataset_size(const quill_calib_dataset *ds);
unsigned quill_calib_dataset_num_inputs(const quill_calib_dataset *ds);
/* The type of input i. */
quill_type *quill_calib_dataset_input_type(const quill_calib_dataset *ds,
                                           unsigned i);
/* The name of input i (the graph argument's name, or "input<i>"). */
const char *quill_calib_dataset_input_name(const quill_calib_dataset *ds,
                                           unsigned i);
/* Sample i: num_inputs tensors owned by the dataset (read-only). */
const quill_tensor *quill_calib_dataset_sample(const quill_calib_dataset *ds,
                                               size_t i);
/* Where input `input` of sample i came from, for diagnostics:
 * "calib/a.npy", "calib/batch.npy[3]", "calib/s0/x.npy", "sample #2". */
const char *quill_calib_dataset_origin(const quill_calib_dataset *ds,
                                       size_t i, unsigned input);
/* Check that the dataset fits the inputs of g (same count and types);
 * else an error diagnostic at g naming the first mismatch. */
quill_status quill_calib_dataset_check_graph(const quill_calib_dataset *ds,
                                             const quill_graph *g);

#endif /* QUILL_PASSES_CALIB_DATA_H */
