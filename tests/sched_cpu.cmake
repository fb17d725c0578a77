# sched and cpu probe groups on the real kernel, with their workloads.
set(_sched_cpu_wl ${CMAKE_BINARY_DIR}/tests/workloads)
add_executable(pipe_wait ${CMAKE_CURRENT_SOURCE_DIR}/workloads/pipe_wait.cc)
target_link_libraries(pipe_wait PRIVATE Threads::Threads)
# The test reads its user stacks: frame pointers, and no tail calls that
# would drop a caller from the chain.
add_executable(cpu_burn ${CMAKE_CURRENT_SOURCE_DIR}/workloads/cpu_burn.cc)
target_compile_options(cpu_burn PRIVATE -O2 -fno-omit-frame-pointer -fno-optimize-sibling-calls)
set_target_properties(pipe_wait cpu_burn PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${_sched_cpu_wl})

syspgo_test(sched_test SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/sched_test.cc)
target_compile_definitions(sched_test PRIVATE SYSPGO_WORKLOADS_BIN="${_sched_cpu_wl}")
add_dependencies(sched_test pipe_wait)
syspgo_test(cpu_test SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/cpu_test.cc LIBS PkgConfig::LIBELF)
target_compile_definitions(cpu_test PRIVATE SYSPGO_WORKLOADS_BIN="${_sched_cpu_wl}")
add_dependencies(cpu_test cpu_burn)
