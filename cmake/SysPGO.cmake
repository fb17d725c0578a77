#===- SysPGO.cmake - build a CMake project with syspgo's profiles --------===#
# Lets a CMake project consume a profile directory written by
# `syspgo pgo --dir DIR` (or any directory laid out the same way) without
# touching its own compile flags:
#
#   set(SYSPGO_PROFILE_DIR /path/to/DIR)   # or -DSYSPGO_PROFILE_DIR=... on the command line
#   list(APPEND CMAKE_MODULE_PATH /path/to/syspgo/cmake)
#   include(SysPGO)
#   add_executable(app ...)
#   syspgo_bolt(app)                       # optional: rewrite app with BOLT after linking
#
# What it adds, for C and C++ in this directory and below (targets made
# after the include):
#   DIR/profile/sample.prof  -> -fprofile-sample-use=... -fsample-profile-use-profi
#                               -fdebug-info-for-profiling
#                               (discriminators as when the profile was taken)
#   DIR/profile/order.txt    -> -Wl,--symbol-ordering-file=... (with lld)
#   always                   -> -ffunction-sections (so functions can be ordered
#                               and moved), -fuse-ld=lld
#   syspgo_bolt(target)      -> -Wl,--emit-relocs on the target and a POST_BUILD
#                               llvm-bolt step with DIR/profile/bolt.fdata; the
#                               linker's output is kept beside it as <file>.prebolt
# Nothing else: no frame pointers or line tables of its own (only the
# training build of `syspgo pgo` needs them; clang tracks the lines a
# sample profile is matched by without emitting debug info), so the binary
# is the project's own build plus what the profiles change.
# The profile files are dependencies of every object and link, so a new
# profile in the same place rebuilds what it affects.
#
# Settings (cache variables; the defaults come from SYSPGO_PROFILE_DIR):
#   SYSPGO_SAMPLE_PROFILE, SYSPGO_ORDER_FILE, SYSPGO_BOLT_PROFILE  ("" leaves one out)
#   SYSPGO_LLVM_BOLT        llvm-bolt to run (default /usr/lib/llvm-19/bin/llvm-bolt)
#   SYSPGO_BOLT_OPTIONS     its optimization options
#   SYSPGO_REPORT_COVERAGE  ON: clang warns per function how much of the profile
#                           still applied (-Wbackend-plugin, never an error):
#                           how to see a profile going stale as sources change
# The compilers must be clang (the flags are clang's and lld's): configure
# with -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19.
include_guard(GLOBAL)
cmake_minimum_required(VERSION 3.20)

if(NOT SYSPGO_PROFILE_DIR)
  message(FATAL_ERROR "SysPGO: set SYSPGO_PROFILE_DIR to a directory written by 'syspgo pgo --dir DIR' "
                      "(it holds profile/sample.prof, profile/order.txt, profile/bolt.fdata) before include(SysPGO)")
endif()
get_filename_component(SYSPGO_PROFILE_DIR "${SYSPGO_PROFILE_DIR}" ABSOLUTE)
if(NOT IS_DIRECTORY "${SYSPGO_PROFILE_DIR}")
  message(FATAL_ERROR "SysPGO: SYSPGO_PROFILE_DIR=${SYSPGO_PROFILE_DIR} is not a directory; run "
                      "'syspgo pgo --dir ${SYSPGO_PROFILE_DIR} ...' first, or point it at such a directory")
endif()

# A default per artifact only where the file exists: a directory made with
# `--stages sample` has no ordering file, and that is not an error.
function(_syspgo_default var file)
  if(EXISTS "${SYSPGO_PROFILE_DIR}/profile/${file}")
    set(${var} "${SYSPGO_PROFILE_DIR}/profile/${file}" CACHE FILEPATH "SysPGO: ${file}")
  else()
    set(${var} "" CACHE FILEPATH "SysPGO: ${file}")
  endif()
endfunction()
_syspgo_default(SYSPGO_SAMPLE_PROFILE sample.prof)
_syspgo_default(SYSPGO_ORDER_FILE order.txt)
_syspgo_default(SYSPGO_BOLT_PROFILE bolt.fdata)
find_program(SYSPGO_LLVM_BOLT llvm-bolt PATHS /usr/lib/llvm-19/bin NO_DEFAULT_PATH)
find_program(SYSPGO_LLVM_BOLT llvm-bolt)
# No -split-functions: from IP samples (no LBR) a block that runs seldom looks
# cold, and split out it costs jumps and I-cache lines. With a sample profile
# clang has laid the blocks out already, and BOLT reorders functions only
# (see kDefaultBoltOptions in pgo/pgo.h).
set(_syspgo_blocks ext-tsp)
if(SYSPGO_SAMPLE_PROFILE)
  set(_syspgo_blocks none)
endif()
set(SYSPGO_BOLT_OPTIONS -reorder-blocks=${_syspgo_blocks} -reorder-functions=hfsort
    CACHE STRING "SysPGO: llvm-bolt's optimization options")
option(SYSPGO_REPORT_COVERAGE "SysPGO: clang reports how much of the sample profile applied" OFF)

foreach(_lang C CXX)
  if(CMAKE_${_lang}_COMPILER_LOADED AND NOT CMAKE_${_lang}_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "SysPGO: the ${_lang} compiler is ${CMAKE_${_lang}_COMPILER_ID} (${CMAKE_${_lang}_COMPILER}); "
                        "syspgo's profiles are for clang and lld: configure a fresh build directory with "
                        "-DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19")
  endif()
endforeach()

set(_syspgo_lang "$<COMPILE_LANGUAGE:C,CXX>")
set(_syspgo_link "$<LINK_LANGUAGE:C,CXX>")
add_compile_options("$<${_syspgo_lang}:-ffunction-sections>")
add_link_options("$<${_syspgo_link}:-fuse-ld=lld>")
if(SYSPGO_SAMPLE_PROFILE)
  add_compile_options("$<${_syspgo_lang}:-fprofile-sample-use=${SYSPGO_SAMPLE_PROFILE}>"
                      "$<${_syspgo_lang}:-fsample-profile-use-profi>"
                      "$<${_syspgo_lang}:-fdebug-info-for-profiling>")
  if(SYSPGO_REPORT_COVERAGE)
    add_compile_options("$<${_syspgo_lang}:-Wno-error=backend-plugin>"
                        "$<${_syspgo_lang}:SHELL:-mllvm -sample-profile-check-sample-coverage=100>")
  endif()
endif()
if(SYSPGO_ORDER_FILE)
  add_link_options("$<${_syspgo_link}:LINKER:--symbol-ordering-file=${SYSPGO_ORDER_FILE},--no-warn-symbol-ordering>")
endif()
message(STATUS "SysPGO: profile ${SYSPGO_SAMPLE_PROFILE}, order ${SYSPGO_ORDER_FILE}, BOLT ${SYSPGO_BOLT_PROFILE}")

# syspgo_bolt(target): after every link of `target`, llvm-bolt rewrites it
# in place with the fdata profile (the linker's output is kept as
# <file>.prebolt, so a failed rewrite can be looked at).
function(syspgo_bolt target)
  if(NOT TARGET ${target})
    message(FATAL_ERROR "SysPGO: syspgo_bolt(${target}): no such target; call it after add_executable(${target} ...)")
  endif()
  if(NOT SYSPGO_BOLT_PROFILE)
    message(WARNING "SysPGO: syspgo_bolt(${target}): ${SYSPGO_PROFILE_DIR}/profile/bolt.fdata does not exist, so "
                    "${target} is not rewritten; run 'syspgo pgo' with bolt in --stages, or set SYSPGO_BOLT_PROFILE")
    return()
  endif()
  if(NOT SYSPGO_LLVM_BOLT)
    message(FATAL_ERROR "SysPGO: syspgo_bolt(${target}) needs llvm-bolt: apt-get install bolt-19, or set SYSPGO_LLVM_BOLT")
  endif()
  target_link_options(${target} PRIVATE "LINKER:--emit-relocs")
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS "${SYSPGO_BOLT_PROFILE}")
  set(_f "$<TARGET_FILE:${target}>")
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -E copy "${_f}" "${_f}.prebolt"
    COMMAND "${SYSPGO_LLVM_BOLT}" "${_f}.prebolt" -o "${_f}" -data "${SYSPGO_BOLT_PROFILE}" ${SYSPGO_BOLT_OPTIONS}
    COMMENT "SysPGO: llvm-bolt ${target} with ${SYSPGO_BOLT_PROFILE}"
    VERBATIM)
endfunction()

# At the end of the top directory: make every object depend on the sample
# profile and every link on the ordering file, so replacing a profile file
# rebuilds (CMake cannot see a file named only inside a flag).
function(_syspgo_targets dir out)
  get_property(_t DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  get_property(_subs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(_s IN LISTS _subs)
    _syspgo_targets("${_s}" _more)
    list(APPEND _t ${_more})
  endforeach()
  set(${out} ${_t} PARENT_SCOPE)
endfunction()

function(_syspgo_add_dependencies)
  _syspgo_targets("${CMAKE_SOURCE_DIR}" _targets)
  foreach(_t IN LISTS _targets)
    get_target_property(_type ${_t} TYPE)
    if(NOT _type MATCHES "EXECUTABLE|LIBRARY" OR _type STREQUAL "INTERFACE_LIBRARY")
      continue()
    endif()
    if(SYSPGO_ORDER_FILE AND _type MATCHES "EXECUTABLE|SHARED_LIBRARY|MODULE_LIBRARY")
      set_property(TARGET ${_t} APPEND PROPERTY LINK_DEPENDS "${SYSPGO_ORDER_FILE}")
    endif()
    if(SYSPGO_SAMPLE_PROFILE)
      get_target_property(_srcs ${_t} SOURCES)
      get_target_property(_sdir ${_t} SOURCE_DIR)
      set(_abs "")
      foreach(_src IN LISTS _srcs)
        if(_src MATCHES "\\.(c|cc|cpp|cxx|C|c\\+\\+)$" AND NOT _src MATCHES "^\\$<")
          get_filename_component(_p "${_src}" ABSOLUTE BASE_DIR "${_sdir}")
          list(APPEND _abs "${_p}")
        endif()
      endforeach()
      if(_abs)
        set_property(SOURCE ${_abs} TARGET_DIRECTORY ${_t} APPEND PROPERTY OBJECT_DEPENDS "${SYSPGO_SAMPLE_PROFILE}")
      endif()
    endif()
  endforeach()
endfunction()
cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _syspgo_add_dependencies)
