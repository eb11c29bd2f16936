"""What the clean-up passes (`ir/passes/`) may know about values beyond the IR itself.

The passes run before typing and again after it, when they can do more: a typed
``x is None`` may be known, an unused typed op may be known not to raise. They ask a
`Facts` that the pipeline hands them. This one knows only what the IR's structure says;
typing hands the passes its own (`typing/facts.py`), which knows the primitives
(before typing too) and the types.
"""

from __future__ import annotations

from . import ops as O


class Facts:
    typed = False  # whether the IR the passes see is typed (the verifier checks more)

    def may_raise(self, op: O.Op) -> bool:
        """Whether `op` may raise (or warn): dead-code elimination keeps it if so.
        Untyped, any operand could be anything: only ops that build or pass on
        values, and narrowings other than the unbound-local check, cannot."""
        if isinstance(op, O.Narrow):
            return op.is_none is None  # UnboundLocalError
        return not isinstance(op, (O.BuildTuple, O.Phi, O.IterValue))

    def may_be_unbound(self, value: O.Value) -> bool | None:
        """Whether the local read as `value` may be unbound; None: not known here
        (the pass then follows the IR's definitions)."""
        return None

    def pure_callable(self, obj: object) -> bool:
        """Whether calling `obj` has no side effects (constant folding then calls it
        on constant arguments). The IR knows no callable."""
        return False

    def is_none(self, value: O.Value) -> bool | None:
        """Whether `value` is always None (True), never None (False), or either (None)."""
        return None

    def known_object(self, value: O.Value) -> tuple[object, ...]:
        """The compile-time object (a module, function, builtin or class: no run-time
        content) that `value` always is, as a 1-tuple; () when not known."""
        return ()

    def fits(self, value: object, op: O.Op) -> bool:
        """Whether constant folding may replace `op` by `value`. Untyped, any value
        may; typed, only one of the type typing gave the op (``x ** 1.5`` is typed a
        float, but -1 ** 1.5 is a complex)."""
        return True


UNTYPED = Facts()
