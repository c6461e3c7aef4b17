// Headers nearly every translation unit includes, compiled once per target (CMake's
// target_precompile_headers, MEMLEDGER_PRECOMPILE_HEADERS): parsing them was a third to a half
// of a file's compile time. Only the standard library and fmt, which
// change with the compiler, never memledger's own headers, so an edit to one of ours
// rebuilds what includes it and nothing more. The library's stages and the CLI use it; the test
// binaries do not (with it, GCC 12 at -O2 raised false -Warray-bounds and -Wstringop-overflow
// errors on std::string + chains in three test files). Every source still includes what it
// uses: the sanitizer build (scripts/test.sh --sanitize) and the fuzz build compile without
// this, so a missing include fails there.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>
