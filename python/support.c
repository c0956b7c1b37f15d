/* What the module (_dfg.c) and its objects (session_object.c,
 * training_object.c) share: raising dfg's errors, finding a backend, and
 * loading a model's graph (python/_dfg.h). Calls nothing in those files,
 * so that they call each other only one way. */
#include <dlfcn.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include "python/_dfg.h"

#define MAX_SHAPE_BINDINGS 64

PyObject *dfg_py_raise_status(dfg_status status, const char *what)
{
    int argument = status == DFG_ERR_INVALID_ARGUMENT ||
                   status == DFG_ERR_NOT_FOUND || status == DFG_ERR_SHAPE ||
                   status == DFG_ERR_DTYPE;
    PyErr_Format(argument ? dfg_argument_error_type : dfg_error_type,
                 "%s: %s (%s)", what, dfg_last_error(),
                 dfg_status_name(status));
    return NULL;
}

dfg_status dfg_py_find_backend(const char *name, const dfg_backend **out)
{
    Dl_info self;
    if (name && strcmp(name, "cpu") != 0 &&
        dladdr((const void *)&dfg_py_find_backend, &self) && self.dli_fname)
        /* A reference never dropped: the extension is never unloaded. */
        (void)dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
    return dfg_backend_find(name, out);
}

int dfg_py_threads(int threads)
{
    if (threads > 0)
        return threads;
    const char *set = getenv("OMP_NUM_THREADS");
    char *end = NULL;
    long first = set ? strtol(set, &end, 10) : 0;
    if (set && end != set && first > 0 && first <= 1 << 16 &&
        (*end == 0 || *end == ','))
        return (int)first;
    return omp_get_num_procs();
}

int dfg_py_use_threads(int threads)
{
    int had = omp_get_max_threads();
    omp_set_num_threads(dfg_py_threads(threads));
    return had;
}

void dfg_py_restore_threads(int had) { omp_set_num_threads(had); }

/* Fills bindings from a dict {name: shape tuple}; names point into the
 * dict's keys, alive as long as the dict. */
static int parse_shapes(PyObject *shapes, dfg_onnx_binding *bindings,
                        int32_t *n)
{
    *n = 0;
    if (shapes == Py_None)
        return 0;
    if (!PyDict_Check(shapes)) {
        PyErr_SetString(PyExc_TypeError, "shapes must be a dict of name to "
                                         "shape");
        return -1;
    }
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(shapes, &pos, &key, &value)) {
        if (*n == MAX_SHAPE_BINDINGS) {
            PyErr_SetString(PyExc_ValueError, "too many shape bindings");
            return -1;
        }
        dfg_onnx_binding *b = &bindings[*n];
        memset(b, 0, sizeof *b);
        b->name = PyUnicode_AsUTF8(key);
        if (!b->name)
            return -1;
        if (PyLong_Check(value)) { /* a symbolic dimension: DIM=8 */
            b->rank = -1;
            b->shape[0] = PyLong_AsLongLong(value);
        } else {
            PyObject *seq = PySequence_Fast(value, "a shape must be a "
                                                   "sequence of ints");
            if (!seq)
                return -1;
            Py_ssize_t rank = PySequence_Fast_GET_SIZE(seq);
            if (rank > DFG_MAX_RANK) {
                Py_DECREF(seq);
                PyErr_Format(PyExc_ValueError, "shape of '%s' has more than "
                             "%d dimensions", b->name, DFG_MAX_RANK);
                return -1;
            }
            b->rank = (int32_t)rank;
            for (Py_ssize_t i = 0; i < rank; i++)
                b->shape[i] = PyLong_AsLongLong(
                    PySequence_Fast_GET_ITEM(seq, i));
            Py_DECREF(seq);
        }
        if (PyErr_Occurred())
            return -1;
        (*n)++;
    }
    return 0;
}

int dfg_py_load_graph(const char *kind, PyObject *source, PyObject *shapes,
                      int training, dfg_graph **graph)
{
    dfg_onnx_binding bindings[MAX_SHAPE_BINDINGS];
    dfg_onnx_options onnx;
    dfg_onnx_options_init(&onnx);
    onnx.keep_transposed_copies = training;
    if (parse_shapes(shapes, bindings, &onnx.n_bindings) != 0)
        return -1;
    onnx.bindings = bindings;
    *graph = NULL;
    dfg_status st;
    if (strcmp(kind, "example") == 0) {
        const char *name = PyUnicode_AsUTF8(source);
        if (!name)
            return -1;
        Py_BEGIN_ALLOW_THREADS
        st = training ? dfg_model_build_training(name, NULL, graph)
                      : dfg_model_build(name, NULL, graph);
        Py_END_ALLOW_THREADS
    } else if (strcmp(kind, "onnx_path") == 0) {
        PyObject *bytes = NULL;
        if (!PyUnicode_FSConverter(source, &bytes))
            return -1;
        const char *path = PyBytes_AS_STRING(bytes);
        Py_BEGIN_ALLOW_THREADS
        st = dfg_onnx_import_file(path, &onnx, NULL, graph);
        Py_END_ALLOW_THREADS
        Py_DECREF(bytes);
    } else if (strcmp(kind, "onnx_bytes") == 0) {
        Py_buffer view;
        if (PyObject_GetBuffer(source, &view, PyBUF_SIMPLE) != 0)
            return -1;
        Py_BEGIN_ALLOW_THREADS
        st = dfg_onnx_import_memory(view.buf, (size_t)view.len, &onnx, NULL,
                                    graph);
        Py_END_ALLOW_THREADS
        PyBuffer_Release(&view);
    } else {
        PyErr_Format(PyExc_ValueError, "unknown model kind '%s'", kind);
        return -1;
    }
    if (st != DFG_OK) {
        dfg_py_raise_status(st, "loading the model");
        return -1;
    }
    /* An ONNX classifier trains with its loss appended (cross entropy on
     * its first output, include/dfg/training.h). */
    if (training && strcmp(kind, "example") != 0 &&
        (st = dfg_graph_add_loss(*graph, DFG_LOSS_CROSS_ENTROPY, NULL)) !=
            DFG_OK) {
        dfg_graph_destroy(*graph);
        *graph = NULL;
        dfg_py_raise_status(st, "appending the loss");
        return -1;
    }
    return 0;
}
