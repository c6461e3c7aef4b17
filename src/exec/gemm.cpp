#include "gemm.h"

#include <algorithm>
#include <cstring>

namespace memledger::exec {
namespace {

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#define ML_GEMM_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define ML_GEMM_CLONES
#endif

typedef float v8f __attribute__((vector_size(32)));

constexpr int64_t kKc = 256;  // depth of one block: a 256×16 panel of B stays in L1
constexpr int kNr = 16;       // columns per register tile (two 8-wide vectors)

// One register tile: rows [0,MR) × columns [0,16) of C over a depth-kc block.
template <int MR>
inline __attribute__((always_inline)) void tile_nn(int64_t kc, const float* a, int64_t a_rs, int64_t a_cs,
                                                   const float* b, int64_t b_rs, float* c, int64_t ldc, bool load_c) {
  // Fully unrolled (also at -O2) so that the 2·MR accumulators live in registers.
  v8f c0[MR], c1[MR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) c0[r] = c1[r] = v8f{};
  for (int64_t k = 0; k < kc; ++k) {
    v8f b0, b1;
    std::memcpy(&b0, b + k * b_rs, sizeof b0);
    std::memcpy(&b1, b + k * b_rs + 8, sizeof b1);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const float av = a[r * a_rs + k * a_cs];
      c0[r] += av * b0;
      c1[r] += av * b1;
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    float* row = c + r * ldc;
    if (load_c) {
      v8f o0, o1;
      std::memcpy(&o0, row, sizeof o0);
      std::memcpy(&o1, row + 8, sizeof o1);
      c0[r] = o0 + c0[r];
      c1[r] = o1 + c1[r];
    }
    std::memcpy(row, &c0[r], sizeof c0[r]);
    std::memcpy(row + 8, &c1[r], sizeof c1[r]);
  }
}

inline __attribute__((always_inline)) void tile_nn_rows(int rows, int64_t kc, const float* a, int64_t a_rs,
                                                        int64_t a_cs, const float* b, int64_t b_rs, float* c,
                                                        int64_t ldc, bool load_c) {
  switch (rows) {
    case 6:
      return tile_nn<6>(kc, a, a_rs, a_cs, b, b_rs, c, ldc, load_c);
    case 5:
      return tile_nn<5>(kc, a, a_rs, a_cs, b, b_rs, c, ldc, load_c);
    case 4:
      return tile_nn<4>(kc, a, a_rs, a_cs, b, b_rs, c, ldc, load_c);
    case 3:
      return tile_nn<3>(kc, a, a_rs, a_cs, b, b_rs, c, ldc, load_c);
    case 2:
      return tile_nn<2>(kc, a, a_rs, a_cs, b, b_rs, c, ldc, load_c);
    default:
      return tile_nn<1>(kc, a, a_rs, a_cs, b, b_rs, c, ldc, load_c);
  }
}

// B rows contiguous. Blocks of depth kKc; within one, a 16-column panel of B is swept by
// every 6-row tile of A. Each C element sums its depth blocks in order, each block in order.
ML_GEMM_CLONES
void gemm_nn(int64_t M, int64_t N, int64_t K, const float* a, int64_t a_rs, int64_t a_cs, const float* b, int64_t b_rs,
             float* c, int64_t ldc, bool accumulate) {
  const int64_t n_full = N / kNr * kNr;
  for (int64_t k0 = 0; k0 < K; k0 += kKc) {
    const int64_t kc = std::min(kKc, K - k0);
    const bool load_c = accumulate || k0 > 0;
    for (int64_t j0 = 0; j0 < n_full; j0 += kNr) {
      for (int64_t i0 = 0; i0 < M; i0 += 6) {
        const int rows = static_cast<int>(std::min<int64_t>(6, M - i0));
        tile_nn_rows(rows, kc, a + i0 * a_rs + k0 * a_cs, a_rs, a_cs, b + k0 * b_rs + j0, b_rs, c + i0 * ldc + j0, ldc,
                     load_c);
      }
    }
    if (n_full == N) continue;
    // The last N mod 16 columns: B's tail copied into a zero-padded 16-wide panel and C's
    // into a padded tile, so they run on the same register tiles (a scalar tail was a third
    // of the time of a narrow Conv block).
    const int64_t tail = N - n_full;
    alignas(32) float panel[kKc * kNr];
    for (int64_t k = 0; k < kc; ++k) {
      const float* src = b + (k0 + k) * b_rs + n_full;
      std::copy(src, src + tail, panel + k * kNr);
      std::fill(panel + k * kNr + tail, panel + (k + 1) * kNr, 0.0f);
    }
    for (int64_t i0 = 0; i0 < M; i0 += 6) {
      const int rows = static_cast<int>(std::min<int64_t>(6, M - i0));
      alignas(32) float out[6 * kNr] = {};
      for (int r = 0; r < rows && load_c; ++r) std::copy_n(c + (i0 + r) * ldc + n_full, tail, out + r * kNr);
      tile_nn_rows(rows, kc, a + i0 * a_rs + k0 * a_cs, a_rs, a_cs, panel, kNr, out, kNr, load_c);
      for (int r = 0; r < rows; ++r) std::copy_n(out + r * kNr, tail, c + (i0 + r) * ldc + n_full);
    }
  }
}

// A rows and B columns contiguous: each C element is a dot product of two contiguous
// vectors, summed in eight lanes then reduced in a fixed order.
ML_GEMM_CLONES
void gemm_nt(int64_t M, int64_t N, int64_t K, const float* a, int64_t a_rs, const float* b, int64_t b_cs, float* c,
             int64_t ldc, bool accumulate) {
  const int64_t k_full = K / 8 * 8;
  for (int64_t i = 0; i < M; ++i) {
    const float* arow = a + i * a_rs;
    int64_t j = 0;
    for (; j + 4 <= N; j += 4) {
      v8f acc[4] = {};
      const float* bcol[4] = {b + j * b_cs, b + (j + 1) * b_cs, b + (j + 2) * b_cs, b + (j + 3) * b_cs};
      for (int64_t k = 0; k < k_full; k += 8) {
        v8f av;
        std::memcpy(&av, arow + k, sizeof av);
        for (int q = 0; q < 4; ++q) {
          v8f bv;
          std::memcpy(&bv, bcol[q] + k, sizeof bv);
          acc[q] += av * bv;
        }
      }
      for (int q = 0; q < 4; ++q) {
        float sum =
            ((acc[q][0] + acc[q][1]) + (acc[q][2] + acc[q][3])) + ((acc[q][4] + acc[q][5]) + (acc[q][6] + acc[q][7]));
        for (int64_t k = k_full; k < K; ++k) sum += arow[k] * bcol[q][k];
        float& out = c[i * ldc + j + q];
        out = accumulate ? out + sum : sum;
      }
    }
    for (; j < N; ++j) {
      const float* bcol = b + j * b_cs;
      v8f acc = {};
      for (int64_t k = 0; k < k_full; k += 8) {
        v8f av, bv;
        std::memcpy(&av, arow + k, sizeof av);
        std::memcpy(&bv, bcol + k, sizeof bv);
        acc += av * bv;
      }
      float sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
      for (int64_t k = k_full; k < K; ++k) sum += arow[k] * bcol[k];
      float& out = c[i * ldc + j];
      out = accumulate ? out + sum : sum;
    }
  }
}

}  // namespace

void gemm(int64_t M, int64_t N, int64_t K, const float* a, int64_t a_rs, int64_t a_cs, const float* b, int64_t b_rs,
          int64_t b_cs, float* c, int64_t ldc, bool accumulate) {
  if (M == 0 || N == 0) return;
  if (K == 0) {
    if (!accumulate)
      for (int64_t i = 0; i < M; ++i) std::fill(c + i * ldc, c + i * ldc + N, 0.0f);
    return;
  }
  if (b_cs == 1) return gemm_nn(M, N, K, a, a_rs, a_cs, b, b_rs, c, ldc, accumulate);
  if (a_cs == 1 && b_rs == 1) return gemm_nt(M, N, K, a, a_rs, b, b_cs, c, ldc, accumulate);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float sum = 0;
      for (int64_t k = 0; k < K; ++k) sum += a[i * a_rs + k * a_cs] * b[k * b_rs + j * b_cs];
      float& out = c[i * ldc + j];
      out = accumulate ? out + sum : sum;
    }
}

}  // namespace memledger::exec
