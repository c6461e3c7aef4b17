#include "memledger/plan/allocate/banked.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>

#include "memledger/core/error.h"
#include "memledger/plan/allocate/lower_bound.h"
#include "memledger/plan/allocate/resident_first.h"
#include "memledger/plan/allocate/validate.h"

namespace memledger::allocate {
namespace {

using Clock = std::chrono::steady_clock;

int64_t align_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

// Per bank and step, the bytes of the buffers assigned there (sizes rounded up to the bank's
// alignment): the necessary condition for a bank's buffers to place within its capacity.
class LiveBytes {
 public:
  LiveBytes(const BankedProblem& p, int64_t steps)
      : p_(p), live_(p.banks.size(), std::vector<int64_t>(static_cast<size_t>(steps), 0)) {}

  int64_t size(int i, int k) const {
    return align_up(p_.buffers[static_cast<size_t>(i)].buffer.size, p_.banks[static_cast<size_t>(k)].alignment);
  }
  // The most bytes bank k has live at one step of buffer i's lifetime, with i added.
  int64_t peak_with(int i, int k) const {
    const Buffer& b = p_.buffers[static_cast<size_t>(i)].buffer;
    const auto& row = live_[static_cast<size_t>(k)];
    const int64_t most = *std::max_element(row.begin() + b.lower, row.begin() + b.upper);
    return most + size(i, k);
  }
  bool fits(int i, int k) const { return peak_with(i, k) <= p_.banks[static_cast<size_t>(k)].capacity; }
  void add(int i, int k, int sign) {
    const Buffer& b = p_.buffers[static_cast<size_t>(i)].buffer;
    const int64_t s = sign * size(i, k);
    auto& row = live_[static_cast<size_t>(k)];
    for (int64_t t = b.lower; t < b.upper; ++t) row[static_cast<size_t>(t)] += s;
  }

 private:
  const BankedProblem& p_;
  std::vector<std::vector<int64_t>> live_;
};

struct Context {
  const BankedProblem& p;
  int n = 0;
  int64_t steps = 0;
  std::vector<double> density;
  std::vector<int> order;                    // densest first
  std::vector<std::vector<int>> allowed_by;  // each buffer's banks, cheapest first

  double cost(int i, int k) const {
    return static_cast<double>(p.buffers[static_cast<size_t>(i)].accessed_bytes) *
           p.banks[static_cast<size_t>(k)].access_cost;
  }
};

// Bank k's buffers under `bank` as a one-arena problem, in the problem's order (so one bank
// is exactly the problem a one-arena plan sees).
Problem bank_problem(const BankedProblem& p, const std::vector<int>& bank, int k, std::vector<int>* index) {
  Problem sub;
  for (size_t i = 0; i < bank.size(); ++i) {
    if (bank[i] != k) continue;
    Buffer b = p.buffers[i].buffer;
    b.alignment = p.banks[static_cast<size_t>(k)].alignment;
    sub.buffers.push_back(std::move(b));
    if (index) index->push_back(static_cast<int>(i));
  }
  return sub;
}

Solution place(const Problem& sub, int64_t capacity, Algorithm algorithm, double seconds) {
  if (sub.buffers.empty()) return Solution{.algorithm = "empty", .optimal = true};
  return resident_first(sub, plan(sub, algorithm, {.time_budget_seconds = seconds, .capacity = capacity}));
}

// Whether bank k's buffers place within its capacity by the greedy portfolio.
bool places(const Context& c, const std::vector<int>& bank, int k) {
  const Problem sub = bank_problem(c.p, bank, k, nullptr);
  const int64_t capacity = c.p.banks[static_cast<size_t>(k)].capacity;
  return sub.buffers.empty() || plan(sub, Algorithm::kGreedy, {.capacity = capacity}).arena_bytes <= capacity;
}

double total_cost(const Context& c, const std::vector<int>& bank) {
  double sum = 0;
  for (int i = 0; i < c.n; ++i) sum += c.cost(i, bank[static_cast<size_t>(i)]);
  return sum;
}

// Densest first into the cheapest bank with room; a buffer that fits nowhere goes where the
// least overflows (the plan stays valid, and the overflow is reported).
std::vector<int> greedy(const Context& c, LiveBytes& live) {
  std::vector<int> bank(static_cast<size_t>(c.n), -1);
  for (int i : c.order) {
    const auto& allowed = c.allowed_by[static_cast<size_t>(i)];
    int chosen = -1;
    for (int k : allowed)
      if (live.fits(i, k)) {
        chosen = k;
        break;
      }
    if (chosen < 0) {
      int64_t least = 0;
      for (int k : allowed) {
        const int64_t over = live.peak_with(i, k) - c.p.banks[static_cast<size_t>(k)].capacity;
        if (chosen < 0 || over < least) chosen = k, least = over;
      }
    }
    bank[static_cast<size_t>(i)] = chosen;
    live.add(i, chosen, +1);
  }
  return bank;
}

// A bank whose placed arena overflows although its live bytes fit (fragmentation) gives its
// least dense buffer at the top of the arena to the cheapest other bank with room.
void repair(const Context& c, LiveBytes& live, std::vector<int>& bank) {
  for (int round = 0; round < c.n; ++round) {
    bool moved = false;
    for (int k = 0; k < static_cast<int>(c.p.banks.size()); ++k) {
      std::vector<int> index;
      const Problem sub = bank_problem(c.p, bank, k, &index);
      if (sub.buffers.empty()) continue;
      const int64_t capacity = c.p.banks[static_cast<size_t>(k)].capacity;
      const Solution s = plan(sub, Algorithm::kGreedy, {.capacity = capacity});
      if (s.arena_bytes <= capacity) continue;
      std::vector<int> top;
      for (size_t j = 0; j < index.size(); ++j)
        if (s.offsets[j] + sub.buffers[j].size > capacity) top.push_back(index[j]);
      std::sort(top.begin(), top.end(),
                [&](int a, int b) { return c.density[static_cast<size_t>(a)] < c.density[static_cast<size_t>(b)]; });
      for (int i : top) {
        for (int k2 : c.allowed_by[static_cast<size_t>(i)]) {
          if (k2 == k) continue;
          live.add(i, k, -1);
          if (live.fits(i, k2)) {
            live.add(i, k2, +1);
            bank[static_cast<size_t>(i)] = k2;
            moved = true;
            break;
          }
          live.add(i, k, +1);
        }
        if (moved) break;
      }
    }
    if (!moved) return;
  }
}

// Moves to cheaper banks and swaps with buffers of fewer accessed bytes there, each kept only
// when both banks still place within capacity; until no step helps or the time is up.
void improve(const Context& c, LiveBytes& live, std::vector<int>& bank, Clock::time_point deadline) {
  const auto cost_of = [&](int k) { return c.p.banks[static_cast<size_t>(k)].access_cost; };
  const auto accessed = [&](int i) { return c.p.buffers[static_cast<size_t>(i)].accessed_bytes; };
  for (bool improved = true; improved && Clock::now() < deadline;) {
    improved = false;
    for (int i : c.order) {
      if (Clock::now() >= deadline) return;
      const int k = bank[static_cast<size_t>(i)];
      for (int k2 : c.allowed_by[static_cast<size_t>(i)]) {
        if (!(cost_of(k2) < cost_of(k))) break;  // cheapest first: the rest cost no less
        live.add(i, k, -1);
        if (live.fits(i, k2)) {
          live.add(i, k2, +1);
          bank[static_cast<size_t>(i)] = k2;
          if (places(c, bank, k2)) {
            improved = true;
            break;
          }
          live.add(i, k2, -1);
          bank[static_cast<size_t>(i)] = k;
          live.add(i, k, +1);
          continue;
        }
        // Swap with a buffer of k2 that may live in k and is accessed less.
        bool swapped = false;
        for (int j = 0; j < c.n && !swapped; ++j) {
          if (bank[static_cast<size_t>(j)] != k2 || accessed(j) >= accessed(i)) continue;
          const auto& aj = c.allowed_by[static_cast<size_t>(j)];
          if (std::find(aj.begin(), aj.end(), k) == aj.end()) continue;
          const Buffer& bi = c.p.buffers[static_cast<size_t>(i)].buffer;
          const Buffer& bj = c.p.buffers[static_cast<size_t>(j)].buffer;
          if (bj.upper <= bi.lower || bi.upper <= bj.lower) continue;  // apart in time: no help
          live.add(j, k2, -1);
          const bool ok = live.fits(i, k2) && live.fits(j, k);
          if (ok) {
            live.add(i, k2, +1);
            live.add(j, k, +1);
            bank[static_cast<size_t>(i)] = k2;
            bank[static_cast<size_t>(j)] = k;
            if (places(c, bank, k) && places(c, bank, k2)) {
              swapped = true;
              break;
            }
            live.add(i, k2, -1);
            live.add(j, k, -1);
            bank[static_cast<size_t>(i)] = k;
            bank[static_cast<size_t>(j)] = k2;
          }
          live.add(j, k2, +1);
        }
        if (swapped) {
          improved = true;
          break;
        }
        live.add(i, k, +1);
      }
    }
  }
}

// Branch and bound over every assignment, densest buffer first: a branch is cut when a bank's
// live bytes exceed its capacity or when its cost plus the cheapest cost of the rest reaches
// the best; a leaf counts when the exact planner places every bank within capacity.
class ExactAssignment {
 public:
  ExactAssignment(const Context& c, LiveBytes& live) : c_(c), live_(live), rest_(static_cast<size_t>(c.n) + 1, 0) {
    for (int d = c.n - 1; d >= 0; --d) {
      const int i = c.order[static_cast<size_t>(d)];
      rest_[static_cast<size_t>(d)] =
          rest_[static_cast<size_t>(d) + 1] + c.cost(i, c.allowed_by[static_cast<size_t>(i)][0]);
    }
    bank_.assign(static_cast<size_t>(c.n), -1);
  }

  // Improves `best` (with cost `best_cost`, +inf when none fits); false when a leaf's
  // placement could be neither found nor refuted, so the optimum is not proven.
  bool search(std::vector<int>& best, double& best_cost) {
    best_ = &best;
    best_cost_ = &best_cost;
    visit(0, 0.0);
    return proven_;
  }

 private:
  void visit(int depth, double cost) {
    if (cost + rest_[static_cast<size_t>(depth)] >= *best_cost_ - 1e-9) return;
    if (depth == c_.n) {
      leaf(cost);
      return;
    }
    const int i = c_.order[static_cast<size_t>(depth)];
    for (int k : c_.allowed_by[static_cast<size_t>(i)]) {
      if (!live_.fits(i, k)) continue;
      live_.add(i, k, +1);
      bank_[static_cast<size_t>(i)] = k;
      visit(depth + 1, cost + c_.cost(i, k));
      live_.add(i, k, -1);
    }
    bank_[static_cast<size_t>(i)] = -1;
  }

  void leaf(double cost) {
    for (int k = 0; k < static_cast<int>(c_.p.banks.size()); ++k) {
      const Problem sub = bank_problem(c_.p, bank_, k, nullptr);
      if (sub.buffers.empty()) continue;
      const int64_t capacity = c_.p.banks[static_cast<size_t>(k)].capacity;
      const Allocation a =
          allocate(sub, {.algorithm = Algorithm::kExact, .exact = {.time_budget_seconds = 0.05, .capacity = capacity}});
      if (a.verdict == Verdict::kFits) continue;
      if (a.verdict == Verdict::kNotFound) proven_ = false;
      return;
    }
    *best_ = bank_;
    *best_cost_ = cost;
  }

  const Context& c_;
  LiveBytes& live_;
  std::vector<double> rest_;  // the cheapest cost of the buffers from each depth on
  std::vector<int> bank_;
  std::vector<int>* best_ = nullptr;
  double* best_cost_ = nullptr;
  bool proven_ = true;
};

// See the header: the per-step fractional relaxation over cost levels, the maximum over steps.
double traffic_lower_bound(const Context& c) {
  std::vector<double> levels;
  for (const BankSpec& b : c.p.banks) levels.push_back(b.access_cost);
  std::sort(levels.begin(), levels.end());
  levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
  std::vector<double> level_capacity(levels.size(), 0);
  for (const BankSpec& b : c.p.banks)
    level_capacity[static_cast<size_t>(std::lower_bound(levels.begin(), levels.end(), b.access_cost) -
                                       levels.begin())] += static_cast<double>(b.capacity);
  std::vector<double> cheapest(static_cast<size_t>(c.n));
  double all_cheapest = 0;
  for (int i = 0; i < c.n; ++i) {
    cheapest[static_cast<size_t>(i)] = c.cost(i, c.allowed_by[static_cast<size_t>(i)][0]);
    all_cheapest += cheapest[static_cast<size_t>(i)];
  }
  // Any subset of steps gives a valid bound; past ~5·10^7 buffer-steps, every stride-th step.
  const int64_t work = std::max<int64_t>(1, c.steps) * std::max(1, c.n);
  const int64_t stride = std::max<int64_t>(1, work / 50'000'000);
  double bound = all_cheapest;
  for (int64_t t = 0; t < c.steps; t += stride) {
    std::vector<double> room = level_capacity;
    double at_t = all_cheapest;
    for (int i : c.order) {
      const Buffer& b = c.p.buffers[static_cast<size_t>(i)].buffer;
      if (t < b.lower || t >= b.upper || b.size == 0) continue;
      at_t -= cheapest[static_cast<size_t>(i)];
      const double floor = c.p.banks[static_cast<size_t>(c.allowed_by[static_cast<size_t>(i)][0])].access_cost;
      const double d = c.density[static_cast<size_t>(i)];
      double remaining = static_cast<double>(b.size);
      for (size_t l = 0; l < levels.size() && remaining > 0; ++l) {
        if (levels[l] < floor) continue;
        const double take = std::min(remaining, room[l]);
        room[l] -= take;
        remaining -= take;
        at_t += take * d * levels[l];
      }
      at_t += remaining * d * levels.back();  // no room anywhere: nothing fits at this step
    }
    bound = std::max(bound, at_t);
  }
  return bound;
}

}  // namespace

BankedSolution plan_banked(const BankedProblem& p, const BankedOptions& options) {
  ML_CHECK(!p.banks.empty(), "a banked problem needs a bank");
  Problem all;
  for (const BankedBuffer& b : p.buffers) all.buffers.push_back(b.buffer);
  check_problem(all);
  Context c{.p = p, .n = static_cast<int>(p.buffers.size())};
  for (const BankedBuffer& b : p.buffers) c.steps = std::max(c.steps, b.buffer.upper);
  for (int i = 0; i < c.n; ++i) {
    const BankedBuffer& b = p.buffers[static_cast<size_t>(i)];
    if (b.allowed.empty()) fail("buffer '{}' may live in no bank", b.buffer.id);
    for (int k : b.allowed)
      ML_CHECK(k >= 0 && k < static_cast<int>(p.banks.size()), "buffer '{}': bank {} of {}", b.buffer.id, k,
               p.banks.size());
    std::vector<int> allowed = b.allowed;
    std::stable_sort(allowed.begin(), allowed.end(), [&](int x, int y) {
      return p.banks[static_cast<size_t>(x)].access_cost < p.banks[static_cast<size_t>(y)].access_cost;
    });
    c.allowed_by.push_back(std::move(allowed));
    c.density.push_back(
        b.buffer.size == 0 ? 0.0 : static_cast<double>(b.accessed_bytes) / static_cast<double>(b.buffer.size));
  }
  c.order.resize(static_cast<size_t>(c.n));
  std::iota(c.order.begin(), c.order.end(), 0);
  std::stable_sort(c.order.begin(), c.order.end(), [&](int x, int y) {
    const auto ux = static_cast<size_t>(x), uy = static_cast<size_t>(y);
    if (c.density[ux] != c.density[uy]) return c.density[ux] > c.density[uy];
    return p.buffers[ux].buffer.size > p.buffers[uy].buffer.size;
  });

  BankedSolution out;
  LiveBytes live(p, c.steps);
  std::vector<int> bank = greedy(c, live);
  if (p.banks.size() > 1) {
    repair(c, live, bank);
    improve(c, live, bank,
            Clock::now() + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(std::min(1.0, options.time_budget_seconds))));
  }
  out.method = p.banks.size() == 1 ? "one bank" : "greedy by access density + improvement";

  double assignments = 1;
  for (const auto& allowed : c.allowed_by) assignments *= static_cast<double>(allowed.size());
  if (p.banks.size() > 1 && c.n <= options.exact_max_buffers && assignments <= double(1 << 20)) {
    bool heuristic_fits = true;
    for (int k = 0; k < static_cast<int>(p.banks.size()) && heuristic_fits; ++k) heuristic_fits = places(c, bank, k);
    double best_cost = heuristic_fits ? total_cost(c, bank) : std::numeric_limits<double>::infinity();
    LiveBytes empty(p, c.steps);
    ExactAssignment search(c, empty);
    out.assignment_optimal = search.search(bank, best_cost);
    out.method = "exact";
  }

  // Final placement of every bank, its share of the time budget, checked by the validator.
  std::vector<int> sorted_banks = bank;
  std::sort(sorted_banks.begin(), sorted_banks.end());
  const auto used = static_cast<double>(
      std::max<ptrdiff_t>(1, std::unique(sorted_banks.begin(), sorted_banks.end()) - sorted_banks.begin()));
  out.bank = bank;
  out.offsets.assign(static_cast<size_t>(c.n), 0);
  for (int k = 0; k < static_cast<int>(p.banks.size()); ++k) {
    const BankSpec& spec = p.banks[static_cast<size_t>(k)];
    BankUse use;
    use.problem = bank_problem(p, bank, k, &use.buffer_index);
    use.solution = place(use.problem, spec.capacity, options.algorithm, options.time_budget_seconds / used);
    const auto violation = find_violation(use.problem, use.solution);
    ML_CHECK(!violation, "bank '{}': the {} placement is invalid: {}", spec.name, use.solution.algorithm,
             violation.value_or(""));
    for (size_t j = 0; j < use.buffer_index.size(); ++j) {
      out.offsets[static_cast<size_t>(use.buffer_index[j])] = use.solution.offsets[j];
      use.accessed_bytes += p.buffers[static_cast<size_t>(use.buffer_index[j])].accessed_bytes;
    }
    use.traffic_cost = static_cast<double>(use.accessed_bytes) * spec.access_cost;
    use.lower_bound_bytes = lower_bound(use.problem).bytes;
    use.fits = use.solution.arena_bytes <= spec.capacity;
    if (!use.fits) {
      out.fits = false;
      const auto largest = std::max_element(use.problem.buffers.begin(), use.problem.buffers.end(),
                                            [](const Buffer& a, const Buffer& b) { return a.size < b.size; });
      out.overflows.push_back(
          fmt::format("bank '{}': its {} buffers need {} B but it has {} B ({} B too many; the largest is '{}', {} B)",
                      spec.name, use.problem.buffers.size(), use.solution.arena_bytes, spec.capacity,
                      use.solution.arena_bytes - spec.capacity, largest->id, largest->size));
    }
    out.traffic_cost += use.traffic_cost;
    out.banks.push_back(std::move(use));
  }
  out.lower_bound_cost = traffic_lower_bound(c);
  if (out.fits && out.traffic_cost <= out.lower_bound_cost * (1 + 1e-12)) out.assignment_optimal = true;
  return out;
}

}  // namespace memledger::allocate
