"""Pause Python's cyclic garbage collector while a loader builds millions of acyclic objects.

Each collection of the oldest generation rescans every live object, so building a million turns with the
collector on costs about twice as long (measured: generate(1_000_000) 12.5 s on, 6.5 s paused). Turns,
sessions and questions hold no reference cycles; reference counting frees them as usual.

>>> import gc
>>> with gc_paused():
...     gc.isenabled()
False
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["gc_paused"]


@contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the cyclic collector inside the block; restore its previous state after (even on error)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
