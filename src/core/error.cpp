#include "memledger/core/error.h"

#include <cstdio>
#include <cstdlib>

namespace memledger {

void internal_failure(const char* file, int line, const char* condition, const std::string& detail) {
  std::fprintf(stderr, "memledger: internal error at %s:%d: check '%s' failed%s%s\n", file, line, condition,
               detail.empty() ? "" : ": ", detail.c_str());
  std::abort();
}

}  // namespace memledger
