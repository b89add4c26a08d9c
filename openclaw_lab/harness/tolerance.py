"""A gated metric's tolerance: an absolute margin (``0.01``) or one relative to the baseline (``"2%"``).

>>> Tolerance.parse(0.01).margin(0.5), Tolerance.parse("2%").margin(0.5)
(0.01, 0.01)
>>> str(Tolerance.parse("2%"))
'2%'
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Tolerance", "DEFAULT_TOLERANCE", "DEFAULT_MAX_P"]

DEFAULT_MAX_P = 0.05  # a drop beyond its tolerance fails only when the paired test's p-value is below this


@dataclass(frozen=True)
class Tolerance:
    """How far a metric may fall below its baseline before the gate looks at it at all."""

    absolute: float = 0.0
    relative: float = 0.0  # a share of the baseline's value

    def __post_init__(self) -> None:
        for name in ("absolute", "relative"):
            if not getattr(self, name) >= 0:  # also refuses NaN
                raise ValueError(f"tolerance.{name}: {getattr(self, name)!r} must be >= 0")

    @classmethod
    def parse(cls, value: float | str | Tolerance, field_name: str = "tolerance") -> Tolerance:
        """A number is an absolute margin; a string ending in ``%`` a margin relative to the baseline."""
        if isinstance(value, Tolerance):
            return value
        try:
            if isinstance(value, str) and value.strip().endswith("%"):
                return cls(relative=float(value.strip()[:-1]) / 100)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return cls(absolute=float(value))
        except ValueError:
            pass
        raise ValueError(f"{field_name}: {value!r} is neither a number >= 0 (absolute) nor a share such as '2%' (relative)")

    def margin(self, baseline: float) -> float:
        """The largest drop, in the metric's own units, that this tolerance allows at ``baseline``."""
        return max(self.absolute, self.relative * abs(baseline))

    def __str__(self) -> str:
        return f"{self.relative * 100:g}%" if self.relative else f"{self.absolute:g}"


DEFAULT_TOLERANCE = Tolerance(absolute=0.01)
