/* The C-level call path into native code (issue 16): a callable that checks a call's
 * argument types against the native signatures of one compiled function, unboxes the
 * arguments, calls the native fast entry point and boxes its result, without Python
 * code in between.
 *
 * A `cb_entry` answers a call it cannot complete with one of two markers it was given
 * (`fall`: no signature matches, or an int is beyond int64; `deopt`: native code
 * handed the call back, its line is in the thread's deopt record), and the caller (the
 * dispatcher's generated function, cuvil_bc/fastpath.py) takes the slow path. Only
 * scalar signatures (int, float, bool; at most CB_ENTRY_ARGS parameters; scalar
 * result) are covered so far.
 *
 * The GIL is released around the native call only when the signature says the code can
 * run long (it has a loop or a call): for a loop-free function, releasing and taking the
 * GIL back costs more than its work.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stddef.h>
#include "runtime.h"
#include "pytypes.h"

#if PY_VERSION_HEX < 0x030C0000
#include <structmember.h>
#define Py_T_PYSSIZET T_PYSSIZET
#define Py_READONLY READONLY
#endif

#define CB_ENTRY_ARGS 4
#define CB_ENTRY_SIGNATURES 8

typedef struct {
    PyTypeObject *types[CB_ENTRY_ARGS];
    char codes[CB_ENTRY_ARGS]; /* 'i' int64, 'd' double, 'b' bool (passed as int64 0 or 1) */
    char ret;                  /* 'i', 'd' or 'b' */
    int release_gil;
    int trampoline;            /* cb_call_any's index of the native signature */
    cb_fast_target *target;    /* in memory that `keep` holds */
} cb_signature;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    Py_ssize_t nargs;
    int count;
    cb_signature signatures[CB_ENTRY_SIGNATURES];
    PyObject *fall;
    PyObject *deopt;
    PyObject *keep; /* what the targets' memory belongs to (cffi objects) */
} cb_entry;

/* cb_call_any's numbering of the trampolines (build_runtime.py enumerates them the
 * same way): by number of parameters, then by the parameters' codes read as a binary
 * number ('i' 0, 'd' 1, first parameter most significant), then the result ('i', 'd'). */
static int trampoline_index(const char *codes, int n, char ret) {
    int bits = 0;
    for (int k = 0; k < n; k++)
        bits = bits * 2 + (codes[k] == 'd');
    return 2 * ((1 << n) - 1 + bits) + (ret == 'd');
}

static PyObject *entry_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    cb_entry *self = (cb_entry *)callable;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (kwnames != NULL || n != self->nargs)
        return Py_NewRef(self->fall);
    for (int s = 0; s < self->count; s++) {
        cb_signature *sig = &self->signatures[s];
        Py_ssize_t k;
        for (k = 0; k < n; k++)
            if (Py_TYPE(args[k]) != sig->types[k])
                break;
        if (k < n)
            continue;
        cb_word words[CB_ENTRY_ARGS];
        for (k = 0; k < n; k++) {
            if (sig->codes[k] == 'd') {
                words[k].d = PyFloat_AS_DOUBLE(args[k]);
            } else if (sig->codes[k] == 'b') {
                words[k].i = args[k] == Py_True;
            } else {
                int overflow = 0;
                words[k].i = PyLong_AsLongLongAndOverflow(args[k], &overflow);
                if (overflow)
                    return Py_NewRef(self->fall); /* beyond int64: CPython's big ints */
            }
        }
        cb_word r;
        if (sig->release_gil) {
            Py_BEGIN_ALLOW_THREADS
            r = cb_call_any(sig->trampoline, sig->target, words);
            Py_END_ALLOW_THREADS
        } else {
            r = cb_call_any(sig->trampoline, sig->target, words);
        }
        /* A deopt returns a sentinel (NaN, INT64_MIN), which can also be a genuine
         * result: the thread's deopt record tells them apart. */
        if (sig->ret == 'd') {
            if (isnan(r.d) && cb_peek_deopt_line())
                return Py_NewRef(self->deopt);
            return PyFloat_FromDouble(r.d);
        }
        if (r.i == INT64_MIN && cb_peek_deopt_line())
            return Py_NewRef(self->deopt);
        if (sig->ret == 'b')
            return PyBool_FromLong(r.i != 0);
        return PyLong_FromLongLong(r.i);
    }
    return Py_NewRef(self->fall);
}

static PyObject *entry_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    Py_ssize_t nargs;
    PyObject *fall, *deopt;
    static char *names[] = {"nargs", "fall", "deopt", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "nOO", names, &nargs, &fall, &deopt))
        return NULL;
    if (nargs < 0 || nargs > CB_ENTRY_ARGS) {
        PyErr_Format(PyExc_ValueError, "a C entry takes at most %d parameters", CB_ENTRY_ARGS);
        return NULL;
    }
    cb_entry *self = (cb_entry *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->vectorcall = entry_vectorcall;
    self->nargs = nargs;
    self->count = 0;
    self->fall = Py_NewRef(fall);
    self->deopt = Py_NewRef(deopt);
    self->keep = PyList_New(0);
    if (self->keep == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

/* entry.set(signatures): the native signatures, replacing the previous ones. Each is
 * (types, codes, ret, release_gil, target address, owner of the target's memory). */
static PyObject *entry_set(PyObject *op, PyObject *arg) {
    cb_entry *self = (cb_entry *)op;
    PyObject *seq = PySequence_Fast(arg, "signatures must be a sequence");
    if (seq == NULL)
        return NULL;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
    if (count > CB_ENTRY_SIGNATURES) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "a C entry holds at most %d signatures", CB_ENTRY_SIGNATURES);
        return NULL;
    }
    cb_signature made[CB_ENTRY_SIGNATURES];
    PyObject *keep = PyList_New(0);
    if (keep == NULL) {
        Py_DECREF(seq);
        return NULL;
    }
    for (Py_ssize_t s = 0; s < count; s++) {
        PyObject *types, *owner;
        const char *codes, *ret;
        int release;
        unsigned long long address;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, s), "O!ssiKO", &PyTuple_Type, &types, &codes, &ret, &release, &address, &owner))
            goto fail;
        Py_ssize_t n = PyTuple_GET_SIZE(types);
        if (n != self->nargs || (Py_ssize_t)strlen(codes) != n || strlen(ret) != 1 || !strchr("idb", ret[0])) {
            PyErr_SetString(PyExc_ValueError, "a signature that does not fit this entry");
            goto fail;
        }
        for (Py_ssize_t k = 0; k < n; k++) {
            PyObject *t = PyTuple_GET_ITEM(types, k);
            if (!PyType_Check(t) || !strchr("idb", codes[k])) {
                PyErr_SetString(PyExc_ValueError, "argument types must be types, codes 'i', 'd' or 'b'");
                goto fail;
            }
            made[s].types[k] = (PyTypeObject *)t; /* int, float, bool: immortal or kept by `types` */
            made[s].codes[k] = codes[k];
        }
        made[s].ret = ret[0];
        made[s].release_gil = release;
        char native_codes[CB_ENTRY_ARGS];
        for (Py_ssize_t k = 0; k < n; k++)
            native_codes[k] = codes[k] == 'd' ? 'd' : 'i';
        made[s].trampoline = trampoline_index(native_codes, (int)n, ret[0] == 'd' ? 'd' : 'i');
        made[s].target = (cb_fast_target *)(uintptr_t)address;
        if (PyList_Append(keep, types) < 0 || PyList_Append(keep, owner) < 0)
            goto fail;
    }
    memcpy(self->signatures, made, sizeof(cb_signature) * (size_t)count);
    self->count = (int)count;
    Py_SETREF(self->keep, keep);
    Py_DECREF(seq);
    Py_RETURN_NONE;
fail:
    Py_DECREF(keep);
    Py_DECREF(seq);
    return NULL;
}

static int entry_traverse(PyObject *op, visitproc visit, void *arg) {
    cb_entry *self = (cb_entry *)op;
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(self->fall);
    Py_VISIT(self->deopt);
    Py_VISIT(self->keep);
    return 0;
}

static int entry_clear(PyObject *op) {
    cb_entry *self = (cb_entry *)op;
    self->count = 0;
    Py_CLEAR(self->fall);
    Py_CLEAR(self->deopt);
    Py_CLEAR(self->keep);
    return 0;
}

static void entry_dealloc(PyObject *op) { cb_gc_dealloc(op, entry_clear); }

static PyMethodDef entry_methods[] = {
    {"set", entry_set, METH_O, "Replace the native signatures."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef entry_members[] = {
    {"__vectorcalloffset__", Py_T_PYSSIZET, offsetof(cb_entry, vectorcall), Py_READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot entry_slots[] = {
    {Py_tp_new, entry_new},
    {Py_tp_dealloc, entry_dealloc},
    {Py_tp_traverse, entry_traverse},
    {Py_tp_clear, entry_clear},
    {Py_tp_call, PyVectorcall_Call},
    {Py_tp_methods, entry_methods},
    {Py_tp_members, entry_members},
    {Py_tp_doc, "cuvil_bc's C call path into one function's native code (csrc/entry.c)."},
    {0, NULL},
};

static PyType_Spec entry_spec = {
    .name = "cuvil_bc._runtime.Entry",
    .basicsize = sizeof(cb_entry),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .slots = entry_slots,
};

PyObject *cb_make_entry_type(void) { return PyType_FromSpec(&entry_spec); }
