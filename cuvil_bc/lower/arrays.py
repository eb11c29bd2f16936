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

from ..typing.types import FLOAT, INT, ITEMSIZE, NP_I64, ArrayType, base
from .emitter import Emitter, Typed
from .ltypes import F64, I32, I64, llvm_type, meminfo_index

F32 = ir.FloatType()


def storage_type(dtype: str) -> ir.Type:
    """How an element is stored in memory (a bool is one byte, 0 or 1)."""
    if dtype == "float64":
        return F64
    if dtype == "float32":
        return F32
    return ir.IntType(8 * ITEMSIZE[dtype])


def load_element(em: Emitter, ptr: ir.Value, dtype: str) -> ir.Value:
    """The element at `ptr`, represented as its Python counterpart (`NpScalar.base`):
    a float32 widens exactly to a double, ints extend to int64, a bool byte tests != 0."""
    b = em.builder
    raw = b.load(b.bitcast(ptr, storage_type(dtype).as_pointer()))
    raw.align = 1  # strided views need not be aligned
    if dtype in ("float64", "int64"):
        return raw
    if dtype == "uint64":
        em.deopt_if(b.icmp_signed("<", raw, em.i64(0)))  # 2**63 or more: not an int64
        return raw
    if dtype == "float32":
        return b.fpext(raw, F64)
    if dtype == "bool":
        return b.icmp_unsigned("!=", raw, ir.Constant(raw.type, 0))
    return b.zext(raw, I64) if dtype.startswith("uint") else b.sext(raw, I64)


def store_element(em: Emitter, ptr: ir.Value, dtype: str, value: Typed) -> None:
    """``a[i] = value`` as NumPy casts it: into float32 a Python int rounds twice (to a
    double, then to float32: NumPy converts it through a Python float) and an np.int64
    once; a float that overflows float32 deopts (NumPy warns); an int out of range of
    an int dtype deopts (NumPy raises OverflowError), and so does a float whose
    truncation is (or a NaN or infinity); a bool array stores ``!= 0``."""
    b = em.builder
    v, t = value
    plain = (v, base(t))
    if dtype == "float64":
        item = em.as_float(plain)
    elif dtype == "int64" and base(t) != FLOAT:
        item = em.as_int(plain)
    elif dtype == "bool":
        if base(t) == FLOAT:
            nonzero = b.fcmp_unordered("!=", v, em.f64(0.0))  # NaN is true
        else:
            nonzero = b.icmp_signed("!=", em.as_int(plain), em.i64(0))
        item = b.zext(nonzero, ir.IntType(8))
    elif dtype == "float32":
        if t == NP_I64:
            item = b.sitofp(v, F32)
        else:
            wide = em.as_float(plain)
            item = b.fptrunc(wide, F32)
            if base(t) == FLOAT:
                back = b.fpext(item, F64)
                inf = em.f64(float("inf"))
                overflow = b.and_(
                    b.fcmp_ordered("==", em.intrinsic("llvm.fabs.f64", F64, [back]), inf),
                    b.fcmp_ordered("!=", em.intrinsic("llvm.fabs.f64", F64, [wide]), inf),
                )
                em.deopt_if(overflow)  # RuntimeWarning: overflow encountered in cast
    else:
        if base(t) == FLOAT:
            # NumPy stores a float truncated towards zero where that fits the dtype
            # (it raises ValueError or OverflowError, or warns, otherwise: deopt).
            from .builtins import float_to_int

            x = float_to_int(em, v)
        else:
            x = em.as_int(plain)
        bits = 8 * ITEMSIZE[dtype]
        if dtype == "uint64":
            lo, hi = 0, (1 << 63) - 1  # (values from 2**63 up deopt: not int64s)
        elif dtype.startswith("uint"):
            lo, hi = 0, (1 << bits) - 1
        else:
            lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        em.deopt_if(b.icmp_unsigned(">", b.sub(x, em.i64(lo)), em.i64(hi - lo)))  # OverflowError
        item = b.trunc(x, ir.IntType(bits)) if bits < 64 else x
    store = b.store(item, b.bitcast(ptr, storage_type(dtype).as_pointer()))
    store.align = 1


def _header_size() -> int:
    from .runtime import ffi, lib

    return int(ffi.cast("intptr_t", lib.cb_data(4096))) - 4096


def allocate(em: Emitter, t: ArrayType, shape: list[ir.Value], like: ir.Value | None = None, zeroed: bool = False) -> ir.Value:
    """A new array of type `t` and extents `shape` (i64s); strides like `like`'s (an
    array value of the same ndim) or C order; all zero bytes with `zeroed`."""
    b = em.builder
    size = em.i64(1)
    negative = ir.Constant(ir.IntType(1), 0)
    for n in shape:
        negative = b.or_(negative, b.icmp_signed("<", n, em.i64(0)))
    em.deopt_if(negative)  # ValueError: negative dimensions are not allowed
    for n in shape:
        size = em.checked("smul", size, n)  # ValueError: array is too big
    nbytes = em.checked("smul", size, em.i64(ITEMSIZE[t.dtype]))
    # The typing promised unit stride for a wider `*_like` of a unit-stride prototype
    # (creation.py): NumPy's "K" layout gives it unless the prototype's last axis is
    # not its innermost (a broadcast row), where the interpreter creates the array.
    # Tested before allocating, so that the deopt has nothing to release.
    tested = like is not None and t.unit_stride and t.ndim > 1
    meminfo = None if tested else _allocate_bytes(em, nbytes, zeroed)
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
    b.call(fill_strides, [em.i64(ndim), first(dims), proto_ptr, em.i64(ITEMSIZE[t.dtype]), first(strides)])
    if tested:
        last = b.load(at(strides, ndim - 1))
        strided = b.and_(b.icmp_signed("!=", last, em.i64(ITEMSIZE[t.dtype])), b.icmp_signed(">", shape[-1], em.i64(1)))
        em.deopt_if(b.and_(strided, b.icmp_signed("!=", size, em.i64(0))))
        meminfo = _allocate_bytes(em, nbytes, zeroed)
    val = ir.Constant(llvm_type(t), ir.Undefined)
    val = b.insert_value(val, b.add(meminfo, em.i64(_header_size())), 0)
    for k, n in enumerate(shape):
        val = b.insert_value(val, n, 1 + k)
        val = b.insert_value(val, b.load(at(strides, k)), 1 + ndim + k)
    return b.insert_value(val, meminfo, meminfo_index(ndim))


def _allocate_bytes(em: Emitter, nbytes: ir.Value, zeroed: bool) -> ir.Value:
    alloc = em.declare("cb_alloc_zeroed" if zeroed else "cb_alloc", I64, [I64])
    meminfo = em.builder.call(alloc, [nbytes])
    em.deopt_if(em.builder.icmp_signed("==", meminfo, em.i64(0)))  # MemoryError (nothing to release)
    return meminfo


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


def fill_item(em: Emitter, t: ArrayType, value: Typed) -> ir.Value:
    """`value` converted for storing into `t` (with the store's checks). Done before
    allocating: a failed check then has nothing to release."""
    one = em.alloca(storage_type(t.dtype))
    store_element(em, em.builder.bitcast(one, ir.IntType(8).as_pointer()), t.dtype, value)
    return em.builder.load(one)


def fill(em: Emitter, arr: ir.Value, t: ArrayType, item: ir.Value) -> None:
    """Set every element (the allocation is dense: any layout cb_new_strides gives is
    a permutation of C order) to `item` (from `fill_item`). Zeros come from
    `allocate(zeroed=True)` instead."""
    b = em.builder
    n = size_of(em, arr, t.ndim)
    first = b.inttoptr(b.extract_value(arr, 0), storage_type(t.dtype).as_pointer())
    counted_loop(em, n, lambda i: b.store(item, b.gep(first, [i])))


def arange(em: Emitter, start: ir.Value, stop: ir.Value, step: ir.Value, t: ArrayType) -> ir.Value:
    """``np.arange(start, stop, step, dtype=...)`` for ints. NumPy computes the length
    in floating point; that equals the exact ceiling while every argument is below
    2**52 in size, so larger ones deoptimise, as does a zero step (ZeroDivisionError).
    The items are the exact ints, stored as into any array of the dtype: NumPy makes
    the first two so (an int out of a narrow dtype's range raises OverflowError) and
    extrapolates the others in the dtype, which wraps where the exact ints would not
    fit, and which a float32 computes exactly only below 2**24: a store that does not
    fit deoptimises, and float32 items must lie below 2**24."""
    b = em.builder
    limit = 1 << (24 if t.dtype == "float32" else 52)
    big = ir.Constant(ir.IntType(1), 0)
    for v in (start, stop, step):
        big = b.or_(big, b.icmp_unsigned(">", b.add(v, em.i64(limit)), em.i64(2 * limit)))
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
    if t.dtype != "int64":  # every item must fit the dtype, before anything is allocated
        last = b.add(start, b.mul(b.sub(length, em.i64(1)), safe_step))
        for v in (start, last):
            fill_item(em, t, (b.select(b.icmp_signed(">", length, em.i64(0)), v, em.i64(0)), INT))
    arr = allocate(em, t, [length])
    kind = storage_type(t.dtype)
    data = b.inttoptr(b.extract_value(arr, 0), kind.as_pointer())

    def item(i: ir.Value) -> None:  # (exact: every item fits, as tested above)
        v = b.add(start, b.mul(i, safe_step))
        if isinstance(kind, ir.IntType):
            v = v if kind.width == 64 else b.trunc(v, kind)
        else:
            v = b.sitofp(v, kind)
        b.store(v, b.gep(data, [i]))

    counted_loop(em, length, item)
    return arr


def copy(em: Emitter, src: ir.Value, t: ArrayType) -> ir.Value:
    """``a.copy()``: a new C-ordered array with the same elements."""
    b = em.builder
    shape = [b.extract_value(src, 1 + k) for k in range(t.ndim)]
    new = allocate(em, ArrayType(t.dtype, t.ndim, unit_stride=True), shape)
    elem = storage_type(t.dtype).as_pointer()

    def level(k: int, src_addr: ir.Value, dst_addr: ir.Value) -> None:
        if k == t.ndim:
            b.store(b.load(b.inttoptr(src_addr, elem), align=1), b.inttoptr(dst_addr, elem))
            return
        s_stride = b.extract_value(src, 1 + t.ndim + k)
        d_stride = b.extract_value(new, 1 + t.ndim + k)
        counted_loop(em, shape[k], lambda i: level(k + 1, b.add(src_addr, b.mul(i, s_stride)), b.add(dst_addr, b.mul(i, d_stride))))

    level(0, b.extract_value(src, 0), b.extract_value(new, 0))
    return new
