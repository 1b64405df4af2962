"""Materials and beam cross-sections.

All quantities are SI: Pa, kg/m^3, m, m^2, m^4.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .errors import FEError

__all__ = ["Material", "Section"]


def _positive(name: str, value: float) -> float:
    value = float(value)
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
        _positive("Material.E", self.E)
        _positive("Material.rho", self.rho)
        nu = float(self.nu)
        if not (-1.0 < nu < 0.5):
            raise FEError(f"Material.nu must lie in (-1, 0.5), got {nu!r}")
        if self.G is None:
            object.__setattr__(self, "G", float(self.E) / (2.0 * (1.0 + nu)))
        else:
            _positive("Material.G", self.G)

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
        for n in ("A", "Iy", "Iz", "J"):
            _positive(f"Section.{n}", getattr(self, n))
        for n in ("ky", "kz"):
            v = float(getattr(self, n))
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
        ri = float(inner_radius)
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
