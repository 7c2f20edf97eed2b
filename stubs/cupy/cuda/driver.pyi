# ``cupy.cuda.driver`` (``cupy_backends.cuda.api.driver``): the subset tile_lang uses (see ../__init__.pyi).

class CUDADriverError(RuntimeError):
    """A CUDA driver call failed (e.g. cuModuleLoadData on a corrupt cubin)."""

CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: int

def funcSetAttribute(f: int, attribute: int, value: int) -> None: ...  # cuFuncSetAttribute on a Function's ptr
