#include "memledger/ir/quantization.h"

namespace memledger {

std::string_view to_string(Requantization rule) {
  switch (rule) {
    case Requantization::kFloatScale:
      return "float-scale (onnxruntime)";
    case Requantization::kFixedPoint:
      return "fixed-point multiplier and shift (TFLite)";
  }
  return "?";
}

}  // namespace memledger
