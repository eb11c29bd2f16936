"""Build script: the package plus its C runtime (csrc/), compiled with cffi."""

from setuptools import setup

setup(cffi_modules=["csrc/build_runtime.py:ffibuilder"])
