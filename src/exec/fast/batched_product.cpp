#include "exec/fast/batched_product.h"

#include "exec/fast/parallel.h"
#include "exec/gemm.h"

namespace memledger::exec::fast {
namespace {

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

void batched_product(const BatchedProduct& s, const float* a, const float* b, float* y) {
  const size_t rank = s.y.size();
  const int64_t M = s.y[rank - 2], N = s.y[rank - 1], K = s.a[rank - 1];
  int64_t batches = 1;
  for (size_t i = 0; i + 2 < rank; ++i) batches *= s.y[i];
  // A batch at a time, as the reference MatMul calls the product (exec/kernels_matmul.cpp).
  parallel_ranges(batches, 1, [&](int64_t first, int64_t last, int) {
    for (int64_t t = first; t < last; ++t)
      gemm(M, N, K, a + batch_offset(s.a, s.y, t, M * K), K, 1, b + batch_offset(s.b, s.y, t, K * N), N, 1,
           y + t * M * N, N, false);
  });
}

}  // namespace memledger::exec::fast
