#===- tests/install.cmake - the .deb, installed and run ---------------------===#
# install_test packs this build with cpack -G DEB (packaging/), unpacks the
# package into a fresh root with dpkg -x and runs the installed syspgo there
# (collect, analyze, optimize, prefetch, pgo), its man pages with man -l, its
# bash completion, and find_package(SysPGO) from a small project. Needs
# dpkg-dev (dpkg-shlibdeps), help2man, man-db, clang-19, lld-19, bolt-19,
# make, and root (syspgo collect).
syspgo_test(install_test PAGE_CACHE SOURCES install_test.cc)
target_compile_definitions(install_test PRIVATE
  SYSPGO_BUILD_DIR="${CMAKE_BINARY_DIR}"
  SYSPGO_CPACK="${CMAKE_CPACK_COMMAND}"
  SYSPGO_PGO_DEMO_DIR="${CMAKE_CURRENT_SOURCE_DIR}/workloads/pgo_demo")
add_dependencies(install_test syspgo-prefetch syspgo_cli_docs syspgo_llvm syspgo_readahead)
