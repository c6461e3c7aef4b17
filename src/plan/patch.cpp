// Patch-based execution as a graph rewrite (see plan/patch.h). The algorithm:
//  1. The stage: the split value's ancestors. Values that depend on a graph input form the
//     data path; stage nodes off it (computing from constants only) stay as they are.
//  2. Per patch of the split's H×W grid, walking the stage backwards: a node's output box is
//     the hull of what its consumers need, and each data input needs the box the node's
//     patch rule gives (plan/patch_rules.h).
//  3. Per patch, forwards: clones of the data-path nodes on their boxes (a consumer that
//     needs less than a value's box reads a Slice of it), then WritePatch into the split's
//     full buffer. The patches take the split producer's place in the execution order.
//  4. A global pool inside the stage (a squeeze-and-excitation block's) needs all of its
//     input before any patch can go on past it: its pass runs first, in the pool's place —
//     row strips of the part of the stage up to the pool's input, each added into the pooled
//     sums (memledger.AccumulatePool) — and the nodes computing from the pooled value (the
//     gate) stay where they were, between the passes and the patches, which read the gate
//     whole. Values computed from a pool alone are off the data path, like constants.
#include "memledger/plan/patch.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "memledger/core/error.h"
#include "memledger/ir/accumulate_pool.h"
#include "memledger/ir/write_patch.h"
#include "memledger/plan/patch_rules.h"

namespace memledger {
namespace {

struct Stage {
  std::vector<NodeId> nodes;  // in execution order
  std::unordered_set<NodeId> members;
  std::vector<NodeId> pools;  // global pools whose result its nodes read, in execution order (not members)
};

// The stage's pools that get a pass: those over a data value (a pool of constants is one).
std::vector<NodeId> passes_of(const Graph& g, const Stage& stage, const std::vector<char>& data) {
  std::vector<NodeId> result;
  for (NodeId pool : stage.pools)
    if (data[static_cast<size_t>(g.node(pool).inputs[0].index)]) result.push_back(pool);
  return result;
}

// Per value: whether it is on the data path — it depends on a graph input other than
// through a strip pool's result (plan/patch_rules.h: those are read whole, like constants).
std::vector<char> data_path(const Graph& g) {
  std::vector<char> data(g.value_count(), 0);
  for (ValueId in : g.inputs()) data[static_cast<size_t>(in.index)] = 1;
  for (NodeId n : g.order()) {
    const Node& node = g.node(n);
    bool any = false;
    for (ValueId in : node.inputs) any = any || (in.valid() && data[static_cast<size_t>(in.index)]);
    if (any && is_strip_pool(g, node)) any = false;
    for (ValueId out : node.outputs)
      if (out.valid()) data[static_cast<size_t>(out.index)] = any ? 1 : 0;
  }
  return data;
}

bool made_by_pool(const Graph& g, ValueId v) {
  const NodeId producer = g.value(v).producer;
  return producer.valid() && is_strip_pool(g, g.node(producer));
}

// Per value: the live nodes that read it.
std::vector<std::vector<NodeId>> readers(const Graph& g) {
  std::vector<std::vector<NodeId>> result(g.value_count());
  for (NodeId n : g.order())
    for (ValueId in : g.node(n).inputs)
      if (in.valid()) result[static_cast<size_t>(in.index)].push_back(n);
  return result;
}

// The stage of `split`: its ancestors, not walking past `after` (when valid) nor into a
// strip pool (its pass computes it; a memledger.AccumulatePool's was computed already).
Stage stage_of(const Graph& g, ValueId split, ValueId after = {}) {
  Stage stage;
  std::unordered_set<NodeId> pools;
  std::vector<NodeId> work{g.value(split).producer};
  while (!work.empty()) {
    const NodeId n = work.back();
    work.pop_back();
    if (!n.valid() || !stage.members.insert(n).second) continue;
    for (ValueId in : g.node(n).inputs) {
      if (!in.valid() || in == after) continue;
      if (made_by_pool(g, in)) {
        if (!is_accumulate_pool(g.node(g.value(in).producer))) pools.insert(g.value(in).producer);
        continue;
      }
      work.push_back(g.value(in).producer);
    }
  }
  for (NodeId n : g.order()) {
    if (stage.members.count(n)) stage.nodes.push_back(n);
    if (pools.count(n)) stage.pools.push_back(n);
  }
  return stage;
}

// Why the stage ending at `split` (starting after `after` when valid) cannot run patch by
// patch, or empty.
std::string stage_problem(const Graph& g, ValueId split, const Stage& stage, const std::vector<char>& data,
                          const std::vector<std::vector<NodeId>>& read_by, ValueId after = {}) {
  const Value& v = g.value(split);
  if (!v.producer.valid()) return "it is a graph input or a constant, not a node's output";
  if (!data[static_cast<size_t>(split.index)])
    return made_by_pool(g, split)
               ? "it is a global pool's result, read whole by the patches after its pass (not an activation to patch)"
               : "it does not depend on a graph input";
  if (v.shape.size() != 4) return fmt::format("it is {}, not a 4-D NCHW activation", shape_to_string(v.shape));
  if (after.valid()) {
    if (split == after) return "it is where the stage starts";
    if (g.value(after).shape.size() != 4) return fmt::format("the stage's start '{}' is not 4-D", g.value(after).name);
    bool reads_after = false;
    for (NodeId n : stage.nodes)
      for (ValueId in : g.node(n).inputs) reads_after = reads_after || in == after;
    if (!reads_after) return fmt::format("its stage does not start at '{}'", g.value(after).name);
  }
  for (NodeId n : passes_of(g, stage, data)) {
    const ValueId x = g.node(n).inputs[0];
    if (x != after && !g.is_graph_input(x) && !stage.members.count(g.value(x).producer))
      return fmt::format("node {} in its stage pools '{}', which the stage does not compute", g.node(n).label(),
                         g.value(x).name);
  }
  for (NodeId n : stage.nodes) {
    const Node& node = g.node(n);
    if (!data[static_cast<size_t>(node.outputs.at(0).index)]) continue;  // read whole by the patches
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
        if (!stage.members.count(reader) &&
            std::find(stage.pools.begin(), stage.pools.end(), reader) == stage.pools.end())
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
  // with this call's index (stage_of_node), their patch of its grid (patch_of_node) and,
  // for the strips of a pool's pass, the pass (pass_of_node).
  void patch(const PatchSpec& spec, const Stage& stage) {
    spec_ = spec;
    ++stage_index_;
    for (NodeId pool : passes_of(in_, stage, data_)) emit_pool_pass(pool);
    pass_ = -1;
    next_ = node_after(in_.value(spec.split).producer);
    std::vector<NodeId> nodes;
    for (NodeId n : stage.nodes)
      if (is_data(in_.node(n).outputs[0])) {
        nodes.push_back(n);
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
        const ValueId result = emit_patch(spec_.split, box, nodes);
        std::unordered_map<ValueId, ValueId>& values = patch_values_.emplace_back();
        for (const auto& [original, held] : local_)
          if (!in_.is_graph_input(original) && original != spec_.after) values[original] = held.first;
        const bool last = r == spec_.rows - 1 && c == spec_.cols - 1;
        const ValueId y = last ? spec_.split
                               : out_.add_value({.name = names_.fresh(split.name + ".acc" + std::to_string(patch_)),
                                                 .dtype = split.dtype,
                                                 .shape = split.shape,
                                                 .roles = split.roles,
                                                 .quant = split.quant});
        emit(write_patch_node(accumulator, result, {0, 0, box.h0, box.w0}, split.shape, y,
                              split.name + ".write" + suffix_));
        accumulator = y;
      }
  }

  // Per node of the last finish()'s order: the pool pass it belongs to and its row strip
  // (-1 outside one; patch_of_node is -1 there).
  const std::vector<int>& pass_of_node() const { return pass_of_node_; }
  const std::vector<int>& strip_of_node() const { return strip_of_node_; }

  // The rewritten graph, each stage's patch nodes where the stage's nodes were; per node of
  // its order, the patch and the patch() call it belongs to (-1 outside every stage).
  Graph finish(std::vector<int>& patch_of_node, std::vector<int>& stage_of_node) {
    std::vector<NodeId> order;
    order.reserve(out_.order().size());
    auto place_before = [&](NodeId n) {
      if (const auto it = emitted_before_.find(n); it != emitted_before_.end())
        order.insert(order.end(), it->second.begin(), it->second.end());
    };
    for (NodeId n : in_.order()) {  // an erased node's place still takes what goes before it
      place_before(n);
      if (out_.is_live(n)) order.push_back(n);
    }
    place_before(NodeId{});
    out_.set_order(std::move(order));
    patch_of_node.clear();
    stage_of_node.clear();
    pass_of_node_.clear();
    strip_of_node_.clear();
    for (NodeId n : out_.order()) {
      const auto it = emitted_.find(n);
      const Tag tag = it == emitted_.end() ? Tag{} : it->second;
      patch_of_node.push_back(tag.pass < 0 ? tag.patch : -1);
      stage_of_node.push_back(tag.stage);
      pass_of_node_.push_back(tag.pass);
      strip_of_node_.push_back(tag.pass < 0 ? -1 : tag.patch);
    }
    return std::move(out_);
  }

 private:
  bool is_data(ValueId v) const { return v.valid() && data_[static_cast<size_t>(v.index)] != 0; }

  NodeId node_after(NodeId n) const {
    const auto& order = in_.order();
    const auto it = std::find(order.begin(), order.end(), n);
    return it != order.end() && it + 1 != order.end() ? *(it + 1) : NodeId{};
  }

  void emit(Node node) {
    const NodeId id = out_.add_node(std::move(node));
    emitted_before_[next_].push_back(id);
    emitted_[id] = {.patch = patch_, .stage = stage_index_, .pass = pass_};
  }

  // A pool's pass, in the pool's place: row strips of the stage up to its input, each added
  // into the pooled sums; the last strip's AccumulatePool produces the pool's own output.
  // Strips, not patches: the sums run over whole rows, top to bottom, the reference order.
  void emit_pool_pass(NodeId pool) {
    pass_ = passes_++;
    next_ = pool;
    const Node& node = in_.node(pool);
    const ValueId x = node.inputs[0], pooled = node.outputs[0];
    const Shape& shape = in_.value(x).shape;
    const int64_t H = shape[2], W = shape[3];
    const int strips = static_cast<int>(
        std::min<int64_t>(H, spec_.pool_rows > 0 ? spec_.pool_rows : int64_t{spec_.rows} * spec_.cols));
    std::vector<NodeId> nodes;  // none when the pool reads the stage's start: the strips are crops of it
    if (x != spec_.after && !in_.is_graph_input(x))
      for (NodeId n : stage_of(in_, x, spec_.after).nodes)
        if (is_data(in_.node(n).outputs[0])) nodes.push_back(n);
    out_.erase_node(pool);
    ValueId sums;
    for (int r = 0; r < strips; ++r) {
      const Box box{r * H / strips, (r + 1) * H / strips, 0, W};
      patch_ = r;
      suffix_ = fmt::format(".pool{}_s{}", pass_, r);
      const ValueId strip = emit_patch(x, box, nodes);
      const bool last = r == strips - 1;
      const Value& out = in_.value(pooled);
      const ValueId y = last ? pooled
                             : out_.add_value({.name = names_.fresh(out.name + ".sums" + std::to_string(r)),
                                               .dtype = DType::kFloat64,
                                               .shape = out.shape,
                                               .roles = out.roles});
      emit(accumulate_pool_node(strip, sums, last ? H * W : 0, y, out.name + ".accumulate" + suffix_));
      sums = y;
    }
  }

  // The boxes one patch of `split` needs: per data value the hull over its readers, per
  // (node, input) what that reader needs.
  void compute_boxes(ValueId split, const Box& split_box, const std::vector<NodeId>& nodes) {
    box_.clear();
    need_.clear();
    box_[split] = split_box;
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
      const Node& node = in_.node(*it);
      const Box out = box_.at(node.outputs[0]);
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        if (!is_data(node.inputs[i])) continue;
        const Box need = needed_input_box(in_, node, i, out);
        if (need.empty())
          fail("cannot patch at '{}': node {} needs an empty box of '{}' for its output box {}", in_.value(split).name,
               node.label(), in_.value(node.inputs[i]).name, box_to_string(out));
        need_[{*it, i}] = need;
        auto [slot, inserted] = box_.emplace(node.inputs[i], need);
        if (!inserted) slot->second = hull(slot->second, need);
      }
    }
  }

  // Clones of `nodes` (the data nodes of the stage of `split`, in order) computing `split`
  // on `split_box`; returns the patch's value of it.
  ValueId emit_patch(ValueId split, const Box& split_box, const std::vector<NodeId>& nodes) {
    compute_boxes(split, split_box, nodes);
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
    for (NodeId n : nodes) {
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
                                              .roles = y.roles,
                                              .quant = y.quant});
      clone.outputs.assign(1, patch_y);
      emit(std::move(clone));
      local_[node.outputs[0]] = {patch_y, out};
    }
    return read(split, split_box);
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
                                            .roles = source.roles,
                                            .quant = source.quant});
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
  NodeId next_;  // the nodes emitted now go before this node of in_'s order (invalid: at the end)
  int patch_ = -1;
  int pass_ = -1;  // the pool pass being emitted, -1 for the patches
  int passes_ = 0;
  std::string suffix_;
  std::unordered_map<ValueId, Box> box_;
  std::map<std::pair<NodeId, size_t>, Box> need_;
  std::unordered_map<ValueId, std::pair<ValueId, Box>> local_;
  std::map<std::tuple<int32_t, int64_t, int64_t, int64_t, int64_t>, ValueId> crops_;
  std::map<std::vector<int64_t>, ValueId> constants_;
  struct Tag {
    int patch = -1, stage = -1, pass = -1;
  };
  std::unordered_map<NodeId, Tag> emitted_;  // patch node → its patch, patch() call, pool pass
  std::unordered_map<NodeId, std::vector<NodeId>> emitted_before_;
  std::vector<std::unordered_map<ValueId, ValueId>> patch_values_;
  std::vector<int> pass_of_node_, strip_of_node_;
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

// The names of the values the stage's pool passes compute, in order.
std::vector<std::string> pool_names(const Graph& g, const Stage& stage, const std::vector<char>& data) {
  std::vector<std::string> names;
  for (NodeId pool : passes_of(g, stage, data)) names.push_back(g.value(g.node(pool).outputs[0]).name);
  return names;
}

}  // namespace

std::vector<ValueId> patch_split_candidates(const Graph& g, ValueId after, bool through_pools) {
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
    const Stage stage = stage_of(g, v, after);
    if (!through_pools && !passes_of(g, stage, data).empty()) continue;
    if (stage_problem(g, v, stage, data, read_by, after).empty()) result.push_back(v);
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
  result.pool_pass_of_node = rewriter.pass_of_node();
  result.pool_strip_of_node = rewriter.strip_of_node();
  result.pool_names = pool_names(g, stage, data);
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
  const std::vector<int> outer_pass = outer_rewriter.pass_of_node(), outer_strip = outer_rewriter.strip_of_node();

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
  struct Outer {
    int patch, pass, strip;
  };
  std::unordered_map<NodeId, Outer> outer_of;
  for (size_t i = 0; i < patched.order().size(); ++i)
    outer_of[patched.order()[i]] = {outer_patch[i], outer_pass[i], outer_strip[i]};
  PatchedGraph result{.rows = outer.rows, .cols = outer.cols, .split_name = g.value(outer.split).name};
  std::vector<int> inner_patch, inner_stage_of;
  result.graph = inner_rewriter.finish(inner_patch, inner_stage_of);
  for (size_t i = 0; i < result.graph.order().size(); ++i) {
    const NodeId n = result.graph.order()[i];
    // Inner patch nodes belong to the outer patch whose split they patch (stage index k).
    const Outer outer_tag = inner_patch[i] >= 0 ? Outer{inner_stage_of[i], -1, -1} : outer_of.at(n);
    result.patch_of_node.push_back(outer_tag.patch);
    result.inner_patch_of_node.push_back(inner_patch[i]);
    result.pool_pass_of_node.push_back(outer_tag.pass);
    result.pool_strip_of_node.push_back(outer_tag.strip);
  }
  result.pool_names = pool_names(g, stage, data);
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
