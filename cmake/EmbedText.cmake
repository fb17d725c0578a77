# cmake -DIN=FILE -DOUT=FILE.cc -DNAME=kSymbol [-DPARTS="@@MARK@@=FILE;..."] -P EmbedText.cmake
# Writes IN as the C++ string constant syspgo::NAME into OUT, with each
# @@MARK@@ of PARTS replaced by that file's text first, so a page can keep
# its HTML, CSS and JavaScript in files of their own (linted and formatted
# by their own tools) and still ship as one constant.
file(READ ${IN} _text)
foreach(_part ${PARTS})
  string(REGEX MATCH "^([^=]+)=(.*)$" _ok "${_part}")
  file(READ ${CMAKE_MATCH_2} _piece)
  string(REPLACE "${CMAKE_MATCH_1}" "${_piece}" _text "${_text}")
endforeach()
string(FIND "${_text}" ")syspgo_embed\"" _clash)
if(NOT _clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw-string delimiter )syspgo_embed\"")
endif()
file(WRITE ${OUT} "// Generated from ${IN}; do not edit.\nnamespace syspgo { extern const char ${NAME}[] = R\"syspgo_embed(${_text})syspgo_embed\"; }\n")
