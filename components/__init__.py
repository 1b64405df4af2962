"""The component library of acausal: one module per domain.

``electrical``, ``translational``, ``rotational``, ``thermal`` (1D, MSL conventions);
``flexible`` (finite-element preprocessor for flexible bodies).
"""
