"""Build script: the package, its C runtime (csrc/, compiled with cffi), and the
startup hook `cuvil_bc-hook.pth`, installed at the top of site-packages so that
``python -X importhook cuvil_bc app.py`` works (see cuvil_bc/hook/startup.py)."""

import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

PTH = "cuvil_bc-hook.pth"


class build_py_with_pth(build_py):
    """Also put the startup hook next to the package, in regular and editable builds."""

    def run(self) -> None:
        super().run()
        target = os.path.join(self.build_lib, PTH)
        self.copy_file(PTH, target, preserve_mode=0)

    def get_outputs(self, include_bytecode: bool = True) -> list:
        return super().get_outputs(include_bytecode) + [os.path.join(self.build_lib, PTH)]


class editable_wheel_with_pth(editable_wheel):
    """An editable install's wheel holds only links to the source tree; add the hook.

    `_install_namespaces` is where setuptools writes its own .pth files into the
    directory that becomes the wheel's root, so ours goes there too."""

    def _install_namespaces(self, installation_dir: str, pth_prefix: str) -> None:
        super()._install_namespaces(installation_dir, pth_prefix)
        shutil.copy(PTH, os.path.join(installation_dir, PTH))


setup(
    cffi_modules=["csrc/build_runtime.py:ffibuilder"],
    cmdclass={"build_py": build_py_with_pth, "editable_wheel": editable_wheel_with_pth},
)
