// The TFLite builtin operators' records (op_table_tflite.cpp), joined into op_table().
// Private to ir/.
#pragma once

#include <vector>

#include "memledger/ir/op_table.h"

namespace memledger {

std::vector<OpRecord> tflite_records();

}  // namespace memledger
