"""The example program as a script: ``python examples/numeric_app.py [scale]``.

Run it accelerated without changing it: ``python -X importhook cuvil_bc examples/numeric_app.py``.
"""

import sys

from hook_app.main import main

if __name__ == "__main__":
    sys.exit(main())
