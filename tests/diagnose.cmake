#===- tests/diagnose.cmake - the diagnosing analyses (stalls, io, block, offcpu) ===#
# diagnose_test: the passes on a fixture database with their expected
# outputs (analyze_diagnose_test.cc), and the stalls pass on real runs of
# examples/checkpoint_stall and of the wait_kinds workload (diagnose_test.cc).
# stall_rules_test: the stalls pass's table of wait classes alone.
# The Python scenario needs python3-numpy installed.
set(_diagnose_wl ${CMAKE_BINARY_DIR}/tests/workloads)
add_executable(wait_kinds ${CMAKE_CURRENT_SOURCE_DIR}/workloads/wait_kinds.cc)
target_link_libraries(wait_kinds PRIVATE Threads::Threads)
set_target_properties(wait_kinds PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${_diagnose_wl})

syspgo_test(diagnose_test SOURCES
  ${CMAKE_CURRENT_SOURCE_DIR}/diagnose_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/analyze_diagnose_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/findings_json.cc)
target_compile_definitions(diagnose_test PRIVATE SYSPGO_WORKLOADS_BIN="${_diagnose_wl}")
add_dependencies(diagnose_test checkpoint_stall wait_kinds)

# Frame lists and syscall names in, classes, titles and fixes out
# (analyze/stall_rules.h): no database, no collection.
syspgo_test(stall_rules_test SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/stall_rules_test.cc LIBS syspgo_analyze)
# oncpu_stalls_test: pauses on a CPU in the kernel, on the fixture with a
# thread added by SQL (which call waited, and for what, is exact).
syspgo_test(oncpu_stalls_test SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/oncpu_stalls_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/findings_json.cc)
# stalls_work_test: findings that come down to work on a CPU, without a database.
syspgo_test(stalls_work_test SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/stalls_work_test.cc LIBS syspgo_analyze)
