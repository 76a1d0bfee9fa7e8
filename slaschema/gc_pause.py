"""`gc_paused()`: the cyclic garbage collector off while many small objects are made.

Building tens of thousands of records or dicts (a credits result, a run document's
`model_dump`) next to a large live heap triggers a collection every few hundred allocations,
and each rescans everything alive: that took most of the time of such steps (a 22 MB run
document: `model_dump` 1.1 s with the collector on, 0.15 s off; a second of the 1M-incident
credits benchmark). Nothing built under it forms reference cycles, so no garbage waits for
the collector; what is made is moved to the oldest generation instead of being scanned at
the next allocation.

`slakit credits` runs whole under it: its imports, the contract's validation and the
loader make some 400,000 objects in all, and each collection while they are made rescans
those made before (with the collector on, the 1M-incident benchmark took 0.1-0.2 s longer
for the table and 0.2-0.3 s for the JSON document, in alternating runs). Whatever cyclic
garbage such a run leaves (an exception's traceback) is in the oldest generation after the
block and goes at the next full collection; the `slakit` program exits first.
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
