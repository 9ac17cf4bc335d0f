# install.cmake - what `cmake --install build --prefix P` puts under P:
#
#   P/bin/{quill,quill-opt,quill-translate}
#   P/lib/libquill.so.X.Y.Z (+ .so.X, .so links)
#   P/include/quill/...            the public headers, same layout as the
#                                  source tree (include/quill/public-headers.txt)
#   P/lib/pkgconfig/quill.pc       relocatable (prefix from ${pcfiledir})
#   P/lib/cmake/Quill/QuillConfig.cmake, QuillConfigVersion.cmake,
#                 QuillTargets*.cmake  -> imported target Quill::quill
#
# Included from the top-level CMakeLists.txt after the targets exist.
include(CMakePackageConfigHelpers)

file(STRINGS ${CMAKE_SOURCE_DIR}/include/quill/public-headers.txt
     QUILL_PUBLIC_HEADERS REGEX "^[^#]")
foreach(h IN LISTS QUILL_PUBLIC_HEADERS)
  string(REGEX REPLACE "^include/quill/" "" dest "${h}")
  get_filename_component(dir "${dest}" DIRECTORY)
  install(FILES ${CMAKE_SOURCE_DIR}/${h}
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/quill/${dir})
endforeach()

install(TARGETS quill_shared EXPORT QuillTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS ${QUILL_TOOLS} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# Quill::quill: the shared library; users include <quill/quill.h>. A
# sanitizer build's library needs the sanitizer runtimes in the program
# that loads it, so its link options travel with the target (and the .pc).
set(QUILL_SANITIZE_LINK "")
if(QUILL_SANITIZE)
  set(QUILL_SANITIZE_LINK "-fsanitize=address,undefined")
  set_property(TARGET quill_shared APPEND PROPERTY
    INTERFACE_LINK_OPTIONS $<INSTALL_INTERFACE:${QUILL_SANITIZE_LINK}>)
endif()
install(EXPORT QuillTargets NAMESPACE Quill::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Quill)
set_target_properties(quill_shared PROPERTIES EXPORT_NAME quill)
configure_package_config_file(
  ${CMAKE_SOURCE_DIR}/cmake/QuillConfig.cmake.in
  ${CMAKE_BINARY_DIR}/cmake/QuillConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Quill)
write_basic_package_version_file(
  ${CMAKE_BINARY_DIR}/cmake/QuillConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/cmake/QuillConfig.cmake
              ${CMAKE_BINARY_DIR}/cmake/QuillConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Quill)

# pkg-config: prefix relative to the .pc file, so the tree can move.
file(RELATIVE_PATH QUILL_PC_TO_PREFIX
     ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" QUILL_PC_TO_PREFIX "${QUILL_PC_TO_PREFIX}")
configure_file(${CMAKE_SOURCE_DIR}/cmake/quill.pc.in
               ${CMAKE_BINARY_DIR}/cmake/quill.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/cmake/quill.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
