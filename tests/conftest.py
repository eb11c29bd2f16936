"""Test-suite settings: the verifier runs after every pass of every compilation."""

from cuvil_bc.ir import pipeline

pipeline.VERIFY_EACH = True
