"""The kernel's dynamic shared memory: blocks reserved first-fit among the ones still live, and
released when nothing reads them any more (a staged block after its last reader, what a loop
or a branch reserved after it), so that kernels made of phases (attention's backward: four
loops one after another, each with the blocks it stages) need their largest phase, not the sum.
A released block's bytes are handed out again behind a barrier: a thread may still be reading
them when another starts writing."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SharedMemory:
    base: int  # bytes below are the reductions' fixed scratch
    live: dict[int, int] = field(default_factory=dict)  # offset -> end of each reserved block
    peak: int = 0  # the kernel's dynamic shared memory: the most in use at once
    unfenced: list[tuple[int, int]] = field(default_factory=list)  # released since the last barrier it needs

    def __post_init__(self) -> None:
        self.peak = self.base

    def reserve(self, nbytes: int, align: int) -> tuple[int, bool]:
        """The offset of ``nbytes`` (rounded up to 16) aligned to ``align``, first fit; and whether
        a barrier must come first (it reuses bytes released since the last one)."""
        size = (nbytes + 15) // 16 * 16
        offset = _aligned(self.base, align)
        for start, end in sorted(self.live.items()):
            if offset + size <= start:
                break
            offset = max(offset, _aligned(end, align))
        self.live[offset] = offset + size
        self.peak = max(self.peak, offset + size)
        fence = any(offset < end and start < offset + size for start, end in self.unfenced)
        if fence:
            self.unfenced.clear()
        return offset, fence

    def release(self, offset: int) -> None:
        self.unfenced.append((offset, self.live.pop(offset)))

    def mark(self) -> frozenset[int]:
        """The blocks live now, to release what is reserved after (:meth:`release_since`)."""
        return frozenset(self.live)

    def release_since(self, mark: frozenset[int]) -> None:
        for offset in [o for o in self.live if o not in mark]:
            self.release(offset)


def _aligned(offset: int, align: int) -> int:
    return (offset + align - 1) // align * align
