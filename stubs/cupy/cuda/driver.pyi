# ``cupy.cuda.driver`` (``cupy_backends.cuda.api.driver``): the subset tile_lang uses (see ../__init__.pyi).

class CUDADriverError(RuntimeError):
    """A CUDA driver call failed (e.g. cuModuleLoadData on a corrupt cubin)."""

CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: int

def funcSetAttribute(f: int, attribute: int, value: int) -> None: ...  # cuFuncSetAttribute on a Function's ptr
def launchKernel(f: int, grid_dim_x: int, grid_dim_y: int, grid_dim_z: int, block_dim_x: int, block_dim_y: int,
                 block_dim_z: int, shared_mem_bytes: int, stream: int, kernel_params: int,
                 extra: int) -> None: ...  # cuLaunchKernel: kernel_params the address of an array of argument addresses
