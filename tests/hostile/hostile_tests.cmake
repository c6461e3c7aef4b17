# The hostile-input suite (tests/hostile/hostile.py): one CTest entry per case, named
# hostile.<case>. Each generates its files in its own folder under the build tree and
# checks exit code, no signal, inputs unchanged, nothing left behind, time and memory.
set(MEMLEDGER_HOSTILE_PYTHON "/usr/bin/python3" CACHE FILEPATH "Python with onnx and numpy for tests/hostile")
execute_process(COMMAND ${MEMLEDGER_HOSTILE_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/hostile.py --list
                OUTPUT_VARIABLE hostile_cases RESULT_VARIABLE hostile_listed)
if(NOT hostile_listed EQUAL 0)
  message(FATAL_ERROR "tests/hostile/hostile.py --list failed: ${MEMLEDGER_HOSTILE_PYTHON} needs onnx and numpy")
endif()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/hostile.py)
# Sanitizer builds reserve terabytes of address space (no address-space limit there) and
# run several times slower (the time bounds are scaled).
set(hostile_flags "")
if(MEMLEDGER_SANITIZE)
  set(hostile_flags --no-memory-limit --time-scale 5)
endif()
execute_process(COMMAND ${MEMLEDGER_HOSTILE_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/hostile.py --list-pending
                OUTPUT_VARIABLE hostile_pending)
foreach(case IN LISTS hostile_cases hostile_pending)
  add_test(NAME hostile.${case}
           COMMAND ${MEMLEDGER_HOSTILE_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/hostile.py --program $<TARGET_FILE:memledger_cli>
                   --work ${CMAKE_CURRENT_BINARY_DIR}/hostile --case ${case} ${hostile_flags})
  # hostile.py bounds CPU time; its wall-time backstop (12x) stays inside this timeout.
  set_tests_properties(hostile.${case} PROPERTIES TIMEOUT 1800)
endforeach()
# Not passing yet: the fix belongs to another part (hostile.py says which); they fail today
# and turn red once fixed, so the pending mark is removed then.
foreach(case IN LISTS hostile_pending)
  set_tests_properties(hostile.${case} PROPERTIES WILL_FAIL TRUE)
endforeach()
