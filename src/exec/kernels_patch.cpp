// The kernels of patch-based execution. memledger.WritePatch (ir/write_patch.h) copies a
// patch into the stage output at its place. The output may be input 0's buffer (its op table record says so,
// and the planner makes it so wherever input 0 has no later reader): then only the patch's
// bytes are written. Otherwise input 0 is copied first, or, for the first patch, y is zeroed.
// memledger.AccumulatePool (ir/accumulate_pool.h) adds a row strip into a pool's sums in
// the reference GlobalAveragePool's order (pool_sum.h).
#include <cstring>

#include "kernel.h"
#include "memledger/ir/accumulate_pool.h"
#include "memledger/ir/write_patch.h"
#include "pool_sum.h"

namespace memledger::exec {
namespace {

void write_patch(KernelContext& ctx) {
  OutputView& y = ctx.out();
  const int eb = host_element_bytes(y.dtype);
  const size_t bytes = static_cast<size_t>(y.elements() * eb);
  if (!ctx.has_input(0)) {
    std::memset(y.data, 0, bytes);
  } else if (ctx.in(0).data != y.data) {
    std::memcpy(y.data, ctx.in(0).data, bytes);
  }
  const InputView& patch = ctx.in(1);
  const std::vector<int64_t> starts = ctx.node.ints_attr("starts");
  const std::vector<int64_t> strides = dense_strides(y.shape);
  int64_t offset = 0;
  for (size_t a = 0; a < starts.size(); ++a) offset += starts[a] * strides[a];
  strided_copy(y.data + offset * eb, strides, patch.data, dense_strides(patch.shape), patch.shape, eb);
}

void accumulate_pool(KernelContext& ctx) {
  const InputView& x = ctx.in(0);
  const int64_t planes = x.shape.at(0) * x.shape.at(1);
  const int64_t size = planes == 0 ? 0 : x.elements() / planes;
  const double* sums = ctx.has_input(1) ? ctx.in(1).as<double>() : nullptr;
  const int64_t count = ctx.node.int_attr("count", 0);
  const float* px = x.as<float>();
  for (int64_t p = 0; p < planes; ++p) {
    const double sum = add_plane(sums ? sums[p] : 0.0, px + p * size, size);
    if (count > 0) {
      ctx.out().as<float>()[p] = plane_mean(sum, count);
    } else {
      ctx.out().as<double>()[p] = sum;
    }
  }
}

}  // namespace

void add_patch_kernels(KernelTable& t) {
  t.emplace_back(kernel_key(kMemledgerDomain, kWritePatchOp), Kernel{.check = check_write_patch, .run = write_patch});
  t.emplace_back(kernel_key(kMemledgerDomain, kAccumulatePoolOp),
                 Kernel{.check = check_accumulate_pool, .run = accumulate_pool});
}

}  // namespace memledger::exec
