/* The C-level call path into native code (issue 16): a callable that checks a call's
 * arguments against the native signatures of one compiled function, unboxes them into
 * 64-bit words, calls the signature's words entry point (lower/codegen.py,
 * emit_words_entry) and boxes its result, without Python code in between.
 *
 * Each signature is two programs of slots in preorder, one for the arguments and one
 * for the result, in the boundary layout of cuvil_bc/lower/ltypes.py:
 *   'i' int: one word (an int beyond int64 matches no 'i' slot)
 *   'w' an int in [0, 2**64), one word, its bits read as unsigned; as an argument only
 *       one in [2**63, 2**64) (smaller ones are 'i')
 *   'W' (results only) an int in [-2**127, 2**127): two words, the low one and the high
 *       one (two's complement)
 *   'b' bool: one word, 0 or 1
 *   'd' float: one word
 *   'n' None: no word
 *   'c' complex: two words, the real part and the imaginary part
 *   'F' 'I' 'B' a NumPy float64, int64 or bool scalar: one word, as float, int, bool
 *   't' a tuple of `count` items, whose slots follow
 *   'u' (results only) a union of `count` options, whose slots follow: a word holding
 *       the index of the option present, then the words of every option
 *   'A' a NumPy array of `count` dimensions with the slot's dtype (compared by
 *       identity), writeability and unit last stride: its data pointer, shape and
 *       strides; as a result, then its meminfo (lower/ltypes.py): native memory, whose
 *       reference the array built here takes over, or an argument or a view of one
 * Every argument's type must be exactly the slot's (a subclass is another signature).
 *
 * Before any signature, every call checks the global guards the signatures were
 * compiled against (a rebound global, a callee given new code).
 *
 * A call the entry cannot complete is answered with the marker `fall` it was given (a
 * guard fails, no signature matches, or an int is beyond int64), or, where native code
 * handed the call back, with `deopt((record,))`: the deopt record that the native entry
 * parked (cb_park_deopt), as bytes, taken before any Python code can run (a signal
 * handler whose own native call fails would overwrite the thread's record). Both are
 * instances of one class (counters.Unfinished), which the caller (the compiled
 * function's prefix, cuvil_bc/fastpath.py, or the hook's trampoline) tests for with
 * one `type(result) is` and then finishes the call from Python code: calling on from
 * here would nest a C call per level of a recursion that falls back, and CPython's C
 * stack limit would come long before its recursion limit.
 *
 * The GIL is released only once the native code has run long: a signature whose code
 * can (it has a loop, or calls compiled code) lets its loops release it
 * (cb_gil_work) after about a thousand iterations in all, and the entry takes it back
 * when the call returns. Releasing and taking back the GIL costs ~40 ns, more than a short
 * call's whole work; holding it for a few hundred iterations (microseconds) is less
 * than the interpreter's own switch interval (5 ms). The arguments stay alive
 * meanwhile: the caller holds them.
 * Code that calls compiled functions starts at the native call depth that the
 * thread's recursion budget allows (start_depth), as the dispatcher's generic path does.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include "runtime.h"

#include <errno.h>
#include "pytypes.h"

#if PY_VERSION_HEX < 0x030C0000
#include <structmember.h>
#define Py_T_PYSSIZET T_PYSSIZET
#define Py_READONLY READONLY
#endif

#define CB_ENTRY_SIGNATURES 8
#define CB_ENTRY_WORDS 64 /* ENTRY_WORDS in lower/codegen.py */

/* NumPy's array object, as far as we read it: the public layout of
 * PyArrayObject_fields, the same in NumPy 1.x and 2.x. */
typedef struct {
    PyObject_HEAD
    char *data;
    int nd;
    Py_intptr_t *dimensions;
    Py_intptr_t *strides;
    PyObject *base;
    PyObject *descr;
    int flags;
} cb_ndarray;
#define CB_NPY_WRITEABLE 0x0400

typedef struct {
    char kind;
    int count;          /* 't': items; 'u': options; 'A': dimensions */
    PyTypeObject *type; /* the argument's exact type; 'F' 'I' 'B' results: what boxes */
    PyObject *dtype;    /* 'A' */
    int writeable, unit;
    Py_ssize_t itemsize;
} cb_slot;

typedef struct {
    cb_slot *slots; /* the arguments' program, then the result's (PyMem) */
    int result;     /* where the result's program starts */
    int release_gil;
    int calls_compiled; /* its native code calls compiled functions: see start_depth */
    int numpy_floats;   /* its native code computes with NumPy floats: see underflow_ignored */
    cb_native_target *target; /* in memory that `keep` holds */
} cb_signature;

/* `namespace[name] is expected` (a dict), or `getattr(namespace, name) is expected`;
 * `expected` may be the entry's `absent`: the name must stay unbound. */
typedef struct {
    PyObject *namespace, *name, *expected;
    int is_attr;
} cb_guard;

/* What one `set` gave an entry. A call holds it (`refs`, under the GIL) while native
 * code runs without the GIL: another thread may replace it meanwhile (a guard failed,
 * a signature was added), and it is freed once the last call is done with it. */
typedef struct {
    Py_ssize_t refs;
    int count;
    cb_signature signatures[CB_ENTRY_SIGNATURES];
    cb_guard *guards; /* PyMem; their objects are in `keep` */
    Py_ssize_t nguards;
    PyObject *keep; /* the slots' type objects, the guards' objects, the targets' owners */
} cb_set;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    Py_ssize_t nargs;
    cb_set *set; /* NULL before the first `set` */
    PyObject *absent;
    PyObject *fall;
    PyObject *deopt;
} cb_entry;

enum { NO_MATCH = 0, MATCH = 1, FALL = -1 };

/* NumPy's C API table, for the two functions that build a result array: found through
 * the capsule NumPy publishes, at the indices of its stable API (numpy/__multiarray_api.h:
 * PyArray_NewFromDescr is 94, PyArray_SetBaseObject 282, in NumPy 1.x and 2.x alike). */
typedef PyObject *(*new_from_descr_fn)(PyTypeObject *, PyObject *, int, const Py_intptr_t *, const Py_intptr_t *, void *, int, PyObject *);
typedef int (*set_base_fn)(PyObject *, PyObject *);
static void **numpy_api = NULL;

static int load_numpy_api(void) {
    if (numpy_api != NULL)
        return 0;
    PyObject *module = PyImport_ImportModule("numpy._core._multiarray_umath");
    if (module == NULL) {
        PyErr_Clear();
        module = PyImport_ImportModule("numpy.core._multiarray_umath"); /* NumPy 1.x */
    }
    if (module == NULL)
        return -1;
    PyObject *capsule = PyObject_GetAttrString(module, "_ARRAY_API");
    Py_DECREF(module);
    if (capsule == NULL)
        return -1;
    void **api = PyCapsule_GetPointer(capsule, NULL);
    if (api == NULL) {
        Py_DECREF(capsule);
        return -1;
    }
    numpy_api = api; /* the capsule stays referenced by its module for good */
    Py_DECREF(capsule);
    return 0;
}

#define CB_MAX_RESULT_ARRAYS 16

/* The native call depth that a call of code that calls compiled functions starts at,
 * so that its native calls go no deeper than CPython would allow from here (past
 * CB_MAX_DEPTH the native code hands the call back), or -1 when the thread is too
 * deep already: the generic path then runs it interpreted. The thread's remaining
 * recursion budget counts Python frames (3.11: and C recursion, so it is stricter). */
static int32_t start_depth(void) {
    PyThreadState *ts = PyThreadState_Get();
#if PY_VERSION_HEX >= 0x030C0000
    int budget = ts->py_recursion_remaining - CB_RECURSION_MARGIN;
#else
    int budget = ts->recursion_remaining - CB_RECURSION_MARGIN;
#endif
    if (budget <= 0)
        return -1;
    return budget >= CB_MAX_DEPTH ? 0 : CB_MAX_DEPTH - budget;
}

/* What boxing one result needs besides its words: the call's arguments (a result
 * array may be one of them, or a view of one) and the arrays built so far (the same
 * array twice in a result is one object). */
typedef struct {
    PyObject *const *args;
    Py_ssize_t nargs;
    int made;
    int64_t keys[CB_MAX_RESULT_ARRAYS][2]; /* meminfo, data */
    PyObject *arrays[CB_MAX_RESULT_ARRAYS];  /* borrowed from the result being built */
} cb_boxing;

static void release_memory(PyObject *capsule) {
    cb_decref((int64_t)(intptr_t)PyCapsule_GetPointer(capsule, "cuvil_bc.memory"));
}

/* The array whose words start at `w`: a caller's argument, a view of one, or an ndarray
 * over native memory, taking over the result's reference to it. */
static PyObject *box_array(const cb_slot *s, const cb_word *w, cb_boxing *ctx) {
    int nd = s->count;
    int64_t data = w[0].i, meminfo = w[1 + 2 * nd].i;
    for (int k = 0; k < ctx->made; k++)
        if (ctx->keys[k][0] == meminfo && ctx->keys[k][1] == data) {
            PyObject *a = ctx->arrays[k];
            cb_ndarray *same = (cb_ndarray *)a;
            int equal = same->nd == nd;
            for (int d = 0; equal && d < nd; d++)
                equal = same->dimensions[d] == w[1 + d].i && same->strides[d] == w[1 + nd + d].i;
            if (!equal)
                continue;
            if (meminfo > 0)
                cb_decref(meminfo); /* the second occurrence's extra reference */
            return Py_NewRef(a);
        }
    PyObject *base;
    int flags = 0x0100; /* NPY_ARRAY_ALIGNED */
    if (meminfo > -CB_VIEW_OF_ARGUMENT && meminfo < 0) {
        Py_ssize_t k = (Py_ssize_t)(-meminfo - 1);
        if (k >= ctx->nargs) {
            PyErr_SetString(PyExc_SystemError, "cuvil_bc: a result array of no argument");
            return NULL;
        }
        return Py_NewRef(ctx->args[k]); /* the argument itself */
    }
    if (meminfo < 0) { /* a view of an argument */
        Py_ssize_t k = (Py_ssize_t)(-(meminfo + CB_VIEW_OF_ARGUMENT) - 1);
        if (k >= ctx->nargs) {
            PyErr_SetString(PyExc_SystemError, "cuvil_bc: a result view of no argument");
            return NULL;
        }
        base = Py_NewRef(ctx->args[k]);
        flags |= ((cb_ndarray *)base)->flags & CB_NPY_WRITEABLE;
    } else {
        base = PyCapsule_New((void *)(intptr_t)meminfo, "cuvil_bc.memory", release_memory);
        if (base == NULL) {
            cb_decref(meminfo);
            return NULL;
        }
        flags |= CB_NPY_WRITEABLE;
    }
    if (load_numpy_api() < 0) {
        Py_DECREF(base);
        return NULL;
    }
    Py_intptr_t dims[32], strides[32];
    for (int d = 0; d < nd; d++) {
        dims[d] = (Py_intptr_t)w[1 + d].i;
        strides[d] = (Py_intptr_t)w[1 + nd + d].i;
    }
    PyTypeObject *ndarray = (PyTypeObject *)numpy_api[2];
    Py_INCREF(s->dtype); /* PyArray_NewFromDescr takes this reference */
    PyObject *a = ((new_from_descr_fn)numpy_api[94])(ndarray, s->dtype, nd, dims, strides, (void *)(intptr_t)data, flags, NULL);
    if (a == NULL) {
        Py_DECREF(base);
        return NULL;
    }
    if (((set_base_fn)numpy_api[282])(a, base) < 0) { /* takes `base` in any case */
        Py_DECREF(a);
        return NULL;
    }
    if (ctx->made < CB_MAX_RESULT_ARRAYS) {
        ctx->keys[ctx->made][0] = meminfo;
        ctx->keys[ctx->made][1] = data;
        ctx->arrays[ctx->made++] = a;
    }
    return a;
}

/* Unbox `v` by the slots from `*at` on into `w` from `*n` on. */
static int unbox(const cb_slot *slots, int *at, PyObject *v, cb_word *w, int *n) {
    const cb_slot *s = &slots[(*at)++];
    if (Py_TYPE(v) != s->type)
        return NO_MATCH;
    switch (s->kind) {
    case 'i': {
        int overflow = 0;
        w[(*n)++].i = PyLong_AsLongLongAndOverflow(v, &overflow);
        return overflow ? NO_MATCH : MATCH; /* beyond int64: a 'w' signature, or CPython's big ints */
    }
    case 'w': { /* an int in [2**63, 2**64): smaller ones are 'i' */
        unsigned long long u = PyLong_AsUnsignedLongLong(v);
        if (u == (unsigned long long)-1 && PyErr_Occurred()) {
            PyErr_Clear();
            return NO_MATCH;
        }
        if (u < (1ULL << 63))
            return NO_MATCH;
        w[(*n)++].i = (int64_t)u;
        return MATCH;
    }
    case 'b':
        w[(*n)++].i = v == Py_True;
        return MATCH;
    case 'd':
    case 'F': /* numpy.float64 is a float */
        w[(*n)++].d = PyFloat_AS_DOUBLE(v);
        return MATCH;
    case 'n':
        return MATCH;
    case 'c': {
        Py_complex c = ((PyComplexObject *)v)->cval;
        w[(*n)++].d = c.real;
        w[(*n)++].d = c.imag;
        return MATCH;
    }
    case 'I': {
        PyObject *index = PyNumber_Index(v);
        if (index == NULL) {
            PyErr_Clear();
            return FALL;
        }
        int overflow = 0;
        w[(*n)++].i = PyLong_AsLongLongAndOverflow(index, &overflow);
        Py_DECREF(index);
        return overflow ? FALL : MATCH;
    }
    case 'B': {
        int truth = PyObject_IsTrue(v);
        if (truth < 0) {
            PyErr_Clear();
            return FALL;
        }
        w[(*n)++].i = truth;
        return MATCH;
    }
    case 't': {
        if (PyTuple_GET_SIZE(v) != s->count)
            return NO_MATCH;
        for (int k = 0; k < s->count; k++) {
            int r = unbox(slots, at, PyTuple_GET_ITEM(v, k), w, n);
            if (r != MATCH)
                return r;
        }
        return MATCH;
    }
    case 'A': {
        cb_ndarray *a = (cb_ndarray *)v;
        int nd = a->nd;
        if (nd != s->count || a->descr != s->dtype || ((a->flags & CB_NPY_WRITEABLE) != 0) != s->writeable)
            return NO_MATCH;
        int unit = a->dimensions[nd - 1] <= 1 || a->strides[nd - 1] == s->itemsize;
        if (unit != s->unit)
            return NO_MATCH;
        w[(*n)++].i = (int64_t)(intptr_t)a->data;
        for (int k = 0; k < nd; k++)
            w[(*n)++].i = a->dimensions[k];
        for (int k = 0; k < nd; k++)
            w[(*n)++].i = a->strides[k];
        return MATCH;
    }
    }
    return NO_MATCH;
}

/* Move `*at` and `*n` past the slots and words of one value. */
static void skip(const cb_slot *slots, int *at, int *n) {
    const cb_slot *s = &slots[(*at)++];
    if (s->kind == 't' || s->kind == 'u') {
        *n += s->kind == 'u';
        for (int k = 0; k < s->count; k++)
            skip(slots, at, n);
    } else if (s->kind == 'A') {
        *n += 2 + 2 * s->count;
    } else if (s->kind == 'c' || s->kind == 'W') {
        *n += 2;
    } else if (s->kind != 'n') {
        *n += 1;
    }
}

/* The int high * 2**64 + low. */
static PyObject *wide_int(unsigned long long low, long long high) {
    PyObject *h = PyLong_FromLongLong(high), *sixty_four = PyLong_FromLong(64), *l = PyLong_FromUnsignedLongLong(low);
    PyObject *shifted = h && sixty_four ? PyNumber_Lshift(h, sixty_four) : NULL;
    PyObject *out = shifted && l ? PyNumber_Or(shifted, l) : NULL;
    Py_XDECREF(h);
    Py_XDECREF(sixty_four);
    Py_XDECREF(l);
    Py_XDECREF(shifted);
    return out;
}

/* Box the value whose words start at `w[*n]`, by the slots from `*at` on. */
static PyObject *box(const cb_slot *slots, int *at, const cb_word *w, int *n, cb_boxing *ctx) {
    const cb_slot *s = &slots[(*at)++];
    switch (s->kind) {
    case 'A': {
        PyObject *a = box_array(s, &w[*n], ctx);
        *n += 2 + 2 * s->count;
        return a;
    }
    case 'i':
        return PyLong_FromLongLong(w[(*n)++].i);
    case 'w':
        return PyLong_FromUnsignedLongLong((unsigned long long)w[(*n)++].i);
    case 'W': {
        unsigned long long low = (unsigned long long)w[(*n)++].i;
        return wide_int(low, w[(*n)++].i);
    }
    case 'b':
        return PyBool_FromLong(w[(*n)++].i != 0);
    case 'd':
        return PyFloat_FromDouble(w[(*n)++].d);
    case 'n':
        Py_RETURN_NONE;
    case 'c': {
        double real = w[(*n)++].d;
        return PyComplex_FromDoubles(real, w[(*n)++].d);
    }
    case 'F':
    case 'I':
    case 'B': {
        cb_word x = w[(*n)++];
        PyObject *plain = s->kind == 'F' ? PyFloat_FromDouble(x.d) : s->kind == 'I' ? PyLong_FromLongLong(x.i) : PyBool_FromLong(x.i != 0);
        if (plain == NULL)
            return NULL;
        PyObject *made = PyObject_CallOneArg((PyObject *)s->type, plain); /* numpy.float64(x) */
        Py_DECREF(plain);
        return made;
    }
    case 't': {
        PyObject *t = PyTuple_New(s->count);
        if (t == NULL)
            return NULL;
        for (int k = 0; k < s->count; k++) {
            PyObject *item = box(slots, at, w, n, ctx);
            if (item == NULL) {
                Py_DECREF(t);
                return NULL;
            }
            PyTuple_SET_ITEM(t, k, item);
        }
        return t;
    }
    case 'u': {
        int64_t present = w[(*n)++].i;
        PyObject *found = NULL;
        for (int k = 0; k < s->count; k++) { /* every option's words are there */
            if (k != present) {
                skip(slots, at, n);
                continue;
            }
            found = box(slots, at, w, n, ctx);
            if (found == NULL)
                return NULL;
        }
        if (found == NULL)
            PyErr_SetString(PyExc_SystemError, "cuvil_bc: a union result without its option");
        return found;
    }
    }
    PyErr_SetString(PyExc_SystemError, "cuvil_bc: a result the C entry cannot box");
    return NULL;
}

/* 1 when every guard holds, 0 when one does not, -1 with an exception (an attribute
 * lookup that raised other than AttributeError, as getattr with a default would). */
static int guards_hold(cb_entry *self, cb_set *set) {
    for (Py_ssize_t g = 0; g < set->nguards; g++) {
        cb_guard *guard = &set->guards[g];
        PyObject *value;
        if (guard->is_attr) {
            value = PyObject_GetAttr(guard->namespace, guard->name);
            if (value == NULL) {
                if (!PyErr_ExceptionMatches(PyExc_AttributeError))
                    return -1;
                PyErr_Clear();
                value = Py_NewRef(self->absent);
            }
            Py_DECREF(value); /* (only its identity is compared; `expected` holds it) */
        } else {
            value = PyDict_GetItemWithError(guard->namespace, guard->name);
            if (value == NULL) {
                if (PyErr_Occurred())
                    return -1;
                value = self->absent;
            }
        }
        if (value != guard->expected)
            return 0;
    }
    return 1;
}

static void free_signatures(cb_signature *sigs, int count);

static void release_set(cb_set *set) {
    if (set == NULL || --set->refs > 0)
        return;
    free_signatures(set->signatures, set->count);
    PyMem_Free(set->guards);
    Py_XDECREF(set->keep);
    PyMem_Free(set);
}

static PyObject *call_set(cb_entry *self, cb_set *set, PyObject *const *args, Py_ssize_t nargs);
static PyObject *deopted(cb_entry *self, cb_word address);

/* The GIL, released lazily. A native call that may release it points `gil_hold` at
 * its own record (restoring the outer call's afterwards: a call from Python code that
 * native code called back, with the GIL held). Native loops report their work to
 * cb_gil_work: a range loop its trip count when it starts (and at each chunk), a
 * polled loop 256 passes at a time. Past CB_GIL_HOLD_WORK in all (loops of callees
 * and of nested loops included), the thread state is saved in the record, once, and
 * the entry restores it when the native code returns. Only a thread that holds the
 * GIL releases it: native code that cffi called runs without it already, and on 3.11
 * _PyThreadState_UncheckedGet is the holder's state, whichever thread asks. */
#define CB_GIL_HOLD_WORK 1024
typedef struct {
    PyThreadState *saved;
    int64_t work;
} cb_gil_hold;
static _Thread_local cb_gil_hold *gil_hold = NULL;

#if PY_VERSION_HEX >= 0x030D0000
#define CB_CURRENT_TSTATE() PyThreadState_GetUnchecked()
#else
#define CB_CURRENT_TSTATE() _PyThreadState_UncheckedGet()
#endif

/* Complex products, quotients and absolute values (runtime.h): CPython's own code, so
 * that the bits are its own on every platform (its build may contract a product into
 * a fused multiply-add where ours would not). */
int32_t cb_complex_prod(double ar, double ai, double br, double bi, double *out) {
    Py_complex a = {ar, ai}, b = {br, bi};
    Py_complex r = _Py_c_prod(a, b);
    out[0] = r.real;
    out[1] = r.imag;
    return 0;
}

int32_t cb_complex_quot(double ar, double ai, double br, double bi, double *out) {
    Py_complex a = {ar, ai}, b = {br, bi};
    errno = 0;
    Py_complex r = _Py_c_quot(a, b);
    out[0] = r.real;
    out[1] = r.imag;
    return errno == EDOM; /* ZeroDivisionError in CPython */
}

int32_t cb_complex_abs(double re, double im, double *out) {
    Py_complex z = {re, im};
    errno = 0;
    out[0] = _Py_c_abs(z);
    return errno == ERANGE; /* OverflowError in CPython */
}

/* The `math` functions whose bits only CPython's own code guarantees (gamma, lgamma,
 * erf, erfc, hypot, ...): native code calls cb_math_call(fn, n, args, &out) for
 * math_functions[fn](*args[:n]), 0 with the result or 1 when CPython must compute it
 * (the function raised: the re-run raises it). Called
 * from C, the function runs no Python code, so no signal handler runs in the middle of
 * a native call: a pending signal waits for the native loop's poll, which hands the
 * call to the interpreter, as any signal does. (Through a cffi Python callback, a
 * handler's exception was printed as ignored and the call went on with an unset
 * result.) The GIL is taken for the call, whether or not this thread let it go. */
static PyObject *math_functions = NULL; /* tuple of callables (lower/runtime.py) */

static PyObject *set_math_functions(PyObject *module, PyObject *functions) {
    (void)module;
    if (!PyTuple_Check(functions)) {
        PyErr_SetString(PyExc_TypeError, "set_math_functions() takes a tuple");
        return NULL;
    }
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(functions); k++) {
        if (!PyCallable_Check(PyTuple_GET_ITEM(functions, k))) {
            PyErr_SetString(PyExc_TypeError, "each item must be callable");
            return NULL;
        }
    }
    Py_XSETREF(math_functions, Py_NewRef(functions));
    Py_RETURN_NONE;
}

PyMethodDef cb_set_math_functions_def = {"set_math_functions", set_math_functions, METH_O, NULL};

int32_t cb_math_call(int32_t fn, int32_t n, const double *xs, double *out) {
    PyGILState_STATE gil = PyGILState_Ensure();
    int32_t status = 1;
    PyObject *functions = math_functions;
    PyObject *small[8];
    PyObject **args = n <= 8 ? small : PyMem_Malloc((size_t)n * sizeof(PyObject *));
    if (functions != NULL && fn >= 0 && fn < PyTuple_GET_SIZE(functions) && n >= 0 && args != NULL) {
        int32_t made = 0;
        while (made < n && (args[made] = PyFloat_FromDouble(xs[made])) != NULL)
            made++;
        PyObject *result = NULL;
        if (made == n)
            result = PyObject_Vectorcall(PyTuple_GET_ITEM(functions, fn), args, (size_t)n, NULL);
        for (int32_t k = 0; k < made; k++)
            Py_DECREF(args[k]);
        if (result != NULL && PyFloat_CheckExact(result)) {
            *out = PyFloat_AS_DOUBLE(result);
            status = 0;
        }
        Py_XDECREF(result);
    }
    if (args != small)
        PyMem_Free(args);
    if (PyErr_Occurred())
        PyErr_Clear(); /* (CPython raises it again when it re-runs the call) */
    PyGILState_Release(gil);
    return status;
}

void cb_gil_work(int64_t units) {
    cb_gil_hold *hold = gil_hold;
    if (hold == NULL || hold->saved != NULL)
        return;
    hold->work += units < CB_GIL_HOLD_WORK ? units : CB_GIL_HOLD_WORK; /* (no overflow) */
    if (hold->work < CB_GIL_HOLD_WORK)
        return;
    PyThreadState *current = CB_CURRENT_TSTATE();
    if (current != NULL && current == PyGILState_GetThisThreadState())
        hold->saved = PyEval_SaveThread();
}

static PyObject *entry_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    cb_entry *self = (cb_entry *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    cb_set *set = self->set;
    if (kwnames != NULL || nargs != self->nargs || set == NULL || set->count == 0)
        return Py_NewRef(self->fall);
    set->refs++;
    PyObject *result = call_set(self, set, args, nargs);
    release_set(set);
    return result;
}

/* NumPy warns about an underflow only if its error state asks for it (np.seterr,
 * np.errstate: "ignore" by default), and native code does not look: a signature that
 * computes with NumPy floats runs natively only while underflows are ignored. NumPy 2
 * keeps the state in a context variable; the verdict is cached for the last value seen
 * (held, so that its identity stays its own), and asked of Python (`probe`) for a new
 * one. Without the variable (set_numpy_errstate not called: no NumPy), nothing to ask. */
static PyObject *errstate_var = NULL, *errstate_probe = NULL, *errstate_seen = NULL;
static int errstate_ignored = 1;

static int underflow_ignored(void) {
    if (errstate_var == NULL)
        return 1;
    PyObject *value;
    if (PyContextVar_Get(errstate_var, NULL, &value) < 0 || value == NULL) {
        PyErr_Clear();
        return 0;
    }
    if (value != errstate_seen) {
        PyObject *verdict = PyObject_CallNoArgs(errstate_probe);
        int ignored = verdict == Py_True;
        if (verdict == NULL)
            PyErr_Clear();
        Py_XDECREF(verdict);
        Py_XSETREF(errstate_seen, Py_NewRef(value));
        errstate_ignored = ignored;
    }
    Py_DECREF(value);
    return errstate_ignored;
}

static PyObject *set_numpy_errstate(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *var, *probe;
    if (!PyArg_ParseTuple(args, "O!O:set_numpy_errstate", &PyContextVar_Type, &var, &probe))
        return NULL;
    Py_XSETREF(errstate_var, Py_NewRef(var));
    Py_XSETREF(errstate_probe, Py_NewRef(probe));
    Py_CLEAR(errstate_seen);
    Py_RETURN_NONE;
}

static PyObject *numpy_underflow_ignored(PyObject *module, PyObject *unused) {
    (void)module;
    (void)unused;
    return PyBool_FromLong(underflow_ignored());
}

PyMethodDef cb_set_numpy_errstate_def = {"set_numpy_errstate", set_numpy_errstate, METH_VARARGS, NULL};
PyMethodDef cb_numpy_underflow_ignored_def = {"numpy_underflow_ignored", numpy_underflow_ignored, METH_NOARGS, NULL};

static PyObject *call_set(cb_entry *self, cb_set *set, PyObject *const *args, Py_ssize_t nargs) {
    int hold = guards_hold(self, set);
    if (hold <= 0)
        return hold < 0 ? NULL : Py_NewRef(self->fall);
    for (int s = 0; s < set->count; s++) {
        cb_signature *sig = &set->signatures[s];
        cb_word in[CB_ENTRY_WORDS], out[CB_ENTRY_WORDS];
        int at = 0, n = 0, r = MATCH;
        for (Py_ssize_t k = 0; k < nargs && r == MATCH; k++)
            r = unbox(sig->slots, &at, args[k], in, &n);
        if (r == NO_MATCH)
            continue;
        if (r == FALL || (sig->numpy_floats && !underflow_ignored()))
            return Py_NewRef(self->fall);
        typedef int32_t (*words_entry)(int64_t *, const cb_word *, cb_word *, int32_t, cb_word *);
        words_entry fn = (words_entry)sig->target->fn;
        int32_t depth = sig->calls_compiled ? start_depth() : 0;
        if (depth < 0)
            return Py_NewRef(self->fall);
        cb_gil_hold hold = {NULL, 0}, *outer = gil_hold;
        gil_hold = sig->release_gil ? &hold : NULL; /* (NULL: not an outer call's either) */
        cb_word parked = {0};
        int32_t status = fn(&sig->target->calls, in, out, depth, &parked);
        gil_hold = outer;
        if (hold.saved != NULL)
            PyEval_RestoreThread(hold.saved);
        if (status != CB_OK)
            return deopted(self, parked);
        at = sig->result;
        n = 0;
        cb_boxing ctx;
        ctx.args = args;
        ctx.nargs = nargs;
        ctx.made = 0;
        return box(sig->slots, &at, out, &n, &ctx);
    }
    return Py_NewRef(self->fall);
}

/* `deopt((record,))` for the deopt record that native code parked at `address` (as
 * bytes; its memory is freed). */
static PyObject *deopted(cb_entry *self, cb_word address) {
    cb_word *parked = (cb_word *)(intptr_t)address.i;
    if (parked == NULL)
        return PyErr_NoMemory();
    PyObject *record = PyBytes_FromStringAndSize((const char *)parked, (Py_ssize_t)((CB_RECORD_WORDS + parked[2].i) * sizeof(cb_word)));
    cb_free_record(parked);
    if (record == NULL)
        return NULL;
    PyObject *one = PyTuple_Pack(1, record);
    Py_DECREF(record);
    if (one == NULL)
        return NULL;
    PyObject *made = PyObject_CallOneArg(self->deopt, one);
    Py_DECREF(one);
    return made;
}

static PyObject *entry_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    Py_ssize_t nargs;
    PyObject *fall, *deopt, *absent;
    static char *names[] = {"nargs", "fall", "deopt", "absent", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "nOOO", names, &nargs, &fall, &deopt, &absent))
        return NULL;
    if (nargs < 0 || nargs > CB_ENTRY_WORDS) {
        PyErr_Format(PyExc_ValueError, "a C entry takes at most %d parameters", CB_ENTRY_WORDS);
        return NULL;
    }
    cb_entry *self = (cb_entry *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->vectorcall = entry_vectorcall;
    self->nargs = nargs;
    self->set = NULL;
    self->fall = Py_NewRef(fall);
    self->deopt = Py_NewRef(deopt);
    self->absent = Py_NewRef(absent);
    return (PyObject *)self;
}

/* Read one slot (kind, count, type, dtype, writeable, unit, itemsize) into `s`; its
 * objects go into `keep`. */
static int read_slot(PyObject *item, cb_slot *s, PyObject *keep, int result) {
    const char *kind;
    PyObject *type, *dtype;
    if (!PyArg_ParseTuple(item, "siOOiin", &kind, &s->count, &type, &dtype, &s->writeable, &s->unit, &s->itemsize))
        return -1;
    const char *kinds = result ? "iwWbdncFIBtuA" : "iwbdncFIBtA";
    if (strlen(kind) != 1 || !strchr(kinds, kind[0]) || !PyType_Check(type) || s->count < 0 || (kind[0] == 'A' && (s->count < 1 || s->count > 32))) {
        PyErr_SetString(PyExc_ValueError, "a slot that the C entry does not know");
        return -1;
    }
    s->kind = kind[0];
    s->type = (PyTypeObject *)type;
    s->dtype = dtype;
    if (PyList_Append(keep, type) < 0 || PyList_Append(keep, dtype) < 0)
        return -1;
    return 0;
}

static void free_signatures(cb_signature *sigs, int count) {
    for (int s = 0; s < count; s++) {
        PyMem_Free(sigs[s].slots);
        sigs[s].slots = NULL;
    }
}

/* entry.set(signatures, guards): the native signatures and the global guards every
 * call checks first, replacing the previous ones. Each signature is (argument slots,
 * result slots, release_gil, calls_compiled, target address, owner of the target's
 * memory); each slot
 * is (kind, count, type, dtype, writeable, unit, itemsize); each guard is (namespace,
 * name, expected, is_attr), the namespace a dict unless is_attr. */
static PyObject *entry_set(PyObject *op, PyObject *args) {
    cb_entry *self = (cb_entry *)op;
    PyObject *arg, *guard_list;
    if (!PyArg_ParseTuple(args, "OO:set", &arg, &guard_list))
        return NULL;
    PyObject *seq = PySequence_Fast(arg, "signatures must be a sequence");
    if (seq == NULL)
        return NULL;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
    cb_signature made[CB_ENTRY_SIGNATURES];
    int done = 0;
    cb_guard *guards = NULL;
    Py_ssize_t nguards = 0;
    PyObject *gseq = NULL;
    PyObject *keep = PyList_New(0);
    if (keep == NULL || count > CB_ENTRY_SIGNATURES) {
        if (keep != NULL)
            PyErr_Format(PyExc_ValueError, "a C entry holds at most %d signatures", CB_ENTRY_SIGNATURES);
        goto fail;
    }
    gseq = PySequence_Fast(guard_list, "guards must be a sequence");
    if (gseq == NULL)
        goto fail;
    nguards = PySequence_Fast_GET_SIZE(gseq);
    guards = PyMem_Calloc((size_t)nguards + 1, sizeof(cb_guard));
    if (guards == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t g = 0; g < nguards; g++) {
        cb_guard *guard = &guards[g];
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(gseq, g), "OUOp", &guard->namespace, &guard->name, &guard->expected, &guard->is_attr))
            goto fail;
        if (!guard->is_attr && !PyDict_Check(guard->namespace)) {
            PyErr_SetString(PyExc_ValueError, "a guard's namespace must be a dict");
            goto fail;
        }
        if (PyList_Append(keep, guard->namespace) < 0 || PyList_Append(keep, guard->name) < 0 || PyList_Append(keep, guard->expected) < 0)
            goto fail;
    }
    for (; done < count; done++) {
        PyObject *arg_slots, *ret_slots, *owner;
        int release, calls_compiled, numpy_floats;
        unsigned long long address;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, done), "O!O!pppKO", &PyTuple_Type, &arg_slots, &PyTuple_Type, &ret_slots, &release, &calls_compiled, &numpy_floats, &address, &owner))
            goto fail;
        Py_ssize_t na = PyTuple_GET_SIZE(arg_slots), nr = PyTuple_GET_SIZE(ret_slots);
        cb_signature *sig = &made[done];
        sig->slots = PyMem_Calloc((size_t)(na + nr), sizeof(cb_slot));
        if (sig->slots == NULL) {
            PyErr_NoMemory();
            goto fail;
        }
        sig->result = (int)na;
        sig->release_gil = release;
        sig->calls_compiled = calls_compiled;
        sig->numpy_floats = numpy_floats;
        sig->target = (cb_native_target *)(uintptr_t)address;
        for (Py_ssize_t k = 0; k < na + nr; k++) {
            PyObject *item = k < na ? PyTuple_GET_ITEM(arg_slots, k) : PyTuple_GET_ITEM(ret_slots, k - na);
            if (read_slot(item, &sig->slots[k], keep, k >= na) < 0) {
                done++; /* (its slots are freed with the others) */
                goto fail;
            }
        }
        if (PyList_Append(keep, owner) < 0) {
            done++;
            goto fail;
        }
    }
    cb_set *set = PyMem_Malloc(sizeof(cb_set));
    if (set == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    set->refs = 1;
    memcpy(set->signatures, made, sizeof(cb_signature) * (size_t)count);
    set->count = (int)count;
    set->guards = guards;
    set->nguards = nguards;
    set->keep = keep;
    cb_set *old = self->set;
    self->set = set;
    release_set(old); /* (calls in flight hold it until they are done) */
    Py_DECREF(gseq);
    Py_DECREF(seq);
    Py_RETURN_NONE;
fail:
    free_signatures(made, done);
    PyMem_Free(guards);
    Py_XDECREF(gseq);
    Py_XDECREF(keep);
    Py_DECREF(seq);
    return NULL;
}

static int entry_traverse(PyObject *op, visitproc visit, void *arg) {
    cb_entry *self = (cb_entry *)op;
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(self->fall);
    Py_VISIT(self->deopt);
    Py_VISIT(self->absent);
    if (self->set != NULL)
        Py_VISIT(self->set->keep);
    return 0;
}

static int entry_clear(PyObject *op) {
    cb_entry *self = (cb_entry *)op;
    cb_set *set = self->set;
    self->set = NULL;
    release_set(set);
    Py_CLEAR(self->absent);
    Py_CLEAR(self->fall);
    Py_CLEAR(self->deopt);
    return 0;
}

static void entry_dealloc(PyObject *op) { cb_gc_dealloc(op, entry_clear); }

static PyMethodDef entry_methods[] = {
    {"set", entry_set, METH_VARARGS, "set(signatures, guards): replace the native signatures and the guards."},
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
