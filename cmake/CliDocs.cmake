#===- CliDocs.cmake - man pages and bash completion from the built commands ===#
# Run at build time (cli/CMakeLists.txt) as
#   cmake -DSYSPGO=... -DPREFETCH=... -DHELP2MAN=... -DVERSION=... -DOUT=DIR -P CliDocs.cmake
# Writes DIR/completion/syspgo (and syspgo-prefetch, the same script: bash
# loads a completion by the command's name) from `syspgo --completion bash`,
# and with help2man DIR/man1/: syspgo.1, syspgo-prefetch.1 (also the page
# of `syspgo prefetch`) and one syspgo-COMMAND.1 per other command that
# `syspgo --help` lists, each from that command's --help. Then touches
# DIR/stamp.
cmake_minimum_required(VERSION 3.20)
foreach(_v SYSPGO PREFETCH VERSION OUT)
  if(NOT DEFINED ${_v})
    message(FATAL_ERROR "CliDocs.cmake: -D${_v}=... is required")
  endif()
endforeach()

function(_run out)
  execute_process(COMMAND ${ARGN} OUTPUT_VARIABLE _o ERROR_VARIABLE _e RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    string(REPLACE ";" " " _cmd "${ARGN}")
    message(FATAL_ERROR "CliDocs.cmake: '${_cmd}' failed (${_rc}): ${_e}")
  endif()
  set(${out} "${_o}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${OUT}/completion ${OUT}/man1 ${OUT}/wrappers)
_run(_completion ${SYSPGO} --completion bash)
foreach(_name syspgo syspgo-prefetch)
  file(WRITE ${OUT}/completion/${_name} "${_completion}")
endforeach()

if(HELP2MAN)
  # `syspgo --help` lists the commands as "  NAME  SUMMARY" after "commands:".
  _run(_usage ${SYSPGO} --help)
  string(REGEX REPLACE ".*\ncommands:\n" "" _list "${_usage}")
  string(REGEX MATCHALL "  [a-z-]+ +[^\n]*" _rows "${_list}")
  # help2man runs one program with --help: each command gets a wrapper of
  # its name, so its page is syspgo-COMMAND(1) as with git and perf.
  set(_pages "syspgo\;whole-system profile-guided optimization on eBPF\;${SYSPGO}"
             "syspgo-prefetch\;warm the page cache along a prefetch plan, then run a command\;${PREFETCH}")
  set(_see_also "")
  foreach(_row IN LISTS _rows)
    string(REGEX MATCH "^  ([a-z-]+) +(.*)$" _ok "${_row}")
    set(_cmd ${CMAKE_MATCH_1})
    if(_cmd STREQUAL "prefetch")
      continue()  # syspgo-prefetch(1), from the replayer, which takes the same options
    endif()
    set(_wrapper ${OUT}/wrappers/syspgo-${_cmd})
    file(WRITE ${_wrapper} "#!/bin/sh\nexec '${SYSPGO}' ${_cmd} \"$@\"\n")
    file(CHMOD ${_wrapper} PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE)
    list(APPEND _pages "syspgo-${_cmd}\;${CMAKE_MATCH_2}\;${_wrapper}")
    string(APPEND _see_also ".BR syspgo-${_cmd} (1),\n")
  endforeach()
  file(WRITE ${OUT}/wrappers/see-also.h2m "[SEE ALSO]\n${_see_also}.BR syspgo-prefetch (1)\n")
  file(MAKE_DIRECTORY ${OUT}/man1)
  foreach(_page IN LISTS _pages)
    list(GET _page 0 _name)
    list(GET _page 1 _summary)
    list(GET _page 2 _program)
    set(_include "")
    if(_name STREQUAL "syspgo")
      set(_include --include=${OUT}/wrappers/see-also.h2m)
    endif()
    _run(_ignored ${HELP2MAN} --no-info --no-discard-stderr --section=1 --version-string=${VERSION}
         --name=${_summary} ${_include} --output=${OUT}/man1/${_name}.1 ${_program})
  endforeach()
endif()
file(TOUCH ${OUT}/stamp)
