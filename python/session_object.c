/* dfg._dfg.Session: a dfg_session shared by any number of Python threads.
 *
 * Concurrent runs are serialized on the session's lock, which a run takes
 * with the GIL released (and gives back before taking the GIL again), so
 * that other threads keep running Python while one computes and no thread
 * ever holds the lock while waiting for the GIL: no deadlock. One arena,
 * so no memory beyond one session's; runs on one session do not overlap
 * in time (a server wanting that makes several sessions, which share the
 * program and its weights).
 *
 * A session made with a thread count runs (and is created) with the calling
 * thread's OpenMP team set to that count, restored after: the count is
 * the session's, whichever thread calls.
 *
 * Ownership: a Session holds a reference to its Program, which therefore
 * outlives it; close() frees the dfg_session, the Program is let go when
 * the Session object is. */
#include <string.h>
#include <time.h>
#include "python/_dfg.h"
#include "pythread.h"

typedef struct {
    PyObject_HEAD
    dfg_session *session;    /* NULL once closed; read under lock */
    dfg_py_program *program; /* a reference: the program outlives us */
    PyThread_type_lock lock; /* held while the library uses session */
    int threads;             /* the OpenMP team of its runs (dfg_py_threads) */
} session_object;

static void session_dealloc(session_object *self)
{
    dfg_session_destroy(self->session);
    Py_CLEAR(self->program);
    if (self->lock)
        PyThread_free_lock(self->lock);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

PyObject *dfg_py_create_session(PyObject *module, PyObject *args)
{
    (void)module;
    dfg_py_program *program;
    const char *device;
    int threads = 0;
    if (!PyArg_ParseTuple(args, "O!s|i", &dfg_py_program_type, &program,
                          &device, &threads))
        return NULL;
    if (threads < 0)
        return PyErr_Format(PyExc_ValueError, "threads must be at least 1 "
                            "(or None), not %d", threads);
    const dfg_backend *backend = NULL;
    dfg_status st = dfg_py_find_backend(device, &backend);
    if (st != DFG_OK)
        return dfg_py_raise_status(st, "finding the device");
    /* What `dfgc devices` says of a backend that cannot run here (no
     * driver, no device it has kernels for). */
    if (!dfg_backend_available(backend))
        return dfg_py_raise_status(DFG_ERR_DEVICE, "device unavailable");
    session_object *self = PyObject_New(session_object, &dfg_py_session_type);
    if (!self)
        return NULL;
    self->session = NULL;
    self->threads = dfg_py_threads(threads);
    Py_INCREF(program);
    self->program = program;
    self->lock = PyThread_allocate_lock();
    if (!self->lock) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    Py_BEGIN_ALLOW_THREADS
    int had = dfg_py_use_threads(self->threads);
    st = dfg_session_create(program->program, backend, NULL, &self->session);
    dfg_py_restore_threads(had);
    Py_END_ALLOW_THREADS
    if (st != DFG_OK) {
        Py_DECREF(self);
        return dfg_py_raise_status(st, "creating the session");
    }
    return (PyObject *)self;
}

/* Gets n buffers of the program's tensors (inputs or outputs) from seq,
 * each C-contiguous with exactly the tensor's bytes. */
static int get_buffers(const dfg_program *program, PyObject *seq, int inputs,
                       Py_buffer *views, int32_t n)
{
    if (!PyList_Check(seq) || PyList_GET_SIZE(seq) != n) {
        PyErr_Format(PyExc_ValueError, "expected a list of %d %s buffers",
                     (int)n, inputs ? "input" : "output");
        return -1;
    }
    int flags = PyBUF_C_CONTIGUOUS | (inputs ? 0 : PyBUF_WRITABLE);
    for (int32_t i = 0; i < n; i++) {
        dfg_tensor_info info;
        dfg_status st = inputs ? dfg_program_input_info(program, i, &info)
                               : dfg_program_output_info(program, i, &info);
        int64_t bytes = (int64_t)dfg_dtype_size(info.dtype);
        for (int32_t d = 0; st == DFG_OK && d < info.rank; d++)
            bytes *= info.shape[d];
        if (st != DFG_OK ||
            PyObject_GetBuffer(PyList_GET_ITEM(seq, i), &views[i], flags)) {
            for (int32_t k = 0; k < i; k++)
                PyBuffer_Release(&views[k]);
            if (st != DFG_OK)
                dfg_py_raise_status(st, "reading the program's tensors");
            return -1;
        }
        if (views[i].len != bytes) {
            PyErr_Format(PyExc_ValueError, "%s '%s' needs %lld bytes, the "
                         "buffer has %lld", inputs ? "input" : "output",
                         info.name, (long long)bytes,
                         (long long)views[i].len);
            for (int32_t k = 0; k <= i; k++)
                PyBuffer_Release(&views[k]);
            return -1;
        }
    }
    return 0;
}

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* How a run is timed: each run's seconds into times[i] and, for a
 * profiled run, each step's into step_seconds (either may be NULL). */
typedef struct timing {
    double *times, *step_seconds;
} timing;

/* Takes the lock (GIL released by the caller) and runs the session n
 * times, timed as t says. *closed is set to 1 (and nothing runs) when the
 * session was closed meanwhile. */
static dfg_status run_locked(session_object *self, const void **in_ptrs,
                             void **out_ptrs, Py_ssize_t n, timing t,
                             int *closed)
{
    PyThread_acquire_lock(self->lock, WAIT_LOCK);
    *closed = self->session == NULL;
    dfg_status st = DFG_OK;
    double *times = t.times;
    int had = dfg_py_use_threads(self->threads);
    for (Py_ssize_t i = 0; !*closed && st == DFG_OK && i < n; i++) {
        double start = now_seconds();
        st = t.step_seconds
            ? dfg_session_run_profiled(self->session, in_ptrs,
                                       (void *const *)out_ptrs,
                                       t.step_seconds)
            : dfg_session_run(self->session, in_ptrs,
                              (void *const *)out_ptrs);
        if (times)
            times[i] = now_seconds() - start;
    }
    dfg_py_restore_threads(had);
    PyThread_release_lock(self->lock);
    return st;
}

/* Runs n times on the buffers of in_seq and out_seq (lists in the
 * program's order), with the GIL released, timed as for run_locked. 0 or
 * -1 with a Python error set. */
static int run_buffers(session_object *self, PyObject *in_seq,
                       PyObject *out_seq, Py_ssize_t n, timing t)
{
    if (!self->session) {
        PyErr_SetString(PyExc_ValueError, "the session is closed");
        return -1;
    }
    const dfg_program *program = self->program->program;
    int32_t n_in = dfg_program_num_inputs(program);
    int32_t n_out = dfg_program_num_outputs(program);
    Py_buffer *views = PyMem_Calloc((size_t)(n_in + n_out) + 1,
                                    sizeof *views);
    const void **in_ptrs = PyMem_Calloc((size_t)n_in + 1, sizeof *in_ptrs);
    void **out_ptrs = PyMem_Calloc((size_t)n_out + 1, sizeof *out_ptrs);
    int result = -1;
    if (!views || !in_ptrs || !out_ptrs) {
        PyErr_NoMemory();
        goto done;
    }
    if (get_buffers(program, in_seq, 1, views, n_in) != 0)
        goto done;
    if (get_buffers(program, out_seq, 0, views + n_in, n_out) != 0) {
        for (int32_t i = 0; i < n_in; i++)
            PyBuffer_Release(&views[i]);
        goto done;
    }
    for (int32_t i = 0; i < n_in; i++)
        in_ptrs[i] = views[i].buf;
    for (int32_t i = 0; i < n_out; i++)
        out_ptrs[i] = views[n_in + i].buf;
    dfg_status st;
    int closed;
    Py_BEGIN_ALLOW_THREADS
    st = run_locked(self, in_ptrs, out_ptrs, n, t, &closed);
    Py_END_ALLOW_THREADS
    for (int32_t i = 0; i < n_in + n_out; i++)
        PyBuffer_Release(&views[i]);
    if (closed)
        PyErr_SetString(PyExc_ValueError, "the session is closed");
    else if (st != DFG_OK)
        dfg_py_raise_status(st, "running");
    else
        result = 0;
done:
    PyMem_Free(views);
    PyMem_Free(in_ptrs);
    PyMem_Free(out_ptrs);
    return result;
}

/* run(inputs, outputs): inputs and outputs are lists of buffers in the
 * program's order; the outputs are written. */
static PyObject *session_run(session_object *self, PyObject *args)
{
    PyObject *in_seq, *out_seq;
    if (!PyArg_ParseTuple(args, "OO", &in_seq, &out_seq))
        return NULL;
    if (run_buffers(self, in_seq, out_seq, 1, (timing){NULL, NULL}) != 0)
        return NULL;
    Py_RETURN_NONE;
}

/* A new list of the n doubles of values, or NULL with an error set. */
static PyObject *float_list(const double *values, Py_ssize_t n)
{
    PyObject *list = PyList_New(n);
    for (Py_ssize_t i = 0; list && i < n; i++) {
        PyObject *v = PyFloat_FromDouble(values[i]);
        if (!v)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, i, v);
    }
    return list;
}

/* The program's step count. */
static Py_ssize_t n_steps(const session_object *self)
{
    dfg_plan_stats stats;
    dfg_program_stats(self->program->program, &stats);
    return stats.n_steps;
}

/* run_profiled(inputs, outputs) -> [seconds of each step]: one run as
 * run() makes it, each step timed (dfg_session_run_profiled). */
static PyObject *session_run_profiled(session_object *self, PyObject *args)
{
    PyObject *in_seq, *out_seq;
    if (!PyArg_ParseTuple(args, "OO", &in_seq, &out_seq))
        return NULL;
    Py_ssize_t n = n_steps(self);
    double *steps = PyMem_Calloc((size_t)n + 1, sizeof *steps);
    if (!steps)
        return PyErr_NoMemory();
    PyObject *list = run_buffers(self, in_seq, out_seq, 1,
                                 (timing){NULL, steps}) == 0
                         ? float_list(steps, n)
                         : NULL;
    PyMem_Free(steps);
    return list;
}

/* Writes the trace of steps lasting steps[0..n) to a new memory stream
 * (*text, *size; free()), under the lock, since what runs each step is
 * the session's. *closed as for run_locked. Called without the GIL. */
static dfg_status trace_locked(session_object *self, const double *steps,
                               const char **runs_on, Py_ssize_t n,
                               char **text, size_t *size, int *closed)
{
    PyThread_acquire_lock(self->lock, WAIT_LOCK);
    *closed = self->session == NULL;
    dfg_status st = DFG_OK;
    for (Py_ssize_t i = 0; !*closed && i < n; i++)
        dfg_session_step_library(self->session, (int32_t)i, &runs_on[i]);
    FILE *out = *closed ? NULL : open_memstream(text, size);
    if (out) {
        st = dfg_report_step_trace(self->program->program, steps, runs_on,
                                   out);
        fclose(out);
    } else if (!*closed) {
        st = DFG_ERR_OUT_OF_MEMORY;
    }
    PyThread_release_lock(self->lock);
    return st;
}

/* step_trace(step_seconds) -> str: the Perfetto trace of steps lasting
 * step_seconds, each naming what runs it in this session
 * (dfg_report_step_trace). */
static PyObject *session_step_trace(session_object *self, PyObject *args)
{
    PyObject *list;
    if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &list))
        return NULL;
    Py_ssize_t n = n_steps(self);
    if (PyList_GET_SIZE(list) != n)
        return PyErr_Format(PyExc_ValueError, "step_seconds: %zd values "
                            "for %zd steps", PyList_GET_SIZE(list), n);
    double *steps = PyMem_Calloc((size_t)n + 1, sizeof *steps);
    const char **runs_on = PyMem_Calloc((size_t)n + 1, sizeof *runs_on);
    PyObject *result = NULL;
    if (!steps || !runs_on) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        steps[i] = PyFloat_AsDouble(PyList_GET_ITEM(list, i));
    if (PyErr_Occurred())
        goto done;
    char *text = NULL;
    size_t size = 0;
    int closed;
    dfg_status st;
    Py_BEGIN_ALLOW_THREADS
    st = trace_locked(self, steps, runs_on, n, &text, &size, &closed);
    Py_END_ALLOW_THREADS
    if (closed)
        PyErr_SetString(PyExc_ValueError, "the session is closed");
    else if (st != DFG_OK)
        dfg_py_raise_status(st, "writing the trace");
    else
        result = PyUnicode_DecodeUTF8(text, (Py_ssize_t)size, "replace");
    free(text);
done:
    PyMem_Free(steps);
    PyMem_Free(runs_on);
    return result;
}

/* time_runs(inputs, outputs, n) -> [seconds]: run n times back to back,
 * each timed in C (for Program.bench). */
static PyObject *session_time_runs(session_object *self, PyObject *args)
{
    PyObject *in_seq, *out_seq;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "OOn", &in_seq, &out_seq, &n))
        return NULL;
    if (n < 0)
        return PyErr_Format(PyExc_ValueError, "n must be >= 0, not %zd", n);
    double *times = PyMem_Calloc((size_t)n + 1, sizeof *times);
    if (!times)
        return PyErr_NoMemory();
    PyObject *list = run_buffers(self, in_seq, out_seq, n,
                                 (timing){times, NULL}) == 0
                         ? float_list(times, n)
                         : NULL;
    PyMem_Free(times);
    return list;
}

/* close(): waits for a run in progress, then frees the session's memory. */
static PyObject *session_close(session_object *self, PyObject *unused)
{
    (void)unused;
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(self->lock, WAIT_LOCK);
    dfg_session_destroy(self->session);
    self->session = NULL;
    PyThread_release_lock(self->lock);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *session_closed(session_object *self, void *unused)
{
    (void)unused;
    return PyBool_FromLong(self->session == NULL);
}

static PyMethodDef session_methods[] = {
    {"run", (PyCFunction)session_run, METH_VARARGS,
     "run(inputs, outputs): buffers in the program's order"},
    {"time_runs", (PyCFunction)session_time_runs, METH_VARARGS,
     "time_runs(inputs, outputs, n) -> [seconds of each run]"},
    {"run_profiled", (PyCFunction)session_run_profiled, METH_VARARGS,
     "run_profiled(inputs, outputs) -> [seconds of each step]"},
    {"step_trace", (PyCFunction)session_step_trace, METH_VARARGS,
     "step_trace(step_seconds) -> Perfetto trace JSON"},
    {"close", (PyCFunction)session_close, METH_NOARGS,
     "close(): frees the session's memory"},
    {NULL, NULL, 0, NULL},
};

/* The OpenMP team of the session's runs: its thread count, else the
 * calling thread's. */
static PyObject *session_threads(session_object *self, void *unused)
{
    (void)unused;
    return PyLong_FromLong(self->threads);
}

static PyGetSetDef session_getset[] = {
    {"threads", (getter)session_threads, NULL,
     "the threads a run uses (OpenMP)", NULL},
    {"closed", (getter)session_closed, NULL, "whether close() was called",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject dfg_py_session_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "dfg._dfg.Session",
    .tp_basicsize = sizeof(session_object),
    .tp_dealloc = (destructor)session_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A program bound to a device, with its arena; runs from "
              "many threads are serialized on its lock.",
    .tp_methods = session_methods,
    .tp_getset = session_getset,
};
