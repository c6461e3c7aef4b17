// The fast kernel set (oneDNN 2.6) as a whole: which family prepares a node (its op table
// record's FastKernel), how each family treats the byte order of its values, and the one
// place that turns a refusal into the reason the reference kernel runs the node. The families
// are kernels_<family>.cpp, their shared oneDNN set-up kernel_common.h. Implementations that
// allocate on their own (oneDNN's gemm-based ones pack through malloc) are refused, as are the
// slow reference ones: then the reference kernel runs.
#include "exec/fast/kernel_common.h"
#include "memledger/ir/integer_node.h"

namespace memledger::exec::fast {
namespace {

// Values of `n` (inputs from `from` on, outputs from `out_from` on) into rule.row_major.
void all_row_major(LayoutRule& rule, const Node& n, size_t from = 0, size_t out_from = 0) {
  for (size_t i = from; i < n.inputs.size(); ++i) rule.row_major.push_back(n.inputs[i]);
  for (size_t i = out_from; i < n.outputs.size(); ++i) rule.row_major.push_back(n.outputs[i]);
}

}  // namespace

bool has_fast_kernel(const Graph& g, const Node& node) { return fast_kernel(g, node) != FastKernel::kNone; }

bool has_fast_integer_form(const Graph& g, const Node& node) {
  const OpRecord* record = find_op(node, g.opset);
  return record && record->integer.fast;
}

LayoutRule layout_rule(const Graph& g, const Node& n) {
  LayoutRule rule;
  const FastKernel kind = fast_kernel(g, n);
  if (kind == FastKernel::kNone || n.inputs.empty() || n.outputs.empty() || !n.inputs[0].valid() ||
      !n.outputs[0].valid()) {
    all_row_major(rule, n);
    return rule;
  }
  const ValueId x = n.inputs[0], y = n.outputs[0];
  switch (kind) {
    case FastKernel::kConv:  // the activation in and out each in either order
      all_row_major(rule, n, 1, 1);
      break;
    case FastKernel::kPool:
    case FastKernel::kGlobalPool:
    case FastKernel::kActivation:
    case FastKernel::kBatchNorm:  // the output in the input's order
      rule.ties.push_back({x, y});
      all_row_major(rule, n, 1, 1);
      break;
    case FastKernel::kBinary: {  // full-shape operands share the output's order
      std::vector<ValueId> tie{y};
      for (ValueId v : n.inputs) {
        if (!v.valid()) continue;
        if (g.value(v).shape == g.value(y).shape)
          tie.push_back(v);
        else if (!layout_neutral(g.value(v)))
          rule.row_major.insert(rule.row_major.end(), {v, y});
      }
      rule.ties.push_back(std::move(tie));
      break;
    }
    case FastKernel::kConcat: {  // on channels of 4-d tensors, all in one order
      const auto rank = static_cast<int64_t>(g.value(y).shape.size());
      const int64_t axis = n.int_attr("axis", 0);
      if (rank == 4 && (axis == 1 || axis == -3)) {
        rule.ties.push_back(n.inputs);
        rule.ties.back().push_back(y);
      } else {
        all_row_major(rule, n);
      }
      break;
    }
    case FastKernel::kCopy:  // the same order where the shape stays
      if (g.value(x).shape == g.value(y).shape) {
        rule.ties.push_back({x, y});
        all_row_major(rule, n, 1, 1);
      } else {
        all_row_major(rule, n);
      }
      break;
    default:
      all_row_major(rule, n);
  }
  return rule;
}

std::unique_ptr<PreparedNode> prepare(const Graph& g, const Node& n, const PrepareOptions& options, std::string& why) {
  const FastKernel kind = fast_kernel(g, n);
  if (kind == FastKernel::kNone) {
    why = "no fast kernel for " + n.op;
    return nullptr;
  }
  set_threads(options.threads);
  try {
    if (has_empty_tensor(g, n)) not_fast("an empty tensor");
    if (kind == FastKernel::kCopy) return prepare_copy(g, n);
    auto node = std::make_unique<DnnlNode>();
    if (kind == FastKernel::kTfliteConv) {  // int8 over NHWC as the file has it
      prepare_tflite_conv(*node, g, n, options);
      return node;
    }
    if (kind == FastKernel::kQuantize) return prepare_quantize(g, n);
    // An integer operator's fast form, where the op table says the fast set has one.
    if (is_integer_node(g, n)) {
      if (!has_fast_integer_form(g, n)) not_fast("no fast integer " + n.op);
      switch (kind) {
        case FastKernel::kConv:
          prepare_integer_conv(*node, g, n, options);
          return node;
        case FastKernel::kGemm:
          prepare_integer_gemm(*node, g, n, options);
          return node;
        case FastKernel::kBinary:
          if (const int x = options.fuse ? gated_input(g, n) : -1; x >= 0) return prepare_integer_gated(g, n, x);
          return prepare_integer_binary(g, n, options);
        case FastKernel::kActivation:
          if (options.fuse && gated_mul_of(g, n)) return skipped_node();
          return prepare_integer_activation(g, n);
        case FastKernel::kGlobalPool:
        case FastKernel::kReduceMean:  // over the spatial axes: the same mean
          return prepare_integer_global_pool(g, n, options);
        case FastKernel::kPool:
          prepare_pool(*node, g, n, n.op == "MaxPool", false, options);
          return node;
        case FastKernel::kConcat:  // blocks copied, or requantized through a table
          return prepare_concat(g, n, options);
        case FastKernel::kSlice:
        case FastKernel::kTranspose:
          break;  // byte movers: the codes as the floats, below
        default:
          not_fast("no fast integer " + n.op);
      }
    }
    switch (kind) {
      case FastKernel::kConv:
        prepare_conv(*node, g, n, options);
        break;
      case FastKernel::kConvTranspose:
        prepare_conv_transpose(*node, g, n, options);
        break;
      case FastKernel::kPool:
        prepare_pool(*node, g, n, n.op == "MaxPool", false, options);
        break;
      case FastKernel::kGlobalPool:
        prepare_pool(*node, g, n, n.op == "GlobalMaxPool", true, options);
        break;
      case FastKernel::kGemm:
        prepare_gemm(*node, g, n, options);
        break;
      case FastKernel::kMatMul:
        prepare_matmul(*node, g, n, options);
        break;
      case FastKernel::kActivation:
        if (options.fuse && gated_mul_of(g, n)) return skipped_node();
        if (options.fuse && fused_conv_of(g, n)) return forward_node(g, n, 0);
        if (auto part = options.fuse ? erf_gelu_part(g, n) : nullptr) return part;
        prepare_activation(*node, g, n);
        break;
      case FastKernel::kBinary:
        if (const int f = options.fuse ? forwarded_input(g, n) : -1; f >= 0) return forward_node(g, n, f);
        if (auto part = options.fuse ? erf_gelu_part(g, n) : nullptr) return part;
        if (options.fuse && prepare_erf_gelu(*node, g, n)) break;
        if (const int x = options.fuse ? gated_input(g, n) : -1; x >= 0)
          prepare_gated(*node, g, n, x);
        else
          prepare_binary(*node, g, n, options);
        break;
      case FastKernel::kBatchNorm:
        prepare_batch_norm(*node, g, n, options);
        break;
      case FastKernel::kSoftmax:
        prepare_softmax(*node, g, n);
        break;
      case FastKernel::kConcat:
        return prepare_concat(g, n, options);
      case FastKernel::kTranspose:
        prepare_transpose(*node, g, n);
        break;
      case FastKernel::kReduceMean:
        prepare_reduce_mean(*node, g, n);
        break;
      case FastKernel::kSlice:
        prepare_slice(*node, g, n);
        break;
      case FastKernel::kNone:  // all three returned above
      case FastKernel::kCopy:
      case FastKernel::kTfliteConv:
      case FastKernel::kQuantize:
        not_fast("no fast kernel");
    }
    return node;
  } catch (const NotFast& e) {
    why = e.why;
  } catch (const dnnl::error& e) {
    why = std::string("oneDNN: ") + e.what();
  } catch (const Error& e) {
    why = e.what();
  }
  return nullptr;
}

}  // namespace memledger::exec::fast
