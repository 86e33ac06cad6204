"""Meshes: files to parts, and what a part is.

`load` reads files (trimesh, or NumPy for STL and glTF) into named parts in world coordinates;
`topology` says which edges close a part and how many bodies it has; `convexity` decides whether
a part is its own hull (within a tolerance, or within a pair's touching band).

May import: the engine, `gjkcli.errors`, `gjkcli.tolerances`.
"""

# The files that hold gjk's own settings (`gjkcli.config` finds them; `gjkcli.mesh.load` never
# counts them as inputs of a folder): here, so that finding the settings imports no NumPy (a
# report the cache keeps is written again without it).
SETTINGS_FILES = ("gjk.toml", "pyproject.toml")
