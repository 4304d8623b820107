# Writes OUTPUT, a C++ file defining `std::string_view FUNCTION()` in
# NAMESPACE that returns the bytes of INPUT, declared in HEADER.
#   cmake -DINPUT=f.html -DOUTPUT=f.cpp -DHEADER=x/y.h -DNAMESPACE=a::b -DFUNCTION=name -P embed_file.cmake
file(READ "${INPUT}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${hex}")
# Break the array into lines of 16 bytes so compilers and editors cope.
string(REGEX REPLACE "(('[^']*',){16})" "\\1\n" bytes "${bytes}")
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by cmake/embed_file.cmake: do not edit.\n"
  "#include <${HEADER}>\n\n"
  "namespace ${NAMESPACE} {\nnamespace {\n\nconstexpr char kBytes[] = {\n${bytes}};\n\n}  // namespace\n\n"
  "std::string_view ${FUNCTION}() {\n  return {kBytes, sizeof kBytes};\n}\n\n}  // namespace ${NAMESPACE}\n")
# Only a changed file is rewritten, so an unchanged page recompiles nothing.
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
