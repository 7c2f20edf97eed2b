"""tile_lang ports of the teenygrad kernels book."""
