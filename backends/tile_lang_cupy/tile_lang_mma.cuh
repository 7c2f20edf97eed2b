// tile_lang tensor-core helpers (mma.sync, sm_80 and later): the accumulator fragment layout
// (tile_lang.compiler.ir.Mma) and the warp-level product of two operand tiles held in shared
// memory. Included by tile_lang.cuh when a kernel has a dot on tensor cores (TL_USE_MMA).
// Under the CPU emulator of generated code (TL_EMULATOR) the two warp instructions are
// computed by tl_emu from their PTX definitions, so the layouts are tested without a GPU.
#pragma once

namespace tl {

// Row-major index of accumulator register k of thread tid: warps tile the block WM x WN, each
// warp holds TM x TN tiles of 16x8, a thread 4 elements of each (rows lane/4 and +8, columns
// 2*(lane%4) and +1). N is the block's column count. IL (interleaved, wgmma's): a warp's row
// tiles are 16*WM rows apart instead of adjacent.
template <unsigned WM, unsigned WN, unsigned TM, unsigned TN, bool IL = false>
__device__ __forceinline__ unsigned mma_frag_row(unsigned k, unsigned tid) {
  const unsigned lane = tid & 31u, warp = (tid >> 5) % (WM * WN), mi = (k >> 2) / TN;
  return (IL ? (mi * WM + warp % WM) * 16u : (warp % WM) * (TM * 16u) + mi * 16u) + (lane >> 2) + 8u * ((k & 3u) >> 1);
}
template <unsigned WM, unsigned WN, unsigned TN>
__device__ __forceinline__ unsigned mma_frag_col(unsigned k, unsigned tid) {
  const unsigned lane = tid & 31u, warp = (tid >> 5) % (WM * WN), ni = (k >> 2) % TN;
  return (warp / WM) * (TN * 8u) + ni * 8u + 2u * (lane & 3u) + (k & 1u);
}
template <unsigned N, unsigned WM, unsigned WN, unsigned TM, unsigned TN, bool IL = false>
__device__ __forceinline__ unsigned mma_flat(unsigned k, unsigned tid) {
  return mma_frag_row<WM, WN, TM, TN, IL>(k, tid) * N + mma_frag_col<WM, WN, TN>(k, tid);
}

// The row of register k of a row value (one value per row of an mma block: rows lane/4 and
// +8 of each of the warp's TM row tiles), and which such register holds the row of fragment
// register k of a block with TN column tiles per warp.
template <unsigned WM, unsigned WN, unsigned TM, bool IL = false>
__device__ __forceinline__ unsigned mma_row(unsigned k, unsigned tid) {
  const unsigned lane = tid & 31u, warp = (tid >> 5) % (WM * WN);
  return (IL ? ((k >> 1) * WM + warp % WM) * 16u : (warp % WM) * (TM * 16u) + (k >> 1) * 16u) + (lane >> 2) +
         8u * (k & 1u);
}
template <unsigned TN>
__device__ __forceinline__ unsigned mma_row_of(unsigned k) {
  return (k >> 2) / TN * 2u + ((k & 3u) >> 1);
}

// Combine v over the four lanes of a quad (the lanes holding one row of a fragment).
template <class T, class F>
__device__ __forceinline__ T quad_reduce(T v, F f) {
  v = f(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return f(v, __shfl_xor_sync(0xffffffffu, v, 2));
}

template <class A, class B>
struct Same {
  static constexpr bool value = false;
};
template <class A>
struct Same<A, A> {
  static constexpr bool value = true;
};

// K of one instruction per operand type: m16n8k16 for 16-bit floats, m16n8k8 for tf32,
// m16n8k32 for int8 and fp8: always 16 bytes of K per half of a fragment.
template <class T>
struct MmaK {
  static constexpr unsigned value = 16;
};
template <>
struct MmaK<float> {
  static constexpr unsigned value = 8;
};
template <>
struct MmaK<signed char> {
  static constexpr unsigned value = 32;
};
#if defined(TL_USE_FP8)
// fp8 (sm_89 on): m16n8k32 with f32 accumulators, the fragments of int8's
template <>
struct MmaK<__nv_fp8_e4m3> {
  static constexpr unsigned value = 32;
};
template <>
struct MmaK<__nv_fp8_e5m2> {
  static constexpr unsigned value = 32;
};
#endif

// N 8x8 matrices of 16-bit elements from shared memory, each lane giving one row's address
// (lanes 8i..8i+7 the rows of matrix i); TRANS delivers them transposed.
template <unsigned N, bool TRANS>
__device__ __forceinline__ void ldmatrix(unsigned* r, const void* p) {
#if defined(TL_EMULATOR)
  tl_emu::ldmatrix<N, TRANS>(r, p);
#else
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(p));
  if constexpr (N == 4 && !TRANS) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
  } else if constexpr (N == 4) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
  } else if constexpr (TRANS) {
    static_assert(N == 2, "ldmatrix: x4 or x2");
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
                 : "=r"(r[0]), "=r"(r[1]) : "r"(a));
  } else {
    static_assert(N == 2, "ldmatrix: x4 or x2");
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(a));
  }
#endif
}

// d += a * b for one 16x8 tile: a, b and d in the PTX fragment layouts of mma.sync (d: f32, or
// s32 for int8 operands, whose products wrap around as the instruction's do; fp8 ones, sm_89 on,
// take int8's fragments with f32 sums).
template <class T, class D>
__device__ __forceinline__ void mma(D* d, const unsigned* a, const unsigned* b) {
#if defined(TL_EMULATOR)
  tl_emu::mma<T>(d, a, b);
#else
  if constexpr (Same<T, signed char>::value) {
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#if defined(TL_USE_FP8)
  } else if constexpr (Same<T, __nv_fp8_e4m3>::value) {
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else if constexpr (Same<T, __nv_fp8_e5m2>::value) {
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
  } else if constexpr (MmaK<T>::value == 8) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#if defined(TL_USE_BF16)
  } else if constexpr (sizeof(T) == 2 && Same<T, __nv_bfloat16>::value) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
  } else {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
#endif
}

// B fragments of TN column tiles for the K step at kk, from B stored row-major [K][LDB] or,
// with BT, column by column [N][LDB]. 16-bit operands go through ldmatrix (.trans for
// row-major B; two tiles per x4), as int8 ones stored column by column do (a row of 16 bytes
// is 16 K); tf32 ones element by element (b0 = B[kk + lane%4][n], b1 = B[kk + 4 + lane%4][n],
// n = lane/4 in the tile), and row-major int8 ones byte by byte (ldmatrix.trans moves 16-bit
// elements only): b0 = B[kk + 4(lane%4) + j][n], j = 0..3 from the low byte up, b1 16 K on.
template <class T, unsigned TN, unsigned LDB, bool BT>
__device__ __forceinline__ void mma_load_b(unsigned (*b)[2], const T* sb, unsigned kk, unsigned col0,
                                           unsigned lane) {
  if constexpr (MmaK<T>::value == 8) {
#pragma unroll
    for (unsigned ni = 0; ni < TN; ++ni) {
      const unsigned n = col0 + ni * 8u + (lane >> 2), k = kk + (lane & 3u);
      b[ni][0] = bitcast<unsigned>(BT ? sb[n * LDB + k] : sb[k * LDB + n]);
      b[ni][1] = bitcast<unsigned>(BT ? sb[n * LDB + k + 4u] : sb[(k + 4u) * LDB + n]);
    }
  } else if constexpr (BT) {
    // rows are columns n of B, k contiguous: plain ldmatrix gives (n = lane/4, the 4 bytes at
    // 4(lane%4) of the row's 16), the second matrix of a tile 16 bytes of K on
    constexpr unsigned HALF = 16u / sizeof(T);
#pragma unroll
    for (unsigned ni = 0; ni + 1 < TN; ni += 2) {
      unsigned r[4];
      ldmatrix<4, false>(r, sb + (col0 + (ni + (lane >> 4)) * 8u + (lane & 7u)) * LDB + kk + ((lane >> 3) & 1u) * HALF);
      b[ni][0] = r[0];
      b[ni][1] = r[1];
      b[ni + 1][0] = r[2];
      b[ni + 1][1] = r[3];
    }
    if constexpr (TN % 2 == 1) {
      ldmatrix<2, false>(b[TN - 1], sb + (col0 + (TN - 1) * 8u + (lane & 7u)) * LDB + kk + ((lane >> 3) & 1u) * HALF);
    }
  } else if constexpr (sizeof(T) == 1) {
    // The four rows a load reads (lane%4 picks them) fall in distinct banks when rows are an odd
    // number of 16-byte units long and lanes 2 and 3 of each quad read theirs two rows on (rows
    // 4c+2, +3, then 4c, +1): their bytes come out with the halves swapped, put back by one prmt.
    const unsigned swap = lane & 2u, order = 0x3210u ^ (swap * 0x1111u);
#pragma unroll
    for (unsigned ni = 0; ni < TN; ++ni) {
#pragma unroll
      for (unsigned h = 0; h < 2; ++h) {
        const unsigned char* p = reinterpret_cast<const unsigned char*>(sb) + (kk + 16u * h + 4u * (lane & 3u)) * LDB +
                                 col0 + ni * 8u + (lane >> 2);
        const unsigned char* lo = p + swap * LDB;
        const unsigned char* hi = p + (2u - swap) * LDB;
        const unsigned w = static_cast<unsigned>(lo[0]) | (static_cast<unsigned>(lo[LDB]) << 8) |
                           (static_cast<unsigned>(hi[0]) << 16) | (static_cast<unsigned>(hi[LDB]) << 24);
        b[ni][h] = __byte_perm(w, 0u, order);
      }
    }
  } else {
#pragma unroll
    for (unsigned ni = 0; ni + 1 < TN; ni += 2) {
      unsigned r[4];
      ldmatrix<4, true>(r, sb + (kk + (lane & 15u)) * LDB + col0 + (ni + (lane >> 4)) * 8u);
      b[ni][0] = r[0];
      b[ni][1] = r[1];
      b[ni + 1][0] = r[2];
      b[ni + 1][1] = r[3];
    }
    if constexpr (TN % 2 == 1) {
      ldmatrix<2, true>(b[TN - 1], sb + (kk + (lane & 15u)) * LDB + col0 + (TN - 1) * 8u);
    }
  }
}

// acc (this thread's fragments, layout mma_flat; f32, or s32 for int8) += A[M x K] * B[K x N], A
// row-major in shared memory and B row-major or (BT) column by column, with row strides LDA and
// LDB (padded so each fragment load is conflict-free).
template <class T, unsigned WM, unsigned WN, unsigned TM, unsigned TN, unsigned K, unsigned LDA, unsigned LDB,
          bool BT, class D>
__device__ __forceinline__ void mma_block(D* acc, const T* sa, const T* sb, unsigned tid) {
  constexpr unsigned KS = MmaK<T>::value;
  const unsigned lane = tid & 31u, warp = (tid >> 5) % (WM * WN);
  const unsigned row0 = (warp % WM) * (TM * 16u), col0 = (warp / WM) * (TN * 8u);
#pragma unroll
  for (unsigned kk = 0; kk < K; kk += KS) {
    unsigned a[TM][4];
    unsigned b[TN][2];
#pragma unroll
    for (unsigned mi = 0; mi < TM; ++mi) {
      ldmatrix<4, false>(a[mi], sa + (row0 + mi * 16u + (lane & 15u)) * LDA + kk + (lane >> 4) * (KS / 2u));
    }
    mma_load_b<T, TN, LDB, BT>(b, sb, kk, col0, lane);
#pragma unroll
    for (unsigned mi = 0; mi < TM; ++mi) {
#pragma unroll
      for (unsigned ni = 0; ni < TN; ++ni) mma<T>(acc + (mi * TN + ni) * 4u, a[mi], b[ni]);
    }
  }
}

// Two 16-bit values as one register, the first in the low half (a wgmma A fragment register).
#if defined(TL_USE_FP16)
__device__ __forceinline__ unsigned pack2(__half lo, __half hi) {
  return static_cast<unsigned>(__half_as_ushort(lo)) | (static_cast<unsigned>(__half_as_ushort(hi)) << 16);
}
#endif
#if defined(TL_USE_BF16)
__device__ __forceinline__ unsigned pack2(__nv_bfloat16 lo, __nv_bfloat16 hi) {
  return static_cast<unsigned>(__bfloat16_as_ushort(lo)) | (static_cast<unsigned>(__bfloat16_as_ushort(hi)) << 16);
}
#endif

// Hopper's warpgroup MMA (sm_90a): a shared-memory matrix descriptor (start address, leading and
// stride byte offsets, the swizzle of 128-, 64- or 32-byte rows: layout types 1, 2, 3), and the
// fences around a group of wgmma instructions.
// Under the emulator a wgmma runs at once (tl_emu::wgmma), so the fences and waits are empty.
__device__ __forceinline__ unsigned long long wgmma_desc(const void* p, unsigned lbo, unsigned sbo, unsigned swizzle) {
#if defined(TL_EMULATOR)
  const unsigned a = static_cast<unsigned>(static_cast<const unsigned char*>(p) - tl_smem);
#else
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(p));
#endif
  return static_cast<unsigned long long>((a & 0x3FFFFu) >> 4) | (static_cast<unsigned long long>(lbo >> 4) << 16) |
         (static_cast<unsigned long long>(sbo >> 4) << 32) |
         (static_cast<unsigned long long>(swizzle == 128u ? 1u : swizzle == 64u ? 2u : 3u) << 62);
}
// This thread's warpgroup (128 threads). Read back from lane 0 with a shuffle, which ptxas knows
// is the same for the whole warp: descriptor arithmetic on it then stays in uniform registers
// (no R2UR before every wgmma), as Triton does with its warp id.
__device__ __forceinline__ unsigned warpgroup(unsigned tid) {
#if defined(TL_EMULATOR)
  return tid >> 7;
#else
  return __shfl_sync(0xffffffffu, tid >> 7, 0);
#endif
}
#if defined(TL_EMULATOR)
__device__ __forceinline__ void fence_proxy_async() {}
__device__ __forceinline__ void wgmma_fence() {}
template <int N>
__device__ __forceinline__ void wgmma_wait() {}
template <int N>
__device__ __forceinline__ void wgmma_commit_and_wait() {}
template <int N>
__device__ __forceinline__ void fence_registers(float*) {}
#else
// Shared memory written by this thread (stores, cp.async) becomes visible to the tensor cores.
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
// Close the group of wgmma issued so far; wait until at most N groups are still running.
template <int N>
__device__ __forceinline__ void wgmma_commit_and_wait() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  wgmma_wait<N>();
}
// Keep the compiler from moving reads of registers an in-flight wgmma writes above its wait.
template <int N>
__device__ __forceinline__ void fence_registers(float* r) {
#pragma unroll
  for (int k = 0; k < N; ++k) asm volatile("" : "+f"(r[k])::"memory");
}
#endif

// Asynchronous copy of BYTES (4, 8 or 16) from global to shared memory; a false predicate
// zero-fills the destination without reading the source (masked elements of a dot operand).
template <int BYTES>
__device__ __forceinline__ void cp_async(void* dst, const void* src, bool pred) {
#if defined(TL_EMULATOR)
  if (pred) {
    check_aligned<BYTES>(src);
    check_aligned<BYTES>(dst);
    std::memcpy(dst, src, BYTES);
  } else {
    std::memset(dst, 0, BYTES);
  }
#else
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  const int n = pred ? BYTES : 0;
  if constexpr (BYTES == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d), "l"(src), "r"(n) : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" ::"r"(d), "l"(src), "n"(BYTES), "r"(n) : "memory");
  }
#endif
}

// Close the group of copies issued so far; wait until at most N groups are still in flight.
__device__ __forceinline__ void cp_async_commit() {
#if !defined(TL_EMULATOR)
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if !defined(TL_EMULATOR)
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
#endif
}

}  // namespace tl
