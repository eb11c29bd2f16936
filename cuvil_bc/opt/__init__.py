"""opt: analyses and optimisations over typed IR, between typing and lowering.

The call binding and global resolution that typing relies on (`specialize`),
speculation (`speculate`), what array indices and loop counters are known to be
(`bounds`), and which float results are tested for being finite, where (`finiteness`).
"""
