// Shared by the C header tests (report/, fit/fit): compiles a C99 program that includes a
// header plan_c_header wrote, runs it, and compares what it prints with the JSON plan.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "memledger/report/c_header.h"

namespace memledger::testing {

// The program: prints the arena, every buffer and every step (names in hex, so any byte
// survives), then checks the plan as a runtime relies on it.
inline constexpr const char* kCHeaderCheckProgram = R"(#include <stdio.h>
#include <string.h>
#include "plan.h"

static void hex(const char *s) {
  if (!s) { printf("-"); return; }
  if (!*s) printf("=");
  for (; *s; ++s) printf("%02x", (unsigned)(unsigned char)*s);
}

static int root(int i) {
  while (ml_buffers[i].alias_of >= 0) i = ml_buffers[i].alias_of;
  return i;
}

int main(void) {
  static int first[ML_BUFFER_COUNT + 1], last[ML_BUFFER_COUNT + 1];
  int i, j, s, bad = 0;
  printf("arena %ld %ld %d %d %d %d %d %d\n", (long)ML_ARENA_BYTES, (long)ML_ARENA_ALIGNMENT, ML_BUFFER_COUNT,
         ML_STEP_COUNT, ML_PATCH_ROWS, ML_PATCH_COLS, ML_INNER_PATCH_ROWS, ML_INNER_PATCH_COLS);
  for (i = 0; i < ML_BUFFER_COUNT; ++i) {
    const ml_buffer *b = &ml_buffers[i];
    printf("buffer %d %ld %ld %d %d %d %d ", i, (long)b->offset, (long)b->bytes, (int)b->category, (int)b->first_step,
           (int)b->last_step, (int)b->alias_of);
    hex(b->name);
    printf("\n");
  }
  for (s = 0; s < ML_STEP_COUNT; ++s) {
    const ml_step *st = &ml_steps[s];
    printf("step %d %d %d %d %d %d %d %d %d ", s, (int)st->patch, (int)st->inner_patch, (int)st->second_patch,
           (int)st->pool_pass, (int)st->pool_strip, (int)st->workspace, (int)st->inputs, (int)st->outputs);
    if (st->pool_pass >= 0 &&
        (st->patch >= 0 || st->second_patch >= 0 || st->pool_pass >= ML_POOL_PASS_COUNT || st->pool_strip < 0 ||
         st->pool_strip >= ml_pool_passes[st->pool_pass].strips || s < ml_pool_passes[st->pool_pass].first_step ||
         s > ml_pool_passes[st->pool_pass].last_step)) {
      printf("FAIL step %d pool pass %d strip %d\n", s, (int)st->pool_pass, (int)st->pool_strip); bad = 1;
    }
    if (st->second_patch >= 0 && (st->patch >= 0 || st->second_patch >= ML_SECOND_PATCH_ROWS * ML_SECOND_PATCH_COLS)) {
      printf("FAIL step %d second-stage patch %d\n", s, (int)st->second_patch); bad = 1;
    }
    if (st->inner_patch >= 0 && (st->patch < 0 || st->inner_patch >= ML_INNER_PATCH_ROWS * ML_INNER_PATCH_COLS)) {
      printf("FAIL step %d inner patch %d\n", s, (int)st->inner_patch); bad = 1;
    }
    hex(st->node);
    printf(" ");
    hex(st->op);
    printf("\n");
    for (j = 0; j < st->inputs + st->outputs; ++j) {
      int k = ml_step_io[st->first_io + j];
      if (k < -1 || k >= ML_BUFFER_COUNT) { printf("FAIL step %d io %d out of range\n", s, k); bad = 1; continue; }
      if (k < 0) continue;
      if (ml_buffers[k].first_step > s || ml_buffers[k].last_step < s) {
        printf("FAIL step %d uses buffer %d outside its steps\n", s, k); bad = 1;
      }
      if (j >= st->inputs && ml_buffers[k].first_step != s) {
        printf("FAIL step %d outputs buffer %d that starts elsewhere\n", s, k); bad = 1;
      }
    }
    if (st->workspace >= 0 && (ml_buffers[st->workspace].category != ML_WORKSPACE ||
                               ml_buffers[st->workspace].first_step != s)) {
      printf("FAIL step %d workspace %d\n", s, (int)st->workspace); bad = 1;
    }
  }
  for (i = 0; i < ML_POOL_PASS_COUNT; ++i) {
    const ml_pool_pass *pass = &ml_pool_passes[i];
    if (pass->pooled < 0 || pass->pooled >= ML_BUFFER_COUNT || ml_buffers[pass->pooled].first_step != pass->last_step) {
      printf("FAIL pool pass %d: its pooled buffer is not written by its last step\n", i); bad = 1;
    }
  }
  for (i = 0; i < ML_PATCH_COUNT; ++i)
    printf("patch %d %d %d %d %d\n", i, (int)ml_patches[i].row, (int)ml_patches[i].col, (int)ml_patches[i].first_step,
           (int)ml_patches[i].last_step);
  /* Storage intervals per root; roots inside the arena, aligned, never overlapping while both live. */
  for (i = 0; i < ML_BUFFER_COUNT; ++i) { first[i] = 1 << 30; last[i] = -1; }
  for (i = 0; i < ML_BUFFER_COUNT; ++i) {
    int r = root(i);
    if (ml_buffers[i].first_step < first[r]) first[r] = ml_buffers[i].first_step;
    if (ml_buffers[i].last_step > last[r]) last[r] = ml_buffers[i].last_step;
  }
  for (i = 0; i < ML_BUFFER_COUNT; ++i) {
    const ml_buffer *a = &ml_buffers[i];
    if (a->alias_of >= 0) {
      if (a->offset != ml_buffers[root(i)].offset) { printf("FAIL alias %d offset\n", i); bad = 1; }
      continue;
    }
    if (a->offset < 0) continue; /* outside the arena */
    if (a->offset % ML_ARENA_ALIGNMENT != 0 || (long)a->offset + a->bytes > (long)ML_ARENA_BYTES) {
      printf("FAIL buffer %d at %ld+%ld\n", i, (long)a->offset, (long)a->bytes); bad = 1;
    }
    for (j = i + 1; j < ML_BUFFER_COUNT; ++j) {
      const ml_buffer *b = &ml_buffers[j];
      if (b->alias_of >= 0 || b->offset < 0 || a->bytes == 0 || b->bytes == 0) continue;
      if (first[i] > last[j] || first[j] > last[i]) continue;
      if (a->offset < b->offset + b->bytes && b->offset < a->offset + a->bytes) {
        printf("FAIL buffers %d and %d overlap while live\n", i, j); bad = 1;
      }
    }
  }
  printf(bad ? "check FAIL\n" : "check ok\n");
  return bad;
}
)";

inline std::string to_hex(const std::string& s) {
  if (s.empty()) return "=";
  std::string out;
  char buf[3];
  for (unsigned char c : s) {
    std::snprintf(buf, sizeof buf, "%02x", c);
    out += buf;
  }
  return out;
}

// Compiles and runs the program over `header` in <build>/tests/c_header/<name>/ and checks it
// against `json` (plan_report_json of the same plan); `patches`, when given, are the patches
// the header was written with (each step's expected patch and inner patch).
inline void check_c_header(const std::string& header, const std::string& json, const std::string& name,
                           const CHeaderPatches* patches) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(MEMLEDGER_BINARY_DIR) / "tests" / "c_header" / name;
  fs::create_directories(dir);
  std::ofstream(dir / "plan.h") << header;
  std::ofstream(dir / "main.c") << kCHeaderCheckProgram;
  const char* cc_env = std::getenv("CC");
  const std::string cc = cc_env && *cc_env ? cc_env : "cc";
  const std::string compile = cc + " -std=c99 -pedantic -Wall -Wextra -Werror -o " + (dir / "check").string() + " " +
                              (dir / "main.c").string() + " 2> " + (dir / "compile.log").string();
  ASSERT_EQ(std::system(compile.c_str()), 0) << compile << "\n" << std::ifstream(dir / "compile.log").rdbuf();
  const std::string run = (dir / "check").string() + " > " + (dir / "out.txt").string();
  const int status = std::system(run.c_str());
  std::ifstream out_file(dir / "out.txt");
  std::stringstream out_text;
  out_text << out_file.rdbuf();
  const std::string out = out_text.str();
  EXPECT_EQ(status, 0) << out.substr(out.find("FAIL") == std::string::npos ? 0 : out.find("FAIL"), 2000);
  EXPECT_NE(out.find("check ok"), std::string::npos);

  const auto plan = nlohmann::json::parse(json);
  const auto& buffers = plan["buffers"];
  std::map<std::string, int> index_of;
  for (size_t i = 0; i < buffers.size(); ++i) index_of[buffers[i]["name"].get<std::string>()] = static_cast<int>(i);
  std::istringstream lines(out);
  std::string kind;
  size_t buffer_lines = 0, step_lines = 0;
  const std::map<std::string, int> category{
      {"input", 0}, {"output", 1}, {"activation", 2}, {"constant", 3}, {"workspace", 4}};
  while (lines >> kind) {
    if (kind == "arena") {
      long arena, alignment;
      int nbuffers, nsteps, rows, cols, inner_rows, inner_cols;
      lines >> arena >> alignment >> nbuffers >> nsteps >> rows >> cols >> inner_rows >> inner_cols;
      EXPECT_EQ(rows, patches ? patches->rows : 0);
      EXPECT_EQ(inner_rows, patches ? patches->inner_rows : 0);
      EXPECT_EQ(inner_cols, patches ? patches->inner_cols : 0);
      EXPECT_EQ(arena, plan["plan"]["arena_bytes"].get<long>());
      EXPECT_EQ(alignment, plan["device"]["alignment_bytes"].get<long>());
      EXPECT_EQ(nbuffers, static_cast<int>(buffers.size()));
      EXPECT_EQ(nsteps, static_cast<int>(plan["timeline"].size()));
    } else if (kind == "buffer") {
      int i, cat, first, last, alias;
      long offset, bytes;
      std::string hex_name;
      lines >> i >> offset >> bytes >> cat >> first >> last >> alias >> hex_name;
      ASSERT_LT(static_cast<size_t>(i), buffers.size());
      const auto& b = buffers[static_cast<size_t>(i)];
      SCOPED_TRACE(b["name"].get<std::string>());
      EXPECT_EQ(hex_name, to_hex(b["name"].get<std::string>()));
      EXPECT_EQ(offset, b["offset"].is_null() ? -1L : b["offset"].get<long>());  // null: outside the arena
      EXPECT_EQ(bytes, b["physical_bytes"].get<long>());
      EXPECT_EQ(cat, category.at(b["category"].get<std::string>()));
      EXPECT_EQ(first, b["first_step"].get<int>());
      EXPECT_EQ(last, b["last_step"].get<int>());
      EXPECT_EQ(alias, b["alias_of"].is_null() ? -1 : index_of.at(b["alias_of"].get<std::string>()));
      ++buffer_lines;
    } else if (kind == "step") {
      int s, patch, inner_patch, second_patch, pool_pass, pool_strip, workspace, inputs, outputs;
      std::string node, op;
      lines >> s >> patch >> inner_patch >> second_patch >> pool_pass >> pool_strip >> workspace >> inputs >> outputs >>
          node >> op;
      const bool pools = patches && !patches->pool_names.empty();
      EXPECT_EQ(pool_pass, pools ? patches->pool_pass_of_step.at(static_cast<size_t>(s)) : -1) << "step " << s;
      EXPECT_EQ(pool_strip, pools ? patches->pool_strip_of_step.at(static_cast<size_t>(s)) : -1) << "step " << s;
      EXPECT_EQ(second_patch,
                patches && patches->second_rows > 0 ? patches->second_patch_of_step.at(static_cast<size_t>(s)) : -1)
          << "step " << s;
      ASSERT_LT(static_cast<size_t>(s), plan["timeline"].size());
      EXPECT_EQ(node, to_hex(plan["timeline"][static_cast<size_t>(s)]["node"].get<std::string>())) << "step " << s;
      EXPECT_EQ(patch, patches ? patches->patch_of_step.at(static_cast<size_t>(s)) : -1) << "step " << s;
      EXPECT_EQ(inner_patch,
                patches && patches->inner_rows > 0 ? patches->inner_patch_of_step.at(static_cast<size_t>(s)) : -1)
          << "step " << s;
      ++step_lines;
    } else {
      std::string rest;
      std::getline(lines, rest);
    }
  }
  EXPECT_EQ(buffer_lines, buffers.size());
  EXPECT_EQ(step_lines, plan["timeline"].size());
}

}  // namespace memledger::testing
