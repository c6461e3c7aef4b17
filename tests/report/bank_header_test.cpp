// --emit-c for a device with banks: one array per bank in its own linker section, offsets per
// bank. A C program compiled over the header checks every buffer inside its bank, aligned,
// apart from every other buffer of its bank live at the same time, and prints bank and offset,
// which must be the JSON report's.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "memledger/onnx/import.h"
#include "memledger/plan/banked_plan.h"
#include "memledger/report/c_header.h"
#include "memledger/report/json_report.h"

namespace memledger {
namespace {

constexpr const char* kProgram = R"(#define ML_DEFINE_BANKS
#include <stdio.h>
#include "plan.h"

static int root(int i) {
  while (ml_buffers[i].alias_of >= 0) i = ml_buffers[i].alias_of;
  return i;
}

int main(void) {
  int i, j, bad = 0;
  for (i = 0; i < ML_BUFFER_COUNT; ++i) {
    const ml_buffer *a = &ml_buffers[i];
    int k = ml_buffer_bank[i];
    printf("buffer %d %d %ld\n", i, k, (long)a->offset);
    if (k < 0) continue;
    if (k >= ML_BANK_COUNT || ml_buffer_bank[root(i)] != k) { printf("FAIL buffer %d bank %d\n", i, k); bad = 1; }
    if (a->alias_of >= 0) continue;
    if (a->offset < 0 || a->offset % ml_banks[k].alignment != 0 || a->offset + a->bytes > ml_banks[k].bytes ||
        ml_banks[k].bytes > ml_banks[k].capacity) {
      printf("FAIL buffer %d at %ld+%ld in bank %d\n", i, (long)a->offset, (long)a->bytes, k); bad = 1;
    }
    for (j = 0; j < ML_BUFFER_COUNT; ++j) {
      const ml_buffer *b = &ml_buffers[j];
      if (j == i || b->alias_of >= 0 || ml_buffer_bank[j] != k || a->bytes == 0 || b->bytes == 0) continue;
      if (a->first_step > b->last_step || b->first_step > a->last_step) continue;
      if (a->offset < b->offset + b->bytes && b->offset < a->offset + a->bytes) {
        printf("FAIL buffers %d and %d overlap in bank %d\n", i, j, k); bad = 1;
      }
    }
  }
  /* The arrays exist and take writes at the planned offsets. */
  ml_bank_tcm[0] = 1;
  ml_bank_sram[ML_BANK_SRAM_BYTES - 1] = 1;
  for (i = 0; i < ML_BANK_COUNT; ++i) printf("bank %d %s %s %ld\n", i, ml_banks[i].name, ml_banks[i].section,
                                             (long)ml_banks[i].bytes);
  printf(bad ? "check FAIL\n" : "check ok\n");
  return bad;
}
const unsigned char ml_bank_flash[1] = {0};
)";

TEST(BankHeader, CompilesAndMatchesTheJsonPlan) {
  const Graph g = import_onnx_file(MEMLEDGER_SOURCE_DIR "/tests/data/onnx/randwire_ws_n10_s3.onnx");
  const DeviceProfile profile = parse_device_profile(R"(name = "banked"
alignment_bytes = 8
layout = "NHWC"
storage = "int8"
constants = "external"

[[banks]]
name = "tcm"
capacity_bytes = 6000
holds = ["activations", "workspaces"]

[[banks]]
name = "sram"
capacity_bytes = 1048576
alignment_bytes = 32
access_cost = 3

[[banks]]
name = "flash"
capacity_bytes = 1048576
access_cost = 5
read_only = true
)",
                                                     "banked.toml");
  const MemoryPlan plan = plan_memory_banked(g, profile);
  ASSERT_TRUE(plan.fits);
  const std::string header = plan_c_header(g, plan, profile, "randwire.onnx");
  EXPECT_NE(header.find("__attribute__((section(ML_BANK_TCM_SECTION), aligned(8)))"), std::string::npos);
  EXPECT_NE(header.find("#define ML_BANK_SRAM_SECTION \".memledger.sram\""), std::string::npos);
  const auto json = nlohmann::json::parse(plan_report_json(g, plan, profile, "randwire.onnx"));

  namespace fs = std::filesystem;
  const fs::path dir = fs::path(MEMLEDGER_BINARY_DIR) / "tests" / "c_header" / "banked";
  fs::create_directories(dir);
  std::ofstream(dir / "plan.h") << header;
  std::ofstream(dir / "main.c") << kProgram;
  const char* cc_env = std::getenv("CC");
  const std::string cc = cc_env && *cc_env ? cc_env : "cc";
  const std::string compile = cc + " -std=c99 -pedantic -Wall -Wextra -Werror -o " + (dir / "check").string() + " " +
                              (dir / "main.c").string() + " 2> " + (dir / "compile.log").string();
  ASSERT_EQ(std::system(compile.c_str()), 0) << compile << "\n" << std::ifstream(dir / "compile.log").rdbuf();
  ASSERT_EQ(std::system(((dir / "check").string() + " > " + (dir / "out.txt").string()).c_str()), 0)
      << std::ifstream(dir / "out.txt").rdbuf();
  std::ifstream out(dir / "out.txt");
  std::string kind;
  size_t buffers = 0, banks = 0;
  const auto& bank_list = json["banks"]["banks"];
  while (out >> kind) {
    if (kind == "buffer") {
      int i = 0, bank = 0;
      long offset = 0;
      out >> i >> bank >> offset;
      const auto& b = json["buffers"][static_cast<size_t>(i)];
      SCOPED_TRACE(b["name"].get<std::string>());
      if (bank < 0) {
        EXPECT_TRUE(b["bank"].is_null());
      } else {
        EXPECT_EQ(b["bank"].get<std::string>(), bank_list[static_cast<size_t>(bank)]["name"].get<std::string>());
        EXPECT_EQ(offset, b["offset"].get<long>());
      }
      ++buffers;
    } else if (kind == "bank") {
      int k = 0;
      long bytes = 0;
      std::string name, section;
      out >> k >> name >> section >> bytes;
      EXPECT_EQ(name, bank_list[static_cast<size_t>(k)]["name"].get<std::string>());
      EXPECT_EQ(section, ".memledger." + name);
      EXPECT_EQ(bytes, bank_list[static_cast<size_t>(k)]["arena_bytes"].get<long>());
      ++banks;
    } else {
      std::string rest;
      std::getline(out, rest);
      EXPECT_EQ(kind + rest, "check ok");
    }
  }
  EXPECT_EQ(buffers, json["buffers"].size());
  EXPECT_EQ(banks, 3u);
  // Both fast and slow banks in use, and constants in flash.
  EXPECT_GT(bank_list[0]["buffer_count"].get<int>(), 0);
  EXPECT_GT(bank_list[1]["buffer_count"].get<int>(), 0);
  EXPECT_GT(bank_list[2]["buffer_count"].get<int>(), 0);
}

}  // namespace
}  // namespace memledger
