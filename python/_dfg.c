/* dfg._dfg: the CPython extension under the `dfg` package (python/dfg/).
 * A thin layer over the public C API: it owns dfg_program and dfg_session
 * handles, turns every failing status into dfg.Error carrying
 * dfg_last_error() (dfg.ArgumentError for a caller's wrong name, shape or
 * dtype), and runs sessions with the GIL released. This file holds the
 * module and Program; session_object.c the Session. Checking names,
 * dtypes and shapes, and building NumPy arrays, is the package's Python
 * side; this side still checks every buffer's size, so that nothing a
 * caller passes can make the library read or write out of bounds.
 *
 * Ownership: a Program object owns its dfg_program; a Session object owns
 * its dfg_session and holds a reference to its Program, which therefore
 * outlives it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "python/_dfg.h"

#ifndef DFG_PY_CUDA_MODULE /* set by python/meson.build */
#define DFG_PY_CUDA_MODULE 0
#endif

PyObject *dfg_error_type;
PyObject *dfg_argument_error_type;

/* ---- Program ---------------------------------------------------------- */


static void program_dealloc(dfg_py_program *self)
{
    dfg_program_destroy(self->program);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *wrap_program(dfg_program *program)
{
    dfg_py_program *self = PyObject_New(dfg_py_program, &dfg_py_program_type);
    if (!self) {
        dfg_program_destroy(program);
        return NULL;
    }
    self->program = program;
    return (PyObject *)self;
}

/* compile(kind, source, shapes, planner, alignment, training, precision
 *         [, device, prefer_memory, budget_bytes, budget_percent,
 *          tiling, fuse]):
 *   kind "example": source is a bundled model name;
 *   kind "onnx_path" / "onnx_bytes": an ONNX file's path or its bytes;
 *   device: the backend the program is for, as `dfgc compile --device`
 *   (dfg_compile_options_for); None: the CPU; prefer_memory: as
 *   `dfgc compile --prefer memory` (dfg_compile_options.prefer_memory);
 *   a training program's memory budget: bytes, or percent of the arena
 *   without one (include/dfg/training.h); tiling: 0 as `dfgc compile
 *   --no-tiling` (dfg_compile_options.tiling); fuse: 0 as `dfgc compile
 *   --no-fuse` (dfg_compile_options.fuse_operators). */
static PyObject *compile_model(PyObject *module, PyObject *args)
{
    (void)module;
    const char *kind, *planner = NULL, *precision = NULL, *device = NULL;
    PyObject *source, *shapes;
    unsigned long long alignment = 0, budget_bytes = 0;
    float budget_percent = 0.0f;
    int training = 0, prefer_memory = 0, tiling = 1, fuse = 1;
    if (!PyArg_ParseTuple(args, "sOOzKpz|ziKfpp", &kind, &source, &shapes,
                          &planner, &alignment, &training, &precision,
                          &device, &prefer_memory, &budget_bytes,
                          &budget_percent, &tiling, &fuse))
        return NULL;
    dfg_compile_options options;
    dfg_compile_options_init(&options);
    if (planner && dfg_planner_from_name(planner, &options.planner) != 0)
        return PyErr_Format(PyExc_ValueError, "unknown planner '%s'",
                            planner);
    if (alignment)
        options.alignment = alignment;
    if (prefer_memory < 0 || prefer_memory > DFG_PREFER_SMALLEST)
        return PyErr_Format(PyExc_ValueError, "prefer_memory %d: 0, 1 or %d",
                            prefer_memory, DFG_PREFER_SMALLEST);
    options.prefer_memory = prefer_memory;
    options.tiling = tiling;
    options.fuse_operators = fuse;
    options.allow_tf32 = precision && strcmp(precision, "tf32") == 0;
    if (precision && !options.allow_tf32 &&
        (dfg_dtype_from_name(precision, &options.precision) != 0 ||
         (options.precision != DFG_F32 && options.precision != DFG_F16 &&
          options.precision != DFG_BF16)))
        return PyErr_Format(PyExc_ValueError, "precision '%s': f32, bf16, "
                            "tf32 or f16", precision);
    if (device) {
        const dfg_backend *backend = NULL;
        dfg_status found = dfg_py_find_backend(device, &backend);
        if (found == DFG_OK)
            found = dfg_compile_options_for(&options,
                                            dfg_backend_target(backend));
        if (found != DFG_OK)
            return dfg_py_raise_status(found, "finding the device");
    }

    dfg_graph *graph = NULL;
    if (dfg_py_load_graph(kind, source, shapes, training, &graph) != 0)
        return NULL;
    dfg_training_options train;
    if (training) {
        dfg_training_options_init(&train);
        train.loss = "loss";
        train.memory_budget_bytes = budget_bytes;
        train.memory_budget_percent = budget_percent;
        options.training = &train;
    }
    dfg_program *program = NULL;
    dfg_status st;
    Py_BEGIN_ALLOW_THREADS
    /* Costed for the team its sessions run on by default. */
    int had = dfg_py_use_threads(0);
    st = dfg_compile(graph, &options, &program);
    dfg_py_restore_threads(had);
    Py_END_ALLOW_THREADS
    dfg_graph_destroy(graph);
    if (st != DFG_OK)
        return dfg_py_raise_status(st, "compiling");
    return wrap_program(program);
}

static PyObject *load_program(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *bytes = NULL;
    if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &bytes))
        return NULL;
    dfg_program *program = NULL;
    dfg_status st;
    const char *path = PyBytes_AS_STRING(bytes);
    Py_BEGIN_ALLOW_THREADS
    st = dfg_program_load(path, NULL, &program);
    Py_END_ALLOW_THREADS
    Py_DECREF(bytes);
    if (st != DFG_OK)
        return dfg_py_raise_status(st, "loading the program");
    return wrap_program(program);
}

static PyObject *program_save(dfg_py_program *self, PyObject *args)
{
    PyObject *bytes = NULL;
    if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &bytes))
        return NULL;
    dfg_status st = dfg_program_save(self->program, PyBytes_AS_STRING(bytes));
    Py_DECREF(bytes);
    if (st != DFG_OK)
        return dfg_py_raise_status(st, "saving the program");
    Py_RETURN_NONE;
}

static PyObject *program_stats(dfg_py_program *self, PyObject *unused)
{
    (void)unused;
    dfg_plan_stats s;
    dfg_program_stats(self->program, &s);
    return Py_BuildValue("{sKsKsKsKsKsssisisi}",
                         "arena_bytes", (unsigned long long)s.arena_bytes,
                         "lower_bound_bytes",
                         (unsigned long long)s.lower_bound_bytes,
                         "no_reuse_bytes", (unsigned long long)s.no_reuse_bytes,
                         "weights_bytes", (unsigned long long)s.weights_bytes,
                         "alignment", (unsigned long long)s.alignment,
                         "planner", dfg_planner_name(s.planner),
                         "verified", s.verified, "n_steps", (int)s.n_steps,
                         "n_tensors", (int)s.n_tensors);
}

static PyObject *tensor_list(const dfg_program *program, int inputs)
{
    int32_t n = inputs ? dfg_program_num_inputs(program)
                       : dfg_program_num_outputs(program);
    PyObject *list = PyList_New(n);
    for (int32_t i = 0; list && i < n; i++) {
        dfg_tensor_info info;
        dfg_status st = inputs ? dfg_program_input_info(program, i, &info)
                               : dfg_program_output_info(program, i, &info);
        if (st != DFG_OK) {
            Py_DECREF(list);
            return dfg_py_raise_status(st, "reading the program's tensors");
        }
        PyObject *shape = PyTuple_New(info.rank);
        for (int32_t d = 0; shape && d < info.rank; d++)
            PyTuple_SET_ITEM(shape, d, PyLong_FromLongLong(info.shape[d]));
        PyObject *item = shape ? Py_BuildValue("(ssN)", info.name,
                                               dfg_dtype_name(info.dtype),
                                               shape)
                               : NULL;
        if (!item) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, item);
    }
    return list;
}

static PyObject *program_inputs(dfg_py_program *self, PyObject *unused)
{
    (void)unused;
    return tensor_list(self->program, 1);
}

static PyObject *program_outputs(dfg_py_program *self, PyObject *unused)
{
    (void)unused;
    return tensor_list(self->program, 0);
}

/* Program.memory: dfg_memory_predict on the CPU, as a dict of bytes. */
static PyObject *program_memory(dfg_py_program *self, PyObject *unused)
{
    (void)unused;
    const dfg_backend *cpu = NULL;
    dfg_memory_prediction m;
    dfg_status st = dfg_backend_find("cpu", &cpu);
    if (st == DFG_OK)
        st = dfg_memory_predict(self->program, cpu, &m);
    if (st != DFG_OK)
        return dfg_py_raise_status(st, "predicting the memory");
    return Py_BuildValue(
        "{sKsKsKsKsKsKsKsKsKsKsKsKsKsKsK}", "peak_bytes", m.peak_bytes,
        "process_bytes", m.process_bytes, "runtime_code_bytes",
        m.runtime_code_bytes, "thread_bytes", m.thread_bytes,
        "runtime_heap_bytes", m.runtime_heap_bytes, "held_heap_bytes",
        m.held_heap_bytes, "freed_heap_bytes", m.freed_heap_bytes,
        "weights_bytes", m.weights_bytes, "weight_copy_bytes",
        m.weight_copy_bytes, "replaced_plain_bytes", m.replaced_plain_bytes,
        "arena_bytes", m.arena_bytes, "creation_bytes", m.creation_bytes,
        "io_bytes", m.io_bytes, "caller_bytes", m.caller_bytes,
        "reached_bytes", m.reached_bytes);
}

typedef dfg_status (*report_fn)(const dfg_program *, FILE *);

static const struct {
    const char *name;
    report_fn write;
} reports[] = {
    {"json", dfg_report_json},   {"dot", dfg_report_dot},
    {"summary", dfg_report_summary}, {"svg", dfg_report_svg},
    {"html", dfg_report_html},   {"trace", dfg_report_trace},
};

/* report(kind) -> str: one of the program's reports. */
static PyObject *program_report(dfg_py_program *self, PyObject *args)
{
    const char *kind;
    if (!PyArg_ParseTuple(args, "s", &kind))
        return NULL;
    report_fn write = NULL;
    for (size_t i = 0; i < sizeof reports / sizeof reports[0]; i++)
        if (strcmp(reports[i].name, kind) == 0)
            write = reports[i].write;
    if (!write)
        return PyErr_Format(PyExc_ValueError, "unknown report '%s'", kind);
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    if (!out)
        return PyErr_NoMemory();
    dfg_status st = write(self->program, out);
    fclose(out);
    PyObject *result = st == DFG_OK
        ? PyUnicode_DecodeUTF8(text, (Py_ssize_t)size, "replace")
        : dfg_py_raise_status(st, kind);
    free(text);
    return result;
}

static PyObject *program_compare(dfg_py_program *self, PyObject *unused)
{
    (void)unused;
    dfg_plan_comparison c;
    dfg_status st = dfg_plan_compare(self->program, &c);
    if (st != DFG_OK)
        return dfg_py_raise_status(st, "comparing planners");
    PyObject *planners = PyDict_New();
    for (int p = 0; planners && p < DFG_PLANNER_COUNT; p++) {
        PyObject *bytes = PyLong_FromUnsignedLongLong(c.planner_arena_bytes[p]);
        if (!bytes || PyDict_SetItemString(planners,
                                           dfg_planner_name((dfg_planner)p),
                                           bytes) != 0) {
            Py_XDECREF(bytes);
            Py_DECREF(planners);
            return NULL;
        }
        Py_DECREF(bytes);
    }
    if (!planners)
        return NULL;
    const dfg_caching_stats *k = &c.caching;
    return Py_BuildValue(
        "{sisKsKsKsNsssKs{sKsKsKsKsisi}}", "n_buffers", (int)c.n_buffers,
        "alignment", (unsigned long long)c.alignment, "no_reuse_bytes",
        (unsigned long long)c.no_reuse_bytes, "lower_bound_bytes",
        (unsigned long long)c.lower_bound_bytes, "planner_arena_bytes",
        planners, "compiled_planner", dfg_planner_name(c.compiled_planner),
        "compiled_arena_bytes", (unsigned long long)c.compiled_arena_bytes,
        "caching_allocator", "reserved_peak_bytes",
        (unsigned long long)k->reserved_peak_bytes, "allocated_peak_bytes",
        (unsigned long long)k->allocated_peak_bytes, "requested_peak_bytes",
        (unsigned long long)k->requested_peak_bytes,
        "allocated_at_reserved_peak",
        (unsigned long long)k->allocated_at_reserved_peak, "small_segments",
        (int)k->small_segments, "large_segments", (int)k->large_segments);
}

static PyMethodDef program_methods[] = {
    {"save", (PyCFunction)program_save, METH_VARARGS, "save(path)"},
    {"stats", (PyCFunction)program_stats, METH_NOARGS, "stats() -> dict"},
    {"memory", (PyCFunction)program_memory, METH_NOARGS,
     "memory() -> dict: the predicted process peak and its parts"},
    {"inputs", (PyCFunction)program_inputs, METH_NOARGS,
     "inputs() -> [(name, dtype, shape)]"},
    {"outputs", (PyCFunction)program_outputs, METH_NOARGS,
     "outputs() -> [(name, dtype, shape)]"},
    {"report", (PyCFunction)program_report, METH_VARARGS,
     "report(kind) -> str: json, dot, summary, svg, html or trace"},
    {"compare", (PyCFunction)program_compare, METH_NOARGS,
     "compare() -> dict: every planner and the caching allocator"},
    {NULL, NULL, 0, NULL},
};

PyTypeObject dfg_py_program_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "dfg._dfg.Program",
    .tp_basicsize = sizeof(dfg_py_program),
    .tp_dealloc = (destructor)program_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A compiled dfg program (immutable).",
    .tp_methods = program_methods,
};

/* ---- module ----------------------------------------------------------- */

static PyObject *library_version(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    return PyUnicode_FromString(dfg_version());
}

static PyObject *model_names(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    PyObject *list = PyList_New(0);
    for (const char *const *n = dfg_model_names(); list && *n; n++) {
        PyObject *name = PyUnicode_FromString(*n);
        if (!name || PyList_Append(list, name) != 0) {
            Py_XDECREF(name);
            Py_CLEAR(list);
        }
        Py_XDECREF(name);
    }
    return list;
}

/* write_file(path, data): data (bytes) as the whole new content of path,
 * replacing the old file only once complete (include/dfg/atomic_file.h). */
static PyObject *write_file(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *path = NULL;
    Py_buffer data;
    if (!PyArg_ParseTuple(args, "O&y*", PyUnicode_FSConverter, &path, &data))
        return NULL;
    dfg_status st;
    Py_BEGIN_ALLOW_THREADS
    st = dfg_write_file_atomically(PyBytes_AS_STRING(path), data.buf,
                                   (size_t)data.len);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&data);
    Py_DECREF(path);
    if (st != DFG_OK)
        return dfg_py_raise_status(st, "writing the file");
    Py_RETURN_NONE;
}

/* The run times of a list, as a new array of doubles (PyMem_Free). */
static double *seconds_of(PyObject *list, size_t *n)
{
    PyObject *seq = PySequence_Fast(list, "times must be a list of seconds");
    if (!seq)
        return NULL;
    *n = (size_t)PySequence_Fast_GET_SIZE(seq);
    double *seconds = PyMem_Calloc(*n + 1, sizeof *seconds);
    for (size_t i = 0; seconds && i < *n; i++)
        seconds[i] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, i));
    Py_DECREF(seq);
    if (!seconds)
        PyErr_NoMemory();
    if (seconds && PyErr_Occurred()) {
        PyMem_Free(seconds);
        return NULL;
    }
    return seconds;
}

/* bench_report(model, backend, iterations, warmup, batch, compile_seconds,
 *              session_seconds, arena_bytes, weights_bytes, times[, threads])
 * -> str: dfgc bench's JSON report (include/dfg/bench.h) of runs lasting
 * `times` seconds, with the backend's device and threads (threads, when
 * above 0, those the session ran with) and the process's peak resident
 * memory as dfgc measures it (VmHWM), so that Program.bench gives the
 * same figures under the same names. */
static PyObject *bench_report(PyObject *module, PyObject *args)
{
    (void)module;
    dfg_bench_report r = {0};
    unsigned long long iterations, warmup, arena, weights;
    long long batch;
    PyObject *times;
    int threads = 0;
    if (!PyArg_ParseTuple(args, "ssKKLddKKO|i", &r.model, &r.backend,
                          &iterations, &warmup, &batch, &r.compile_seconds,
                          &r.session_seconds, &arena, &weights,
                          &times, &threads))
        return NULL;
    const dfg_backend *backend = NULL;
    dfg_status st = dfg_py_find_backend(r.backend, &backend);
    if (st != DFG_OK)
        return dfg_py_raise_status(st, "finding the device");
    r.device = dfg_backend_device(backend);
    /* A backend of CPU threads: the team its session ran with. */
    r.threads = dfg_backend_threads(backend) ? dfg_py_threads(threads)
                                             : threads;
    r.iterations = iterations;
    r.warmup = warmup;
    r.batch = batch;
    r.arena_bytes = arena;
    r.weights_bytes = weights;
    r.peak_rss_bytes = dfg_process_peak_resident_bytes();
    size_t n;
    double *seconds = seconds_of(times, &n);
    if (!seconds)
        return NULL;
    st = dfg_latency_stats_compute(seconds, n, r.batch, &r.latency);
    PyMem_Free(seconds);
    if (st != DFG_OK)
        return dfg_py_raise_status(st, "computing the figures");
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    if (!out)
        return PyErr_NoMemory();
    st = dfg_bench_report_json(&r, out);
    fclose(out);
    PyObject *result = st == DFG_OK
        ? PyUnicode_DecodeUTF8(text, (Py_ssize_t)size, "replace")
        : dfg_py_raise_status(st, "writing the figures");
    free(text);
    return result;
}

static PyMethodDef module_methods[] = {
    {"compile", compile_model, METH_VARARGS,
     "compile(kind, source, shapes, planner, alignment, training, "
     "precision[, device, prefer_memory, budget_bytes, budget_percent, "
     "tiling, fuse])"},
    {"trainer", dfg_py_create_trainer, METH_VARARGS,
     "trainer(kind, source, shapes, options) -> Trainer"},
    {"load", load_program, METH_VARARGS, "load(path) -> Program"},
    {"write_file", write_file, METH_VARARGS,
     "write_file(path, data): replaces path by data, atomically"},
    {"session", dfg_py_create_session, METH_VARARGS,
     "session(program, device) -> Session"},
    {"bench_report", bench_report, METH_VARARGS,
     "bench_report(model, backend, iterations, warmup, batch, "
     "compile_seconds, session_seconds, arena_bytes, weights_bytes, "
     "peak_rss_bytes, times[, threads]) -> JSON text"},
    {"version", library_version, METH_NOARGS, "the C library's version"},
    {"model_names", model_names, METH_NOARGS, "the bundled models"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "dfg._dfg",
    "The C library under the dfg package.", -1, module_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__dfg(void)
{
    if (PyType_Ready(&dfg_py_program_type) < 0 || PyType_Ready(&dfg_py_session_type) < 0 ||
        PyType_Ready(&dfg_py_trainer_type) < 0)
        return NULL;
    PyObject *module = PyModule_Create(&module_def);
    if (!module)
        return NULL;
    dfg_error_type = PyErr_NewExceptionWithDoc(
        "dfg.Error", "An error reported by the dfg library.", NULL, NULL);
    PyObject *bases = dfg_error_type
        ? PyTuple_Pack(2, dfg_error_type, PyExc_ValueError) : NULL;
    dfg_argument_error_type = bases ? PyErr_NewExceptionWithDoc(
        "dfg.ArgumentError", "A dfg.Error (and a ValueError) caused by an "
        "argument: a name, shape or dtype the model does not have.", bases,
        NULL) : NULL;
    Py_XDECREF(bases);
    if (!dfg_argument_error_type ||
        PyModule_AddObjectRef(module, "Error", dfg_error_type) < 0 ||
        PyModule_AddObjectRef(module, "ArgumentError",
                              dfg_argument_error_type) < 0 ||
        PyModule_AddObjectRef(module, "Program",
                              (PyObject *)&dfg_py_program_type) < 0 ||
        PyModule_AddObjectRef(module, "Session",
                              (PyObject *)&dfg_py_session_type) < 0 ||
        /* Whether the package was built with its CUDA module. */
        PyModule_AddObjectRef(module, "CUDA_MODULE",
                              DFG_PY_CUDA_MODULE ? Py_True : Py_False) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
