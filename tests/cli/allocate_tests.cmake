# `memledger allocate`: CSV problems in, a plan and its figures out; bad rows and a capacity
# below the lower bound leave with exit codes 2 and 3 and name the row or the figures.
set(ALLOCATE_DATA ${PROJECT_SOURCE_DIR}/tests/data/allocate)

memledger_cli_test(allocate.chain_reaches_lower_bound
  ARGS allocate ${ALLOCATE_DATA}/chain.csv --time-budget 1 -o ${CMAKE_CURRENT_BINARY_DIR}/chain_solution.csv
  OUTPUT "lower bound  180 bytes \\(peak live 180 bytes at step 1\\)" "naive        340 bytes" "arena        180 bytes, optimal"
         "wrote .*chain_solution.csv")
memledger_cli_test(allocate.greedy_only
  ARGS allocate ${ALLOCATE_DATA}/chain.csv --algorithm greedy
  OUTPUT "greedy       180 bytes" NOT_OUTPUT "exact  ")
memledger_cli_test(allocate.capacity_below_lower_bound
  ARGS allocate ${ALLOCATE_DATA}/chain.csv --capacity 150 EXIT_CODE 3
  OUTPUT "capacity of 150 bytes is below the lower bound of 180 bytes" "step 1")
memledger_cli_test(allocate.naive_does_not_fit
  ARGS allocate ${ALLOCATE_DATA}/chain.csv --algorithm naive --capacity 200 EXIT_CODE 3
  OUTPUT "the plan needs 340 bytes but the capacity is 200 bytes \\(lower bound 180 bytes")
memledger_cli_test(allocate.bad_row
  ARGS allocate ${ALLOCATE_DATA}/bad_row.csv EXIT_CODE 2
  OUTPUT "bad_row.csv:3: expected 4 or 5 fields")
memledger_cli_test(allocate.negative_size
  ARGS allocate ${ALLOCATE_DATA}/negative_size.csv EXIT_CODE 2
  OUTPUT "negative_size.csv:2: size -8 of 'b' is negative")
memledger_cli_test(allocate.lower_not_below_upper
  ARGS allocate ${ALLOCATE_DATA}/lower_not_below_upper.csv EXIT_CODE 2
  OUTPUT "lower_not_below_upper.csv:4: lower 4 of 'c' must be less than upper 4")
memledger_cli_test(allocate.refuses_to_overwrite_input
  ARGS allocate ${ALLOCATE_DATA}/chain.csv -o ${ALLOCATE_DATA}/../allocate/chain.csv EXIT_CODE 2
  OUTPUT "-o .*chain.csv: refusing to overwrite the input file")
memledger_cli_test(allocate.missing_file
  ARGS allocate ${ALLOCATE_DATA}/no_such.csv EXIT_CODE 2
  OUTPUT "no_such.csv: no such file")
# 120 buffers cut from a 2^20-byte × time rectangle (generate_hard_instance(7, 120, guillotine)):
# greedy is above the optimum, the exact search reaches it (in well under a second).
memledger_cli_test(allocate.cut_rectangle_reaches_optimum
  ARGS allocate ${ALLOCATE_DATA}/cut_rectangle_120.csv --time-budget 60
  OUTPUT "lower bound  1048576 bytes" "greedy       1088214 bytes" "exact        1048576 bytes \\(1.000× lower bound\\), optimal"
         "arena        1048576 bytes, optimal")
# Capacities decided first (issue 14). 13 buffers whose peak of 22 bytes is out of reach: the
# search completes, so the refusal says "proven infeasible" and gives the best arena and the
# lower bound (exit 3).
memledger_cli_test(allocate.infeasible_capacity_is_proven
  ARGS allocate ${ALLOCATE_DATA}/peak_out_of_reach.csv --capacity 22 --time-budget 30
  EXIT_CODE 3
  OUTPUT "lower bound  22 bytes" "exact        23 bytes .*optimal" "capacity     22 bytes: proven infeasible"
         "the plan needs 23 bytes but the capacity is 22 bytes \\(lower bound 22 bytes\\); proven infeasible")
# A slack instance (generate_slack_instance(3, 200, 10, guillotine, 100000): 10 of 210 cut pieces
# removed, lower bound 95924) fits its known capacity of 100000; the statistics are printed.
memledger_cli_test(allocate.slack_instance_fits_its_capacity
  ARGS allocate ${ALLOCATE_DATA}/slack_guillotine_200.csv --capacity 100000 --time-budget 5
       --json ${CMAKE_CURRENT_BINARY_DIR}/slack_allocation.json
  OUTPUT "lower bound  95924 bytes" "search       [0-9]+ nodes, [0-9]+ restarts, [0-9]+ capacities tried"
         "best arena   [0-9]+ B at [0-9.]+ s, " "capacity     100000 bytes: fits" "wrote .*slack_allocation.json")
memledger_cli_test(allocate.greedy_cannot_prove_infeasible
  ARGS allocate ${ALLOCATE_DATA}/peak_out_of_reach.csv --capacity 22 --algorithm greedy
  EXIT_CODE 3
  OUTPUT "capacity     22 bytes: not found" "the exact search was not run")
