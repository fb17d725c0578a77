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
# after the include), following what `syspgo pgo` chose (DIR/manifest.json:
# its final stage and profile kind):
#   the flat profile         -> -fprofile-sample-use=DIR/profile/sample.prof
#     (line-keyed)              -fsample-profile-use-profi -fdebug-info-for-profiling
#                               (discriminators as when the profile was taken)
#   the probe profile        -> the same with DIR/probe/profile/sample.prof (the
#     (pgo chose sample-probe)  probe leg of --profile-kind auto) and
#                               -fpseudo-probe-for-profiling, as pgo's sample-probe
#                               stage built it; no order file or BOLT profile (pgo
#                               made those on the flat build); a directory written by
#                               --profile-kind probe has it in DIR/profile/sample.prof
#   your own build           -> nothing at all (pgo found no stage faster than your
#     (pgo's final is plain)    build with confidence, and says so at configure time)
#   DIR/profile/order.txt    -> -Wl,--symbol-ordering-file=... (with lld), when pgo's
#                               final stage is order or bolt
#   with any of them         -> -ffunction-sections (so functions can be ordered
#                               and moved), -fuse-ld=lld
#   syspgo_bolt(target)      -> -Wl,--emit-relocs on the target and a POST_BUILD
#                               llvm-bolt step with DIR/profile/bolt.fdata, when pgo's
#                               final stage is bolt; the linker's output is kept
#                               beside it as <file>.prebolt
# A directory without manifest.json (laid out by hand), or whose run has no
# final stage, gets the flat profile and every file there is.
# Nothing else: no frame pointers or line tables of its own (only the
# training build of `syspgo pgo` needs them; clang tracks the lines a
# sample profile is matched by without emitting debug info), so the binary
# is the project's own build plus what the profiles change.
# The profile files are dependencies of every object and link, so a new
# profile in the same place rebuilds what it affects.
#
# Settings (cache variables; the defaults come from SYSPGO_PROFILE_DIR):
#   SYSPGO_PROFILE_KIND     auto (default: what pgo chose), flat, probe (the probe
#                           leg's profile, with -fpseudo-probe-for-profiling) or
#                           none; forcing one where pgo kept your build adds the
#                           sample profile alone
#   SYSPGO_SAMPLE_PROFILE, SYSPGO_ORDER_FILE, SYSPGO_BOLT_PROFILE  ("" leaves one out;
#                           a value you set stays, the defaults follow the directory)
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

# Which sample profile, and so which flags: what `syspgo pgo` chose, as
# DIR/manifest.json says, unless SYSPGO_PROFILE_KIND names one. A column
# per kind: the profile's directory under DIR, whether the order file and
# the BOLT profile go with it, and its flag beside the flat profile's.
# The flags are those of pgo's own stage for that kind (PgoCompileFlags in
# pgo/pgo.cc) without its line tables and coverage report: a probe profile
# is keyed by the probes -fpseudo-probe-for-profiling inserts, and clang
# reads it only through them (without, it warns and ignores the profile).
# The probe leg of --profile-kind auto (final stage sample-probe) keeps its
# profile in DIR/probe; pgo's order and BOLT stages were built on the flat
# profile, and its BOLT profile was taken on that other binary, so neither
# goes with it. (- is nothing: no list element is empty.)
set(_syspgo_kinds       flat    probe                        probe-leg                    none)
set(_syspgo_kind_file   profile profile                      probe/profile                -)
set(_syspgo_kind_extras ON      ON                           OFF                          OFF)
set(_syspgo_kind_flags  -       -fpseudo-probe-for-profiling -fpseudo-probe-for-profiling -)

set(SYSPGO_PROFILE_KIND auto CACHE STRING
    "SysPGO: the sample profile: auto (what syspgo pgo chose), flat, probe or none")
set_property(CACHE SYSPGO_PROFILE_KIND PROPERTY STRINGS auto flat probe none)

# A member of the manifest, "" where it is null or missing.
function(_syspgo_manifest_get out)
  string(JSON _v ERROR_VARIABLE _e GET "${_syspgo_manifest}" ${ARGN})
  if(_e)
    set(_v "")
  endif()
  set(${out} "${_v}" PARENT_SCOPE)
endfunction()

set(_syspgo_manifest_file "${SYSPGO_PROFILE_DIR}/manifest.json")
set(_syspgo_final "")
set(_syspgo_requested "")
set(_syspgo_chosen "")
if(EXISTS "${_syspgo_manifest_file}")
  file(READ "${_syspgo_manifest_file}" _syspgo_manifest)
  string(JSON _syspgo_type ERROR_VARIABLE _syspgo_error TYPE "${_syspgo_manifest}")
  if(_syspgo_error OR NOT _syspgo_type STREQUAL "OBJECT")
    message(FATAL_ERROR "SysPGO: ${_syspgo_manifest_file} is not the JSON object 'syspgo pgo' writes "
                        "(${_syspgo_error}); run 'syspgo pgo --dir ${SYSPGO_PROFILE_DIR} ...' again")
  endif()
  set_property(DIRECTORY "${CMAKE_SOURCE_DIR}" APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_syspgo_manifest_file}")
  _syspgo_manifest_get(_syspgo_final final_stage)
  _syspgo_manifest_get(_syspgo_chosen profile_kind chosen)
  _syspgo_manifest_get(_syspgo_requested inputs profile_kind)
endif()

# auto: the kind the final binary of `syspgo pgo` was built with. Without a
# manifest (a directory laid out by hand) the flat profile, as always. A run
# keyed by probes alone (--profile-kind probe, or the probe leg's own
# directory) keeps its probe profile where a flat one would be.
if(_syspgo_final STREQUAL "plain")
  set(_syspgo_auto none)
elseif(_syspgo_final STREQUAL "sample-probe")
  set(_syspgo_auto probe-leg)
elseif(_syspgo_requested STREQUAL "probe")
  set(_syspgo_auto probe)
else()
  set(_syspgo_auto flat)
endif()
set(_syspgo_kind "${SYSPGO_PROFILE_KIND}")
if(_syspgo_kind STREQUAL "auto")
  set(_syspgo_kind ${_syspgo_auto})
elseif(_syspgo_kind STREQUAL "probe" AND NOT _syspgo_requested STREQUAL "probe")
  set(_syspgo_kind probe-leg)
elseif(_syspgo_kind STREQUAL "flat" AND _syspgo_requested STREQUAL "probe")
  message(FATAL_ERROR "SysPGO: SYSPGO_PROFILE_KIND=flat, but ${SYSPGO_PROFILE_DIR} was written by "
                      "'syspgo pgo --profile-kind probe': its profile/sample.prof is keyed by pseudo-probes and "
                      "there is no flat profile; set SYSPGO_PROFILE_KIND=auto, or run 'syspgo pgo' with "
                      "--profile-kind auto or flat")
endif()
list(FIND _syspgo_kinds "${_syspgo_kind}" _syspgo_row)
if(_syspgo_row LESS 0)
  message(FATAL_ERROR "SysPGO: SYSPGO_PROFILE_KIND is auto, flat, probe or none, got '${SYSPGO_PROFILE_KIND}'")
endif()
list(GET _syspgo_kind_file ${_syspgo_row} _syspgo_sub)
list(GET _syspgo_kind_extras ${_syspgo_row} _syspgo_extras)
list(GET _syspgo_kind_flags ${_syspgo_row} _syspgo_kind_flag)
string(REPLACE "probe-leg" "probe" _syspgo_kind_said "${_syspgo_kind}")

# The order file and the BOLT profile go where pgo's final binary was built
# with them: the stages after sample are kept only when they were faster
# (with --eval), and without a final stage (no manifest, or a failed run)
# whatever files there are. A column per final stage.
set(_syspgo_finals      -  sample sample-probe order bolt plain)
set(_syspgo_final_order ON OFF    OFF          ON    ON   OFF)
set(_syspgo_final_bolt  ON OFF    OFF          OFF   ON   OFF)
set(_syspgo_at -)
if(_syspgo_final)
  set(_syspgo_at "${_syspgo_final}")
endif()
list(FIND _syspgo_finals "${_syspgo_at}" _syspgo_at)
set(_syspgo_use_order OFF)
set(_syspgo_use_bolt OFF)
if(_syspgo_extras AND _syspgo_at GREATER_EQUAL 0)
  list(GET _syspgo_final_order ${_syspgo_at} _syspgo_use_order)
  list(GET _syspgo_final_bolt ${_syspgo_at} _syspgo_use_bolt)
endif()

# The probe profile the manifest (or the user) asks for must be there:
# building with the flat one instead would ship what pgo did not choose.
set(_syspgo_sample "")
if(NOT _syspgo_sub STREQUAL "-")
  set(_syspgo_sample "${SYSPGO_PROFILE_DIR}/${_syspgo_sub}/sample.prof")
endif()
if(_syspgo_kind MATCHES "^probe" AND NOT EXISTS "${_syspgo_sample}"
   AND (NOT SYSPGO_PROFILE_KIND STREQUAL "auto" OR _syspgo_chosen STREQUAL "probe"))
  if(SYSPGO_PROFILE_KIND STREQUAL "auto")
    string(CONCAT _syspgo_said "${_syspgo_manifest_file} says 'syspgo pgo' chose the probe profile "
                               "(final stage ${_syspgo_final})")
  else()
    set(_syspgo_said "SYSPGO_PROFILE_KIND=probe")
  endif()
  message(FATAL_ERROR "SysPGO: ${_syspgo_said}, but ${_syspgo_sample} does not exist: copy the whole directory "
                      "'syspgo pgo --dir' wrote (with its probe/ subdirectory), or run 'syspgo pgo' again with "
                      "--eval (its probe leg) or --profile-kind probe; SYSPGO_PROFILE_KIND=flat builds with the "
                      "flat profile instead")
endif()

# A default per artifact only where the file exists (a directory made with
# `--stages sample` has no ordering file, and that is not an error). A
# default follows the directory and the kind on every configure; a value
# the user set stays.
function(_syspgo_default var file doc)
  if(NOT EXISTS "${file}")
    set(file "")
  endif()
  if(NOT DEFINED CACHE{${var}}
     OR (DEFINED CACHE{_${var}_DEFAULT} AND "$CACHE{${var}}" STREQUAL "$CACHE{_${var}_DEFAULT}"))
    set(${var} "${file}" CACHE FILEPATH "SysPGO: ${doc}" FORCE)
  endif()
  set(_${var}_DEFAULT "${file}" CACHE INTERNAL "")
endfunction()
_syspgo_default(SYSPGO_SAMPLE_PROFILE "${_syspgo_sample}" "the sample profile")
set(_syspgo_order "")
set(_syspgo_fdata "")
if(_syspgo_use_order)
  set(_syspgo_order "${SYSPGO_PROFILE_DIR}/profile/order.txt")
endif()
if(_syspgo_use_bolt)
  set(_syspgo_fdata "${SYSPGO_PROFILE_DIR}/profile/bolt.fdata")
endif()
_syspgo_default(SYSPGO_ORDER_FILE "${_syspgo_order}" "lld's symbol ordering file")
_syspgo_default(SYSPGO_BOLT_PROFILE "${_syspgo_fdata}" "llvm-bolt's profile")
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
if(SYSPGO_SAMPLE_PROFILE OR SYSPGO_ORDER_FILE OR SYSPGO_BOLT_PROFILE)
  add_compile_options("$<${_syspgo_lang}:-ffunction-sections>")
  add_link_options("$<${_syspgo_link}:-fuse-ld=lld>")
endif()
if(SYSPGO_SAMPLE_PROFILE)
  add_compile_options("$<${_syspgo_lang}:-fprofile-sample-use=${SYSPGO_SAMPLE_PROFILE}>"
                      "$<${_syspgo_lang}:-fsample-profile-use-profi>"
                      "$<${_syspgo_lang}:-fdebug-info-for-profiling>")
  if(NOT _syspgo_kind_flag STREQUAL "-")
    add_compile_options("$<${_syspgo_lang}:${_syspgo_kind_flag}>")
  endif()
  if(SYSPGO_REPORT_COVERAGE)
    add_compile_options("$<${_syspgo_lang}:-Wno-error=backend-plugin>"
                        "$<${_syspgo_lang}:SHELL:-mllvm -sample-profile-check-sample-coverage=100>")
  endif()
endif()
if(SYSPGO_ORDER_FILE)
  add_link_options("$<${_syspgo_link}:LINKER:--symbol-ordering-file=${SYSPGO_ORDER_FILE},--no-warn-symbol-ordering>")
endif()
if(_syspgo_kind STREQUAL "none" AND SYSPGO_PROFILE_KIND STREQUAL "auto")
  _syspgo_manifest_get(_syspgo_why final_reason)
  message(STATUS "SysPGO: 'syspgo pgo' kept your own build: ${_syspgo_why}; so no profile is added, and "
                 "SYSPGO_PROFILE_KIND=flat or probe uses one anyway")
endif()
message(STATUS "SysPGO: kind ${_syspgo_kind_said}, profile ${SYSPGO_SAMPLE_PROFILE}, order ${SYSPGO_ORDER_FILE}, "
               "BOLT ${SYSPGO_BOLT_PROFILE}")

# syspgo_bolt(target): after every link of `target`, llvm-bolt rewrites it
# in place with the fdata profile (the linker's output is kept as
# <file>.prebolt, so a failed rewrite can be looked at).
function(syspgo_bolt target)
  if(NOT TARGET ${target})
    message(FATAL_ERROR "SysPGO: syspgo_bolt(${target}): no such target; call it after add_executable(${target} ...)")
  endif()
  if(NOT SYSPGO_BOLT_PROFILE AND NOT _syspgo_use_bolt)
    message(STATUS "SysPGO: syspgo_bolt(${target}): ${target} is not rewritten: 'syspgo pgo' chose a build "
                   "without BOLT (final stage ${_syspgo_final}, profile kind ${_syspgo_kind_said})")
    return()
  elseif(NOT SYSPGO_BOLT_PROFILE)
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
