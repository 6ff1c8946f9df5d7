"""Rendered reports kept in memory, least recently used first out, within a size budget."""

from __future__ import annotations

from collections import OrderedDict

# (snapshot id, content version, view): the version changes whenever the stored document does; the
# view is how the reader asked for it (time zone, theme: report.py ReportView.key).
CacheKey = tuple[int, str, str]


class ReportCache:
    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.size = 0
        self.hits = 0
        self.misses = 0
        self._items: OrderedDict[CacheKey, str] = OrderedDict()

    def get(self, key: CacheKey) -> str | None:
        html = self._items.get(key)
        if html is None:
            self.misses += 1
            return None
        self.hits += 1
        self._items.move_to_end(key)
        return html

    def put(self, key: CacheKey, html: str) -> None:
        cost = len(html)
        if cost > self.max_bytes:
            return  # larger than the whole budget: it would only push everything else out
        # An older version of the same snapshot is of no use any more; its other views still are.
        for old in [k for k in self._items if k[0] == key[0] and k[1] != key[1] or k == key]:
            self.size -= len(self._items.pop(old))
        self._items[key] = html
        self.size += cost
        while self.size > self.max_bytes:
            _, evicted = self._items.popitem(last=False)
            self.size -= len(evicted)

    def drop(self, snapshot_id: int) -> None:
        """Forget every version of a snapshot (updated, deleted or evicted by retention)."""
        for key in [k for k in self._items if k[0] == snapshot_id]:
            self.size -= len(self._items.pop(key))

    def __len__(self) -> int:
        return len(self._items)
