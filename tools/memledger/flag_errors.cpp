#include "flag_errors.h"

namespace memledger::cli {

std::string_view flag_of(ErrorOption option) {
  switch (option) {
    case ErrorOption::kNone:
      return "";
    case ErrorOption::kMemoryLimit:
      return "--max-memory";
    case ErrorOption::kInputShapes:
      return "--input-shape";
  }
  return "";
}

}  // namespace memledger::cli
