#include "memledger/exec/arena_provider.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <set>
#include <unordered_map>

#include "memledger/core/error.h"
#include "memledger/core/tensor.h"

namespace memledger {
namespace {

// Free bytes hold float32 0x7FA5A5A5, a signalling NaN, repeated at storage index % 4, so
// a kernel that reads bytes it never wrote spreads NaN into the outputs. The end guards
// hold a byte no float or small integer pattern repeats by chance.
constexpr std::array<std::byte, 4> kPoison{std::byte{0xA5}, std::byte{0xA5}, std::byte{0xA5}, std::byte{0x7F}};
constexpr std::byte kGuard{0xFD};
// Reports per node and kind beyond which the rest are counted, not listed.
constexpr int kMaxWriteReportsPerNode = 4;

void poison(std::vector<std::byte>& storage, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) storage[static_cast<size_t>(i)] = kPoison[static_cast<size_t>(i % 4)];
}

bool is_poison(const std::vector<std::byte>& storage, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i)
    if (storage[static_cast<size_t>(i)] != kPoison[static_cast<size_t>(i % 4)]) return false;
  return true;
}

// Bytes the interpreter stores for a value: its elements, dense, in the host's types.
int64_t element_bytes(const Value& v) { return element_count(v.shape, v.name) * host_element_bytes(v.dtype); }

bool overlaps(int64_t a0, int64_t a1, int64_t b0, int64_t b1) { return a0 < b1 && b0 < a1 && a0 < a1 && b0 < b1; }

}  // namespace

std::string_view to_string(ArenaViolation::Kind kind) {
  switch (kind) {
    case ArenaViolation::Kind::kWriteOutside:
      return "write outside a buffer";
    case ArenaViolation::Kind::kOverlapsLive:
      return "overlaps a live buffer";
    case ArenaViolation::Kind::kShortBuffer:
      return "buffer too small";
    case ArenaViolation::Kind::kNotPlanned:
      return "buffer not in the plan";
  }
  return "?";
}

// Everything the provider keeps: the arena with its guards, where each value and
// workspace is planned, and what the run has done so far.
struct ArenaBufferProvider::State {
  State(const Graph& graph, const MemoryPlan& plan);

  std::span<std::byte> value_buffer(ValueId value, int64_t bytes);
  std::span<std::byte> workspace(NodeId node, int64_t bytes);
  void release(ValueId value);
  void release_workspace(NodeId node);
  void after_node(NodeId node);

  struct Range {
    int64_t begin = 0, end = 0;  // storage indices, end exclusive
  };
  void begin_step(int step);
  void load_constants(int up_to_step);
  void check_overlap(int buffer, int step);
  void check_writes(NodeId node);
  std::span<std::byte> heap_buffer(int64_t bytes);
  std::span<std::byte> hand_out(int buffer, int64_t bytes, int64_t element_bytes, bool poison);
  Range planned_range(int buffer) const;
  std::string describe_write(Range changed) const;
  void report(ArenaViolation::Kind kind, const std::string& buffer, std::string message);
  std::string node_label(int step) const;

  const Graph& graph_;
  const MemoryPlan& plan_;
  int64_t arena_bytes_ = 0;
  std::vector<std::byte> storage_;   // guard · arena · guard
  std::vector<std::byte> snapshot_;  // storage_ as the current node found it
  std::unordered_map<ValueId, int> buffer_of_value_;
  std::unordered_map<NodeId, int> buffer_of_workspace_;
  std::unordered_map<NodeId, int> step_of_node_;
  std::unordered_map<ValueId, int> producer_step_;
  std::vector<int> constants_;  // constant buffers by first step
  size_t constants_loaded_ = 0;
  std::set<int> held_;            // buffers the interpreter holds now
  std::vector<Range> write_set_;  // what the current node may change
  std::vector<int> own_buffers_;  // the current node's outputs and workspace
  std::optional<int> workspace_now_;
  int step_ = -1;  // the node running (or about to), -1 while inputs are copied
  bool snapshot_taken_ = false;
  std::vector<std::unique_ptr<std::byte[]>> heap_;
  std::unordered_map<int, std::vector<std::byte>> external_;  // buffers outside the arena
  std::vector<ArenaViolation> violations_;
  std::vector<std::string> untouched_;
};

ArenaBufferProvider::State::State(const Graph& graph, const MemoryPlan& plan)
    : graph_(graph), plan_(plan), arena_bytes_(plan.arena_bytes) {
  const Liveness& live = plan.liveness;
  ML_CHECK(plan.offsets.size() == live.buffers.size(), "plan has {} offsets for {} buffers", plan.offsets.size(),
           live.buffers.size());
  for (int step = 0; step < live.steps(); ++step) {
    const NodeId node = live.schedule[static_cast<size_t>(step)];
    step_of_node_[node] = step;
    for (ValueId out : graph.node(node).outputs)
      if (out.valid()) producer_step_[out] = step;
  }
  for (size_t i = 0; i < live.buffers.size(); ++i) {
    const LiveBuffer& b = live.buffers[i];
    if (b.category == BufferCategory::kWorkspace)
      buffer_of_workspace_[b.node] = static_cast<int>(i);
    else
      buffer_of_value_[b.value] = static_cast<int>(i);
    // A persistent value (SVDF state) starts as its constant, the initial state, as a constant does.
    const bool loaded = b.category == BufferCategory::kConstant || b.category == BufferCategory::kPersistent;
    if (loaded && !b.external && !b.alias_of) constants_.push_back(static_cast<int>(i));
  }
  std::stable_sort(constants_.begin(), constants_.end(), [&](int a, int b) {
    return live.buffers[static_cast<size_t>(a)].first_step < live.buffers[static_cast<size_t>(b)].first_step;
  });

  const int64_t total = kGuardBytes + arena_bytes_ + kGuardBytes;
  storage_.assign(static_cast<size_t>(total), kGuard);
  poison(storage_, kGuardBytes, kGuardBytes + arena_bytes_);
}

ArenaBufferProvider::State::Range ArenaBufferProvider::State::planned_range(int buffer) const {
  const int64_t begin = kGuardBytes + plan_.offsets[static_cast<size_t>(buffer)];
  return {begin, begin + plan_.liveness.buffers[static_cast<size_t>(buffer)].physical_bytes};
}

std::string ArenaBufferProvider::State::node_label(int step) const {
  if (step < 0 || step >= plan_.liveness.steps()) return "";
  return graph_.node(plan_.liveness.schedule[static_cast<size_t>(step)]).label();
}

void ArenaBufferProvider::State::report(ArenaViolation::Kind kind, const std::string& buffer, std::string message) {
  violations_.push_back({.kind = kind, .node = node_label(step_), .buffer = buffer, .message = std::move(message)});
}

std::span<std::byte> ArenaBufferProvider::State::heap_buffer(int64_t bytes) {
  heap_.push_back(std::make_unique<std::byte[]>(static_cast<size_t>(std::max<int64_t>(bytes, 1))));
  return {heap_.back().get(), static_cast<size_t>(bytes)};
}

// Buffers still held whose planned bytes meet `buffer`'s, other than its own storage.
void ArenaBufferProvider::State::check_overlap(int buffer, int step) {
  const Liveness& live = plan_.liveness;
  const Range r = planned_range(buffer);
  const int root = live.storage_of(buffer);
  for (int other : held_) {
    if (live.storage_of(other) == root) continue;
    const Range o = planned_range(other);
    if (!overlaps(r.begin, r.end, o.begin, o.end)) continue;
    const LiveBuffer& a = live.buffers[static_cast<size_t>(buffer)];
    const LiveBuffer& b = live.buffers[static_cast<size_t>(other)];
    report(ArenaViolation::Kind::kOverlapsLive, a.name,
           fmt::format("at step {}{}: the plan puts '{}' at [{}, {}) over '{}' at [{}, {}), which is still live", step,
                       step >= 0 ? " (" + node_label(step) + ")" : std::string(), a.name, r.begin - kGuardBytes,
                       r.end - kGuardBytes, b.name, o.begin - kGuardBytes, o.end - kGuardBytes));
  }
}

// Copies constants and persistent values' initial states that become live by `up_to_step` into
// their slots (arena and snapshot alike: loading is not the node's write) and drops constants
// whose last step is past.
void ArenaBufferProvider::State::load_constants(int up_to_step) {
  const Liveness& live = plan_.liveness;
  for (auto it = held_.begin(); it != held_.end();) {
    const LiveBuffer& b = live.buffers[static_cast<size_t>(*it)];
    if (b.category == BufferCategory::kConstant && b.last_step < up_to_step)
      it = held_.erase(it);
    else
      ++it;
  }
  while (constants_loaded_ < constants_.size()) {
    const int buffer = constants_[constants_loaded_];
    const LiveBuffer& b = live.buffers[static_cast<size_t>(buffer)];
    if (b.first_step > up_to_step) break;
    ++constants_loaded_;
    if (b.last_step < up_to_step) continue;
    const Range r = planned_range(buffer);
    if (r.end > static_cast<int64_t>(storage_.size()) - kGuardBytes) {
      report(ArenaViolation::Kind::kNotPlanned, b.name,
             fmt::format("{} '{}' at [{}, {}) lies past the arena's end ({} B)", to_string(b.category), b.name,
                         r.begin - kGuardBytes, r.end - kGuardBytes, arena_bytes_));
      continue;
    }
    check_overlap(buffer, up_to_step);
    const auto bytes = graph_.value(b.value).constant->bytes();
    const int64_t n = std::min<int64_t>(static_cast<int64_t>(bytes.size()), r.end - r.begin);
    if (n > 0) {
      std::memcpy(storage_.data() + r.begin, bytes.data(), static_cast<size_t>(n));
      if (snapshot_taken_) std::memcpy(snapshot_.data() + r.begin, bytes.data(), static_cast<size_t>(n));
    }
    held_.insert(buffer);
  }
}

// Called from the first request of a node (or its after_node): constants are loaded and
// the arena is remembered as the node finds it.
void ArenaBufferProvider::State::begin_step(int step) {
  if (step == step_ && snapshot_taken_) return;
  ML_CHECK(step > step_ || !snapshot_taken_, "step {} begins after step {}", step, step_);
  step_ = step;
  write_set_.clear();
  own_buffers_.clear();
  workspace_now_.reset();
  load_constants(step);
  if (!snapshot_taken_) {
    snapshot_ = storage_;
    snapshot_taken_ = true;
  }
}

std::span<std::byte> ArenaBufferProvider::State::hand_out(int buffer, int64_t bytes, int64_t element_bytes,
                                                          bool poison_it) {
  const LiveBuffer& b = plan_.liveness.buffers[static_cast<size_t>(buffer)];
  const Range r = planned_range(buffer);
  if (b.physical_bytes < element_bytes)
    report(ArenaViolation::Kind::kShortBuffer, b.name,
           fmt::format("'{}' needs {} B, the plan gives it {} B", b.name, element_bytes, b.physical_bytes));
  // The interpreter may ask for more than its elements (the host layout's padding); the
  // span may stop at the arena's end as long as the elements fit.
  const int64_t arena_end = kGuardBytes + arena_bytes_;
  if (r.begin + element_bytes > arena_end) {
    report(ArenaViolation::Kind::kNotPlanned, b.name,
           fmt::format("'{}' at offset {} with {} B would run past the arena's end ({} B); it runs on the heap", b.name,
                       r.begin - kGuardBytes, element_bytes, arena_bytes_));
    return heap_buffer(bytes);
  }
  check_overlap(buffer, step_);
  // Poisoning is the provider's doing, not the node's: the snapshot gets it too.
  if (poison_it) {
    poison(storage_, r.begin, std::min(r.end, arena_end));
    if (snapshot_taken_) poison(snapshot_, r.begin, std::min(r.end, arena_end));
  }
  held_.insert(buffer);
  const int64_t length = std::min(bytes, static_cast<int64_t>(storage_.size()) - r.begin);
  return {storage_.data() + r.begin, static_cast<size_t>(length)};
}

std::span<std::byte> ArenaBufferProvider::State::value_buffer(ValueId value, int64_t bytes) {
  const Value& v = graph_.value(value);
  auto producer = producer_step_.find(value);
  if (producer != producer_step_.end()) begin_step(producer->second);
  auto it = buffer_of_value_.find(value);
  if (it == buffer_of_value_.end()) {
    report(ArenaViolation::Kind::kNotPlanned, v.name, fmt::format("the plan has no buffer for '{}'", v.name));
    return heap_buffer(bytes);
  }
  const int buffer = it->second;
  if (plan_.liveness.buffers[static_cast<size_t>(buffer)].external) {
    // Outside the arena (an input in its own buffer): storage of its own, kept for the run.
    auto& storage = external_[buffer];
    if (static_cast<int64_t>(storage.size()) < bytes) storage.resize(static_cast<size_t>(bytes));
    return {storage.data(), static_cast<size_t>(bytes)};
  }
  const int64_t elements = element_bytes(v);
  const bool in_place = plan_.liveness.buffers[static_cast<size_t>(buffer)].alias_of.has_value();
  auto span = hand_out(buffer, bytes, elements, !in_place);
  if (producer != producer_step_.end() && span.data() >= storage_.data() &&
      span.data() < storage_.data() + storage_.size()) {
    const int64_t begin = span.data() - storage_.data();
    const Range r = planned_range(buffer);
    write_set_.push_back({begin, begin + std::min(elements, r.end - r.begin)});
    own_buffers_.push_back(buffer);
  }
  return span;
}

std::span<std::byte> ArenaBufferProvider::State::workspace(NodeId node, int64_t bytes) {
  auto step = step_of_node_.find(node);
  ML_CHECK(step != step_of_node_.end(), "workspace for node {} outside the schedule", node.index);
  begin_step(step->second);
  auto it = buffer_of_workspace_.find(node);
  if (it == buffer_of_workspace_.end()) {
    report(ArenaViolation::Kind::kNotPlanned, graph_.node(node).label(),
           fmt::format("node {} asks for a workspace of {} B, the plan has none", graph_.node(node).label(), bytes));
    return heap_buffer(bytes);
  }
  const int buffer = it->second;
  // The interpreter asks for the host contract's bytes, which may round up more than the
  // device's rule did; only the bytes the kernel really writes past the planned ones are
  // a violation, and the write check sees those.
  const int64_t planned = plan_.liveness.buffers[static_cast<size_t>(buffer)].physical_bytes;
  auto span = hand_out(buffer, bytes, std::min(bytes, planned), true);
  if (span.data() >= storage_.data() && span.data() < storage_.data() + storage_.size()) {
    if (static_cast<int64_t>(span.size()) < bytes) {  // the interpreter needs exactly `bytes`
      held_.erase(buffer);
      return heap_buffer(bytes);
    }
    const Range r = planned_range(buffer);
    write_set_.push_back({r.begin, r.begin + std::min(bytes, r.end - r.begin)});
    own_buffers_.push_back(buffer);
    workspace_now_ = buffer;
  }
  return span;
}

void ArenaBufferProvider::State::release(ValueId value) {
  auto it = buffer_of_value_.find(value);
  if (it != buffer_of_value_.end()) held_.erase(it->second);
}

void ArenaBufferProvider::State::release_workspace(NodeId node) {
  auto it = buffer_of_workspace_.find(node);
  if (it != buffer_of_workspace_.end()) held_.erase(it->second);
}

void ArenaBufferProvider::State::after_node(NodeId node) {
  auto step = step_of_node_.find(node);
  ML_CHECK(step != step_of_node_.end(), "after_node for node {} outside the schedule", node.index);
  begin_step(step->second);
  check_writes(node);
  if (workspace_now_) {
    const Range r = planned_range(*workspace_now_);
    const int64_t end = std::min(r.end, static_cast<int64_t>(storage_.size()) - kGuardBytes);
    if (is_poison(storage_, r.begin, end))
      untouched_.push_back(plan_.liveness.buffers[static_cast<size_t>(*workspace_now_)].name);
  }
}

// Everything outside the write set must be as the node found it.
void ArenaBufferProvider::State::check_writes(NodeId node) {
  std::vector<Range> allowed = write_set_;
  std::sort(allowed.begin(), allowed.end(), [](Range a, Range b) { return a.begin < b.begin; });
  const auto total = static_cast<int64_t>(storage_.size());
  int reported = 0, more = 0;
  auto scan = [&](int64_t begin, int64_t end) {
    if (begin >= end) return;
    if (std::memcmp(storage_.data() + begin, snapshot_.data() + begin, static_cast<size_t>(end - begin)) == 0) return;
    for (int64_t i = begin; i < end;) {
      if (storage_[static_cast<size_t>(i)] == snapshot_[static_cast<size_t>(i)]) {
        ++i;
        continue;
      }
      // One changed run; gaps of a few equal bytes (a value stored unchanged) join it.
      int64_t j = i + 1, last = i;
      for (; j < end && j - last <= 8; ++j)
        if (storage_[static_cast<size_t>(j)] != snapshot_[static_cast<size_t>(j)]) last = j;
      if (reported < kMaxWriteReportsPerNode) {
        ++reported;
        const std::string where = describe_write({i, last + 1});
        report(ArenaViolation::Kind::kWriteOutside, where.substr(0, where.find('\n')),
               fmt::format("node {} wrote {} B outside its buffers at arena offset {}: {}", graph_.node(node).label(),
                           last + 1 - i, i - kGuardBytes, where.substr(where.find('\n') + 1)));
      } else {
        ++more;
      }
      i = last + 1;
    }
    std::memcpy(snapshot_.data() + begin, storage_.data() + begin, static_cast<size_t>(end - begin));
  };
  int64_t at = 0;
  for (const Range& r : allowed) {
    scan(at, std::min(r.begin, total));
    at = std::max(at, r.end);
  }
  scan(at, total);
  if (more > 0)
    report(ArenaViolation::Kind::kWriteOutside, "",
           fmt::format("node {} wrote outside its buffers in {} more places", graph_.node(node).label(), more));
  for (const Range& r : allowed)
    std::memcpy(snapshot_.data() + r.begin, storage_.data() + r.begin, static_cast<size_t>(r.end - r.begin));
}

// "<buffer>\n<sentence>": what the plan has at the changed bytes, and how far past the end
// of which of the node's own buffers they lie.
std::string ArenaBufferProvider::State::describe_write(Range changed) const {
  const Liveness& live = plan_.liveness;
  std::string buffer, where;
  const int64_t arena_end = kGuardBytes + arena_bytes_;
  if (changed.begin < kGuardBytes) {
    buffer = "guard before the arena";
    where = "in the guard before the arena";
  } else if (changed.begin >= arena_end) {
    buffer = "guard after the arena";
    where = "in the guard after the arena";
  } else {
    for (int other : held_) {
      const Range o = planned_range(other);
      if (changed.begin < o.begin || changed.begin >= o.end) continue;
      const LiveBuffer& b = live.buffers[static_cast<size_t>(other)];
      const bool own = std::find(own_buffers_.begin(), own_buffers_.end(), other) != own_buffers_.end();
      buffer = b.name;
      where = own ? fmt::format("in the layout padding of its own '{}'", b.name)
                  : fmt::format("inside '{}' ({}, live)", b.name, to_string(b.category));
      break;
    }
    if (buffer.empty()) where = "in free space";
  }
  // The nearest own buffer that ends at or before the change.
  int nearest = -1;
  int64_t distance = 0;
  for (int own : own_buffers_) {
    const Range r = planned_range(own);
    auto w = std::find_if(write_set_.begin(), write_set_.end(), [&](Range x) { return x.begin == r.begin; });
    const int64_t elements_end = w == write_set_.end() ? r.end : w->end;
    if (elements_end > changed.begin) continue;
    if (nearest < 0 || changed.begin - elements_end < distance) {
      nearest = own;
      distance = changed.begin - elements_end;
    }
  }
  if (nearest >= 0) {
    const LiveBuffer& b = live.buffers[static_cast<size_t>(nearest)];
    where += fmt::format(", {} B past the end of its {} '{}' ({} B planned)", distance,
                         b.category == BufferCategory::kWorkspace ? "workspace" : "output", b.name, b.physical_bytes);
    if (buffer.empty()) buffer = b.name;
  }
  return buffer + "\n" + where;
}

ArenaBufferProvider::ArenaBufferProvider(const Graph& graph, const MemoryPlan& plan)
    : state_(std::make_unique<State>(graph, plan)) {}
ArenaBufferProvider::~ArenaBufferProvider() = default;

std::span<std::byte> ArenaBufferProvider::value_buffer(ValueId value, int64_t bytes) {
  return state_->value_buffer(value, bytes);
}
std::span<std::byte> ArenaBufferProvider::workspace(NodeId node, int64_t bytes) {
  return state_->workspace(node, bytes);
}
void ArenaBufferProvider::release(ValueId value) { state_->release(value); }
void ArenaBufferProvider::release_workspace(NodeId node) { state_->release_workspace(node); }
void ArenaBufferProvider::after_node(NodeId node) { state_->after_node(node); }
const std::vector<ArenaViolation>& ArenaBufferProvider::violations() const { return state_->violations_; }
const std::vector<std::string>& ArenaBufferProvider::untouched_workspaces() const { return state_->untouched_; }
int64_t ArenaBufferProvider::arena_bytes() const { return state_->arena_bytes_; }

}  // namespace memledger
