#===- tests/report.cmake - `syspgo report` and `syspgo export` --------------===#
# report_test loads pages in headless Chromium (Debian's chromium package,
# /usr/bin/chromium) and reads traces back with /usr/bin/python3; it links
# the analyze library to build reports with findings of its own, and runs
# examples/fileio_demo under `syspgo collect` for the end-to-end case.
syspgo_test(report_test SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/report_test.cc LIBS syspgo_analyze)
add_dependencies(report_test fileio_demo)
