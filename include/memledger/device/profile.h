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

// What a memory bank may hold: one bit per kind of buffer (graph outputs count as activations).
enum BankHolds : unsigned {
  kHoldsActivations = 1u << 0,
  kHoldsWorkspaces = 1u << 1,
  kHoldsConstants = 1u << 2,
  kHoldsInputs = 1u << 3,
  kHoldsAll = kHoldsActivations | kHoldsWorkspaces | kHoldsConstants | kHoldsInputs,
};

// One bank of a memory map ([[banks]]): a TCM, an SRAM, a PSRAM, a flash. The planner gives
// every buffer a bank it may live in and an offset inside it (plan/allocate/banked.h).
struct MemoryBank {
  std::string name;
  int64_t capacity_bytes = 0;  // > 0: every bank has a size
  int64_t alignment_bytes = 1;
  double access_cost = 1.0;  // relative cost of one byte read or written (cycles per byte)
  unsigned holds = kHoldsAll;
  // Read-only memory (flash): holds only constants, which stay there and are read in place
  // (execute-in-place) under `constants = "external"`.
  bool read_only = false;
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
  // [[banks]], in the order written. Empty: one arena of `capacity_bytes`, as always. When
  // present, capacity_bytes is the first bank holding activations (what a one-arena stage
  // such as fit or the simulator sees) and every buffer is placed by the banked planner.
  std::vector<MemoryBank> banks;
  // Cycles one multiply-accumulate takes on the device's compute (0.5: two per cycle, as a
  // Cortex-M7's dual 16-bit MAC). With banks, fit weighs a patch's extra MACs against a
  // spill's slow-bank traffic (access_cost: cycles per byte) in these cycles.
  double cycles_per_mac = 1.0;
  std::string source;  // "built-in" or the file it was read from

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
// "activations, workspaces, ..." for a BankHolds set.
std::string holds_to_string(unsigned holds);

}  // namespace memledger
