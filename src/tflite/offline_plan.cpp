#include "memledger/tflite/offline_plan.h"

#include <cstring>

#include "memledger/core/error.h"
#include "memledger/tflite/import.h"
#include "tflite/schema_generated.h"

namespace memledger {
namespace {

namespace fb = tflite::fb;

// The Model table's field ids (the format's): those copied as they are, and the two rebuilt.
constexpr int kVersion = 0;
constexpr int kBuffers = 4;
constexpr int kMetadata = 6;
constexpr int kModelFields = 8;
constexpr flatbuffers::voffset_t slot(int id) { return static_cast<flatbuffers::voffset_t>(4 + 2 * id); }

const fb::Model* verified_model(std::span<const uint8_t> bytes, const std::string& source) {
  if (!has_tflite_identifier(bytes)) fail("{}: not a TFLite model (no 'TFL3' identifier)", source);
  flatbuffers::Verifier verifier(bytes.data(), bytes.size(), 64, 1000000);
  if (!fb::VerifyModelBuffer(verifier)) fail("{}: the model does not verify", source);
  return fb::GetModel(bytes.data());
}

}  // namespace

std::vector<uint8_t> write_offline_plan(std::span<const uint8_t> bytes, const OfflinePlan& plan,
                                        const std::string& source) {
  const fb::Model* model = verified_model(bytes, source);
  const auto* subgraphs = model->subgraphs();
  if (!subgraphs || plan.subgraph < 0 || static_cast<size_t>(plan.subgraph) >= subgraphs->size())
    fail("{}: the offline plan names subgraph {}, which the model does not have", source, plan.subgraph);
  const auto* tensors = subgraphs->Get(static_cast<flatbuffers::uoffset_t>(plan.subgraph))->tensors();
  const size_t tensor_count = tensors ? tensors->size() : 0;
  if (plan.offsets.size() != tensor_count)
    fail("{}: the offline plan has {} offsets for {} tensors", source, plan.offsets.size(), tensor_count);
  const auto* table = reinterpret_cast<const flatbuffers::Table*>(model);
  // A field this writer does not know would be dropped: refuse instead.
  const uint8_t* vtable = table->GetVTable();
  const auto vtable_bytes = flatbuffers::ReadScalar<flatbuffers::voffset_t>(vtable);
  for (int id = kModelFields; slot(id) + 2 <= vtable_bytes; ++id)
    if (table->GetOptionalFieldOffset(slot(id)) != 0)
      fail("{}: the model table has field {}, which memledger does not know; not rewritten", source, id);
  if (const auto* buffers = model->buffers())
    for (flatbuffers::uoffset_t i = 0; i < buffers->size(); ++i)
      if (buffers->Get(i)->offset() > 1)
        fail("{}: buffers[{}] lies outside the flatbuffer (offset/size); not rewritten", source, i);

  // The original bytes at the end of the new buffer, 16-aligned from the end as from the start.
  flatbuffers::FlatBufferBuilder b(bytes.size() + 4096);
  const size_t pad = (16 - bytes.size() % 16) % 16;
  const std::vector<uint8_t> zeros(pad, 0);
  b.Align(16);
  if (pad) b.PushBytes(zeros.data(), pad);
  b.PushBytes(bytes.data(), bytes.size());
  const auto end = static_cast<flatbuffers::uoffset_t>(b.GetSize());
  // An old object at file position p is `end - p` from the end of the new buffer.
  const auto old_offset = [&](const void* p) {
    return end - static_cast<flatbuffers::uoffset_t>(static_cast<const uint8_t*>(p) - bytes.data());
  };

  // The plan's buffer: int32 values as bytes, 16-aligned as TFLite's buffers are.
  std::vector<int32_t> values{1, plan.subgraph, static_cast<int32_t>(plan.offsets.size())};
  values.insert(values.end(), plan.offsets.begin(), plan.offsets.end());
  std::vector<uint8_t> raw(values.size() * sizeof(int32_t));
  for (size_t i = 0; i < values.size(); ++i) flatbuffers::WriteScalar(raw.data() + 4 * i, values[i]);
  b.ForceVectorAlignment(raw.size(), 1, 16);
  const auto data = b.CreateVector(raw);
  const auto plan_buffer = fb::CreateBuffer(b, data);

  std::vector<flatbuffers::Offset<fb::Buffer>> buffers;
  if (const auto* old = model->buffers())
    for (flatbuffers::uoffset_t i = 0; i < old->size(); ++i) buffers.emplace_back(old_offset(old->Get(i)));
  const auto plan_index = static_cast<uint32_t>(buffers.size());
  buffers.push_back(plan_buffer);
  const auto name = b.CreateString(std::string(kOfflinePlanMetadata));
  std::vector<flatbuffers::Offset<fb::Metadata>> metadata;
  if (const auto* old = model->metadata())
    for (flatbuffers::uoffset_t i = 0; i < old->size(); ++i) {
      const fb::Metadata* m = old->Get(i);
      if (m->name() && m->name()->string_view() == kOfflinePlanMetadata) continue;  // replaced
      metadata.emplace_back(old_offset(m));
    }
  metadata.push_back(fb::CreateMetadata(b, name, plan_index));
  const auto buffers_vector = b.CreateVector(buffers);
  const auto metadata_vector = b.CreateVector(metadata);

  const auto start = b.StartTable();
  b.AddElement<uint32_t>(slot(kVersion), model->version(), 0);
  for (int id = 1; id < kModelFields; ++id) {
    if (id == kBuffers || id == kMetadata) continue;
    // Fields the reader's schema does not type are copied as offsets, unverified: checked here
    // to lie inside the file, field and target both (a fuzzer's file pointed one past it).
    const flatbuffers::voffset_t field = table->GetOptionalFieldOffset(slot(id));
    if (field == 0) continue;
    const auto* at = reinterpret_cast<const uint8_t*>(table) + field;
    const uint8_t* const first = bytes.data();
    const uint8_t* const last = bytes.data() + bytes.size();
    if (at < first || at + sizeof(flatbuffers::uoffset_t) > last)
      fail("{}: model field {} lies outside the file; not rewritten", source, id);
    const auto relative = flatbuffers::ReadScalar<flatbuffers::uoffset_t>(at);
    if (relative == 0 || relative >= static_cast<size_t>(last - at))
      fail("{}: model field {} points outside the file; not rewritten", source, id);
    b.AddOffset(slot(id), flatbuffers::Offset<void>(old_offset(at + relative)));
  }
  b.AddOffset(slot(kBuffers), buffers_vector);
  b.AddOffset(slot(kMetadata), metadata_vector);
  const flatbuffers::Offset<fb::Model> root(b.EndTable(start));
  b.Finish(root, fb::ModelIdentifier());
  std::vector<uint8_t> out(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  verified_model(out, source + " (rewritten)");
  return out;
}

std::optional<OfflinePlan> read_offline_plan(std::span<const uint8_t> bytes, const std::string& source) {
  const fb::Model* model = verified_model(bytes, source);
  const auto* metadata = model->metadata();
  if (!metadata) return std::nullopt;
  for (flatbuffers::uoffset_t i = 0; i < metadata->size(); ++i) {
    const fb::Metadata* m = metadata->Get(i);
    if (!m->name() || m->name()->string_view() != kOfflinePlanMetadata) continue;
    const auto* buffers = model->buffers();
    if (!buffers || m->buffer() >= buffers->size())
      fail("{}: metadata[{}] ({}) names buffer {}, out of range", source, i, kOfflinePlanMetadata, m->buffer());
    const auto* data = buffers->Get(m->buffer())->data();
    const size_t size = data ? data->size() : 0;
    if (size < 12 || size % 4 != 0)
      fail("{}: metadata[{}] ({}): buffer {} has {} bytes, not a whole int32 header", source, i, kOfflinePlanMetadata,
           m->buffer(), size);
    const auto word = [&](size_t k) { return flatbuffers::ReadScalar<int32_t>(data->data() + 4 * k); };
    if (word(0) != 1) fail("{}: {} version {} (1 is known)", source, kOfflinePlanMetadata, word(0));
    OfflinePlan plan;
    plan.subgraph = word(1);
    const int32_t count = word(2);
    if (count < 0 || static_cast<size_t>(count) != size / 4 - 3)
      fail("{}: {} says {} offsets, its buffer holds {}", source, kOfflinePlanMetadata, count, size / 4 - 3);
    for (int32_t k = 0; k < count; ++k) plan.offsets.push_back(word(3 + static_cast<size_t>(k)));
    return plan;
  }
  return std::nullopt;
}

}  // namespace memledger
