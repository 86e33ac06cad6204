"""Meshes: files to parts, and what a part is.

`load` reads files (trimesh, or NumPy for STL and glTF) into named parts in world coordinates;
`topology` says which edges close a part and how many bodies it has; `convexity` decides whether
a part is its own hull (within a tolerance, or within a pair's touching band).

May import: the engine, `gjkcli.errors`, `gjkcli.tolerances`.
"""
