"""Build the compiled core: C sources in gjkcli/engine/csrc wrapped by the Cython module gjkcli/engine/_core.pyx."""
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup

ENGINE = Path(__file__).resolve().parent / "gjkcli" / "engine"


def up_to_date(pyx: str) -> bool:
    """Whether Cython's C of `pyx`, left in the tree by an earlier build, is newer than every
    file of ours it is made from (the .pyx, the .pxi it includes, the headers it declares).

    pip builds in the source tree, so a second `pip install` (the README's `pip install
    ".[test]"` after `pip install .`) finds the first one's objects in build/ and compiles
    nothing, unless Cython makes the C again: in pip's fresh build environment Cython's own
    .pxd files (libc, cpython) are newer than the C, and cythonize would then regenerate every
    module and setuptools recompile it (minutes). Our sources decide instead."""
    c = (ENGINE.parent.parent / pyx).with_suffix(".c")
    if not c.is_file():
        return False
    ours = [ENGINE.parent.parent / pyx, *ENGINE.glob("*.pxi"), *ENGINE.glob("*.pxd"),
            *(ENGINE / "csrc").glob("*.h")]
    return all(p.stat().st_mtime <= c.stat().st_mtime for p in ours)


def generated(ext: Extension) -> Extension:
    """The extension on its C from an earlier build when that is up to date (`up_to_date`)."""
    ext.sources = [s[:-len(".pyx")] + ".c" if s.endswith(".pyx") else s for s in ext.sources]
    return ext

core = Extension(
    "gjkcli.engine._core",
    sources=[
        "gjkcli/engine/_core.pyx",
        "gjkcli/engine/csrc/support.c",
        "gjkcli/engine/csrc/simplex.c",
        "gjkcli/engine/csrc/gjk.c",
        "gjkcli/engine/csrc/epa.c",
        "gjkcli/engine/csrc/query.c",
        "gjkcli/engine/csrc/tri.c",  # EPA's witnesses: the closest point of a triangle
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

if __name__ == "__main__":  # the build backend runs this file as __main__; tests read up_to_date
    extensions = [core, mesh, plane, enums]
    stale = [e for e in extensions if not up_to_date(e.sources[0])]
    built = [generated(e) for e in extensions if e not in stale]
    setup(ext_modules=built + (cythonize(stale, language_level=3,
                                         compiler_directives={"boundscheck": False, "wraparound": False})
                               if stale else []))
