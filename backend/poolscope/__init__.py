"""Poolscope: live observability for the MySQL / MariaDB thread pool."""

__version__ = "0.1.0"
