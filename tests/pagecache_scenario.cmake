#===- tests/pagecache_scenario.cmake - the pagecache analysis -------------===#
# One suite: the pass on a fixture database with its expected output
# (tests/data/pagecache_fixture.sql, pagecache_expected.txt), and the
# page-cache thrash story end to end: examples/pagecache_thrash in a too-small memory cgroup
# (v1) under `syspgo collect`, diagnosed, then rerun with the limit the
# finding suggests. Needs root, BPF and the cgroup v1 memory controller.
syspgo_test(pagecache_scenario_test PAGE_CACHE SOURCES
  ${CMAKE_CURRENT_SOURCE_DIR}/pagecache_scenario_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/findings_json.cc LIBS syspgo_analyze)
add_dependencies(pagecache_scenario_test pagecache_thrash)
# Page cache deleted by another cgroup's reclaim, recorded by cgroup and for
# the whole host (issue 44's seed case).
syspgo_test(pagecache_cgroups_test PAGE_CACHE SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/pagecache_cgroups_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/findings_json.cc)
