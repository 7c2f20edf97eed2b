// CUDA on the CPU, for testing generated kernels without a GPU: each thread of a block is a
// std::thread, __syncthreads and warp shuffles are barriers, shared memory is one static array
// (blocks run one after another). Only what tile_lang's generated code and tile_lang.cuh use.
#pragma once
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <atomic>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <thread>
#include <type_traits>
#include <vector>

#define __global__
#define __launch_bounds__(...)  /* (threads) or (threads, min blocks): a register budget, nothing on the CPU */
#define __align__(n)
#undef __forceinline__
#define __forceinline__ inline

struct tl_emu_dim3 {
  unsigned x = 0, y = 0, z = 0;
};

namespace tl_emu {
inline thread_local tl_emu_dim3 thread_index;
inline tl_emu_dim3 block_index, grid_dim, block_dim;
inline std::unique_ptr<std::barrier<>> block_sync;
inline std::vector<std::unique_ptr<std::barrier<>>> warp_sync;
alignas(16) inline unsigned char warp_slots[32][32][16];
}  // namespace tl_emu

#define threadIdx tl_emu::thread_index
#define blockIdx tl_emu::block_index
#define gridDim tl_emu::grid_dim
#define blockDim tl_emu::block_dim

alignas(16) unsigned char tl_smem[4 << 20];

inline void __syncthreads() { tl_emu::block_sync->arrive_and_wait(); }

template <class T>
inline T __shfl_xor_sync(unsigned, T v, int lane_mask) {
  const unsigned tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  auto& bar = *tl_emu::warp_sync[warp];
  std::memcpy(tl_emu::warp_slots[warp][lane], &v, sizeof(T));
  bar.arrive_and_wait();
  T r;
  std::memcpy(&r, tl_emu::warp_slots[warp][lane ^ static_cast<unsigned>(lane_mask)], sizeof(T));
  bar.arrive_and_wait();
  return r;
}

#define TL_EMULATOR 1

namespace tl_emu {
// Every lane's first `bytes` (at most 16) of `mine`, indexed by lane: the warp-wide exchange
// that ldmatrix and mma perform in hardware.
inline void warp_gather(const void* mine, unsigned bytes, unsigned char (*all)[16]) {
  const unsigned tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  auto& bar = *warp_sync[warp];
  std::memcpy(warp_slots[warp][lane], mine, bytes);
  bar.arrive_and_wait();
  std::memcpy(all, warp_slots[warp], sizeof warp_slots[warp]);
  bar.arrive_and_wait();
}

// ldmatrix.sync.aligned.m8n8.xN[.trans].shared.b16, from its PTX definition: lanes 8i..8i+7
// give the row addresses of matrix i; lane t receives (row t/4, columns 2(t%4), +1) of each,
// or with TRANS (rows 2(t%4), +1, column t/4).
template <unsigned N, bool TRANS>
inline void ldmatrix(unsigned* r, const void* p) {
  unsigned char rows[32][16];
  warp_gather(&p, sizeof p, rows);
  const unsigned lane = threadIdx.x % 32;
  auto row = [&](unsigned i) {
    const unsigned char* q;
    std::memcpy(&q, rows[i], sizeof q);
    return q;
  };
  for (unsigned i = 0; i < N; ++i) {
    if (!TRANS) {
      std::memcpy(&r[i], row(8 * i + lane / 4) + 4 * (lane % 4), 4);
    } else {
      unsigned short lo, hi;
      std::memcpy(&lo, row(8 * i + 2 * (lane % 4)) + 2 * (lane / 4), 2);
      std::memcpy(&hi, row(8 * i + 2 * (lane % 4) + 1) + 2 * (lane / 4), 2);
      r[i] = lo | (static_cast<unsigned>(hi) << 16);
    }
  }
}

// mma.sync.aligned m16n8k16 (16-bit T), m16n8k8 (tf32, T = float) with f32 accumulators, or
// m16n8k32 (T = signed char) with s32 ones, from the PTX fragment layouts: each operand register
// holds 4 bytes of K-consecutive elements (PER of them), lane t those of row t/4 of A (and +8)
// or column t/4 of B at K 4(t%4)/size (and K/2 on). tf32 operands keep their top 19 bits, as the
// tensor cores do; s32 sums wrap around, as the instruction's do.
template <class T, class D>
inline void mma(D* d, const unsigned* a, const unsigned* b) {
  unsigned char as[32][16], bs[32][16];
  warp_gather(a, 16, as);
  warp_gather(b, 8, bs);
  constexpr bool tf32 = sizeof(T) == 4;
  constexpr unsigned PER = 4 / sizeof(T), K = 8 * PER, HALF = K / 2;
  auto value = [](const unsigned char* regs, unsigned reg, unsigned part) -> D {
    unsigned word;
    std::memcpy(&word, regs + 4 * reg, 4);
    if (tf32) {
      word &= 0xffffe000u;
      float f;
      std::memcpy(&f, &word, 4);
      return static_cast<D>(f);
    }
    T x;
    std::memcpy(&x, reinterpret_cast<const unsigned char*>(&word) + sizeof(T) * part, sizeof(T));
    return static_cast<D>(static_cast<float>(x));
  };
  auto A = [&](unsigned row, unsigned k) {
    return value(as[(row % 8) * 4 + (k % HALF) / PER], (row >= 8) + 2 * (k >= HALF), k % PER);
  };
  auto B = [&](unsigned k, unsigned n) { return value(bs[n * 4 + (k % HALF) / PER], k >= HALF, k % PER); };
  const unsigned lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
  for (unsigned j = 0; j < 4; ++j) {
    const unsigned row = g + 8 * (j >> 1), col = 2 * c + (j & 1);
    D s = d[j];
    for (unsigned k = 0; k < K; ++k) {
      if constexpr (std::is_integral_v<D>) {
        s = static_cast<D>(static_cast<unsigned>(s) + static_cast<unsigned>(A(row, k) * B(k, col)));
      } else {
        s += A(row, k) * B(k, col);
      }
    }
    d[j] = s;
  }
}

// wgmma.mma_async m64nNk16 (f32 += A * B) of one warpgroup, from the PTX definitions of the
// shared-memory matrix descriptor (start, leading and stride byte offsets; the swizzle of its
// layout type, rows of 128, 64 or 32 bytes: address bits 4-6, 4-5 or 4 XOR bits 7-9, 7-8 or 7)
// and of the accumulator fragments (warp w of the group holds
// rows 16w + lane/4 and +8, columns 8j + 2(lane%4) and +1). A is K-major; B is N-major when
// TRANS_B (rows of K, 64-column panels LBO bytes apart), else K-major. Runs at issue.
inline unsigned wgmma_field(unsigned long long desc, unsigned shift) {  // a 14-bit field, in bytes
  return static_cast<unsigned>((desc >> shift) & 0x3FFFu) << 4;
}
inline unsigned wgmma_row(unsigned long long desc) {  // bytes of a swizzled row, from the layout type
  return 256u >> static_cast<unsigned>(desc >> 62);
}
template <class T>
inline float wgmma_at(unsigned address, unsigned row) {  // chunk bits 4.. XOR bits 7.. (row / 16 values)
  T x;
  std::memcpy(&x, tl_smem + (address ^ (((address >> 7) & (row / 16u - 1u)) << 4)), sizeof x);
  return static_cast<float>(x);
}
// This thread's fragments of D += A * B over one step of K (rows of the thread's warp).
template <unsigned N, unsigned K, class FA, class FB>
inline void wgmma_apply(float* d, FA A, FB B) {
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32 % 4;
  for (unsigned i = 0; i < N / 2; ++i) {
    const unsigned row = 16 * warp + lane / 4 + 8 * (i % 4 / 2), col = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
    float s = d[i];
    for (unsigned k = 0; k < K; ++k) s += A(row, k) * B(k, col);
    d[i] = s;
  }
}
// B(k, n) through its descriptor: N-major (TRANS_B: rows of K, panels of a row's columns LBO
// bytes apart, 8-row groups SBO apart) or K-major (rows of N, 8-row groups SBO apart).
template <class T, bool TRANS_B>
inline auto wgmma_b(unsigned long long db) {
  const unsigned b0 = wgmma_field(db, 0), lbo = wgmma_field(db, 16), sbo = wgmma_field(db, 32), row = wgmma_row(db);
  return [=](unsigned k, unsigned n) {
    const unsigned cols = row / sizeof(T);  // N-major: columns of a panel's row
    if (TRANS_B) return wgmma_at<T>(b0 + n / cols * lbo + k / 8 * sbo + k % 8 * row + n % cols * sizeof(T), row);
    return wgmma_at<T>(b0 + n / 8 * sbo + n % 8 * row + k * sizeof(T), row);
  };
}
// K: 32 bytes of A's type (16 16-bit or 32 fp8 elements); A and B may differ among fp8 types.
template <class TA, class TB, unsigned N, bool TRANS_B>
inline void wgmma(float* d, unsigned long long da, unsigned long long db) {
  const unsigned a0 = wgmma_field(da, 0), a_sbo = wgmma_field(da, 32), row = wgmma_row(da);
  auto A = [&](unsigned m, unsigned k) { return wgmma_at<TA>(a0 + m / 8 * a_sbo + m % 8 * row + k * sizeof(TA), row); };
  wgmma_apply<N, 32 / sizeof(TA)>(d, A, wgmma_b<TB, TRANS_B>(db));
}

// The same with A from registers: lane t of each warp gives rows t/4 and +8, columns 2(t%4),
// +1, +8 and +9 of its 16 rows (registers: row, row+8, then both again 8 columns on).
template <class T, unsigned N, bool TRANS_B>
inline void wgmma_rs(float* d, const unsigned* a, unsigned long long db) {
  unsigned char as[32][16];
  warp_gather(a, 16, as);
  auto A = [&](unsigned m, unsigned k) {
    const unsigned m16 = m % 16;
    unsigned short bits;
    std::memcpy(&bits, as[4 * (m16 % 8) + k % 8 / 2] + 4 * (m16 / 8 + 2 * (k / 8)) + 2 * (k % 2), 2);
    T x;
    std::memcpy(&x, &bits, 2);
    return static_cast<float>(x);
  };
  wgmma_apply<N, 16>(d, A, wgmma_b<T, TRANS_B>(db));
}
}  // namespace tl_emu

template <class To, class From>
inline To tl_emu_bits(From x) {
  To r;
  std::memcpy(&r, &x, sizeof(To));
  return r;
}
inline float __int_as_float(int x) { return tl_emu_bits<float>(x); }
inline float __uint_as_float(unsigned x) { return tl_emu_bits<float>(x); }
inline int __float_as_int(float x) { return tl_emu_bits<int>(x); }
inline unsigned __float_as_uint(float x) { return tl_emu_bits<unsigned>(x); }
inline double __longlong_as_double(long long x) { return tl_emu_bits<double>(x); }
inline long long __double_as_longlong(double x) { return tl_emu_bits<long long>(x); }
inline float __int2float_rn(int x) { return static_cast<float>(x); }
inline unsigned __umulhi(unsigned a, unsigned b) { return static_cast<unsigned>((1ull * a * b) >> 32); }
inline int __mulhi(int a, int b) { return static_cast<int>((1ll * a * b) >> 32); }
inline long long __mul64hi(long long a, long long b) {
  return static_cast<long long>((static_cast<__int128>(a) * b) >> 64);
}
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return static_cast<unsigned long long>((static_cast<unsigned __int128>(a) * b) >> 64);
}
inline float __fdiv_rn(float a, float b) { return a / b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline float __fsqrt_rn(float a) { return std::sqrt(a); }
inline double __dsqrt_rn(double a) { return std::sqrt(a); }
inline double rsqrt(double a) { return 1.0 / std::sqrt(a); }
inline float __double2float_rz(double x) {
  float f = static_cast<float>(x);
  if (std::isfinite(x) && std::fabs(static_cast<double>(f)) > std::fabs(x)) f = std::nextafter(f, 0.0f);
  return f;
}
// prmt: byte i of the result is byte s[4i+3:4i] (0-7) of {y, x}, x the low word.
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  const unsigned long long both = x | (static_cast<unsigned long long>(y) << 32);
  unsigned r = 0;
  for (unsigned i = 0; i < 4; ++i) r |= static_cast<unsigned>((both >> (8 * ((s >> (4 * i)) & 7u))) & 0xffu) << (8 * i);
  return r;
}
inline float __saturatef(float x) { return !(x > 0.0f) ? 0.0f : (x > 1.0f ? 1.0f : x); }  // NaN gives +0

// The GPU's approximate f32 units (MUFU: rcp, rsqrt, ex2, lg2, sin, cos) and what ptxas builds
// from them. Their results are documented only to within an ulp or two, so each but rcp is
// modelled as a faithful rounding of the exact value: the nearest float or its neighbour on the
// other side, a hash of the operand choosing (exact results stay exact). A test that compares
// such a result exactly fails here as it would on the GPU; the correctly rounded value hid that.
// rcp rounds to nearest (a division is then two roundings, already inexact). Subnormal
// operands and results are flushed, as MUFU does (ptxas scales subnormal operands of rcp, lg2
// and rsqrt into range; ex2.approx.f32 without .ftz squares the ex2 of half a very negative x).
namespace tl_emu {
inline float flush(float x) { return std::fabs(x) < 1.17549435e-38f ? std::copysign(0.0f, x) : x; }
inline float faithful(double exact, float operand, unsigned unit) {
  const float nearest = static_cast<float>(exact);
  if (!std::isfinite(nearest) || static_cast<double>(nearest) == exact) return nearest;
  unsigned h = (tl_emu_bits<unsigned>(operand) ^ (unit * 0x85EBCA6Bu)) * 0x9E3779B1u;
  h ^= h >> 15;
  const float other = std::nextafter(nearest, exact > nearest ? INFINITY : -INFINITY);
  return (h * 0x2C1B3C6Du) >> 31 && !std::isinf(other) ? other : nearest;  // never past the largest float
}
inline float mufu_rcp(float x) {
  x = flush(x);
  if (x == 0.0f || std::isinf(x) || std::isnan(x)) return 1.0f / x;
  return flush(static_cast<float>(1.0 / x));  // rounded to nearest: faithful, __fdividef passed its 2 ulp
}
inline float mufu_rsq(float x) {
  x = flush(x);
  if (!(x > 0.0f) || std::isinf(x)) return x == 0.0f ? std::copysign(INFINITY, x) : 1.0f / std::sqrt(x);
  return faithful(1.0 / std::sqrt(static_cast<double>(x)), x, 2);
}
inline float mufu_ex2(float x) {
  if (std::isnan(x) || std::isinf(x)) return std::exp2(x);
  return flush(faithful(std::exp2(static_cast<double>(flush(x))), x, 3));
}
inline float mufu_lg2(float x) {
  x = flush(x);
  if (!(x > 0.0f) || std::isinf(x)) return std::log2(x);
  return faithful(std::log2(static_cast<double>(x)), x, 4);
}
// ex2.approx.f32, with .ftz (one MUFU) or without (below -126, the square of ex2(x / 2))
inline float ex2(float x, bool ftz) {
  if (ftz || !(x < -126.0f)) return mufu_ex2(x);
  const float half = mufu_ex2(x * 0.5f);
  return half * half;
}
// lg2.approx.f32: a subnormal operand scaled by 2**24 first, 24 taken off after
inline float lg2(float x) {
  if (std::fabs(x) >= 1.17549435e-38f || std::isnan(x)) return mufu_lg2(x);
  return mufu_lg2(x * 16777216.0f) + -24.0f;
}
// rsqrt.approx.f32 (rsqrtf): a subnormal operand scaled by 2**24, the result by 2**12
inline float rsqrt_approx(float x) {
  if (std::fabs(x) >= 1.17549435e-38f || std::isnan(x)) return mufu_rsq(x);
  return mufu_rsq(x * 16777216.0f) * 4096.0f;
}
// div.approx.f32 (__fdividef): x times rcp(y), a subnormal y (and x) scaled by 2**24 first; for
// 2**126 < |y| < 2**128 the reciprocal flushes to 0 (so 0, or NaN for x = inf, as documented)
inline float div_approx(float x, float y) {
  if (std::fabs(y) < 1.17549435e-38f) x *= 16777216.0f, y *= 16777216.0f;
  return mufu_rcp(y) * x;
}
// div.full.f32 (Triton's f32 /): as div.approx, with x and y quartered first for |y| > 2**126
inline float div_full(float x, float y) {
  if (std::fabs(y) > 8.50705917e+37f) x *= 0.25f, y *= 0.25f;
  return div_approx(x, y);
}
// sin.approx / cos.approx: x in turns (x / 2 pi, the product rounded toward zero), then MUFU
inline float turns(float x) {
  const double t = static_cast<double>(x) * static_cast<double>(0.159154937f);
  float r = static_cast<float>(t);
  if (std::isfinite(t) && std::fabs(static_cast<double>(r)) > std::fabs(t)) r = std::nextafter(r, 0.0f);
  return r;
}
inline float sin_turns(float t, bool cosine) {
  t = flush(t);
  if (std::isnan(t) || std::isinf(t)) return NAN;
  const double r = static_cast<double>(t) - std::floor(static_cast<double>(t));  // exact: t has 24 bits
  const double pi = 3.141592653589793238462643383279502884;
  const double exact = cosine ? std::cos(2 * pi * r) : (t == 0.0f ? t : std::sin(2 * pi * r));
  return flush(faithful(exact, t, cosine ? 6 : 5));
}
}  // namespace tl_emu
inline float rsqrtf(float a) { return tl_emu::rsqrt_approx(a); }

// libdevice functions the host's libm lacks, written plainly (the GPU's own are tested against
// the same float64 references on a GPU machine).
namespace tl_emu {
// x / y or sqrt(x) rounded to nearest, then one step down or up where the exact residual's sign
// says it is on the wrong side (fma: the product exact, the difference's sign right).
template <class T>
inline T directed(T q, T excess, int mode) {
  // mode -1: down, +1: up, 0: toward zero; excess > 0: q is above the exact value
  const T inf = std::numeric_limits<T>::infinity();
  if (mode == 0 && q == T(0)) return q;
  if (mode < 0 || (mode == 0 && q > T(0))) return excess > 0 ? std::nextafter(q, -inf) : q;
  return excess < 0 ? std::nextafter(q, inf) : q;
}
template <class T>
inline T div_dir(T x, T y, int mode) {
  const T q = x / y;
  if (!std::isfinite(x) || !std::isfinite(y) || y == T(0) || std::isnan(q)) return q;
  using W = std::conditional_t<sizeof(T) == 4, double, T>;  // an f32 product is exact in f64, subnormals too
  W excess = std::isinf(q) ? q : std::fma(W(q), W(y), -W(x));  // the sign of q*y - x; inf: overflowed
  if (y < T(0) && !std::isinf(q)) excess = -excess;
  return directed(q, static_cast<T>(excess > 0) - static_cast<T>(excess < 0), mode);
}
// x + y (or x * y) rounded in the direction mode: the nearest sum's exact error by TwoSum (the
// product's by an exact product: f64 for f32, fma for f64); an exact zero sum rounded down is -0
// unless both operands are +0
template <class T>
inline T add_dir(T x, T y, int mode) {
  const T s = x + y;
  if (!std::isfinite(x) || !std::isfinite(y) || std::isnan(s)) return s;
  if (std::isinf(s)) return directed(s, s, mode);
  const T back = s - x;
  const T err = (x - (s - back)) + (y - back);
  const T out = directed(s, static_cast<T>(err < 0) - static_cast<T>(err > 0), mode);
  const bool positive_zeros = x == T(0) && y == T(0) && !std::signbit(x) && !std::signbit(y);
  return mode < 0 && out == T(0) && !positive_zeros ? -T(0) : out;
}
template <class T>
inline T mul_dir(T x, T y, int mode) {
  const T p = x * y;
  if (!std::isfinite(x) || !std::isfinite(y) || std::isnan(p)) return p;
  if (std::isinf(p)) return directed(p, p, mode);
  using W = std::conditional_t<sizeof(T) == 4, double, T>;
  const W below = std::fma(W(x), W(y), -W(p));  // x*y - p, its sign exact
  return directed(p, static_cast<T>(below < 0) - static_cast<T>(below > 0), mode);
}
template <class T>
inline T sqrt_dir(T x, int mode) {
  const T q = std::sqrt(x);
  if (!std::isfinite(q) || q == T(0)) return q;
  using W = std::conditional_t<sizeof(T) == 4, double, T>;
  const W excess = std::fma(W(q), W(q), -W(x));
  return directed(q, static_cast<T>(excess > 0) - static_cast<T>(excess < 0), mode);
}
// erfc's inverse on (0, 1] by bisection on [0, 30], to the last bit
inline double erfc_inverse(double z) {
  double lo = 0.0, hi = 30.0;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (mid == lo || mid == hi) break;
    (std::erfc(mid) > z ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}
inline double erf_inverse(double y) {  // bisection on erf for |y| <= 0.5, else through erfc
  if (std::isnan(y) || std::fabs(y) > 1.0) return NAN;
  if (std::fabs(y) == 1.0) return std::copysign(INFINITY, y);
  if (std::fabs(y) > 0.5) return std::copysign(erfc_inverse(1.0 - std::fabs(y)), y);
  double lo = 0.0, hi = 1.0;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (mid == lo || mid == hi) break;
    (std::erf(mid) < std::fabs(y) ? lo : hi) = mid;
  }
  return y == 0.0 ? y : std::copysign(0.5 * (lo + hi), y);
}
inline double erfc_inverse_all(double z) {
  if (std::isnan(z) || z < 0.0 || z > 2.0) return NAN;
  if (z == 0.0) return INFINITY;
  if (z == 2.0) return -INFINITY;
  if (z <= 0.5) return erfc_inverse(z);
  if (z < 1.5) return erf_inverse(1.0 - z);
  return -erfc_inverse(2.0 - z);
}
// sin(pi x) and cos(pi x) from the exact remainder of x by 2, in long double; zeros exact
inline long double pi_turns(long double r, bool cosine) {
  const long double pi = 3.141592653589793238462643383279502884L;
  return cosine ? std::cos(pi * r) : std::sin(pi * r);
}
template <class T>
inline T sinpi_(T x) {
  if (!std::isfinite(x)) return NAN;
  const T r = std::fmod(x, T(2));
  if (r == std::trunc(r)) return std::copysign(T(0), x);
  return static_cast<T>(pi_turns(r, false));
}
template <class T>
inline T cospi_(T x) {
  if (!std::isfinite(x)) return NAN;
  const T r = std::fabs(std::fmod(x, T(2)));
  if (r == T(0.5) || r == T(1.5)) return T(0);
  if (r == T(1)) return T(-1);
  if (r == T(0)) return T(1);
  return static_cast<T>(pi_turns(r, true));
}
template <class T>
inline int count_leading_zeros(T v) {
  return v == 0 ? 8 * sizeof(T) : (sizeof(T) == 8 ? __builtin_clzll(v) : __builtin_clz(static_cast<unsigned>(v)));
}
template <class T>
inline T reverse_bits(T v) {
  T r = 0;
  for (unsigned i = 0; i < 8 * sizeof(T); ++i) r |= ((v >> i) & T(1)) << (8 * sizeof(T) - 1 - i);
  return r;
}
}  // namespace tl_emu
inline float __fdiv_rd(float x, float y) { return tl_emu::div_dir(x, y, -1); }
inline float __fdiv_ru(float x, float y) { return tl_emu::div_dir(x, y, 1); }
inline float __fdiv_rz(float x, float y) { return tl_emu::div_dir(x, y, 0); }
inline double __ddiv_rd(double x, double y) { return tl_emu::div_dir(x, y, -1); }
inline double __ddiv_ru(double x, double y) { return tl_emu::div_dir(x, y, 1); }
inline double __ddiv_rz(double x, double y) { return tl_emu::div_dir(x, y, 0); }
inline float __fsqrt_rd(float x) { return tl_emu::sqrt_dir(x, -1); }
inline float __fsqrt_ru(float x) { return tl_emu::sqrt_dir(x, 1); }
inline float __fsqrt_rz(float x) { return tl_emu::sqrt_dir(x, 0); }
inline double __dsqrt_rd(double x) { return tl_emu::sqrt_dir(x, -1); }
inline double __dsqrt_ru(double x) { return tl_emu::sqrt_dir(x, 1); }
inline double __dsqrt_rz(double x) { return tl_emu::sqrt_dir(x, 0); }
inline float __fadd_rz(float x, float y) { return tl_emu::add_dir(x, y, 0); }
inline double __dadd_rz(double x, double y) { return tl_emu::add_dir(x, y, 0); }
inline float __fadd_rd(float x, float y) { return tl_emu::add_dir(x, y, -1); }
inline double __dadd_rd(double x, double y) { return tl_emu::add_dir(x, y, -1); }
inline float __fadd_ru(float x, float y) { return tl_emu::add_dir(x, y, 1); }
inline double __dadd_ru(double x, double y) { return tl_emu::add_dir(x, y, 1); }
inline float __fsub_rz(float x, float y) { return tl_emu::add_dir(x, -y, 0); }
inline double __dsub_rz(double x, double y) { return tl_emu::add_dir(x, -y, 0); }
inline float __fsub_rd(float x, float y) { return tl_emu::add_dir(x, -y, -1); }
inline double __dsub_rd(double x, double y) { return tl_emu::add_dir(x, -y, -1); }
inline float __fsub_ru(float x, float y) { return tl_emu::add_dir(x, -y, 1); }
inline double __dsub_ru(double x, double y) { return tl_emu::add_dir(x, -y, 1); }
inline float __fmul_rz(float x, float y) { return tl_emu::mul_dir(x, y, 0); }
inline double __dmul_rz(double x, double y) { return tl_emu::mul_dir(x, y, 0); }
inline float __fmul_rd(float x, float y) { return tl_emu::mul_dir(x, y, -1); }
inline double __dmul_rd(double x, double y) { return tl_emu::mul_dir(x, y, -1); }
inline float __fmul_ru(float x, float y) { return tl_emu::mul_dir(x, y, 1); }
inline double __dmul_ru(double x, double y) { return tl_emu::mul_dir(x, y, 1); }
inline float __fadd_rn(float x, float y) { return x + y; }
inline double __dadd_rn(double x, double y) { return x + y; }
inline float __fsub_rn(float x, float y) { return x - y; }
inline double __dsub_rn(double x, double y) { return x - y; }
inline float __fmul_rn(float x, float y) { return x * y; }
inline double __dmul_rn(double x, double y) { return x * y; }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __frcp_rd(float x) { return tl_emu::div_dir(1.0f, x, -1); }
inline float __frcp_ru(float x) { return tl_emu::div_dir(1.0f, x, 1); }
inline float __frcp_rz(float x) { return tl_emu::div_dir(1.0f, x, 0); }
inline double __drcp_rd(double x) { return tl_emu::div_dir(1.0, x, -1); }
inline double __drcp_ru(double x) { return tl_emu::div_dir(1.0, x, 1); }
inline double __drcp_rz(double x) { return tl_emu::div_dir(1.0, x, 0); }
inline double __drcp_rn(double x) { return 1.0 / x; }
// The fast intrinsics as ptxas builds them for sm_90 (read from cuobjdump -sass): the MUFU
// approximation, the operand scalings around it, and the f32 products before and after it, each
// rounded as there (the product's rounding is most of __expf's error at large |x|).
inline float __fdividef(float x, float y) { return tl_emu::div_approx(x, y); }
inline float __expf(float x) { return tl_emu::ex2(x * 1.44269502f, false); }
inline float __exp10f(float x) { return tl_emu::ex2(x * 3.32192802f, false); }
inline float __log2f(float x) { return tl_emu::lg2(x); }
inline float __logf(float x) { return tl_emu::lg2(x) * 0.693147182f; }
inline float __log10f(float x) { return tl_emu::lg2(x) * 0.30103001f; }
inline float __powf(float x, float y) { return tl_emu::ex2(y * tl_emu::lg2(x), false); }
inline float __sinf(float x) { return tl_emu::sin_turns(tl_emu::turns(x), false); }
inline float __cosf(float x) { return tl_emu::sin_turns(tl_emu::turns(x), true); }
inline float __tanf(float x) {  // sin over cos as __fdividef divides (sin times rcp of cos)
  const float t = tl_emu::turns(x);
  return tl_emu::div_approx(tl_emu::sin_turns(t, false), tl_emu::sin_turns(t, true));
}
inline int __float2int_rn(float x) {
  if (std::isnan(x)) return 0;
  const float r = std::nearbyint(x);
  return r >= 2147483648.0f ? 2147483647 : (r < -2147483648.0f ? (-2147483647 - 1) : static_cast<int>(r));
}
inline float erfinvf(float x) { return static_cast<float>(tl_emu::erf_inverse(x)); }
inline double erfinv(double x) { return tl_emu::erf_inverse(x); }
inline float erfcinvf(float x) { return static_cast<float>(tl_emu::erfc_inverse_all(x)); }
inline double erfcinv(double x) { return tl_emu::erfc_inverse_all(x); }
inline float rcbrtf(float x) { return static_cast<float>(1.0 / std::cbrt(static_cast<double>(x))); }
inline double rcbrt(double x) { return static_cast<double>(1.0L / std::cbrt(static_cast<long double>(x))); }
inline float sinpif(float x) { return tl_emu::sinpi_(x); }
inline double sinpi(double x) { return tl_emu::sinpi_(x); }
inline float cospif(float x) { return tl_emu::cospi_(x); }
inline double cospi(double x) { return tl_emu::cospi_(x); }
inline float rhypotf(float x, float y) { return static_cast<float>(1.0 / std::hypot(static_cast<double>(x), static_cast<double>(y))); }
inline double rhypot(double x, double y) { return static_cast<double>(1.0L / std::hypot(static_cast<long double>(x), static_cast<long double>(y))); }
inline float norm3df(float x, float y, float z) {
  return static_cast<float>(std::hypot(std::hypot(static_cast<double>(x), static_cast<double>(y)), static_cast<double>(z)));
}
inline double norm3d(double x, double y, double z) {
  return static_cast<double>(std::hypot(std::hypot(static_cast<long double>(x), static_cast<long double>(y)), static_cast<long double>(z)));
}
// norm4d and the reciprocal norms in a wider type (hypot of hypots: no overflow, inf beats NaN)
template <class T>
inline auto tl_emu_norm(T x, T y, T z, T t) {
  using W = std::conditional_t<sizeof(T) == 4, double, long double>;
  return std::hypot(std::hypot(std::hypot(W(x), W(y)), W(z)), W(t));
}
inline float rnorm3df(float x, float y, float z) { return static_cast<float>(1.0 / tl_emu_norm(x, y, z, 0.0f)); }
inline double rnorm3d(double x, double y, double z) { return static_cast<double>(1.0L / tl_emu_norm(x, y, z, 0.0)); }
inline float norm4df(float x, float y, float z, float t) { return static_cast<float>(tl_emu_norm(x, y, z, t)); }
inline double norm4d(double x, double y, double z, double t) { return static_cast<double>(tl_emu_norm(x, y, z, t)); }
inline float rnorm4df(float x, float y, float z, float t) { return static_cast<float>(1.0 / tl_emu_norm(x, y, z, t)); }
inline double rnorm4d(double x, double y, double z, double t) { return static_cast<double>(1.0L / tl_emu_norm(x, y, z, t)); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return tl_emu::count_leading_zeros(static_cast<unsigned>(x)); }
inline int __clzll(long long x) { return tl_emu::count_leading_zeros(static_cast<unsigned long long>(x)); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned __brev(unsigned x) { return tl_emu::reverse_bits(x); }
inline unsigned long long __brevll(unsigned long long x) { return tl_emu::reverse_bits(x); }

// fma, the rounding conversions and the integer helpers: the nearest result (the host's, in
// round-to-nearest), moved a step where the exact residual's sign says (tl_emu::directed); the
// residuals in __float128, where an f64 product is exact.
namespace tl_emu {
template <class T>
inline T fma_dir(T x, T y, T z, int mode) {
  const T q = std::fma(x, y, z);
  if (!std::isfinite(x) || !std::isfinite(y) || !std::isfinite(z)) return q;
  if (std::isinf(q)) return directed(q, q, mode);  // overflowed
  using W = __float128;  // x * y exactly (at most 106 bits), then the sum's error exactly (TwoSum)
  const W p = W(x) * W(y), w = W(z), s = p + w, back = s - p, err = (p - (s - back)) + (w - back);
  if (s == 0 && err == 0) {  // an exact zero: -0 rounding down unless the product and z are +0
    const bool product_negative = std::signbit(x) != std::signbit(y);
    const bool zeros = (x == T(0) || y == T(0)) && z == T(0);
    if (zeros && product_negative == std::signbit(z)) return std::copysign(T(0), z);
    return mode < 0 ? -T(0) : T(0);
  }
  const W excess = (W(q) - s) - err;  // q - s exact (the two are neighbours)
  return directed(q, static_cast<T>(excess > 0) - static_cast<T>(excess < 0), mode);
}
// an integer or f64 value to float T in the direction mode; the comparison exact in long double
// (64 bits: every 64-bit integer, every float)
template <class T, class S>
inline T to_float(S v, int mode) {
  const T q = static_cast<T>(v);
  if constexpr (std::is_floating_point_v<S>) {
    if (!std::isfinite(v)) return q;
  }
  const long double d = static_cast<long double>(q) - static_cast<long double>(v);
  if (std::isinf(q)) return directed(q, q, mode);
  return directed(q, static_cast<T>(d > 0) - static_cast<T>(d < 0), mode);
}
// a float rounded in mode (-1 floor, 1 ceil, 0 trunc, 2 nearest even) to integer I, saturating,
// NaN giving 0 (the GPU's cvt)
template <class I, class T>
inline I to_int(T x, int mode) {  // NaN as the H100 converts it: 0 from f32 to 32 bits, else the sign bit alone
  if (std::isnan(x)) return sizeof(T) == 4 && sizeof(I) == 4 ? I(0) : static_cast<I>(1ull << (8 * sizeof(I) - 1));
  const long double r = mode == 2 ? std::nearbyint(static_cast<long double>(x)) : mode < 0 ? std::floor(static_cast<long double>(x))
                        : mode > 0 ? std::ceil(static_cast<long double>(x)) : std::trunc(static_cast<long double>(x));
  if (r <= static_cast<long double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (r >= static_cast<long double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(r);
}
inline long double erfcx_(long double x) {  // erfc(x) e^(x^2), its asymptotic series past 26
  if (std::isnan(x)) return x;
  if (x < 0) return x < -27 ? INFINITY : 2 * std::exp(x * x) - erfcx_(-x);
  if (x < 26) return std::erfc(x) * std::exp(x * x);
  const long double t = 1 / (2 * x * x);
  long double term = 1, sum = 1;
  for (int k = 1; k < 13; ++k) sum += (term *= -(2 * k - 1) * t);
  return std::isinf(x) ? 0 : sum / (x * std::sqrt(3.141592653589793238462643383279502884L));
}
inline double rcp64h_(double x) {  // of x's high word, the result's high word; subnormals flushed
  unsigned long long b = tl_emu_bits<unsigned long long>(x) & 0xFFFFFFFF00000000ull;
  if ((b & 0x7FF0000000000000ull) == 0) b &= 0x8000000000000000ull;
  unsigned long long r = tl_emu_bits<unsigned long long>(1.0 / tl_emu_bits<double>(b)) & 0xFFFFFFFF00000000ull;
  if ((r & 0x7FF0000000000000ull) == 0) r &= 0x8000000000000000ull;
  return tl_emu_bits<double>(r);
}
inline long double bessel_i(long double x, int n) {  // I_n, n in (0, 1): series to 30, then asymptotic
  const long double a = std::fabs(x);
  if (std::isnan(x)) return x;
  if (std::isinf(a)) return n && x < 0 ? -INFINITY : INFINITY;
  long double value;
  if (a <= 30) {
    long double term = n ? a / 2 : 1, sum = term;
    for (int k = 1; k < 120; ++k) sum += (term *= a * a / 4 / (k * (k + n)));
    value = sum;
  } else {
    long double step = 1, sum = 1;
    for (int k = 1; k < 60; ++k) {
      const long double next = -step * (4.0L * n * n - (2 * k - 1) * (2 * k - 1)) / (8.0L * k * a);
      if (std::fabs(next) >= std::fabs(step)) break;
      sum += (step = next);
    }
    const long double half = std::exp(a / 2);
    value = half * (half / std::sqrt(2 * 3.141592653589793238462643383279502884L * a)) * sum;
  }
  return n && x < 0 ? -value : value;
}
inline long long low24(int v) { return ((static_cast<long long>(v) & 0xFFFFFF) ^ 0x800000) - 0x800000; }
}  // namespace tl_emu
inline float __fmaf_rn(float x, float y, float z) { return std::fma(x, y, z); }
inline float __fmaf_rz(float x, float y, float z) { return tl_emu::fma_dir(x, y, z, 0); }
inline float __fmaf_rd(float x, float y, float z) { return tl_emu::fma_dir(x, y, z, -1); }
inline float __fmaf_ru(float x, float y, float z) { return tl_emu::fma_dir(x, y, z, 1); }
inline double __fma_rn(double x, double y, double z) { return std::fma(x, y, z); }
inline double __fma_rz(double x, double y, double z) { return tl_emu::fma_dir(x, y, z, 0); }
inline double __fma_rd(double x, double y, double z) { return tl_emu::fma_dir(x, y, z, -1); }
inline double __fma_ru(double x, double y, double z) { return tl_emu::fma_dir(x, y, z, 1); }
#define TL_EMU_TO_FLOAT(name, T, S) \
  inline T __##name##_rn(S v) { return static_cast<T>(v); } \
  inline T __##name##_rz(S v) { return tl_emu::to_float<T>(v, 0); } \
  inline T __##name##_rd(S v) { return tl_emu::to_float<T>(v, -1); } \
  inline T __##name##_ru(S v) { return tl_emu::to_float<T>(v, 1); }
#define TL_EMU_TO_INT(name, I, T) \
  inline I __##name##_rn(T v) { return tl_emu::to_int<I>(v, 2); } \
  inline I __##name##_rz(T v) { return tl_emu::to_int<I>(v, 0); } \
  inline I __##name##_rd(T v) { return tl_emu::to_int<I>(v, -1); } \
  inline I __##name##_ru(T v) { return tl_emu::to_int<I>(v, 1); }
inline float __double2float_rn(double v) { return static_cast<float>(v); }
inline float __double2float_rd(double v) { return tl_emu::to_float<float>(v, -1); }
inline float __double2float_ru(double v) { return tl_emu::to_float<float>(v, 1); }
TL_EMU_TO_INT(double2int, int, double)
TL_EMU_TO_INT(double2uint, unsigned, double)
inline int __float2int_rz(float v) { return tl_emu::to_int<int>(v, 0); }
inline int __float2int_rd(float v) { return tl_emu::to_int<int>(v, -1); }
inline int __float2int_ru(float v) { return tl_emu::to_int<int>(v, 1); }
TL_EMU_TO_INT(float2uint, unsigned, float)
TL_EMU_TO_INT(float2ll, long long, float)
TL_EMU_TO_INT(float2ull, unsigned long long, float)
TL_EMU_TO_INT(double2ll, long long, double)
TL_EMU_TO_INT(double2ull, unsigned long long, double)
inline float __int2float_rz(int v) { return tl_emu::to_float<float>(v, 0); }
inline float __int2float_rd(int v) { return tl_emu::to_float<float>(v, -1); }
inline float __int2float_ru(int v) { return tl_emu::to_float<float>(v, 1); }
TL_EMU_TO_FLOAT(uint2float, float, unsigned)
TL_EMU_TO_FLOAT(ll2float, float, long long)
TL_EMU_TO_FLOAT(ull2float, float, unsigned long long)
TL_EMU_TO_FLOAT(ll2double, double, long long)
TL_EMU_TO_FLOAT(ull2double, double, unsigned long long)
#undef TL_EMU_TO_FLOAT
#undef TL_EMU_TO_INT
inline double __int2double_rn(int v) { return v; }
inline double __uint2double_rn(unsigned v) { return v; }
inline double __hiloint2double(int hi, int lo) {
  return tl_emu_bits<double>((static_cast<unsigned long long>(static_cast<unsigned>(hi)) << 32) | static_cast<unsigned>(lo));
}
inline int __double2loint(double x) { return static_cast<int>(tl_emu_bits<unsigned long long>(x) & 0xFFFFFFFFull); }
inline int __double2hiint(double x) { return static_cast<int>(tl_emu_bits<unsigned long long>(x) >> 32); }
inline float __frsqrt_rn(float x) { return static_cast<float>(1.0L / std::sqrt(static_cast<long double>(x))); }
inline double __nv_rcp64h(double x) { return tl_emu::rcp64h_(x); }
inline int __mul24(int x, int y) { return static_cast<int>(static_cast<unsigned>(tl_emu::low24(x) * tl_emu::low24(y))); }
inline unsigned __umul24(unsigned x, unsigned y) { return (x & 0xFFFFFFu) * (y & 0xFFFFFFu); }
inline unsigned __sad(int x, int y, unsigned z) { return static_cast<unsigned>(std::llabs(1ll * x - y)) + z; }
inline unsigned __usad(unsigned x, unsigned y, unsigned z) { return (x > y ? x - y : y - x) + z; }
inline int __hadd(int x, int y) { return static_cast<int>((1ll * x + y) >> 1); }
inline unsigned __uhadd(unsigned x, unsigned y) { return static_cast<unsigned>((1ull * x + y) >> 1); }
inline int __rhadd(int x, int y) { return static_cast<int>((1ll * x + y + 1) >> 1); }
inline unsigned __urhadd(unsigned x, unsigned y) { return static_cast<unsigned>((1ull * x + y + 1) >> 1); }
inline float cyl_bessel_i0f(float x) { return static_cast<float>(tl_emu::bessel_i(x, 0)); }
inline double cyl_bessel_i0(double x) { return static_cast<double>(tl_emu::bessel_i(x, 0)); }
inline float cyl_bessel_i1f(float x) { return static_cast<float>(tl_emu::bessel_i(x, 1)); }
inline double cyl_bessel_i1(double x) { return static_cast<double>(tl_emu::bessel_i(x, 1)); }
inline float erfcxf(float x) { return static_cast<float>(tl_emu::erfcx_(x)); }
inline double erfcx(double x) { return static_cast<double>(tl_emu::erfcx_(x)); }
inline float normcdff(float x) { return static_cast<float>(0.5L * std::erfc(-static_cast<long double>(x) / std::sqrt(2.0L))); }
inline double normcdf(double x) { return static_cast<double>(0.5L * std::erfc(-static_cast<long double>(x) / std::sqrt(2.0L))); }
inline float normcdfinvf(float p) { return static_cast<float>(-std::sqrt(2.0) * tl_emu::erfc_inverse_all(2.0 * p)); }
inline double normcdfinv(double p) { return -std::sqrt(2.0) * tl_emu::erfc_inverse_all(2.0 * p); }

// PTX atomics, as the emulator rewrites them: sequentially consistent read-modify-write.
namespace tl_emu {
template <class T, class F>
inline T atomic_update(T* p, F f) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8, "atomic width");
  using U = std::conditional_t<sizeof(T) == 2, unsigned short, std::conditional_t<sizeof(T) == 4, unsigned, unsigned long long>>;
  std::atomic_ref<U> cell(*reinterpret_cast<U*>(p));
  U seen = cell.load();
  for (;;) {
    const T old = tl_emu_bits<T>(seen);
    const U next = tl_emu_bits<U>(static_cast<T>(f(old)));
    if (cell.compare_exchange_weak(seen, next)) return old;
  }
}
}  // namespace tl_emu

template <class T>
inline T atomicAdd(T* p, T v) {
  return std::atomic_ref<T>(*p).fetch_add(v);
}

inline void __trap() { std::abort(); }
extern "C" inline void __assertfail(const char* msg, const char* file, unsigned line, const char*, size_t) {
  std::fprintf(stderr, "%s:%u: device assertion failed: %s\n", file, line, msg);
  std::abort();
}

namespace tl_emu {
// Run ``kernel`` over the grid: one std::thread per CUDA thread, blocks one after another.
inline void run(tl_emu_dim3 grid, unsigned threads, const std::function<void()>& kernel) {
  grid_dim = grid;
  block_dim = tl_emu_dim3{threads, 1, 1};
  const unsigned long long blocks = 1ull * grid.x * grid.y * grid.z;
  unsigned long long next = 0;
  auto reset = [&]() noexcept {
    block_sync = std::make_unique<std::barrier<>>(threads);
    warp_sync.clear();
    for (unsigned w = 0; w < (threads + 31) / 32; ++w) warp_sync.push_back(std::make_unique<std::barrier<>>(32));
    const unsigned long long b = next++;
    block_index = tl_emu_dim3{static_cast<unsigned>(b % grid.x), static_cast<unsigned>(b / grid.x % grid.y),
                              static_cast<unsigned>(b / grid.x / grid.y)};
  };
  reset();
  std::barrier between(threads, reset);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      thread_index = tl_emu_dim3{t, 0, 0};
      for (unsigned long long b = 0; b < blocks; ++b) {
        kernel();
        block_sync->arrive_and_drop();
        warp_sync[t / 32]->arrive_and_drop();
        between.arrive_and_wait();
      }
    });
  }
  for (auto& th : pool) th.join();
}
}  // namespace tl_emu

// llrint and llround as libdevice computes them (cvt.rni.s64, and llround's add.rz then cvt.rzi):
// saturated to the i64 range, NaN the sign bit alone (llroundf tests for it and returns INT64_MIN);
// x86's conversions gave INT64_MIN past 2**63 too. Macros, so the host's libm declarations stay.
namespace tl_emu {
template <class T>
inline long long round_away(T x) { return to_int<long long>(std::round(x), 0); }
}  // namespace tl_emu
#define llrintf(x) tl_emu::to_int<long long>(static_cast<float>(x), 2)
#define llrint(x) tl_emu::to_int<long long>(static_cast<double>(x), 2)
#define llroundf(x) tl_emu::round_away(static_cast<float>(x))
#define llround(x) tl_emu::round_away(static_cast<double>(x))
