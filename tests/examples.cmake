#===- tests/examples.cmake - the failure scenarios in examples/ --------------===#
# examples_test runs the scenario programs directly (no syspgo), so it needs
# them built; python3-numpy must be installed for the Python scenario.
syspgo_test(examples_test PAGE_CACHE SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/examples_test.cc)
add_dependencies(examples_test checkpoint_stall pagecache_thrash)
