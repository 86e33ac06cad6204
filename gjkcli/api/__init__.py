"""The Python API for callers who check parts from their own code.

`gjkcli.api.manager` holds `CollisionManager`, a drop-in for trimesh's
`trimesh.collision.CollisionManager` (same methods, arguments and return shapes) answered by
gjk's engine under the command line's mode policy, and `scene_to_collision`. Both are also
importable from `gjkcli` itself (lazily: `import gjkcli` stays cheap).

May import: `gjkcli.pipeline` (the policy and the findings model), `gjkcli.scene` (the broad
phase), `gjkcli.mesh` (hull gaps), `gjkcli.engine`, and below. Nothing above it.
"""
