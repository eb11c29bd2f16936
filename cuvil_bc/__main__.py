"""``python -m cuvil_bc``: see `cuvil_bc/hook/cli.py`; ``python -m cuvil_bc compile``:
see `cuvil_bc/aot.py`."""

import sys

if len(sys.argv) >= 2 and sys.argv[1] == "compile":
    from cuvil_bc.aot import main as compile_main

    sys.exit(compile_main(sys.argv[2:]))

from cuvil_bc.hook.cli import main

main()
