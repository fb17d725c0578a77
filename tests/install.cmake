#===- tests/install.cmake - the .deb, installed and run ---------------------===#
# Install.Package packs this build with cpack -G DEB (packaging/) into
# build/install-test/, once per ctest run (a fixture); install_test unpacks
# the package into a fresh root with dpkg -x for each test and runs the
# installed syspgo there (collect, analyze, optimize, prefetch, pgo), its man
# pages with man -l, its bash completion, and find_package(SysPGO) from a
# small project. Needs dpkg-dev (dpkg-shlibdeps), help2man, man-db,
# clang-19, lld-19, bolt-19, make, and root (syspgo collect).
set(_pkg_dir ${CMAKE_BINARY_DIR}/install-test)
add_test(NAME Install.Package
  COMMAND sh -c "rm -rf \"$1\" && exec \"$2\" -G DEB --config \"$3\" -B \"$1\"" sh
          ${_pkg_dir} ${CMAKE_CPACK_COMMAND} ${CMAKE_BINARY_DIR}/CPackConfig.cmake)
set_tests_properties(Install.Package PROPERTIES FIXTURES_SETUP syspgo_deb TIMEOUT 600)
syspgo_test(install_test SOURCES install_test.cc PROPERTIES FIXTURES_REQUIRED syspgo_deb)
target_compile_definitions(install_test PRIVATE
  SYSPGO_BUILD_DIR="${CMAKE_BINARY_DIR}"
  SYSPGO_PACKAGE_DIR="${_pkg_dir}"
  SYSPGO_PGO_DEMO_DIR="${CMAKE_CURRENT_SOURCE_DIR}/workloads/pgo_demo")
# What the package holds, built before the suite (Install.Package packs what is built).
add_dependencies(install_test syspgo-prefetch syspgo_cli_docs syspgo_llvm syspgo_readahead)
