# The foundation: collect + files analysis + the profile database.
add_executable(threads_write ${CMAKE_CURRENT_SOURCE_DIR}/workloads/threads_write.cc)
set_target_properties(threads_write PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/workloads)
target_link_libraries(threads_write PRIVATE Threads::Threads)
syspgo_test(collect_test SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/collect_test.cc)
target_compile_definitions(collect_test PRIVATE SYSPGO_WORKLOADS_BIN="${CMAKE_BINARY_DIR}/tests/workloads")
add_dependencies(collect_test threads_write fileio_demo)
syspgo_test(schema_test SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/schema_test.cc)
syspgo_test(analyze_files_test SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/analyze_files_test.cc)
