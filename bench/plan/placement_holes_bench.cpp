// Where the decisions with slack are lost (issue 14): for each slack instance of
// placement_slack_bench's sizing, the holes of the known placement (the pieces the generator
// took out) against the holes the slack-filler sweep guesses from the slack profile, and the
// perfect-packing search on the problem made tight by each: with the true holes, and with the
// sweep's; then the packing that chooses its holes among the candidates of many sampled
// decompositions (find_packing_with_holes, slack_hole_candidates), whole and in parts
// (HoleParts), and how many of the true holes are among them. A diagnostic: a search is never given the true holes.
//
//   placement_holes_bench [--instances=N] [--only=K] [--budget=S] [--first-seed=K] [--verbose]
//                         [--holes-only] [--tolerance=K1,K2,...] [--strips] [--forced=ROUNDS]
//                         [--forced-search] [--unambiguous] [--relays] [--joined] [--with-holes]
//                         [--unknown=K1,K2,...]
//
// The true holes are counted as a placement sees them: clipped to the buffers' first and last
// step, and two of one size that follow each other at a step where no buffer starts or ends
// joined into one (the slack cannot change there, so their bytes are one rectangle). --tolerance packs, instead
// of the rest, the true holes with K wrong candidates (the first K of a shuffle of the candidates
// that are not true holes) for each K: how many wrong candidates the packing bears. --strips
// takes as the true holes the witness's free bytes cut into strips (strip_holes) instead of the
// pieces removed. --forced packs, instead of the rest, with the edge holes taken first
// (with_edge_holes, ROUNDS rounds) beside the packing among all candidates, and counts the edge
// holes that are not true holes and those that lie in no free rectangle of the known placement
// (an edge hole that is no removed piece may be another decomposition of the same free bytes;
// --verbose lists them); with --forced-search, the decision search with waste
// (decide_placement) on the problem itself against the same on the problem with the edge
// holes; --unambiguous reads the edges with EdgeReading::ambiguous_open false. --relays packs,
// instead of the rest, the problem with the true holes as it is and with its relays joined
// (relays.h), and says whether every joined run lies at one offset of the known placement,
// and how many lifetimes exactly two buffers share, and how many such pairs lie stacked there.
// --joined runs every mode on the instance with its relays joined (the witness of each run's
// first buffer for the run). --with-holes packs among hole candidates with
// decide_placement_with_holes (decision_search.h) instead of find_packing_with_holes. --unknown
// runs, instead of the rest, the decision search with waste on the problem with all but K of the
// true holes as buffers, for each K: how many holes the search finds by itself.
//
// Prints one line per instance (CPU time and nodes of each packing, and of decide_within on
// the problem as it is) and a summary per cut style; --verbose adds each true hole the candidates
// miss, with the candidates that start or end where it does and the other true holes there. --budget is CPU seconds
// (default 2); the searches get 4 × that in wall time, and the CPU time decides.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "memledger/plan/allocate/decision_search.h"
#include "memledger/plan/allocate/exact.h"
#include "memledger/plan/allocate/generator.h"
#include "memledger/plan/allocate/perfect_packing.h"
#include "memledger/plan/allocate/relays.h"
#include "memledger/plan/allocate/slack_fillers.h"
#include "plan/allocate/split_mix.h"

namespace memledger::allocate {
namespace {

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

using Shape = std::tuple<int64_t, int64_t, int64_t>;  // lower, upper, size

std::vector<Shape> shapes(const std::vector<Buffer>& buffers) {
  std::vector<Shape> out;
  for (const Buffer& b : buffers) out.emplace_back(b.lower, b.upper, b.size);
  std::sort(out.begin(), out.end());
  return out;
}

// The removed pieces as a placement of the problem's buffers sees them (see the header).
std::vector<Buffer> effective_holes(const SlackInstance& inst) {
  std::set<int64_t> steps;
  for (const Buffer& b : inst.problem.buffers) {
    steps.insert(b.lower);
    steps.insert(b.upper);
  }
  std::vector<Buffer> holes = inst.removed;
  if (steps.empty()) return holes;
  for (Buffer& h : holes) {
    h.lower = std::max(h.lower, *steps.begin());
    h.upper = std::min(h.upper, *steps.rbegin());
  }
  for (bool joined = true; joined;) {
    joined = false;
    for (size_t i = 0; i < holes.size() && !joined; ++i) {
      for (size_t j = 0; j < holes.size() && !joined; ++j) {
        if (i != j && holes[i].upper == holes[j].lower && holes[i].size == holes[j].size &&
            !steps.contains(holes[i].upper)) {
          holes[i].upper = holes[j].upper;
          holes.erase(holes.begin() + static_cast<std::ptrdiff_t>(j));
          joined = true;
        }
      }
    }
  }
  return holes;
}

// The free bytes of the witness as a canonical set of holes: for each byte, its maximal runs of
// free sections; bytes next to each other with the same run make one rectangle (a "strip"). Any
// placement's free bytes decompose so, and the problem with these holes is tight; the pieces the
// generator removed are one decomposition of the same bytes, the strips another.
std::vector<Buffer> strip_holes(const SlackInstance& inst) {
  const Problem& problem = inst.problem;
  std::vector<int64_t> steps, cuts = {0, inst.capacity};
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    const Buffer& b = problem.buffers[i];
    steps.push_back(b.lower);
    steps.push_back(b.upper);
    cuts.push_back(inst.witness[i]);
    cuts.push_back(inst.witness[i] + b.size);
  }
  for (auto* v : {&steps, &cuts}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  auto at = [](const std::vector<int64_t>& v, int64_t x) {
    return static_cast<size_t>(std::lower_bound(v.begin(), v.end(), x) - v.begin());
  };
  const size_t sections = steps.size() - 1, spans = cuts.size() - 1;
  std::vector<std::vector<bool>> used(spans, std::vector<bool>(sections, false));
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    const Buffer& b = problem.buffers[i];
    for (size_t y = at(cuts, inst.witness[i]); y < at(cuts, inst.witness[i] + b.size); ++y) {
      for (size_t k = at(steps, b.lower); k < at(steps, b.upper); ++k) used[y][k] = true;
    }
  }
  std::vector<Buffer> holes;
  std::vector<std::pair<size_t, size_t>> open;  // runs of the span below, for merging
  std::vector<size_t> open_hole;                // the hole each of those runs went into
  for (size_t y = 0; y < spans; ++y) {
    std::vector<std::pair<size_t, size_t>> runs;
    std::vector<size_t> run_hole;
    for (size_t k = 0; k < sections;) {
      if (used[y][k]) {
        ++k;
        continue;
      }
      size_t e = k;
      while (e < sections && !used[y][e]) ++e;
      const int64_t height = cuts[y + 1] - cuts[y];
      const auto same = std::find(open.begin(), open.end(), std::pair(k, e));
      if (same != open.end()) {
        const size_t h = open_hole[static_cast<size_t>(same - open.begin())];
        holes[h].size += height;
        run_hole.push_back(h);
      } else {
        holes.push_back(Buffer{.id = "strip" + std::to_string(holes.size()),
                               .size = height,
                               .alignment = 1,
                               .lower = steps[k],
                               .upper = steps[e],
                               .fixed_offset = cuts[y]});
        run_hole.push_back(holes.size() - 1);
      }
      runs.emplace_back(k, e);
      k = e;
    }
    open = std::move(runs);
    open_hole = std::move(run_hole);
  }
  return holes;
}

// Whether a rectangle of `hole`'s height and lifetime lies in the witness's free bytes: an edge
// hole that is no removed piece may still be one of the free bytes' other decompositions.
bool fits_witness_free_bytes(const SlackInstance& inst, const Buffer& hole) {
  using Span = std::pair<int64_t, int64_t>;
  std::vector<Span> common = {{0, inst.capacity}};
  for (int64_t t = hole.lower; t < hole.upper && !common.empty(); ++t) {
    std::vector<Span> free;
    for (const Buffer& r : inst.removed) {
      if (r.lower <= t && t < r.upper) free.emplace_back(*r.fixed_offset, *r.fixed_offset + r.size);
    }
    std::sort(free.begin(), free.end());
    std::vector<Span> merged;
    for (const Span& f : free) {
      if (!merged.empty() && merged.back().second >= f.first) {
        merged.back().second = std::max(merged.back().second, f.second);
      } else {
        merged.push_back(f);
      }
    }
    std::vector<Span> next;
    for (const Span& a : common) {
      for (const Span& b : merged) {
        const int64_t lo = std::max(a.first, b.first), hi = std::min(a.second, b.second);
        if (lo < hi) next.emplace_back(lo, hi);
      }
    }
    common = std::move(next);
  }
  return std::any_of(common.begin(), common.end(), [&](const Span& s) { return s.second - s.first >= hole.size; });
}

struct Run {
  bool placed = false;
  double seconds = 0;
  int64_t nodes = 0;
};

Run pack(Problem problem, int64_t capacity, double budget) {
  for (Buffer& b : problem.buffers) b.fixed_offset.reset();
  const double start = thread_cpu_seconds();
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(budget * 4e3));
  const PerfectPackingResult r = find_perfect_packing(problem, capacity, deadline);
  Run run{.seconds = thread_cpu_seconds() - start, .nodes = r.nodes};
  run.placed = r.outcome == PerfectPackingResult::Outcome::kFound && run.seconds <= budget;
  return run;
}

std::string fmt_run(size_t k_unknown, bool placed, double seconds, int64_t nodes) {
  char text[96];
  std::snprintf(text, sizeof text, " %zu unknown: %s %.3f s %lld |", k_unknown, placed ? "placed" : "------", seconds,
                static_cast<long long>(nodes));
  return text;
}

struct Tally {
  int total = 0, truth = 0, sweep = 0, decided = 0, sweep_exact = 0, chosen = 0, in_parts = 0;
};

}  // namespace
}  // namespace memledger::allocate

int main(int argc, char** argv) {
  using namespace memledger::allocate;
  int instances = 20, only = -1;
  double budget = 2.0;
  bool verbose = false;
  bool holes_only = false;
  bool strips = false;
  int forced_rounds = 0;
  bool forced_search = false;
  bool unambiguous = false;
  bool relays_only = false;
  bool joined_only = false;
  bool forced_parts = false;
  uint64_t first_seed = 1000;
  std::vector<size_t> tolerance;
  std::vector<size_t> unknown;
  bool with_holes = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--instances=", 12) == 0) instances = std::max(2, std::atoi(argv[i] + 12));
    if (std::strncmp(argv[i], "--only=", 7) == 0) only = std::atoi(argv[i] + 7);
    if (std::strncmp(argv[i], "--budget=", 9) == 0) budget = std::atof(argv[i] + 9);
    if (std::strncmp(argv[i], "--first-seed=", 13) == 0) first_seed = std::strtoull(argv[i] + 13, nullptr, 10);
    if (std::strcmp(argv[i], "--verbose") == 0) verbose = true;
    if (std::strcmp(argv[i], "--holes-only") == 0) holes_only = true;
    if (std::strcmp(argv[i], "--strips") == 0) strips = true;
    if (std::strncmp(argv[i], "--forced=", 9) == 0) forced_rounds = std::atoi(argv[i] + 9);
    if (std::strcmp(argv[i], "--forced-search") == 0) forced_search = true;
    if (std::strcmp(argv[i], "--unambiguous") == 0) unambiguous = true;
    if (std::strcmp(argv[i], "--relays") == 0) relays_only = true;
    if (std::strcmp(argv[i], "--joined") == 0) joined_only = true;
    if (std::strcmp(argv[i], "--parts") == 0) forced_parts = true;
    if (std::strcmp(argv[i], "--with-holes") == 0) with_holes = true;
    if (std::strncmp(argv[i], "--unknown=", 10) == 0) {
      for (const char* p = argv[i] + 10; *p;) {
        char* end = nullptr;
        unknown.push_back(std::strtoull(p, &end, 10));
        p = *end == ',' ? end + 1 : end;
        if (end == p && *p) break;
      }
    }
    if (std::strncmp(argv[i], "--tolerance=", 12) == 0) {
      for (const char* p = argv[i] + 12; *p;) {
        char* end = nullptr;
        tolerance.push_back(std::strtoull(p, &end, 10));
        p = *end == ',' ? end + 1 : end;
        if (end == p && *p) break;
      }
    }
  }
  for (const CutStyle style : {CutStyle::kBrick, CutStyle::kGuillotine}) {
    const char* style_name = style == CutStyle::kBrick ? "brick" : "guillotine";
    Tally tally;
    std::vector<int> bore(tolerance.size(), 0);
    int edge_placed[2] = {};  // plain candidates, edge holes first
    for (int k = 0; k < instances; ++k) {
      if (only >= 0 && k != only) continue;
      // The same sizing as placement_slack_bench.
      const uint64_t seed = first_seed + static_cast<uint64_t>(k);
      const auto [buffers, percent, removed] = bench_sizes(k, instances);
      SlackInstance inst = generate_slack_instance(seed, buffers, removed, style);
      if (joined_only) {  // the instance with its relays joined, the witness of each run's first buffer
        const Relays relays = join_relays(inst.problem);
        std::vector<int64_t> witness(relays.joined.buffers.size());
        for (size_t i = inst.problem.buffers.size(); i-- > 0;) witness[relays.run_of[i]] = inst.witness[i];
        inst.problem = relays.joined;
        inst.witness = std::move(witness);
      }
      const std::vector<Buffer> true_holes = strips ? strip_holes(inst) : effective_holes(inst);
      Problem with_truth = inst.problem;
      with_truth.buffers.insert(with_truth.buffers.end(), true_holes.begin(), true_holes.end());
      const std::optional<Problem> with_sweep = with_slack_fillers(inst.problem, inst.capacity, {.seed = 1});
      const std::vector<Buffer> fillers(
          with_sweep->buffers.begin() + static_cast<std::ptrdiff_t>(inst.problem.buffers.size()),
          with_sweep->buffers.end());
      const std::vector<Shape> truth_shapes = shapes(true_holes), sweep_shapes = shapes(fillers);
      std::vector<Shape> common;
      std::set_intersection(truth_shapes.begin(), truth_shapes.end(), sweep_shapes.begin(), sweep_shapes.end(),
                            std::back_inserter(common));
      const std::vector<Buffer> candidates = slack_hole_candidates(inst.problem, inst.capacity);
      const std::vector<Shape> candidate_shapes = shapes(candidates);
      std::vector<Shape> held;
      std::set_intersection(truth_shapes.begin(), truth_shapes.end(), candidate_shapes.begin(), candidate_shapes.end(),
                            std::back_inserter(held));
      auto is_true_hole = [&](const Buffer& c) {
        return std::binary_search(truth_shapes.begin(), truth_shapes.end(), Shape{c.lower, c.upper, c.size});
      };
      // The packing of `packed` that chooses its holes among `holes`, within the budget.
      auto choose_for = [&](const Problem& packed, const std::vector<Buffer>& holes, HoleParts parts) {
        const double start = thread_cpu_seconds();
        const auto deadline =
            std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(budget * 4e3));
        if (with_holes) {
          const DecisionResult d = decide_placement_with_holes(packed, holes, inst.capacity, deadline);
          Run run{.seconds = thread_cpu_seconds() - start, .nodes = d.nodes};
          run.placed = d.outcome == DecisionResult::Outcome::kFound && run.seconds <= budget;
          return run;
        }
        const PerfectPackingResult r = find_packing_with_holes(packed, holes, inst.capacity, deadline, {},
                                                               std::numeric_limits<int64_t>::max(), parts);
        Run run{.seconds = thread_cpu_seconds() - start, .nodes = r.nodes};
        run.placed = r.outcome == PerfectPackingResult::Outcome::kFound && run.seconds <= budget;
        return run;
      };
      auto choose = [&](const std::vector<Buffer>& holes, HoleParts parts) {
        return choose_for(inst.problem, holes, parts);
      };
      if (!unknown.empty()) {
        // The decision search with waste on the problem with all but K of the true holes as
        // buffers (K drawn at random): how many holes it can find by itself.
        std::string line = std::string(style_name) + "_" + std::to_string(seed) + " " +
                           std::to_string(true_holes.size()) + " true holes |";
        for (const size_t k_unknown : unknown) {
          std::vector<Buffer> shuffled = true_holes;
          SplitMix64 rng(seed * 7 + k_unknown);
          for (size_t i = shuffled.size(); i > 1; --i)
            std::swap(shuffled[i - 1], shuffled[rng.uniform(0, static_cast<int64_t>(i) - 1)]);
          Problem known = inst.problem;
          known.buffers.insert(known.buffers.end(),
                               shuffled.begin() + static_cast<std::ptrdiff_t>(std::min(k_unknown, shuffled.size())),
                               shuffled.end());
          for (Buffer& b : known.buffers) b.fixed_offset.reset();
          const double start = thread_cpu_seconds();
          const DecisionResult r = decide_placement(
              known, inst.capacity,
              std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(budget * 4e3)));
          const double seconds = thread_cpu_seconds() - start;
          const bool placed = r.outcome == DecisionResult::Outcome::kFound && seconds <= budget;
          line += fmt_run(k_unknown, placed, seconds, r.nodes);
        }
        std::printf("%s\n", line.c_str());
        continue;
      }
      if (forced_rounds > 0) {
        // The candidates whose heights both edges give taken as holes outright (with_edge_holes,
        // as decide_within does), the rest chosen among the candidates of what is left; beside
        // the packing that chooses among all the candidates.
        const EdgeHoles edge =
            with_edge_holes(inst.problem, inst.capacity, candidates, forced_rounds, {.ambiguous_open = !unambiguous});
        const std::vector<Buffer>& rest = edge.candidates;
        const int forced = edge.taken;
        const int forced_wrong = static_cast<int>(
            std::count_if(edge.problem.buffers.begin() + static_cast<std::ptrdiff_t>(inst.problem.buffers.size()),
                          edge.problem.buffers.end(), [&](const Buffer& c) { return !is_true_hole(c); }));
        const int rest_true = static_cast<int>(std::count_if(rest.begin(), rest.end(), is_true_hole));
        const int forced_outside = static_cast<int>(std::count_if(
            edge.problem.buffers.begin() + static_cast<std::ptrdiff_t>(inst.problem.buffers.size()),
            edge.problem.buffers.end(), [&](const Buffer& c) { return !fits_witness_free_bytes(inst, c); }));
        if (verbose) {
          for (size_t i = inst.problem.buffers.size(); i < edge.problem.buffers.size(); ++i) {
            const Buffer& c = edge.problem.buffers[i];
            if (fits_witness_free_bytes(inst, c)) {
              std::printf("    forced: [%lld,%lld)x%lld%s\n", static_cast<long long>(c.lower),
                          static_cast<long long>(c.upper), static_cast<long long>(c.size),
                          is_true_hole(c) ? "" : " (no removed piece)");
              continue;
            }
            std::printf("    outside: [%lld,%lld)x%lld | removed touching:", static_cast<long long>(c.lower),
                        static_cast<long long>(c.upper), static_cast<long long>(c.size));
            for (const Buffer& r : inst.removed) {
              if (r.upper < c.lower || r.lower > c.upper) continue;
              std::printf(" [%lld,%lld)x%lld@%lld", static_cast<long long>(r.lower), static_cast<long long>(r.upper),
                          static_cast<long long>(r.size), static_cast<long long>(*r.fixed_offset));
            }
            std::printf("\n");
          }
        }
        Run forced_run = choose_for(edge.problem, rest, forced_parts ? HoleParts::kSplitAtWalls : HoleParts::kWhole);
        Run plain = choose(candidates, HoleParts::kWhole);
        if (forced_search) {
          auto decide_on = [&](const Problem& p) {
            const double t0 = thread_cpu_seconds();
            const DecisionResult d = decide_placement(
                p, inst.capacity,
                std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(budget * 4e3)), {},
                std::numeric_limits<int64_t>::max());
            Run run{.seconds = thread_cpu_seconds() - t0, .nodes = d.nodes};
            run.placed = d.outcome == DecisionResult::Outcome::kFound && run.seconds <= budget;
            return run;
          };
          plain = decide_on(inst.problem);
          forced_run = decide_on(edge.problem);
        }
        std::printf(
            "%s_%llu %zu true holes; %zu candidates: %s %.3f s %lld | %d forced (%d wrong, %d outside the "
            "witness's free bytes), %zu candidates left (%d true): %s %.3f s %lld\n",
            style_name, static_cast<unsigned long long>(seed), true_holes.size(), candidates.size(),
            plain.placed ? "placed" : "------", plain.seconds, static_cast<long long>(plain.nodes), forced,
            forced_wrong, forced_outside, rest.size(), rest_true, forced_run.placed ? "placed" : "------",
            forced_run.seconds, static_cast<long long>(forced_run.nodes));
        std::fflush(stdout);
        edge_placed[0] += plain.placed;
        edge_placed[1] += forced_run.placed;
        continue;
      }
      if (relays_only) {
        // The tight packing with the true holes, of the problem as it is and with its relays joined.
        const Relays relays = join_relays(inst.problem);
        Problem joined_truth = relays.joined;
        joined_truth.buffers.insert(joined_truth.buffers.end(), true_holes.begin(), true_holes.end());
        const Run plain = pack(with_truth, inst.capacity, budget), joined = pack(joined_truth, inst.capacity, budget);
        std::vector<int64_t> witness_offsets = inst.witness;
        bool same_offsets = true;
        for (size_t i = 0; i < inst.problem.buffers.size(); ++i) {
          for (size_t j = 0; j < i; ++j) {
            if (relays.run_of[i] == relays.run_of[j] && inst.witness[i] != inst.witness[j]) same_offsets = false;
          }
        }
        {
          // Buffers of one lifetime, exactly two of them: stacked in the witness (one's end the other's offset)?
          std::map<std::pair<int64_t, int64_t>, std::vector<size_t>> by_life;
          for (size_t i = 0; i < inst.problem.buffers.size(); ++i)
            by_life[{inst.problem.buffers[i].lower, inst.problem.buffers[i].upper}].push_back(i);
          int pairs = 0, stacked = 0;
          for (const auto& [life, ids] : by_life) {
            if (ids.size() != 2) continue;
            ++pairs;
            const size_t a = ids[0], b = ids[1];
            stacked += inst.witness[a] + inst.problem.buffers[a].size == inst.witness[b] ||
                       inst.witness[b] + inst.problem.buffers[b].size == inst.witness[a];
          }
          std::printf("  same-lifetime pairs %d, stacked %d\n", pairs, stacked);
        }
        std::printf(
            "%s_%llu %zu buffers, %lld joined (%s in the witness) | true holes: %s %.3f s %lld | joined: %s %.3f s "
            "%lld\n",
            style_name, static_cast<unsigned long long>(seed), inst.problem.buffers.size(),
            static_cast<long long>(relays.joined_pairs), same_offsets ? "all one offset" : "NOT one offset",
            plain.placed ? "placed" : "------", plain.seconds, static_cast<long long>(plain.nodes),
            joined.placed ? "placed" : "------", joined.seconds, static_cast<long long>(joined.nodes));
        std::fflush(stdout);
        tally.truth += plain.placed;
        tally.sweep += joined.placed;
        continue;
      }
      if (!tolerance.empty()) {
        std::vector<Buffer> wrong;
        std::copy_if(candidates.begin(), candidates.end(), std::back_inserter(wrong),
                     [&](const Buffer& c) { return !is_true_hole(c); });
        SplitMix64 shuffle(seed);  // the same shuffle on every machine
        for (size_t i = wrong.size(); i > 1; --i) std::swap(wrong[i - 1], wrong[shuffle.below(i)]);
        std::printf("%s_%llu %zu true holes (%zu among the candidates), %zu wrong candidates:", style_name,
                    static_cast<unsigned long long>(seed), true_holes.size(), held.size(), wrong.size());
        for (size_t t = 0; t < tolerance.size(); ++t) {
          const size_t k_wrong = std::min(tolerance[t], wrong.size());
          std::vector<Buffer> offered = true_holes;
          offered.insert(offered.end(), wrong.begin(), wrong.begin() + static_cast<std::ptrdiff_t>(k_wrong));
          const Run run = choose(offered, HoleParts::kWhole);
          bore[t] += run.placed;
          std::printf(" | +%zu %s %.3f s %lld", k_wrong, run.placed ? "placed" : "------", run.seconds,
                      static_cast<long long>(run.nodes));
        }
        std::printf("\n");
        std::fflush(stdout);
        ++tally.total;
        continue;
      }
      const Run chosen = choose(candidates, HoleParts::kWhole), in_parts = choose(candidates, HoleParts::kSplitAtWalls);
      Run truth, sweep, decided;
      if (!holes_only) {
        truth = pack(with_truth, inst.capacity, budget);
        sweep = pack(*with_sweep, inst.capacity, budget);
        const double start = thread_cpu_seconds();
        const PlacementDecision d = decide_within(inst.problem, inst.capacity, budget * 4);
        decided = {
            .placed = d.solution && d.solution->arena_bytes <= inst.capacity && thread_cpu_seconds() - start <= budget,
            .seconds = thread_cpu_seconds() - start,
            .nodes = d.nodes};
      }
      ++tally.total;
      tally.truth += truth.placed;
      tally.sweep += sweep.placed;
      tally.decided += decided.placed;
      tally.sweep_exact += common.size() == truth_shapes.size() && common.size() == sweep_shapes.size();
      tally.chosen += chosen.placed;
      tally.in_parts += in_parts.placed;
      auto show = [](const Run& r) {
        static char text[8][64];
        static int next = 0;
        char* t = text[next++ % 8];
        std::snprintf(t, 64, "%s %.3f s %lld", r.placed ? "placed" : "------", r.seconds,
                      static_cast<long long>(r.nodes));
        return t;
      };
      std::printf(
          "%s_%llu %2lld%% %zu buffers, %zu holes, sweep %zu fillers (%zu exact) | true holes %s | sweep %s | "
          "decide_within %s | %zu candidates (%zu true holes) %s | in parts %s\n",
          style_name, static_cast<unsigned long long>(seed), static_cast<long long>(percent),
          inst.problem.buffers.size(), truth_shapes.size(), sweep_shapes.size(), common.size(), show(truth),
          show(sweep), show(decided), candidate_shapes.size(), held.size(), show(chosen), show(in_parts));
      if (verbose) {
        std::vector<Shape> missed;
        std::set_difference(truth_shapes.begin(), truth_shapes.end(), held.begin(), held.end(),
                            std::back_inserter(missed));
        auto list = [](const std::vector<Shape>& all, const Shape& m) {
          std::string text;
          for (const auto& [l, u, z] : all) {
            if (l != std::get<0>(m) && u != std::get<1>(m) && l != std::get<1>(m) && u != std::get<0>(m)) continue;
            if (std::tuple(l, u, z) == m) continue;
            text += " [" + std::to_string(l) + "," + std::to_string(u) + ")x" + std::to_string(z);
          }
          return text;
        };
        for (const Shape& m : missed) {
          std::printf("    missed [%lld,%lld)x%lld | true holes touching:%s\n      candidates touching:%s\n",
                      static_cast<long long>(std::get<0>(m)), static_cast<long long>(std::get<1>(m)),
                      static_cast<long long>(std::get<2>(m)), list(truth_shapes, m).c_str(),
                      list(candidate_shapes, m).c_str());
        }
      }
      std::fflush(stdout);
    }
    if (forced_rounds > 0) {
      std::printf("%s: placed within %.1f s CPU: holes among the candidates %d, edge holes forced %d\n", style_name,
                  budget, edge_placed[0], edge_placed[1]);
      continue;
    }
    if (relays_only) {
      std::printf("%s: placed within %.1f s CPU with the true holes: %d, relays joined %d\n", style_name, budget,
                  tally.truth, tally.sweep);
      continue;
    }
    if (!tolerance.empty()) {
      std::printf("%s: placed within %.1f s CPU of %d instances, true holes with", style_name, budget, tally.total);
      for (size_t t = 0; t < tolerance.size(); ++t) std::printf(" %zu wrong: %d;", tolerance[t], bore[t]);
      std::printf("\n");
      continue;
    }
    std::printf(
        "%s: placed within %.1f s CPU of %d: with the true holes %d, with the sweep's fillers %d (the sweep "
        "guessed every hole on %d), decide_within %d, holes chosen among candidates %d (in parts %d)\n",
        style_name, budget, tally.total, tally.truth, tally.sweep, tally.sweep_exact, tally.decided, tally.chosen,
        tally.in_parts);
  }
  return 0;
}
