"""Poolscope: live observability for the MySQL / MariaDB thread pool."""

# The one place the version is written: pyproject.toml reads it (setuptools dynamic version),
# and `poolscope --version`, /api/health, /healthz, /metrics and snapshots show it.
__version__ = "0.1.0"
