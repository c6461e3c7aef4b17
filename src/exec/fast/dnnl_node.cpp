#include "exec/fast/dnnl_node.h"
#include "exec/fast/parallel.h"

#include <omp.h>

#include "exec/fast/silu.h"

namespace memledger::exec::fast {
namespace {

constexpr int64_t kRegionAlignment = 64;
thread_local int call_depth = 0;

const dnnl::stream& cpu_stream() {
  static const dnnl::stream stream(cpu_engine());
  return stream;
}

void check_status(dnnl_status_t status, const KernelContext& ctx) {
  if (status != dnnl_success) fail("node {}: oneDNN execution failed (status {})", ctx.node.label(), int(status));
}

}  // namespace

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

int onednn_call_depth() { return call_depth; }

void set_threads(int threads) { omp_set_num_threads(std::max(threads, 1)); }

dnnl::primitive_attr user_scratchpad_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

dnnl::memory::dims to_dims(const Shape& shape) {
  if (shape.empty()) return {1};
  return dnnl::memory::dims(shape.begin(), shape.end());
}

dnnl::memory::desc plain_desc(const dnnl::memory::dims& dims, dnnl::memory::data_type type) {
  dnnl::memory::dims strides(dims.size());
  int64_t s = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = s;
    s *= std::max<int64_t>(dims[i], 1);
  }
  return dnnl::memory::desc(dims, type, strides);
}

dnnl::memory::data_type dnnl_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return dnnl::memory::data_type::f32;
    case DType::kInt32:
      return dnnl::memory::data_type::s32;
    case DType::kInt8:
      return dnnl::memory::data_type::s8;
    case DType::kUInt8:
      return dnnl::memory::data_type::u8;
    default:
      return dnnl::memory::data_type::undef;
  }
}

dnnl::memory DnnlNode::bind(Source source, int index, const dnnl::memory::desc& desc) {
  dnnl::memory memory(desc, cpu_engine(), DNNL_MEMORY_NONE);
  Binding b{.memory = memory, .source = source, .index = index, .offset = 0};
  if (source == Source::kWorkspace) {
    b.offset = workspace_bytes_;
    const int64_t bytes = static_cast<int64_t>(desc.get_size());
    workspace_bytes_ += (bytes + kRegionAlignment - 1) / kRegionAlignment * kRegionAlignment;
  }
  bindings_.push_back(b);
  return memory;
}

dnnl::memory DnnlNode::input(int index, const dnnl::memory::desc& desc) { return bind(Source::kInput, index, desc); }
dnnl::memory DnnlNode::output(int index, const dnnl::memory::desc& desc) { return bind(Source::kOutput, index, desc); }
dnnl::memory DnnlNode::workspace(const dnnl::memory::desc& desc) { return bind(Source::kWorkspace, 0, desc); }

dnnl::memory DnnlNode::alias(const dnnl::memory& m, const dnnl::memory::desc& desc) {
  for (const Binding& b : bindings_)
    if (b.memory.get() == m.get() && b.source != Source::kWorkspace) return bind(b.source, b.index, desc);
  ML_CHECK(false, "an alias of a memory object that is no input or output of the node");
  return {};
}

dnnl::memory DnnlNode::scratchpad(const dnnl::primitive_desc_base& pd) {
  const dnnl::memory::desc desc = pd.scratchpad_desc();
  if (desc.get_size() == 0) return {};
  return workspace(desc);
}

dnnl::memory DnnlNode::reordered(const dnnl::memory& from, const dnnl::memory::desc& want) {
  if (from.get_desc() == want) return from;
  dnnl::memory to = workspace(want);
  reorder_step(from, to);
  return to;
}

dnnl::memory DnnlNode::constant_reordered(const dnnl::memory& from, const Tensor& constant,
                                          const dnnl::memory::desc& want, const PrepareOptions& options) {
  if (from.get_desc() == want) return from;
  if (!options.prepack_weights) return reordered(from, want);
  const auto bytes = static_cast<int64_t>(want.get_size());
  prepacked_bytes_ += bytes;
  if (options.contract_only) return dnnl::memory(want, cpu_engine(), DNNL_MEMORY_NONE);
  // Made once, outside any run: oneDNN's own scratchpad is fine here.
  prepacked_.push_back(std::make_unique<std::byte[]>(static_cast<size_t>(bytes)));
  dnnl::memory to(want, cpu_engine(), prepacked_.back().get());
  dnnl::memory source(from.get_desc(), cpu_engine(), const_cast<std::byte*>(constant.bytes().data()));
  dnnl::stream stream(cpu_engine());
  dnnl::reorder(source, to).execute(stream, source, to);
  stream.wait();
  constant.release_pages();
  return to;
}

void DnnlNode::reorder_step(const dnnl::memory& from, const dnnl::memory& to) {
  const dnnl::reorder::primitive_desc pd(cpu_engine(), from.get_desc(), cpu_engine(), to.get_desc(),
                                         user_scratchpad_attr());
  std::vector<std::pair<int, dnnl::memory>> args{{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
  if (dnnl::memory pad = scratchpad(pd)) args.emplace_back(DNNL_ARG_SCRATCHPAD, pad);
  add_step(dnnl::reorder(pd), std::move(args), std::string("reorder ") + pd.impl_info_str());
}

void DnnlNode::add_step(const dnnl::primitive& primitive, std::vector<std::pair<int, dnnl::memory>> args,
                        const std::string& impl) {
  Step step{.primitive = primitive, .keep = {}, .args = {}};
  for (auto& [arg, memory] : args) {
    step.keep.push_back(memory);
    step.args.push_back({arg, memory.get()});
  }
  steps_.push_back(std::move(step));
  impls_.push_back(impl);
}

void DnnlNode::add_loop(std::function<void(KernelContext&)> loop, const std::string& impl) {
  steps_.push_back(Step{.primitive = {}, .keep = {}, .args = {}, .loop = std::move(loop)});
  impls_.push_back(impl);
}

void DnnlNode::run(KernelContext& ctx) {
  ML_CHECK(static_cast<int64_t>(ctx.workspace.size()) == workspace_bytes_, "node {}: workspace of {} B, {} declared",
           ctx.node.label(), ctx.workspace.size(), workspace_bytes_);
  for (const Binding& b : bindings_) {
    void* data = nullptr;
    switch (b.source) {
      case Source::kInput:
        data = const_cast<std::byte*>(ctx.in(static_cast<size_t>(b.index)).data);
        break;
      case Source::kOutput:
        data = ctx.out(static_cast<size_t>(b.index)).data;
        break;
      case Source::kWorkspace:
        data = ctx.workspace.data() + b.offset;
        break;
    }
    ++call_depth;
    const dnnl_status_t status = dnnl_memory_set_data_handle_v2(b.memory.get(), data, nullptr);
    --call_depth;
    check_status(status, ctx);
  }
  for (Step& step : steps_) {
    if (step.loop) {
      step.loop(ctx);
      continue;
    }
    ++call_depth;
    const dnnl_status_t status = dnnl_primitive_execute(step.primitive.get(), cpu_stream().get(),
                                                        static_cast<int>(step.args.size()), step.args.data());
    --call_depth;
    check_status(status, ctx);
  }
  if (silu_elements_ > 0) {
    auto* y = reinterpret_cast<float*>(ctx.out(0).data);
    const float* x =
        silu_input_ < 0 ? y : reinterpret_cast<const float*>(ctx.in(static_cast<size_t>(silu_input_)).data);
    // Ranges of whole vectors (16 floats): each element takes the same operations either way.
    parallel_ranges(silu_elements_, kLoopGrain,
                    [&](int64_t begin, int64_t end, int) { silu(x + begin, y + begin, end - begin); });
  }
}

void DnnlNode::set_silu(int input, int64_t elements) {
  silu_input_ = input;
  silu_elements_ = elements;
}

std::string DnnlNode::describe() const {
  std::string text;
  for (const std::string& impl : impls_) text += (text.empty() ? "" : ", ") + impl;
  if (silu_elements_ > 0)
    text += std::string(text.empty() ? "" : ", ") + "silu (memledger " + std::string(isa_name(effective_isa())) + ")";
  return text;
}

}  // namespace memledger::exec::fast
