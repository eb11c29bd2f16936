"""An ordinary numeric program, written without any thought of cuvil_bc.

    python examples/numeric_app.py [scale]                  plain CPython
    python -X importhook cuvil_bc examples/numeric_app.py   accelerated, unmodified
    cd examples && python -m cuvil_bc -m hook_app [scale]   the same, as a package

The hook compiles its hot numeric functions (`kernels.py`) and leaves the rest
(`report.py` formats with strings and lists) to the interpreter; the output is the
same either way.
"""
