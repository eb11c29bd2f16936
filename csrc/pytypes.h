/* The runtime's Python types (entry.c, counter.c), made with CPython's full C API and
 * published into the module `cuvil_bc._runtime` by cb_publish_types (counter.c). */
#ifndef CB_PYTYPES_H
#define CB_PYTYPES_H
#include <Python.h>

/* New references to the types, or NULL with an exception set. */
PyObject *cb_make_entry_type(void);
PyObject *cb_make_counter_type(void);
/* set_math_functions(functions): what cb_math_call (entry.c) calls, by index: a tuple
 * of (callable, number of arguments). */
extern PyMethodDef cb_set_math_functions_def;
extern PyMethodDef cb_set_numpy_errstate_def;
extern PyMethodDef cb_numpy_underflow_ignored_def;

/* tp_dealloc of a garbage-collected heap type whose tp_clear is `clear`. */
static inline void cb_gc_dealloc(PyObject *op, inquiry clear) {
    PyTypeObject *type = Py_TYPE(op);
    PyObject_GC_UnTrack(op);
    clear(op);
    type->tp_free(op);
    Py_DECREF(type);
}

/* For a tp_new that takes positional arguments only: 0, or -1 with a TypeError naming
 * `name` when there are keyword arguments. */
static inline int cb_no_keywords(PyObject *kwargs, const char *name) {
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs)) {
        PyErr_Format(PyExc_TypeError, "%s() takes no keyword arguments", name);
        return -1;
    }
    return 0;
}
#endif
