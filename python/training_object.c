/* dfg._dfg.Trainer: a dfg_trainer (include/dfg/trainer.h) for Python's
 * dfg.training (python/dfg/training.py), which checks arrays' dtypes and
 * shapes; this side checks every buffer's size, so that nothing a caller
 * passes makes the library read or write out of bounds.
 *
 * Ownership: a Trainer object owns its dfg_trainer. Steps and predictions
 * run with the GIL released; a Trainer busy in one thread refuses a call
 * from another (RuntimeError) rather than racing. */
#include <string.h>
#include "python/_dfg.h"

typedef struct {
    PyObject_HEAD
    dfg_trainer *trainer;
    int busy;
    int threads; /* the OpenMP team of its work (dfg_py_threads) */
} trainer_object;

static void trainer_dealloc(trainer_object *self)
{
    dfg_trainer_destroy(self->trainer);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* options[key] as a double / an integer, when present. 0, or -1 with an
 * error set. */
static int option_double(PyObject *options, const char *key, double *out)
{
    PyObject *v = PyDict_GetItemString(options, key);
    if (!v || v == Py_None)
        return 0;
    *out = PyFloat_AsDouble(v);
    return PyErr_Occurred() ? -1 : 0;
}

static int option_int(PyObject *options, const char *key, long long *out)
{
    PyObject *v = PyDict_GetItemString(options, key);
    if (!v || v == Py_None)
        return 0;
    *out = PyLong_AsLongLong(v);
    return PyErr_Occurred() ? -1 : 0;
}

static const char *option_text(PyObject *options, const char *key)
{
    PyObject *v = PyDict_GetItemString(options, key);
    return v && v != Py_None ? PyUnicode_AsUTF8(v) : NULL;
}

/* The names: loss, optimizer, precision, planner. */
static int named_options(PyObject *options, dfg_trainer_options *o)
{
    const char *loss = option_text(options, "loss");
    const char *optimizer = option_text(options, "optimizer");
    const char *precision = option_text(options, "precision");
    const char *planner = option_text(options, "planner");
    if (PyErr_Occurred())
        return -1;
    if (loss && dfg_loss_from_name(loss, &o->loss) != 0)
        return PyErr_Format(PyExc_ValueError, "loss '%s': cross_entropy or "
                            "mse", loss), -1;
    if (optimizer &&
        dfg_optimizer_from_name(optimizer, &o->training.optimizer) != 0)
        return PyErr_Format(PyExc_ValueError, "optimizer '%s': sgd, adam or "
                            "adamw", optimizer), -1;
    if (precision &&
        (dfg_dtype_from_name(precision, &o->compile.precision) != 0 ||
         (o->compile.precision != DFG_F32 && o->compile.precision != DFG_BF16)))
        return PyErr_Format(PyExc_ValueError, "precision '%s': f32 or bf16",
                            precision), -1;
    if (planner && dfg_planner_from_name(planner, &o->compile.planner) != 0)
        return PyErr_Format(PyExc_ValueError, "unknown planner '%s'",
                            planner), -1;
    return 0;
}

/* The numbers; the library checks their ranges. */
static int number_options(PyObject *options, dfg_training_options *t)
{
    static const char *const reals[] = {"lr", "momentum", "beta2", "epsilon",
                                        "weight_decay", "gamma",
                                        "memory_budget_percent"};
    float *real_at[] = {&t->learning_rate, &t->momentum, &t->beta2,
                        &t->epsilon, &t->weight_decay, &t->lr_gamma,
                        &t->memory_budget_percent};
    for (size_t k = 0; k < sizeof reals / sizeof reals[0]; k++) {
        double x = *real_at[k];
        if (option_double(options, reals[k], &x) != 0)
            return -1;
        *real_at[k] = (float)x;
    }
    long long accumulate = t->accumulate, budget = 0, seed = 0;
    if (option_int(options, "accumulate", &accumulate) != 0 ||
        option_int(options, "decay_steps", (long long *)&t->decay_steps) ||
        option_int(options, "step_size", (long long *)&t->lr_step_size) ||
        option_int(options, "warmup", (long long *)&t->warmup_steps) ||
        option_int(options, "memory_budget_bytes", &budget) ||
        option_int(options, "seed", &seed))
        return -1;
    if (accumulate < 1 || accumulate > (1 << 20) || budget < 0)
        return PyErr_Format(PyExc_ValueError, "accumulate %lld must lie in "
                            "[1, 2^20], a memory budget not below 0",
                            accumulate), -1;
    t->accumulate = (int32_t)accumulate;
    t->memory_budget_bytes = (uint64_t)budget;
    t->seed = (uint64_t)seed;
    return 0;
}

PyObject *dfg_py_create_trainer(PyObject *module, PyObject *args)
{
    (void)module;
    const char *kind;
    PyObject *source, *shapes, *options;
    if (!PyArg_ParseTuple(args, "sOOO!", &kind, &source, &shapes,
                          &PyDict_Type, &options))
        return NULL;
    dfg_trainer_options o;
    dfg_trainer_options_init(&o);
    if (named_options(options, &o) != 0 ||
        number_options(options, &o.training) != 0)
        return NULL;
    dfg_graph *graph;
    /* A bundled model's training graph has its loss: build it as a
     * model, the trainer appends the loss. */
    if (dfg_py_load_graph(kind, source, shapes, 0, &graph) != 0)
        return NULL;
    trainer_object *self = PyObject_New(trainer_object, &dfg_py_trainer_type);
    if (!self) {
        dfg_graph_destroy(graph);
        return NULL;
    }
    self->trainer = NULL;
    self->busy = 0;
    self->threads = dfg_py_threads(0);
    dfg_status st;
    Py_BEGIN_ALLOW_THREADS
    int had = dfg_py_use_threads(self->threads);
    st = dfg_trainer_create(graph, &o, &self->trainer);
    dfg_graph_destroy(graph);
    dfg_py_restore_threads(had);
    Py_END_ALLOW_THREADS
    if (st != DFG_OK) {
        Py_DECREF(self);
        return dfg_py_raise_status(st, "compiling the training step");
    }
    return (PyObject *)self;
}

/* Takes the trainer for one call: 0, or -1 with RuntimeError set. */
static int take(trainer_object *self)
{
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "the Trainer is in use by "
                        "another thread");
        return -1;
    }
    self->busy = 1;
    return 0;
}

/* A C-contiguous buffer of exactly `bytes`, writable if asked. */
static int get_buffer(PyObject *obj, Py_buffer *view, Py_ssize_t bytes,
                      int writable, const char *what)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS |
                                          (writable ? PyBUF_WRITABLE : 0)) != 0)
        return -1;
    if (view->len != bytes) {
        PyErr_Format(PyExc_ValueError, "%s: %zd bytes, the program's are %zd",
                     what, view->len, bytes);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static Py_ssize_t input_bytes(const dfg_trainer *t, int32_t index)
{
    dfg_tensor_info info;
    if (dfg_program_input_info(dfg_trainer_program(t), index, &info) != DFG_OK)
        return -1;
    Py_ssize_t n = (Py_ssize_t)dfg_dtype_size(info.dtype);
    for (int32_t d = 0; d < info.rank; d++)
        n *= (Py_ssize_t)info.shape[d];
    return n;
}

/* step(x, y) -> loss */
static PyObject *trainer_step(trainer_object *self, PyObject *args)
{
    PyObject *x, *y;
    if (!PyArg_ParseTuple(args, "OO", &x, &y))
        return NULL;
    Py_buffer xv, yv;
    if (get_buffer(x, &xv, input_bytes(self->trainer, 0), 0, "x") != 0)
        return NULL;
    if (get_buffer(y, &yv, input_bytes(self->trainer, 1), 0, "y") != 0) {
        PyBuffer_Release(&xv);
        return NULL;
    }
    if (take(self) != 0) {
        PyBuffer_Release(&xv);
        PyBuffer_Release(&yv);
        return NULL;
    }
    float loss = 0.0f;
    dfg_status st;
    Py_BEGIN_ALLOW_THREADS
    int had = dfg_py_use_threads(self->threads);
    st = dfg_trainer_step(self->trainer, xv.buf, yv.buf, &loss);
    dfg_py_restore_threads(had);
    Py_END_ALLOW_THREADS
    self->busy = 0;
    PyBuffer_Release(&xv);
    PyBuffer_Release(&yv);
    if (st != DFG_OK)
        return dfg_py_raise_status(st, "training step");
    return PyFloat_FromDouble(loss);
}

/* predict(x, out): out receives the prediction (f32);
 * predict(x, out, y) -> the loss of batch x, y too (an evaluation) */
static PyObject *trainer_predict(trainer_object *self, PyObject *args)
{
    PyObject *x, *out, *y = NULL;
    if (!PyArg_ParseTuple(args, "OO|O", &x, &out, &y))
        return NULL;
    const dfg_trainer *t = self->trainer;
    Py_buffer xv, ov, yv = {0};
    if (y && get_buffer(y, &yv, input_bytes(t, 1), 0, "y") != 0)
        return NULL;
    if (get_buffer(x, &xv, input_bytes(t, 0), 0, "x") != 0) {
        if (y)
            PyBuffer_Release(&yv);
        return NULL;
    }
    if (get_buffer(out, &ov, (Py_ssize_t)(dfg_trainer_batch(t) *
                                          dfg_trainer_prediction_size(t) * 4),
                   1, "out") != 0) {
        PyBuffer_Release(&xv);
        if (y)
            PyBuffer_Release(&yv);
        return NULL;
    }
    dfg_status st = take(self) == 0 ? DFG_OK : DFG_ERR_INVALID_ARGUMENT;
    float loss = 0.0f;
    if (st == DFG_OK) {
        Py_BEGIN_ALLOW_THREADS
        int had = dfg_py_use_threads(self->threads);
        st = y ? dfg_trainer_evaluate(self->trainer, xv.buf, yv.buf, &loss,
                                      ov.buf)
               : dfg_trainer_predict(self->trainer, xv.buf, ov.buf);
        dfg_py_restore_threads(had);
        Py_END_ALLOW_THREADS
        self->busy = 0;
    }
    PyBuffer_Release(&xv);
    PyBuffer_Release(&ov);
    if (y)
        PyBuffer_Release(&yv);
    if (PyErr_Occurred())
        return NULL;
    if (st != DFG_OK)
        return dfg_py_raise_status(st, "prediction");
    if (y)
        return PyFloat_FromDouble(loss);
    Py_RETURN_NONE;
}

/* info() -> dict: batch, prediction_size, steps, weights (names), the
 * training program's arena_bytes, weights_bytes and lower_bound_bytes. */
static PyObject *trainer_info(trainer_object *self, PyObject *unused)
{
    (void)unused;
    dfg_trainer *t = self->trainer;
    PyObject *names = PyList_New(dfg_trainer_num_weights(t));
    for (int32_t i = 0; names && i < dfg_trainer_num_weights(t); i++) {
        PyObject *name = PyUnicode_FromString(dfg_trainer_weight_name(t, i));
        if (!name) {
            Py_CLEAR(names);
            break;
        }
        PyList_SET_ITEM(names, i, name);
    }
    if (!names)
        return NULL;
    dfg_plan_stats s;
    dfg_program_stats(dfg_trainer_program(t), &s);
    return Py_BuildValue("{sLsLsLsNsKsKsK}", "batch",
                         (long long)dfg_trainer_batch(t), "prediction_size",
                         (long long)dfg_trainer_prediction_size(t), "steps",
                         (long long)dfg_trainer_steps(t), "weights", names,
                         "arena_bytes", (unsigned long long)s.arena_bytes,
                         "weights_bytes", (unsigned long long)s.weights_bytes,
                         "lower_bound_bytes",
                         (unsigned long long)s.lower_bound_bytes);
}

/* get_weight(name) -> bytes (f32); set_weight(name, buffer) */
static PyObject *trainer_weight(trainer_object *self, PyObject *args)
{
    const char *name;
    PyObject *value = NULL;
    if (!PyArg_ParseTuple(args, "s|O", &name, &value))
        return NULL;
    if (self->busy)
        return take(self), NULL;
    float *data;
    int64_t count;
    dfg_status st = dfg_trainer_weight(self->trainer, name, &data, &count);
    if (st != DFG_OK)
        return dfg_py_raise_status(st, "weight");
    if (!value)
        return PyBytes_FromStringAndSize((const char *)data,
                                         (Py_ssize_t)count * 4);
    Py_buffer view;
    if (get_buffer(value, &view, (Py_ssize_t)count * 4, 0, name) != 0)
        return NULL;
    memcpy(data, view.buf, (size_t)count * 4);
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
}

/* save_onnx(model_path, out_path) -> initializers replaced */
static PyObject *trainer_save_onnx(trainer_object *self, PyObject *args)
{
    PyObject *model = NULL, *out = NULL;
    if (!PyArg_ParseTuple(args, "O&O&", PyUnicode_FSConverter, &model,
                          PyUnicode_FSConverter, &out))
        return NULL;
    int32_t replaced = 0;
    dfg_status st = take(self) == 0 ? DFG_OK : DFG_ERR_INVALID_ARGUMENT;
    if (st == DFG_OK) {
        Py_BEGIN_ALLOW_THREADS
        st = dfg_trainer_save_onnx(self->trainer, PyBytes_AS_STRING(model),
                                   PyBytes_AS_STRING(out), &replaced);
        Py_END_ALLOW_THREADS
        self->busy = 0;
    }
    Py_DECREF(model);
    Py_DECREF(out);
    if (PyErr_Occurred())
        return NULL;
    if (st != DFG_OK)
        return dfg_py_raise_status(st, "saving the trained model");
    return PyLong_FromLong(replaced);
}

/* save_checkpoint(path, epoch, step, rng_state, seed) */
static PyObject *trainer_save_checkpoint(trainer_object *self, PyObject *args)
{
    PyObject *path = NULL;
    dfg_checkpoint_position at;
    unsigned long long rng, seed;
    long long epoch, step;
    if (!PyArg_ParseTuple(args, "O&LLKK", PyUnicode_FSConverter, &path,
                          &epoch, &step, &rng, &seed))
        return NULL;
    at = (dfg_checkpoint_position){epoch, step, rng, seed};
    dfg_status st = take(self) == 0 ? DFG_OK : DFG_ERR_INVALID_ARGUMENT;
    if (st == DFG_OK) {
        Py_BEGIN_ALLOW_THREADS
        st = dfg_trainer_checkpoint_save(self->trainer, &at,
                                         PyBytes_AS_STRING(path));
        Py_END_ALLOW_THREADS
        self->busy = 0;
    }
    Py_DECREF(path);
    if (PyErr_Occurred())
        return NULL;
    if (st != DFG_OK)
        return dfg_py_raise_status(st, "saving the checkpoint");
    Py_RETURN_NONE;
}

/* load_checkpoint(path, seed) -> (epoch, step, rng_state, seed) */
static PyObject *trainer_load_checkpoint(trainer_object *self, PyObject *args)
{
    PyObject *path = NULL;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "O&K", PyUnicode_FSConverter, &path, &seed))
        return NULL;
    dfg_checkpoint_position at;
    dfg_status st = take(self) == 0 ? DFG_OK : DFG_ERR_INVALID_ARGUMENT;
    if (st == DFG_OK) {
        Py_BEGIN_ALLOW_THREADS
        st = dfg_trainer_checkpoint_load(self->trainer,
                                         PyBytes_AS_STRING(path), seed, &at);
        Py_END_ALLOW_THREADS
        self->busy = 0;
    }
    Py_DECREF(path);
    if (PyErr_Occurred())
        return NULL;
    if (st != DFG_OK)
        return dfg_py_raise_status(st, "loading the checkpoint");
    return Py_BuildValue("(LLKK)", (long long)at.epoch, (long long)at.step,
                         (unsigned long long)at.rng_state,
                         (unsigned long long)at.seed);
}

static PyMethodDef trainer_methods[] = {
    {"step", (PyCFunction)trainer_step, METH_VARARGS, "step(x, y) -> loss"},
    {"predict", (PyCFunction)trainer_predict, METH_VARARGS,
     "predict(x, out[, y]): the prediction into out; with y, returns the "
     "batch's loss"},
    {"info", (PyCFunction)trainer_info, METH_NOARGS, "info() -> dict"},
    {"weight", (PyCFunction)trainer_weight, METH_VARARGS,
     "weight(name) -> bytes; weight(name, buffer) sets it"},
    {"save_onnx", (PyCFunction)trainer_save_onnx, METH_VARARGS,
     "save_onnx(model_path, out_path) -> initializers replaced"},
    {"save_checkpoint", (PyCFunction)trainer_save_checkpoint, METH_VARARGS,
     "save_checkpoint(path, epoch, step, rng_state, seed)"},
    {"load_checkpoint", (PyCFunction)trainer_load_checkpoint, METH_VARARGS,
     "load_checkpoint(path, seed) -> (epoch, step, rng_state, seed)"},
    {NULL, NULL, 0, NULL},
};

PyTypeObject dfg_py_trainer_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "dfg._dfg.Trainer",
    .tp_basicsize = sizeof(trainer_object),
    .tp_dealloc = (destructor)trainer_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A model's training step and evaluation (dfg_trainer).",
    .tp_methods = trainer_methods,
};
