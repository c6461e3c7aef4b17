#include "memledger/core/axis_role.h"

namespace memledger {

std::string roles_to_string(const AxisRoles& roles) {
  std::string text;
  for (AxisRole role : roles) text += static_cast<char>(role);
  return text;
}

std::optional<AxisRoles> roles_from_string(const std::string& text) {
  AxisRoles roles;
  for (char c : text) {
    switch (c) {
      case 'N':
      case 'C':
      case 'H':
      case 'W':
      case '?':
        roles.push_back(static_cast<AxisRole>(c));
        break;
      default:
        return std::nullopt;
    }
  }
  return roles;
}

AxisRoles unknown_roles(size_t rank) { return AxisRoles(rank, AxisRole::kOther); }

std::optional<int> find_role(const AxisRoles& roles, AxisRole role) {
  std::optional<int> found;
  for (size_t i = 0; i < roles.size(); ++i) {
    if (roles[i] != role) continue;
    if (found) return std::nullopt;
    found = static_cast<int>(i);
  }
  return found;
}

}  // namespace memledger
