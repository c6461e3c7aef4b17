#include "onnx/dimension_denotation.h"

namespace memledger::onnx_io {
namespace {

constexpr const char* kBatch = "DATA_BATCH";
constexpr const char* kChannel = "DATA_CHANNEL";
constexpr const char* kFeature = "DATA_FEATURE";

std::vector<std::string> written(const AxisRoles& roles, bool with_spatial) {
  std::vector<std::string> out(roles.size());
  for (size_t a = 0; a < roles.size(); ++a) {
    if (roles[a] == AxisRole::kN) out[a] = kBatch;
    if (roles[a] == AxisRole::kC) out[a] = kChannel;
    if (with_spatial && (roles[a] == AxisRole::kH || roles[a] == AxisRole::kW)) out[a] = kFeature;
  }
  return out;
}

}  // namespace

std::vector<std::string> denotations_from_roles(const AxisRoles& roles) {
  std::vector<std::string> out = written(roles, true);
  if (roles_from_denotations(out) != roles) out = written(roles, false);
  return out;
}

AxisRoles roles_from_denotations(const std::vector<std::string>& denotations) {
  AxisRoles roles = unknown_roles(denotations.size());
  int batches = 0, channels = 0;
  for (size_t a = 0; a < denotations.size(); ++a) {
    if (denotations[a] == kBatch) roles[a] = AxisRole::kN, ++batches;
    if (denotations[a] == kChannel) roles[a] = AxisRole::kC, ++channels;
  }
  if (batches > 1 || channels > 1) return unknown_roles(denotations.size());
  int features_seen = 0;
  for (size_t a = denotations.size(); a-- > 0;) {
    if (denotations[a] != kFeature) continue;
    if (features_seen == 0) roles[a] = AxisRole::kW;
    if (features_seen == 1) roles[a] = AxisRole::kH;
    ++features_seen;
  }
  return roles;
}

}  // namespace memledger::onnx_io
