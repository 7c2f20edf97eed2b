"""Modules for ``tile-lang check`` (tests/test_check.py): a clean one, a faulty one, a nested package."""
