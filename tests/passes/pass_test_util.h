// Helpers of the pass tests: small graphs built through the library, and the golden
// check (text form before → pass → after, compared with tests/golden/passes/<pass>/<case>.txt;
// MEMLEDGER_UPDATE_GOLDEN=1 rewrites the expected files).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "memledger/ir/graph.h"
#include "memledger/ir/printer.h"
#include "memledger/passes/pass_table.h"
#include "memledger/verify/verify.h"

namespace memledger::testing {

inline const AxisRoles kNCHW{AxisRole::kN, AxisRole::kC, AxisRole::kH, AxisRole::kW};

// A float32 tensor whose values repeat start, start + step, ... every `period` elements
// (inputs and weights that differ between neighbouring positions).
inline Tensor ramp(Shape shape, float start, float step, int period) {
  Tensor t(DType::kFloat32, std::move(shape));
  for (int64_t i = 0; i < t.elements(); ++i) t.data<float>()[i] = start + step * static_cast<float>(i % period);
  return t;
}

inline bool update_golden() {
  const char* v = std::getenv("MEMLEDGER_UPDATE_GOLDEN");
  return v != nullptr && std::string(v) == "1";
}

// Deterministic values in [-1, 1).
inline Tensor pattern(DType dtype, const Shape& shape, int seed) {
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.elements(); ++i)
    t.set_element_from_double(i, static_cast<double>((i * 37 + seed * 11) % 97) / 48.5 - 1.0);
  return t;
}

// A per-channel parameter (value depends on the channel only) stored at `shape`, C at axis 1.
inline Tensor channel_values(const Shape& shape, float base, float step) {
  Tensor t(DType::kFloat32, shape);
  int64_t inner = 1;
  for (size_t d = 2; d < shape.size(); ++d) inner *= shape[d];
  for (int64_t i = 0; i < t.elements(); ++i)
    t.data<float>()[static_cast<size_t>(i)] = base + step * static_cast<float>((i / inner) % shape[1]);
  return t;
}

inline ValueId add_act(Graph& g, const std::string& name, const Shape& shape, DType dtype = DType::kFloat32) {
  return g.add_value({.name = name, .dtype = dtype, .shape = shape, .roles = shape.size() == 4 ? kNCHW : AxisRoles{}});
}

// A k×k Conv (k odd) padded to keep H and W, from `in` to `out` (their channel counts give the
// weights' shape), weights pattern(seed) and, with `bias`, a bias pattern(seed + 4).
inline void add_same_conv(Graph& g, const std::string& name, ValueId in, ValueId out, int64_t k, int seed,
                          bool bias = false) {
  const int64_t maps = g.value(out).shape.at(1), channels = g.value(in).shape.at(1), pad = k / 2;
  Node node{
      .name = name,
      .op = "Conv",
      .inputs = {in, g.add_constant(name + ".w", pattern(DType::kFloat32, {maps, channels, k, k}, seed))},
      .outputs = {out},
      .attributes = {{"kernel_shape", std::vector<int64_t>{k, k}}, {"pads", std::vector<int64_t>{pad, pad, pad, pad}}}};
  if (bias) node.inputs.push_back(g.add_constant(name + ".b", pattern(DType::kFloat32, {maps}, seed + 4)));
  g.add_node(std::move(node));
}

inline ValueId add_int64(Graph& g, const std::string& name, const std::vector<int64_t>& values) {
  Tensor t(DType::kInt64, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) t.data<int64_t>()[i] = values[i];
  return g.add_constant(name, t);
}

// Runs `pass` on a copy of `before`, checks the golden file and the numbers; returns the
// rewritten graph.
inline Graph check_pass(const std::string& pass, const std::string& name, const Graph& before,
                        const PassOptions& options = {}, double rtol = 1e-5) {
  Graph after = before;
  const PassResult result = run_pass(find_pass(pass), after, options);
  const std::string text = "// input\n" + print_graph(before) + "// after " + pass +
                           (result.changed() ? "" : " (unchanged)") + "\n" + print_graph(after);
  const std::filesystem::path file =
      std::filesystem::path(MEMLEDGER_SOURCE_DIR) / "tests/golden/passes" / pass / (name + ".txt");
  if (update_golden()) {
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << text;
  } else {
    std::ifstream in(file, std::ios::binary);
    EXPECT_TRUE(in.good()) << file << " missing: run with MEMLEDGER_UPDATE_GOLDEN=1";
    std::stringstream expected;
    expected << in.rdbuf();
    EXPECT_EQ(text, expected.str()) << "golden " << file << " differs (MEMLEDGER_UPDATE_GOLDEN=1 rewrites it)";
  }
  const Verification v = verify_rewrite(before, after, {.seed = 7, .rtol = rtol});
  EXPECT_TRUE(v.ok) << pass << "/" << name << ":\n" << v.describe();
  return after;
}

}  // namespace memledger::testing
