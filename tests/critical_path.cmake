#===- tests/critical_path.cmake - stalls followed through their wakers ------===#
# critical_path_test records examples/wait_chains in each of its modes and
# checks the root and the chain `syspgo analyze stalls` names.
syspgo_test(critical_path_test SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/critical_path_test.cc)
add_dependencies(critical_path_test wait_chains)
