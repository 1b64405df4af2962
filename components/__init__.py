"""The component library of acausal: one module per domain.

``electrical``, ``translational``, ``rotational``, ``thermal`` (1D, MSL conventions);
``blocks`` (signal blocks, MSL ``Modelica.Blocks``);
``flexible`` (finite-element preprocessor for flexible bodies).
"""
