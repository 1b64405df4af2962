"""Drawing a linear graph in the style of the chapter's Fig. 1 (``cm.graph.draw()``).

Vertices are numbered discs, the datum vertex of each domain grey and labelled; every edge
is an arrow from its initial to its final vertex, labelled ``e_k`` (``k`` the edge index of
:meth:`LinearGraph.listing`, or the component's name); **tree branches bold and
black, cotree chords dashed and red**, with a legend. Parallel edges between the same two
vertices are drawn as arcs so that none hides another.
"""

from __future__ import annotations

from typing import Any

__all__ = ["draw_graph"]


def draw_graph(graph: Any, ax: Any = None, *, labels: str = "index",
               layout: str = "kamada_kawai") -> Any:
    """Draw ``graph`` (a :class:`~acausal.graph.LinearGraph`) on matplotlib axes.

    ``labels``: ``"index"`` (``e0``, ``e1``, ... as in the listing), ``"name"`` (the edge's
    component and ends) or ``"none"``; ``layout``: a networkx layout name (``"kamada_kawai"``,
    ``"spring"``, ``"planar"``, ``"circular"``).
    """
    import matplotlib.pyplot as plt
    import networkx as nx
    from matplotlib.lines import Line2D

    g = nx.MultiDiGraph()
    for v in graph.vertices:
        g.add_node(v.index)
    for e in graph.edges:
        g.add_edge(e.initial, e.final, key=e.index)
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 5.5))
    simple = nx.Graph(g)
    make = getattr(nx, f"{layout}_layout")
    try:
        pos = make(simple, seed=1) if layout == "spring" else make(simple)
    except Exception:  # noqa: BLE001 - e.g. a non-planar graph for "planar"
        pos = nx.spring_layout(simple, seed=1)
    datums = [v.index for v in graph.vertices if v.is_datum]
    others = [v.index for v in graph.vertices if not v.is_datum]
    nx.draw_networkx_nodes(g, pos, nodelist=others, node_color="C0", node_size=420, ax=ax)
    nx.draw_networkx_nodes(g, pos, nodelist=datums, node_color="0.45", node_size=420, ax=ax)
    nx.draw_networkx_labels(g, pos, labels={v.index: str(v.index) for v in graph.vertices},
                            font_color="white", font_size=9, ax=ax)
    for v in graph.vertices:
        if v.is_datum:
            x, y = pos[v.index]
            ax.annotate(f"{v.domain.name} {v.domain.datum}", (x, y), xytext=(12, -12),
                        textcoords="offset points", fontsize=8, color="0.3")
    in_tree = {e.index for e in graph.tree}
    seen: dict[tuple[int, int], int] = {}
    for e in graph.edges:
        pair = (min(e.initial, e.final), max(e.initial, e.final))
        n = seen.get(pair, 0)
        seen[pair] = n + 1
        rad = 0.0 if n == 0 else 0.25 * ((n + 1) // 2) * (1 if n % 2 else -1)
        tree = e.index in in_tree
        nx.draw_networkx_edges(
            g, pos, edgelist=[(e.initial, e.final)], ax=ax, arrows=True, arrowsize=16,
            width=2.6 if tree else 1.2, edge_color="black" if tree else "C3",
            style="solid" if tree else "dashed", node_size=420,
            connectionstyle=f"arc3,rad={rad}")
        if labels != "none":
            (x0, y0), (x1, y1) = pos[e.initial], pos[e.final]
            mx, my = (x0 + x1) / 2, (y0 + y1) / 2
            # the arc's midpoint is offset along the normal by rad/2 of the chord
            mx, my = mx + rad / 2 * (y1 - y0), my - rad / 2 * (x1 - x0)
            text = f"$e_{{{e.index}}}$" if labels == "index" else e.name
            ax.annotate(text, (mx, my), xytext=(5, 5), textcoords="offset points",
                        fontsize=10 if labels == "index" else 7,
                        color="black" if tree else "C3")
    ax.legend(handles=[Line2D([], [], color="black", lw=2.6, label="tree branches"),
                       Line2D([], [], color="C3", lw=1.2, ls="--", label="cotree chords")],
              loc="lower center", bbox_to_anchor=(0.5, -0.08), ncol=2, frameon=False,
              fontsize=8)
    ax.set_axis_off()
    return ax
