#include "fit_patches.h"

#include <algorithm>
#include <unordered_map>

#include "memledger/core/error.h"

namespace memledger {
namespace {

// Strips per pool pass, from each step's pass and strip.
std::vector<int> strips_per_pass(size_t passes, const std::vector<int>& pass_of_step,
                                 const std::vector<int>& strip_of_step) {
  std::vector<int> strips(passes, 0);
  for (size_t s = 0; s < pass_of_step.size(); ++s)
    if (pass_of_step[s] >= 0)
      strips.at(static_cast<size_t>(pass_of_step[s])) =
          std::max(strips.at(static_cast<size_t>(pass_of_step[s])), strip_of_step[s] + 1);
  return strips;
}

}  // namespace

FitPatches fit_patches_of(const Graph& base, const PatchCandidate& candidate, const PatchedGraph& patched) {
  FitPatches patches{.spec = candidate.spec,
                     .split = base.value(candidate.spec.split).name,
                     .original_macs = patched.original_macs,
                     .patched_macs = patched.patched_macs,
                     .patch_of_step = patched.patch_of_node,
                     .pool_names = patched.pool_names,
                     .pool_pass_of_step = patched.pool_pass_of_node,
                     .pool_strip_of_step = patched.pool_strip_of_node};
  patches.pool_strips =
      strips_per_pass(patches.pool_names.size(), patches.pool_pass_of_step, patches.pool_strip_of_step);
  patches.spec.rows = patched.rows;
  patches.spec.cols = patched.cols;
  if (candidate.inner) {
    patches.inner_spec = candidate.inner;
    patches.inner_split = base.value(candidate.inner->split).name;
    patches.inner_patch_of_step = patched.inner_patch_of_node;
  }
  return patches;
}

FitPatches with_second_stage(const Graph& first, const FitPatches& first_patches, const PatchCandidate& second,
                             const PatchedGraph& patched) {
  struct Tags {
    int patch = -1, inner = -1, pass = -1, strip = -1;
  };
  std::unordered_map<NodeId, Tags> first_of;
  for (size_t i = 0; i < first.order().size(); ++i)
    first_of[first.order()[i]] = {first_patches.patch_of_step[i],
                                  first_patches.inner_spec ? first_patches.inner_patch_of_step[i] : -1,
                                  first_patches.pool_pass_of_step[i], first_patches.pool_strip_of_step[i]};
  FitPatches patches = first_patches;
  patches.patch_of_step.clear();
  patches.inner_patch_of_step.clear();
  patches.pool_pass_of_step.clear();
  patches.pool_strip_of_step.clear();
  const int first_passes = static_cast<int>(first_patches.pool_names.size());
  for (size_t i = 0; i < patched.graph.order().size(); ++i) {
    const auto it = first_of.find(patched.graph.order()[i]);
    const Tags t = it == first_of.end() ? Tags{} : it->second;
    patches.patch_of_step.push_back(t.patch);
    if (first_patches.inner_spec) patches.inner_patch_of_step.push_back(t.inner);
    const int second_pass = patched.pool_pass_of_node[i];
    patches.pool_pass_of_step.push_back(second_pass >= 0 ? first_passes + second_pass : t.pass);
    patches.pool_strip_of_step.push_back(second_pass >= 0 ? patched.pool_strip_of_node[i] : t.strip);
  }
  patches.pool_names.insert(patches.pool_names.end(), patched.pool_names.begin(), patched.pool_names.end());
  patches.pool_strips =
      strips_per_pass(patches.pool_names.size(), patches.pool_pass_of_step, patches.pool_strip_of_step);
  patches.second_spec = second.spec;
  patches.second_start = first.value(second.spec.after).name;
  patches.second_split = first.value(second.spec.split).name;
  patches.second_patch_of_step = patched.patch_of_node;
  patches.patched_macs += patched.extra_macs();
  return patches;
}

ValueId find_value(const Graph& g, const std::string& name) {
  for (size_t i = 0; i < g.value_count(); ++i)
    if (g.value(ValueId{static_cast<int32_t>(i)}).name == name) return ValueId{static_cast<int32_t>(i)};
  return {};
}

ValueId value_named(const Graph& g, const std::string& name) {
  const ValueId id = find_value(g, name);
  ML_CHECK(id.valid(), "no value '{}' in the patched graph", name);
  return id;
}

}  // namespace memledger
