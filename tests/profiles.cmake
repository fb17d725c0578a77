# Symbolization, hot paths and the profile artifacts, each checked by its
# real consumer (llvm-symbolizer as the oracle, llvm-profdata, clang,
# llvm-bolt, ld.lld). The workload is built with clang-19 the way a user
# building for sample PGO would: line tables with discriminators, frame
# pointers, one section per function, relocations kept for BOLT.
find_program(SYSPGO_CLANG19 clang-19 REQUIRED)
find_program(SYSPGO_OBJCOPY19 llvm-objcopy-19 REQUIRED)
set(_pgo_src ${CMAKE_CURRENT_SOURCE_DIR}/workloads/pgo)
set(_pgo_dir ${CMAKE_BINARY_DIR}/tests/pgo)
set(_pgo_flags -O2 -fdebug-info-for-profiling -fno-omit-frame-pointer -fno-optimize-sibling-calls
               -ffunction-sections)
set(_pgo_app_link -fPIE -pie -fuse-ld=lld -Wl,--emit-relocs -L${_pgo_dir} -lpgo_lib "-Wl,-rpath,\$ORIGIN")
set(_pgo_outputs ${_pgo_dir}/libpgo_lib.so ${_pgo_dir}/pgo_app ${_pgo_dir}/pgo_app_nodebug
                 ${_pgo_dir}/pgo_app.stripped ${_pgo_dir}/pgo_app.debug)
add_custom_command(
  OUTPUT ${_pgo_outputs}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${_pgo_dir}
  COMMAND ${SYSPGO_CLANG19} ${_pgo_flags} -g -fPIC -shared -o ${_pgo_dir}/libpgo_lib.so ${_pgo_src}/pgo_lib.c
  COMMAND ${SYSPGO_CLANG19} ${_pgo_flags} -g -o ${_pgo_dir}/pgo_app ${_pgo_src}/pgo_app.c ${_pgo_app_link}
  COMMAND ${SYSPGO_CLANG19} ${_pgo_flags} -o ${_pgo_dir}/pgo_app_nodebug ${_pgo_src}/pgo_app.c ${_pgo_app_link}
  # The stripped copy finds its DWARF and symbols through .gnu_debuglink.
  COMMAND ${SYSPGO_OBJCOPY19} --only-keep-debug ${_pgo_dir}/pgo_app ${_pgo_dir}/pgo_app.debug
  COMMAND ${SYSPGO_OBJCOPY19} --strip-all --add-gnu-debuglink=${_pgo_dir}/pgo_app.debug ${_pgo_dir}/pgo_app
          ${_pgo_dir}/pgo_app.stripped
  DEPENDS ${_pgo_src}/pgo_app.c ${_pgo_src}/pgo_lib.c
  COMMENT "Building the profiles workload with clang-19"
  VERBATIM)
add_custom_target(pgo_workloads ALL DEPENDS ${_pgo_outputs})

foreach(_t symbolize_test emit_test pprof_test)
  syspgo_test(${_t} SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/${_t}.cc LIBS syspgo_optimize syspgo_analyze)
  target_compile_definitions(${_t} PRIVATE SYSPGO_PGO_BIN="${_pgo_dir}" SYSPGO_PGO_SRC="${_pgo_src}")
  add_dependencies(${_t} pgo_workloads)
endforeach()

# Sample profiles keyed by calling context (optimize --profile-kind cs), on
# a function called from two sites that take different paths through it.
set(_ctx_src ${CMAKE_CURRENT_SOURCE_DIR}/workloads/context)
set(_ctx_dir ${CMAKE_BINARY_DIR}/tests/context)
# The same with pseudo-probes, for profiles keyed by them (--profile-kind probe).
add_custom_command(
  OUTPUT ${_ctx_dir}/context_app ${_ctx_dir}/context_app_probe
  COMMAND ${CMAKE_COMMAND} -E make_directory ${_ctx_dir}
  COMMAND ${SYSPGO_CLANG19} ${_pgo_flags} -g -fuse-ld=lld -Wl,--emit-relocs -o ${_ctx_dir}/context_app
          ${_ctx_src}/context_app.c
  COMMAND ${SYSPGO_CLANG19} ${_pgo_flags} -g -fpseudo-probe-for-profiling -fuse-ld=lld -Wl,--emit-relocs
          -o ${_ctx_dir}/context_app_probe ${_ctx_src}/context_app.c
  DEPENDS ${_ctx_src}/context_app.c
  COMMENT "Building the context workload with clang-19"
  VERBATIM)
add_custom_target(context_workload ALL DEPENDS ${_ctx_dir}/context_app ${_ctx_dir}/context_app_probe)
syspgo_test(profile_context_test SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/profile_context_test.cc
            LIBS syspgo_optimize syspgo_analyze)
target_compile_definitions(profile_context_test PRIVATE SYSPGO_CONTEXT_BIN="${_ctx_dir}"
                           SYSPGO_CONTEXT_SRC="${_ctx_src}" SYSPGO_PGO_BIN="${_pgo_dir}" SYSPGO_PGO_SRC="${_pgo_src}")
add_dependencies(profile_context_test context_workload)
