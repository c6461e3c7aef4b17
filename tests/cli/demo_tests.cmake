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
