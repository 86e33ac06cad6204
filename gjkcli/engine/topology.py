"""Mesh topology, defined once: which edges close a mesh, which way its faces wind, its bodies.

- A mesh is *watertight* when every edge is shared by exactly two faces (trimesh's definition).
- It is *oriented* when every directed edge is used once: neighbours traverse their shared edge
  in opposite ways, so the faces agree on inside and outside.
- It is *solid* (containment can be decided) when it is both.
- Two triangles are in one *body* when a chain of manifold edges joins them (edges shared by
  exactly two distinct triangles). Solids that touch along an edge or at a vertex stay separate
  bodies; a triangle repeated in the file counts once.

The loader (`gjkcli.mesh.load`), the convexity decision (`gjkcli.mesh.convexity`) and the triangle
engine (`gjkcli.engine.exact`) all ask this module. NumPy, and scipy for very large meshes.
"""
from __future__ import annotations

import numpy as np

__all__ = ["topology", "components", "open_faces", "edge_groups", "oriented", "solid", "signed_volume"]

# Meshes with more triangles than this find their bodies with scipy (linear time) instead of
# the vectorised root hooking that wins on small meshes.
_SMALL_GRAPH = 20_000


def topology(faces: np.ndarray, n_vertices: int, groups=None) -> tuple[np.ndarray, int, np.ndarray]:
    """Bodies of a mesh, and the faces on an edge not shared by exactly two faces.

    Two triangles are in one body when a chain of manifold edges joins them: edges shared by
    exactly two distinct triangles (trimesh's face adjacency). Solids that touch along an edge
    (shared.STL, not_convex.obj) stay separate bodies. A triangle repeated in the file (a
    double-sided export: chair_model.obj has every triangle twice, once per winding) counts
    once, or every edge would be non-manifold and each triangle a body of its own.

    Parameters
    ----------
    faces : (m, 3) int64
    n_vertices : int
    groups : tuple, optional
        `edge_groups(faces, n_vertices)`, when the caller has them already (`open_faces` took
        them): the edges are not sorted again.

    Returns
    -------
    body : (m,) int64
        Label per face, 0 .. bodies-1 in order of each body's first face.
    bodies : int
    open_face : (m,) bool
        Faces with an edge not shared by exactly two faces: the mesh is watertight (trimesh's
        definition) when there are none.
    """
    order, counts = _edge_groups(faces, n_vertices) if groups is None else groups
    open_edge = np.empty(len(order), dtype=bool)
    open_edge[order] = np.repeat(counts != 2, counts)
    open_face = open_edge.reshape(-1, 3).any(axis=1)

    distinct, inverse = _distinct_triangles(faces, n_vertices)
    if inverse is not None:
        order, counts = _edge_groups(distinct, n_vertices)
    # a manifold edge's two entries sit side by side in `order` (edge i lies on face i // 3)
    first = (np.cumsum(counts) - counts)[counts == 2]
    root = components(len(distinct), order[first] // 3, order[first + 1] // 3)
    # roots are each body's first face, so numbering them in order gives "#k" names that
    # follow the file
    is_root = root == np.arange(len(root))
    body = (np.cumsum(is_root) - 1)[root]
    return (body if inverse is None else body[inverse]), int(is_root.sum()), open_face


def open_faces(faces: np.ndarray, n_vertices: int, groups=None) -> np.ndarray:
    """(m,) bool: the faces on an edge not shared by exactly two faces (`topology`'s open_face,
    without the bodies); groups as `topology` takes them."""
    order, counts = _edge_groups(faces, n_vertices) if groups is None else groups
    open_edge = np.empty(len(order), dtype=bool)
    open_edge[order] = np.repeat(counts != 2, counts)
    return open_edge.reshape(-1, 3).any(axis=1)


def edge_groups(faces: np.ndarray, n_vertices: int) -> tuple[np.ndarray, np.ndarray]:
    """The faces' edges grouped (an opaque pair of arrays), for `open_faces` and then `topology`
    of the same faces: sorted once for both."""
    return _edge_groups(faces, n_vertices)


def _edge_groups(faces: np.ndarray, n_vertices: int) -> tuple[np.ndarray, np.ndarray]:
    """The 3m edges of `faces` sorted so equal edges are adjacent.

    Returns
    -------
    order : (3m,) int64
        Edge indices (edge i lies on face i // 3) in sorted order.
    counts : (g,) int64
        How many faces share each distinct edge, in the same order.
    """
    edges = np.sort(faces[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1)
    key = edges[:, 0] * n_vertices + edges[:, 1]  # < n**2: exact in int64 below 3e9 vertices
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    change = np.ones(len(key) + 1, dtype=bool)
    change[1:-1] = sorted_key[1:] != sorted_key[:-1]
    return order, np.diff(np.flatnonzero(change))


def _distinct_triangles(faces: np.ndarray, n_vertices: int):
    """Triangles with repeats (same three vertices, either winding) removed.

    Returns
    -------
    distinct : (k, 3) int64
    inverse : (m,) int64 or None
        Index into `distinct` of each face; None when no triangle repeats.
    """
    corners = np.sort(faces, axis=1)
    if n_vertices >= 2_000_000:  # n**3 would overflow one int64 key per triangle
        _, first, inverse = np.unique(corners, axis=0, return_index=True, return_inverse=True)
        if len(first) == len(faces):
            return faces, None
        return _in_file_order(faces, first, inverse.ravel())
    key = (corners[:, 0] * n_vertices + corners[:, 1]) * n_vertices + corners[:, 2]
    ordered = np.sort(key)
    if (ordered[1:] != ordered[:-1]).all():  # the common case, without the cost of unique
        return faces, None
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    return _in_file_order(faces, first, inverse.ravel())


def _in_file_order(faces: np.ndarray, first: np.ndarray, inverse: np.ndarray):
    """Distinct triangles listed in the order of their first appearance in `faces`."""
    order = np.argsort(first)
    renumber = np.empty_like(order)
    renumber[order] = np.arange(len(order))
    return faces[first[order]], renumber[inverse]


def components(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Connected components of n nodes joined by edges a[i]-b[i].

    Returns
    -------
    root : (n,) int64
        The smallest node index of each node's component.
    """
    if len(a) == 0:
        return np.arange(n, dtype=np.int64)
    if n <= _SMALL_GRAPH:
        root = _hooked_roots(n, a, b)
        if root is not None:
            return root
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    graph = coo_matrix((np.ones(len(a), dtype=np.int8), (a, b)), shape=(n, n))
    label = connected_components(graph, directed=False)[1]
    first = np.full(label.max() + 1, n, dtype=np.int64)
    np.minimum.at(first, label, np.arange(n))
    return first[label]


def _hooked_roots(n: int, a: np.ndarray, b: np.ndarray, rounds: int = 64):
    """`components` by hooking each root to its smallest neighbouring root, then pointer
    jumping (Shiloach and Vishkin 1982): a few vectorised rounds, where scipy's sparse setup
    alone costs about 0.4 ms a call, most of a small part's load time in a 10,000-part scene.
    None if `rounds` rounds do not settle it (never seen; scipy then takes over)."""
    root = np.arange(n, dtype=np.int64)
    for _ in range(rounds):
        ra, rb = root[a], root[b]
        apart = ra != rb
        if not apart.any():
            return root
        # roots only point to smaller indices, so no cycle can form
        np.minimum.at(root, np.maximum(ra, rb)[apart], np.minimum(ra, rb)[apart])
        while True:  # every node points at its root again
            jumped = root[root]
            if (jumped == root).all():
                break
            root = jumped
    return None


def oriented(faces: np.ndarray) -> bool:
    """Every directed edge used once (degenerate edges, a vertex to itself, left out)."""
    directed = faces[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2)
    directed = directed[directed[:, 0] != directed[:, 1]]
    if len(directed) == 0:
        return False
    n = int(faces.max()) + 1
    key = np.sort(directed[:, 0] * n + directed[:, 1])
    return bool(np.all(key[1:] != key[:-1]))


def solid(faces: np.ndarray, n_vertices: int) -> tuple[bool, bool]:
    """(watertight, oriented) of a mesh: see the module docstring."""
    _, _, open_face = topology(faces, n_vertices)
    closed = not open_face.any()
    return closed, closed and oriented(faces)


def signed_volume(vertices, faces, centre=None) -> float:
    """The volume the triangles enclose, positive when their normals (right hand) point out:
    the sum of the tetrahedra from `centre` (default the origin; a point near the part keeps
    the precision of parts far from it) to each face."""
    t = np.asarray(vertices, dtype=np.float64)[np.asarray(faces, dtype=np.int64).reshape(-1, 3)]
    if centre is not None:
        t = t - np.asarray(centre, dtype=np.float64)
    return float(np.einsum("ij,ij->", t[:, 0], np.cross(t[:, 1], t[:, 2]))) / 6.0
