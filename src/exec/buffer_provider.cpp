#include "memledger/exec/buffer_provider.h"

#include <algorithm>
#include <mutex>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "memledger/core/error.h"

namespace memledger {
namespace {
constexpr size_t kAlignment = 64;
}

HeapBufferProvider::HeapBufferProvider() {
#if defined(__GLIBC__)
  static std::once_flag once;
  std::call_once(once, [] {
    constexpr int kKeep = 256 << 20;
    mallopt(M_MMAP_THRESHOLD, kKeep);
    mallopt(M_TRIM_THRESHOLD, kKeep);
  });
#endif
}

std::span<std::byte> HeapBufferProvider::allocate(Block& block, int64_t bytes) {
  ML_CHECK(bytes >= 0, "negative buffer size");
  const size_t n = static_cast<size_t>(bytes);
  block.storage.reset(new std::byte[n + kAlignment]);
  auto address = reinterpret_cast<uintptr_t>(block.storage.get());
  const size_t shift = (kAlignment - address % kAlignment) % kAlignment;
  block.bytes = {block.storage.get() + shift, n};
  live_bytes_ += bytes;
  peak_bytes_ = std::max(peak_bytes_, live_bytes_);
  return block.bytes;
}

void HeapBufferProvider::free(Block& block) {
  live_bytes_ -= static_cast<int64_t>(block.bytes.size());
  block.storage.reset();
}

std::span<std::byte> HeapBufferProvider::value_buffer(ValueId value, int64_t bytes) {
  Block& block = values_[value];
  ML_CHECK(!block.storage, "value {} given a buffer twice", value.index);
  return allocate(block, bytes);
}

std::span<std::byte> HeapBufferProvider::workspace(NodeId node, int64_t bytes) {
  Block& block = workspaces_[node];
  ML_CHECK(!block.storage, "node {} given a workspace twice", node.index);
  return allocate(block, bytes);
}

void HeapBufferProvider::release(ValueId value) {
  auto it = values_.find(value);
  ML_CHECK(it != values_.end(), "release of value {} that has no buffer", value.index);
  free(it->second);
  values_.erase(it);
}

bool HeapBufferProvider::move_buffer(ValueId from, ValueId to) {
  auto it = values_.find(from);
  ML_CHECK(it != values_.end(), "move of value {} that has no buffer", from.index);
  ML_CHECK(!values_.count(to), "value {} given a buffer twice", to.index);
  Block block = std::move(it->second);
  values_.erase(it);
  values_[to] = std::move(block);
  return true;
}

void HeapBufferProvider::release_workspace(NodeId node) {
  auto it = workspaces_.find(node);
  ML_CHECK(it != workspaces_.end(), "release of a workspace node {} does not have", node.index);
  free(it->second);
  workspaces_.erase(it);
}

}  // namespace memledger
