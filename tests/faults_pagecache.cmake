# faults and pagecache probe groups, on the real kernel, disk and memory cgroups.
syspgo_test(faults_test PAGE_CACHE SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/faults_test.cc)
syspgo_test(pagecache_test PAGE_CACHE SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/pagecache_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/findings_json.cc LIBS syspgo_analyze syspgo_collect)
