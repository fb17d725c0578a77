# Prefetch plans and deploy lists (optimize/plan, optimize/deploy_lists) and
# the replayer with its commands (optimize/prefetch, `syspgo prefetch`,
# `syspgo plan-show`). The replay tests need a real disk under /var/tmp;
# the deploy-list test runs mksquashfs (Debian package squashfs-tools).
syspgo_test(plan_test SOURCES plan_test.cc LIBS syspgo_optimize)
syspgo_test(prefetch_test PAGE_CACHE SOURCES prefetch_test.cc LIBS syspgo_optimize syspgo_collect)
syspgo_test(coldstart_test PAGE_CACHE SOURCES coldstart_test.cc LIBS syspgo_optimize)
add_dependencies(coldstart_test cold_start)
# Readahead plans (optimize/readahead_plan, shim/readahead_shim.c, prefetch
# --readahead): count the pages a program's faults read, cold.
syspgo_test(readahead_test PAGE_CACHE SOURCES readahead_test.cc)
add_dependencies(readahead_test syspgo-prefetch)
