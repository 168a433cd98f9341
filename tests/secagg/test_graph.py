"""Masking graphs (fedlib/secagg/_graph.py): Harary H(n, m) is m-regular and m-connected; components after removal."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedlib.secagg import MaskingGraph, harary_graph


def _as_networkx(g: MaskingGraph) -> nx.Graph:
    G = nx.Graph()
    G.add_nodes_from(range(g.n_clients))
    G.add_edges_from((i, int(j)) for i, nb in enumerate(g.neighbors) for j in nb)
    return G


@given(st.integers(2, 40), st.integers(1, 12), st.integers(0, 2**16))
def test_harary_graph_is_regular_and_as_connected_as_its_degree(n, m, seed):
    if m < n - 1 and (m == 1 or (m % 2 and n % 2)):
        with pytest.raises(ValueError, match=r"regular|matching"):
            harary_graph(n, m, random_state=seed)
        return
    g = harary_graph(n, m, random_state=seed)
    G = _as_networkx(g)
    degree = min(m, n - 1)
    assert {d for _, d in G.degree()} == {degree}
    assert nx.node_connectivity(G) == degree  # Harary graphs are maximally connected
    # Same edge count as networkx's own Harary construction: the fewest edges of any such graph.
    assert G.number_of_edges() == nx.hkn_harary_graph(degree, n).number_of_edges()


def test_labels_are_permuted_by_the_seed():
    a, b = harary_graph(30, 4, random_state=0), harary_graph(30, 4, random_state=1)
    assert a == harary_graph(30, 4, random_state=0)
    assert any(not np.array_equal(x, y) for x, y in zip(a.neighbors, b.neighbors, strict=True))


@given(st.integers(3, 20), st.sampled_from([2, 4]), st.integers(0, 2**16), st.data())
def test_components_match_networkx(n, m, seed, data):
    g = harary_graph(n, m, random_state=seed)
    alive = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    sub = _as_networkx(g).subgraph([i for i in range(n) if alive[i]])
    expected = sorted(sorted(c) for c in nx.connected_components(sub))
    assert [c.tolist() for c in g.components(np.array(alive))] == expected
    assert g.is_connected(np.array(alive)) == (len(expected) <= 1)


def test_complete_graph_and_validation():
    g = MaskingGraph.complete(5)
    assert g.n_edges == 10 and g.degree == 4 and g.is_connected([0, 3])
    assert harary_graph(5, 4, random_state=0) == g
    with pytest.raises(ValueError, match="undirected"):
        MaskingGraph((np.array([1]), np.array([], dtype=int)))
    with pytest.raises(ValueError, match="own neighbour"):
        MaskingGraph((np.array([0]),))
    with pytest.raises(ValueError, match="ids in"):
        g.components([7])


def test_ring_of_eight_without_alternate_clients_splits_in_four():
    """Drop every other client of a ring: each survivor is isolated."""
    ring = MaskingGraph(tuple(np.array([(i - 1) % 8, (i + 1) % 8]) for i in range(8)))
    assert [c.tolist() for c in ring.components([0, 2, 4, 6])] == [[0], [2], [4], [6]]
    assert all(len(ring.components(list(s))) == 1 for s in itertools.combinations(range(8), 7))


def test_a_graph_needs_a_client_and_integral_neighbour_ids():
    with pytest.raises(ValueError, match="at least one client"):
        MaskingGraph(())
    with pytest.raises(ValueError, match="whole numbers"):
        MaskingGraph((np.array([1.7]), np.array([0.0])))
    with pytest.raises(ValueError, match="whole numbers"):
        MaskingGraph.complete(3).components([0.5, 1])
