// Reading a .tflite model (issue 36's target: a 4 MB model under 50 ms). The model is made
// here: a chain of int8 FULLY_CONNECTED layers whose weights add up to about 4 MiB, so the
// figure is the reader's (verify, check, copy the buffers, build the graph), not a disk's.
// The shared person_detect model is read too when MEMLEDGER_TFLITE_MODELS names its folder.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "memledger/tflite/import.h"
#include "tflite/schema_generated.h"

namespace {

namespace fb = memledger::tflite::fb;

// `layers` layers of [width, width] int8 weights over an int8 [1, width] input.
std::vector<uint64_t> chain_model(int layers, int width, size_t& size) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fb::Buffer>> buffers{fb::CreateBuffer(b)};
  std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
  std::vector<flatbuffers::Offset<fb::Operator>> ops;
  const std::vector<int32_t> act{1, width}, wshape{width, width};
  const std::vector<float> scale{0.05f};
  const std::vector<int64_t> zero{0};
  auto quant = [&] { return fb::CreateQuantizationParametersDirect(b, nullptr, nullptr, &scale, &zero); };
  tensors.push_back(fb::CreateTensorDirect(b, &act, fb::TensorType::INT8, 0, "x", quant()));
  const std::vector<uint8_t> weights(static_cast<size_t>(width) * width, 3);
  for (int l = 0; l < layers; ++l) {
    b.ForceVectorAlignment(weights.size(), 1, 16);
    buffers.push_back(fb::CreateBuffer(b, b.CreateVector(weights)));
    const auto w = static_cast<int32_t>(tensors.size());
    tensors.push_back(fb::CreateTensorDirect(b, &wshape, fb::TensorType::INT8,
                                             static_cast<uint32_t>(buffers.size() - 1),
                                             ("w" + std::to_string(l)).c_str(), quant()));
    const auto y = static_cast<int32_t>(tensors.size());
    tensors.push_back(
        fb::CreateTensorDirect(b, &act, fb::TensorType::INT8, 0, ("y" + std::to_string(l)).c_str(), quant()));
    const std::vector<int32_t> in{y - 2, w, -1}, out{y};
    ops.push_back(fb::CreateOperatorDirect(b, 0, &in, &out, fb::BuiltinOptions::FullyConnectedOptions,
                                           fb::CreateFullyConnectedOptions(b).Union()));
  }
  const std::vector<int32_t> inputs{0}, outputs{static_cast<int32_t>(tensors.size()) - 1};
  std::vector<flatbuffers::Offset<fb::SubGraph>> subgraphs{
      fb::CreateSubGraphDirect(b, &tensors, &inputs, &outputs, &ops, "main")};
  std::vector<flatbuffers::Offset<fb::OperatorCode>> codes{fb::CreateOperatorCode(b, 9, 0, 1, 9)};
  b.Finish(fb::CreateModelDirect(b, 3, &codes, &subgraphs, "bench", &buffers), fb::ModelIdentifier());
  size = b.GetSize();
  std::vector<uint64_t> aligned((size + 7) / 8);
  std::memcpy(aligned.data(), b.GetBufferPointer(), size);
  return aligned;
}

void BM_ReadFourMegabyteModel(benchmark::State& state) {
  size_t size = 0;
  const std::vector<uint64_t> model = chain_model(16, 512, size);  // 16 × 256 KiB of weights
  for (auto _ : state) {
    auto m = memledger::import_tflite_bytes({reinterpret_cast<const uint8_t*>(model.data()), size}, "bench");
    benchmark::DoNotOptimize(m);
  }
  state.counters["model_bytes"] = static_cast<double>(size);
}
BENCHMARK(BM_ReadFourMegabyteModel)->Unit(benchmark::kMillisecond);

void BM_ReadPersonDetectFile(benchmark::State& state) {
  const char* dir = std::getenv("MEMLEDGER_TFLITE_MODELS");
  const std::filesystem::path path = std::filesystem::path(dir ? dir : ".") / "person_detect.tflite";
  if (!std::filesystem::exists(path)) {
    state.SkipWithError("set MEMLEDGER_TFLITE_MODELS to the folder holding person_detect.tflite");
    return;
  }
  for (auto _ : state) {
    auto m = memledger::import_tflite_file(path.string());
    benchmark::DoNotOptimize(m);
  }
}
BENCHMARK(BM_ReadPersonDetectFile)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
