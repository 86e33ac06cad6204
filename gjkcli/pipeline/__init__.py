"""The one run and what it finds.

`run` takes inputs to objects, candidate pairs, the narrow phase and findings, for `gjk check`
and `gjk scan` alike; `policy` decides which engine answers a pair and what its answer means;
`findings` is the model every report reads; `baseline` records findings between runs.

May import: scenes, meshes, the engine, `gjkcli.errors`, `gjkcli.tolerances`.
"""
