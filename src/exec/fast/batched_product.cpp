#include "exec/fast/batched_product.h"

#include <immintrin.h>

#include <algorithm>

#include "exec/fast/isa.h"
#include "exec/fast/parallel.h"

namespace memledger::exec::fast {
namespace {

#define ML_AVX2 __attribute__((target("avx2,fma")))

// The mask of the first `n` (< 8) lanes.
ML_AVX2 inline __m256i lanes(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// R rows (1 to 4) of y from row i, columns [j, j + 16) of which `width` are in the matrix:
// y[r][j..] = Σ_k a[r][k]·b[k][j..], k in order, each by one fused multiply-add.
template <int R>
ML_AVX2 void block(const float* a, const float* b, float* y, int64_t K, int64_t N, int64_t j, int64_t width) {
  __m256 lo[R], hi[R];
  for (int r = 0; r < R; ++r) lo[r] = hi[r] = _mm256_setzero_ps();
  const __m256i mask_lo = lanes(width < 8 ? width : 8), mask_hi = lanes(width > 8 ? width - 8 : 0);
  const bool full = width == 16;
  for (int64_t k = 0; k < K; ++k) {
    const float* row = b + k * N + j;
    const __m256 b_lo = full ? _mm256_loadu_ps(row) : _mm256_maskload_ps(row, mask_lo);
    const __m256 b_hi =
        full ? _mm256_loadu_ps(row + 8) : (width > 8 ? _mm256_maskload_ps(row + 8, mask_hi) : _mm256_setzero_ps());
    for (int r = 0; r < R; ++r) {
      const __m256 x = _mm256_broadcast_ss(a + r * K + k);
      lo[r] = _mm256_fmadd_ps(x, b_lo, lo[r]);
      hi[r] = _mm256_fmadd_ps(x, b_hi, hi[r]);
    }
  }
  for (int r = 0; r < R; ++r) {
    float* out = y + r * N + j;
    if (full) {
      _mm256_storeu_ps(out, lo[r]);
      _mm256_storeu_ps(out + 8, hi[r]);
    } else {
      _mm256_maskstore_ps(out, mask_lo, lo[r]);
      if (width > 8) _mm256_maskstore_ps(out + 8, mask_hi, hi[r]);
    }
  }
}

// Rows [begin, end) of one product y [M, N] = a [M, K]·b [K, N].
ML_AVX2 void rows(const float* a, const float* b, float* y, int64_t begin, int64_t end, int64_t K, int64_t N) {
  for (int64_t i = begin; i < end;) {
    const int64_t left = end - i;
    for (int64_t j = 0; j < N; j += 16) {
      const int64_t width = N - j < 16 ? N - j : 16;
      const float* ai = a + i * K;
      float* yi = y + i * N;
      if (left >= 4)
        block<4>(ai, b, yi, K, N, j, width);
      else if (left == 3)
        block<3>(ai, b, yi, K, N, j, width);
      else if (left == 2)
        block<2>(ai, b, yi, K, N, j, width);
      else
        block<1>(ai, b, yi, K, N, j, width);
    }
    i += left >= 4 ? 4 : left;
  }
}

// The offset of batch `index` (y's batches in row-major order) in an operand of `dims`
// whose matrices hold `matrix` elements (its batch axes are y's or 1).
int64_t batch_offset(const std::vector<int64_t>& dims, const std::vector<int64_t>& y, int64_t index, int64_t matrix) {
  int64_t offset = 0, stride = matrix;
  for (size_t axis = y.size() - 2; axis-- > 0;) {
    const int64_t coordinate = index % y[axis];
    index /= y[axis];
    if (dims[axis] != 1) offset += coordinate * stride;
    stride *= dims[axis];
  }
  return offset;
}

}  // namespace

bool batched_product_available() { return effective_isa() != Isa::kOlder; }

void batched_product(const BatchedProduct& s, const float* a, const float* b, float* y) {
  const size_t rank = s.y.size();
  const int64_t M = s.y[rank - 2], N = s.y[rank - 1], K = s.a[rank - 1];
  int64_t batches = 1;
  for (size_t i = 0; i + 2 < rank; ++i) batches *= s.y[i];
  // Work items of four rows of one batch's product, at least 64 Ki multiply-adds to a grain.
  const int64_t blocks = (M + 3) / 4, grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, 4 * K * N));
  parallel_ranges(batches * blocks, grain, [&](int64_t first, int64_t last, int) {
    for (int64_t item = first; item < last; ++item) {
      const int64_t batch = item / blocks, begin = (item % blocks) * 4, end = std::min(M, begin + 4);
      rows(a + batch_offset(s.a, s.y, batch, M * K), b + batch_offset(s.b, s.y, batch, K * N), y + batch * M * N, begin,
           end, K, N);
    }
  });
}

}  // namespace memledger::exec::fast
