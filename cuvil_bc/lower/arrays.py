"""Lowering of array creation: ``np.empty/zeros/ones/full``, the ``*_like`` forms,
``np.arange`` and ``a.copy()`` (typed by `typing/creation.py`).

Every new array is one allocation from `csrc/runtime.c` (``cb_alloc``), which returns
the meminfo the array value carries, with one reference (see `refcount.py`). Its
strides are NumPy's for the same call (``cb_new_strides``: C order, or the prototype's
layout for ``*_like``), so a returned array is indistinguishable from CPython's. What
NumPy would refuse (a negative dimension, a size that overflows, a zero ``arange``
step, no memory) deoptimises before anything is allocated, and CPython raises.
"""

from __future__ import annotations

from llvmlite import ir

from ..typing.types import ArrayType
from .emitter import Emitter
from .ltypes import F64, I32, I64, llvm_type, meminfo_index

ITEMSIZE = 8  # float64 and int64


def _header_size() -> int:
    from .runtime import ffi, lib

    return int(ffi.cast("intptr_t", lib.cb_data(4096))) - 4096


def allocate(em: Emitter, t: ArrayType, shape: list[ir.Value], like: ir.Value | None = None) -> ir.Value:
    """A new array of type `t` and extents `shape` (i64s); strides like `like`'s (an
    array value of the same ndim) or C order."""
    b = em.builder
    size = em.i64(1)
    negative = ir.Constant(ir.IntType(1), 0)
    for n in shape:
        negative = b.or_(negative, b.icmp_signed("<", n, em.i64(0)))
    em.deopt_if(negative)  # ValueError: negative dimensions are not allowed
    for n in shape:
        size = em.checked("smul", size, n)  # ValueError: array is too big
    nbytes = em.checked("smul", size, em.i64(ITEMSIZE))
    alloc = em.declare("cb_alloc", I64, [I64])
    meminfo = b.call(alloc, [nbytes])
    em.deopt_if(b.icmp_signed("==", meminfo, em.i64(0)))  # MemoryError (nothing to release)
    ndim = t.ndim
    dims = em.alloca(ir.ArrayType(I64, ndim))
    strides = em.alloca(ir.ArrayType(I64, ndim))
    protos = em.alloca(ir.ArrayType(I64, ndim))
    at = lambda arr, k: b.gep(arr, [ir.Constant(I32, 0), ir.Constant(I32, k)])  # noqa: E731
    for k, n in enumerate(shape):
        b.store(n, at(dims, k))
        if like is not None:
            b.store(b.extract_value(like, 1 + ndim + k), at(protos, k))
    fill_strides = em.declare("cb_new_strides", ir.VoidType(), [I64, I64.as_pointer(), I64.as_pointer(), I64, I64.as_pointer()])
    first = lambda arr: b.gep(arr, [ir.Constant(I32, 0), ir.Constant(I32, 0)])  # noqa: E731
    proto_ptr = first(protos) if like is not None else ir.Constant(I64.as_pointer(), None)
    b.call(fill_strides, [em.i64(ndim), first(dims), proto_ptr, em.i64(ITEMSIZE), first(strides)])
    val = ir.Constant(llvm_type(t), ir.Undefined)
    val = b.insert_value(val, b.add(meminfo, em.i64(_header_size())), 0)
    for k, n in enumerate(shape):
        val = b.insert_value(val, n, 1 + k)
        val = b.insert_value(val, b.load(at(strides, k)), 1 + ndim + k)
    return b.insert_value(val, meminfo, meminfo_index(ndim))


def size_of(em: Emitter, arr: ir.Value, ndim: int) -> ir.Value:
    size = em.i64(1)
    for k in range(ndim):
        size = em.builder.mul(size, em.builder.extract_value(arr, 1 + k))
    return size


def counted_loop(em: Emitter, n: ir.Value, body: "object") -> None:
    """``for i in range(n): body(i)`` (n >= 0), leaving the builder after the loop."""
    b = em.builder
    pre = b.block
    head = em.block("loop.head")
    step = em.block("loop.body")
    done = em.block("loop.done")
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(I64)
    i.add_incoming(em.i64(0), pre)
    b.cbranch(b.icmp_signed("<", i, n), step, done)
    b.position_at_end(step)
    body(i)  # type: ignore[operator]
    i.add_incoming(b.add(i, em.i64(1)), b.block)
    b.branch(head)
    b.position_at_end(done)


def fill(em: Emitter, arr: ir.Value, t: ArrayType, value: ir.Value | None) -> None:
    """Set every element (the allocation is dense: any layout cb_new_strides gives is
    a permutation of C order); `value` None: zeros."""
    b = em.builder
    data = b.inttoptr(b.extract_value(arr, 0), (F64 if t.dtype == "float64" else I64).as_pointer())
    n = size_of(em, arr, t.ndim)
    if value is None:
        memset = em.declare("llvm.memset.p0.i64", ir.VoidType(), [ir.IntType(8).as_pointer(), ir.IntType(8), I64, ir.IntType(1)])
        b.call(memset, [b.bitcast(data, ir.IntType(8).as_pointer()), ir.Constant(ir.IntType(8), 0), b.mul(n, em.i64(ITEMSIZE)), ir.Constant(ir.IntType(1), 0)])
        return
    counted_loop(em, n, lambda i: b.store(value, b.gep(data, [i])))


def arange(em: Emitter, start: ir.Value, stop: ir.Value, step: ir.Value) -> ir.Value:
    """``np.arange(start, stop, step)`` for ints. NumPy computes the length in floating
    point; that equals the exact ceiling while every argument is below 2**52 in size,
    so larger ones deoptimise, as does a zero step (ZeroDivisionError)."""
    b = em.builder
    big = ir.Constant(ir.IntType(1), 0)
    for v in (start, stop, step):
        big = b.or_(big, b.icmp_unsigned(">", b.add(v, em.i64(1 << 52)), em.i64(1 << 53)))
    em.deopt_if(b.or_(big, b.icmp_signed("==", step, em.i64(0))))
    span = b.sub(stop, start)
    safe_step = b.select(b.icmp_signed("==", step, em.i64(0)), em.i64(1), step)
    # ceil(span / step) for ints of either sign: (span + step - sign(step)) // step, floored.
    sign = b.select(b.icmp_signed(">", safe_step, em.i64(0)), em.i64(1), em.i64(-1))
    num = b.sub(b.add(span, safe_step), sign)
    q = b.sdiv(num, safe_step)
    r = b.srem(num, safe_step)
    adjust = b.and_(b.icmp_signed("!=", r, em.i64(0)), b.icmp_signed("!=", b.icmp_signed("<", r, em.i64(0)), b.icmp_signed("<", safe_step, em.i64(0))))
    q = b.select(adjust, b.sub(q, em.i64(1)), q)
    length = b.select(b.icmp_signed("<", q, em.i64(0)), em.i64(0), q)
    t = ArrayType("int64", 1)
    arr = allocate(em, t, [length])
    data = b.inttoptr(b.extract_value(arr, 0), I64.as_pointer())
    counted_loop(em, length, lambda i: b.store(b.add(start, b.mul(i, safe_step)), b.gep(data, [i])))
    return arr


def copy(em: Emitter, src: ir.Value, t: ArrayType) -> ir.Value:
    """``a.copy()``: a new C-ordered array with the same elements."""
    b = em.builder
    shape = [b.extract_value(src, 1 + k) for k in range(t.ndim)]
    new = allocate(em, ArrayType(t.dtype, t.ndim), shape)
    elem = (F64 if t.dtype == "float64" else I64).as_pointer()

    def level(k: int, src_addr: ir.Value, dst_addr: ir.Value) -> None:
        if k == t.ndim:
            b.store(b.load(b.inttoptr(src_addr, elem), align=1), b.inttoptr(dst_addr, elem))
            return
        s_stride = b.extract_value(src, 1 + t.ndim + k)
        d_stride = b.extract_value(new, 1 + t.ndim + k)
        counted_loop(em, shape[k], lambda i: level(k + 1, b.add(src_addr, b.mul(i, s_stride)), b.add(dst_addr, b.mul(i, d_stride))))

    level(0, b.extract_value(src, 0), b.extract_value(new, 0))
    return new
