#include "memledger/core/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "memledger/core/error.h"

namespace memledger {
namespace {

std::string label(const std::string& path, std::string_view what) {
  return what.empty() ? path : fmt::format("{} {}", what, path);
}

// A file descriptor closed on every path out.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Opens without blocking (a FIFO with no writer would block open()) and checks the kind
// and size on the open descriptor, so what is checked is what is read.
int64_t open_checked(const std::string& path, int64_t max_bytes, std::string_view what, Fd& fd) {
  fd.fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd.fd < 0) {
    const int e = errno;
    if (e == ENOENT || e == ENOTDIR) fail("{}: no such file", label(path, what));
    fail("{}: cannot open: {}", label(path, what), std::strerror(e));
  }
  struct stat st {};
  if (::fstat(fd.fd, &st) != 0) fail("{}: cannot read: {}", label(path, what), std::strerror(errno));
  if (!S_ISREG(st.st_mode)) fail("{}: is {}, not a regular file", label(path, what), kind_of(st.st_mode));
  if (st.st_size > max_bytes)
    fail("{}: the file is {} bytes, more than the bound of {}", label(path, what), st.st_size, max_bytes);
  return st.st_size;
}

}  // namespace

int64_t check_input_file(const std::string& path, int64_t max_bytes, std::string_view what) {
  Fd fd;
  return open_checked(path, max_bytes, what, fd);
}

std::string read_input_file(const std::string& path, int64_t max_bytes, std::string_view what) {
  Fd fd;
  const int64_t size = open_checked(path, max_bytes, what, fd);
  std::string bytes(static_cast<size_t>(size), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(fd.fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("{}: read error: {}", label(path, what), std::strerror(errno));
    if (n == 0) fail("{}: the file shrank while it was read", label(path, what));
    done += static_cast<size_t>(n);
  }
  char extra;
  if (::read(fd.fd, &extra, 1) > 0) fail("{}: the file grew while it was read", label(path, what));
  return bytes;
}

}  // namespace memledger
