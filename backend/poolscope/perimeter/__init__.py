"""The HTTP perimeter: the Host allow-list, the body limit, and how `poolscope serve` binds (proxies, exposure)."""
