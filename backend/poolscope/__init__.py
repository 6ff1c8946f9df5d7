"""Poolscope: live observability for the MySQL / MariaDB thread pool."""
