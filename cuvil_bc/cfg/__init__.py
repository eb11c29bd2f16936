"""cfg: basic blocks, edges, dominators and natural loops over decoded instructions."""

from .graph import CFG, Block, build_cfg

__all__ = ["CFG", "Block", "build_cfg"]
