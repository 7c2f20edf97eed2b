"""A subpackage, walked by ``tile-lang check tests.check_cases``."""
