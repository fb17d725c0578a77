#===- tests/reliability.cmake - faults, bad input, least privilege --------===#
# Suites for what syspgo must survive and refuse, and the fuzz targets.
#
# fuzz/ holds the inputs every fuzz target reads through, and with
# -DSYSPGO_FUZZ=ON (only in a clang-19 build directory: fuzz/run.sh makes
# one) the libFuzzer targets. The normal build instead gets a ctest entry
# that runs fuzz/run.sh briefly (it configures its own clang build beside
# this one), and a suite that replays the corpora and saved crashes through
# the same inputs.
option(SYSPGO_FUZZ "Build the libFuzzer targets in fuzz/ (needs clang-19)" OFF)
add_subdirectory(${CMAKE_SOURCE_DIR}/fuzz ${CMAKE_BINARY_DIR}/fuzz)
if(NOT SYSPGO_FUZZ)
  add_test(NAME fuzz_brief
           COMMAND ${CMAKE_SOURCE_DIR}/fuzz/run.sh --seconds 25 --build-dir ${CMAKE_BINARY_DIR}/fuzz-clang)
  # Configuring and building the clang tree the first time takes about a
  # minute on a quiet machine, and over five with the suite running -j2 beside
  # other builds; the fuzzing itself is a fixed 25 s a target. The timeout
  # only catches a hang, so it is far above both.
  set_tests_properties(fuzz_brief PROPERTIES TIMEOUT 1800 LABELS fuzz)
endif()

syspgo_test(fuzz_regression_test SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_regression_test.cc LIBS syspgo_fuzz_inputs)
syspgo_test(migration_test SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/migration_test.cc LIBS syspgo_analyze)
syspgo_test(concurrency_test SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/concurrency_test.cc)
syspgo_test(target_test SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/target_test.cc)
syspgo_test(flood_test SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/flood_test.cc)
syspgo_test(privilege_test PAGE_CACHE SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/privilege_test.cc ${CMAKE_CURRENT_SOURCE_DIR}/sudo_fixture.cc LIBS syspgo_optimize)
add_dependencies(privilege_test syspgo-prefetch)
# What collect records and runs for a sudo user (setuid programs, -p, --as-root, memory).
syspgo_test(privilege_collect_test PAGE_CACHE SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/privilege_collect_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/sudo_fixture.cc)
add_dependencies(privilege_collect_test syspgo-prefetch)
# Held pages, the database's close, and checks as the user, under real sudo.
syspgo_test(privilege_files_test PAGE_CACHE SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/privilege_files_test.cc ${CMAKE_CURRENT_SOURCE_DIR}/sudo_fixture.cc LIBS syspgo_optimize)
add_dependencies(privilege_files_test syspgo-prefetch)
syspgo_test(redact_test SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/redact_test.cc LIBS syspgo_analyze)
# Plans, databases and paths made by someone else (hostile_input_test.cc says how).
syspgo_test(hostile_input_test SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/hostile_input_test.cc
  LIBS syspgo_optimize syspgo_analyze)
# Kernel addresses and machine-wide groups under sudo.
syspgo_test(privilege_kernel_test PAGE_CACHE SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/privilege_kernel_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/sudo_fixture.cc LIBS syspgo_collect)
add_dependencies(privilege_kernel_test syspgo-prefetch)
