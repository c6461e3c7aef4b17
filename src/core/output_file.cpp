#include "memledger/core/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "memledger/core/error.h"

namespace memledger {
namespace fs = std::filesystem;
namespace {

fs::path normalised(const fs::path& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(path, ec);
  if (ec) p = fs::absolute(path, ec).lexically_normal();
  return p;
}

std::string named(std::string_view flag, const fs::path& path) {
  return flag.empty() ? path.string() : fmt::format("{} {}", flag, path.string());
}

const char* special_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

fs::path folder_of(const fs::path& path) {
  const fs::path parent = path.parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

}  // namespace

OutputSet::~OutputSet() {
  if (done_) return;
  for (const Output& o : outputs_)
    if (!o.temporary.empty()) ::unlink(o.temporary.c_str());
  for (auto it = created_folders_.rbegin(); it != created_folders_.rend(); ++it) ::rmdir(it->c_str());
}

void OutputSet::protect_input(const fs::path& path) {
  Input input{.path = normalised(path)};
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    input.exists = true;
    input.device = st.st_dev;
    input.inode = st.st_ino;
  }
  inputs_.push_back(input);
  for (size_t i = 0; i < outputs_.size(); ++i) check_output(i);
}

OutputSet::Output* OutputSet::find(const fs::path& path) {
  const auto it = by_path_.find(path.string());
  return it == by_path_.end() ? nullptr : &outputs_[it->second];
}

OutputSet::Identity OutputSet::check_output(size_t index) const {
  const Output& o = outputs_[index];
  const std::string name = named(o.flag, o.path);
  if (o.path.empty() || o.path.filename().empty() || o.path.filename() == "." || o.path.filename() == "..")
    fail("{}: names a folder, not a file", name);
  Identity identity{.canonical = normalised(o.path).string()};
  struct stat st {};
  if (::lstat(o.path.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode))
      fail("{}: is a symbolic link; refusing to replace it (name the file it points to instead)", name);
    if (S_ISDIR(st.st_mode)) fail("{}: is a directory", name);
    if (!S_ISREG(st.st_mode)) fail("{}: is {}; refusing to write an output there", name, special_kind(st.st_mode));
    for (const Input& in : inputs_)
      if (in.exists && in.device == st.st_dev && in.inode == st.st_ino)
        fail("{}: refusing to overwrite the input file {}", name, in.path.string());
    identity.exists = true;
    identity.file = {st.st_dev, st.st_ino};
  } else if (errno == ENOENT) {
    const fs::path folder = folder_of(o.path);
    struct stat fst {};
    if (::stat(folder.c_str(), &fst) != 0) {
      if (!o.create_folder) fail("{}: the folder {} does not exist", name, folder.string());
    } else if (!S_ISDIR(fst.st_mode)) {
      fail("{}: {} is not a folder", name, folder.string());
    }
  } else {
    fail("{}: cannot write: {}", name, std::strerror(errno));
  }
  for (const Input& in : inputs_)
    if (in.path.string() == identity.canonical)
      fail("{}: refusing to overwrite the input file {}", name, in.path.string());
  const auto same = [&](size_t other) {
    if (other != index) fail("{}: the same file as {}", name, named(outputs_[other].flag, outputs_[other].path));
  };
  if (const auto it = by_canonical_.find(identity.canonical); it != by_canonical_.end()) same(it->second);
  if (identity.exists)
    if (const auto it = by_file_.find(identity.file); it != by_file_.end()) same(it->second);
  return identity;
}

void OutputSet::declare(const fs::path& path, std::string_view flag, bool create_folder) {
  ML_CHECK(!done_, "declare after commit");
  if (const Output* other = find(path)) fail("{}: the same file as {}", named(flag, path), named(other->flag, path));
  outputs_.push_back({.path = path, .temporary = {}, .flag = std::string(flag), .create_folder = create_folder});
  Identity identity;
  try {
    identity = check_output(outputs_.size() - 1);
  } catch (...) {
    outputs_.pop_back();
    throw;
  }
  const size_t index = outputs_.size() - 1;
  by_path_.emplace(path.string(), index);
  by_canonical_.emplace(std::move(identity.canonical), index);
  if (identity.exists) by_file_.emplace(identity.file, index);
}

void OutputSet::stage(const fs::path& path, std::string_view content, std::string_view flag) {
  ML_CHECK(!done_, "stage after commit");
  if (!find(path)) declare(path, flag);
  Output& o = *find(path);
  ML_CHECK(o.temporary.empty(), "{} staged twice", path.string());
  check_output(static_cast<size_t>(&o - outputs_.data()));
  const std::string name = named(o.flag, o.path);
  const fs::path folder = folder_of(o.path);
  if (o.create_folder) {
    std::vector<fs::path> missing;
    for (fs::path f = normalised(folder); !f.empty() && !fs::exists(f); f = f.parent_path()) missing.push_back(f);
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
      if (::mkdir(it->c_str(), 0777) != 0 && errno != EEXIST)
        fail("{}: cannot create the folder {}: {}", name, it->string(), std::strerror(errno));
      created_folders_.push_back(*it);
    }
  }
  // mkstemp opens with O_CREAT | O_EXCL: a new file, never a link or an existing one.
  std::string stem = o.path.filename().string();
  if (stem.size() > 180) stem.resize(180);
  std::string pattern = (folder / ("." + stem + ".memledger-XXXXXX")).string();
  const int fd = ::mkostemp(pattern.data(), O_CLOEXEC);
  if (fd < 0) fail("{}: cannot create a file in {}: {}", name, folder.string(), std::strerror(errno));
  o.temporary = pattern;
  size_t done = 0;
  int error = 0;
  while (done < content.size() && error == 0) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) error = errno;
    if (n > 0) done += static_cast<size_t>(n);
  }
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (error == 0 && ::fchmod(fd, 0666 & ~mask) != 0) error = errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) fail("{}: write failed: {}", name, std::strerror(error));
}

void OutputSet::commit() {
  ML_CHECK(!done_, "committed twice");
  for (size_t i = 0; i < outputs_.size(); ++i)
    if (!outputs_[i].temporary.empty()) check_output(i);
  for (Output& o : outputs_) {
    if (o.temporary.empty()) continue;
    if (::rename(o.temporary.c_str(), o.path.c_str()) != 0) {
      const int e = errno;
      std::string written;
      for (const fs::path& p : committed_) written += " " + p.string();
      fail("{}: cannot move the written file into place: {}{}", named(o.flag, o.path), std::strerror(e),
           committed_.empty() ? "" : "; already written:" + written);
    }
    o.temporary.clear();
    committed_.push_back(o.path);
  }
  done_ = true;
}

void write_output_file(const fs::path& path, std::string_view content, const std::vector<fs::path>& inputs) {
  OutputSet outputs;
  for (const fs::path& input : inputs) outputs.protect_input(input);
  outputs.stage(path, content);
  outputs.commit();
}

bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
  return fs::absolute(a, ec).lexically_normal() == fs::absolute(b, ec).lexically_normal();
}

}  // namespace memledger
