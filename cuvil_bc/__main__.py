"""``python -m cuvil_bc``: see `cuvil_bc/hook/cli.py`."""

from cuvil_bc.hook.cli import main

main()
