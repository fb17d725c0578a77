# collect's scopes: --new-cgroup, --cgroup, --all.
syspgo_test(scopes_test PAGE_CACHE SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/scopes_test.cc
            ${CMAKE_CURRENT_SOURCE_DIR}/sudo_fixture.cc)
