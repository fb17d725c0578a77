# The analyses' text within 120 columns, and --all (issue 42).
syspgo_test(text_width_test SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/text_width_test.cc)
