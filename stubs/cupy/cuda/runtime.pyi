# ``cupy.cuda.runtime`` (``cupy_backends.cuda.api.runtime``, thin CUDA runtime API wrappers): the
# subset tile_lang uses (see ../__init__.pyi). Every call raises CUDARuntimeError on a CUDA error.

from typing import Any

is_hip: bool

class CUDARuntimeError(RuntimeError):
    status: int
    def __init__(self, status: int) -> None: ...

# cudaDeviceAttr values, for deviceGetAttribute (Device.attributes has them all by name).
cudaDevAttrMaxThreadsPerBlock: int
cudaDevAttrWarpSize: int
cudaDevAttrMultiProcessorCount: int
cudaDevAttrL2CacheSize: int
cudaDevAttrMaxSharedMemoryPerBlockOptin: int

def driverGetVersion() -> int: ...  # e.g. 12080 for CUDA 12.8
def runtimeGetVersion() -> int: ...
def getDeviceCount() -> int: ...
def getDevice() -> int: ...
def setDevice(device: int) -> None: ...
def deviceSynchronize() -> None: ...
def deviceGetAttribute(attrib: int, device: int) -> int: ...
def getDeviceProperties(device: int) -> dict[str, Any]: ...  # cudaDeviceProp fields; "name" is bytes
def memGetInfo() -> tuple[int, int]: ...  # (free, total) bytes on the current device
def streamSynchronize(stream: int) -> None: ...
