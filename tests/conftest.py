"""Test-suite settings.

* The IR verifier runs after every pass of every compilation.
* Under CI (``CI`` set) hypothesis is derandomized, so a run is reproducible; locally it
  draws new examples each run and keeps exploring. Set ``HYPOTHESIS_PROFILE=explore`` in
  CI to search anyway.
* The native-code cache (cuvil_bc/artifacts/) keeps its files in a directory of the
  session's own, removed at the end: the checkout gets none, and a run never loads code
  an earlier run stored. (Whether it writes follows ``PYTHONDONTWRITEBYTECODE``, as
  for any program; tests/test_artifacts.py sets what it needs.)
"""

import atexit
import gc
import os
import shutil
import tempfile

import pytest
from hypothesis import settings

from cuvil_bc.ir import pipeline

pipeline.VERIFY_EACH = True

_ARTIFACTS = tempfile.mkdtemp(prefix="cuvil_bc-test-cache-")
os.environ["CUVIL_BC_CACHE_DIR"] = _ARTIFACTS  # (also for the programs tests start)
atexit.register(shutil.rmtree, _ARTIFACTS, True)

settings.register_profile("ci", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "explore"))


@pytest.fixture
def no_native_leaks():  # type: ignore[no-untyped-def]
    """The test leaves no native array allocation behind (once its arrays are freed):
    the C runtime's count of live allocations is back where it started."""
    from cuvil_bc._runtime import lib

    gc.collect()
    before = lib.cb_live_allocations()
    yield
    gc.collect()
    assert lib.cb_live_allocations() == before
