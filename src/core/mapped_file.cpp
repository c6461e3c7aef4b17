#include "memledger/core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "memledger/core/error.h"

namespace memledger {

std::shared_ptr<MappedFile> MappedFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("{}: cannot open: {}", path, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail("{}: not a regular file", path);
  }
  const auto size = static_cast<size_t>(st.st_size);
  void* data = nullptr;
  if (size > 0) {
    data = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (data == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      fail("{}: cannot map {} bytes: {}", path, size, std::strerror(err));
    }
  }
  ::close(fd);  // the mapping keeps the file
  return std::shared_ptr<MappedFile>(new MappedFile(path, static_cast<std::byte*>(data), size));
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(data_, size_);
}

std::span<std::byte> MappedFile::bytes(int64_t offset, int64_t length) const {
  ML_CHECK(offset >= 0 && length >= 0 && static_cast<size_t>(offset) + static_cast<size_t>(length) <= size_,
           "mapped range {}+{} outside {} bytes of {}", offset, length, size_, path_);
  return {data_ + offset, static_cast<size_t>(length)};
}

int64_t MappedFile::release(std::span<const std::byte> range) const {
  ML_CHECK(range.data() >= data_ && range.data() + range.size() <= data_ + size_, "release outside the mapping of {}",
           path_);
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(range.data());
  const uintptr_t first = (begin + page - 1) / page * page;
  const uintptr_t last = (begin + range.size()) / page * page;
  if (range.empty() || last <= first) return 0;
  if (::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED) != 0) return 0;
  return static_cast<int64_t>(last - first);
}

void MappedFile::copy_out(std::span<const std::byte> range, std::span<std::byte> to) const {
  ML_CHECK(range.size() == to.size(), "copy of {} mapped bytes into {}", range.size(), to.size());
  constexpr size_t kSlice = size_t{4} << 20;
  for (size_t at = 0; at < range.size(); at += kSlice) {
    const size_t n = std::min(kSlice, range.size() - at);
    std::memcpy(to.data() + at, range.data() + at, n);
    release(range.subspan(at, n));  // the pages wholly inside this slice
  }
  release(range);  // and those straddling two slices
}

}  // namespace memledger
