# cython: language_level=3
"""The compiled core's enums, once: their values come from gjk.h and mesh.h at compile time.

Python reads them here (`gjkcli.engine.results` gives them words, `shapes` and `query` their
names); no Python table retypes a number. A module of its own, with no code, so that a renderer
reading a result's codes loads nothing of the engine.
"""

cdef extern from "gjk.h":
    cpdef enum gjk_kind:
        GJK_HULL
        GJK_POINT
        GJK_SEGMENT
        GJK_BOX
        GJK_CYLINDER
        GJK_CONE

    cpdef enum gjk_want:
        GJK_WANT_INTERSECT
        GJK_WANT_DISTANCE
        GJK_WANT_VERDICT

    cpdef enum gjk_status:
        GJK_CLEAR
        GJK_TOUCHING
        GJK_COLLISION
        GJK_UNDECIDED
        GJK_INTERSECTING

    cpdef enum gjk_exit:
        GJK_EXIT_NONE
        GJK_EXIT_SEPARATING_AXIS
        GJK_EXIT_CONVERGED
        GJK_EXIT_REPEATED_SUPPORT
        GJK_EXIT_NO_PROGRESS
        GJK_EXIT_ORIGIN_ENCLOSED
        GJK_EXIT_ORIGIN_TOUCHED
        GJK_EXIT_ITERATION_CAP
        EPA_EXIT_CONVERGED
        EPA_EXIT_FLAT
        EPA_EXIT_ITERATION_CAP
        EPA_EXIT_CAPACITY
        EPA_EXIT_DEGENERATE

    cpdef enum gjk_feature:
        GJK_FEATURE_VERTEX
        GJK_FEATURE_EDGE
        GJK_FEATURE_FACE
        GJK_FEATURE_INSIDE

    cpdef enum gjk_cert:
        GJK_CERT_NONE
        GJK_CERT_PLANE
        GJK_CERT_POINT

    cpdef enum gjk_trace_field:
        TR_PHASE
        TR_ITER
        TR_DIR
        TR_IA
        TR_IB
        TR_STEPS_A
        TR_STEPS_B
        TR_W
        TR_A
        TR_B
        TR_PASSED
        TR_N_BEFORE
        TR_BEFORE
        TR_N_AFTER
        TR_AFTER
        TR_LAMBDA
        TR_FEATURE
        TR_KEPT
        TR_VNORM
        TR_LOWER
        TR_UPPER
        TR_EXIT
        TR_FACES
        TR_SUPPORT
        TR_WIDTH


# The exit codes of the triangle queries.
cdef extern from "mesh.h":
    cpdef enum mesh_exit:
        MESH_EXIT_NONE
        MESH_EXIT_DEEP_CROSSING
        MESH_EXIT_EXHAUSTED
        MESH_EXIT_STOP_DISTANCE
        MESH_EXIT_INTERSECTING
        MESH_EXIT_NO_MEMORY
        MESH_EXIT_FULL




# The plane's certificate kinds and trace fields (gjkcli/engine/csrc/plane.h).
cdef extern from "plane.h":
    cpdef enum pl_cert:
        PL_CERT_NONE
        PL_CERT_LINE
        PL_CERT_POINT
        PL_CERT_EDGES
        PL_CERT_DISTANCE

    cpdef enum pl_trace_field:
        PT_PHASE
        PT_ITER
        PT_DIR
        PT_IA
        PT_IB
        PT_STEPS_A
        PT_STEPS_B
        PT_W
        PT_A
        PT_B
        PT_PASSED
        PT_N_BEFORE
        PT_BEFORE
        PT_N_AFTER
        PT_AFTER
        PT_LAMBDA
        PT_FEATURE
        PT_KEPT
        PT_VNORM
        PT_LOWER
        PT_UPPER
        PT_EXIT
        PT_EDGES
        PT_SUPPORT
        PT_CLOSEST
        PT_WIDTH
