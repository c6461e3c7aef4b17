# The demo and the program's basic flags, run as a user runs them.
memledger_cli_test(version ARGS --version OUTPUT "memledger [0-9]+\\.[0-9]+\\.[0-9]+")
memledger_cli_test(demo ARGS demo
  OUTPUT "device: teaching"
         "parameter elements, compact / expanded +24 / 13440"
         "x \\(and y\\) logical / physical +6720 / 8960"
         "scale \\(or bias\\) compact / expanded +16 / 8960"
         "row rule / pixel rule +640 / 8960"
         "packed / per-element rounding +320 / 640"
         "int4, C = 12: logical / physical +3360 / 8960")
memledger_cli_test(demo_host_device ARGS demo --device host OUTPUT "device: host" "x \\(and y\\) logical / physical +26880 / 26880")
memledger_cli_test(demo_profile_file ARGS demo --device ${PROJECT_SOURCE_DIR}/tests/data/device/npu.toml
  OUTPUT "device: npu-256k" "row rule / pixel rule +640 / 17920")
memledger_cli_test(demo_bad_profile ARGS demo --device ${PROJECT_SOURCE_DIR}/tests/data/device/bad_key.toml
  EXIT_CODE 2 OUTPUT "bad_key.toml:4: unknown key 'capcity_bytes'" NOT_OUTPUT "parameter elements")
memledger_cli_test(demo_missing_profile ARGS demo --device missing.toml EXIT_CODE 2
  OUTPUT "--device 'missing.toml': not a built-in profile")
memledger_cli_test(no_command EXIT_CODE 2 OUTPUT "subcommand")
memledger_cli_test(unknown_flag ARGS demo --frobnicate EXIT_CODE 2 OUTPUT "frobnicate")
# The demo ends with the rewrite story: optimize on the expanded Mul + Add model, verified,
# and the ledger diff whose parts add up (figures from the library, pinned here).
memledger_cli_test(demo_rewrite_story ARGS demo
  OUTPUT "8\\. The rewrite: `memledger optimize`"
         "fuse-affine +1 +53664"
         "nodes 2 → 2 as written \\(1 Affine lowered to Mul \\+ Add\\); constant bytes saved 53664"
         "model file 54164 B → 563 B"
         "verification \\(seed 1, rtol 0\\.0001\\): same numbers, max\\|diff\\| 0\n"
         "peak-live +26880 +17936 +-8944 \\| +-6708 +-2236 +\\+0"
         "logical   33600 → 20184: constants -13416 \\+ layout/padding \\+0 \\+ lifetimes \\+0 = -13416"
         "physical  35840 → 17952: constants -13416 \\+ layout/padding -4472 \\+ lifetimes \\+0 = -17888"
         "'y' is written over 'y_scaled' \\(in place\\)")
