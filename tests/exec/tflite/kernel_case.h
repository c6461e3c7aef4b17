// One TFLite kernel run on a hand-made node: values with their quantization, the node's
// attributes, input bytes; the kernel is taken from add_tflite_kernels (exec/kernel.h) and
// run on dense views as the interpreter would, so the tests need no op table record.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "exec/kernel.h"

namespace memledger::tflite_test {

inline Quantization per_tensor(float scale, int64_t zero_point) { return {{scale}, {zero_point}, -1}; }

class KernelCase {
 public:
  explicit KernelCase(std::string op) { node_.op = std::move(op), node_.domain = "tflite"; }

  template <typename T>
  KernelCase& input(DType dtype, Shape shape, std::vector<T> data, std::optional<Quantization> q = {}) {
    Value v{.name = "in" + std::to_string(node_.inputs.size()), .dtype = dtype, .shape = std::move(shape)};
    v.quant = std::move(q);
    node_.inputs.push_back(graph_.add_value(std::move(v)));
    std::vector<std::byte> bytes(data.size() * sizeof(T));
    if (!data.empty()) std::memcpy(bytes.data(), data.data(), bytes.size());
    inputs_.push_back(std::move(bytes));
    return *this;
  }
  KernelCase& omitted_input() {
    node_.inputs.push_back(ValueId{});
    inputs_.emplace_back();
    return *this;
  }
  KernelCase& output(DType dtype, Shape shape, std::optional<Quantization> q = {}) {
    Value v{.name = "out" + std::to_string(node_.outputs.size()), .dtype = dtype, .shape = std::move(shape)};
    v.quant = std::move(q);
    node_.outputs.push_back(graph_.add_value(std::move(v)));
    return *this;
  }
  KernelCase& attr(const std::string& key, Attribute value) {
    node_.attributes[key] = std::move(value);
    return *this;
  }

  // Why the kernel refuses the node ("" when it runs it).
  std::string check() {
    finish();
    return kernel().check(graph_, graph_.node(id_));
  }
  // Runs the kernel; output i's bytes as T. `alias` makes output `alias.second` the bytes
  // of input `alias.first` (what the planner does for an in-place or state rule).
  template <typename T>
  std::vector<T> run(size_t out = 0, std::optional<std::pair<size_t, size_t>> alias = {}) {
    const std::string why = check();
    EXPECT_EQ(why, "") << node_.op;
    const Node& node = graph_.node(id_);
    exec::KernelContext ctx{graph_, node, {}, {}, {}};
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      exec::InputView v;
      if (node.inputs[i].valid()) {
        const Value& value = graph_.value(node.inputs[i]);
        v = {value.dtype, value.shape, inputs_[i].data()};
      }
      ctx.inputs.push_back(v);
    }
    outputs_.assign(node.outputs.size(), {});
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      const Value& value = graph_.value(node.outputs[i]);
      int64_t n = 1;
      for (int64_t e : value.shape) n *= e;
      outputs_[i].assign(static_cast<size_t>(n * dtype_bits(value.dtype) / 8), std::byte{0x5a});
      std::byte* data = outputs_[i].data();
      if (alias && alias->second == i) data = inputs_[alias->first].data();
      ctx.outputs.push_back({value.dtype, value.shape, data});
    }
    kernel().run(ctx);
    const size_t bytes = outputs_[out].size();
    const std::byte* src = alias && alias->second == out ? inputs_[alias->first].data() : outputs_[out].data();
    std::vector<T> result(bytes / sizeof(T));
    std::memcpy(result.data(), src, bytes);
    return result;
  }

  const Graph& graph() const { return graph_; }

 private:
  void finish() {
    if (!added_) id_ = graph_.add_node(node_), added_ = true;
  }
  const exec::Kernel& kernel() const {
    static const exec::KernelTable table = [] {
      exec::KernelTable t;
      exec::add_tflite_kernels(t);
      return t;
    }();
    for (const auto& [key, k] : table)
      if (key == "tflite:" + node_.op) return k;
    ADD_FAILURE() << "no kernel tflite:" << node_.op;
    return table.front().second;
  }

  Graph graph_;
  Node node_;
  NodeId id_;
  bool added_ = false;
  std::vector<std::vector<std::byte>> inputs_, outputs_;
};

// Deterministic pseudo-random integers in [lo, hi] (a small LCG: the same on every machine).
template <typename T>
std::vector<T> seeded(size_t n, int lo, int hi, uint32_t seed) {
  std::vector<T> v(n);
  uint32_t s = seed * 2654435761u + 1;
  for (auto& e : v) {
    s = s * 1664525u + 1013904223u;
    e = static_cast<T>(lo + static_cast<int>((s >> 8) % static_cast<uint32_t>(hi - lo + 1)));
  }
  return v;
}

}  // namespace memledger::tflite_test
