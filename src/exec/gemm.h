// Single-precision matrix multiplication for Conv, Gemm and MatMul, written here rather
// than taken from a BLAS so that it allocates nothing (every byte it touches comes from
// the interpreter) and sums in one fixed order (results do not depend on where buffers
// sit, nor on the run). On x86-64 an AVX2+FMA clone is chosen at load time when the CPU
// has it; the generic clone gives the same order of operations but rounds differently
// (no fused multiply-add), so results are reproducible per machine.
#pragma once

#include <cstdint>

namespace memledger::exec {

// C[M,N] = (accumulate ? C : 0) + A·B with element (i,k) of A at a[i·a_rs + k·a_cs],
// (k,j) of B at b[k·b_rs + j·b_cs], and C dense rows ldc apart. C must not overlap A or B.
// Fast paths: B with contiguous rows (b_cs = 1), or A rows and B columns contiguous
// (a_cs = 1, b_rs = 1: the transposed-B form of fully connected layers).
void gemm(int64_t M, int64_t N, int64_t K, const float* a, int64_t a_rs, int64_t a_cs, const float* b, int64_t b_rs,
          int64_t b_cs, float* c, int64_t ldc, bool accumulate);

}  // namespace memledger::exec
