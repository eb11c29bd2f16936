/* The import hook's counter (cuvil_bc/counters.py, hook/hot.py).
 *
 * Counted code ticks a counter with `not counter` (LOAD_CONST, UNARY_NOT, POP_TOP; 3.13
 * adds TO_BOOL): CPython calls the type's nb_bool slot directly, with no call
 * protocol, so a tick costs a few nanoseconds. That matters after the hook has decided
 * about a function: a frame that was already running (a `main()` loop, a method called
 * once) keeps its counted code until it returns, and ticks on every iteration.
 *
 * Counter(left, trigger): every tick adds one to `ticks`; the tick that brings `left`
 * to zero calls `trigger()` (on the counted function's thread, with its frame as the
 * caller), and an exception from it propagates from the tick. Pickled, a counter is
 * NoneType, whose truth is as harmless.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include "pytypes.h"

typedef struct {
    PyObject_HEAD
    long long ticks;
    long long left;
    PyObject *trigger;
} cb_counter;

static PyObject *counter_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    long long left;
    PyObject *trigger;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs)) {
        PyErr_SetString(PyExc_TypeError, "Counter() takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "LO:Counter", &left, &trigger))
        return NULL;
    cb_counter *self = (cb_counter *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->ticks = 0;
    self->left = left;
    Py_INCREF(trigger);
    self->trigger = trigger;
    return (PyObject *)self;
}

static int counter_bool(PyObject *op) {
    cb_counter *self = (cb_counter *)op;
    self->ticks++;
    if (self->left > 0 && --self->left == 0 && self->trigger != NULL) {
        PyObject *trigger = self->trigger;
        Py_INCREF(trigger);
        PyObject *result = PyObject_CallNoArgs(trigger);
        Py_DECREF(trigger);
        if (result == NULL)
            return -1;
        Py_DECREF(result);
    }
    return 1;
}

static PyObject *counter_reduce(PyObject *op, PyObject *unused) {
    /* NoneType, as `type(None)` rebuilds it. */
    return Py_BuildValue("(O(O))", (PyObject *)&PyType_Type, Py_None);
}

static int counter_traverse(PyObject *op, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(((cb_counter *)op)->trigger);
    return 0;
}

static int counter_clear(PyObject *op) {
    Py_CLEAR(((cb_counter *)op)->trigger);
    return 0;
}

static void counter_dealloc(PyObject *op) { cb_gc_dealloc(op, counter_clear); }

static PyMethodDef counter_methods[] = {
    {"__reduce__", counter_reduce, METH_NOARGS, "Pickled as NoneType."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef counter_members[] = {
    {"ticks", T_LONGLONG, offsetof(cb_counter, ticks), READONLY, "Ticks so far."},
    {"left", T_LONGLONG, offsetof(cb_counter, left), 0, "Ticks until the trigger runs (none once it is 0 or less)."},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot counter_slots[] = {
    {Py_tp_new, counter_new},
    {Py_tp_dealloc, counter_dealloc},
    {Py_tp_traverse, counter_traverse},
    {Py_tp_clear, counter_clear},
    {Py_nb_bool, counter_bool},
    {Py_tp_methods, counter_methods},
    {Py_tp_members, counter_members},
    {Py_tp_doc, "Counter(left, trigger): the import hook's tick counter (csrc/counter.c)."},
    {0, NULL},
};

static PyType_Spec counter_spec = {
    .name = "cuvil_bc._runtime.Counter",
    .basicsize = sizeof(cb_counter),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .slots = counter_slots,
};

PyObject *cb_make_counter_type(void) { return PyType_FromSpec(&counter_spec); }

/* Put the runtime's Python types (Entry, entry.c; Counter) into the module
 * `cuvil_bc._runtime`, once. Returns 0, or -1 when that failed. cffi functions run
 * without the GIL: it is taken here. */
int cb_publish_types(void) {
    static int done = 0;
    static const struct {
        const char *name;
        PyObject *(*make)(void);
    } types[] = {{"Entry", cb_make_entry_type}, {"Counter", cb_make_counter_type}};
    int status = 0;
    PyGILState_STATE gil = PyGILState_Ensure();
    if (!done) {
        PyObject *module = PyImport_ImportModule("cuvil_bc._runtime");
        for (size_t k = 0; module != NULL && status == 0 && k < sizeof types / sizeof types[0]; k++) {
            PyObject *type = types[k].make();
            if (type == NULL || PyObject_SetAttrString(module, types[k].name, type) < 0)
                status = -1;
            Py_XDECREF(type);
        }
        if (module == NULL)
            status = -1;
        Py_XDECREF(module);
        if (status < 0)
            PyErr_Clear();
        else
            done = 1;
    }
    PyGILState_Release(gil);
    return status;
}
