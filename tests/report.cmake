#===- tests/report.cmake - `syspgo report` and `syspgo export` --------------===#
# report_test loads pages in headless Chromium (Debian's chromium package,
# /usr/bin/chromium) and reads traces back with nlohmann; it links
# the analyze library to build reports with findings of its own, and runs
# examples/fileio_demo under `syspgo collect` for the end-to-end case.
syspgo_test(report_test SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/report_test.cc LIBS syspgo_analyze)
add_dependencies(report_test fileio_demo)

# The page's scripts (analyze/report/*.js) pass ESLint (analyze/report/
# eslint.config.mjs); scripts/test-setup.sh installs it from npm.
add_test(NAME ReportPage.ScriptsPassEslint
  COMMAND sh -c "test -x node_modules/.bin/eslint || { echo 'ESLint is not installed in analyze/report: run scripts/test-setup.sh'; exit 1; }; exec node_modules/.bin/eslint --max-warnings 0 ."
  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}/analyze/report)
syspgo_test(json_text_test SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/json_text_test.cc LIBS syspgo_analyze)
