# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
# mimodet_pybind_module(NAME FILE...): the pybind11 module of the hand-written bindings.
# GNU Radio's GR_PYBIND_MAKE_OOT would also run gr_modtool's docs/doxygen/update_pydoc.py
# (docstring templates, which these bindings do not use: their docstrings are inline);
# the one check of that macro kept here: a binding whose BINDTOOL_HEADER_FILE_HASH is not
# its header's md5 is out of sync, and the configure step stops (fix the binding, then
# run scripts/update-binding-hashes).

find_package(pybind11 REQUIRED)

function(mimodet_pybind_module name)
  set(files ${ARGN})
  foreach(file ${files})
    file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/${file} header_line
         REGEX "BINDTOOL_HEADER_FILE\\([^)]*\\)")
    file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/${file} hash_line
         REGEX "BINDTOOL_HEADER_FILE_HASH\\([0-9a-f]*\\)")
    if(NOT header_line OR NOT hash_line)
      continue()
    endif()
    string(REGEX REPLACE ".*BINDTOOL_HEADER_FILE\\(([^)]*)\\).*" "\\1" header "${header_line}")
    string(REGEX REPLACE ".*BINDTOOL_HEADER_FILE_HASH\\(([0-9a-f]*)\\).*" "\\1" saved "${hash_line}")
    set(path ${PROJECT_SOURCE_DIR}/include/gnuradio/mimodet/${header})
    if(NOT EXISTS ${path})
      set(path ${PROJECT_SOURCE_DIR}/include/mimodet/${header})
    endif()
    if(NOT EXISTS ${path})
      message(FATAL_ERROR "${file}: its header ${header} does not exist")
    endif()
    file(MD5 ${path} actual)
    if(NOT actual STREQUAL saved)
      message(FATAL_ERROR "Python bindings ${file} are out of sync with ${header}: update the "
                          "binding, then run scripts/update-binding-hashes")
    endif()
    # Configure again when the header changes, so the check runs again.
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${path})
  endforeach()
  pybind11_add_module(${name} ${files})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/lib
                                             ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(${name} PRIVATE pybind11::pybind11 Python::Module Python::NumPy)
endfunction()
