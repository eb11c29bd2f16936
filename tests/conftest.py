"""Test-suite settings.

* The IR verifier runs after every pass of every compilation.
* Under CI (``CI`` set) hypothesis is derandomized, so a run is reproducible; locally it
  draws new examples each run and keeps exploring. Set ``HYPOTHESIS_PROFILE=explore`` in
  CI to search anyway.
"""

import os

from hypothesis import settings

from cuvil_bc.ir import pipeline

pipeline.VERIFY_EACH = True

settings.register_profile("ci", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "explore"))
