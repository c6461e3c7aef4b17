// A read-only view of a whole file through mmap, for weights: a model's tensors are read
// from the page cache where they lie instead of being copied onto the heap, and the pages
// of a tensor nobody reads any more can be handed back to the kernel (release_pages),
// which reads them again from the file if they are touched later.
//
// The mapping is private and writable: a tensor viewing it may be written (its pages are
// then copied, for this process only); the file itself never changes. Peak RSS still
// counts every page a run touches, so a mapped model that reads all its weights has them
// all resident; what mapping saves is the heap copy beside the page cache.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace memledger {

class MappedFile {
 public:
  // Maps the regular file `path` (an Error naming it when it cannot be opened or mapped).
  static std::shared_ptr<MappedFile> open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::string& path() const { return path_; }
  int64_t size() const { return static_cast<int64_t>(size_); }
  // Bytes [offset, offset + length) of the file; the caller has checked the range.
  std::span<std::byte> bytes(int64_t offset, int64_t length) const;
  // Hands the whole pages inside `range` (a part of this mapping) back to the kernel
  // (MADV_DONTNEED: our copy is dropped, the next touch reads the file again). Only for
  // ranges nobody has written: written pages would lose the writes. Returns the bytes.
  int64_t release(std::span<const std::byte> range) const;
  // Copies `range` (a part of this mapping nobody has written) into `to` (as many bytes),
  // a slice at a time, handing each slice's pages back after it: the bytes are resident
  // once, in `to`, not as the file's pages and the copy together. For values that cannot
  // serve in place (misaligned for their type); the next touch of `range` reads the file.
  void copy_out(std::span<const std::byte> range, std::span<std::byte> to) const;

 private:
  MappedFile(std::string path, std::byte* data, size_t size) : path_(std::move(path)), data_(data), size_(size) {}
  std::string path_;
  std::byte* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace memledger
