# `syspgo pgo` (pgo/, cli/cmd_pgo.cc) end to end on the small C
# program in tests/workloads/pgo_demo (a Makefile, a CMake project and plain
# compiler calls) and on the demo's interpreter (tests/workloads/pgo_interp),
# its decisions and profile-quality figures on given numbers, and
# cmake/SysPGO.cmake on the project in tests/data/pgo_cmake with a prepared
# profile directory and on the demo's with one a real pgo run wrote. Needs clang-19,
# lld-19, bolt-19, cmake and make, and root (syspgo collect).
syspgo_test(pgo_test SOURCES pgo_test.cc LIBS syspgo_pgo)
target_compile_definitions(pgo_test PRIVATE
  SYSPGO_PGO_DEMO="${CMAKE_CURRENT_SOURCE_DIR}/workloads/pgo_demo"
  SYSPGO_PGO_INTERP="${CMAKE_CURRENT_SOURCE_DIR}/workloads/pgo_interp"
  SYSPGO_CMAKE_MODULES="${CMAKE_SOURCE_DIR}/cmake")
