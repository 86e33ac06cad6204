"""gjk: collision, touching and clearance checks for 3D parts.

The engine's Python API is `gjkcli.engine.query` (pair and batch queries) over `gjkcli.engine.shapes.Shape`.
"""

__version__ = "0.1.0"
