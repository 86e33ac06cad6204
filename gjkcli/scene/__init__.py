"""Scenes: what objects a run checks, where they are, and which pairs are worth a look.

`objects` turns the paths a user gave and a manifest into named objects in world coordinates;
`manifest` reads manifests (TOML, JSON) and SRDF allowed pairs; `broadphase` picks candidate
pairs from bounding boxes.

May import: meshes, the engine, `gjkcli.errors`, `gjkcli.tolerances`.
"""
