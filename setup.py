"""Build the compiled core: C sources in gjkcli/csrc wrapped by the Cython module gjkcli/_core.pyx."""
from Cython.Build import cythonize
from setuptools import Extension, setup

core = Extension(
    "gjkcli._core",
    sources=[
        "gjkcli/_core.pyx",
        "gjkcli/csrc/support.c",
        "gjkcli/csrc/simplex.c",
        "gjkcli/csrc/gjk.c",
        "gjkcli/csrc/epa.c",
        "gjkcli/csrc/query.c",
    ],
    include_dirs=["gjkcli/csrc"],
    # No -ffast-math: the engine's robustness rests on IEEE rounding; no -march=native: a wheel
    # built here may be copied to another machine of the same kind.
    extra_compile_args=["-O3", "-std=c99", "-fno-strict-aliasing"],
)

mesh = Extension(
    "gjkcli._mesh",
    sources=["gjkcli/_mesh.pyx", "gjkcli/csrc/bvh.c", "gjkcli/csrc/tri.c"],
    include_dirs=["gjkcli/csrc"],
    extra_compile_args=["-O3", "-std=c99", "-fno-strict-aliasing"],
)

setup(ext_modules=cythonize([core, mesh], language_level=3, compiler_directives={"boundscheck": False, "wraparound": False}))
