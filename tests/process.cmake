# common/process: the one runner of programs syspgo waits for (pgo's
# builds, tools and collections), on real commands.
syspgo_test(process_test SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/process_test.cc)
