"""`gc_paused()`: the cyclic garbage collector off while many small objects are made.

Building tens of thousands of records or dicts (a credits result, a run document's
`model_dump`) next to a large live heap triggers a collection every few hundred allocations,
and each rescans everything alive: that took most of the time of such steps (a 22 MB run
document: `model_dump` 1.1 s with the collector on, 0.15 s off; a second of the 1M-incident
credits benchmark). Nothing built under it forms reference cycles, so no garbage waits for
the collector; what is made is moved to the oldest generation instead of being scanned at
the next allocation.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            # freeze/unfreeze only move objects between generations: the new ones end in the oldest
            gc.freeze()
            gc.enable()
            gc.unfreeze()
