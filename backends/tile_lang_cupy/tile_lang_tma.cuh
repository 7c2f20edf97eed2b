// tile_lang bulk tensor copies (Hopper's TMA, sm_90): a 2-D box of global memory lands in
// shared memory in one instruction, 128-byte swizzled (the layout wgmma reads), completing on an
// mbarrier. Tensor maps are built on the device (the descriptor's base, shape and strides are
// kernel values) into a 128-byte global slot per map and program that the launch provides.
// Included by tile_lang.cuh when a kernel copies with TMA (TL_USE_TMA). Under the CPU emulator
// (TL_EMULATOR) a map is a plain struct, a copy runs at once and an mbarrier counts bytes.
#pragma once

namespace tl {

#if defined(TL_EMULATOR)
struct EmuTensorMap {  // what the emulator keeps of a 2-D tensor map
  const unsigned char* base;
  unsigned long long dim0, dim1, stride1;  // elements, elements, bytes
  unsigned box0, box1, itemsize;
};
#else
__device__ __forceinline__ unsigned smem_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
#endif

// Build the map of a row-major 2-D tensor (dim0 contiguous elements of ITEMSIZE bytes, dim1
// rows stride1 bytes apart) read in boxes of box0 x box1 with the 128-byte swizzle, zero-filled
// outside the tensor, into the 128-byte global slot ``map``, through 128 bytes of shared memory
// ``stage``. One warp calls it (lane: its lane); then a barrier, and the thread that copies
// through the map calls tensormap_acquire before its first copy.
template <unsigned ITEMSIZE>
__device__ __forceinline__ void tensormap_2d(unsigned char* stage, void* map, const void* base,
                                             unsigned long long dim0, unsigned long long dim1,
                                             unsigned long long stride1, unsigned box0, unsigned box1,
                                             unsigned lane) {
#if defined(TL_EMULATOR)
  (void)stage;
  if (lane == 0) {
    const EmuTensorMap m{static_cast<const unsigned char*>(base), dim0, dim1, stride1, box0, box1, ITEMSIZE};
    std::memcpy(map, &m, sizeof m);
  }
#else
  constexpr unsigned type = ITEMSIZE == 1 ? 0u : ITEMSIZE == 2 ? 1u : 2u;  // CU_TENSOR_MAP_DATA_TYPE_UINT8/16/32
  const unsigned s = smem_address(stage);
  reinterpret_cast<unsigned*>(stage)[lane] = 0u;
  __syncwarp();
  if (lane == 0) {
    const unsigned d0 = static_cast<unsigned>(dim0), d1 = static_cast<unsigned>(dim1);
    asm volatile("tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%0], %1;" ::"r"(s), "l"(base) : "memory");
    asm volatile("tensormap.replace.tile.rank.shared::cta.b1024.b32 [%0], 1;" ::"r"(s) : "memory");
    asm volatile("tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], 0, %1;" ::"r"(s), "r"(box0) : "memory");
    asm volatile("tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], 1, %1;" ::"r"(s), "r"(box1) : "memory");
    asm volatile("tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 0, %1;" ::"r"(s), "r"(d0) : "memory");
    asm volatile("tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 1, %1;" ::"r"(s), "r"(d1) : "memory");
    asm volatile("tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%0], 0, %1;" ::"r"(s), "l"(stride1)
                 : "memory");
    asm volatile("tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%0], 0, 1;" ::"r"(s) : "memory");
    asm volatile("tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%0], 1, 1;" ::"r"(s) : "memory");
    asm volatile("tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [%0], %1;" ::"r"(s), "n"(type) : "memory");
    asm volatile("tensormap.replace.tile.interleave_layout.shared::cta.b1024.b32 [%0], 0;" ::"r"(s) : "memory");
    asm volatile("tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [%0], 3;" ::"r"(s) : "memory");
    asm volatile("tensormap.replace.tile.fill_mode.shared::cta.b1024.b32 [%0], 0;" ::"r"(s) : "memory");
  }
  __syncwarp();
  asm volatile(
      "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%0], [%1], 128;" ::"l"(
          map),
      "r"(s)
      : "memory");
#endif
}
__device__ __forceinline__ void tensormap_acquire(const void* map) {
#if defined(TL_EMULATOR)
  (void)map;
#else
  asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" ::"l"(map) : "memory");
#endif
}

// mbarriers (8 bytes of shared memory each): one arrival (the issuing thread's, announcing the
// bytes its copies will deliver) and the bytes themselves complete a phase; waiters spin on
// the parity of the phase they expect.
__device__ __forceinline__ void mbar_init(unsigned long long* bar) {
#if defined(TL_EMULATOR)
  *bar = 0ull;
#else
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_address(bar)) : "memory");
#endif
}
__device__ __forceinline__ void mbar_inval(unsigned long long* bar) {
#if defined(TL_EMULATOR)
  (void)bar;
#else
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(smem_address(bar)) : "memory");
#endif
}
__device__ __forceinline__ void mbar_expect(unsigned long long* bar, unsigned bytes) {
#if defined(TL_EMULATOR)
  __atomic_store_n(reinterpret_cast<unsigned*>(bar), bytes, __ATOMIC_RELEASE);
#else
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_address(bar)), "r"(bytes)
               : "memory");
#endif
}
__device__ __forceinline__ void mbar_wait(unsigned long long* bar, unsigned parity) {
#if defined(TL_EMULATOR)
  while ((__atomic_load_n(reinterpret_cast<unsigned*>(bar) + 1, __ATOMIC_ACQUIRE) & 1u) == parity) {
    std::this_thread::yield();
  }
#else
  asm volatile(
      "{\n .reg .pred done;\n wait:\n mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n @!done bra wait;\n}" ::"r"(
          smem_address(bar)),
      "r"(parity)
      : "memory");
#endif
}

// Copy the box at element coordinates (c0, c1) (c0 along the contiguous dim) of ``map``'s
// tensor to ``dst`` (1024-byte aligned), completing ``box0 * box1 * itemsize`` bytes on ``bar``.
__device__ __forceinline__ void tma_load_2d(void* dst, const void* map, int c0, int c1, unsigned long long* bar) {
#if defined(TL_EMULATOR)
  EmuTensorMap m;
  std::memcpy(&m, map, sizeof m);
  const unsigned row_bytes = m.box0 * m.itemsize, at = static_cast<unsigned>(static_cast<unsigned char*>(dst) - tl_smem);
  for (unsigned r = 0; r < m.box1; ++r) {
    for (unsigned c = 0; c < m.box0; ++c) {
      const long long g0 = static_cast<long long>(c0) + c, g1 = static_cast<long long>(c1) + r;
      const unsigned a = at + r * row_bytes + c * m.itemsize, swizzled = a ^ (((a >> 7) & 7u) << 4);
      const bool inside = g0 >= 0 && g1 >= 0 && g0 < static_cast<long long>(m.dim0) &&
                          g1 < static_cast<long long>(m.dim1);
      if (inside) {
        std::memcpy(tl_smem + swizzled, m.base + g1 * m.stride1 + g0 * m.itemsize, m.itemsize);
      } else {
        std::memset(tl_smem + swizzled, 0, m.itemsize);
      }
    }
  }
  unsigned* words = reinterpret_cast<unsigned*>(bar);
  if (__atomic_sub_fetch(words, row_bytes * m.box1, __ATOMIC_ACQ_REL) == 0u) {
    __atomic_add_fetch(words + 1, 1u, __ATOMIC_RELEASE);  // the phase completes
  }
#else
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
          smem_address(dst)),
      "l"(map), "r"(c0), "r"(c1), "r"(smem_address(bar))
      : "memory");
#endif
}

}  // namespace tl
