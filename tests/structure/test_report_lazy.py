"""The structure report renders the differentiated equations' descriptions when they are
read: what it prints, compares equal to and saves is the list it held when eager."""

from __future__ import annotations

import pickle

import acausal as ac


def test_the_differentiated_equations_read_as_the_eager_list():
    import _models as bm

    cm = ac.build(bm.MassSpringChain(12))
    sys, pr = cm.system, cm.pantelides
    eager = [sys.equations[k].describe(90) for k in pr.differentiated]
    lazy = cm.report.differentiated
    assert len(eager) == 12 and len(lazy) == 12
    assert lazy == eager and eager == lazy and list(lazy) == eager
    assert lazy[3] == eager[3] and lazy[-1] == eager[-1] and lazy[2:5] == eager[2:5]
    assert "d/dt[springs[0].s_rel ==" in lazy[0]
    text = str(cm.report)
    assert all(d in text for d in eager[:10]) and "... and 2 more" in text
    saved = pickle.loads(pickle.dumps(cm.report))
    assert type(saved.differentiated) is list and saved == cm.report


def test_the_flat_listing_counts_unknowns_as_the_report():
    """The flat listing said '10 equations, 11 unknowns' for an RC circuit the report calls
    10 and 10 (it counted der(capacitor.v) as an unknown of its own): a newcomer read an
    unbalanced system."""
    import _models as bm

    cm = ac.build(bm.MassSpringChain(3))
    head = cm.flat.listing().splitlines()[0]
    r = cm.report
    assert head == (f"{r.n_equations_flat} equations, {r.n_unknowns_flat} unknowns "
                    "(and the derivatives of 9 of them)")  # (s, v of 3 masses; s_rel of 3 dampers)
