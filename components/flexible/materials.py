"""Materials and beam cross-sections.

All quantities are SI: Pa, kg/m^3, m, m^2, m^4. A value may also be written with a unit,
``Material("210 GPa", 0.3, "7800 kg/m3")``, ``Section.circle("5 mm")``: it is converted
(and kept) in these units, as parameters are everywhere in acausal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .errors import FEError

__all__ = ["Material", "Section"]


def _quantity(name: str, value: Any, unit: str) -> float:
    """A number, or a string with a unit (``"210 GPa"``, ``"3 mm"``) converted to ``unit``
    as everywhere in acausal (:func:`acausal.units.convert`)."""
    if isinstance(value, str):
        from acausal.errors import UnitError
        from acausal.units import convert

        try:
            return convert(value, unit)
        except UnitError as exc:
            raise FEError(f"{name} [{unit}]: {exc}") from None
    if isinstance(value, bool):
        raise FEError(f"{name} must be a number [{unit}], got {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise FEError(f"{name} must be a number [{unit}] (or a string with a unit, e.g. "
                      f"'210 GPa'), got {value!r}") from None


def _positive(name: str, value: Any, unit: str = "m") -> float:
    value = _quantity(name, value, unit)
    if not math.isfinite(value) or value <= 0.0:
        raise FEError(f"{name} must be a finite positive number, got {value!r}")
    return value


@dataclass(frozen=True)
class Material:
    """Linear elastic isotropic material.

    Parameters
    ----------
    E : float
        Young's modulus [Pa].
    nu : float
        Poisson's ratio [-], in (-1, 0.5).
    rho : float
        Mass density [kg/m^3].
    G : float or None
        Shear modulus [Pa]; defaults to ``E / (2 (1 + nu))``.
    name : str
        Free label used in reports.
    """

    E: float
    nu: float
    rho: float
    G: float | None = None
    name: str = "material"

    def __post_init__(self) -> None:
        # (values written with a unit, "210 GPa", are kept as numbers in SI units)
        object.__setattr__(self, "E", _positive("Material.E", self.E, "Pa"))
        object.__setattr__(self, "rho", _positive("Material.rho", self.rho, "kg/m3"))
        nu = _quantity("Material.nu", self.nu, "1")
        if not (-1.0 < nu < 0.5):
            raise FEError(f"Material.nu must lie in (-1, 0.5), got {nu!r}")
        object.__setattr__(self, "nu", nu)
        if self.G is None:
            object.__setattr__(self, "G", float(self.E) / (2.0 * (1.0 + nu)))
        else:
            object.__setattr__(self, "G", _positive("Material.G", self.G, "Pa"))

    @property
    def shear_modulus(self) -> float:
        """Shear modulus G [Pa]."""
        return float(self.G if self.G is not None else self.E / (2.0 * (1.0 + self.nu)))

    @classmethod
    def steel(cls) -> "Material":
        """Structural steel of the chapter's panels: E = 210 GPa, nu = 0.3, rho = 7800 kg/m^3."""
        return cls(E=2.1e11, nu=0.3, rho=7800.0, name="steel")

    @classmethod
    def aluminium(cls) -> "Material":
        """Aluminium alloy: E = 70 GPa, nu = 0.33, rho = 2700 kg/m^3."""
        return cls(E=7.0e10, nu=0.33, rho=2700.0, name="aluminium")


@dataclass(frozen=True)
class Section:
    """Beam cross-section in the element's principal axes (local y, z).

    Parameters
    ----------
    A : float
        Area [m^2].
    Iy : float
        Second moment of area about local y, ``int z^2 dA`` [m^4] (bending in the x-z plane).
    Iz : float
        Second moment of area about local z, ``int y^2 dA`` [m^4] (bending in the x-y plane).
    J : float
        Saint-Venant torsion constant [m^4].
    ky : float
        Timoshenko shear factor for shear along local y [-] (shear area ``ky*A``).
    kz : float
        Timoshenko shear factor for shear along local z [-].
    name : str
        Free label.

    Notes
    -----
    The rotary inertia of torsion uses the polar moment ``Iy + Iz``, not ``J``.
    Use ``ky = kz = math.inf`` for an Euler-Bernoulli (shear-rigid) section.
    """

    A: float
    Iy: float
    Iz: float
    J: float
    ky: float = 5.0 / 6.0
    kz: float = 5.0 / 6.0
    name: str = "section"

    def __post_init__(self) -> None:
        for n, unit in (("A", "m2"), ("Iy", "m4"), ("Iz", "m4"), ("J", "m4")):
            object.__setattr__(self, n, _positive(f"Section.{n}", getattr(self, n), unit))
        for n in ("ky", "kz"):
            v = _quantity(f"Section.{n}", getattr(self, n), "1")
            object.__setattr__(self, n, v)
            if not (v > 0.0):
                raise FEError(f"Section.{n} (shear factor) must be > 0 (use math.inf for no "
                              f"shear deformation), got {v!r}")

    @property
    def Ip(self) -> float:
        """Polar second moment of area ``Iy + Iz`` [m^4]."""
        return self.Iy + self.Iz

    @classmethod
    def circle(cls, radius: float, nu: float = 0.3) -> "Section":
        """Solid circular section.

        Parameters
        ----------
        radius : float
            Radius [m].
        nu : float
            Poisson's ratio [-] used by Cowper's shear factor ``6(1+nu)/(7+6nu)``.
        """
        r = _positive("radius", radius)
        k = 6.0 * (1.0 + nu) / (7.0 + 6.0 * nu)
        i = math.pi * r**4 / 4.0
        return cls(A=math.pi * r**2, Iy=i, Iz=i, J=2.0 * i, ky=k, kz=k, name=f"circle r={r}")

    @classmethod
    def tube(cls, outer_radius: float, inner_radius: float, nu: float = 0.3) -> "Section":
        """Circular tube.

        Parameters
        ----------
        outer_radius : float
            Outer radius [m].
        inner_radius : float
            Inner radius [m], ``0 <= inner_radius < outer_radius``.
        nu : float
            Poisson's ratio [-] for Cowper's hollow-circle shear factor.
        """
        ro = _positive("outer_radius", outer_radius)
        ri = _quantity("inner_radius", inner_radius, "m")
        if not (0.0 <= ri < ro):
            raise FEError(f"tube inner_radius must satisfy 0 <= inner_radius < outer_radius "
                          f"({ro}), got {ri}")
        m = ri / ro
        s = (1.0 + m * m) ** 2
        k = 6.0 * (1.0 + nu) * s / ((7.0 + 6.0 * nu) * s + (20.0 + 12.0 * nu) * m * m)
        i = math.pi * (ro**4 - ri**4) / 4.0
        return cls(A=math.pi * (ro**2 - ri**2), Iy=i, Iz=i, J=2.0 * i, ky=k, kz=k,
                   name=f"tube ro={ro} ri={ri}")

    @classmethod
    def rectangle(cls, width: float, height: float, nu: float = 0.3) -> "Section":
        """Solid rectangle, ``width`` along local y and ``height`` along local z.

        Parameters
        ----------
        width : float
            Side along local y [m].
        height : float
            Side along local z [m].
        nu : float
            Poisson's ratio [-] for Cowper's factor ``10(1+nu)/(12+11nu)``.

        Notes
        -----
        The torsion constant is the Saint-Venant series
        ``J = a b^3 / 3 [1 - 192 b / (pi^5 a) sum_{n odd} tanh(n pi a / 2b) / n^5]``
        with ``a >= b``, summed to machine precision.
        """
        b_ = _positive("width", width)
        h_ = _positive("height", height)
        a, b = max(b_, h_), min(b_, h_)
        s = 0.0
        for n in range(1, 200, 2):
            s += math.tanh(n * math.pi * a / (2.0 * b)) / n**5
        J = a * b**3 / 3.0 * (1.0 - 192.0 * b / (math.pi**5 * a) * s)
        k = 10.0 * (1.0 + nu) / (12.0 + 11.0 * nu)
        return cls(A=b_ * h_, Iy=b_ * h_**3 / 12.0, Iz=h_ * b_**3 / 12.0, J=J, ky=k, kz=k,
                   name=f"rectangle {b_}x{h_}")
