"""A bounded in-memory cache keyed by chunk id, for what a reranker derives from a chunk's content.

Chunk ids are derived from content, so an entry never goes stale: the oldest added is dropped first once the
bound is passed, and a hit does not refresh an entry. (cachetools' FIFOCache does the same, but is not one of
the project's dependencies.) Not thread-safe: the owner holds one lock over all of its caches, so that an
erasure's counts across them are one snapshot.
"""

from collections import OrderedDict
from typing import Generic, TypeVar

V = TypeVar("V")


class BoundedCache(Generic[V]):
    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[str, V] = OrderedDict()

    def get(self, key: str) -> V | None:
        return self._entries.get(key)

    def put(self, key: str, value: V) -> None:
        self._entries[key] = value
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)

    def pop(self, key: str) -> V | None:
        return self._entries.pop(key, None)

    def __contains__(self, key: str) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)
