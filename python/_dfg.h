/* What the parts of the extension dfg._dfg share: _dfg.c (the module and
 * Program), session_object.c (Session), training_object.c (Trainer) and
 * support.c (errors, backends, loading a model). Not a public header. */
#ifndef DFG_PYTHON_DFG_H
#define DFG_PYTHON_DFG_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "dfg/dfg.h"

/* dfg.Error, created when the module is initialized. */
extern PyObject *dfg_error_type;
/* dfg.ArgumentError, a dfg.Error and a ValueError: what the caller passed
 * (a name, a shape, a dtype) is wrong, not the library or the machine. */
extern PyObject *dfg_argument_error_type;

/* Raises dfg.Error "what: dfg_last_error() (status)"; returns NULL. */
PyObject *dfg_py_raise_status(dfg_status status, const char *what);

/* dfg_backend_find, for this extension, which links libdfg whole: before
 * a backend module (libdfg-cuda.so, beside the extension in the package)
 * is opened, the extension's symbols are made global, so that the module,
 * which links no libdfg of its own, binds to this copy of the library
 * (one backend registry, one error message). */
dfg_status dfg_py_find_backend(const char *name, const dfg_backend **out);

/* The OpenMP team of dfg's work called from Python: threads where above
 * 0, else the default, OMP_NUM_THREADS's first value where it sets one,
 * else one per core the process may run on (omp_get_num_procs), whatever
 * the calling thread's own setting: PyTorch sets its main thread's to its
 * own count when imported, while other threads keep OpenMP's, so a
 * session followed its caller's team (its results and its speed
 * depending on the thread that ran it). */
int dfg_py_threads(int threads);

/* Sets the calling thread's OpenMP team to dfg_py_threads(threads) (0:
 * the default); returns the team it had, which dfg_py_restore_threads
 * sets back. */
int dfg_py_use_threads(int threads);
void dfg_py_restore_threads(int had);

/* A Program object owns its dfg_program. */
typedef struct {
    PyObject_HEAD
    dfg_program *program;
} dfg_py_program;

extern PyTypeObject dfg_py_program_type;
extern PyTypeObject dfg_py_session_type;

/* session(program, device[, threads]) -> Session; raises the reason
 * `dfgc devices` gives when the device cannot run here. */
PyObject *dfg_py_create_session(PyObject *module, PyObject *args);

/* Loads the graph of model kind "example" (source: a bundled model's
 * name), "onnx_path" or "onnx_bytes", binding shapes (a dict or None);
 * with training, a bundled model's training graph, or an ONNX model with
 * its cross-entropy loss appended. 0, or -1 with a Python error set. */
int dfg_py_load_graph(const char *kind, PyObject *source, PyObject *shapes,
                      int training, dfg_graph **graph);

/* training_object.c: the Trainer (include/dfg/trainer.h). */
extern PyTypeObject dfg_py_trainer_type;
/* trainer(kind, source, shapes, options) -> Trainer */
PyObject *dfg_py_create_trainer(PyObject *module, PyObject *args);

#endif
