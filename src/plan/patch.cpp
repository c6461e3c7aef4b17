// Patch-based execution as a graph rewrite (see plan/patch.h). The algorithm:
//  1. The stage: the split value's ancestors. Values that depend on a graph input form the
//     data path; stage nodes off it (computing from constants only) stay as they are.
//  2. Per patch of the split's H×W grid, walking the stage backwards: a node's output box is
//     the hull of what its consumers need, and each data input needs the box the node's
//     patch rule gives (plan/patch_rules.h).
//  3. Per patch, forwards: clones of the data-path nodes on their boxes (a consumer that
//     needs less than a value's box reads a Slice of it), then WritePatch into the split's
//     full buffer. The patches take the split producer's place in the execution order.
#include "memledger/plan/patch.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "memledger/core/error.h"
#include "memledger/ir/write_patch.h"
#include "memledger/plan/patch_rules.h"

namespace memledger {
namespace {

struct Stage {
  std::vector<NodeId> nodes;  // in execution order
  std::unordered_set<NodeId> members;
};

// Per value: whether it depends on a graph input.
std::vector<char> data_path(const Graph& g) {
  std::vector<char> data(g.value_count(), 0);
  for (ValueId in : g.inputs()) data[static_cast<size_t>(in.index)] = 1;
  for (NodeId n : g.order()) {
    const Node& node = g.node(n);
    bool any = false;
    for (ValueId in : node.inputs) any = any || (in.valid() && data[static_cast<size_t>(in.index)]);
    for (ValueId out : node.outputs)
      if (out.valid()) data[static_cast<size_t>(out.index)] = any ? 1 : 0;
  }
  return data;
}

// Per value: the live nodes that read it.
std::vector<std::vector<NodeId>> readers(const Graph& g) {
  std::vector<std::vector<NodeId>> result(g.value_count());
  for (NodeId n : g.order())
    for (ValueId in : g.node(n).inputs)
      if (in.valid()) result[static_cast<size_t>(in.index)].push_back(n);
  return result;
}

// The stage of `split`: its ancestors, not walking past `after` (when valid).
Stage stage_of(const Graph& g, ValueId split, ValueId after = {}) {
  Stage stage;
  std::vector<NodeId> work{g.value(split).producer};
  while (!work.empty()) {
    const NodeId n = work.back();
    work.pop_back();
    if (!n.valid() || !stage.members.insert(n).second) continue;
    for (ValueId in : g.node(n).inputs)
      if (in.valid() && in != after) work.push_back(g.value(in).producer);
  }
  for (NodeId n : g.order())
    if (stage.members.count(n)) stage.nodes.push_back(n);
  return stage;
}

// Why the stage ending at `split` (starting after `after` when valid) cannot run patch by
// patch, or empty.
std::string stage_problem(const Graph& g, ValueId split, const Stage& stage, const std::vector<char>& data,
                          const std::vector<std::vector<NodeId>>& read_by, ValueId after = {}) {
  const Value& v = g.value(split);
  if (!v.producer.valid()) return "it is a graph input or a constant, not a node's output";
  if (!data[static_cast<size_t>(split.index)]) return "it does not depend on a graph input";
  if (v.shape.size() != 4) return fmt::format("it is {}, not a 4-D NCHW activation", shape_to_string(v.shape));
  if (after.valid()) {
    if (split == after) return "it is where the stage starts";
    if (g.value(after).shape.size() != 4) return fmt::format("the stage's start '{}' is not 4-D", g.value(after).name);
    bool reads_after = false;
    for (NodeId n : stage.nodes)
      for (ValueId in : g.node(n).inputs) reads_after = reads_after || in == after;
    if (!reads_after) return fmt::format("its stage does not start at '{}'", g.value(after).name);
  }
  for (NodeId n : stage.nodes) {
    const Node& node = g.node(n);
    if (!data[static_cast<size_t>(node.outputs.at(0).index)]) continue;  // runs once, before the patches
    if (std::string why = patch_rule_problem(g, node, data); !why.empty())
      return fmt::format("node {} in its stage: {}", node.label(), why);
    for (ValueId in : node.inputs) {
      if (in.valid() && g.is_graph_input(in) && g.value(in).shape.size() != 4)
        return fmt::format("graph input '{}' of its stage is not 4-D", g.value(in).name);
      if (in.valid() && after.valid() && in != after && g.is_graph_input(in))
        return fmt::format("its stage reads graph input '{}' besides its start '{}'", g.value(in).name,
                           g.value(after).name);
    }
    for (ValueId out : node.outputs) {
      if (!out.valid() || out == split) continue;
      if (g.is_graph_output(out)) return fmt::format("'{}' of its stage is a graph output", g.value(out).name);
      for (NodeId reader : read_by[static_cast<size_t>(out.index)])
        if (!stage.members.count(reader))
          return fmt::format("'{}' of its stage is also read by node {} outside it (the stage does not end cleanly)",
                             g.value(out).name, g.node(reader).label());
    }
  }
  return {};
}

// Names not used yet, without rescanning the graph for each.
class Names {
 public:
  explicit Names(const Graph& g) {
    for (size_t i = 0; i < g.value_count(); ++i) used_.insert(g.value(ValueId{static_cast<int32_t>(i)}).name);
  }
  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int i = 1; !used_.insert(name).second; ++i) name = base + "_" + std::to_string(i);
    return name;
  }

 private:
  std::unordered_set<std::string> used_;
};

// Rewrites one or more stages of `original` (disjoint ones: the inner grids of patches of
// patches) into one copy of it. Patch nodes are appended as they are made and moved before
// the node after their split's producer once, in finish(): no insertion into the middle of
// the order per node, and one copy of the graph however many stages are patched.
class Rewriter {
 public:
  Rewriter(const Graph& original, const std::vector<char>& data)
      : in_(original), data_(data), out_(original), names_(original) {}

  // Patches the stage ending at `spec.split` (checked by check_spec); its nodes are tagged
  // with this call's index (stage_of_node) and their patch of its grid (patch_of_node).
  void patch(const PatchSpec& spec, const Stage& stage) {
    spec_ = spec;
    ++stage_index_;
    const auto& order = in_.order();
    const auto it = std::find(order.begin(), order.end(), in_.value(spec.split).producer);
    next_ = it + 1 != order.end() ? *(it + 1) : NodeId{};
    data_nodes_.clear();
    patch_values_.clear();
    for (NodeId n : stage.nodes)
      if (is_data(in_.node(n).outputs[0])) {
        data_nodes_.push_back(n);
        out_.erase_node(n);
      }
    const Value& split = in_.value(spec_.split);
    const int64_t H = split.shape[2], W = split.shape[3];
    ValueId accumulator;
    for (int r = 0; r < spec_.rows; ++r)
      for (int c = 0; c < spec_.cols; ++c) {
        const Box box{r * H / spec_.rows, (r + 1) * H / spec_.rows, c * W / spec_.cols, (c + 1) * W / spec_.cols};
        patch_ = r * spec_.cols + c;
        suffix_ = fmt::format(".p{}_{}", r, c);
        const ValueId result = emit_patch(box);
        const bool last = r == spec_.rows - 1 && c == spec_.cols - 1;
        const ValueId y = last ? spec_.split
                               : out_.add_value({.name = names_.fresh(split.name + ".acc" + std::to_string(patch_)),
                                                 .dtype = split.dtype,
                                                 .shape = split.shape,
                                                 .roles = split.roles});
        emit(write_patch_node(accumulator, result, {0, 0, box.h0, box.w0}, split.shape, y,
                              split.name + ".write" + suffix_));
        accumulator = y;
      }
  }

  // The rewritten graph, each stage's patch nodes where the stage's nodes were; per node of
  // its order, the patch and the patch() call it belongs to (-1 outside every stage).
  Graph finish(std::vector<int>& patch_of_node, std::vector<int>& stage_of_node) {
    std::vector<NodeId> order;
    order.reserve(out_.order().size());
    auto place_before = [&](NodeId n) {
      if (const auto it = emitted_before_.find(n); it != emitted_before_.end())
        order.insert(order.end(), it->second.begin(), it->second.end());
    };
    for (NodeId n : out_.order()) {
      if (emitted_.count(n)) continue;
      place_before(n);
      order.push_back(n);
    }
    place_before(NodeId{});
    out_.set_order(std::move(order));
    patch_of_node.clear();
    stage_of_node.clear();
    for (NodeId n : out_.order()) {
      const auto it = emitted_.find(n);
      patch_of_node.push_back(it == emitted_.end() ? -1 : it->second.first);
      stage_of_node.push_back(it == emitted_.end() ? -1 : it->second.second);
    }
    return std::move(out_);
  }

 private:
  bool is_data(ValueId v) const { return v.valid() && data_[static_cast<size_t>(v.index)] != 0; }

  void emit(Node node) {
    const NodeId id = out_.add_node(std::move(node));
    emitted_before_[next_].push_back(id);
    emitted_[id] = {patch_, stage_index_};
  }

  // The boxes one patch needs: per data value the hull over its readers, per (node, input)
  // what that reader needs.
  void compute_boxes(const Box& split_box) {
    box_.clear();
    need_.clear();
    box_[spec_.split] = split_box;
    for (auto it = data_nodes_.rbegin(); it != data_nodes_.rend(); ++it) {
      const Node& node = in_.node(*it);
      const Box out = box_.at(node.outputs[0]);
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        if (!is_data(node.inputs[i])) continue;
        const Box need = needed_input_box(in_, node, i, out);
        if (need.empty())
          fail("cannot patch at '{}': node {} needs an empty box of '{}' for its output box {}",
               in_.value(spec_.split).name, node.label(), in_.value(node.inputs[i]).name, box_to_string(out));
        need_[{*it, i}] = need;
        auto [slot, inserted] = box_.emplace(node.inputs[i], need);
        if (!inserted) slot->second = hull(slot->second, need);
      }
    }
  }

  ValueId emit_patch(const Box& split_box) {
    compute_boxes(split_box);
    local_.clear();
    crops_.clear();
    for (ValueId in : in_.inputs()) {
      const Shape& s = in_.value(in).shape;
      if (s.size() == 4) local_[in] = {in, Box{0, s[2], 0, s[3]}};
    }
    if (spec_.after.valid()) {
      const Shape& s = in_.value(spec_.after).shape;
      local_[spec_.after] = {spec_.after, Box{0, s[2], 0, s[3]}};
    }
    for (NodeId n : data_nodes_) {
      const Node& node = in_.node(n);
      if (is_spatial_slice(in_, node)) {
        // The patch of a crop is a crop of the patch's input: nothing to run.
        local_[node.outputs[0]] = {read(node.inputs[0], need_.at({n, 0})), box_.at(node.outputs[0])};
        continue;
      }
      Node clone = node;
      clone.name = (node.name.empty() ? node.op : node.name) + suffix_;
      for (size_t i = 0; i < node.inputs.size(); ++i)
        if (is_data(node.inputs[i])) clone.inputs[i] = read(node.inputs[i], need_.at({n, i}));
      const Box out = box_.at(node.outputs[0]);
      clone.attributes = patched_attributes(in_, node, out);
      const Value& y = in_.value(node.outputs[0]);
      const ValueId patch_y = out_.add_value({.name = names_.fresh(y.name + suffix_),
                                              .dtype = y.dtype,
                                              .shape = {y.shape[0], y.shape[1], out.height(), out.width()},
                                              .roles = y.roles});
      clone.outputs.assign(1, patch_y);
      emit(std::move(clone));
      local_[node.outputs[0]] = {patch_y, out};
    }
    std::unordered_map<ValueId, ValueId>& values = patch_values_.emplace_back();
    for (const auto& [original, held] : local_)
      if (!in_.is_graph_input(original) && original != spec_.after) values[original] = held.first;
    return local_.at(spec_.split).first;
  }

 public:
  // Per patch: each stage value of the original graph → the patch's own value of it.
  const std::vector<std::unordered_map<ValueId, ValueId>>& patch_values() const { return patch_values_; }

 private:
  // `v` on exactly `need`: the patch's own value when its box is that, else a Slice of it.
  ValueId read(ValueId v, const Box& need) {
    const auto& [held, box] = local_.at(v);
    if (box == need) return held;
    ML_CHECK(box.contains(need), "patch box {} of '{}' does not hold {}", box_to_string(box), in_.value(v).name,
             box_to_string(need));
    const auto key = std::make_tuple(v.index, need.h0, need.h1, need.w0, need.w1);
    if (auto it = crops_.find(key); it != crops_.end()) return it->second;
    const Value& source = out_.value(held);
    const std::vector<int64_t> starts{need.h0 - box.h0, need.w0 - box.w0};
    const std::vector<int64_t> ends{need.h1 - box.h0, need.w1 - box.w0};
    const std::string base = in_.value(v).name + suffix_ + ".crop";
    const ValueId cropped = out_.add_value({.name = names_.fresh(base),
                                            .dtype = source.dtype,
                                            .shape = {source.shape[0], source.shape[1], need.height(), need.width()},
                                            .roles = source.roles});
    Node slice{.name = base, .op = "Slice", .inputs = {held}, .outputs = {cropped}};
    if (in_.opset < 10) {
      slice.attributes = {{"starts", starts}, {"ends", ends}, {"axes", std::vector<int64_t>{2, 3}}};
    } else {
      slice.inputs.push_back(int_constant(starts));
      slice.inputs.push_back(int_constant(ends));
      slice.inputs.push_back(int_constant({2, 3}));
    }
    emit(std::move(slice));
    crops_[key] = cropped;
    return cropped;
  }

  // One int64 constant per distinct content, shared by every crop that needs it.
  ValueId int_constant(const std::vector<int64_t>& values) {
    if (auto it = constants_.find(values); it != constants_.end()) return it->second;
    Tensor t(DType::kInt64, {static_cast<int64_t>(values.size())});
    std::copy(values.begin(), values.end(), t.data<int64_t>().begin());
    const ValueId id =
        out_.add_constant(names_.fresh(fmt::format("patch.ints[{}]", fmt::join(values, ","))), std::move(t));
    constants_[values] = id;
    return id;
  }

  const Graph& in_;
  const std::vector<char>& data_;
  Graph out_;
  Names names_;
  PatchSpec spec_;  // the stage being patched
  int stage_index_ = -1;
  NodeId next_;  // its patches go before this node (invalid: at the end)
  std::vector<NodeId> data_nodes_;
  int patch_ = -1;
  std::string suffix_;
  std::unordered_map<ValueId, Box> box_;
  std::map<std::pair<NodeId, size_t>, Box> need_;
  std::unordered_map<ValueId, std::pair<ValueId, Box>> local_;
  std::map<std::tuple<int32_t, int64_t, int64_t, int64_t, int64_t>, ValueId> crops_;
  std::map<std::vector<int64_t>, ValueId> constants_;
  std::unordered_map<NodeId, std::pair<int, int>> emitted_;  // patch node → (patch, stage index)
  std::unordered_map<NodeId, std::vector<NodeId>> emitted_before_;
  std::vector<std::unordered_map<ValueId, ValueId>> patch_values_;
};

void check_spec(const Graph& g, const PatchSpec& spec, const Stage& stage, const std::vector<char>& data,
                const std::vector<std::vector<NodeId>>& read_by) {
  if (!spec.split.valid() || static_cast<size_t>(spec.split.index) >= g.value_count())
    fail("patch split: not a value of graph '{}'", g.name);
  if (spec.after.valid() && static_cast<size_t>(spec.after.index) >= g.value_count())
    fail("patch stage start: not a value of graph '{}'", g.name);
  const Value& split = g.value(spec.split);
  if (std::string why = stage_problem(g, spec.split, stage, data, read_by, spec.after); !why.empty())
    fail("cannot patch at '{}': {}", split.name, why);
  if (spec.rows < 1 || spec.cols < 1 || spec.rows > split.shape[2] || spec.cols > split.shape[3])
    fail("cannot patch at '{}': a {}x{} grid does not fit its {}x{} (H x W)", split.name, spec.rows, spec.cols,
         split.shape[2], split.shape[3]);
}

}  // namespace

std::vector<ValueId> patch_split_candidates(const Graph& g) { return patch_split_candidates(g, ValueId{}); }

std::vector<ValueId> patch_split_candidates(const Graph& g, ValueId after) {
  const std::vector<char> data = data_path(g);
  const auto read_by = readers(g);
  std::vector<ValueId> result;
  bool started = !after.valid() || !g.value(after).producer.valid();
  for (NodeId n : g.order()) {
    const Node& node = g.node(n);
    if (!started) {  // only values the order computes after the start
      started = std::find(node.outputs.begin(), node.outputs.end(), after) != node.outputs.end();
      continue;
    }
    if (node.outputs.empty() || !node.outputs[0].valid()) continue;
    const ValueId v = node.outputs[0];
    if (!data[static_cast<size_t>(v.index)] || g.value(v).shape.size() != 4) continue;
    if (stage_problem(g, v, stage_of(g, v, after), data, read_by, after).empty()) result.push_back(v);
  }
  return result;
}

PatchedGraph apply_patches(const Graph& g, const PatchSpec& spec) {
  const std::vector<char> data = data_path(g);
  const bool known = spec.split.valid() && static_cast<size_t>(spec.split.index) < g.value_count() &&
                     (!spec.after.valid() || static_cast<size_t>(spec.after.index) < g.value_count());
  const Stage stage = known ? stage_of(g, spec.split, spec.after) : Stage{};
  check_spec(g, spec, stage, data, readers(g));
  Rewriter rewriter(g, data);
  rewriter.patch(spec, stage);
  PatchedGraph result{.rows = spec.rows, .cols = spec.cols, .split_name = g.value(spec.split).name};
  std::vector<int> stage_of_node;
  result.graph = rewriter.finish(result.patch_of_node, stage_of_node);
  result.original_macs = graph_macs(g);
  result.patched_macs = graph_macs(result.graph);
  return result;
}

PatchedGraph apply_nested_patches(const Graph& g, const PatchSpec& outer, const PatchSpec& inner) {
  const std::vector<char> data = data_path(g);
  const Stage stage = outer.split.valid() && static_cast<size_t>(outer.split.index) < g.value_count()
                          ? stage_of(g, outer.split)
                          : Stage{};
  check_spec(g, outer, stage, data, readers(g));
  if (!inner.split.valid() || static_cast<size_t>(inner.split.index) >= g.value_count() ||
      !stage.members.count(g.value(inner.split).producer) || inner.split == outer.split)
    fail("cannot patch inside the patches of '{}': the inner split is not a value inside its stage",
         g.value(outer.split).name);
  Rewriter outer_rewriter(g, data);
  outer_rewriter.patch(outer, stage);
  const std::vector<std::unordered_map<ValueId, ValueId>> patch_values = outer_rewriter.patch_values();
  std::vector<int> outer_patch, unused;
  const Graph patched = outer_rewriter.finish(outer_patch, unused);

  // Inside each outer patch, its own value of the inner split is patched: the stages are
  // disjoint, so one rewrite of the outer-patched graph does all of them.
  const std::vector<char> patched_data = data_path(patched);
  const auto read_by = readers(patched);
  Rewriter inner_rewriter(patched, patched_data);
  for (size_t k = 0; k < patch_values.size(); ++k) {
    const auto it = patch_values[k].find(inner.split);
    ML_CHECK(it != patch_values[k].end(), "patch {} has no value of '{}'", k, g.value(inner.split).name);
    const PatchSpec spec{.split = it->second, .rows = inner.rows, .cols = inner.cols};
    const Stage inner_stage = stage_of(patched, spec.split);
    check_spec(patched, spec, inner_stage, patched_data, read_by);
    inner_rewriter.patch(spec, inner_stage);
  }
  std::unordered_map<NodeId, int> outer_of;
  for (size_t i = 0; i < patched.order().size(); ++i) outer_of[patched.order()[i]] = outer_patch[i];
  PatchedGraph result{.rows = outer.rows, .cols = outer.cols, .split_name = g.value(outer.split).name};
  std::vector<int> inner_patch, inner_stage_of;
  result.graph = inner_rewriter.finish(inner_patch, inner_stage_of);
  for (size_t i = 0; i < result.graph.order().size(); ++i) {
    const NodeId n = result.graph.order()[i];
    // Inner patch nodes belong to the outer patch whose split they patch (stage index k).
    result.patch_of_node.push_back(inner_patch[i] >= 0 ? inner_stage_of[i] : outer_of.at(n));
    result.inner_patch_of_node.push_back(inner_patch[i]);
  }
  result.inner_rows = inner.rows;
  result.inner_cols = inner.cols;
  result.inner_split_name = g.value(inner.split).name;
  result.original_macs = graph_macs(g);
  result.patched_macs = graph_macs(result.graph);
  return result;
}

int64_t graph_macs(const Graph& g) {
  int64_t total = 0;
  for (NodeId n : g.order()) total += node_macs(g, g.node(n));
  return total;
}

}  // namespace memledger
