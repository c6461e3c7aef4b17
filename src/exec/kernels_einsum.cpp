// Einsum on float32 (and float64, int32, int64): the equation is parsed once per run into
// labels with an extent and, per operand, an element stride (repeated labels in one
// operand, a diagonal, add their strides; "..." stands for the broadcast leading axes).
// Every output element is the sum over the labels the output does not keep of the product
// of the operands, accumulated in the element type; the output is never written over an
// input. Exporters write Einsum for batched matrix products (maxvit's attention), which
// this computes directly without transposed copies.
#include <cstring>
#include <map>

#include "kernel.h"

namespace memledger::exec {
namespace {

struct Equation {
  std::vector<std::string> inputs;  // labels per operand, '.' standing for one ellipsis axis each
  std::string output;
};

// Parses "ij,jk->ik" (an implicit output: the labels used once, in alphabetical order, after
// the ellipsis axes). Ellipses are expanded to '0'.. '9'-like placeholder labels per axis.
Equation parse_equation(const std::string& text, const std::vector<int>& ranks, const std::string& label) {
  std::string eq;
  for (char c : text)
    if (c != ' ') eq += c;
  const auto arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  Equation e;
  size_t start = 0;
  int ellipsis_rank = 0;
  std::vector<std::string> raw;
  while (true) {
    const size_t comma = lhs.find(',', start);
    raw.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (raw.size() != ranks.size())
    fail("node {}: equation '{}' names {} operands, the node has {}", label, text, raw.size(), ranks.size());
  // Ellipsis axes get labels 'A'+k counted from the right (upper case is kept for ellipses;
  // the equation's own labels are mapped to avoid clashes below).
  auto expand = [&](const std::string& term, int rank) {
    std::string out;
    const auto dots = term.find("...");
    if (dots == std::string::npos) {
      if (static_cast<int>(term.size()) != rank)
        fail("node {}: term '{}' has {} labels for rank {}", label, term, term.size(), rank);
      return term;
    }
    const int named = static_cast<int>(term.size()) - 3;
    const int er = rank - named;
    if (er < 0) fail("node {}: term '{}' has more labels than rank {}", label, term, rank);
    ellipsis_rank = std::max(ellipsis_rank, er);
    out = term.substr(0, dots);
    for (int k = er; k > 0; --k) out += static_cast<char>(1 + k - 1);  // \x01.. from the right
    out += term.substr(dots + 3);
    return out;
  };
  for (size_t i = 0; i < raw.size(); ++i) e.inputs.push_back(expand(raw[i], ranks[i]));
  std::string ellipsis;
  for (int k = ellipsis_rank; k > 0; --k) ellipsis += static_cast<char>(1 + k - 1);
  if (arrow != std::string::npos) {
    std::string rhs = eq.substr(arrow + 2);
    const auto dots = rhs.find("...");
    if (dots != std::string::npos) rhs = rhs.substr(0, dots) + ellipsis + rhs.substr(dots + 3);
    e.output = rhs;
  } else {
    std::map<char, int> count;
    for (const std::string& in : e.inputs)
      for (char c : in)
        if (static_cast<unsigned char>(c) > 16) ++count[c];
    e.output = ellipsis;
    for (const auto& [c, n] : count)
      if (n == 1) e.output += c;
  }
  return e;
}

template <typename T>
void einsum_typed(KernelContext& ctx, const Equation& e) {
  OutputView& y = ctx.out();
  // Labels: extents (broadcast 1 against n) and per-operand strides.
  std::map<char, int64_t> extent;
  const size_t k = ctx.inputs.size();
  for (size_t i = 0; i < k; ++i) {
    const InputView& x = ctx.in(i);
    for (size_t a = 0; a < e.inputs[i].size(); ++a) {
      const char c = e.inputs[i][a];
      auto [it, fresh] = extent.emplace(c, x.shape[a]);
      if (!fresh && it->second != x.shape[a]) {
        if (it->second == 1)
          it->second = x.shape[a];
        else if (x.shape[a] != 1)
          fail("node {}: label extents {} and {} differ", ctx.node.label(), it->second, x.shape[a]);
      }
    }
  }
  std::vector<char> kept(e.output.begin(), e.output.end()), summed;
  for (const auto& [c, n] : extent)
    if (e.output.find(c) == std::string::npos) summed.push_back(c);
  std::vector<char> all = kept;
  all.insert(all.end(), summed.begin(), summed.end());
  std::vector<int64_t> extents;
  for (char c : all) extents.push_back(extent.at(c));
  // strides[operand][label position in `all`]
  std::vector<std::vector<int64_t>> strides(k, std::vector<int64_t>(all.size(), 0));
  for (size_t i = 0; i < k; ++i) {
    const InputView& x = ctx.in(i);
    const std::vector<int64_t> own = dense_strides(x.shape);
    for (size_t a = 0; a < e.inputs[i].size(); ++a) {
      if (x.shape[a] == 1) continue;  // broadcast
      const size_t pos = static_cast<size_t>(std::find(all.begin(), all.end(), e.inputs[i][a]) - all.begin());
      strides[i][pos] += own[a];
    }
  }
  for (size_t a = 0; a < kept.size(); ++a)
    if (y.shape[a] != extents[a]) fail("node {}: output shape does not match the equation", ctx.node.label());
  std::vector<const T*> base(k);
  for (size_t i = 0; i < k; ++i) base[i] = ctx.in(i).as<T>();
  T* out = y.as<T>();
  const int64_t outputs = y.elements();
  int64_t inner = 1;
  for (size_t a = kept.size(); a < all.size(); ++a) inner *= extents[a];
  std::vector<int64_t> index(all.size(), 0);
  std::vector<int64_t> offset(k, 0);
  for (int64_t o = 0; o < outputs; ++o) {
    T acc{};
    if (inner > 0) {
      for (int64_t s = 0; s < inner; ++s) {
        T p{1};
        for (size_t i = 0; i < k; ++i) p = static_cast<T>(p * base[i][offset[i]]);
        acc = static_cast<T>(acc + p);
        // advance the summed labels
        for (size_t a = all.size(); a-- > kept.size();) {
          for (size_t i = 0; i < k; ++i) offset[i] += strides[i][a];
          if (++index[a] < extents[a]) break;
          for (size_t i = 0; i < k; ++i) offset[i] -= strides[i][a] * extents[a];
          index[a] = 0;
        }
      }
    }
    out[o] = acc;
    for (size_t a = kept.size(); a-- > 0;) {
      for (size_t i = 0; i < k; ++i) offset[i] += strides[i][a];
      if (++index[a] < extents[a]) break;
      for (size_t i = 0; i < k; ++i) offset[i] -= strides[i][a] * extents[a];
      index[a] = 0;
    }
  }
}

void einsum(KernelContext& ctx) {
  std::vector<int> ranks;
  for (const InputView& x : ctx.inputs) ranks.push_back(x.rank());
  const Equation e = parse_equation(ctx.node.string_attr("equation", ""), ranks, ctx.node.label());
  switch (ctx.out().dtype) {
    case DType::kFloat32:
      return einsum_typed<float>(ctx, e);
    case DType::kFloat64:
      return einsum_typed<double>(ctx, e);
    case DType::kInt32:
      return einsum_typed<int32_t>(ctx, e);
    case DType::kInt64:
      return einsum_typed<int64_t>(ctx, e);
    default:
      fail("node {}: Einsum of {}", ctx.node.label(), dtype_name(ctx.out().dtype));
  }
}

}  // namespace

void add_einsum_kernels(KernelTable& t) {
  t.emplace_back(
      ":Einsum",
      Kernel{.check = [](const Graph& g, const Node& n) -> std::string {
               for (size_t i = 0; i < n.inputs.size(); ++i)
                 if (auto why = check_dtypes(g, n, i, {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64});
                     !why.empty())
                   return why;
               return {};
             },
             .run = einsum});
}

}  // namespace memledger::exec
