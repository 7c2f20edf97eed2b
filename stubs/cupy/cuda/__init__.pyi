# ``cupy.cuda``: the subset tile_lang uses (see ../__init__.pyi).

from cupy.cuda import _nvrtc as nvrtc
from cupy.cuda import device as device
from cupy.cuda import driver as driver
from cupy.cuda import function as function
from cupy.cuda import memory as memory
from cupy.cuda import runtime as runtime
from cupy.cuda import stream as stream
from cupy.cuda.device import Device as Device
from cupy.cuda.device import get_device_id as get_device_id
from cupy.cuda.function import Function as Function
from cupy.cuda.function import Module as Module
from cupy.cuda.memory import BaseMemory as BaseMemory
from cupy.cuda.memory import Memory as Memory
from cupy.cuda.memory import MemoryPointer as MemoryPointer
from cupy.cuda.memory import UnownedMemory as UnownedMemory
from cupy.cuda.memory import alloc as alloc
from cupy.cuda.stream import Event as Event
from cupy.cuda.stream import ExternalStream as ExternalStream
from cupy.cuda.stream import Stream as Stream
from cupy.cuda.stream import get_current_stream as get_current_stream
from cupy.cuda.stream import get_elapsed_time as get_elapsed_time

def get_cuda_path() -> str | None: ...  # the CUDA toolkit folder CuPy found, or None
def get_nvcc_path() -> str | None: ...
def is_available() -> bool: ...  # a usable CUDA device exists (never raises)
