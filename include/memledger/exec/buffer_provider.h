// Where the interpreter's activation and workspace memory comes from. The interpreter
// never allocates a value or a workspace itself: it asks a provider, so that the same run
// can happen on the heap (HeapBufferProvider) or inside one planned arena with guard bytes
// (the arena runner), and a check can run after every node.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>

#include "memledger/ir/ids.h"

namespace memledger {

class BufferProvider {
 public:
  virtual ~BufferProvider() = default;
  // The buffer for `value` (a graph input or a node output), `bytes` long as the device
  // layout sizes it. Called once per value, before its producer runs (inputs: before the
  // first node). It stays valid until release(value). May be the buffer of an input the
  // producing kernel declared overwritable (in-place); its contents are then that input's.
  virtual std::span<std::byte> value_buffer(ValueId value, int64_t bytes) = 0;
  // The workspace of `node`, exactly the bytes its kernel contract declares (never called
  // for 0). Valid until release_workspace(node), right after the node ran.
  virtual std::span<std::byte> workspace(NodeId node, int64_t bytes) = 0;
  virtual void release(ValueId value) = 0;
  virtual void release_workspace(NodeId node) = 0;
  // Hands `from`'s buffer, which nothing reads any more, to `to` instead of a buffer of its
  // own (as if `to` had been given it and `from` released), when the provider places
  // buffers itself; false (nothing done) where a plan places them.
  virtual bool move_buffer(ValueId /*from*/, ValueId /*to*/) { return false; }
};

// Every buffer its own heap allocation, aligned to 64 bytes (the host profile's alignment),
// freed on release. Tracks the bytes held now and at most, for reports and tests.
// On glibc the first provider asks malloc to keep freed blocks of up to 256 MiB in its
// heap (no mmap per block, no trimming): otherwise each run of a model maps fresh pages for
// its large activations and faults them in again (mobilenet_v2's fast run: 9.1 ms CPU
// instead of 4.7, the difference being page faults), where a run in a planned arena does not.
class HeapBufferProvider : public BufferProvider {
 public:
  HeapBufferProvider();
  std::span<std::byte> value_buffer(ValueId value, int64_t bytes) override;
  std::span<std::byte> workspace(NodeId node, int64_t bytes) override;
  void release(ValueId value) override;
  void release_workspace(NodeId node) override;
  bool move_buffer(ValueId from, ValueId to) override;

  int64_t live_bytes() const { return live_bytes_; }
  int64_t peak_bytes() const { return peak_bytes_; }

 private:
  struct Block {
    std::unique_ptr<std::byte[]> storage;
    std::span<std::byte> bytes;
  };
  std::span<std::byte> allocate(Block& block, int64_t bytes);
  void free(Block& block);

  std::unordered_map<ValueId, Block> values_;
  std::unordered_map<NodeId, Block> workspaces_;
  int64_t live_bytes_ = 0;
  int64_t peak_bytes_ = 0;
};

}  // namespace memledger
