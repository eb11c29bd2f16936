"""Functions under test that use `assert`: they live outside test_*.py modules because
pytest rewrites the assert statements of test modules (and so their bytecode)."""


def assert_with_message(x):
    assert x != 3, "x must not be 3"
    if x > 100:
        raise ValueError("too big")
    return x


def bare_assert(x):
    assert x
    return x + 1
