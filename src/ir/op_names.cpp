#include "memledger/ir/op_names.h"

namespace memledger::op {

std::span<const std::string_view> named_ops() {
#define MEMLEDGER_NAMED_OP_ENTRY(name) k##name,
  static constexpr std::string_view kAll[] = {MEMLEDGER_NAMED_OPS(MEMLEDGER_NAMED_OP_ENTRY)};
#undef MEMLEDGER_NAMED_OP_ENTRY
  return kAll;
}

}  // namespace memledger::op
