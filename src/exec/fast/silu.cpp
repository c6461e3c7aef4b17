#include "exec/fast/silu.h"

#include <immintrin.h>

#include "memledger/core/error.h"

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_ps(), which its
// -Wmaybe-uninitialized reports once they are inlined.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace memledger::exec::fast {
namespace {

#define ML_AVX512 __attribute__((target("avx512f")))
#define ML_AVX2 __attribute__((target("avx2,fma")))

ML_AVX512 inline __m512 silu16(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  // e^-x = 2^k·e^r: k = round(-x·log2 e), r = -x - k·ln 2 with ln 2 in two parts (so that r
  // keeps its bits for large |x|), |r| ≤ ln 2 / 2. -x is clamped to where 2^k stays a
  // normal float; NaN becomes the bound (max and min return their second operand then)
  // and comes back through the x of x / (1 + e^-x).
  const __m512 bound = _mm512_set1_ps(86.0f);
  const __m512 m = _mm512_min_ps(
      _mm512_max_ps(_mm512_sub_ps(_mm512_setzero_ps(), x), _mm512_sub_ps(_mm512_setzero_ps(), bound)), bound);
  const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(m, _mm512_set1_ps(1.44269504f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693145752f), m);  // ln 2's first 16 bits: k·that is exact
  r = _mm512_fnmadd_ps(k, _mm512_set1_ps(1.42860677e-6f), r);
  // e^r by its Taylor polynomial to degree 6 (error under r^7/7! < 1.3e-7 relative).
  __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(1.0f / 720), r, _mm512_set1_ps(1.0f / 120));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, one);
  p = _mm512_fmadd_ps(p, r, one);
  const __m512 y = _mm512_div_ps(x, _mm512_add_ps(one, _mm512_scalef_ps(p, k)));
  // Below -86, x·sigmoid(x) is under 1e-35: -0, as x / (1 + e^-x) in float becomes once
  // e^-x overflows (and -inf gives -0, not NaN).
  return _mm512_mask_mov_ps(y, _mm512_cmp_ps_mask(x, _mm512_sub_ps(_mm512_setzero_ps(), bound), _CMP_LT_OQ),
                            _mm512_set1_ps(-0.0f));
}

ML_AVX512 void silu_avx512(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, silu16(_mm512_loadu_ps(x + i)));
  if (i < n) {
    const auto mask = static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(y + i, mask, silu16(_mm512_maskz_loadu_ps(mask, x + i)));
  }
}

// The AVX-512 loop's operations, 8 wide: round to nearest for roundscale, and 2^k built in
// the exponent bits for scalef (k within ±124 here, so 2^k and p·2^k are normal floats and
// the product is exact, as scalef's).
ML_AVX2 inline __m256 silu8(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 bound = _mm256_set1_ps(86.0f);
  const __m256 m = _mm256_min_ps(
      _mm256_max_ps(_mm256_sub_ps(_mm256_setzero_ps(), x), _mm256_sub_ps(_mm256_setzero_ps(), bound)), bound);
  const __m256 k =
      _mm256_round_ps(_mm256_mul_ps(m, _mm256_set1_ps(1.44269504f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693145752f), m);
  r = _mm256_fnmadd_ps(k, _mm256_set1_ps(1.42860677e-6f), r);
  __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(1.0f / 720), r, _mm256_set1_ps(1.0f / 120));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, one);
  p = _mm256_fmadd_ps(p, r, one);
  const __m256 two_k =
      _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23));
  const __m256 y = _mm256_div_ps(x, _mm256_add_ps(one, _mm256_mul_ps(p, two_k)));
  const __m256 below = _mm256_cmp_ps(x, _mm256_sub_ps(_mm256_setzero_ps(), bound), _CMP_LT_OQ);
  return _mm256_blendv_ps(y, _mm256_set1_ps(-0.0f), below);
}

ML_AVX2 void silu_avx2(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, silu8(_mm256_loadu_ps(x + i)));
  if (i < n) {
    // Lanes below n - i get all bits set: maskload reads and maskstore writes only those.
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n - i)), lanes);
    _mm256_maskstore_ps(y + i, mask, silu8(_mm256_maskload_ps(x + i, mask)));
  }
}

}  // namespace

bool silu_available() { return effective_isa() != Isa::kOlder; }

void silu(const float* x, float* y, int64_t n) { silu(x, y, n, effective_isa()); }

void silu(const float* x, float* y, int64_t n, Isa isa) {
  if (isa == Isa::kAvx512) {
    ML_CHECK(__builtin_cpu_supports("avx512f"), "the AVX-512 SiLU loop on a processor without AVX-512F");
    silu_avx512(x, y, n);
    return;
  }
  ML_CHECK(isa == Isa::kAvx2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"),
           "the fast SiLU loop asked for on a processor without AVX2 and FMA");
  silu_avx2(x, y, n);
}

}  // namespace memledger::exec::fast
