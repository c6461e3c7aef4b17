// Device profiles (DESIGN.md §4.6): the target memory a model must fit and the storage
// rules that turn its tensors into bytes. Read from TOML and validated strictly: an
// unknown key, a wrong type or a size out of range is an Error naming the key and line.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memledger/core/dtype.h"
#include "memledger/core/layout.h"

namespace memledger {

// Physical order of 4-D activations (and, generally, where the channel axis goes).
enum class ActivationLayout { kNCHW, kNHWC };

// When constants occupy memory.
enum class ConstantResidency {
  kJustInTime,  // live from first to last use, like any other buffer
  kResident,    // live for the whole program
  kExternal,    // in read-only memory outside the arena (an MCU's flash): no arena bytes
};

// Where graph inputs live.
enum class InputResidency {
  kArena,     // in the arena, from the first step to their last use
  kExternal,  // in their own buffer outside the arena (a camera frame, a DMA target)
};

struct DmaProfile {
  int64_t granularity_bytes = 1;  // every transfer is rounded up to this
  int64_t setup_cycles = 0;       // fixed cost of one transfer
  double bytes_per_cycle = 1.0;   // sustained bandwidth
  int64_t external_bytes = 0;     // external memory; 0 = none (everything is local)
  bool double_buffering = false;  // tiled execution overlaps the next tile's loads
};

// The rules of an operator the op table does not know (a team's own NPU operator), as a
// profile declares them in [ops.NAME] (NAME as in the model: "MyOp" or "my.domain.MyOp").
struct DeclaredOp {
  int in_place_input = -1;                // the output may be written over this input; -1: none
  int64_t workspace_bytes = 0;            // a fixed workspace ...
  int64_t workspace_output_multiple = 0;  // ... plus this many times the output's bytes
};

struct DeviceProfile {
  std::string name;
  int64_t capacity_bytes = 0;  // local memory available to the arena; 0 = unlimited
  int64_t alignment_bytes = 1;
  ActivationLayout layout = ActivationLayout::kNCHW;
  AlignedRun aligned_run = AlignedRun::kInner;
  bool unit_inner_merge = false;
  std::optional<DType> storage;  // nullopt: keep the model's dtypes
  ConstantResidency constants = ConstantResidency::kJustInTime;
  InputResidency inputs = InputResidency::kArena;
  DmaProfile dma;
  std::map<std::string, DeclaredOp, std::less<>> ops;  // [ops.NAME]
  std::string source;                                  // "built-in" or the file it was read from

  LayoutRules layout_rules() const { return {alignment_bytes, aligned_run, unit_inner_merge}; }
  bool unlimited() const { return capacity_bytes == 0; }
};

// Parses and validates TOML text; `source` names it in messages ("dev.toml").
DeviceProfile parse_device_profile(std::string_view toml_text, const std::string& source);
// Reads a profile file; a missing or unreadable file is an Error naming it.
DeviceProfile load_device_profile_file(const std::string& path);
// The profiles compiled into the program: "teaching", "host" and "mcu".
std::vector<std::string> builtin_profile_names();
// A built-in profile by name; an Error listing the names when unknown.
DeviceProfile builtin_profile(std::string_view name);
// What `--device NAME|FILE` means: a built-in name, else a TOML file.
DeviceProfile resolve_device(const std::string& name_or_path);

// One line naming the profile and its storage rules ("teaching (built-in): capacity ...").
std::string describe_profile(const DeviceProfile& profile);

// The TOML text of a profile, as a user would write it (round-trips through the parser).
std::string to_toml(const DeviceProfile& profile);

std::string_view to_string(ActivationLayout layout);
std::string_view to_string(AlignedRun run);
std::string_view to_string(ConstantResidency residency);
std::string_view to_string(InputResidency residency);

}  // namespace memledger
