# Writes OUT: a C++ source defining eagle::server::console_files(), a table of the
# files under DIR (path, bytes, content type), so the binary serves the web console
# with nothing beside it. Run at build time (add_custom_command), so editing a
# console file rebuilds only this source.
file(GLOB_RECURSE files RELATIVE ${DIR} ${DIR}/*)
list(SORT files)
set(body "")
set(table "")
set(i 0)
foreach(f ${files})
  file(READ ${DIR}/${f} hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(LENGTH "${hex}" hexlen)
  math(EXPR n "${hexlen} / 2")
  set(type "application/octet-stream")
  if(f MATCHES "\\.html$")
    set(type "text/html; charset=utf-8")
  elseif(f MATCHES "\\.js$")
    set(type "text/javascript; charset=utf-8")
  elseif(f MATCHES "\\.css$")
    set(type "text/css; charset=utf-8")
  elseif(f MATCHES "\\.svg$")
    set(type "image/svg+xml")
  elseif(f MATCHES "\\.png$")
    set(type "image/png")
  endif()
  string(APPEND body "const unsigned char f${i}[] = {${bytes}0};\n")
  string(APPEND table "      {\"${f}\", std::string_view(reinterpret_cast<const char*>(f${i}), ${n}), \"${type}\"},\n")
  math(EXPR i "${i} + 1")
endforeach()
file(WRITE ${OUT}.tmp "// Generated from ${DIR} by embed_files.cmake: edit those files, not this one.
#include \"eagle/server/console.h\"

namespace eagle::server {
namespace {
${body}}  // namespace

const std::vector<EmbeddedFile>& console_files() {
  static const std::vector<EmbeddedFile> files = {
${table}  };
  return files;
}

}  // namespace eagle::server
")
# Only a changed table touches the output (no needless recompiles).
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${OUT}.tmp ${OUT})
