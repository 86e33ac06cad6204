"""Build the compiled core: C sources in gjkcli/engine/csrc wrapped by the Cython module gjkcli/engine/_core.pyx."""
from Cython.Build import cythonize
from setuptools import Extension, setup

core = Extension(
    "gjkcli.engine._core",
    sources=[
        "gjkcli/engine/_core.pyx",
        "gjkcli/engine/csrc/support.c",
        "gjkcli/engine/csrc/simplex.c",
        "gjkcli/engine/csrc/gjk.c",
        "gjkcli/engine/csrc/epa.c",
        "gjkcli/engine/csrc/query.c",
    ],
    include_dirs=["gjkcli/engine/csrc"],
    # No -ffast-math: the engine's robustness rests on IEEE rounding; no -march=native: a wheel
    # built here may be copied to another machine of the same kind.
    extra_compile_args=["-O3", "-std=c99", "-fno-strict-aliasing"],
)

mesh = Extension(
    "gjkcli.engine._mesh",
    sources=["gjkcli/engine/_mesh.pyx", "gjkcli/engine/csrc/bvh.c", "gjkcli/engine/csrc/tri.c",
             "gjkcli/engine/csrc/gaps.c", "gjkcli/engine/csrc/ownhull.c",
             # a primitive against the triangles (primmesh.c) runs GJK and EPA per triangle
             "gjkcli/engine/csrc/primmesh.c", "gjkcli/engine/csrc/support.c",
             "gjkcli/engine/csrc/simplex.c", "gjkcli/engine/csrc/gjk.c", "gjkcli/engine/csrc/epa.c",
             "gjkcli/engine/csrc/query.c",
             "gjkcli/engine/csrc/smallhull.c", "gjkcli/engine/csrc/convexcut.c"],
    include_dirs=["gjkcli/engine/csrc"],
    extra_compile_args=["-O3", "-std=c99", "-fno-strict-aliasing"],
)

plane = Extension(
    "gjkcli.engine._plane",
    sources=["gjkcli/engine/_plane.pyx", "gjkcli/engine/csrc/plane.c",
             "gjkcli/engine/csrc/boxpairs.c"],
    include_dirs=["gjkcli/engine/csrc"],
    extra_compile_args=["-O3", "-std=c99", "-fno-strict-aliasing"],
)

enums = Extension("gjkcli.engine._enums", sources=["gjkcli/engine/_enums.pyx"],
                  include_dirs=["gjkcli/engine/csrc"])

setup(ext_modules=cythonize([core, mesh, plane, enums], language_level=3, compiler_directives={"boundscheck": False, "wraparound": False}))
