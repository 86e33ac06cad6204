"""The engine: the compiled core and its Python API.

Holds the C sources (`csrc/`) and their Cython wrappers (`_core` for GJK and EPA on convex shapes,
`_mesh` for triangle hierarchies), `shapes` (`Shape`, `ShapeSet`, bulk hull building), `query`
(pair, batch and support calls), `results` (frozen answers and the enums of the core), `exact`
(answers on a part's triangles), `primitive` (a sphere, capsule, cylinder, cone or box against a
part's triangles) and `certify` (checks a certificate apart from the engine);
`plane` is the same in 2D (`_plane` over csrc/plane.c: GJK and EPA on convex polygons, edge
hierarchies for parts with holes), checked by `certify_plane`.

May import: numpy, scipy, `gjkcli.errors`, `gjkcli.tolerances`. Nothing above it.
"""
