// The one way a command writes files. Every output of a command is staged in a new file
// created exclusively (O_EXCL, a fresh name in the destination folder, so no symbolic link
// is followed and no existing file is truncated) and renamed into place only when every
// output of the command has been staged: a failure leaves no output behind and no earlier
// file changed. No output may be a file the command reads, another output, a symbolic
// link, a directory or a special file (FIFO, device, socket).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace memledger {

// The outputs of one command. Typical use: protect every input, declare every output
// before the work starts (so a bad path is refused before anything is computed), stage
// each content, then commit. Destroying an uncommitted set removes what it staged and the
// folders it created.
class OutputSet {
 public:
  OutputSet() = default;
  OutputSet(const OutputSet&) = delete;
  OutputSet& operator=(const OutputSet&) = delete;
  ~OutputSet();

  // A file the command reads; Error if an output already declared is that file.
  void protect_input(const std::filesystem::path& path);

  // Checks `path` as an output (Error naming `flag` and the path): not a protected input
  // nor another output, not a symbolic link, directory or special file, and its folder
  // exists (or `create_folder`: may be created, when staging).
  void declare(const std::filesystem::path& path, std::string_view flag, bool create_folder = false);

  // Writes `content` to a new temporary file beside `path` (declared with `flag` if it
  // was not yet).
  void stage(const std::filesystem::path& path, std::string_view content, std::string_view flag = "");

  // Renames every staged file over its destination, after checking each destination again.
  void commit();

  const std::vector<std::filesystem::path>& committed() const { return committed_; }

 private:
  struct Output {
    std::filesystem::path path, temporary;
    std::string flag;
    bool create_folder = false;
  };
  struct Input {
    std::filesystem::path path;  // absolute, normalised
    bool exists = false;
    uint64_t device = 0, inode = 0;
  };
  // Where an output lands: its normalised path, and the file already there (if any).
  struct Identity {
    std::string canonical;
    bool exists = false;
    std::pair<uint64_t, uint64_t> file{};  // device, inode
  };
  // Checks outputs_[index] and returns where it lands; refuses another output landing there.
  Identity check_output(size_t index) const;
  Output* find(const std::filesystem::path& path);

  std::vector<Input> inputs_;
  std::vector<Output> outputs_;
  // Indexes into outputs_, so that a command with 10^4 outputs checks each in constant time:
  // by the path as given, by normalised path, and by the existing file's device and inode.
  std::unordered_map<std::string, size_t> by_path_;
  std::unordered_map<std::string, size_t> by_canonical_;
  std::map<std::pair<uint64_t, uint64_t>, size_t> by_file_;
  std::vector<std::filesystem::path> created_folders_;  // deepest last
  std::vector<std::filesystem::path> committed_;
  bool done_ = false;
};

// One output file through an OutputSet of its own: refused if it is one of `inputs`.
void write_output_file(const std::filesystem::path& path, std::string_view content,
                       const std::vector<std::filesystem::path>& inputs = {});

// True when both paths name the same existing file (or the same absolute path).
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b);

}  // namespace memledger
