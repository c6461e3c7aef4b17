// What each axis of a tensor means: batch, channel, height, width, or something else.
// Roles are stated by operator semantics (Conv says axis 1 is C) or by the user, never
// guessed from a dimension that happens to have the right size (DESIGN.md P2).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace memledger {

enum class AxisRole : char { kN = 'N', kC = 'C', kH = 'H', kW = 'W', kOther = '?' };

using AxisRoles = std::vector<AxisRole>;

// "NCHW", with '?' for axes of no known role.
std::string roles_to_string(const AxisRoles& roles);
// Parses "NCHW", "NHWC", "NC", "?C??"; nullopt on any other character.
std::optional<AxisRoles> roles_from_string(const std::string& text);
// `rank` axes, none of known role.
AxisRoles unknown_roles(size_t rank);
// Position of the single axis with role `role`, or nullopt when absent or repeated.
std::optional<int> find_role(const AxisRoles& roles, AxisRole role);

}  // namespace memledger
