# Writes IN as a C++ string constant syspgo::kProfileSchemaSql into OUT.
file(READ ${IN} _text)
file(WRITE ${OUT} "// Generated from ${IN}; do not edit.\nnamespace syspgo { extern const char kProfileSchemaSql[] = R\"syspgo_sql(${_text})syspgo_sql\"; }\n")
