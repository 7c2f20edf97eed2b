// tile_lang CUDA runtime header: the helpers generated kernels call, so the generated code
// stays a thin, readable transcription of the IR. Included by every kernel the compiler emits.
#pragma once
#if defined(TL_USE_FP16)
#include <cuda_fp16.h>
#endif
#if defined(TL_USE_BF16)
#include <cuda_bf16.h>
#endif
#if defined(TL_USE_FP8)
#include <cuda_fp8.h>
#endif
#if !defined(TL_EMULATOR)
// libdevice's approximate reciprocal from a double's high word (libdevice.rcp64h), which no CUDA
// header declares; nvcc and NVRTC link libdevice, which defines it
extern "C" __device__ double __nv_rcp64h(double);
#endif

namespace tl {

// ---------------------------------------------------------------- layouts
// Element k of a thread in a blocked layout: V consecutive elements per thread, TU threads.
template <unsigned TU, unsigned V>
__device__ __forceinline__ unsigned flat(unsigned k, unsigned tid) {
  return (k / V) * (TU * V) + (tid % TU) * V + (k % V);
}

// 2 ** x as Triton computes it for f32 (ex2.approx.ftz: about 2 ulp, subnormals flushed to 0).
__device__ __forceinline__ float exp2_approx(float x) {
#if defined(TL_EMULATOR)
  return tl_emu::ex2(x, true);
#else
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#endif
}

// e ** x as Triton computes it for f32: 2 ** (x * log2 e) by ex2.approx (about 2 ulp, plus the
// product's rounding; subnormal results kept).
__device__ __forceinline__ float exp_approx(float x) {
#if defined(TL_EMULATOR)
  return tl_emu::ex2(x * 1.4426950408889634f, false);
#else
  float y;
  asm("ex2.approx.f32 %0, %1;" : "=f"(y) : "f"(x * 1.4426950408889634f));
  return y;
#endif
}

// a / b as Triton computes it for f32: div.full (at most 2 ulp over the full range).
__device__ __forceinline__ float div_full(float a, float b) {
#if defined(TL_EMULATOR)
  return tl_emu::div_full(a, b);
#else
  float q;
  asm("div.full.f32 %0, %1, %2;" : "=f"(q) : "f"(a), "f"(b));
  return q;
#endif
}

// ---------------------------------------------------------------- conversions
template <class To, class From>
struct Convert {
  __device__ static To run(From x) { return static_cast<To>(x); }
};
template <class From>
struct Convert<bool, From> {
  __device__ static bool run(From x) { return x != From(0); }
};
template <>
struct Convert<bool, bool> {
  __device__ static bool run(bool x) { return x; }
};
// Float -> integer: truncate toward zero, saturate to the target's range, NaN gives 0, as the
// reference does. static_cast is undefined out of range: nvcc makes an 8- or 16-bit target's
// cast a cvt.rzi.s32/u32 whose low bits wrap (300.7 -> i8 gave 44), and x86 gives INT_MIN. The
// intrinsics saturate, but only f32 -> 32 bits turns NaN into 0: on the H100 f32 -> 64 bits and
// f64 -> anything give the sign bit alone (INT64_MIN, INT_MIN, 0x80000000), hence the test.
#define TL_FLOAT_TO_INT(To, From, via, wide, clamped) \
  template <>                                          \
  struct Convert<To, From> {                           \
    __device__ static To run(From x) {                 \
      const wide v = x != x ? static_cast<wide>(0) : via(x); \
      return static_cast<To>(clamped);                 \
    }                                                  \
  };
TL_FLOAT_TO_INT(signed char, float, __float2int_rz, int, v < -128 ? -128 : v > 127 ? 127 : v)
TL_FLOAT_TO_INT(short, float, __float2int_rz, int, v < -32768 ? -32768 : v > 32767 ? 32767 : v)
TL_FLOAT_TO_INT(unsigned char, float, __float2uint_rz, unsigned, v > 255u ? 255u : v)
TL_FLOAT_TO_INT(unsigned short, float, __float2uint_rz, unsigned, v > 65535u ? 65535u : v)
TL_FLOAT_TO_INT(signed char, double, __double2int_rz, int, v < -128 ? -128 : v > 127 ? 127 : v)
TL_FLOAT_TO_INT(short, double, __double2int_rz, int, v < -32768 ? -32768 : v > 32767 ? 32767 : v)
TL_FLOAT_TO_INT(unsigned char, double, __double2uint_rz, unsigned, v > 255u ? 255u : v)
TL_FLOAT_TO_INT(unsigned short, double, __double2uint_rz, unsigned, v > 65535u ? 65535u : v)
#undef TL_FLOAT_TO_INT
#define TL_FLOAT_TO_INT(To, From, via) \
  template <>                          \
  struct Convert<To, From> {           \
    __device__ static To run(From x) { return x != x ? static_cast<To>(0) : via(x); } \
  };
TL_FLOAT_TO_INT(int, float, __float2int_rz)
TL_FLOAT_TO_INT(unsigned, float, __float2uint_rz)
TL_FLOAT_TO_INT(long long, float, __float2ll_rz)
TL_FLOAT_TO_INT(unsigned long long, float, __float2ull_rz)
TL_FLOAT_TO_INT(int, double, __double2int_rz)
TL_FLOAT_TO_INT(unsigned, double, __double2uint_rz)
TL_FLOAT_TO_INT(long long, double, __double2ll_rz)
TL_FLOAT_TO_INT(unsigned long long, double, __double2ull_rz)
#undef TL_FLOAT_TO_INT
#if defined(TL_USE_FP16)
template <class To>
struct Convert<To, __half> {
  __device__ static To run(__half x) { return Convert<To, float>::run(__half2float(x)); }
};
template <class From>
struct Convert<__half, From> {
  __device__ static __half run(From x) { return __float2half_rn(static_cast<float>(x)); }
};
template <>
struct Convert<__half, double> {
  __device__ static __half run(double x) { return __double2half(x); }
};
template <>
struct Convert<__half, __half> {
  __device__ static __half run(__half x) { return x; }
};
template <>
struct Convert<bool, __half> {
  __device__ static bool run(__half x) { return __half2float(x) != 0.0f; }
};
#endif
#if defined(TL_USE_BF16)
template <class To>
struct Convert<To, __nv_bfloat16> {
  __device__ static To run(__nv_bfloat16 x) { return Convert<To, float>::run(__bfloat162float(x)); }
};
template <class From>
struct Convert<__nv_bfloat16, From> {
  __device__ static __nv_bfloat16 run(From x) { return __float2bfloat16_rn(static_cast<float>(x)); }
};
template <>
struct Convert<__nv_bfloat16, double> {
  __device__ static __nv_bfloat16 run(double x) { return __double2bfloat16(x); }
};
// An integer past float's 24 bits rounds once, as the reference does: toward zero to float, made
// odd where that was inexact (round to odd keeps the sticky bit: 24 >= 8 + 2 bits), then to
// nearest even. Through float to nearest it rounded twice (2**25 + 2**17 + 1 gave 2**25, not
// 2**25 + 2**18), and on the H200 so did cuda_bf16's __int2bfloat16_rn (18 of 32 i32 wrong).
#define TL_INT_TO_BF16(From, NAME)                                                                  \
  template <>                                                                                       \
  struct Convert<__nv_bfloat16, From> {                                                             \
    __device__ static __nv_bfloat16 run(From x) {                                                   \
      const float rz = __##NAME##_rz(x);                                                            \
      const bool inexact = __##NAME##_ru(x) != __##NAME##_rd(x);                                    \
      return __float2bfloat16_rn(inexact ? __uint_as_float(__float_as_uint(rz) | 1u) : rz);         \
    }                                                                                               \
  };
TL_INT_TO_BF16(int, int2float)
TL_INT_TO_BF16(unsigned, uint2float)
TL_INT_TO_BF16(long long, ll2float)
TL_INT_TO_BF16(unsigned long long, ull2float)
#undef TL_INT_TO_BF16
template <>
struct Convert<__nv_bfloat16, __nv_bfloat16> {
  __device__ static __nv_bfloat16 run(__nv_bfloat16 x) { return x; }
};
template <>
struct Convert<bool, __nv_bfloat16> {
  __device__ static bool run(__nv_bfloat16 x) { return __bfloat162float(x) != 0.0f; }
};
#endif
// A 16-bit float constant from its bits, which the compiler folds: tl::cvt<__half>(0.0f) is a cvt
// instruction in device code (cuda_fp16's conversions are inline PTX), a register for every use.
template <class T>
__device__ __forceinline__ T from_bits(unsigned short b);
#if defined(TL_USE_FP16)
template <>
__device__ __forceinline__ __half from_bits<__half>(unsigned short b) { return __half(__half_raw{b}); }
#endif
#if defined(TL_USE_BF16)
template <>
__device__ __forceinline__ __nv_bfloat16 from_bits<__nv_bfloat16>(unsigned short b) {
  return __nv_bfloat16(__nv_bfloat16_raw{b});
}
#endif
#if defined(TL_USE_FP16) && defined(TL_USE_BF16)
template <>
struct Convert<__half, __nv_bfloat16> {
  __device__ static __half run(__nv_bfloat16 x) { return __float2half_rn(__bfloat162float(x)); }
};
template <>
struct Convert<__nv_bfloat16, __half> {
  __device__ static __nv_bfloat16 run(__half x) { return __float2bfloat16_rn(__half2float(x)); }
};
#endif
#if defined(TL_USE_FP8)
template <class To>
struct Convert<To, __nv_fp8_e4m3> {
  __device__ static To run(__nv_fp8_e4m3 x) { return Convert<To, float>::run(static_cast<float>(x)); }
};
template <class To>
struct Convert<To, __nv_fp8_e5m2> {
  __device__ static To run(__nv_fp8_e5m2 x) { return Convert<To, float>::run(static_cast<float>(x)); }
};
template <class From>
struct Convert<__nv_fp8_e4m3, From> {
  __device__ static __nv_fp8_e4m3 run(From x) { return __nv_fp8_e4m3(static_cast<float>(x)); }
};
template <class From>
struct Convert<__nv_fp8_e5m2, From> {
  __device__ static __nv_fp8_e5m2 run(From x) { return __nv_fp8_e5m2(static_cast<float>(x)); }
};
// f64 rounds once, from its own bits (cuda_fp8's double constructor): through float it rounded
// twice (1 + 2**-4 + 2**-40 gave e4m3's 1, not 1.125).
template <>
struct Convert<__nv_fp8_e4m3, double> {
  __device__ static __nv_fp8_e4m3 run(double x) { return __nv_fp8_e4m3(x); }
};
template <>
struct Convert<__nv_fp8_e5m2, double> {
  __device__ static __nv_fp8_e5m2 run(double x) { return __nv_fp8_e5m2(x); }
};
// Pairs that two partial specialisations above both match (an fp8 with bool, half, bfloat16 or an
// fp8): through float, which holds every value of each narrow type exactly, so one rounding.
#define TL_CONVERT_VIA_FLOAT(To, From, make) \
  template <> \
  struct Convert<To, From> { \
    __device__ static To run(From x) { return make(static_cast<float>(x)); } \
  };
#define TL_FP8_CONVERTS(F8)                                  \
  TL_CONVERT_VIA_FLOAT(bool, F8, 0.0f !=)                   \
  TL_CONVERT_VIA_FLOAT(F8, F8, F8)
TL_FP8_CONVERTS(__nv_fp8_e4m3)
TL_FP8_CONVERTS(__nv_fp8_e5m2)
TL_CONVERT_VIA_FLOAT(__nv_fp8_e4m3, __nv_fp8_e5m2, __nv_fp8_e4m3)
TL_CONVERT_VIA_FLOAT(__nv_fp8_e5m2, __nv_fp8_e4m3, __nv_fp8_e5m2)
#if defined(TL_USE_FP16)
TL_CONVERT_VIA_FLOAT(__nv_fp8_e4m3, __half, __nv_fp8_e4m3)
TL_CONVERT_VIA_FLOAT(__nv_fp8_e5m2, __half, __nv_fp8_e5m2)
TL_CONVERT_VIA_FLOAT(__half, __nv_fp8_e4m3, __float2half_rn)
TL_CONVERT_VIA_FLOAT(__half, __nv_fp8_e5m2, __float2half_rn)
#endif
#if defined(TL_USE_BF16)
TL_CONVERT_VIA_FLOAT(__nv_fp8_e4m3, __nv_bfloat16, __nv_fp8_e4m3)
TL_CONVERT_VIA_FLOAT(__nv_fp8_e5m2, __nv_bfloat16, __nv_fp8_e5m2)
TL_CONVERT_VIA_FLOAT(__nv_bfloat16, __nv_fp8_e4m3, __float2bfloat16_rn)
TL_CONVERT_VIA_FLOAT(__nv_bfloat16, __nv_fp8_e5m2, __float2bfloat16_rn)
#endif
#undef TL_FP8_CONVERTS
#undef TL_CONVERT_VIA_FLOAT
#endif

// Value conversion: round to nearest even for floats, truncation for float -> int.
template <class To, class From>
__device__ __forceinline__ To cvt(From x) { return Convert<To, From>::run(x); }

// Float downcast rounding toward zero (fp_downcast_rounding="rtz").
template <class To>
__device__ __forceinline__ To cvt_rtz(float x);
template <>
__device__ __forceinline__ float cvt_rtz<float>(float x) { return x; }
#if defined(TL_USE_FP16)
template <>
__device__ __forceinline__ __half cvt_rtz<__half>(float x) { return __float2half_rz(x); }
#endif
#if defined(TL_USE_BF16)
template <>
__device__ __forceinline__ __nv_bfloat16 cvt_rtz<__nv_bfloat16>(float x) { return __float2bfloat16_rz(x); }
#endif
__device__ __forceinline__ float cvt_rtz_f32(double x) { return __double2float_rz(x); }

// The bits of x as a To. Byte copies (always allowed to alias) compile to a register move;
// NVRTC has no __builtin_memcpy.
template <class To, class From>
__device__ __forceinline__ To bitcast(From x) {
  static_assert(sizeof(To) == sizeof(From), "bitcast needs equal widths");
  To r;
  const unsigned char* from = reinterpret_cast<const unsigned char*>(&x);
  unsigned char* to = reinterpret_cast<unsigned char*>(&r);
#pragma unroll
  for (unsigned i = 0; i < sizeof(To); ++i) to[i] = from[i];
  return r;
}

// ---------------------------------------------------------------- arithmetic
template <class T>
__device__ __forceinline__ T max(T a, T b) { return a > b ? a : b; }
template <class T>
__device__ __forceinline__ T min(T a, T b) { return a < b ? a : b; }
#if defined(TL_EMULATOR)
// PTX max/min (what fmaxf/fminf compile to): a NaN operand gives the other one, and -0.0 < +0.0
// (the host's fmaxf may return either zero).
template <class T>
inline T ptx_max(T a, T b) {
  if (a != a) return b;
  if (b != b) return a;
  return a == b ? (std::signbit(a) ? b : a) : (a > b ? a : b);
}
template <class T>
inline T ptx_min(T a, T b) {
  if (a != a) return b;
  if (b != b) return a;
  return a == b ? (std::signbit(a) ? a : b) : (a < b ? a : b);
}
inline float max(float a, float b) { return ptx_max(a, b); }
inline float min(float a, float b) { return ptx_min(a, b); }
inline double max(double a, double b) { return ptx_max(a, b); }
inline double min(double a, double b) { return ptx_min(a, b); }
#else
__device__ __forceinline__ float max(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ float min(float a, float b) { return fminf(a, b); }
__device__ __forceinline__ double max(double a, double b) { return fmax(a, b); }
__device__ __forceinline__ double min(double a, double b) { return fmin(a, b); }
#endif
// Maximum/minimum that propagate NaN (propagate_nan=True).
template <class T>
__device__ __forceinline__ T max_nan(T a, T b) { return (a != a || b != b) ? a + b : max(a, b); }
template <class T>
__device__ __forceinline__ T min_nan(T a, T b) { return (a != a || b != b) ? a + b : min(a, b); }

// Integer operators as the GPU's instructions define them, with no undefined behaviour in C++:
// shifts by at least the width (the amount read as unsigned, so a negative one too) give 0, or
// the sign fill for >> of a signed value (PTX shl/shr clamp the amount); signed negation,
// abs and INT_MIN / -1 wrap (INT_MIN % -1 is 0) instead of trapping as x86 idiv does.
template <class T>
struct Unsigned;
template <>
struct Unsigned<signed char> { using type = unsigned char; };
template <>
struct Unsigned<short> { using type = unsigned short; };
template <>
struct Unsigned<int> { using type = unsigned; };
template <>
struct Unsigned<long long> { using type = unsigned long long; };
template <>
struct Unsigned<unsigned char> { using type = unsigned char; };
template <>
struct Unsigned<unsigned short> { using type = unsigned short; };
template <>
struct Unsigned<unsigned> { using type = unsigned; };
template <>
struct Unsigned<unsigned long long> { using type = unsigned long long; };
template <class T>
__device__ __forceinline__ bool shift_out(T amount) {
  return static_cast<typename Unsigned<T>::type>(amount) >= sizeof(T) * 8;
}
template <class T>
__device__ __forceinline__ T shl(T a, T amount) {
  using U = typename Unsigned<T>::type;
  return shift_out(amount) ? T(0) : static_cast<T>(static_cast<U>(static_cast<U>(a) << amount));
}
template <class T>
__device__ __forceinline__ T shr(T a, T amount) {
  return shift_out(amount) ? (a < T(0) ? T(-1) : T(0)) : static_cast<T>(a >> amount);
}
template <class T>
__device__ __forceinline__ T neg(T a) {
  using U = typename Unsigned<T>::type;
  return static_cast<T>(static_cast<U>(U(0) - static_cast<U>(a)));
}
template <class T>
__device__ __forceinline__ T iabs(T a) { return a < T(0) ? neg(a) : a; }
template <class T>
__device__ __forceinline__ T div(T a, T b) { return b == T(-1) ? neg(a) : static_cast<T>(a / b); }
template <class T>
__device__ __forceinline__ T mod(T a, T b) { return b == T(-1) ? T(0) : static_cast<T>(a % b); }

// tl.umulhi: the high half of the product of the operands' bits read as unsigned, whatever their
// signedness (Triton calls __nv_umulhi / __nv_umul64hi); libdevice's mulhi is signed for signed
// operands.
__device__ __forceinline__ int umulhi(int a, int b) {
  return static_cast<int>(__umulhi(static_cast<unsigned>(a), static_cast<unsigned>(b)));
}
__device__ __forceinline__ unsigned umulhi(unsigned a, unsigned b) { return __umulhi(a, b); }
__device__ __forceinline__ long long umulhi(long long a, long long b) {
  return static_cast<long long>(
      __umul64hi(static_cast<unsigned long long>(a), static_cast<unsigned long long>(b)));
}
__device__ __forceinline__ unsigned long long umulhi(unsigned long long a, unsigned long long b) {
  return __umul64hi(a, b);
}
__device__ __forceinline__ int mulhi(int a, int b) { return __mulhi(a, b); }
__device__ __forceinline__ unsigned mulhi(unsigned a, unsigned b) { return __umulhi(a, b); }
__device__ __forceinline__ long long mulhi(long long a, long long b) { return __mul64hi(a, b); }
__device__ __forceinline__ unsigned long long mulhi(unsigned long long a, unsigned long long b) {
  return __umul64hi(a, b);
}

// An f32 as a tf32 tensor core reads it (input_precision="tf32"): the low 13 mantissa bits are
// ignored, i.e. truncated toward zero (GPU-verified with Triton 3.6 on an H200).
__device__ __forceinline__ float tf32(float x) { return __uint_as_float(__float_as_uint(x) & 0xFFFFE000u); }
// Round an f32 to tf32, nearest with ties away from zero, as cvt.rna.tf32.f32 (the big part of
// tf32x3): finite values add half a tf32 ulp to the bits and truncate; inf and NaN are kept.
__device__ __forceinline__ float round_tf32(float x) {
  const unsigned bits = __float_as_uint(x);
  const bool finite = (bits & 0x7F800000u) != 0x7F800000u;
  return __uint_as_float(finite ? (bits + 0x1000u) & 0xFFFFE000u : bits);
}

// ---------------------------------------------------------------- vector memory access
template <int W, class T>
struct alignas(sizeof(T) * W) Vec {
  T v[W];
};
// The GPU faults on a vector access not aligned to its size; the CPU emulator traps likewise, so
// an axis-info rule that promises more alignment than the data has fails in its tests too.
template <int BYTES>
__device__ __forceinline__ void check_aligned(const void* p) {
#if defined(TL_EMULATOR)
  if (reinterpret_cast<unsigned long long>(p) % BYTES != 0) __trap();
#endif
}
template <int W, class T>
__device__ __forceinline__ void load(T* dst, const T* p) {
  check_aligned<sizeof(T) * W>(p);
  const Vec<W, T> t = *reinterpret_cast<const Vec<W, T>*>(p);
#pragma unroll
  for (int j = 0; j < W; ++j) dst[j] = t.v[j];
}
template <int W, class T>
__device__ __forceinline__ void store(T* p, const T* src) {
  check_aligned<sizeof(T) * W>(p);
  Vec<W, T> t;
#pragma unroll
  for (int j = 0; j < W; ++j) t.v[j] = src[j];
  *reinterpret_cast<Vec<W, T>*>(p) = t;
}

// The W elements of an access of B bytes as the registers its inline PTX names (uint4, uint2,
// unsigned, unsigned short; a byte goes through a 16-bit register). A union, so the compiler moves
// whole registers: copied byte by byte, a masked f16 layer norm took 570 PTX instructions, not 320.
template <int B> struct Word { using type = unsigned short; };
template <> struct Word<4> { using type = unsigned; };
template <> struct Word<8> { using type = uint2; };
template <> struct Word<16> { using type = uint4; };
template <int W, class T>
union Words {
  Vec<W, T> v;
  typename Word<sizeof(T) * W>::type r;
};
template <int W, class T>
__device__ __forceinline__ Words<W, T> words_of(const T* src) {
  Words<W, T> w;
  if constexpr (sizeof(T) * W == 1) w.r = 0;
#pragma unroll
  for (int j = 0; j < W; ++j) w.v.v[j] = src[j];
  return w;
}
template <int W, class T>
__device__ __forceinline__ void from_words(T* dst, const Words<W, T>& w) {
#pragma unroll
  for (int j = 0; j < W; ++j) dst[j] = w.v.v[j];
}
// A load or store with a cache operator or an L1 eviction priority (Triton's cache_modifier and
// eviction_policy), in PTX: Q is the qualifier (".cg", ".L1::evict_first"...); the W elements move
// as one access of 1, 2, 4, 8 or 16 bytes (the vector width chose an aligned size). And masked
// accesses as Triton issues them (load_if, store_if, with or without a hint): predicated, with no
// branch; a load's dst holds the fill (`other`, or 0) on entry, which the load overwrites where
// `pred` holds. As `if (pred) access`, ptxas kept a masked f16 layer norm at 44-48 registers a
// thread against 40 (one block fewer an SM). The emulator (no PTX) makes plain accesses.
#if defined(TL_EMULATOR)
#define TL_HINTED(NAME, Q)                                                                          \
  template <int W, class T> __device__ __forceinline__ void load##NAME(T* dst, const T* p) { load<W>(dst, p); } \
  template <int W, class T> __device__ __forceinline__ void store##NAME(T* p, const T* src) { store<W>(p, src); }
#define TL_PREDICATED(NAME, Q)                                                                      \
  template <int W, class T>                                                                         \
  __device__ __forceinline__ void load_if##NAME(T* dst, const T* p, bool pred) { if (pred) load<W>(dst, p); } \
  template <int W, class T>                                                                         \
  __device__ __forceinline__ void store_if##NAME(T* p, const T* src, bool pred) { if (pred) store<W>(p, src); }
#else
#define TL_PREDICATED(NAME, Q)                                                                      \
  template <int W, class T>                                                                         \
  __device__ __forceinline__ void load_if##NAME(T* dst, const T* p, bool pred) {                    \
    constexpr int B = sizeof(T) * W;                                                                \
    static_assert(B == 1 || B == 2 || B == 4 || B == 8 || B == 16, "access size");                  \
    Words<W, T> w = words_of<W>(dst);                                                               \
    const int q = pred;                                                                             \
    if constexpr (B == 16)                                                                          \
      asm("{ .reg .pred q; setp.ne.b32 q, %5, 0; @q ld.global" Q ".v4.b32 {%0, %1, %2, %3}, [%4]; }" \
          : "+r"(w.r.x), "+r"(w.r.y), "+r"(w.r.z), "+r"(w.r.w) : "l"(p), "r"(q) : "memory");          \
    else if constexpr (B == 8)                                                                      \
      asm("{ .reg .pred q; setp.ne.b32 q, %3, 0; @q ld.global" Q ".v2.b32 {%0, %1}, [%2]; }"       \
          : "+r"(w.r.x), "+r"(w.r.y) : "l"(p), "r"(q) : "memory");                                  \
    else if constexpr (B == 4)                                                                      \
      asm("{ .reg .pred q; setp.ne.b32 q, %2, 0; @q ld.global" Q ".b32 %0, [%1]; }"                \
          : "+r"(w.r) : "l"(p), "r"(q) : "memory");                                                 \
    else if constexpr (B == 2)                                                                      \
      asm("{ .reg .pred q; setp.ne.b32 q, %2, 0; @q ld.global" Q ".b16 %0, [%1]; }"                \
          : "+h"(w.r) : "l"(p), "r"(q) : "memory");                                                 \
    else                                                                                            \
      asm("{ .reg .pred q; setp.ne.b32 q, %2, 0; @q ld.global" Q ".u8 %0, [%1]; }"                 \
          : "+h"(w.r) : "l"(p), "r"(q) : "memory");                                                 \
    from_words(dst, w);                                                                             \
  }                                                                                                 \
  template <int W, class T>                                                                         \
  __device__ __forceinline__ void store_if##NAME(T* p, const T* src, bool pred) {                   \
    constexpr int B = sizeof(T) * W;                                                                \
    static_assert(B == 1 || B == 2 || B == 4 || B == 8 || B == 16, "access size");                  \
    const Words<W, T> w = words_of<W>(src);                                                         \
    const int q = pred;                                                                             \
    if constexpr (B == 16)                                                                          \
      asm volatile("{ .reg .pred q; setp.ne.b32 q, %5, 0; @q st.global" Q ".v4.b32 [%0], {%1, %2, %3, %4}; }" \
                   :: "l"(p), "r"(w.r.x), "r"(w.r.y), "r"(w.r.z), "r"(w.r.w), "r"(q) : "memory");   \
    else if constexpr (B == 8)                                                                      \
      asm volatile("{ .reg .pred q; setp.ne.b32 q, %3, 0; @q st.global" Q ".v2.b32 [%0], {%1, %2}; }" \
                   :: "l"(p), "r"(w.r.x), "r"(w.r.y), "r"(q) : "memory");                           \
    else if constexpr (B == 4)                                                                      \
      asm volatile("{ .reg .pred q; setp.ne.b32 q, %2, 0; @q st.global" Q ".b32 [%0], %1; }"      \
                   :: "l"(p), "r"(w.r), "r"(q) : "memory");                                         \
    else if constexpr (B == 2)                                                                      \
      asm volatile("{ .reg .pred q; setp.ne.b32 q, %2, 0; @q st.global" Q ".b16 [%0], %1; }"      \
                   :: "l"(p), "h"(w.r), "r"(q) : "memory");                                         \
    else                                                                                            \
      asm volatile("{ .reg .pred q; setp.ne.b32 q, %2, 0; @q st.global" Q ".u8 [%0], %1; }"       \
                   :: "l"(p), "h"(w.r), "r"(q) : "memory");                                         \
  }
#define TL_HINTED(NAME, Q)                                                                          \
  template <int W, class T>                                                                         \
  __device__ __forceinline__ void load##NAME(T* dst, const T* p) { /* the fill dead: ptxas drops it */ \
    _Pragma("unroll") for (int j = 0; j < W; ++j) dst[j] = T();                                     \
    load_if##NAME<W>(dst, p, true);                                                                 \
  }                                                                                                 \
  template <int W, class T>                                                                         \
  __device__ __forceinline__ void store##NAME(T* p, const T* src) { store_if##NAME<W>(p, src, true); }
#endif
#define TL_HINTS(X)                                                                                 \
  X(_ca, ".ca") X(_cg, ".cg") X(_cv, ".cv") X(_wb, ".wb") X(_cs, ".cs") X(_wt, ".wt")              \
  X(_evict_first, ".L1::evict_first") X(_evict_last, ".L1::evict_last") X(_evict_normal, ".L1::evict_normal")
TL_PREDICATED(, "")
TL_HINTS(TL_PREDICATED)
TL_HINTS(TL_HINTED)
#undef TL_HINTS
#undef TL_PREDICATED
#undef TL_HINTED

// ---------------------------------------------------------------- reductions
struct Sum {
  template <class T>
  __device__ T operator()(T a, T b) const { return a + b; }
};
struct Prod {
  template <class T>
  __device__ T operator()(T a, T b) const { return a * b; }
};
struct Max {
  template <class T>
  __device__ T operator()(T a, T b) const { return tl::max(a, b); }
};
struct Min {
  template <class T>
  __device__ T operator()(T a, T b) const { return tl::min(a, b); }
};
struct Xor {
  template <class T>
  __device__ T operator()(T a, T b) const { return a ^ b; }
};

// Reduce one value per thread over the block: warp shuffles, then one slot per warp in shared
// memory. Every thread gets the result. ``scratch`` holds at least 32 values of T.
template <int WARPS, class T, class Op>
__device__ __forceinline__ T block_reduce(T v, Op op, void* scratch) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  if (WARPS == 1) return v;
  T* s = static_cast<T*>(scratch);
  __syncthreads();
  if ((threadIdx.x & 31) == 0) s[threadIdx.x >> 5] = v;
  __syncthreads();
  v = s[0];
#pragma unroll
  for (int w = 1; w < WARPS; ++w) v = op(v, s[w]);
  return v;
}

// Index of the maximum (IS_MAX) or minimum, NaN skipped; ties go to the smaller index when
// LEFT (else the larger), and an all-NaN input gives its last index. A negative index is no
// element yet. A total order on (value, index), so any combine tree gives the same index.
template <bool IS_MAX, bool LEFT, class T>
__device__ __forceinline__ void arg_combine(T& v, int& i, T v2, int i2) {
  const bool number = v == v, number2 = v2 == v2;
  const bool better = IS_MAX ? (v2 > v) : (v2 < v);
  const bool tie = v2 == v && (LEFT ? i2 < i : i2 > i);
  const bool take = number == number2 ? (number ? better || tie : i2 > i) : number2;
  if (i2 >= 0 && (i < 0 || take)) {
    v = v2;
    i = i2;
  }
}
template <int WARPS, bool IS_MAX, bool LEFT, class T>
__device__ __forceinline__ int block_argreduce(T v, int i, void* scratch) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const T v2 = __shfl_xor_sync(0xffffffffu, v, o);
    const int i2 = __shfl_xor_sync(0xffffffffu, i, o);
    arg_combine<IS_MAX, LEFT>(v, i, v2, i2);
  }
  if (WARPS == 1) return i;
  T* s = static_cast<T*>(scratch);
  int* si = reinterpret_cast<int*>(s + 32);
  __syncthreads();
  if ((threadIdx.x & 31) == 0) {
    s[threadIdx.x >> 5] = v;
    si[threadIdx.x >> 5] = i;
  }
  __syncthreads();
  v = s[0];
  i = si[0];
#pragma unroll
  for (int w = 1; w < WARPS; ++w) arg_combine<IS_MAX, LEFT>(v, i, s[w], si[w]);
  return i;
}

// The order tl.sort sorts in: ascending, NaN after every number (NumPy's order).
template <class T>
__device__ __forceinline__ bool sort_greater(T a, T b) {
  return a > b || (a != a && b == b);
}

// ---------------------------------------------------------------- loops
// How many times range(lo, hi, step) runs, as Python counts it, in U: the unsigned type of T's
// width, which holds every count (the difference hi - lo is exact there); none for a zero step,
// which a device assertion before the loop reports.
template <class U, class T>
__device__ __forceinline__ U trip_count(T lo, T hi, T step) {
  if (step > T(0)) return lo < hi ? (U(hi) - U(lo) - U(1)) / U(step) + U(1) : U(0);
  if (step < T(0)) return hi < lo ? (U(lo) - U(hi) - U(1)) / (U(0) - U(step)) + U(1) : U(0);
  return U(0);
}

// ---------------------------------------------------------------- debugging
#if defined(TL_USE_ASSERT)
// A failed device_assert: the message, and the file and line the #line directives give.
__device__ __forceinline__ void assert_fail(const char* message, const char* file, unsigned line,
                                            const char* function) {
#if defined(__CUDACC_RTC__)
  __assertfail(message, file, line, function, sizeof(char));
#else
  __assert_fail(message, file, line, function);
#endif
}
#endif

// ---------------------------------------------------------------- atomics
// The generated code passes each PTX `atom` it needs as a lambda (its memory order and scope
// are literals in the instruction); these build Triton's composite atomics from them.
template <int BYTES>
struct Bits;
template <>
struct Bits<4> {
  using Signed = int;
  using Unsigned = unsigned;
};
template <>
struct Bits<8> {
  using Signed = long long;
  using Unsigned = unsigned long long;
};

// Float max as Triton does it on the bits: a signed max when v's sign bit is clear, else an
// unsigned min (min is the mirror image). Right for every ordered pair, with -0.0 below +0.0.
template <class T, class OnPositive, class OnNegative>
__device__ __forceinline__ T atomic_float_order(T v, OnPositive on_positive, OnNegative on_negative) {
  const typename Bits<sizeof(T)>::Signed bits = bitcast<typename Bits<sizeof(T)>::Signed>(v);
  return bits >= 0 ? bitcast<T>(on_positive(bits))
                   : bitcast<T>(on_negative(bitcast<typename Bits<sizeof(T)>::Unsigned>(v)));
}

// A 16-bit float add as a compare-and-swap loop (the bf16 atom needs sm_90); `cas(expected,
// desired)` returns the bits memory held. Each try rounds the f32 sum once, as one add does.
template <class T, class Cas>
__device__ __forceinline__ T atomic_add_by_cas(T* p, T v, Cas cas) {
  unsigned short seen = *reinterpret_cast<volatile unsigned short*>(p), was;
  do {
    was = seen;
    seen = cas(was, bitcast<unsigned short>(cvt<T>(cvt<float>(bitcast<T>(was)) + cvt<float>(v))));
  } while (seen != was);
  return bitcast<T>(was);
}

// A value computed by thread 0 (a scalar atomic), given to every thread.
template <class T>
__device__ __forceinline__ T broadcast(T v, void* scratch) {
  T* s = static_cast<T*>(scratch);
  __syncthreads();
  if (threadIdx.x == 0) s[0] = v;
  __syncthreads();
  return s[0];
}

// ---------------------------------------------------------------- Philox 4x32-10 (Triton's streams)
struct U4 {
  unsigned x, y, z, w;
};
__device__ __forceinline__ U4 philox(unsigned long long seed, unsigned c0, unsigned c1, int rounds) {
  unsigned k0 = static_cast<unsigned>(seed), k1 = static_cast<unsigned>(seed >> 32);
  unsigned c2 = 0, c3 = 0;
  for (int r = 0; r < rounds; ++r) {
    const unsigned a0 = c0, a2 = c2;
    c0 = __umulhi(0xCD9E8D57u, a2) ^ c1 ^ k0;
    c2 = __umulhi(0xD2511F53u, a0) ^ c3 ^ k1;
    c1 = 0xCD9E8D57u * a2;
    c3 = 0xD2511F53u * a0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return U4{c0, c1, c2, c3};
}
template <class Off>
__device__ __forceinline__ U4 philox_at(unsigned long long seed, Off offset, int rounds) {
  const unsigned lo = static_cast<unsigned>(offset);
  const unsigned hi = sizeof(Off) > 4 ? static_cast<unsigned>(static_cast<long long>(offset) >> 32) : 0u;
  return philox(seed, lo, hi, rounds);
}
__device__ __forceinline__ float uniform(unsigned x) {
  int i = static_cast<int>(x);
  i = i < 0 ? ~i : i;
  return __int2float_rn(i) * __uint_as_float(0x2FFFFFFFu);
}
template <class Off>
__device__ __forceinline__ unsigned randint(unsigned long long seed, Off offset, int rounds) {
  return philox_at(seed, offset, rounds).x;
}
// Output LANE (0..3) of Philox: randint4x's four blocks.
template <int LANE, class Off>
__device__ __forceinline__ unsigned randint4x(unsigned long long seed, Off offset, int rounds) {
  const U4 r = philox_at(seed, offset, rounds);
  return LANE == 0 ? r.x : LANE == 1 ? r.y : LANE == 2 ? r.z : r.w;
}
template <class Off>
__device__ __forceinline__ float rand(unsigned long long seed, Off offset, int rounds) {
  return uniform(philox_at(seed, offset, rounds).x);
}
template <class Off>
__device__ __forceinline__ float randn(unsigned long long seed, Off offset, int rounds) {
  const U4 r = philox_at(seed, offset, rounds);
  const float u1 = fmaxf(1.0e-7f, uniform(r.x));
  const float th = 6.283185307179586f * uniform(r.y);
  return sqrtf(-2.0f * logf(u1)) * cosf(th);
}

}  // namespace tl

#if defined(TL_USE_MMA)
#include "tile_lang_mma.cuh"
#endif
#if defined(TL_USE_TMA)
#include "tile_lang_tma.cuh"
#endif
