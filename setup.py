"""The one compiled module, `calculators._kernels` (C, no dependency beyond Python's headers);
everything else is in pyproject.toml. It is optional: where no C compiler is at hand the
install goes on and the numpy forms of its loops serve (slower, same results)."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("calculators._kernels", ["calculators/_kernels.c"],
                             extra_compile_args=["-O2", "-std=c11"], optional=True)])
