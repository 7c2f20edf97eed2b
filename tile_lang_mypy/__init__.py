"""tile_lang's mypy plugin (:mod:`tile_lang_mypy.plugin`), enabled with ``plugins = ["tile_lang_mypy"]``.

A package of its own, apart from ``tile_lang``: mypy imports a plugin when it starts, and importing
anything under ``tile_lang`` runs ``tile_lang/__init__.py`` (NumPy, ml_dtypes, the registry), which
cost more than mypy's whole check of a warm kernel file.
"""

from tile_lang_mypy.plugin import plugin

__all__ = ["plugin"]
