"""lower: typed IR -> LLVM IR (llvmlite.ir) -> native code through the JIT."""
