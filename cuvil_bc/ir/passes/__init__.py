"""IR passes, one per module, each with ``run(fn) -> changed``."""
